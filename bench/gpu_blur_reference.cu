// Hand-written CUDA blur_x -> blur_y, the ceiling for Tessera's fused GPU kernel
// (bench/gpu_blur.cpp): the same pipeline (3 x 4096 x 4096 float input, 5-tap [1 4 6 4 1] / 16
// along x then y, output 4092 x 4092 x 3), in the shapes a CUDA programmer would try, each
// checked against host loops and timed with CUDA events (median of 60 launches, two rounds),
// beside a float4 copy and cudaMemcpy of the input. One JSON line per variant and round.
//   - shared scalar TY x 256: Tessera's shape (a thread a column, blur_x's TY + 4 rows into
//     shared memory, a barrier, blur_y's TY rows);
//   - regs scalar R: a thread a column walks R rows down, blur_x's last five rows in registers
//     (a sliding window: no shared memory, no barrier);
//   - regs vec4 R: the same with four columns a thread, loaded and stored as float4;
//   - shared vec4 TY x 4T: Tessera's shape with four columns a thread (T threads);
//   - regs strided / consecutive N R: the register window with N columns a thread and no access
//     wider than 8 bytes (regs_columns below);
//   - shared consecutive N TY x NT: Tessera's shape with N consecutive columns a thread.
// The sizes are fixed at the benchmark's (bench/run_gpu_benchmark.py --size 4096 4096).
// scripts/gpu_check.sh builds it with nvcc and runs it on a machine with a GPU:
//   nvcc -O3 -arch=sm_90 -std=c++17 bench/gpu_blur_reference.cu -o gpu_blur_reference
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1); } } while (0)

constexpr int W = 4096, H = 4096, C = 3, OW = W - 4, OH = H - 4;

__host__ __device__ __forceinline__ float bx(const float *row, int x) {
    return (row[x] + 4.f * row[x + 1] + 6.f * row[x + 2] + 4.f * row[x + 3] + row[x + 4]) / 16.f;
}

__global__ void copy4(const float4 *__restrict__ in, float4 *__restrict__ out, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) out[i] = in[i];
}

// Tessera's structure: tile TY x 256, 256 threads, blur_x to shared (TY+4 rows), barrier, blur_y.
template <int TY>
__global__ void shared_scalar(const float *__restrict__ in, float *__restrict__ out) {
    extern __shared__ float s[];
    int x0 = blockIdx.x * 256, y0 = blockIdx.y * TY, c = blockIdx.z, t = threadIdx.x;
    const float *img = in + (size_t)c * W * H;
    int x = x0 + t;
    for (int r = 0; r < TY + 4 && y0 + r < H; r++)
        if (x < OW) s[r * 256 + t] = bx(img + (size_t)(y0 + r) * W, x);
    __syncthreads();
    for (int r = 0; r < TY && y0 + r < OH; r++)
        if (x < OW)
            out[(size_t)c * OW * OH + (size_t)(y0 + r) * OW + x] =
                (s[r * 256 + t] + 4.f * s[(r + 1) * 256 + t] + 6.f * s[(r + 2) * 256 + t] + 4.f * s[(r + 3) * 256 + t] + s[(r + 4) * 256 + t]) / 16.f;
}

__device__ __forceinline__ float4 bx4(const float *row, int x) {
    float4 a = *reinterpret_cast<const float4 *>(row + x), b = *reinterpret_cast<const float4 *>(row + x + 4);
    float4 r;
    r.x = (a.x + 4.f * a.y + 6.f * a.z + 4.f * a.w + b.x) / 16.f;
    r.y = (a.y + 4.f * a.z + 6.f * a.w + 4.f * b.x + b.y) / 16.f;
    r.z = (a.z + 4.f * a.w + 6.f * b.x + 4.f * b.y + b.z) / 16.f;
    r.w = (a.w + 4.f * b.x + 6.f * b.y + 4.f * b.z + b.w) / 16.f;
    return r;
}
__device__ __forceinline__ float by(float a, float b, float c, float d, float e) { return (a + 4.f * b + 6.f * c + 4.f * d + e) / 16.f; }
__device__ __forceinline__ float4 by4(float4 a, float4 b, float4 c, float4 d, float4 e) {
    return make_float4(by(a.x, b.x, c.x, d.x, e.x), by(a.y, b.y, c.y, d.y, e.y), by(a.z, b.z, c.z, d.z, e.z), by(a.w, b.w, c.w, d.w, e.w));
}

