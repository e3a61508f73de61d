// PolyBench 4.2's stencils written in the DSL the natural way: a Func over the time steps (one
// plane per half step for the two-array Jacobi kernels, whose planes start as the initial arrays
// since PolyBench never writes their borders), read one plane behind, or a single plane updated
// in place (seidel-2d, Gauss-Seidel order). Tessera folds the time planes into a ring of two
// (storage_folding.h), so only two planes are ever stored. Double precision and bit-exact, like
// polybench.cpp.
#include "polybench_arrays.h"

#include <string>
#include <utility>
#include <vector>

namespace tessera::apps {
namespace {

using namespace polybench;

// The two-array kernels (jacobi-1d, jacobi-2d, heat-3d): inputs A and B of N^dims doubles, TSTEPS
// steps, and the output A, shaped like A.
class TwoArrayStencil : public App {
public:
    TwoArrayStencil(const std::string &name, int dims, std::vector<int> small)
        : App(name), A_("A", dims), B_("B", dims), dims_(dims), small_(std::move(small)) {}

    std::vector<std::string> size_names() const override { return {"TSTEPS", "N"}; }
    std::vector<int> default_sizes() const override { return small_; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        tsteps_.set(sizes.at(0));
        std::vector<int> shape(size_t(dims_), sizes.at(1));
        a_ = random_input(A_, shape, rng);
        b_ = random_input(B_, shape, rng);
    }

    std::vector<Buffer<void>> make_outputs() const override {
        std::vector<int> shape;
        for (int d = 0; d < dims_; ++d) shape.push_back(int(a_.extent(d)));
        return {Buffer<double>(shape)};
    }

    double minimum_bytes() const override { return 8.0 * (elements({a_, b_}) + elements({a_})); }

protected:
    InputBuffer<double> A_, B_;
    Param<int> tsteps_{"tsteps"};
    Buffer<double> a_, b_;

private:
    int dims_;
    std::vector<int> small_;
};

// ---------------------------------------------------------------------------------------------
// stencils/jacobi-1d: TSTEPS times B = smooth(A), A = smooth(B) on the interior. One plane per
// half step of a 2-D Func: plane 2t is A after t steps, plane 2t + 1 is B after t + 1 steps; each
// plane starts as the initial array it stands for, since PolyBench never writes the two ends.
class Jacobi1D : public TwoArrayStencil {
public:
    Jacobi1D() : TwoArrayStencil("pb_jacobi_1d", 1, {40, 120}) {
        Var i("i"), s("s");
        Func J("jacobi_planes"), A("jacobi_1d");
        RDom r(1, A_.width() - 2, 0, 2 * tsteps_, "r");
        J(i, s) = select(s % 2 == 0, A_(i), B_(i));
        J(r.x, r.y + 1) = 0.33333 * (J(r.x - 1, r.y) + J(r.x, r.y) + J(r.x + 1, r.y));
        A(i) = J(i, 2 * tsteps_);
        pipeline_ = Pipeline(A);
    }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        int TSTEPS = tsteps_.get(), N = a_.width();
        Vec A = vec_of(a_), B = vec_of(b_);
        for (int t = 0; t < TSTEPS; t++) {
            for (int i = 1; i < N - 1; i++) B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
            for (int i = 1; i < N - 1; i++) A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);
        }
        store(A, outputs.at(0));
    }
};

// ---------------------------------------------------------------------------------------------
// stencils/jacobi-2d: TSTEPS times B = smooth5(A), A = smooth5(B) on the interior; plane 2t is A
// after t steps, plane 2t + 1 is B after t + 1 steps.
class Jacobi2D : public TwoArrayStencil {
public:
    Jacobi2D() : TwoArrayStencil("pb_jacobi_2d", 2, {40, 90}) {
        Var j("j"), i("i"), s("s");
        Func J("jacobi_2d_planes"), A("jacobi_2d");
        RDom r(1, A_.width() - 2, 1, A_.height() - 2, 0, 2 * tsteps_, "r");
        J(j, i, s) = select(s % 2 == 0, A_(j, i), B_(j, i));
        J(r.x, r.y, r.z + 1) = 0.2 * (J(r.x, r.y, r.z) + J(r.x - 1, r.y, r.z) + J(r.x + 1, r.y, r.z) + J(r.x, r.y + 1, r.z) +
                                      J(r.x, r.y - 1, r.z));
        A(j, i) = J(j, i, 2 * tsteps_);
        pipeline_ = Pipeline(A);
    }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        int TSTEPS = tsteps_.get(), N = a_.width();
        Mat A = mat_of(a_), B = mat_of(b_);
        for (int t = 0; t < TSTEPS; t++) {
            for (int i = 1; i < N - 1; i++)
                for (int j = 1; j < N - 1; j++)
                    B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][1 + j] + A[1 + i][j] + A[i - 1][j]);
            for (int i = 1; i < N - 1; i++)
                for (int j = 1; j < N - 1; j++)
                    A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][1 + j] + B[1 + i][j] + B[i - 1][j]);
        }
        store(A, outputs.at(0));
    }
};

