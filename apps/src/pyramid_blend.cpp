// Pyramid blending (Burt and Adelson; PolyMage's benchmark): two colour images are blended by a
// mask at every scale of their Laplacian pyramids. Gaussian pyramids of both images and of the
// mask ([1 4 6 4 1] / 16 downsampling in x, then y), Laplacian levels (a Gaussian level minus
// its upsampled coarser level), the blend of each level by the mask's level, and the collapse of
// the blended pyramid from the coarsest level up: 4 levels, 49 stages, float RGB out.
//
// The inputs are extended by repeating their edges, as a Halide user would write it; every
// pyramid level is a Func defined everywhere, computed over the region its consumers read.
#include <cmath>

#include "pyramid_reference.h"
#include "tessera_apps/app.h"

namespace tessera::apps {
namespace {

constexpr int kLevels = 4;

std::vector<Expr> as_exprs(const std::vector<Var> &vars) { return at(vars, vars[0], vars[1]); }

// The next coarser level of f: the [1 4 6 4 1] / 16 filter in x at every other column, then in y.
Func downsample(const Func &f, const std::string &name) {
    std::vector<Var> v = level_vars(f.dimensions(), "c");
    Expr x = v[0], y = v[1];
    Func dx(name + "_down_x"), dy(name);
    dx(as_exprs(v)) = (f(at(v, 2 * x - 2, y)) + f(at(v, 2 * x - 1, y)) * 4.f + f(at(v, 2 * x, y)) * 6.f +
                       f(at(v, 2 * x + 1, y)) * 4.f + f(at(v, 2 * x + 2, y))) * 0.0625f;
    dy(as_exprs(v)) = (dx(at(v, x, 2 * y - 2)) + dx(at(v, x, 2 * y - 1)) * 4.f + dx(at(v, x, 2 * y)) * 6.f +
                       dx(at(v, x, 2 * y + 1)) * 4.f + dx(at(v, x, 2 * y + 2))) * 0.0625f;
    return dy;
}

// The next finer level of f: even pixels [1 6 1] / 8 around the coarse pixel, odd ones [4 4] / 8
// of the two coarse pixels they lie between; in x, then y.
Func upsample(const Func &f, const std::string &name) {
    std::vector<Var> v = level_vars(f.dimensions(), "c");
    Expr x = v[0], y = v[1];
    Func ux(name + "_up_x"), uy(name);
    ux(as_exprs(v)) = select(x % 2 == 0,
                             (f(at(v, x / 2 - 1, y)) + f(at(v, x / 2, y)) * 6.f + f(at(v, x / 2 + 1, y))) * 0.125f,
                             (f(at(v, x / 2, y)) * 4.f + f(at(v, x / 2 + 1, y)) * 4.f) * 0.125f);
    uy(as_exprs(v)) = select(y % 2 == 0,
                             (ux(at(v, x, y / 2 - 1)) + ux(at(v, x, y / 2)) * 6.f + ux(at(v, x, y / 2 + 1))) * 0.125f,
                             (ux(at(v, x, y / 2)) * 4.f + ux(at(v, x, y / 2 + 1)) * 4.f) * 0.125f);
    return uy;
}

class PyramidBlend : public App {
public:
    PyramidBlend() : App("pyramid_blend") {
        Var x("x"), y("y"), c("c");
        std::vector<Func> gauss_a{BoundaryConditions::repeat_edge(image_a_)};
        std::vector<Func> gauss_b{BoundaryConditions::repeat_edge(image_b_)};
        std::vector<Func> gauss_mask{BoundaryConditions::repeat_edge(mask_)};
        for (int l = 1; l < kLevels; ++l) {
            std::string level = std::to_string(l);
            gauss_a.push_back(downsample(gauss_a[l - 1], "gauss_a_" + level));
            gauss_b.push_back(downsample(gauss_b[l - 1], "gauss_b_" + level));
            gauss_mask.push_back(downsample(gauss_mask[l - 1], "gauss_mask_" + level));
        }
        std::vector<Func> blended(kLevels);
        for (int l = 0; l < kLevels; ++l) {
            std::string level = std::to_string(l);
            Func laplace_a = gauss_a[l], laplace_b = gauss_b[l];
            if (l < kLevels - 1) {
                Func up_a = upsample(gauss_a[l + 1], "gauss_a_up_" + level);
                Func up_b = upsample(gauss_b[l + 1], "gauss_b_up_" + level);
                laplace_a = Func("laplace_a_" + level);
                laplace_a(x, y, c) = gauss_a[l](x, y, c) - up_a(x, y, c);
                laplace_b = Func("laplace_b_" + level);
                laplace_b(x, y, c) = gauss_b[l](x, y, c) - up_b(x, y, c);
            }
            blended[l] = Func("blended_" + level);
            blended[l](x, y, c) = laplace_a(x, y, c) * gauss_mask[l](x, y) + laplace_b(x, y, c) * (1.f - gauss_mask[l](x, y));
        }
        Func collapsed = blended[kLevels - 1];
        for (int l = kLevels - 2; l >= 0; --l) {
            Func up = upsample(collapsed, "collapsed_up_" + std::to_string(l));
            collapsed = Func(l == 0 ? "pyramid_blend" : "collapsed_" + std::to_string(l));
            collapsed(x, y, c) = up(x, y, c) + blended[l](x, y, c);
        }
        pipeline_ = Pipeline(collapsed);
    }

