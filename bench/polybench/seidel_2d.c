/* PolyBench 4.2 stencils/seidel-2d: TSTEPS in-place Gauss-Seidel sweeps.  -DTSTEPS= -DN= */
#define KERNEL __attribute__((noinline)) static void
static double A[N][N];

static void init(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) A[i][j] = ((double)i * (j + 2) + 2) / N;
}

KERNEL kernel(void) {
    for (int t = 0; t <= TSTEPS - 1; t++)
        for (int i = 1; i <= N - 2; i++)
            for (int j = 1; j <= N - 2; j++)
                A[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1] + A[i][j - 1] + A[i][j] + A[i][j + 1] +
                           A[i + 1][j - 1] + A[i + 1][j] + A[i + 1][j + 1]) / 9.0;
}

static double checksum(void) {
    double c = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) c += A[i][j];
    return c;
}

#include "common.h"
