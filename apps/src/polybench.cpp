// A slice of PolyBench 4.2 (linear-algebra kernels and BLAS, datamining) written in the
// DSL, in double precision like PolyBench's default. Each reference() is PolyBench's loop nest,
// in PolyBench's order, over C-style row-major arrays (X[i][j]); in the DSL dimension 0 is the
// column, so PolyBench's A[i][k] is A(k, i).
//
// Every output element is computed with the same floating-point operations in the same order as
// in PolyBench's loops: a reduction starts from the value PolyBench starts from and adds its terms
// in RDom order (PolyBench's k loop), and products keep PolyBench's association. So every
// kernel compares bit-exactly (tolerance 0). Inputs are random in [-1, 1) rather than
// PolyBench's init_array formulas, so that no coincidence hides a wrong element.
#include "polybench_arrays.h"

namespace tessera::apps {
namespace {

using namespace polybench;

// ---------------------------------------------------------------------------------------------
// linear-algebra/kernels/atax: y = A^T (A x).
class Atax : public App {
public:
    Atax() : App("pb_atax") {
        Var i("i"), j("j");
        Func tmp("tmp"), y("y");
        RDom rj(0, A_.width(), "rj"), ri(0, A_.height(), "ri");
        tmp(i) = 0.0;
        tmp(i) += A_(rj, i) * x_(rj);
        y(j) = 0.0;
        y(j) += A_(j, ri) * tmp(ri);
        pipeline_ = Pipeline(y);
    }

    std::vector<std::string> size_names() const override { return {"M", "N"}; }
    std::vector<int> default_sizes() const override { return {116, 124}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        int M = sizes.at(0), N = sizes.at(1);
        a_ = random_input(A_, {N, M}, rng);
        x_buf_ = random_input(x_, {N}, rng);
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<double>(a_.width())}; }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        int M = a_.height(), N = a_.width();
        Mat A = mat_of(a_);
        Vec x = vec_of(x_buf_), y = zeros(N), tmp = zeros(M);
        for (int i = 0; i < N; i++) y[i] = 0;
        for (int i = 0; i < M; i++) {
            tmp[i] = 0.0;
            for (int j = 0; j < N; j++) tmp[i] = tmp[i] + A[i][j] * x[j];
            for (int j = 0; j < N; j++) y[j] = y[j] + A[i][j] * tmp[i];
        }
        store(y, outputs.at(0));
    }

    double minimum_bytes() const override { return 8.0 * (elements({a_, x_buf_}) + a_.width()); }

private:
    InputBuffer<double> A_{"A", 2}, x_{"x", 1};
    Buffer<double> a_, x_buf_;
};

// ---------------------------------------------------------------------------------------------
// linear-algebra/kernels/bicg: s = A^T r and q = A p (two outputs of different lengths).
class Bicg : public App {
public:
    Bicg() : App("pb_bicg") {
        Var i("i"), j("j");
        Func s("s"), q("q");
        RDom ri(0, A_.height(), "ri"), rj(0, A_.width(), "rj");
        s(j) = 0.0;
        s(j) += r_(ri) * A_(j, ri);
        q(i) = 0.0;
        q(i) += A_(rj, i) * p_(rj);
        pipeline_ = Pipeline({s, q});
    }

    std::vector<std::string> size_names() const override { return {"M", "N"}; }
    std::vector<int> default_sizes() const override { return {116, 124}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        int M = sizes.at(0), N = sizes.at(1);
        a_ = random_input(A_, {M, N}, rng);
        r_buf_ = random_input(r_, {N}, rng);
        p_buf_ = random_input(p_, {M}, rng);
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<double>(a_.width()), Buffer<double>(a_.height())}; }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        int M = a_.width(), N = a_.height();
        Mat A = mat_of(a_);
        Vec r = vec_of(r_buf_), p = vec_of(p_buf_), s = zeros(M), q = zeros(N);
        for (int i = 0; i < M; i++) s[i] = 0;
        for (int i = 0; i < N; i++) {
            q[i] = 0.0;
            for (int j = 0; j < M; j++) {
                s[j] = s[j] + r[i] * A[i][j];
                q[i] = q[i] + A[i][j] * p[j];
            }
        }
        store(s, outputs.at(0));
        store(q, outputs.at(1));
    }

    double minimum_bytes() const override { return 8.0 * (elements({a_, r_buf_, p_buf_}) + a_.width() + a_.height()); }

