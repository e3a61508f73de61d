// Two layers that framework models are made of, written as a user of the DSL would:
//
// conv2d: a 3x3 convolution with zero padding 1 and stride 1, as in a ResNet block, then bias
// and ReLU (conv -> bias -> relu, one pipeline).
//
//     padded = BoundaryConditions::constant_exterior(input, 0)
//     conv(x, y, co) = bias(co)
//     conv(x, y, co) += weights(r.x, r.y, r.z, co) * padded(x + r.x - 1, y + r.y - 1, r.z)
//     relu(x, y, co) = max(conv(x, y, co), 0)
//
// input(x, y, ci) is one image in NCHW order (x innermost), weights(kx, ky, ci, co) OIHW. The
// sum runs over r.x (kx) innermost, then r.y, then r.z (the input channel).
//
// batched_matmul: C_b = A_b B_b for each b of a batch, as a transformer's projections are
// (batch x sequence x width times width x width):
//
//     bmm(j, i, b) = 0
//     bmm(j, i, b) += A(k, i, b) * B(j, k, b)
//
// Both sum in a fixed order (Halide's RDom order), and the plain loops below sum in the same
// order, so the results are exact.
#include "tessera_apps/app.h"

namespace tessera::apps {
namespace {

class Conv2d : public App {
public:
    Conv2d() : App("conv2d") {
        Var x("x"), y("y"), co("co");
        Func padded = BoundaryConditions::constant_exterior(input_, 0.f);
        RDom r(0, 3, 0, 3, 0, input_.dim(2).extent(), "r");
        Func conv("conv"), relu("relu");
        conv(x, y, co) = bias_(co);
        conv(x, y, co) += weights_(r.x, r.y, r.z, co) * padded(x + r.x - 1, y + r.y - 1, r.z);
        relu(x, y, co) = max(conv(x, y, co), 0.f);
        pipeline_ = Pipeline(relu);
    }

    std::vector<std::string> size_names() const override {
        return {"width", "height", "input channels", "output channels"};
    }
    std::vector<int> default_sizes() const override { return {23, 19, 5, 7}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        int W = sizes.at(0), H = sizes.at(1), CI = sizes.at(2), CO = sizes.at(3);
        in_buf_ = Buffer<float>({W, H, CI});
        w_buf_ = Buffer<float>({3, 3, CI, CO});
        b_buf_ = Buffer<float>({CO});
        fill_random(in_buf_, rng, -1.0, 1.0);
        fill_random(w_buf_, rng, -0.5, 0.5);
        fill_random(b_buf_, rng, -0.1, 0.1);
        input_.set(in_buf_);
        weights_.set(w_buf_);
        bias_.set(b_buf_);
    }

    std::vector<Buffer<void>> make_outputs() const override {
        return {Buffer<float>({int(in_buf_.extent(0)), int(in_buf_.extent(1)), int(w_buf_.extent(3))})};
    }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        Buffer<float> out = outputs.at(0);
        int W = int(in_buf_.extent(0)), H = int(in_buf_.extent(1)), CI = int(in_buf_.extent(2)), CO = int(w_buf_.extent(3));
        for (int co = 0; co < CO; ++co)
            for (int y = 0; y < H; ++y)
                for (int x = 0; x < W; ++x) {
                    float acc = b_buf_(co);
                    for (int ci = 0; ci < CI; ++ci)
                        for (int ky = 0; ky < 3; ++ky)
                            for (int kx = 0; kx < 3; ++kx) {
                                int sx = x + kx - 1, sy = y + ky - 1;
                                float v = sx >= 0 && sx < W && sy >= 0 && sy < H ? in_buf_(sx, sy, ci) : 0.f;
                                acc = acc + w_buf_(kx, ky, ci, co) * v;
                            }
                    out(x, y, co) = std::max(acc, 0.f);
                }
    }

    double minimum_bytes() const override {
        double W = int(in_buf_.extent(0)), H = int(in_buf_.extent(1)), CI = int(in_buf_.extent(2)), CO = int(w_buf_.extent(3));
        return 4.0 * (W * H * CI + 9 * CI * CO + CO + W * H * CO);
    }

private:
    InputBuffer<float> input_{"input", 3}, weights_{"weights", 4}, bias_{"bias", 1};
    Buffer<float> in_buf_, w_buf_, b_buf_;
};

class BatchedMatMul : public App {
public:
    BatchedMatMul() : App("batched_matmul") {
        Var j("j"), i("i"), b("b");
        Func bmm("bmm");
        RDom k(0, a_.dim(0).extent(), "k");
        bmm(j, i, b) = 0.f;
        bmm(j, i, b) += a_(k, i, b) * b_(j, k, b);
        pipeline_ = Pipeline(bmm);
    }

    std::vector<std::string> size_names() const override { return {"batch", "M (rows)", "N (columns)", "K (inner)"}; }
    std::vector<int> default_sizes() const override { return {3, 29, 37, 31}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        int batch = sizes.at(0), M = sizes.at(1), N = sizes.at(2), K = sizes.at(3);
        a_buf_ = Buffer<float>({K, M, batch});
        b_buf_ = Buffer<float>({N, K, batch});
        fill_random(a_buf_, rng, -1.0, 1.0);
        fill_random(b_buf_, rng, -1.0, 1.0);
        a_.set(a_buf_);
        b_.set(b_buf_);
    }

    std::vector<Buffer<void>> make_outputs() const override {
        return {Buffer<float>({int(b_buf_.extent(0)), int(a_buf_.extent(1)), int(a_buf_.extent(2))})};
    }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        Buffer<float> out = outputs.at(0);
        int batch = int(a_buf_.extent(2)), M = int(a_buf_.extent(1)), N = int(b_buf_.extent(0)), K = int(a_buf_.extent(0));
        for (int b = 0; b < batch; ++b)
            for (int i = 0; i < M; ++i)
                for (int j = 0; j < N; ++j) {
                    float acc = 0.f;
                    for (int k = 0; k < K; ++k) acc = acc + a_buf_(k, i, b) * b_buf_(j, k, b);
                    out(j, i, b) = acc;
                }
    }

    double minimum_bytes() const override {
        double batch = int(a_buf_.extent(2)), M = int(a_buf_.extent(1)), N = int(b_buf_.extent(0)), K = int(a_buf_.extent(0));
        return 4.0 * batch * (M * K + K * N + M * N);
    }

private:
    InputBuffer<float> a_{"A", 3}, b_{"B", 3};
    Buffer<float> a_buf_, b_buf_;
};

} // namespace

std::unique_ptr<App> make_conv2d() { return std::make_unique<Conv2d>(); }
std::unique_ptr<App> make_batched_matmul() { return std::make_unique<BatchedMatMul>(); }

} // namespace tessera::apps
