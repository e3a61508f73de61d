/* PolyBench 4.2 linear-algebra/kernels/atax: y = A^T (A x).  -DM=... -DN=... */
#define KERNEL __attribute__((noinline)) static void
static double A[M][N], x[N], y[N], tmp[M];

static void init(void) {
    for (int j = 0; j < N; j++) x[j] = 1.0 + (double)j / N;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) A[i][j] = (double)((i + j) % N) / (5.0 * M);
}

KERNEL kernel(void) {
    for (int i = 0; i < N; i++) y[i] = 0;
    for (int i = 0; i < M; i++) {
        tmp[i] = 0.0;
        for (int j = 0; j < N; j++) tmp[i] = tmp[i] + A[i][j] * x[j];
        for (int j = 0; j < N; j++) y[j] = y[j] + A[i][j] * tmp[i];
    }
}

static double checksum(void) {
    double s = 0;
    for (int j = 0; j < N; j++) s += y[j];
    return s;
}

#include "common.h"