// The columns a thread computes: one (float, scalar loads) or four (float4 loads and stores).
template <class V> struct Columns;
template <> struct Columns<float> {
    static constexpr int n = 1;
    __device__ static float blur_x(const float *row, int x) { return bx(row, x); }
    __device__ static float blur_y(float a, float b, float c, float d, float e) { return by(a, b, c, d, e); }
};
template <> struct Columns<float4> {
    static constexpr int n = 4;
    __device__ static float4 blur_x(const float *row, int x) { return bx4(row, x); }
    __device__ static float4 blur_y(float4 a, float4 b, float4 c, float4 d, float4 e) { return by4(a, b, c, d, e); }
};

// Columns<V>::n columns per thread walking R rows down, blur_x's last five rows in registers (a
// sliding window: no shared memory, no barrier).
template <int R, class V>
__global__ void regs(const float *__restrict__ in, float *__restrict__ out) {
    using C = Columns<V>;
    int x = C::n * (blockIdx.x * blockDim.x + threadIdx.x), y0 = blockIdx.y * R, c = blockIdx.z;
    if (x >= OW) return;
    const float *img = in + (size_t)c * W * H;
    float *o = out + (size_t)c * OW * OH;
    V w0 = C::blur_x(img + (size_t)y0 * W, x), w1 = C::blur_x(img + (size_t)(y0 + 1) * W, x),
      w2 = C::blur_x(img + (size_t)(y0 + 2) * W, x), w3 = C::blur_x(img + (size_t)(y0 + 3) * W, x);
#pragma unroll 4
    for (int r = 0; r < R; r++) {
        int y = y0 + r;
        if (y >= OH) break;
        V w4 = C::blur_x(img + (size_t)(y + 4) * W, x);
        *reinterpret_cast<V *>(o + (size_t)y * OW + x) = C::blur_y(w0, w1, w2, w3, w4);
        w0 = w1; w1 = w2; w2 = w3; w3 = w4;
    }
}

// N columns per thread walking R rows down, each column's last five blur_x rows in registers,
// with no access wider than 4 or 8 bytes (so no 16-byte alignment to know, which a compiler
// knows of a user's buffer only at run time):
//   - STRIDED: columns t, t + T, t + 2T, ... (T threads): each load instruction of a warp is
//     coalesced, as Tessera's thread loop (x = lo + tid; x += ntid) would be with its iterations
//     jammed; 5 loads per column.
//   - not STRIDED: N consecutive columns, whose N + 4 input elements are loaded once, by scalar
//     loads (L = 1) or 8-byte float2 loads (L = 2).
template <int R, int N, bool STRIDED, int L = 1>
__global__ void regs_columns(const float *__restrict__ in, float *__restrict__ out) {
    int t = threadIdx.x, T = blockDim.x, y0 = blockIdx.y * R, c = blockIdx.z;
    int x0 = STRIDED ? blockIdx.x * N * T + t : N * (blockIdx.x * T + t);
    int step = STRIDED ? T : 1;
    if (x0 >= OW) return;
    const float *img = in + (size_t)c * W * H;
    float *o = out + (size_t)c * OW * OH;
    auto blur_x_row = [&](int y, float *dst) {
        const float *row = img + (size_t)y * W;
        if (STRIDED) {
#pragma unroll
            for (int k = 0; k < N; k++) dst[k] = x0 + k * step < OW ? bx(row, x0 + k * step) : 0.f;
        } else {
            float v[N + 4];
            if (L == 2) {
#pragma unroll
                for (int j = 0; j < (N + 4) / 2; j++) {
                    float2 p = *reinterpret_cast<const float2 *>(row + x0 + 2 * j);
                    v[2 * j] = p.x, v[2 * j + 1] = p.y;
                }
            } else {
#pragma unroll
                for (int j = 0; j < N + 4; j++) v[j] = row[x0 + j];
            }
#pragma unroll
            for (int k = 0; k < N; k++) dst[k] = (v[k] + 4.f * v[k + 1] + 6.f * v[k + 2] + 4.f * v[k + 3] + v[k + 4]) / 16.f;
        }
    };
    float w0[N], w1[N], w2[N], w3[N], w4[N];
    blur_x_row(y0, w0), blur_x_row(y0 + 1, w1), blur_x_row(y0 + 2, w2), blur_x_row(y0 + 3, w3);
#pragma unroll 4
    for (int r = 0; r < R; r++) {
        int y = y0 + r;
        if (y >= OH) break;
        blur_x_row(y + 4, w4);
#pragma unroll
        for (int k = 0; k < N; k++) {
            int x = x0 + k * step;
            if (x < OW) o[(size_t)y * OW + x] = by(w0[k], w1[k], w2[k], w3[k], w4[k]);
            w0[k] = w1[k], w1[k] = w2[k], w2[k] = w3[k], w3[k] = w4[k];
        }
    }
}

