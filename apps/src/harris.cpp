// Harris corner detection on a grayscale image, as in PolyMage's benchmark: 11 stages
// (Ix, Iy, Ixx, Ixy, Iyy, Sxx, Sxy, Syy, det, trace, harris), valid region.
#include "tessera_apps/app.h"

namespace tessera::apps {
namespace {

class Harris : public App {
public:
    Harris() : App("harris") {
        Var x("x"), y("y");
        const InputBuffer<float> &in = input_;
        Func Ix("Ix"), Iy("Iy"), Ixx("Ixx"), Ixy("Ixy"), Iyy("Iyy"), Sxx("Sxx"), Sxy("Sxy"), Syy("Syy");
        Func det("det"), trace("trace"), harris("harris");
        Iy(x, y) = in(x - 1, y - 1) * (-1.f / 12) + in(x - 1, y + 1) * (1.f / 12) + in(x, y - 1) * (-2.f / 12) +
                   in(x, y + 1) * (2.f / 12) + in(x + 1, y - 1) * (-1.f / 12) + in(x + 1, y + 1) * (1.f / 12);
        Ix(x, y) = in(x - 1, y - 1) * (-1.f / 12) + in(x + 1, y - 1) * (1.f / 12) + in(x - 1, y) * (-2.f / 12) +
                   in(x + 1, y) * (2.f / 12) + in(x - 1, y + 1) * (-1.f / 12) + in(x + 1, y + 1) * (1.f / 12);
        Ixx(x, y) = Ix(x, y) * Ix(x, y);
        Iyy(x, y) = Iy(x, y) * Iy(x, y);
        Ixy(x, y) = Ix(x, y) * Iy(x, y);
        auto box = [&](const Func &f) {
            return f(x - 1, y - 1) + f(x - 1, y) + f(x - 1, y + 1) + f(x, y - 1) + f(x, y) + f(x, y + 1) +
                   f(x + 1, y - 1) + f(x + 1, y) + f(x + 1, y + 1);
        };
        Sxx(x, y) = box(Ixx);
        Syy(x, y) = box(Iyy);
        Sxy(x, y) = box(Ixy);
        det(x, y) = Sxx(x, y) * Syy(x, y) - Sxy(x, y) * Sxy(x, y);
        trace(x, y) = Sxx(x, y) + Syy(x, y);
        // The output starts at the first point whose 5x5 neighbourhood lies inside the input.
        harris(x, y) = det(x + 2, y + 2) - 0.04f * trace(x + 2, y + 2) * trace(x + 2, y + 2);
        pipeline_ = Pipeline(harris);
    }

    std::vector<std::string> size_names() const override { return {"width", "height"}; }
    std::vector<int> default_sizes() const override { return {1024, 1024}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        in_ = Buffer<float>(sizes.at(0), sizes.at(1));
        fill_random(in_, rng, 0.0, 1.0);
        input_.set(in_);
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<float>(in_.width() - 4, in_.height() - 4)}; }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        Buffer<float> out = outputs.at(0);
        int W = in_.width(), H = in_.height();
        auto idx = [W](int x, int y) { return size_t(y) * size_t(W) + size_t(x); };
        std::vector<float> ix(size_t(W) * H), iy(size_t(W) * H), ixx(size_t(W) * H), iyy(size_t(W) * H), ixy(size_t(W) * H);
        const Buffer<float> &in = in_;
        TESSERA_REFERENCE_PARALLEL_FOR
        for (int y = 1; y < H - 1; ++y)
            for (int x = 1; x < W - 1; ++x) {
                float vy = in(x - 1, y - 1) * (-1.f / 12) + in(x - 1, y + 1) * (1.f / 12) + in(x, y - 1) * (-2.f / 12) +
                           in(x, y + 1) * (2.f / 12) + in(x + 1, y - 1) * (-1.f / 12) + in(x + 1, y + 1) * (1.f / 12);
                float vx = in(x - 1, y - 1) * (-1.f / 12) + in(x + 1, y - 1) * (1.f / 12) + in(x - 1, y) * (-2.f / 12) +
                           in(x + 1, y) * (2.f / 12) + in(x - 1, y + 1) * (-1.f / 12) + in(x + 1, y + 1) * (1.f / 12);
                ix[idx(x, y)] = vx;
                iy[idx(x, y)] = vy;
                ixx[idx(x, y)] = vx * vx;
                iyy[idx(x, y)] = vy * vy;
                ixy[idx(x, y)] = vx * vy;
            }
        auto box = [&](const std::vector<float> &f, int x, int y) {
            return f[idx(x - 1, y - 1)] + f[idx(x - 1, y)] + f[idx(x - 1, y + 1)] + f[idx(x, y - 1)] + f[idx(x, y)] +
                   f[idx(x, y + 1)] + f[idx(x + 1, y - 1)] + f[idx(x + 1, y)] + f[idx(x + 1, y + 1)];
        };
        TESSERA_REFERENCE_PARALLEL_FOR
        for (int y = 0; y < H - 4; ++y)
            for (int x = 0; x < W - 4; ++x) {
                float sxx = box(ixx, x + 2, y + 2), syy = box(iyy, x + 2, y + 2), sxy = box(ixy, x + 2, y + 2);
                float det = sxx * syy - sxy * sxy;
                float trace = sxx + syy;
                out(x, y) = det - 0.04f * trace * trace;
            }
    }

    double minimum_bytes() const override {
        return 4.0 * (double(in_.width()) * in_.height() + double(in_.width() - 4) * (in_.height() - 4));
    }

private:
    InputBuffer<float> input_{"input", 2};
    Buffer<float> in_;
};

} // namespace

std::unique_ptr<App> make_harris() { return std::make_unique<Harris>(); }

} // namespace tessera::apps
