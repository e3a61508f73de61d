// PolyBench 4.2's BLAS kernels gemm, trmm and symm in the DSL, double precision and bit-exact
// like polybench.cpp (whose conventions they share: PolyBench's A[i][k] is A(k, i), reductions
// in PolyBench's k order, products associated as PolyBench writes them). syrk and syr2k are in
// polybench.cpp.
#include "polybench_arrays.h"

namespace tessera::apps {
namespace {

using namespace polybench;

// ---------------------------------------------------------------------------------------------
// linear-algebra/blas/gemm: C = alpha A B + beta C.
class Gemm : public App {
public:
    Gemm() : App("pb_gemm") {
        Var i("i"), j("j");
        Func C("pb_gemm");
        RDom k(0, A_.width(), "k");
        C(j, i) = C_(j, i) * beta_;
        C(j, i) += alpha_ * A_(k, i) * B_(j, k);
        pipeline_ = Pipeline(C);
    }

    std::vector<std::string> size_names() const override { return {"NI", "NJ", "NK"}; }
    std::vector<int> default_sizes() const override { return {60, 70, 80}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        int NI = sizes.at(0), NJ = sizes.at(1), NK = sizes.at(2);
        alpha_.set(1.5);
        beta_.set(1.2);
        c_ = random_input(C_, {NJ, NI}, rng);
        a_ = random_input(A_, {NK, NI}, rng);
        b_ = random_input(B_, {NJ, NK}, rng);
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<double>(c_.width(), c_.height())}; }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        int NI = c_.height(), NJ = c_.width(), NK = a_.width();
        double alpha = alpha_.get(), beta = beta_.get();
        Mat A = mat_of(a_), B = mat_of(b_), C = mat_of(c_);
        for (int i = 0; i < NI; i++) {
            for (int j = 0; j < NJ; j++) C[i][j] *= beta;
            for (int k = 0; k < NK; k++)
                for (int j = 0; j < NJ; j++) C[i][j] += alpha * A[i][k] * B[k][j];
        }
        store(C, outputs.at(0));
    }

    double minimum_bytes() const override { return 8.0 * (elements({a_, b_, c_}) + c_.number_of_elements()); }

private:
    InputBuffer<double> A_{"A", 2}, B_{"B", 2}, C_{"C", 2};
    Param<double> alpha_{"alpha"}, beta_{"beta"};
    Buffer<double> a_, b_, c_;
};

// The shapes trmm and symm share: A is M x M (only one triangle is read), B is M x N.
class TriangularApp : public App {
public:
    explicit TriangularApp(const std::string &name) : App(name) {}

    std::vector<std::string> size_names() const override { return {"M", "N"}; }
    std::vector<int> default_sizes() const override { return {60, 80}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        int M = sizes.at(0), N = sizes.at(1);
        alpha_.set(1.5);
        beta_.set(1.2);
        a_ = random_input(A_, {M, M}, rng);
        b_ = random_input(B_, {N, M}, rng);
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<double>(b_.width(), b_.height())}; }

protected:
    InputBuffer<double> A_{"A", 2}, B_{"B", 2};
    Param<double> alpha_{"alpha"}, beta_{"beta"};
    Buffer<double> a_, b_;
};

// ---------------------------------------------------------------------------------------------
// linear-algebra/blas/trmm: B = alpha A^T B with A unit lower triangular. PolyBench updates B in
// place, but row i reads only the rows k > i, which are not yet updated: every element is
// B's own value plus the products with the rows below, a reduction over an RDom restricted to
// k > i.
class Trmm : public TriangularApp {
public:
    Trmm() : TriangularApp("pb_trmm") {
        Var i("i"), j("j");
        Func B("trmm");
        RDom k(0, A_.width(), "k");
        k.where(k > i);
        B(j, i) = B_(j, i);
        B(j, i) += A_(i, k) * B_(j, k);
        B(j, i) = alpha_ * B(j, i);
        pipeline_ = Pipeline(B);
    }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        int M = b_.height(), N = b_.width();
        double alpha = alpha_.get();
        Mat A = mat_of(a_), B = mat_of(b_);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                for (int k = i + 1; k < M; k++) B[i][j] += A[k][i] * B[k][j];
                B[i][j] = alpha * B[i][j];
            }
        store(B, outputs.at(0));
    }

    double minimum_bytes() const override { return 8.0 * (elements({b_}) * 2 + elements({a_}) / 2); }
};

// ---------------------------------------------------------------------------------------------
// linear-algebra/blas/symm: C = alpha A B + beta C with A symmetric, stored in its lower
// triangle. PolyBench's loop scatters row i's products into the rows k < i above it; here each
// row gathers them, in the same (increasing) order, after its own term: C(j, i) is beta C +
// alpha B A[i][i] + alpha temp2 (the products with the rows above), then the products with the
// rows below are added.
class Symm : public TriangularApp {
public:
    Symm() : TriangularApp("pb_symm") {
        Var i("i"), j("j");
        Func temp2("temp2"), C("symm");
        RDom above(0, A_.width(), "above"), below(0, A_.width(), "below");
        above.where(above < i);
        below.where(below > i);
        temp2(j, i) = 0.0;
        temp2(j, i) += B_(j, above) * A_(above, i);
        C(j, i) = beta_ * C_(j, i) + alpha_ * B_(j, i) * A_(i, i) + alpha_ * temp2(j, i);
        C(j, i) += alpha_ * B_(j, below) * A_(i, below);
        pipeline_ = Pipeline(C);
    }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        TriangularApp::prepare(sizes, seed);
        std::mt19937 rng(seed + 1);
        c_ = random_input(C_, {b_.width(), b_.height()}, rng);
    }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        int M = b_.height(), N = b_.width();
        double alpha = alpha_.get(), beta = beta_.get();
        Mat A = mat_of(a_), B = mat_of(b_), C = mat_of(c_);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double temp2 = 0;
                for (int k = 0; k < i; k++) {
                    C[k][j] += alpha * B[i][j] * A[i][k];
                    temp2 += B[k][j] * A[i][k];
                }
                C[i][j] = beta * C[i][j] + alpha * B[i][j] * A[i][i] + alpha * temp2;
            }
        store(C, outputs.at(0));
    }

    double minimum_bytes() const override { return 8.0 * (elements({b_, c_}) + elements({a_}) / 2 + elements({c_})); }

private:
    InputBuffer<double> C_{"C", 2};
    Buffer<double> c_;
};

} // namespace

std::unique_ptr<App> make_pb_gemm() { return std::make_unique<Gemm>(); }
std::unique_ptr<App> make_pb_trmm() { return std::make_unique<Trmm>(); }
std::unique_ptr<App> make_pb_symm() { return std::make_unique<Symm>(); }

} // namespace tessera::apps
