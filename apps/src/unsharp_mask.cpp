// Unsharp mask, as in PolyMage's benchmark: a separable 5-tap blur, a sharpened image, and a
// threshold mask choosing between the input and the sharpened value (4 stages), valid region.
#include <cmath>

#include "tessera_apps/app.h"

namespace tessera::apps {
namespace {

class UnsharpMask : public App {
public:
    UnsharpMask() : App("unsharp_mask") {
        Var x("x"), y("y"), c("c");
        const InputBuffer<float> &in = input_;
        Func blurx("blurx"), blury("blury"), sharpen("sharpen"), masked("masked");
        blurx(x, y, c) = (in(x - 2, y, c) + 4.f * in(x - 1, y, c) + 6.f * in(x, y, c) + 4.f * in(x + 1, y, c) +
                          in(x + 2, y, c)) * 0.0625f;
        blury(x, y, c) = (blurx(x, y - 2, c) + 4.f * blurx(x, y - 1, c) + 6.f * blurx(x, y, c) +
                          4.f * blurx(x, y + 1, c) + blurx(x, y + 2, c)) * 0.0625f;
        sharpen(x, y, c) = in(x, y, c) * (1.f + weight_) - blury(x, y, c) * weight_;
        masked(x, y, c) = select(abs(in(x + 2, y + 2, c) - blury(x + 2, y + 2, c)) < threshold_, in(x + 2, y + 2, c),
                                 sharpen(x + 2, y + 2, c));
        pipeline_ = Pipeline(masked);
    }

    std::vector<std::string> size_names() const override { return {"width", "height"}; }
    std::vector<int> default_sizes() const override { return {1024, 1024}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        in_ = Buffer<float>(sizes.at(0), sizes.at(1), 3);
        fill_random(in_, rng, 0.0, 1.0);
        input_.set(in_);
        weight_.set(3.0f);
        threshold_.set(0.02f);
    }

    std::vector<Buffer<void>> make_outputs() const override {
        return {Buffer<float>(in_.width() - 4, in_.height() - 4, 3)};
    }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        Buffer<float> out = outputs.at(0);
        int W = in_.width(), H = in_.height();
        float weight = weight_.get(), threshold = threshold_.get();
        const Buffer<float> &in = in_;
        std::vector<float> bx(size_t(W) * H), by(size_t(W) * H);
        auto idx = [W](int x, int y) { return size_t(y) * size_t(W) + size_t(x); };
        for (int c = 0; c < 3; ++c) {
            TESSERA_REFERENCE_PARALLEL_FOR
            for (int y = 0; y < H; ++y)
                for (int x = 2; x < W - 2; ++x)
                    bx[idx(x, y)] = (in(x - 2, y, c) + 4.f * in(x - 1, y, c) + 6.f * in(x, y, c) + 4.f * in(x + 1, y, c) +
                                     in(x + 2, y, c)) * 0.0625f;
            TESSERA_REFERENCE_PARALLEL_FOR
            for (int y = 2; y < H - 2; ++y)
                for (int x = 2; x < W - 2; ++x)
                    by[idx(x, y)] = (bx[idx(x, y - 2)] + 4.f * bx[idx(x, y - 1)] + 6.f * bx[idx(x, y)] +
                                     4.f * bx[idx(x, y + 1)] + bx[idx(x, y + 2)]) * 0.0625f;
            TESSERA_REFERENCE_PARALLEL_FOR
            for (int y = 0; y < H - 4; ++y)
                for (int x = 0; x < W - 4; ++x) {
                    float v = in(x + 2, y + 2, c), b = by[idx(x + 2, y + 2)];
                    float sharp = v * (1.f + weight) - b * weight;
                    out(x, y, c) = std::fabs(v - b) < threshold ? v : sharp;
                }
        }
    }

    double minimum_bytes() const override {
        return 4.0 * 3 * (double(in_.width()) * in_.height() + double(in_.width() - 4) * (in_.height() - 4));
    }

private:
    InputBuffer<float> input_{"input", 3};
    Param<float> weight_{"weight"}, threshold_{"threshold"};
    Buffer<float> in_;
};

} // namespace

std::unique_ptr<App> make_unsharp_mask() { return std::make_unique<UnsharpMask>(); }

} // namespace tessera::apps
