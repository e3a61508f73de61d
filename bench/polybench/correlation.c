/* PolyBench 4.2 datamining/correlation: the correlation of data's M columns over N rows.
 * -DM= -DN= */
#include <math.h>
#define KERNEL __attribute__((noinline)) static void
static double data[N][M], corr[M][M], mean[M], stddev[M];
static const double float_n = (double)N, eps = 0.1;

static void init(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) data[i][j] = (double)(i * j) / M + i + (double)((i + 3 * j) % 17) / 17.0;
}

KERNEL kernel(void) {
    for (int j = 0; j < M; j++) {
        mean[j] = 0.0;
        for (int i = 0; i < N; i++) mean[j] += data[i][j];
        mean[j] /= float_n;
    }
    for (int j = 0; j < M; j++) {
        stddev[j] = 0.0;
        for (int i = 0; i < N; i++) stddev[j] += (data[i][j] - mean[j]) * (data[i][j] - mean[j]);
        stddev[j] /= float_n;
        stddev[j] = sqrt(stddev[j]);
        stddev[j] = stddev[j] <= eps ? 1.0 : stddev[j];
    }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            data[i][j] -= mean[j];
            data[i][j] /= sqrt(float_n) * stddev[j];
        }
    for (int i = 0; i < M - 1; i++) {
        corr[i][i] = 1.0;
        for (int j = i + 1; j < M; j++) {
            corr[i][j] = 0.0;
            for (int k = 0; k < N; k++) corr[i][j] += (data[k][i] * data[k][j]);
            corr[j][i] = corr[i][j];
        }
    }
    corr[M - 1][M - 1] = 1.0;
}

static double checksum(void) {
    double c = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < M; j++) c += corr[i][j];
    return c;
}

#include "common.h"
