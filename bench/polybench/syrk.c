/* PolyBench 4.2 linear-algebra/blas/syrk: lower triangle of C = alpha A A^T + beta C.  -DM= -DN= */
#define KERNEL __attribute__((noinline)) static void
static double C[N][N], A[N][M];
static const double alpha = 1.5, beta = 1.2;

static void init(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) A[i][j] = (double)((i * j + 1) % N) / N;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) C[i][j] = (double)((i * j + 2) % M) / M;
}

KERNEL kernel(void) {
    for (int i = 0; i < N; i++) {
        for (int j = 0; j <= i; j++) C[i][j] *= beta;
        for (int k = 0; k < M; k++)
            for (int j = 0; j <= i; j++) C[i][j] += alpha * A[i][k] * A[j][k];
    }
}

static double checksum(void) {
    double c = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) c += C[i][j];
    return c;
}

#include "common.h"
