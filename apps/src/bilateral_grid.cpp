// A bilateral grid (Chen et al.; the Halide app): a histogram of the image into a coarse 3-D
// grid (data-dependent writes), a 5-tap blur of the grid in z, x and y, and a trilinear slice
// at data-dependent coordinates.
#include <algorithm>
#include <cmath>

#include "tessera_apps/app.h"

namespace tessera::apps {
namespace {

constexpr int kSigmaS = 8;        // spatial cell size
constexpr float kInvSigmaR = 10;  // 1 / range sigma (0.1): 11 intensity bins

class BilateralGrid : public App {
public:
    BilateralGrid() : App("bilateral_grid") {
        Var x("x"), y("y"), z("z"), c("c");
        Func clamped = BoundaryConditions::repeat_edge(input_);
        RDom r(0, kSigmaS, 0, kSigmaS, "r");
        Expr val = clamp(clamped(x * kSigmaS + r.x - kSigmaS / 2, y * kSigmaS + r.y - kSigmaS / 2), 0.f, 1.f);
        Expr zi = cast<int>(val * kInvSigmaR + 0.5f);
        Func grid("grid");
        grid(x, y, z, c) = 0.f;
        grid(x, y, zi, c) += select(c == 0, val, 1.f);

        Func blurz("blurz"), blurx("blurx"), blury("blury");
        blurz(x, y, z, c) = grid(x, y, z - 2, c) + grid(x, y, z - 1, c) * 4 + grid(x, y, z, c) * 6 +
                            grid(x, y, z + 1, c) * 4 + grid(x, y, z + 2, c);
        blurx(x, y, z, c) = blurz(x - 2, y, z, c) + blurz(x - 1, y, z, c) * 4 + blurz(x, y, z, c) * 6 +
                            blurz(x + 1, y, z, c) * 4 + blurz(x + 2, y, z, c);
        blury(x, y, z, c) = blurx(x, y - 2, z, c) + blurx(x, y - 1, z, c) * 4 + blurx(x, y, z, c) * 6 +
                            blurx(x, y + 1, z, c) * 4 + blurx(x, y + 2, z, c);

        Expr v = clamp(input_(x, y), 0.f, 1.f);
        Expr zv = v * kInvSigmaR;
        Expr zs = cast<int>(zv);
        Expr zf = zv - cast<float>(zs);
        Expr xf = cast<float>(x % kSigmaS) / float(kSigmaS);
        Expr yf = cast<float>(y % kSigmaS) / float(kSigmaS);
        Expr xi = x / kSigmaS, yi = y / kSigmaS;
        Func interpolated("interpolated");
        interpolated(x, y, c) =
            lerp(lerp(lerp(blury(xi, yi, zs, c), blury(xi + 1, yi, zs, c), xf),
                      lerp(blury(xi, yi + 1, zs, c), blury(xi + 1, yi + 1, zs, c), xf), yf),
                 lerp(lerp(blury(xi, yi, zs + 1, c), blury(xi + 1, yi, zs + 1, c), xf),
                      lerp(blury(xi, yi + 1, zs + 1, c), blury(xi + 1, yi + 1, zs + 1, c), xf), yf),
                 zf);
        Func out("bilateral_grid");
        out(x, y) = interpolated(x, y, 0) / interpolated(x, y, 1);
        pipeline_ = Pipeline(out);
    }

