/* PolyBench 4.2 stencils/jacobi-1d: TSTEPS times B = smooth(A), A = smooth(B).  -DTSTEPS= -DN= */
#define KERNEL __attribute__((noinline)) static void
static double A[N], B[N];

static void init(void) {
    for (int i = 0; i < N; i++) {
        A[i] = ((double)i + 2) / N;
        B[i] = ((double)i + 3) / N;
    }
}

KERNEL kernel(void) {
    for (int t = 0; t < TSTEPS; t++) {
        for (int i = 1; i < N - 1; i++) B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
        for (int i = 1; i < N - 1; i++) A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);
    }
}

static double checksum(void) {
    double c = 0;
    for (int i = 0; i < N; i++) c += A[i];
    return c;
}

#include "common.h"
