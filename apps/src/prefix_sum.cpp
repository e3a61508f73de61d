// Prefix sum: an update definition whose every step reads the previous one (a loop-carried
// dependence).
#include "tessera_apps/app.h"

namespace tessera::apps {
namespace {

class PrefixSum : public App {
public:
    PrefixSum() : App("prefix_sum") {
        Var x("x");
        Func scan("prefix_sum");
        RDom r(1, input_.width() - 1, "r");
        scan(x) = input_(x);
        scan(r) = scan(r - 1) + scan(r);
        pipeline_ = Pipeline(scan);
    }

    std::vector<std::string> size_names() const override { return {"length"}; }
    std::vector<int> default_sizes() const override { return {1 << 20}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        in_ = Buffer<float>(sizes.at(0));
        fill_random(in_, rng, -1.0, 1.0);
        input_.set(in_);
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<float>(in_.width())}; }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        Buffer<float> out = outputs.at(0);
        float acc = 0;
        for (int x = 0; x < in_.width(); ++x) {
            acc = x == 0 ? in_(0) : acc + in_(x);
            out(x) = acc;
        }
    }

    double minimum_bytes() const override { return 8.0 * in_.width(); }

private:
    InputBuffer<float> input_{"input", 1};
    Buffer<float> in_;
};

} // namespace

std::unique_ptr<App> make_prefix_sum() { return std::make_unique<PrefixSum>(); }

} // namespace tessera::apps
