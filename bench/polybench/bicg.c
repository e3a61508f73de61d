/* PolyBench 4.2 linear-algebra/kernels/bicg: s = A^T r, q = A p.  -DM=... -DN=... */
#define KERNEL __attribute__((noinline)) static void
static double A[N][M], s[M], q[N], p[M], r[N];

static void init(void) {
    for (int i = 0; i < M; i++) p[i] = (double)(i % M) / M;
    for (int i = 0; i < N; i++) {
        r[i] = (double)(i % N) / N;
        for (int j = 0; j < M; j++) A[i][j] = (double)(i * (j + 1) % N) / N;
    }
}

KERNEL kernel(void) {
    for (int i = 0; i < M; i++) s[i] = 0;
    for (int i = 0; i < N; i++) {
        q[i] = 0.0;
        for (int j = 0; j < M; j++) {
            s[j] = s[j] + r[i] * A[i][j];
            q[i] = q[i] + A[i][j] * p[j];
        }
    }
}

static double checksum(void) {
    double c = 0;
    for (int j = 0; j < M; j++) c += s[j];
    for (int i = 0; i < N; i++) c += q[i];
    return c;
}

#include "common.h"