// Tessera's structure (blur_x's TY + 4 rows into shared memory, a barrier, blur_y) with N
// consecutive columns a thread and scalar global loads: a thread's N + 4 input elements a row
// are loaded once (5 loads a point for N = 1, 3 for N = 2, 2 for N = 4).
template <int TY, int N, int T = 256>
__global__ void shared_columns(const float *__restrict__ in, float *__restrict__ out) {
    extern __shared__ float s[];
    constexpr int TW = N * T;
    int t = threadIdx.x, x0 = blockIdx.x * TW + N * t, y0 = blockIdx.y * TY, c = blockIdx.z;
    const float *img = in + (size_t)c * W * H;
#pragma unroll 4
    for (int r = 0; r < TY + 4; r++)
        if (x0 < OW && y0 + r < H) {
            const float *row = img + (size_t)(y0 + r) * W;
            float v[N + 4];
#pragma unroll
            for (int j = 0; j < N + 4; j++) v[j] = row[x0 + j];
#pragma unroll
            for (int k = 0; k < N; k++) s[r * TW + N * t + k] = (v[k] + 4.f * v[k + 1] + 6.f * v[k + 2] + 4.f * v[k + 3] + v[k + 4]) / 16.f;
        }
    __syncthreads();
#pragma unroll 4
    for (int r = 0; r < TY; r++)
        if (x0 < OW && y0 + r < OH)
#pragma unroll
            for (int k = 0; k < N; k++) {
                const float *p = s + r * TW + N * t + k;
                out[(size_t)c * OW * OH + (size_t)(y0 + r) * OW + x0 + k] = by(p[0], p[TW], p[2 * TW], p[3 * TW], p[4 * TW]);
            }
}

// Tessera's structure with float4 per thread: tile TY x 4T, T threads, each thread four columns;
// the row loops unrolled by four, as Tessera jams rows.
template <int TY, int T = 256>
__global__ void shared_vec4(const float *__restrict__ in, float *__restrict__ out) {
    extern __shared__ float4 s4[];
    int t = threadIdx.x, x = blockIdx.x * 4 * T + 4 * t, y0 = blockIdx.y * TY, c = blockIdx.z;
    const float *img = in + (size_t)c * W * H;
#pragma unroll 4
    for (int r = 0; r < TY + 4; r++)
        if (x < OW && y0 + r < H) s4[r * T + t] = bx4(img + (size_t)(y0 + r) * W, x);
    __syncthreads();
#pragma unroll 4
    for (int r = 0; r < TY; r++)
        if (x < OW && y0 + r < OH)
            *reinterpret_cast<float4 *>(out + (size_t)c * OW * OH + (size_t)(y0 + r) * OW + x) =
                by4(s4[r * T + t], s4[(r + 1) * T + t], s4[(r + 2) * T + t], s4[(r + 3) * T + t], s4[(r + 4) * T + t]);
}

static std::vector<float> ref_out;
static bool check(const float *d_out, const char *name) {
    std::vector<float> got((size_t)C * OW * OH);
    CK(cudaMemcpy(got.data(), d_out, got.size() * 4, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); i++)
        if (std::fabs(got[i] - ref_out[i]) > 1e-5f * std::max(1.f, std::fabs(ref_out[i]))) bad++;
    if (bad) printf("%s: %zu wrong\n", name, bad);
    return bad == 0;
}

