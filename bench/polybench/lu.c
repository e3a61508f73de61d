/* PolyBench 4.2 linear-algebra/solvers/lu: A = L U in place, no pivoting.  -DN=
 * The input is diagonally dominant (PolyBench builds B B^T, an O(N^3) init). */
#define KERNEL __attribute__((noinline)) static void
static double A[N][N];

static void init(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) A[i][j] = i == j ? N + 1.0 : (double)((i * j + 1) % N) / N - 0.5;
}

KERNEL kernel(void) {
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < i; j++) {
            for (int k = 0; k < j; k++) A[i][j] -= A[i][k] * A[k][j];
            A[i][j] /= A[j][j];
        }
        for (int j = i; j < N; j++)
            for (int k = 0; k < i; k++) A[i][j] -= A[i][k] * A[k][j];
    }
}

static double checksum(void) {
    double c = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) c += A[i][j];
    return c;
}

#include "common.h"
