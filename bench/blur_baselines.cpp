// Baselines for the blur_x_blur_y benchmark, in their own process: (a) a copy of the same bytes
// (input → output, all threads), the bandwidth roofline; (b) naive two-pass C++ with OpenMP.
// Prints one JSON object: {"copy_ms": [...], "naive_ms": [...], ...}.
//
//   blur_baselines <width> <height> <runs>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void print_list(const char *name, const std::vector<double> &v, bool last) {
    std::printf("  \"%s\": [", name);
    for (size_t i = 0; i < v.size(); ++i) std::printf("%s%.4f", i ? ", " : "", v[i]);
    std::printf("]%s\n", last ? "" : ",");
}

} // namespace

int main(int argc, char **argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s <width> <height> <runs>\n", argv[0]);
        return 2;
    }
    const int W = std::atoi(argv[1]), H = std::atoi(argv[2]), runs = std::atoi(argv[3]), C = 3;
    const int OW = W - 4, OH = H - 4;
    size_t in_n = size_t(W) * H * C, out_n = size_t(OW) * OH * C;
    float *in = static_cast<float *>(std::aligned_alloc(64, (in_n * 4 + 63) / 64 * 64));
    float *out = static_cast<float *>(std::aligned_alloc(64, (out_n * 4 + 63) / 64 * 64));
    float *tmp = static_cast<float *>(std::aligned_alloc(64, (size_t(OW) * H * C * 4 + 63) / 64 * 64));
    for (size_t i = 0; i < in_n; ++i) in[i] = float(i % 1013) / 1013.f;
    std::memset(out, 0, out_n * 4);
    std::memset(tmp, 0, size_t(OW) * H * C * 4);

    // (a) The same bytes moved: read the input, write the output, on every thread.
    size_t copy_bytes = std::min(in_n, out_n) * 4;
    std::vector<double> copy_ms, naive_ms;
    for (int r = 0; r < runs; ++r) {
        double t0 = now_ms();
#pragma omp parallel
        {
            int n = omp_get_num_threads(), t = omp_get_thread_num();
            size_t chunk = (copy_bytes / size_t(n) + 63) / 64 * 64;
            size_t begin = std::min(copy_bytes, chunk * size_t(t)), end = std::min(copy_bytes, begin + chunk);
            std::memcpy(reinterpret_cast<char *>(out) + begin, reinterpret_cast<char *>(in) + begin, end - begin);
        }
        copy_ms.push_back(now_ms() - t0);
    }
    // (b) Naive two passes: blur_x over the whole image, then blur_y.
    for (int r = 0; r < runs; ++r) {
        double t0 = now_ms();
#pragma omp parallel for collapse(2)
        for (int c = 0; c < C; ++c)
            for (int y = 0; y < H; ++y) {
                const float *row = in + (size_t(c) * H + y) * W;
                float *t = tmp + (size_t(c) * H + y) * OW;
                for (int x = 0; x < OW; ++x)
                    t[x] = (row[x] + 4.f * row[x + 1] + 6.f * row[x + 2] + 4.f * row[x + 3] + row[x + 4]) / 16.f;
            }
#pragma omp parallel for collapse(2)
        for (int c = 0; c < C; ++c)
            for (int y = 0; y < OH; ++y) {
                const float *t = tmp + (size_t(c) * H + y) * OW;
                float *o = out + (size_t(c) * OH + y) * OW;
                for (int x = 0; x < OW; ++x)
                    o[x] = (t[x] + 4.f * t[x + OW] + 6.f * t[x + 2 * OW] + 4.f * t[x + 3 * OW] + t[x + 4 * OW]) / 16.f;
            }
        naive_ms.push_back(now_ms() - t0);
    }
    // The naive output, checked point by point against the formula written out (exact: the same
    // operations in the same order).
    bool naive_ok = true;
    for (int c = 0; c < C && naive_ok; ++c)
        for (int y = 0; y < OH && naive_ok; ++y)
            for (int x = 0; x < OW; ++x) {
                auto bx = [&](int yy) {
                    const float *row = in + (size_t(c) * H + yy) * W;
                    return (row[x] + 4.f * row[x + 1] + 6.f * row[x + 2] + 4.f * row[x + 3] + row[x + 4]) / 16.f;
                };
                float want = (bx(y) + 4.f * bx(y + 1) + 6.f * bx(y + 2) + 4.f * bx(y + 3) + bx(y + 4)) / 16.f;
                if (out[(size_t(c) * OH + y) * OW + x] != want) {
                    naive_ok = false;
                    break;
                }
            }
    std::printf("{\n  \"threads\": %d,\n  \"copy_bytes\": %zu,\n  \"naive_check\": \"%s\",\n", omp_get_max_threads(),
                copy_bytes, naive_ok ? "ok" : "MISMATCH");
    print_list("copy_ms", copy_ms, false);
    print_list("naive_ms", naive_ms, true);
    std::printf("}\n");
    std::free(in);
    std::free(out);
    std::free(tmp);
    return naive_ok ? 0 : 1;
}
