// Time-iterated stencils from PolyBench. jacobi_2d keeps one plane per time step of a 3-D Func
// (plane t + 1 is computed from plane t); seidel_2d updates its single plane in place, so each
// point reads values already updated in the same time step (Gauss-Seidel order: y outer, x
// inner).
#include "tessera_apps/app.h"

namespace tessera::apps {
namespace {

class TimeStencil : public App {
public:
    explicit TimeStencil(bool seidel) : App(seidel ? "seidel_2d" : "jacobi_2d"), seidel_(seidel) {
        Var x("x"), y("y"), s("s");
        const InputBuffer<float> &in = input_;
        RDom r(1, in.width() - 2, 1, in.height() - 2, 0, steps_, "r");
        if (seidel) {
            Func S("seidel_2d");
            S(x, y) = in(x, y);
            S(r.x, r.y) = (S(r.x - 1, r.y - 1) + S(r.x, r.y - 1) + S(r.x + 1, r.y - 1) + S(r.x - 1, r.y) + S(r.x, r.y) +
                           S(r.x + 1, r.y) + S(r.x - 1, r.y + 1) + S(r.x, r.y + 1) + S(r.x + 1, r.y + 1)) / 9.0f;
            pipeline_ = Pipeline(S);
        } else {
            // One plane per time step: step t + 1 reads only plane t, so the dependences are
            // uniform (the two-array PolyBench form, expanded in time).
            Func J("jacobi_steps"), out("jacobi_2d");
            J(x, y, s) = in(x, y);
            J(r.x, r.y, r.z + 1) = 0.2f * (J(r.x, r.y, r.z) + J(r.x - 1, r.y, r.z) + J(r.x + 1, r.y, r.z) +
                                           J(r.x, r.y + 1, r.z) + J(r.x, r.y - 1, r.z));
            out(x, y) = J(x, y, steps_);
            pipeline_ = Pipeline(out);
        }
    }

    std::vector<std::string> size_names() const override { return {"width", "height", "time steps"}; }
    std::vector<int> default_sizes() const override { return {256, 256, 20}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        in_ = Buffer<float>(sizes.at(0), sizes.at(1));
        fill_random(in_, rng, 0.0, 1.0);
        input_.set(in_);
        steps_.set(sizes.at(2));
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<float>(in_.width(), in_.height())}; }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        Buffer<float> out = outputs.at(0);
        int W = in_.width(), H = in_.height(), T = steps_.get();
        std::vector<float> a(size_t(W) * H), b;
        auto idx = [W](int x, int y) { return size_t(y) * size_t(W) + size_t(x); };
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) a[idx(x, y)] = in_(x, y);
        b = a;
        for (int t = 0; t < T; ++t) {
            if (seidel_) {
                for (int y = 1; y < H - 1; ++y)
                    for (int x = 1; x < W - 1; ++x)
                        a[idx(x, y)] = (a[idx(x - 1, y - 1)] + a[idx(x, y - 1)] + a[idx(x + 1, y - 1)] + a[idx(x - 1, y)] +
                                        a[idx(x, y)] + a[idx(x + 1, y)] + a[idx(x - 1, y + 1)] + a[idx(x, y + 1)] +
                                        a[idx(x + 1, y + 1)]) / 9.0f;
            } else {
                for (int y = 1; y < H - 1; ++y)
                    for (int x = 1; x < W - 1; ++x)
                        b[idx(x, y)] = 0.2f * (a[idx(x, y)] + a[idx(x - 1, y)] + a[idx(x + 1, y)] + a[idx(x, y + 1)] +
                                               a[idx(x, y - 1)]);
                std::swap(a, b);
            }
        }
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) out(x, y) = a[idx(x, y)];
    }

    double minimum_bytes() const override { return 8.0 * in_.width() * in_.height(); }

private:
    bool seidel_;
    InputBuffer<float> input_{"input", 2};
    Param<int> steps_{"steps"};
    Buffer<float> in_;
};

} // namespace

std::unique_ptr<App> make_jacobi_2d() { return std::make_unique<TimeStencil>(false); }
std::unique_ptr<App> make_seidel_2d() { return std::make_unique<TimeStencil>(true); }

} // namespace tessera::apps