template <class F>
static double time_ms(F launch, int reps) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> v;
    launch();
    CK(cudaDeviceSynchronize());
    for (int i = 0; i < reps; i++) {
        CK(cudaEventRecord(a));
        launch();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        v.push_back(ms);
    }
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main() {
    size_t nin = (size_t)C * W * H, nout = (size_t)C * OW * OH;
    std::vector<float> h(nin);
    srand(1);
    for (auto &v : h) v = rand() / (float)RAND_MAX;
    ref_out.resize(nout);
    std::vector<float> tx((size_t)W * H);
    for (int c = 0; c < C; c++) {
        const float *img = h.data() + (size_t)c * W * H;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < OW; x++) tx[(size_t)y * W + x] = bx(img + (size_t)y * W, x);
        for (int y = 0; y < OH; y++)
            for (int x = 0; x < OW; x++) {
                const float *p = tx.data() + (size_t)y * W + x;
                ref_out[(size_t)c * OW * OH + (size_t)y * OW + x] = (p[0] + 4.f * p[W] + 6.f * p[2 * W] + 4.f * p[3 * W] + p[4 * W]) / 16.f;
            }
    }
    float *din, *dout, *dcopy;
    CK(cudaMalloc(&din, nin * 4));
    CK(cudaMalloc(&dout, nout * 4));
    CK(cudaMalloc(&dcopy, nin * 4));
    CK(cudaMemcpy(din, h.data(), nin * 4, cudaMemcpyHostToDevice));
    double bytes = (nin + nout) * 4.0;
    const int reps = 60;
    for (int round = 0; round < 2; round++) {
        // ok: 1 checked and right, 0 wrong, -1 not a blur (the copies), printed as null.
        auto report = [&](const char *name, double ms, int ok) {
            printf("{\"variant\": \"%s\", \"round\": %d, \"median_ms\": %.4f, \"TBps\": %.2f, \"correct\": %s}\n", name, round, ms,
                   bytes / ms / 1e9, ok < 0 ? "null" : ok ? "true" : "false");
        };
        double ms = time_ms([&] { copy4<<<132 * 16, 256>>>((const float4 *)din, (float4 *)dcopy, nin / 4); }, reps);
        report("copy float4 (in -> same-size out)", ms, -1);
        ms = time_ms([&] { CK(cudaMemcpyAsync(dcopy, din, nin * 4, cudaMemcpyDeviceToDevice)); }, reps);
        report("cudaMemcpy device to device", ms, -1);
#define RUN(NAME, GRID, BLOCK, SHM, ...)                                                                  \
    {                                                                                                        \
        CK(cudaMemset(dout, 0, nout * 4));                                                                   \
        if (SHM > 48 * 1024) CK(cudaFuncSetAttribute(__VA_ARGS__, cudaFuncAttributeMaxDynamicSharedMemorySize, SHM)); \
        ms = time_ms([&] { __VA_ARGS__<<<GRID, BLOCK, SHM>>>(din, dout); }, reps);                           \
        CK(cudaGetLastError());                                                                              \
        report(NAME, ms, check(dout, NAME) ? 1 : 0);                                                                 \
    }
        RUN("shared scalar 40x256 (Tessera's shape)", dim3((OW + 255) / 256, (OH + 39) / 40, C), 256, 44 * 256 * 4, shared_scalar<40>);
        RUN("shared scalar 32x256", dim3((OW + 255) / 256, (OH + 31) / 32, C), 256, 36 * 256 * 4, shared_scalar<32>);
        RUN("regs scalar R=32", dim3((OW + 255) / 256, (OH + 31) / 32, C), 256, 0, regs<32, float>);
        RUN("regs scalar R=64", dim3((OW + 255) / 256, (OH + 63) / 64, C), 256, 0, regs<64, float>);
        RUN("regs vec4 R=16", dim3((OW / 4 + 127) / 128, (OH + 15) / 16, C), 128, 0, regs<16, float4>);
        RUN("regs vec4 R=32", dim3((OW / 4 + 127) / 128, (OH + 31) / 32, C), 128, 0, regs<32, float4>);
        RUN("regs vec4 R=64", dim3((OW / 4 + 127) / 128, (OH + 63) / 64, C), 128, 0, regs<64, float4>);
        RUN("regs vec4 R=64 b256", dim3((OW / 4 + 255) / 256, (OH + 63) / 64, C), 256, 0, regs<64, float4>);
        RUN("shared vec4 8x1024", dim3((OW + 1023) / 1024, (OH + 7) / 8, C), 256, 12 * 256 * 16, shared_vec4<8>);
        RUN("shared vec4 16x1024", dim3((OW + 1023) / 1024, (OH + 15) / 16, C), 256, 20 * 256 * 16, shared_vec4<16>);
        // Taller tiles with fewer threads: the halo rows' share falls as in regs R (2026-11-30).
        RUN("shared vec4 32x256", dim3((OW + 255) / 256, (OH + 31) / 32, C), 64, 36 * 64 * 16, shared_vec4<32, 64>);
        RUN("shared vec4 40x256", dim3((OW + 255) / 256, (OH + 39) / 40, C), 64, 44 * 64 * 16, shared_vec4<40, 64>);
        RUN("shared vec4 16x512", dim3((OW + 511) / 512, (OH + 15) / 16, C), 128, 20 * 128 * 16, shared_vec4<16, 128>);
        RUN("shared vec4 32x512", dim3((OW + 511) / 512, (OH + 31) / 32, C), 128, 36 * 128 * 16, shared_vec4<32, 128>);
        RUN("shared vec4 32x128", dim3((OW + 127) / 128, (OH + 31) / 32, C), 32, 36 * 32 * 16, shared_vec4<32, 32>);
        // What a compiler can emit without knowing 16-byte alignment (2026-12-01): N columns a thread,
        // strided (coalesced per instruction) or consecutive (scalar or float2 loads).
        RUN("regs strided N=2 R=32 T=256", dim3((OW + 511) / 512, (OH + 31) / 32, C), 256, 0, regs_columns<32, 2, true>);
        RUN("regs strided N=4 R=32 T=128", dim3((OW + 511) / 512, (OH + 31) / 32, C), 128, 0, regs_columns<32, 4, true>);
        RUN("regs strided N=4 R=32 T=256", dim3((OW + 1023) / 1024, (OH + 31) / 32, C), 256, 0, regs_columns<32, 4, true>);
        RUN("regs strided N=8 R=32 T=128", dim3((OW + 1023) / 1024, (OH + 31) / 32, C), 128, 0, regs_columns<32, 8, true>);
        RUN("regs consecutive scalar N=4 R=32 T=128", dim3((OW / 4 + 127) / 128, (OH + 31) / 32, C), 128, 0, regs_columns<32, 4, false, 1>);
        RUN("regs consecutive scalar N=2 R=32 T=256", dim3((OW / 2 + 255) / 256, (OH + 31) / 32, C), 256, 0, regs_columns<32, 2, false, 1>);
        RUN("regs consecutive float2 N=4 R=32 T=128", dim3((OW / 4 + 127) / 128, (OH + 31) / 32, C), 128, 0, regs_columns<32, 4, false, 2>);
        RUN("regs consecutive float2 N=2 R=32 T=256", dim3((OW / 2 + 255) / 256, (OH + 31) / 32, C), 256, 0, regs_columns<32, 2, false, 2>);
        // Tessera's shape with N consecutive columns a thread, scalar global loads (2026-12-01).
        RUN("shared consecutive N=2 40x512", dim3((OW + 511) / 512, (OH + 39) / 40, C), 256, 44 * 512 * 4, shared_columns<40, 2>);
        RUN("shared consecutive N=2 20x512", dim3((OW + 511) / 512, (OH + 19) / 20, C), 256, 24 * 512 * 4, shared_columns<20, 2>);
        RUN("shared consecutive N=2 32x256 T=128", dim3((OW + 255) / 256, (OH + 31) / 32, C), 128, 36 * 256 * 4, shared_columns<32, 2, 128>);
        RUN("shared consecutive N=4 8x1024", dim3((OW + 1023) / 1024, (OH + 7) / 8, C), 256, 12 * 1024 * 4, shared_columns<8, 4>);
        RUN("shared consecutive N=4 32x256 T=64", dim3((OW + 255) / 256, (OH + 31) / 32, C), 64, 36 * 256 * 4, shared_columns<32, 4, 64>);
        RUN("regs consecutive float2 N=2 R=32 T=128", dim3((OW / 2 + 127) / 128, (OH + 31) / 32, C), 128, 0, regs_columns<32, 2, false, 2>);
        RUN("regs consecutive scalar N=2 R=64 T=256", dim3((OW / 2 + 255) / 256, (OH + 63) / 64, C), 256, 0, regs_columns<64, 2, false, 1>);
        RUN("regs consecutive scalar N=3 R=32 T=256", dim3((OW / 3 + 255) / 256, (OH + 31) / 32, C), 256, 0, regs_columns<32, 3, false, 1>);
    }
    return 0;
}