private:
    InputBuffer<double> A_{"A", 2}, r_{"r", 1}, p_{"p", 1};
    Buffer<double> a_, r_buf_, p_buf_;
};

// ---------------------------------------------------------------------------------------------
// linear-algebra/kernels/mvt: x1 += A y_1 and x2 += A^T y_2.
class Mvt : public App {
public:
    Mvt() : App("pb_mvt") {
        Var i("i");
        Func x1("x1"), x2("x2");
        RDom rj(0, A_.width(), "rj"), rj2(0, A_.height(), "rj2");
        x1(i) = x1_(i);
        x1(i) += A_(rj, i) * y1_(rj);
        x2(i) = x2_(i);
        x2(i) += A_(i, rj2) * y2_(rj2);
        pipeline_ = Pipeline({x1, x2});
    }

    std::vector<std::string> size_names() const override { return {"N"}; }
    std::vector<int> default_sizes() const override { return {120}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        int N = sizes.at(0);
        x1_buf_ = random_input(x1_, {N}, rng);
        x2_buf_ = random_input(x2_, {N}, rng);
        y1_buf_ = random_input(y1_, {N}, rng);
        y2_buf_ = random_input(y2_, {N}, rng);
        a_ = random_input(A_, {N, N}, rng);
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<double>(a_.width()), Buffer<double>(a_.width())}; }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        int N = a_.width();
        Mat A = mat_of(a_);
        Vec x1 = vec_of(x1_buf_), x2 = vec_of(x2_buf_), y_1 = vec_of(y1_buf_), y_2 = vec_of(y2_buf_);
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) x1[i] = x1[i] + A[i][j] * y_1[j];
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) x2[i] = x2[i] + A[j][i] * y_2[j];
        store(x1, outputs.at(0));
        store(x2, outputs.at(1));
    }

    double minimum_bytes() const override { return 8.0 * (elements({a_, x1_buf_, x2_buf_, y1_buf_, y2_buf_}) + 2 * a_.width()); }

private:
    InputBuffer<double> A_{"A", 2}, x1_{"x1_in", 1}, x2_{"x2_in", 1}, y1_{"y_1", 1}, y2_{"y_2", 1};
    Buffer<double> a_, x1_buf_, x2_buf_, y1_buf_, y2_buf_;
};

// ---------------------------------------------------------------------------------------------
// linear-algebra/kernels/2mm: D = alpha A B C + beta D.
class TwoMM : public App {
public:
    TwoMM() : App("pb_2mm") {
        Var i("i"), j("j");
        Func tmp("tmp"), D("D");
        RDom k(0, A_.width(), "k"), k2(0, C_.height(), "k2");
        tmp(j, i) = 0.0;
        tmp(j, i) += alpha_ * A_(k, i) * B_(j, k);
        D(j, i) = D_(j, i) * beta_;
        D(j, i) += tmp(k2, i) * C_(j, k2);
        pipeline_ = Pipeline(D);
    }

    std::vector<std::string> size_names() const override { return {"NI", "NJ", "NK", "NL"}; }
    std::vector<int> default_sizes() const override { return {40, 50, 70, 80}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        int NI = sizes.at(0), NJ = sizes.at(1), NK = sizes.at(2), NL = sizes.at(3);
        alpha_.set(1.5);
        beta_.set(1.2);
        a_ = random_input(A_, {NK, NI}, rng);
        b_ = random_input(B_, {NJ, NK}, rng);
        c_ = random_input(C_, {NL, NJ}, rng);
        d_ = random_input(D_, {NL, NI}, rng);
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<double>(d_.width(), d_.height())}; }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        int NI = a_.height(), NJ = b_.width(), NK = a_.width(), NL = c_.width();
        double alpha = alpha_.get(), beta = beta_.get();
        Mat A = mat_of(a_), B = mat_of(b_), C = mat_of(c_), D = mat_of(d_), tmp = zeros(NI, NJ);
        for (int i = 0; i < NI; i++)
            for (int j = 0; j < NJ; j++) {
                tmp[i][j] = 0.0;
                for (int k = 0; k < NK; ++k) tmp[i][j] += alpha * A[i][k] * B[k][j];
            }
        for (int i = 0; i < NI; i++)
            for (int j = 0; j < NL; j++) {
                D[i][j] *= beta;
                for (int k = 0; k < NJ; ++k) D[i][j] += tmp[i][k] * C[k][j];
            }
        store(D, outputs.at(0));
    }

    double minimum_bytes() const override { return 8.0 * (elements({a_, b_, c_, d_}) + d_.number_of_elements()); }

