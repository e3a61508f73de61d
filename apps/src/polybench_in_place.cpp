// PolyBench 4.2 kernels that update one array in place, step after step: the solvers (lu,
// cholesky, trisolv) and medley's floyd-warshall. Each is one update definition over a
// triangular (or cubic) RDom whose outermost dimension is the step k. PolyBench writes lu and
// cholesky left-looking (row i gathers the rows above it); here they are right-looking (step k
// scales column k, then updates the trailing rows), which performs the same operations on every
// element in the same order, so the results are bit-exact like polybench.cpp's. The different
// statements of a step (the division by the pivot and the trailing update) are cases of one
// select on the RDom's coordinates, since an update definition is one statement.
//
// PolyBench's A[i][j] is A(j, i) here; in every RDom, r.x is PolyBench's j (innermost), r.y its i
// and r.z its step k.
#include "polybench_arrays.h"

namespace tessera::apps {
namespace {

using namespace polybench;

// A random N x N matrix in [-1, 1) whose diagonal is N + [0, 1): strictly diagonally dominant
// (and, when `symmetric`, symmetric, hence positive definite), so that lu and cholesky meet no
// small pivot, as PolyBench's own init_array ensures for its inputs.
Buffer<double> dominant_input(const InputBuffer<double> &in, int n, bool symmetric, std::mt19937 &rng) {
    Buffer<double> b({n, n});
    fill_random(b, rng, -1.0, 1.0);
    for (int i = 0; i < n; ++i) {
        b(i, i) = n + std::abs(b(i, i));
        if (symmetric)
            for (int j = 0; j < i; ++j) b(i, j) = b(j, i);
    }
    in.set(b);
    return b;
}

// An app over one N x N double matrix A (the solvers' shared shape).
class SquareMatrixApp : public App {
public:
    SquareMatrixApp(const std::string &name, bool symmetric) : App(name), symmetric_(symmetric) {}

    std::vector<std::string> size_names() const override { return {"N"}; }
    std::vector<int> default_sizes() const override { return {120}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        a_ = dominant_input(A_, sizes.at(0), symmetric_, rng);
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<double>(a_.width(), a_.height())}; }

    double minimum_bytes() const override { return 8.0 * 2 * elements({a_}); }

protected:
    InputBuffer<double> A_{"A", 2};
    Buffer<double> a_;

private:
    bool symmetric_;
};

// ---------------------------------------------------------------------------------------------
// linear-algebra/solvers/lu: A = L U in place (L unit lower, below the diagonal; U on and above
// it), without pivoting. Step k divides column k below the pivot by A[k][k], then subtracts
// A[i][k] * A[k][j] from the trailing rows i > k, columns j > k.
class Lu : public SquareMatrixApp {
public:
    Lu() : SquareMatrixApp("pb_lu", false) {
        Var j("j"), i("i");
        Func A("lu");
        RDom r(0, A_.width(), 0, A_.height(), 0, A_.height(), "r");
        r.where(r.y > r.z && r.x >= r.z);
        A(j, i) = A_(j, i);
        A(r.x, r.y) = select(r.x == r.z, A(r.x, r.y) / A(r.z, r.z), A(r.x, r.y) - A(r.z, r.y) * A(r.x, r.z));
        pipeline_ = Pipeline(A);
    }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        int N = a_.width();
        Mat A = mat_of(a_);
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < i; j++) {
                for (int k = 0; k < j; k++) A[i][j] -= A[i][k] * A[k][j];
                A[i][j] /= A[j][j];
            }
            for (int j = i; j < N; j++)
                for (int k = 0; k < i; k++) A[i][j] -= A[i][k] * A[k][j];
        }
        store(A, outputs.at(0));
    }
};

// ---------------------------------------------------------------------------------------------
// linear-algebra/solvers/cholesky: A = L L^T in the lower triangle (the upper keeps A's values).
// Step k takes the square root of the pivot, divides column k below it, then subtracts
// A[i][k] * A[j][k] from the trailing lower triangle k < j <= i.
class Cholesky : public SquareMatrixApp {
public:
    Cholesky() : SquareMatrixApp("pb_cholesky", true) {
        Var j("j"), i("i");
        Func A("cholesky");
        RDom r(0, A_.width(), 0, A_.height(), 0, A_.height(), "r");
        r.where(r.x >= r.z && r.x <= r.y);
        A(j, i) = A_(j, i);
        A(r.x, r.y) = select(r.y == r.z, sqrt(A(r.x, r.y)),                // the pivot (r.x == r.y == r.z)
                             r.x == r.z, A(r.x, r.y) / A(r.z, r.z),       // column k below the pivot
                             A(r.x, r.y) - A(r.z, r.y) * A(r.z, r.x));    // the trailing triangle
        pipeline_ = Pipeline(A);
    }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        int N = a_.width();
        Mat A = mat_of(a_);
        for (int i = 0; i < N; i++) {
            for (int j = 0; j < i; j++) {
                for (int k = 0; k < j; k++) A[i][j] -= A[i][k] * A[j][k];
                A[i][j] /= A[j][j];
            }
            for (int k = 0; k < i; k++) A[i][i] -= A[i][k] * A[i][k];
            A[i][i] = std::sqrt(A[i][i]);
        }
        store(A, outputs.at(0));
    }
};

