// A 256-bin histogram of an 8-bit image: an update definition over an RDom with a
// data-dependent index.
#include "tessera_apps/app.h"

namespace tessera::apps {
namespace {

class Histogram : public App {
public:
    Histogram() : App("histogram") {
        Var i("i");
        Func hist("hist");
        RDom r(0, input_.width(), 0, input_.height(), "r");
        hist(i) = 0;
        hist(cast<int>(input_(r.x, r.y))) += 1;
        pipeline_ = Pipeline(hist);
    }

    std::vector<std::string> size_names() const override { return {"width", "height"}; }
    std::vector<int> default_sizes() const override { return {1024, 1024}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        in_ = Buffer<uint8_t>(sizes.at(0), sizes.at(1));
        fill_random(in_, rng, 0, 255);
        input_.set(in_);
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<int32_t>(256)}; }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        Buffer<int32_t> out = outputs.at(0);
        for (int i = 0; i < 256; ++i) out(i) = 0;
        for (int y = 0; y < in_.height(); ++y)
            for (int x = 0; x < in_.width(); ++x) out(int(in_(x, y))) += 1;
    }

    double minimum_bytes() const override { return double(in_.width()) * in_.height() + 256.0 * 4; }

private:
    InputBuffer<uint8_t> input_{"image", 2};
    Buffer<uint8_t> in_;
};

} // namespace

std::unique_ptr<App> make_histogram() { return std::make_unique<Histogram>(); }

} // namespace tessera::apps
