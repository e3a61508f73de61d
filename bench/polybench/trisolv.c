/* PolyBench 4.2 linear-algebra/solvers/trisolv: forward substitution L x = b.  -DN= */
#define KERNEL __attribute__((noinline)) static void
static double L[N][N], x[N], b[N];

static void init(void) {
    for (int i = 0; i < N; i++) {
        x[i] = -999;
        b[i] = i;
        for (int j = 0; j < i; j++) L[i][j] = (double)(i + N - j + 1) * 2 / N / N;
        L[i][i] = N; /* PolyBench's (i + N - j + 1) * 2 / N everywhere lets x grow past double's range */
    }
}

KERNEL kernel(void) {
    for (int i = 0; i < N; i++) {
        x[i] = b[i];
        for (int j = 0; j < i; j++) x[i] -= L[i][j] * x[j];
        x[i] = x[i] / L[i][i];
    }
}

static double checksum(void) {
    double c = 0;
    for (int i = 0; i < N; i++) c += x[i];
    return c;
}

#include "common.h"