private:
    InputBuffer<double> A_{"A", 2}, B_{"B", 2}, C_{"C", 2}, D_{"D_in", 2};
    Param<double> alpha_{"alpha"}, beta_{"beta"};
    Buffer<double> a_, b_, c_, d_;
};

// ---------------------------------------------------------------------------------------------
// linear-algebra/kernels/3mm: G = (A B) (C D).
class ThreeMM : public App {
public:
    ThreeMM() : App("pb_3mm") {
        Var i("i"), j("j");
        Func E("E"), F("F"), G("G");
        RDom k(0, A_.width(), "k"), m(0, C_.width(), "m"), l(0, B_.width(), "l");
        E(j, i) = 0.0;
        E(j, i) += A_(k, i) * B_(j, k);
        F(j, i) = 0.0;
        F(j, i) += C_(m, i) * D_(j, m);
        G(j, i) = 0.0;
        G(j, i) += E(l, i) * F(j, l);
        pipeline_ = Pipeline(G);
    }

    std::vector<std::string> size_names() const override { return {"NI", "NJ", "NK", "NL", "NM"}; }
    std::vector<int> default_sizes() const override { return {40, 50, 60, 70, 80}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        int NI = sizes.at(0), NJ = sizes.at(1), NK = sizes.at(2), NL = sizes.at(3), NM = sizes.at(4);
        a_ = random_input(A_, {NK, NI}, rng);
        b_ = random_input(B_, {NJ, NK}, rng);
        c_ = random_input(C_, {NM, NJ}, rng);
        d_ = random_input(D_, {NL, NM}, rng);
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<double>(d_.width(), a_.height())}; }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        int NI = a_.height(), NJ = b_.width(), NK = a_.width(), NL = d_.width(), NM = c_.width();
        Mat A = mat_of(a_), B = mat_of(b_), C = mat_of(c_), D = mat_of(d_);
        Mat E = zeros(NI, NJ), F = zeros(NJ, NL), G = zeros(NI, NL);
        for (int i = 0; i < NI; i++)
            for (int j = 0; j < NJ; j++) {
                E[i][j] = 0.0;
                for (int k = 0; k < NK; ++k) E[i][j] += A[i][k] * B[k][j];
            }
        for (int i = 0; i < NJ; i++)
            for (int j = 0; j < NL; j++) {
                F[i][j] = 0.0;
                for (int k = 0; k < NM; ++k) F[i][j] += C[i][k] * D[k][j];
            }
        for (int i = 0; i < NI; i++)
            for (int j = 0; j < NL; j++) {
                G[i][j] = 0.0;
                for (int k = 0; k < NJ; ++k) G[i][j] += E[i][k] * F[k][j];
            }
        store(G, outputs.at(0));
    }

    double minimum_bytes() const override { return 8.0 * (elements({a_, b_, c_, d_}) + double(d_.width()) * a_.height()); }

private:
    InputBuffer<double> A_{"A", 2}, B_{"B", 2}, C_{"C", 2}, D_{"D", 2};
    Buffer<double> a_, b_, c_, d_;
};

// ---------------------------------------------------------------------------------------------
// linear-algebra/kernels/doitgen: A[r][q][:] = A[r][q][:] C4 (PolyBench updates A in place
// through a temporary row; here the result is a new 3-D output).
class Doitgen : public App {
public:
    Doitgen() : App("pb_doitgen") {
        Var p("p"), q("q"), r("r");
        Func sum("doitgen");
        RDom s(0, A_.width(), "s");
        sum(p, q, r) = 0.0;
        sum(p, q, r) += A_(s, q, r) * C4_(p, s);
        pipeline_ = Pipeline(sum);
    }