    std::vector<std::string> size_names() const override { return {"width", "height"}; }
    std::vector<int> default_sizes() const override { return {2048, 2048}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        int W = sizes.at(0), H = sizes.at(1);
        a_ = Buffer<float>(W, H, 3);
        b_ = Buffer<float>(W, H, 3);
        m_ = Buffer<float>(W, H);
        fill_random(a_, rng, 0.0, 1.0);
        fill_random(b_, rng, 0.0, 1.0);
        fill_random(m_, rng, 0.0, 1.0);
        bind();
    }

    // The photograph blended with its mirror image: the left half from one, the right from the other.
    bool prepare_photo(const Buffer<float> &rgb, uint32_t) override {
        const int W = rgb.width(), H = rgb.height();
        a_ = Buffer<float>(W, H, 3);
        b_ = Buffer<float>(W, H, 3);
        m_ = Buffer<float>(W, H);
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) {
                for (int c = 0; c < 3; ++c) {
                    a_(x, y, c) = rgb(x, y, c);
                    b_(x, y, c) = rgb(W - 1 - x, y, c);
                }
                m_(x, y) = x < W / 2 ? 1.0f : 0.0f;
            }
        bind();
        return true;
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<float>(a_.width(), a_.height(), 3)}; }

    void reference(const std::vector<Buffer<void>> &outputs) const override;

    double minimum_bytes() const override { return 4.0 * double(a_.width()) * a_.height() * (3 + 3 + 1 + 3); }

private:
    void bind() {
        image_a_.set(a_);
        image_b_.set(b_);
        mask_.set(m_);
    }

    InputBuffer<float> image_a_{"image_a", 3}, image_b_{"image_b", 3}, mask_{"mask", 2};
    Buffer<float> a_, b_, m_;
};

using Level = Image<float>;

// Margins larger than any region read below level l (reads grow by 2 pixels a level and double).
int margin(int l) { return 4 * (1 << (kLevels - l)) + 8; }

Level downsample_reference(const Level &f, const Level &like) {
    Level dx(like.x0, f.y0, like.w, f.h, f.channels), dy(like.x0, like.y0, like.w, like.h, f.channels);
    dx.fill([&](int x, int y, int c) {
        return (f(2 * x - 2, y, c) + f(2 * x - 1, y, c) * 4.f + f(2 * x, y, c) * 6.f + f(2 * x + 1, y, c) * 4.f +
                f(2 * x + 2, y, c)) * 0.0625f;
    });
    dy.fill([&](int x, int y, int c) {
        return (dx(x, 2 * y - 2, c) + dx(x, 2 * y - 1, c) * 4.f + dx(x, 2 * y, c) * 6.f + dx(x, 2 * y + 1, c) * 4.f +
                dx(x, 2 * y + 2, c)) * 0.0625f;
    });
    return dy;
}

