/* PolyBench 4.2 linear-algebra/blas/symm: C = alpha A B + beta C, A symmetric (lower triangle
 * stored).  -DM= -DN= */
#define KERNEL __attribute__((noinline)) static void
static double C[M][N], A[M][M], B[M][N];
static const double alpha = 1.5, beta = 1.2;

static void init(void) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            C[i][j] = (double)((i + j) % 100) / M;
            B[i][j] = (double)((N + i - j) % 100) / M;
        }
    for (int i = 0; i < M; i++) {
        for (int j = 0; j <= i; j++) A[i][j] = (double)((i + j) % 100) / M;
        for (int j = i + 1; j < M; j++) A[i][j] = -999;
    }
}

KERNEL kernel(void) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double temp2 = 0;
            for (int k = 0; k < i; k++) {
                C[k][j] += alpha * B[i][j] * A[i][k];
                temp2 += B[k][j] * A[i][k];
            }
            C[i][j] = beta * C[i][j] + alpha * B[i][j] * A[i][i] + alpha * temp2;
        }
}

static double checksum(void) {
    double c = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) c += C[i][j];
    return c;
}

#include "common.h"