    std::vector<std::string> size_names() const override { return {"NQ", "NR", "NP"}; }
    std::vector<int> default_sizes() const override { return {20, 25, 30}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        int NQ = sizes.at(0), NR = sizes.at(1), NP = sizes.at(2);
        a_ = random_input(A_, {NP, NQ, NR}, rng);
        c4_ = random_input(C4_, {NP, NP}, rng);
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<double>(a_.width(), a_.height(), a_.channels())}; }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        int NP = a_.width(), NQ = a_.height(), NR = a_.channels();
        std::vector<Mat> A(size_t(NR), zeros(NQ, NP));
        for (int r = 0; r < NR; r++)
            for (int q = 0; q < NQ; q++)
                for (int p = 0; p < NP; p++) A[r][q][p] = a_(p, q, r);
        Mat C4 = mat_of(c4_);
        Vec sum = zeros(NP);
        for (int r = 0; r < NR; r++)
            for (int q = 0; q < NQ; q++) {
                for (int p = 0; p < NP; p++) {
                    sum[p] = 0.0;
                    for (int s = 0; s < NP; s++) sum[p] += A[r][q][s] * C4[s][p];
                }
                for (int p = 0; p < NP; p++) A[r][q][p] = sum[p];
            }
        Buffer<double> out = outputs.at(0);
        for (int r = 0; r < NR; r++)
            for (int q = 0; q < NQ; q++)
                for (int p = 0; p < NP; p++) out(p, q, r) = A[r][q][p];
    }

    double minimum_bytes() const override { return 8.0 * (elements({a_, c4_}) + a_.number_of_elements()); }

private:
    InputBuffer<double> A_{"A", 3}, C4_{"C4", 2};
    Buffer<double> a_, c4_;
};

// ---------------------------------------------------------------------------------------------
// linear-algebra/blas/gemver: A' = A + u1 v1^T + u2 v2^T, x = x + beta A'^T y + z,
// w = w + alpha A' x. Outputs w (what PolyBench prints) and x.
class Gemver : public App {
public:
    Gemver() : App("pb_gemver") {
        Var i("i"), j("j");
        Func A("A_hat"), x("x"), w("w");
        RDom rj(0, A_.height(), "rj"), rj2(0, A_.width(), "rj2");
        A(j, i) = A_(j, i) + u1_(i) * v1_(j) + u2_(i) * v2_(j);
        x(i) = x_(i);
        x(i) += beta_ * A(i, rj) * y_(rj);
        x(i) = x(i) + z_(i);
        w(i) = w_(i);
        w(i) += alpha_ * A(rj2, i) * x(rj2);
        pipeline_ = Pipeline({w, x});
    }

    std::vector<std::string> size_names() const override { return {"N"}; }
    std::vector<int> default_sizes() const override { return {120}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        int N = sizes.at(0);
        alpha_.set(1.5);
        beta_.set(1.2);
        a_ = random_input(A_, {N, N}, rng);
        u1b_ = random_input(u1_, {N}, rng);
        v1b_ = random_input(v1_, {N}, rng);
        u2b_ = random_input(u2_, {N}, rng);
        v2b_ = random_input(v2_, {N}, rng);
        wb_ = random_input(w_, {N}, rng);
        xb_ = random_input(x_, {N}, rng);
        yb_ = random_input(y_, {N}, rng);
        zb_ = random_input(z_, {N}, rng);
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<double>(a_.width()), Buffer<double>(a_.width())}; }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        int N = a_.width();
        double alpha = alpha_.get(), beta = beta_.get();
        Mat A = mat_of(a_);
        Vec u1 = vec_of(u1b_), v1 = vec_of(v1b_), u2 = vec_of(u2b_), v2 = vec_of(v2b_), w = vec_of(wb_), x = vec_of(xb_),
            y = vec_of(yb_), z = vec_of(zb_);
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) A[i][j] = A[i][j] + u1[i] * v1[j] + u2[i] * v2[j];
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) x[i] = x[i] + beta * A[j][i] * y[j];
        for (int i = 0; i < N; i++) x[i] = x[i] + z[i];
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++) w[i] = w[i] + alpha * A[i][j] * x[j];
        store(w, outputs.at(0));
        store(x, outputs.at(1));
    }

    double minimum_bytes() const override { return 8.0 * (elements({a_, u1b_, v1b_, u2b_, v2b_, wb_, xb_, yb_, zb_}) + 2 * a_.width()); }

