/* PolyBench 4.2 linear-algebra/solvers/cholesky: A = L L^T in the lower triangle.  -DN=
 * The input is symmetric and diagonally dominant, hence positive definite (PolyBench builds
 * B B^T, an O(N^3) init). */
#include <math.h>
#define KERNEL __attribute__((noinline)) static void
static double A[N][N];

static void init(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) A[i][j] = i == j ? N + 1.0 : (double)((i + j) % N) / N - 0.5;
}

KERNEL kernel(void) {
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < i; j++) {
            for (int k = 0; k < j; k++) A[i][j] -= A[i][k] * A[j][k];
            A[i][j] /= A[j][j];
        }
        for (int k = 0; k < i; k++) A[i][i] -= A[i][k] * A[i][k];
        A[i][i] = sqrt(A[i][i]);
    }
}

static double checksum(void) {
    double c = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j <= i; j++) c += A[i][j];
    return c;
}

#include "common.h"
