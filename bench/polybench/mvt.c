/* PolyBench 4.2 linear-algebra/kernels/mvt: x1 += A y_1, x2 += A^T y_2.  -DN=... */
#define KERNEL __attribute__((noinline)) static void
static double A[N][N], x1[N], x2[N], y_1[N], y_2[N];

static void init(void) {
    for (int i = 0; i < N; i++) {
        x1[i] = (double)(i % N) / N;
        x2[i] = (double)((i + 1) % N) / N;
        y_1[i] = (double)((i + 3) % N) / N;
        y_2[i] = (double)((i + 4) % N) / N;
        for (int j = 0; j < N; j++) A[i][j] = (double)(i * j % N) / N;
    }
}

KERNEL kernel(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) x1[i] = x1[i] + A[i][j] * y_1[j];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) x2[i] = x2[i] + A[j][i] * y_2[j];
}

static double checksum(void) {
    double c = 0;
    for (int i = 0; i < N; i++) c += x1[i] + x2[i];
    return c;
}

#include "common.h"