private:
    InputBuffer<double> A_{"A", 2}, u1_{"u1", 1}, v1_{"v1", 1}, u2_{"u2", 1}, v2_{"v2", 1}, w_{"w_in", 1}, x_{"x_in", 1},
        y_{"y", 1}, z_{"z", 1};
    Param<double> alpha_{"alpha"}, beta_{"beta"};
    Buffer<double> a_, u1b_, v1b_, u2b_, v2b_, wb_, xb_, yb_, zb_;
};

// ---------------------------------------------------------------------------------------------
// linear-algebra/blas/gesummv: y = alpha A x + beta B x.
class Gesummv : public App {
public:
    Gesummv() : App("pb_gesummv") {
        Var i("i");
        Func tmp("tmp"), yb("y_B"), y("y");
        RDom rj(0, A_.width(), "rj");
        // PolyBench writes tmp[i] = A[i][j] * x[j] + tmp[i]: the same sum (+ commutes exactly).
        tmp(i) = 0.0;
        tmp(i) += A_(rj, i) * x_(rj);
        yb(i) = 0.0;
        yb(i) += B_(rj, i) * x_(rj);
        y(i) = alpha_ * tmp(i) + beta_ * yb(i);
        pipeline_ = Pipeline(y);
    }

    std::vector<std::string> size_names() const override { return {"N"}; }
    std::vector<int> default_sizes() const override { return {90}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        int N = sizes.at(0);
        alpha_.set(1.5);
        beta_.set(1.2);
        a_ = random_input(A_, {N, N}, rng);
        b_ = random_input(B_, {N, N}, rng);
        xb_ = random_input(x_, {N}, rng);
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<double>(a_.width())}; }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        int N = a_.width();
        double alpha = alpha_.get(), beta = beta_.get();
        Mat A = mat_of(a_), B = mat_of(b_);
        Vec x = vec_of(xb_), tmp = zeros(N), y = zeros(N);
        for (int i = 0; i < N; i++) {
            tmp[i] = 0.0;
            y[i] = 0.0;
            for (int j = 0; j < N; j++) {
                tmp[i] = A[i][j] * x[j] + tmp[i];
                y[i] = B[i][j] * x[j] + y[i];
            }
            y[i] = alpha * tmp[i] + beta * y[i];
        }
        store(y, outputs.at(0));
    }

    double minimum_bytes() const override { return 8.0 * (elements({a_, b_, xb_}) + a_.width()); }

private:
    InputBuffer<double> A_{"A", 2}, B_{"B", 2}, x_{"x", 1};
    Param<double> alpha_{"alpha"}, beta_{"beta"};
    Buffer<double> a_, b_, xb_;
};

// ---------------------------------------------------------------------------------------------
// linear-algebra/blas/syrk and syr2k: the lower triangle (j <= i) of C = alpha A A^T + beta C
// (syr2k: alpha (A B^T + B A^T) + beta C); the upper triangle keeps C's values. The reduction's
// RDom is restricted to the triangle with RDom::where over the pure Vars.
class Syrk : public App {
public:
    explicit Syrk(bool two) : App(two ? "pb_syr2k" : "pb_syrk"), two_(two) {
        Var i("i"), j("j");
        Func C(two ? "syr2k" : "syrk");
        RDom k(0, A_.width(), "k");
        k.where(j <= i);
        C(j, i) = select(j <= i, C_(j, i) * beta_, C_(j, i));
        if (two) C(j, i) += A_(k, j) * alpha_ * B_(k, i) + B_(k, j) * alpha_ * A_(k, i);
        else C(j, i) += alpha_ * A_(k, i) * A_(k, j);
        pipeline_ = Pipeline(C);
    }

