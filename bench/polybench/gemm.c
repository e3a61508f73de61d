/* PolyBench 4.2 linear-algebra/blas/gemm: C = alpha A B + beta C.  -DNI= -DNJ= -DNK= */
#define KERNEL __attribute__((noinline)) static void
static double C[NI][NJ], A[NI][NK], B[NK][NJ];
static const double alpha = 1.5, beta = 1.2;

static void init(void) {
    for (int i = 0; i < NI; i++)
        for (int j = 0; j < NJ; j++) C[i][j] = (double)((i * j + 1) % NI) / NI;
    for (int i = 0; i < NI; i++)
        for (int j = 0; j < NK; j++) A[i][j] = (double)(i * (j + 1) % NK) / NK;
    for (int i = 0; i < NK; i++)
        for (int j = 0; j < NJ; j++) B[i][j] = (double)(i * (j + 2) % NJ) / NJ;
}

KERNEL kernel(void) {
    for (int i = 0; i < NI; i++) {
        for (int j = 0; j < NJ; j++) C[i][j] *= beta;
        for (int k = 0; k < NK; k++)
            for (int j = 0; j < NJ; j++) C[i][j] += alpha * A[i][k] * B[k][j];
    }
}

static double checksum(void) {
    double c = 0;
    for (int i = 0; i < NI; i++)
        for (int j = 0; j < NJ; j++) c += C[i][j];
    return c;
}

#include "common.h"
