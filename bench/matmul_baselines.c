/* The C side of the matmul benchmark: PolyBench-style loops over static arrays (so that Polly
 * sees constant bounds), compiled by bench/run_matmul_benchmark.py with gcc, clang and
 * clang + Polly, and sgemm (dgemm with -DDOUBLE) from OpenBLAS when it is installed
 * (-DUSE_OPENBLAS). Prints one JSON object: the run times and a checksum of C.
 *
 *   cc -O3 -march=native -ffp-contract=off -DSIZE_M=2048 -DSIZE_N=2048 -DSIZE_K=2048 [-DGEMM] [-DDOUBLE] matmul_baselines.c
 *   matmul_baselines <runs>
 *
 * C = A B (matmul) or C = beta C + alpha A B (gemm, PolyBench's order of operations, which is
 * also Tessera's: beta * C first, then alpha * A(i, k) * B(k, j) added for k = 0, 1, ...).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef USE_OPENBLAS
#include <cblas.h>
#endif

#define M SIZE_M
#define N SIZE_N
#define K SIZE_K

#ifdef DOUBLE
typedef double real;
#define GEMM_FN cblas_dgemm
#else
typedef float real;
#define GEMM_FN cblas_sgemm
#endif

static real A[M][K], B[K][N], C[M][N];
static const real alpha = 1.5, beta = 1.2;

static void init(void) {
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++) A[i][k] = (real)((i * k + 1) % M) / M - (real)0.5;
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++) B[k][j] = (real)((k * (j + 1)) % N) / N - (real)0.5;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) C[i][j] = (real)((i * (j + 2)) % N) / N;
}

static void kernel(void) {
#ifdef USE_OPENBLAS
#ifdef GEMM
    GEMM_FN(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, alpha, &A[0][0], K, &B[0][0], N, beta, &C[0][0], N);
#else
    GEMM_FN(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0, &A[0][0], K, &B[0][0], N, 0.0, &C[0][0], N);
#endif
#else
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++)
#ifdef GEMM
            C[i][j] *= beta;
#else
            C[i][j] = 0;
#endif
        for (int k = 0; k < K; k++)
            for (int j = 0; j < N; j++)
#ifdef GEMM
                C[i][j] += alpha * A[i][k] * B[k][j];
#else
                C[i][j] += A[i][k] * B[k][j];
#endif
    }
#endif
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 5;
    printf("{\"run_ms\": [");
    double checksum = 0;
    for (int r = 0; r < runs; r++) {
        init();
        double t0 = now_ms();
        kernel();
        double t = now_ms() - t0;
        printf("%s%.3f", r ? ", " : "", t);
        if (r == 0)
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) checksum += C[i][j];
    }
    printf("], \"checksum\": %.9g}\n", checksum);
    return 0;
}