    std::vector<std::string> size_names() const override { return {"M", "N"}; }
    std::vector<int> default_sizes() const override { return {60, 80}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        int M = sizes.at(0), N = sizes.at(1);
        alpha_.set(1.5);
        beta_.set(1.2);
        c_ = random_input(C_, {N, N}, rng);
        a_ = random_input(A_, {M, N}, rng);
        if (two_) b_ = random_input(B_, {M, N}, rng);
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<double>(c_.width(), c_.height())}; }

    void reference(const std::vector<Buffer<void>> &outputs) const override {
        int M = a_.width(), N = a_.height();
        double alpha = alpha_.get(), beta = beta_.get();
        Mat A = mat_of(a_), C = mat_of(c_), B = two_ ? mat_of(b_) : Mat();
        for (int i = 0; i < N; i++) {
            for (int j = 0; j <= i; j++) C[i][j] *= beta;
            for (int k = 0; k < M; k++) {
                for (int j = 0; j <= i; j++) {
                    if (two_) C[i][j] += A[j][k] * alpha * B[i][k] + B[j][k] * alpha * A[i][k];
                    else C[i][j] += alpha * A[i][k] * A[j][k];
                }
            }
        }
        store(C, outputs.at(0));
    }

    double minimum_bytes() const override {
        return 8.0 * (elements({a_, c_}) + (two_ ? b_.number_of_elements() : 0) + c_.number_of_elements());
    }

private:
    bool two_;
    InputBuffer<double> A_{"A", 2}, B_{"B", 2}, C_{"C", 2};
    Param<double> alpha_{"alpha"}, beta_{"beta"};
    Buffer<double> a_, b_, c_;
};

// The datamining kernels' shape: data of M columns over N rows (input `data`, Param `float_n`
// = N), and an M x M output.
class ColumnStatistics : public App {
public:
    explicit ColumnStatistics(const std::string &name) : App(name) {}

    std::vector<std::string> size_names() const override { return {"M", "N"}; }
    std::vector<int> default_sizes() const override { return {80, 100}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        std::mt19937 rng(seed);
        int M = sizes.at(0), N = sizes.at(1);
        float_n_.set(double(N));
        d_ = random_input(data_, {M, N}, rng);
    }

    std::vector<Buffer<void>> make_outputs() const override { return {Buffer<double>(d_.width(), d_.width())}; }

    double minimum_bytes() const override { return 8.0 * (elements({d_}) + double(d_.width()) * d_.width()); }

protected:
    InputBuffer<double> data_{"data", 2};
    Param<double> float_n_{"float_n"};
    Buffer<double> d_;
};

// ---------------------------------------------------------------------------------------------
// datamining/covariance: the covariance of the columns of data, computed on the upper triangle
// (j >= i, an RDom restricted with where) and mirrored, as PolyBench does.
class Covariance : public ColumnStatistics {
public:
    Covariance() : ColumnStatistics("pb_covariance") {
        Var i("i"), j("j");
        Func mean("mean"), data("data_centered"), upper("cov_upper"), cov("cov");
        RDom n(0, data_.height(), "n"), k(0, data_.height(), "k");
        k.where(j >= i);
        mean(j) = 0.0;
        mean(j) += data_(j, n);
        mean(j) = mean(j) / float_n_;
        data(j, i) = data_(j, i) - mean(j);
        upper(j, i) = 0.0;
        upper(j, i) += data(i, k) * data(j, k);
        upper(j, i) = upper(j, i) / (float_n_ - 1.0);
        cov(j, i) = select(j >= i, upper(j, i), upper(i, j));
        pipeline_ = Pipeline(cov);
    }


    void reference(const std::vector<Buffer<void>> &outputs) const override {
        int M = d_.width(), N = d_.height();
        double float_n = float_n_.get();
        Mat data = mat_of(d_), cov = zeros(M, M);
        Vec mean = zeros(M);
        for (int j = 0; j < M; j++) {
            mean[j] = 0.0;
            for (int i = 0; i < N; i++) mean[j] += data[i][j];
            mean[j] /= float_n;
        }
        for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++) data[i][j] -= mean[j];
        for (int i = 0; i < M; i++)
            for (int j = i; j < M; j++) {
                cov[i][j] = 0.0;
                for (int k = 0; k < N; k++) cov[i][j] += data[k][i] * data[k][j];
                cov[i][j] /= (float_n - 1.0);
                cov[j][i] = cov[i][j];
            }
        store(cov, outputs.at(0));
    }

};

