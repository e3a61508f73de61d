/* PolyBench 4.2 linear-algebra/kernels/doitgen: A[r][q][:] = A[r][q][:] C4, in place through
 * sum[].  -DNQ= -DNR= -DNP= */
#define KERNEL __attribute__((noinline)) static void
static double A[NR][NQ][NP], C4[NP][NP], sum[NP];

static void init(void) {
    for (int i = 0; i < NR; i++)
        for (int j = 0; j < NQ; j++)
            for (int k = 0; k < NP; k++) A[i][j][k] = (double)((i * j + k) % NP) / NP;
    for (int i = 0; i < NP; i++)
        for (int j = 0; j < NP; j++) C4[i][j] = (double)(i * j % NP) / NP;
}

KERNEL kernel(void) {
    for (int r = 0; r < NR; r++)
        for (int q = 0; q < NQ; q++) {
            for (int p = 0; p < NP; p++) {
                sum[p] = 0.0;
                for (int s = 0; s < NP; s++) sum[p] += A[r][q][s] * C4[s][p];
            }
            for (int p = 0; p < NP; p++) A[r][q][p] = sum[p];
        }
}

static double checksum(void) {
    double c = 0;
    for (int i = 0; i < NR; i++)
        for (int j = 0; j < NQ; j++)
            for (int k = 0; k < NP; k++) c += A[i][j][k];
    return c;
}

#include "common.h"
