/* PolyBench 4.2 linear-algebra/kernels/2mm: D = alpha A B C + beta D.  -DNI= -DNJ= -DNK= -DNL= */
#define KERNEL __attribute__((noinline)) static void
static double tmp[NI][NJ], A[NI][NK], B[NK][NJ], C[NJ][NL], D[NI][NL];
static const double alpha = 1.5, beta = 1.2;

static void init(void) {
    for (int i = 0; i < NI; i++)
        for (int j = 0; j < NK; j++) A[i][j] = (double)((i * j + 1) % NI) / NI;
    for (int i = 0; i < NK; i++)
        for (int j = 0; j < NJ; j++) B[i][j] = (double)(i * (j + 1) % NJ) / NJ;
    for (int i = 0; i < NJ; i++)
        for (int j = 0; j < NL; j++) C[i][j] = (double)((i * (j + 3) + 1) % NL) / NL;
    for (int i = 0; i < NI; i++)
        for (int j = 0; j < NL; j++) D[i][j] = (double)(i * (j + 2) % NK) / NK;
}

KERNEL kernel(void) {
    for (int i = 0; i < NI; i++)
        for (int j = 0; j < NJ; j++) {
            tmp[i][j] = 0.0;
            for (int k = 0; k < NK; ++k) tmp[i][j] += alpha * A[i][k] * B[k][j];
        }
    for (int i = 0; i < NI; i++)
        for (int j = 0; j < NL; j++) {
            D[i][j] *= beta;
            for (int k = 0; k < NJ; ++k) D[i][j] += tmp[i][k] * C[k][j];
        }
}

static double checksum(void) {
    double c = 0;
    for (int i = 0; i < NI; i++)
        for (int j = 0; j < NL; j++) c += D[i][j];
    return c;
}

#include "common.h"