    std::vector<std::string> size_names() const override { return {"width", "height"}; }
    std::vector<int> default_sizes() const override { return {512, 512}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        in_ = Buffer<float>(sizes.at(0), sizes.at(1));
        fill_random(in_, rng, 0.0, 1.0);
        input_.set(in_);
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<float>(in_.width(), in_.height())}; }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        Buffer<float> out = outputs.at(0);
        int W = in_.width(), H = in_.height();
        // Grid cells x in [-2, gw + 3), y likewise, z in [-2, 14), c in {0, 1}.
        int gw = (W - 1) / kSigmaS + 6, gh = (H - 1) / kSigmaS + 6, gd = 16;
        auto gi = [&](int x, int y, int z, int c) {
            return ((size_t(c) * gd + size_t(z + 2)) * gh + size_t(y + 2)) * gw + size_t(x + 2);
        };
        const size_t cells = size_t(gw) * size_t(gh) * size_t(gd) * 2;
        std::vector<std::vector<float>> planes(4, std::vector<float>(cells, 0.f));
        std::vector<float> &grid = planes[0], &bz = planes[1], &bx = planes[2], &by = planes[3];
        auto in = [&](int x, int y) { return in_(std::clamp(x, 0, W - 1), std::clamp(y, 0, H - 1)); };
        for (int c = 0; c < 2; ++c)
            TESSERA_REFERENCE_PARALLEL_FOR
            for (int y = -2; y < gh - 2; ++y)
                for (int x = -2; x < gw - 2; ++x)
                    for (int ry = 0; ry < kSigmaS; ++ry)
                        for (int rx = 0; rx < kSigmaS; ++rx) {
                            float val = std::clamp(in(x * kSigmaS + rx - kSigmaS / 2, y * kSigmaS + ry - kSigmaS / 2), 0.f, 1.f);
                            int zi = int(val * kInvSigmaR + 0.5f);
                            grid[gi(x, y, zi, c)] = grid[gi(x, y, zi, c)] + (c == 0 ? val : 1.f);
                        }
        auto pass = [&](const std::vector<float> &src, std::vector<float> &dst, int dx, int dy, int dz) {
            for (int c = 0; c < 2; ++c)
                TESSERA_REFERENCE_PARALLEL_FOR
                for (int z = -2 + 2 * dz; z < gd - 2 - 2 * dz; ++z)
                    for (int y = -2 + 2 * dy; y < gh - 2 - 2 * dy; ++y)
                        for (int x = -2 + 2 * dx; x < gw - 2 - 2 * dx; ++x)
                            dst[gi(x, y, z, c)] = src[gi(x - 2 * dx, y - 2 * dy, z - 2 * dz, c)] +
                                                  src[gi(x - dx, y - dy, z - dz, c)] * 4 + src[gi(x, y, z, c)] * 6 +
                                                  src[gi(x + dx, y + dy, z + dz, c)] * 4 +
                                                  src[gi(x + 2 * dx, y + 2 * dy, z + 2 * dz, c)];
        };
        pass(grid, bz, 0, 0, 1);
        pass(bz, bx, 1, 0, 0);
        pass(bx, by, 0, 1, 0);
        auto lerp = [](float a, float b, float w) { return a * (1.f - w) + b * w; };
        TESSERA_REFERENCE_PARALLEL_FOR
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) {
                float v = std::clamp(in_(x, y), 0.f, 1.f);
                float zv = v * kInvSigmaR;
                int zs = int(zv);
                float zf = zv - float(zs);
                float xf = float(x % kSigmaS) / float(kSigmaS), yf = float(y % kSigmaS) / float(kSigmaS);
                int xi = x / kSigmaS, yi = y / kSigmaS;
                float result[2];
                for (int c = 0; c < 2; ++c) {
                    auto b = [&](int gx, int gy, int gz) { return by[gi(gx, gy, gz, c)]; };
                    result[c] = lerp(lerp(lerp(b(xi, yi, zs), b(xi + 1, yi, zs), xf),
                                          lerp(b(xi, yi + 1, zs), b(xi + 1, yi + 1, zs), xf), yf),
                                     lerp(lerp(b(xi, yi, zs + 1), b(xi + 1, yi, zs + 1), xf),
                                          lerp(b(xi, yi + 1, zs + 1), b(xi + 1, yi + 1, zs + 1), xf), yf),
                                     zf);
                }
                out(x, y) = result[0] / result[1];
            }
    }

    double minimum_bytes() const override { return 8.0 * in_.width() * in_.height(); }

private:
    InputBuffer<float> input_{"input", 2};
    Buffer<float> in_;
};

} // namespace

std::unique_ptr<App> make_bilateral_grid() { return std::make_unique<BilateralGrid>(); }

} // namespace tessera::apps
