/* PolyBench 4.2 linear-algebra/blas/gemver: A += u1 v1^T + u2 v2^T, x += beta A^T y + z,
 * w += alpha A x.  -DN= */
#define KERNEL __attribute__((noinline)) static void
static double A[N][N], u1[N], v1[N], u2[N], v2[N], w[N], x[N], y[N], z[N];
static const double alpha = 1.5, beta = 1.2;

static void init(void) {
    double fn = (double)N;
    for (int i = 0; i < N; i++) {
        u1[i] = i;
        u2[i] = ((i + 1) / fn) / 2.0;
        v1[i] = ((i + 1) / fn) / 4.0;
        v2[i] = ((i + 1) / fn) / 6.0;
        y[i] = ((i + 1) / fn) / 8.0;
        z[i] = ((i + 1) / fn) / 9.0;
        x[i] = 0.0;
        w[i] = 0.0;
        for (int j = 0; j < N; j++) A[i][j] = (double)(i * j % N) / N;
    }
}

KERNEL kernel(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) A[i][j] = A[i][j] + u1[i] * v1[j] + u2[i] * v2[j];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) x[i] = x[i] + beta * A[j][i] * y[j];
    for (int i = 0; i < N; i++) x[i] = x[i] + z[i];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) w[i] = w[i] + alpha * A[i][j] * x[j];
}

static double checksum(void) {
    double c = 0;
    for (int i = 0; i < N; i++) c += w[i] + x[i];
    return c;
}

#include "common.h"
