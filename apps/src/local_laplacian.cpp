// Local Laplacian filters (Paris, Hasinoff and Kautz; Aubry et al.'s fast version, as Halide's
// and PolyMage's benchmark): edge-aware detail enhancement and tone mapping of a 16-bit RGB
// image. The grey image is remapped at 8 intensity levels through a lookup table (a detail
// curve with exp), each remapped image gets a Gaussian and a Laplacian pyramid of 8 levels; the
// output Laplacian pyramid takes, at every pixel of every level, the two remapped levels around
// the input's own intensity there and interpolates between them (a data-dependent index), and
// the collapsed output pyramid rescales the input colours: about 90 stages, uint16 RGB out.
//
// The input is extended by repeating its edges, as in Halide's app. The float arithmetic runs
// in the same order as the plain loops, so the uint16 output matches them exactly.
#include <cmath>

#include "pyramid_reference.h"
#include "tessera_apps/app.h"

namespace tessera::apps {
namespace {

constexpr int kPyramidLevels = 8;    // J: levels of every pyramid
constexpr int kIntensityLevels = 8;  // the intensities the image is remapped at
constexpr float kAlpha = 1.0f;       // detail enhancement (Halide's app default)
constexpr float kBeta = 1.0f;        // tone mapping (1: none)

// The next coarser level: [1 3 3 1] / 8 in x at every other column, then in y.
Func downsample(const Func &f, const std::string &name) {
    std::vector<Var> v = level_vars(f.dimensions(), "k");
    Expr x = v[0], y = v[1];
    Func dx(name + "_down_x"), dy(name);
    dx(at(v, x, y)) =
        (f(at(v, 2 * x - 1, y)) + 3.0f * (f(at(v, 2 * x, y)) + f(at(v, 2 * x + 1, y))) + f(at(v, 2 * x + 2, y))) / 8.0f;
    dy(at(v, x, y)) =
        (dx(at(v, x, 2 * y - 1)) + 3.0f * (dx(at(v, x, 2 * y)) + dx(at(v, x, 2 * y + 1))) + dx(at(v, x, 2 * y + 2))) / 8.0f;
    return dy;
}

// The next finer level: each pixel 3/4 of its nearer and 1/4 of its farther coarse neighbour.
Func upsample(const Func &f, const std::string &name) {
    std::vector<Var> v = level_vars(f.dimensions(), "k");
    Expr x = v[0], y = v[1];
    Func ux(name + "_up_x"), uy(name);
    ux(at(v, x, y)) = lerp(f(at(v, (x + 1) / 2, y)), f(at(v, (x - 1) / 2, y)), cast<float>((x % 2) * 2 + 1) / 4.0f);
    uy(at(v, x, y)) = lerp(ux(at(v, x, (y + 1) / 2)), ux(at(v, x, (y - 1) / 2)), cast<float>((y % 2) * 2 + 1) / 4.0f);
    return uy;
}

class LocalLaplacian : public App {
public:
    LocalLaplacian() : App("local_laplacian") {
        Var x("x"), y("y"), c("c"), k("k");
        constexpr int J = kPyramidLevels, L = kIntensityLevels;
        Func clamped = BoundaryConditions::repeat_edge(input_);
        Func floating("floating");
        floating(x, y, c) = cast<float>(clamped(x, y, c)) / 65535.0f;
        Func gray("gray");
        gray(x, y) = 0.299f * floating(x, y, 0) + 0.587f * floating(x, y, 1) + 0.114f * floating(x, y, 2);

        // The detail curve, sampled 256 times per intensity level.
        Func remap("remap");
        Expr fx = cast<float>(x) / 256.0f;
        remap(x) = kAlpha * fx * exp(-fx * fx / 2.0f);

        // The grey image remapped around each intensity level k, and its pyramids.
        std::vector<Func> gauss(J), laplace(J), in_gauss(J), out_laplace(J), out_gauss(J);
        {
            Expr level = cast<float>(k) * (1.0f / (L - 1));
            Expr idx = clamp(cast<int>(gray(x, y) * float(L - 1) * 256.0f), 0, (L - 1) * 256);
            gauss[0] = Func("remapped");
            gauss[0](x, y, k) = kBeta * (gray(x, y) - level) + level + remap(idx - 256 * k);
        }
        for (int j = 1; j < J; ++j) gauss[j] = downsample(gauss[j - 1], "gauss_" + std::to_string(j));
        laplace[J - 1] = gauss[J - 1];
        for (int j = J - 2; j >= 0; --j) {
            Func up = upsample(gauss[j + 1], "gauss_up_" + std::to_string(j));
            laplace[j] = Func("laplace_" + std::to_string(j));
            laplace[j](x, y, k) = gauss[j](x, y, k) - up(x, y, k);
        }
        in_gauss[0] = gray;
        for (int j = 1; j < J; ++j) in_gauss[j] = downsample(in_gauss[j - 1], "in_gauss_" + std::to_string(j));

        // The output's Laplacian levels: the two remapped levels around the input's intensity.
        for (int j = 0; j < J; ++j) {
            Expr level = in_gauss[j](x, y) * float(L - 1);
            Expr li = clamp(cast<int>(level), 0, L - 2);
            Expr lf = level - cast<float>(li);
            out_laplace[j] = Func("out_laplace_" + std::to_string(j));
            out_laplace[j](x, y) = (1.0f - lf) * laplace[j](x, y, li) + lf * laplace[j](x, y, li + 1);
        }
        out_gauss[J - 1] = out_laplace[J - 1];
        for (int j = J - 2; j >= 0; --j) {
            Func up = upsample(out_gauss[j + 1], "out_gauss_up_" + std::to_string(j));
            out_gauss[j] = Func("out_gauss_" + std::to_string(j));
            out_gauss[j](x, y) = up(x, y) + out_laplace[j](x, y);
        }

        // The input's colours scaled by the output's change of grey, back to 16 bits.
        Func color("color");
        color(x, y, c) = out_gauss[0](x, y) * (floating(x, y, c) + 0.01f) / (gray(x, y) + 0.01f);
        Func output("local_laplacian");
        output(x, y, c) = cast<uint16_t>(clamp(color(x, y, c), 0.0f, 1.0f) * 65535.0f);
        pipeline_ = Pipeline(output);
    }

