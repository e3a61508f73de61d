/* The C side of the DNN-layer benchmark (bench/run_dnn_benchmark.py): the two layers of
 * apps/src/dnn_layers.cpp over static arrays with compile-time sizes.
 *
 *   conv2d (-DCONV2D -DSIZE_W= -DSIZE_H= -DSIZE_CI= -DSIZE_CO=): a 3x3 convolution, zero padding
 *   1, stride 1, then bias and ReLU; input [CI][H][W], weights [CO][CI][3][3], output [CO][H][W]
 *   (NCHW, OIHW).
 *   batched_matmul (-DBMM -DSIZE_BATCH= -DSIZE_M= -DSIZE_N= -DSIZE_K=): C[b] = A[b] B[b],
 *   A [BATCH][M][K], B [BATCH][K][N].
 *
 * Plain loops parallelized with OpenMP over output channels / batch x rows (-fopenmp;
 * OMP_NUM_THREADS), summing in the apps' order, or with -DUSE_OPENBLAS: conv2d as im2col and one
 * sgemm, batched_matmul as one sgemm per batch (OPENBLAS_NUM_THREADS). Prints one JSON object:
 * the run times and a checksum of the output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef USE_OPENBLAS
#include <cblas.h>
#endif

#ifdef CONV2D
#define W SIZE_W
#define H SIZE_H
#define CI SIZE_CI
#define CO SIZE_CO
static float in[CI][H][W], wt[CO][CI][3][3], bias[CO], out[CO][H][W];
#ifdef USE_OPENBLAS
static float col[CI * 9][H * W];
#endif

static void init(void) {
    for (int c = 0; c < CI; c++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) in[c][y][x] = (float)((c * 7 + y * 3 + x) % 17) / 17 - 0.5f;
    for (int o = 0; o < CO; o++)
        for (int c = 0; c < CI; c++)
            for (int ky = 0; ky < 3; ky++)
                for (int kx = 0; kx < 3; kx++) wt[o][c][ky][kx] = (float)((o * 5 + c * 3 + ky * 2 + kx) % 13) / 13 - 0.5f;
    for (int o = 0; o < CO; o++) bias[o] = (float)(o % 5) / 50;
}

static void kernel(void) {
#ifdef USE_OPENBLAS
    for (int c = 0; c < CI; c++)
        for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++)
                for (int y = 0; y < H; y++)
                    for (int x = 0; x < W; x++) {
                        int sx = x + kx - 1, sy = y + ky - 1;
                        col[(c * 3 + ky) * 3 + kx][y * W + x] = sx >= 0 && sx < W && sy >= 0 && sy < H ? in[c][sy][sx] : 0.f;
                    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, CO, H * W, CI * 9, 1.f, &wt[0][0][0][0], CI * 9, &col[0][0],
                H * W, 0.f, &out[0][0][0], H * W);
    for (int o = 0; o < CO; o++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                float v = out[o][y][x] + bias[o];
                out[o][y][x] = v > 0.f ? v : 0.f;
            }
#else
#pragma omp parallel for
    for (int o = 0; o < CO; o++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                float acc = bias[o];
                for (int c = 0; c < CI; c++)
                    for (int ky = 0; ky < 3; ky++)
                        for (int kx = 0; kx < 3; kx++) {
                            int sx = x + kx - 1, sy = y + ky - 1;
                            float v = sx >= 0 && sx < W && sy >= 0 && sy < H ? in[c][sy][sx] : 0.f;
                            acc = acc + wt[o][c][ky][kx] * v;
                        }
                out[o][y][x] = acc > 0.f ? acc : 0.f;
            }
#endif
}

static double checksum(void) {
    double s = 0;
    for (int o = 0; o < CO; o++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) s += out[o][y][x];
    return s;
}
#endif

#ifdef BMM
#define BATCH SIZE_BATCH
#define M SIZE_M
#define N SIZE_N
#define K SIZE_K
static float A[BATCH][M][K], B[BATCH][K][N], C[BATCH][M][N];

static void init(void) {
    for (int b = 0; b < BATCH; b++) {
        for (int i = 0; i < M; i++)
            for (int k = 0; k < K; k++) A[b][i][k] = (float)((b + i * k + 1) % M) / M - 0.5f;
        for (int k = 0; k < K; k++)
            for (int j = 0; j < N; j++) B[b][k][j] = (float)((b + k * (j + 1)) % N) / N - 0.5f;
    }
}

static void kernel(void) {
#ifdef USE_OPENBLAS
    for (int b = 0; b < BATCH; b++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.f, &A[b][0][0], K, &B[b][0][0], N, 0.f,
                    &C[b][0][0], N);
#else
#pragma omp parallel for collapse(2)
    for (int b = 0; b < BATCH; b++)
        for (int i = 0; i < M; i++) {
            for (int j = 0; j < N; j++) C[b][i][j] = 0;
            for (int k = 0; k < K; k++)
                for (int j = 0; j < N; j++) C[b][i][j] += A[b][i][k] * B[b][k][j];
        }
#endif
}

static double checksum(void) {
    double s = 0;
    for (int b = 0; b < BATCH; b++)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) s += C[b][i][j];
    return s;
}
#endif

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 5;
    double sum = 0;
    init();
    printf("{\"run_ms\": [");
    for (int r = 0; r < runs; r++) {
        double t0 = now_ms();
        kernel();
        printf("%s%.3f", r ? ", " : "", now_ms() - t0);
        if (r == 0) sum = checksum();
    }
    printf("], \"checksum\": %.9g}\n", sum);
    return 0;
}
