/* PolyBench 4.2 linear-algebra/blas/trmm: B = alpha A^T B, A unit lower triangular.  -DM= -DN= */
#define KERNEL __attribute__((noinline)) static void
static double A[M][M], B[M][N];
static const double alpha = 1.5;

static void init(void) {
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < i; j++) A[i][j] = (double)((i + j) % M) / M;
        A[i][i] = 1.0;
        for (int j = 0; j < N; j++) B[i][j] = (double)((N + (i - j)) % N) / N;
    }
}

KERNEL kernel(void) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            for (int k = i + 1; k < M; k++) B[i][j] += A[k][i] * B[k][j];
            B[i][j] = alpha * B[i][j];
        }
}

static double checksum(void) {
    double c = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) c += B[i][j];
    return c;
}

#include "common.h"