    std::vector<std::string> size_names() const override { return {"width", "height"}; }
    std::vector<int> default_sizes() const override { return {2560, 1536}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        rgb_ = Buffer<uint16_t>(sizes.at(0), sizes.at(1), 3);
        fill_random(rgb_, rng, 0, 65535);
        input_.set(rgb_);
    }

    // The photograph in 16 bits.
    bool prepare_photo(const Buffer<float> &rgb, uint32_t) override {
        rgb_ = Buffer<uint16_t>(rgb.width(), rgb.height(), 3);
        for (int c = 0; c < 3; ++c)
            for (int y = 0; y < rgb.height(); ++y)
                for (int x = 0; x < rgb.width(); ++x)
                    rgb_(x, y, c) = uint16_t(std::clamp(rgb(x, y, c), 0.0f, 1.0f) * 65535.0f + 0.5f);
        input_.set(rgb_);
        return true;
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<uint16_t>(rgb_.width(), rgb_.height(), 3)}; }

    void reference(const std::vector<Buffer<void>> &outputs) const override;

    double minimum_bytes() const override { return 2.0 * 3 * 2 * double(rgb_.width()) * rgb_.height(); }

private:
    InputBuffer<uint16_t> input_{"input", 3};
    Buffer<uint16_t> rgb_;
};

using Level = Image<float>;

// More than the margin level j is read over: a coarser level's reads reach 2 m + 2 pixels out.
int margin(int j) { return 4 * (1 << (kPyramidLevels - 1 - j)) + 4; }

Level downsample_reference(const Level &f, const Level &like) {
    Level dx(like.x0, f.y0, like.w, f.h, f.channels), dy = like;
    dx.fill([&](int x, int y, int k) {
        return (f(2 * x - 1, y, k) + 3.0f * (f(2 * x, y, k) + f(2 * x + 1, y, k)) + f(2 * x + 2, y, k)) / 8.0f;
    });
    dy.fill([&](int x, int y, int k) {
        return (dx(x, 2 * y - 1, k) + 3.0f * (dx(x, 2 * y, k) + dx(x, 2 * y + 1, k)) + dx(x, 2 * y + 2, k)) / 8.0f;
    });
    return dy;
}

float lerp(float a, float b, float w) { return a * (1.0f - w) + b * w; }

Level upsample_reference(const Level &f, const Level &like) {
    Level ux(like.x0, f.y0, like.w, f.h, f.channels), uy = like;
    ux.fill([&](int x, int y, int k) {
        return lerp(f(floor_div(x + 1, 2), y, k), f(floor_div(x - 1, 2), y, k), float(floor_mod(x, 2) * 2 + 1) / 4.0f);
    });
    uy.fill([&](int x, int y, int k) {
        return lerp(ux(x, floor_div(y + 1, 2), k), ux(x, floor_div(y - 1, 2), k), float(floor_mod(y, 2) * 2 + 1) / 4.0f);
    });
    return uy;
}

void LocalLaplacian::reference(const std::vector<Buffer<void>> &outputs) const {
    Buffer<uint16_t> out = outputs.at(0);
    constexpr int J = kPyramidLevels, L = kIntensityLevels;
    const int W = rgb_.width(), H = rgb_.height();
    auto level_shape = [&](int j, int channels) {
        return Level::with_margin(level_extent(W, j), level_extent(H, j), margin(j), channels);
    };
    Level floating = level_shape(0, 3), gray = level_shape(0, 1);
    floating.fill([&](int x, int y, int c) {
        return float(rgb_(std::clamp(x, 0, W - 1), std::clamp(y, 0, H - 1), c)) / 65535.0f;
    });
    gray.fill([&](int x, int y, int) {
        return 0.299f * floating(x, y, 0) + 0.587f * floating(x, y, 1) + 0.114f * floating(x, y, 2);
    });
    auto remap = [](int i) {
        float fx = float(i) / 256.0f;
        return kAlpha * fx * std::exp(-fx * fx / 2.0f);
    };
    std::vector<Level> gauss{level_shape(0, L)}, in_gauss{gray};
    gauss[0].fill([&](int x, int y, int k) {
        float level = float(k) * (1.0f / (L - 1));
        // (float to int truncates toward zero and saturates, as the DSL's cast does)
        float scaled = gray(x, y) * float(L - 1) * 256.0f;
        int idx = std::clamp(int(std::clamp(scaled, -2147483648.0f, 2147483520.0f)), 0, (L - 1) * 256);
        return kBeta * (gray(x, y) - level) + level + remap(idx - 256 * k);
    });
    for (int j = 1; j < J; ++j) {
        gauss.push_back(downsample_reference(gauss[j - 1], level_shape(j, L)));
        in_gauss.push_back(downsample_reference(in_gauss[j - 1], level_shape(j, 1)));
    }
    std::vector<Level> out_laplace;
    for (int j = 0; j < J; ++j) {
        Level laplace = gauss[j];
        if (j < J - 1) {
            Level up = upsample_reference(gauss[j + 1], gauss[j]);
            laplace.fill([&](int x, int y, int k) { return gauss[j](x, y, k) - up(x, y, k); });
        }
        Level o = level_shape(j, 1);
        o.fill([&](int x, int y, int) {
            float level = in_gauss[j](x, y) * float(L - 1);
            int li = std::clamp(int(std::clamp(level, -2147483648.0f, 2147483520.0f)), 0, L - 2);
            float lf = level - float(li);
            return (1.0f - lf) * laplace(x, y, li) + lf * laplace(x, y, li + 1);
        });
        out_laplace.push_back(std::move(o));
    }
    Level out_gauss = out_laplace[J - 1];
    for (int j = J - 2; j >= 0; --j) {
        Level up = upsample_reference(out_gauss, out_laplace[j]), next = out_laplace[j];
        next.fill([&](int x, int y, int) { return up(x, y) + out_laplace[j](x, y); });
        out_gauss = std::move(next);
    }
    for (int c = 0; c < 3; ++c)
        TESSERA_REFERENCE_PARALLEL_FOR
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) {
                float color = out_gauss(x, y) * (floating(x, y, c) + 0.01f) / (gray(x, y) + 0.01f);
                out(x, y, c) = uint16_t(std::clamp(color, 0.0f, 1.0f) * 65535.0f);
            }
}

} // namespace

std::unique_ptr<App> make_local_laplacian() { return std::make_unique<LocalLaplacian>(); }

} // namespace tessera::apps
