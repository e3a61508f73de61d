/* PolyBench 4.2 linear-algebra/blas/gesummv: y = alpha A x + beta B x.  -DN= */
#define KERNEL __attribute__((noinline)) static void
static double A[N][N], B[N][N], tmp[N], x[N], y[N];
static const double alpha = 1.5, beta = 1.2;

static void init(void) {
    for (int i = 0; i < N; i++) {
        x[i] = (double)(i % N) / N;
        for (int j = 0; j < N; j++) {
            A[i][j] = (double)((i * j + 1) % N) / N;
            B[i][j] = (double)((i * j + 2) % N) / N;
        }
    }
}

KERNEL kernel(void) {
    for (int i = 0; i < N; i++) {
        tmp[i] = 0.0;
        y[i] = 0.0;
        for (int j = 0; j < N; j++) {
            tmp[i] = A[i][j] * x[j] + tmp[i];
            y[i] = B[i][j] * x[j] + y[i];
        }
        y[i] = alpha * tmp[i] + beta * y[i];
    }
}

static double checksum(void) {
    double c = 0;
    for (int i = 0; i < N; i++) c += y[i];
    return c;
}

#include "common.h"
