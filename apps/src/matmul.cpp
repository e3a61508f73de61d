// Matrix multiplication C = A B and PolyBench's gemm C = alpha A B + beta C, as update
// definitions over an RDom. Matrices are stored with dimension 0 the column: A(k, i) is row i,
// column k.
#include "tessera_apps/app.h"

namespace tessera::apps {
namespace {

class MatMul : public App {
public:
    explicit MatMul(bool gemm) : App(gemm ? "gemm" : "matmul"), gemm_(gemm) {
        Var j("j"), i("i");
        Func C(gemm ? "gemm" : "matmul");
        RDom r(0, a_.width(), "k");
        if (gemm) {
            C(j, i) = beta_ * c_in_(j, i);
            C(j, i) += alpha_ * a_(r, i) * b_(j, r);
        } else {
            C(j, i) = 0.f;
            C(j, i) += a_(r, i) * b_(j, r);
        }
        pipeline_ = Pipeline(C);
    }

    std::vector<std::string> size_names() const override { return {"M (rows)", "N (columns)", "K (inner)"}; }
    std::vector<int> default_sizes() const override { return {256, 256, 256}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        int M = sizes.at(0), N = sizes.at(1), K = sizes.at(2);
        a_buf_ = Buffer<float>(K, M);
        b_buf_ = Buffer<float>(N, K);
        fill_random(a_buf_, rng, -1.0, 1.0);
        fill_random(b_buf_, rng, -1.0, 1.0);
        a_.set(a_buf_);
        b_.set(b_buf_);
        if (gemm_) {
            c_buf_ = Buffer<float>(N, M);
            fill_random(c_buf_, rng, -1.0, 1.0);
            c_in_.set(c_buf_);
            alpha_.set(1.5f);
            beta_.set(1.2f);
        }
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<float>(b_buf_.width(), a_buf_.height())}; }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        Buffer<float> out = outputs.at(0);
        int M = a_buf_.height(), N = b_buf_.width(), K = a_buf_.width();
        float alpha = gemm_ ? alpha_.get() : 0.f, beta = gemm_ ? beta_.get() : 0.f;
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
                float acc = gemm_ ? beta * c_buf_(j, i) : 0.f;
                for (int k = 0; k < K; ++k) acc = gemm_ ? acc + alpha * a_buf_(k, i) * b_buf_(j, k) : acc + a_buf_(k, i) * b_buf_(j, k);
                out(j, i) = acc;
            }
    }

    double minimum_bytes() const override {
        double M = a_buf_.height(), N = b_buf_.width(), K = a_buf_.width();
        return 4.0 * (M * K + K * N + M * N * (gemm_ ? 2 : 1));
    }

private:
    bool gemm_;
    InputBuffer<float> a_{"A", 2}, b_{"B", 2}, c_in_{"C", 2};
    Param<float> alpha_{"alpha"}, beta_{"beta"};
    Buffer<float> a_buf_, b_buf_, c_buf_;
};

} // namespace

std::unique_ptr<App> make_matmul() { return std::make_unique<MatMul>(false); }
std::unique_ptr<App> make_gemm() { return std::make_unique<MatMul>(true); }

} // namespace tessera::apps
