/* PolyBench 4.2 linear-algebra/blas/syr2k: lower triangle of
 * C = alpha (A B^T + B A^T) + beta C.  -DM= -DN= */
#define KERNEL __attribute__((noinline)) static void
static double C[N][N], A[N][M], B[N][M];
static const double alpha = 1.5, beta = 1.2;

static void init(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            A[i][j] = (double)((i * j + 1) % N) / N;
            B[i][j] = (double)((i * j + 2) % M) / M;
        }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) C[i][j] = (double)((i * j + 3) % N) / M;
}

KERNEL kernel(void) {
    for (int i = 0; i < N; i++) {
        for (int j = 0; j <= i; j++) C[i][j] *= beta;
        for (int k = 0; k < M; k++)
            for (int j = 0; j <= i; j++) C[i][j] += A[j][k] * alpha * B[i][k] + B[j][k] * alpha * A[i][k];
    }
}

static double checksum(void) {
    double c = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) c += C[i][j];
    return c;
}

#include "common.h"
