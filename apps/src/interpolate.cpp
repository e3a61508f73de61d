// Multiscale interpolation (Halide's and PolyMage's benchmark): fills in the transparent parts
// of an RGBA image from its opaque parts at every scale. The colours are premultiplied by alpha
// and downsampled ([1 2 1] / 4 in x, then y) through 10 levels; from the coarsest level up, each
// level is composited over the upsampled level below it (its colour plus (1 - alpha) times the
// coarser one), and the finest level is divided by its alpha: 48 stages, float RGB out.
//
// The input is extended by repeating its edges, as in Halide's app. Every level is a Func
// defined everywhere, so the finest levels are computed over the image plus a margin of about
// 2^9 pixels that the coarser levels' reads reach, as Halide computes them.
#include <cmath>

#include "pyramid_reference.h"
#include "tessera_apps/app.h"

namespace tessera::apps {
namespace {

constexpr int kLevels = 10;

class Interpolate : public App {
public:
    Interpolate() : App("interpolate") {
        Var x("x"), y("y"), c("c");
        Func clamped = BoundaryConditions::repeat_edge(input_);
        std::vector<Func> downsampled(kLevels);
        downsampled[0] = Func("premultiplied");
        downsampled[0](x, y, c) = select(c < 3, clamped(x, y, c) * clamped(x, y, 3), clamped(x, y, 3));
        for (int l = 1; l < kLevels; ++l) {
            const Func &prev = downsampled[l - 1];
            Func down_x("downsampled_x_" + std::to_string(l));
            down_x(x, y, c) = (prev(2 * x - 1, y, c) + 2.0f * prev(2 * x, y, c) + prev(2 * x + 1, y, c)) * 0.25f;
            downsampled[l] = Func("downsampled_" + std::to_string(l));
            downsampled[l](x, y, c) = (down_x(x, 2 * y - 1, c) + 2.0f * down_x(x, 2 * y, c) + down_x(x, 2 * y + 1, c)) * 0.25f;
        }
        Func interpolated = downsampled[kLevels - 1];
        for (int l = kLevels - 2; l >= 0; --l) {
            std::string level = std::to_string(l);
            Func up_x("upsampled_x_" + level), up("upsampled_" + level);
            up_x(x, y, c) = (interpolated(x / 2, y, c) + interpolated((x + 1) / 2, y, c)) / 2.0f;
            up(x, y, c) = (up_x(x, y / 2, c) + up_x(x, (y + 1) / 2, c)) / 2.0f;
            interpolated = Func("interpolated_" + level);
            interpolated(x, y, c) = downsampled[l](x, y, c) + (1.0f - downsampled[l](x, y, 3)) * up(x, y, c);
        }
        Func normalized("interpolate");
        normalized(x, y, c) = interpolated(x, y, c) / interpolated(x, y, 3);
        // RGB out, as Halide's app bounds it: the normalizing stage's tiles then hold all 4
        // channels of interpolated_0, which it reads at c and at the alpha channel 3, and the
        // upsampling levels are computed in them.
        normalized.bound(c, 0, 3);
        pipeline_ = Pipeline(normalized);
    }

    std::vector<std::string> size_names() const override { return {"width", "height"}; }
    std::vector<int> default_sizes() const override { return {2560, 1536}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        rgba_ = Buffer<float>(sizes.at(0), sizes.at(1), 4);
        fill_random(rgba_, rng, 0.0, 1.0);
        input_.set(rgba_);
    }

    // The photograph seen through holes: one pixel in eight (at random) opaque, the rest
    // transparent, for the pipeline to fill in.
    bool prepare_photo(const Buffer<float> &rgb, uint32_t seed) override {
        std::mt19937 rng(seed);
        std::uniform_int_distribution<int> one_in_eight(0, 7);
        rgba_ = Buffer<float>(rgb.width(), rgb.height(), 4);
        for (int y = 0; y < rgb.height(); ++y)
            for (int x = 0; x < rgb.width(); ++x) {
                for (int c = 0; c < 3; ++c) rgba_(x, y, c) = rgb(x, y, c);
                rgba_(x, y, 3) = one_in_eight(rng) == 0 ? 1.0f : 0.0f;
            }
        input_.set(rgba_);
        return true;
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<float>(rgba_.width(), rgba_.height(), 3)}; }

    void reference(const std::vector<Buffer<void>> &outputs) const override;

    double minimum_bytes() const override { return 4.0 * double(rgba_.width()) * rgba_.height() * (4 + 3); }

private:
    InputBuffer<float> input_{"input", 3};
    Buffer<float> rgba_;
};

using Level = Image<float>;

// More than the margin level l is read over: the reads of level l + 1 reach 2 m + 1 pixels out.
int margin(int l) { return (1 << (kLevels - 1 - l)) + 4; }

void Interpolate::reference(const std::vector<Buffer<void>> &outputs) const {
    Buffer<float> out = outputs.at(0);
    const int W = rgba_.width(), H = rgba_.height();
    auto level_shape = [&](int l) { return Level::with_margin(level_extent(W, l), level_extent(H, l), margin(l), 4); };
    std::vector<Level> downsampled{level_shape(0)};
    auto in = [&](int x, int y, int c) { return rgba_(std::clamp(x, 0, W - 1), std::clamp(y, 0, H - 1), c); };
    downsampled[0].fill([&](int x, int y, int c) { return c < 3 ? in(x, y, c) * in(x, y, 3) : in(x, y, 3); });
    for (int l = 1; l < kLevels; ++l) {
        const Level &prev = downsampled[l - 1];
        Level shape = level_shape(l);
        Level down_x(shape.x0, prev.y0, shape.w, prev.h, 4);
        down_x.fill([&](int x, int y, int c) {
            return (prev(2 * x - 1, y, c) + 2.0f * prev(2 * x, y, c) + prev(2 * x + 1, y, c)) * 0.25f;
        });
        shape.fill([&](int x, int y, int c) {
            return (down_x(x, 2 * y - 1, c) + 2.0f * down_x(x, 2 * y, c) + down_x(x, 2 * y + 1, c)) * 0.25f;
        });
        downsampled.push_back(std::move(shape));
    }
    Level interpolated = downsampled[kLevels - 1];
    for (int l = kLevels - 2; l >= 0; --l) {
        const Level &coarse = interpolated, &down = downsampled[l];
        Level up_x(down.x0, coarse.y0, down.w, coarse.h, 4), next = down;
        up_x.fill([&](int x, int y, int c) {
            return (coarse(floor_div(x, 2), y, c) + coarse(floor_div(x + 1, 2), y, c)) / 2.0f;
        });
        next.fill([&](int x, int y, int c) {
            float up = (up_x(x, floor_div(y, 2), c) + up_x(x, floor_div(y + 1, 2), c)) / 2.0f;
            return down(x, y, c) + (1.0f - down(x, y, 3)) * up;
        });
        interpolated = std::move(next);
        downsampled.pop_back();  // (level l + 1 is no longer read)
    }
    for (int c = 0; c < 3; ++c)
        TESSERA_REFERENCE_PARALLEL_FOR
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) out(x, y, c) = interpolated(x, y, c) / interpolated(x, y, 3);
}

} // namespace

std::unique_ptr<App> make_interpolate() { return std::make_unique<Interpolate>(); }

} // namespace tessera::apps
