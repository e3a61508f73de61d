/* PolyBench 4.2 stencils/jacobi-2d: TSTEPS times B = smooth5(A), A = smooth5(B).  -DTSTEPS= -DN= */
#define KERNEL __attribute__((noinline)) static void
static double A[N][N], B[N][N];

static void init(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            A[i][j] = ((double)i * (j + 2) + 2) / N;
            B[i][j] = ((double)i * (j + 3) + 3) / N;
        }
}

KERNEL kernel(void) {
    for (int t = 0; t < TSTEPS; t++) {
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < N - 1; j++)
                B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][1 + j] + A[1 + i][j] + A[i - 1][j]);
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < N - 1; j++)
                A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][1 + j] + B[1 + i][j] + B[i - 1][j]);
    }
}

static double checksum(void) {
    double c = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) c += A[i][j];
    return c;
}

#include "common.h"