// ---------------------------------------------------------------------------------------------
// datamining/correlation: the correlation of the columns of data. Each column is centred and
// scaled by sqrt(N) times its standard deviation (1 where the deviation is at most 0.1, as
// PolyBench guards near-constant columns); the products are computed on the upper triangle
// (j > i, an RDom restricted with where) and mirrored, with ones on the diagonal.
class Correlation : public ColumnStatistics {
public:
    Correlation() : ColumnStatistics("pb_correlation") {
        Var i("i"), j("j");
        Func mean("mean"), variance("variance"), stddev("stddev"), data("data_scaled"), upper("corr_upper"),
            corr("corr");
        RDom n(0, data_.height(), "n"), k(0, data_.height(), "k");
        k.where(j > i);
        mean(j) = 0.0;
        mean(j) += data_(j, n);
        mean(j) = mean(j) / float_n_;
        variance(j) = 0.0;
        variance(j) += (data_(j, n) - mean(j)) * (data_(j, n) - mean(j));
        Expr deviation = sqrt(variance(j) / float_n_);
        stddev(j) = select(deviation <= 0.1, 1.0, deviation);
        data(j, i) = (data_(j, i) - mean(j)) / (sqrt(float_n_) * stddev(j));
        upper(j, i) = 0.0;
        upper(j, i) += data(i, k) * data(j, k);
        corr(j, i) = select(j == i, 1.0, j > i, upper(j, i), upper(i, j));
        pipeline_ = Pipeline(corr);
    }


    void reference(const std::vector<Buffer<void>> &outputs) const override {
        int M = d_.width(), N = d_.height();
        double float_n = float_n_.get(), eps = 0.1;
        Mat data = mat_of(d_), corr = zeros(M, M);
        Vec mean = zeros(M), stddev = zeros(M);
        for (int j = 0; j < M; j++) {
            mean[j] = 0.0;
            for (int i = 0; i < N; i++) mean[j] += data[i][j];
            mean[j] /= float_n;
        }
        for (int j = 0; j < M; j++) {
            stddev[j] = 0.0;
            for (int i = 0; i < N; i++) stddev[j] += (data[i][j] - mean[j]) * (data[i][j] - mean[j]);
            stddev[j] /= float_n;
            stddev[j] = std::sqrt(stddev[j]);
            stddev[j] = stddev[j] <= eps ? 1.0 : stddev[j];
        }
        for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++) {
                data[i][j] -= mean[j];
                data[i][j] /= std::sqrt(float_n) * stddev[j];
            }
        for (int i = 0; i < M - 1; i++) {
            corr[i][i] = 1.0;
            for (int j = i + 1; j < M; j++) {
                corr[i][j] = 0.0;
                for (int k = 0; k < N; k++) corr[i][j] += (data[k][i] * data[k][j]);
                corr[j][i] = corr[i][j];
            }
        }
        corr[M - 1][M - 1] = 1.0;
        store(corr, outputs.at(0));
    }

};

} // namespace

std::unique_ptr<App> make_pb_atax() { return std::make_unique<Atax>(); }
std::unique_ptr<App> make_pb_bicg() { return std::make_unique<Bicg>(); }
std::unique_ptr<App> make_pb_mvt() { return std::make_unique<Mvt>(); }
std::unique_ptr<App> make_pb_2mm() { return std::make_unique<TwoMM>(); }
std::unique_ptr<App> make_pb_3mm() { return std::make_unique<ThreeMM>(); }
std::unique_ptr<App> make_pb_doitgen() { return std::make_unique<Doitgen>(); }
std::unique_ptr<App> make_pb_gemver() { return std::make_unique<Gemver>(); }
std::unique_ptr<App> make_pb_gesummv() { return std::make_unique<Gesummv>(); }
std::unique_ptr<App> make_pb_syrk() { return std::make_unique<Syrk>(false); }
std::unique_ptr<App> make_pb_syr2k() { return std::make_unique<Syrk>(true); }
std::unique_ptr<App> make_pb_covariance() { return std::make_unique<Covariance>(); }
std::unique_ptr<App> make_pb_correlation() { return std::make_unique<Correlation>(); }

} // namespace tessera::apps
