// blur_x_blur_y: two 5-tap [1 4 6 4 1]/16 convolutions, in x then in y, over 3 channels, on
// the valid region (the pipeline of the PolyBlocks documentation).
#include "tessera_apps/app.h"

namespace tessera::apps {
namespace {

class BlurXBlurY : public App {
public:
    BlurXBlurY() : App("blur_x_blur_y") {
        Var x("x"), y("y"), c("c");
        Func blur_x("blur_x"), blur_y("blur_y");
        blur_x(x, y, c) = (input_(x, y, c) + 4.f * input_(x + 1, y, c) + 6.f * input_(x + 2, y, c) +
                           4.f * input_(x + 3, y, c) + input_(x + 4, y, c)) / 16.f;
        blur_y(x, y, c) = (blur_x(x, y, c) + 4.f * blur_x(x, y + 1, c) + 6.f * blur_x(x, y + 2, c) +
                           4.f * blur_x(x, y + 3, c) + blur_x(x, y + 4, c)) / 16.f;
        pipeline_ = Pipeline(blur_y);
    }

    std::vector<std::string> size_names() const override { return {"width", "height"}; }
    std::vector<int> default_sizes() const override { return {4096, 4096}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        in_ = Buffer<float>(sizes.at(0), sizes.at(1), 3);
        fill_random(in_, rng, 0.0, 1.0);
        input_.set(in_);
    }

    std::vector<Buffer<void>> make_outputs() const override {
        return {Buffer<float>(in_.width() - 4, in_.height() - 4, 3)};
    }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        Buffer<float> out = outputs.at(0);
        int w = out.width(), h = out.height();
        std::vector<float> bx(size_t(w) * size_t(h + 4));
        for (int c = 0; c < 3; ++c) {
            TESSERA_REFERENCE_PARALLEL_FOR
            for (int y = 0; y < h + 4; ++y)
                for (int x = 0; x < w; ++x)
                    bx[size_t(y) * size_t(w) + size_t(x)] =
                        (in_(x, y, c) + 4.f * in_(x + 1, y, c) + 6.f * in_(x + 2, y, c) + 4.f * in_(x + 3, y, c) +
                         in_(x + 4, y, c)) / 16.f;
            auto b = [&](int x, int y) { return bx[size_t(y) * size_t(w) + size_t(x)]; };
            TESSERA_REFERENCE_PARALLEL_FOR
            for (int y = 0; y < h; ++y)
                for (int x = 0; x < w; ++x)
                    out(x, y, c) = (b(x, y) + 4.f * b(x, y + 1) + 6.f * b(x, y + 2) + 4.f * b(x, y + 3) + b(x, y + 4)) / 16.f;
        }
    }

    double minimum_bytes() const override {
        return 4.0 * 3 * (double(in_.width()) * in_.height() + double(in_.width() - 4) * (in_.height() - 4));
    }

private:
    InputBuffer<float> input_{"input", 3};
    Buffer<float> in_;
};

} // namespace

std::unique_ptr<App> make_blur_x_blur_y() { return std::make_unique<BlurXBlurY>(); }

} // namespace tessera::apps