Level upsample_reference(const Level &f, const Level &like) {
    Level ux(like.x0, f.y0, like.w, f.h, f.channels), uy(like.x0, like.y0, like.w, like.h, f.channels);
    ux.fill([&](int x, int y, int c) {
        int i = floor_div(x, 2);
        return floor_mod(x, 2) == 0 ? (f(i - 1, y, c) + f(i, y, c) * 6.f + f(i + 1, y, c)) * 0.125f
                                    : (f(i, y, c) * 4.f + f(i + 1, y, c) * 4.f) * 0.125f;
    });
    uy.fill([&](int x, int y, int c) {
        int i = floor_div(y, 2);
        return floor_mod(y, 2) == 0 ? (ux(x, i - 1, c) + ux(x, i, c) * 6.f + ux(x, i + 1, c)) * 0.125f
                                    : (ux(x, i, c) * 4.f + ux(x, i + 1, c) * 4.f) * 0.125f;
    });
    return uy;
}

void PyramidBlend::reference(const std::vector<Buffer<void>> &outputs) const {
    Buffer<float> out = outputs.at(0);
    const int W = a_.width(), H = a_.height();
    auto level_shape = [&](int l, int channels) {
        return Level::with_margin(level_extent(W, l), level_extent(H, l), margin(l), channels);
    };
    auto clamped = [&](const Buffer<float> &b, int channels) {
        Level f = level_shape(0, channels);
        f.fill([&](int x, int y, int c) {
            int cx = std::clamp(x, 0, W - 1), cy = std::clamp(y, 0, H - 1);
            return channels == 3 ? b(cx, cy, c) : b(cx, cy);
        });
        return f;
    };
    std::vector<Level> ga{clamped(a_, 3)}, gb{clamped(b_, 3)}, gm{clamped(m_, 1)};
    for (int l = 1; l < kLevels; ++l) {
        ga.push_back(downsample_reference(ga[l - 1], level_shape(l, 3)));
        gb.push_back(downsample_reference(gb[l - 1], level_shape(l, 3)));
        gm.push_back(downsample_reference(gm[l - 1], level_shape(l, 1)));
    }
    std::vector<Level> blended;
    for (int l = 0; l < kLevels; ++l) {
        Level la = ga[l], lb = gb[l];
        if (l < kLevels - 1) {
            Level ua = upsample_reference(ga[l + 1], la), ub = upsample_reference(gb[l + 1], lb);
            la.fill([&](int x, int y, int c) { return ga[l](x, y, c) - ua(x, y, c); });
            lb.fill([&](int x, int y, int c) { return gb[l](x, y, c) - ub(x, y, c); });
        }
        Level bl = la;
        bl.fill([&](int x, int y, int c) { return la(x, y, c) * gm[l](x, y) + lb(x, y, c) * (1.f - gm[l](x, y)); });
        blended.push_back(std::move(bl));
    }
    Level collapsed = blended[kLevels - 1];
    for (int l = kLevels - 2; l >= 0; --l) {
        Level up = upsample_reference(collapsed, blended[l]);
        Level next = blended[l];
        next.fill([&](int x, int y, int c) { return up(x, y, c) + blended[l](x, y, c); });
        collapsed = std::move(next);
    }
    for (int c = 0; c < 3; ++c)
        TESSERA_REFERENCE_PARALLEL_FOR
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) out(x, y, c) = collapsed(x, y, c);
}

} // namespace

std::unique_ptr<App> make_pyramid_blend() { return std::make_unique<PyramidBlend>(); }

} // namespace tessera::apps
