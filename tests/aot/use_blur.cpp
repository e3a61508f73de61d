// A plain C++ program that uses a pipeline compiled ahead of time. It links aot_blur.o, the
// OpenMP runtime and libm only: no Tessera library, no LLVM.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "aot_blur.h"

namespace {

tessera_buffer_t dense(float *data, int w, int h, int c) {
    tessera_buffer_t b{};
    b.host = reinterpret_cast<uint8_t *>(data);
    b.version = TESSERA_ABI_VERSION;
    b.dimensions = 3;
    b.dim[0] = {0, w, 1};
    b.dim[1] = {0, h, w};
    b.dim[2] = {0, c, int64_t(w) * h};
    return b;
}

} // namespace

int main() {
    const int W = 333, H = 141;
    std::vector<float> in(size_t(W) * H * 3), out(size_t(W - 4) * (H - 4) * 3);
    for (size_t i = 0; i < in.size(); ++i) in[i] = float((i * 2654435761u) % 1000) / 1000.f;
    tessera_buffer_t bin = dense(in.data(), W, H, 3), bout = dense(out.data(), W - 4, H - 4, 3);
    void *args[aot_blur_num_args];
    args[aot_blur_arg_input] = &bin;
    args[aot_blur_arg_blur_y] = &bout;
    tessera_error_t err{};
    if (aot_blur(args, &err) != TESSERA_OK) {
        std::printf("aot_blur failed with code %d\n", err.code);
        return 1;
    }
    // The same arithmetic, in the same order, with plain loops.
    auto at = [&](int x, int y, int c) { return in[(size_t(c) * H + size_t(y)) * W + size_t(x)]; };
    int bad = 0;
    for (int c = 0; c < 3; ++c)
        for (int y = 0; y < H - 4; ++y)
            for (int x = 0; x < W - 4; ++x) {
                auto bx = [&](int yy) {
                    return (at(x, yy, c) + 4.f * at(x + 1, yy, c) + 6.f * at(x + 2, yy, c) + 4.f * at(x + 3, yy, c) +
                            at(x + 4, yy, c)) / 16.f;
                };
                float want = (bx(y) + 4.f * bx(y + 1) + 6.f * bx(y + 2) + 4.f * bx(y + 3) + bx(y + 4)) / 16.f;
                if (out[(size_t(c) * (H - 4) + size_t(y)) * (W - 4) + size_t(x)] != want) ++bad;
            }
    // An input that is too small is rejected, not read out of bounds.
    tessera_buffer_t small = dense(in.data(), W - 10, H, 3);
    args[aot_blur_arg_input] = &small;
    int32_t rc = aot_blur(args, &err);
    bool rejected = rc == TESSERA_ERROR_INPUT_TOO_SMALL && err.dim == 0 && err.need_max == W - 1 && err.have_max == W - 11;
    // So is a descriptor of another layout (a program built against an older abi.h).
    tessera_buffer_t old = bin;
    old.version = TESSERA_ABI_VERSION - 1;
    args[aot_blur_arg_input] = &old;
    rc = aot_blur(args, &err);
    bool old_rejected = rc == TESSERA_ERROR_ABI_VERSION && err.argument == aot_blur_arg_input && err.need_min == TESSERA_ABI_VERSION - 1;
    std::printf("aot blur: %d mismatches, small input %s, descriptor of another ABI version %s\n", bad,
                rejected ? "rejected" : "NOT rejected", old_rejected ? "rejected" : "NOT rejected");
    return bad == 0 && rejected && old_rejected ? 0 : 1;
}