// ---------------------------------------------------------------------------------------------
// linear-algebra/solvers/trisolv: forward substitution L x = b. Row i subtracts L[i][j] x[j] for
// j < i, then divides by L[i][i].
class Trisolv : public App {
public:
    Trisolv() : App("pb_trisolv") {
        Var i("i");
        Func x("trisolv");
        RDom r(0, L_.width(), 0, L_.height(), "r");
        r.where(r.x <= r.y);
        x(i) = b_(i);
        x(r.y) = select(r.x == r.y, x(r.y) / L_(r.y, r.y), x(r.y) - L_(r.x, r.y) * x(r.x));
        pipeline_ = Pipeline(x);
    }

    std::vector<std::string> size_names() const override { return {"N"}; }
    std::vector<int> default_sizes() const override { return {120}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        int N = sizes.at(0);
        l_ = dominant_input(L_, N, false, rng);
        b_buf_ = random_input(b_, {N}, rng);
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<double>(b_buf_.width())}; }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        int N = b_buf_.width();
        Mat L = mat_of(l_);
        Vec b = vec_of(b_buf_), x = zeros(N);
        for (int i = 0; i < N; i++) {
            x[i] = b[i];
            for (int j = 0; j < i; j++) x[i] -= L[i][j] * x[j];
            x[i] = x[i] / L[i][i];
        }
        store(x, outputs.at(0));
    }

    double minimum_bytes() const override { return 8.0 * (elements({l_, b_buf_}) / 2 + b_buf_.width()); }

private:
    InputBuffer<double> L_{"L", 2}, b_{"b", 1};
    Buffer<double> l_, b_buf_;
};

// ---------------------------------------------------------------------------------------------
// medley/floyd-warshall: all-pairs shortest paths over int path lengths. Step k shortens every
// path i -> j through k.
class FloydWarshall : public App {
public:
    FloydWarshall() : App("pb_floyd_warshall") {
        Var j("j"), i("i");
        Func path("floyd_warshall");
        RDom r(0, paths_.width(), 0, paths_.height(), 0, paths_.height(), "r");
        path(j, i) = paths_(j, i);
        Expr through_k = path(r.z, r.y) + path(r.x, r.z);
        path(r.x, r.y) = select(path(r.x, r.y) < through_k, path(r.x, r.y), through_k);
        pipeline_ = Pipeline(path);
    }

    std::vector<std::string> size_names() const override { return {"N"}; }
    std::vector<int> default_sizes() const override { return {180}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        int N = sizes.at(0);
        p_ = Buffer<int>({N, N});
        fill_random(p_, rng, 1, 1000);
        paths_.set(p_);
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<int>(p_.width(), p_.height())}; }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        int N = p_.width();
        std::vector<std::vector<int>> path(size_t(N), std::vector<int>(size_t(N), 0));
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) path[i][j] = p_(j, i);
        for (int k = 0; k < N; k++)
            for (int i = 0; i < N; i++)
                for (int j = 0; j < N; j++)
                    path[i][j] = path[i][j] < path[i][k] + path[k][j] ? path[i][j] : path[i][k] + path[k][j];
        Buffer<int> out(outputs.at(0));
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) out(j, i) = path[i][j];
    }

    double minimum_bytes() const override { return 4.0 * 2 * double(p_.number_of_elements()); }

private:
    InputBuffer<int> paths_{"paths", 2};
    Buffer<int> p_;
};

} // namespace

std::unique_ptr<App> make_pb_lu() { return std::make_unique<Lu>(); }
std::unique_ptr<App> make_pb_cholesky() { return std::make_unique<Cholesky>(); }
std::unique_ptr<App> make_pb_trisolv() { return std::make_unique<Trisolv>(); }
std::unique_ptr<App> make_pb_floyd_warshall() { return std::make_unique<FloydWarshall>(); }

} // namespace tessera::apps