// ---------------------------------------------------------------------------------------------
// stencils/heat-3d: TSTEPS times B = heat(A), A = heat(B) on the interior of an N^3 cube; plane
// 2t is A after t steps, plane 2t + 1 is B after t + 1 steps. PolyBench's A[i][j][k] is (k, j, i).
class Heat3D : public TwoArrayStencil {
public:
    Heat3D() : TwoArrayStencil("pb_heat_3d", 3, {40, 20}) {
        Var k("k"), j("j"), i("i"), s("s");
        Func H("heat_3d_planes"), A("heat_3d");
        RDom r({{1, A_.width() - 2}, {1, A_.height() - 2}, {1, A_.dim(2).extent() - 2}, {0, 2 * tsteps_}}, "r");
        H(k, j, i, s) = select(s % 2 == 0, A_(k, j, i), B_(k, j, i));
        Expr c = H(r.x, r.y, r.z, r.w);
        H(r.x, r.y, r.z, r.w + 1) = 0.125 * (H(r.x, r.y, r.z + 1, r.w) - 2.0 * c + H(r.x, r.y, r.z - 1, r.w)) +
                                    0.125 * (H(r.x, r.y + 1, r.z, r.w) - 2.0 * c + H(r.x, r.y - 1, r.z, r.w)) +
                                    0.125 * (H(r.x + 1, r.y, r.z, r.w) - 2.0 * c + H(r.x - 1, r.y, r.z, r.w)) + c;
        A(k, j, i) = H(k, j, i, 2 * tsteps_);
        pipeline_ = Pipeline(A);
    }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        int TSTEPS = tsteps_.get(), N = a_.width();
        auto at = [N](int i, int j, int k) { return (size_t(i) * size_t(N) + size_t(j)) * size_t(N) + size_t(k); };
        Vec A(size_t(N) * N * N), B(A.size());
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++)
                for (int k = 0; k < N; k++) {
                    A[at(i, j, k)] = a_(k, j, i);
                    B[at(i, j, k)] = b_(k, j, i);
                }
        auto heat = [&](const Vec &X, Vec &Y) {
            for (int i = 1; i < N - 1; i++)
                for (int j = 1; j < N - 1; j++)
                    for (int k = 1; k < N - 1; k++)
                        Y[at(i, j, k)] = 0.125 * (X[at(i + 1, j, k)] - 2.0 * X[at(i, j, k)] + X[at(i - 1, j, k)]) +
                                         0.125 * (X[at(i, j + 1, k)] - 2.0 * X[at(i, j, k)] + X[at(i, j - 1, k)]) +
                                         0.125 * (X[at(i, j, k + 1)] - 2.0 * X[at(i, j, k)] + X[at(i, j, k - 1)]) +
                                         X[at(i, j, k)];
        };
        for (int t = 1; t <= TSTEPS; t++) {
            heat(A, B);
            heat(B, A);
        }
        Buffer<double> out = outputs.at(0);
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++)
                for (int k = 0; k < N; k++) out(k, j, i) = A[at(i, j, k)];
    }
};

// ---------------------------------------------------------------------------------------------
// stencils/seidel-2d: TSTEPS Gauss-Seidel sweeps over the interior, in place: each point reads
// its upper and left neighbours already updated in this sweep.
class Seidel2D : public App {
public:
    Seidel2D() : App("pb_seidel_2d") {
        Var j("j"), i("i");
        Func A("seidel_2d");
        RDom r(1, A_.width() - 2, 1, A_.height() - 2, 0, tsteps_, "r");
        A(j, i) = A_(j, i);
        A(r.x, r.y) = (A(r.x - 1, r.y - 1) + A(r.x, r.y - 1) + A(r.x + 1, r.y - 1) + A(r.x - 1, r.y) + A(r.x, r.y) +
                       A(r.x + 1, r.y) + A(r.x - 1, r.y + 1) + A(r.x, r.y + 1) + A(r.x + 1, r.y + 1)) /
                      9.0;
        pipeline_ = Pipeline(A);
    }

    std::vector<std::string> size_names() const override { return {"TSTEPS", "N"}; }
    std::vector<int> default_sizes() const override { return {40, 120}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        int T = sizes.at(0), N = sizes.at(1);
        tsteps_.set(T);
        a_ = random_input(A_, {N, N}, rng);
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<double>(a_.width(), a_.height())}; }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        int TSTEPS = tsteps_.get(), N = a_.width();
        Mat A = mat_of(a_);
        for (int t = 0; t <= TSTEPS - 1; t++)
            for (int i = 1; i <= N - 2; i++)
                for (int j = 1; j <= N - 2; j++)
                    A[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1] + A[i][j - 1] + A[i][j] + A[i][j + 1] +
                               A[i + 1][j - 1] + A[i + 1][j] + A[i + 1][j + 1]) /
                              9.0;
        store(A, outputs.at(0));
    }

    double minimum_bytes() const override { return 8.0 * 2 * elements({a_}); }

private:
    InputBuffer<double> A_{"A", 2};
    Param<int> tsteps_{"tsteps"};
    Buffer<double> a_;
};

} // namespace

std::unique_ptr<App> make_pb_jacobi_1d() { return std::make_unique<Jacobi1D>(); }
std::unique_ptr<App> make_pb_jacobi_2d() { return std::make_unique<Jacobi2D>(); }
std::unique_ptr<App> make_pb_heat_3d() { return std::make_unique<Heat3D>(); }
std::unique_ptr<App> make_pb_seidel_2d() { return std::make_unique<Seidel2D>(); }

} // namespace tessera::apps
