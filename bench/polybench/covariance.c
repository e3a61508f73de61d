/* PolyBench 4.2 datamining/covariance: the covariance of data's M columns over N rows.
 * -DM= -DN= */
#define KERNEL __attribute__((noinline)) static void
static double data[N][M], cov[M][M], mean[M];
static const double float_n = (double)N;

static void init(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) data[i][j] = ((double)i * j) / M + (double)((i + 3 * j) % 17) / 17.0;
}

KERNEL kernel(void) {
    for (int j = 0; j < M; j++) {
        mean[j] = 0.0;
        for (int i = 0; i < N; i++) mean[j] += data[i][j];
        mean[j] /= float_n;
    }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) data[i][j] -= mean[j];
    for (int i = 0; i < M; i++)
        for (int j = i; j < M; j++) {
            cov[i][j] = 0.0;
            for (int k = 0; k < N; k++) cov[i][j] += data[k][i] * data[k][j];
            cov[i][j] /= (float_n - 1.0);
            cov[j][i] = cov[i][j];
        }
}

static double checksum(void) {
    double c = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < M; j++) c += cov[i][j];
    return c;
}

#include "common.h"
