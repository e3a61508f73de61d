// Subexpressions of an update invariant along its vector loop, computed once as Funcs of their
// own (poly/invariant_subexpressions.h): which get a copy, and the results against the
// reference interpreter (which computes them in place), exactly, at sizes around the tiles and
// register tiles, with non-zero mins.
#include "poly_test_util.h"

#include <random>

#include <nlohmann/json.hpp>

using namespace tessera;
using json = nlohmann::json;
using poly_test::check_against_interpreter;
using poly_test::funcs_of;
using poly_test::has;
using poly_test::random_buffer;

TEST_CASE("gemm's alpha * A(k, i), invariant along the vector loop j, is computed once per element of A", "[poly][invariant]") {
    Var j("j"), i("i");
    InputBuffer<double> A("A", 2), B("B", 2), C0("C0", 2);
    Param<double> alpha("alpha"), beta("beta");
    RDom k(0, A.width(), "k");
    Func C("C");
    C(j, i) = C0(j, i) * beta;
    C(j, i) += alpha * A(k, i) * B(j, k);
    Pipeline p(C);
    CHECK(has(funcs_of(p), "C_invariant"));
    // Its value is the factor as written, over (k, i).
    std::shared_ptr<const poly::Model> m = poly::build_model(p);
    const FuncContents *copy = nullptr;
    for (const auto &f : m->graph.funcs)
        if (f->name == "C_invariant") copy = f.get();
    REQUIRE(copy);
    CHECK(copy->pure_args.size() == 2);
    CHECK(to_string(copy->pure.value).find("alpha") != std::string::npos);
    alpha.set(1.5);
    beta.set(1.2);
    // Sizes below, at and around the register tile (8 rows by 16 columns) and the tiles, one
    // and prime sizes, and non-zero mins of the output.
    for (auto [ni, nj, nk] : {std::tuple{1, 1, 1}, {7, 13, 5}, {8, 16, 32}, {9, 17, 33}, {33, 65, 31}, {67, 129, 71}}) {
        A.set(random_buffer<double>({nk, ni + 2}, {0, 0}, uint32_t(ni)));
        B.set(random_buffer<double>({nj + 3, nk}, {0, 0}, uint32_t(nj)));
        C0.set(random_buffer<double>({nj + 3, ni + 2}, {0, 0}, uint32_t(nk)));
        for (std::vector<int64_t> mins : {std::vector<int64_t>{0, 0}, {3, 2}})
            check_against_interpreter(p, {nj, ni}, mins,
                                      "gemm " + std::to_string(ni) + " x " + std::to_string(nj) + " x " + std::to_string(nk));
    }
}

TEST_CASE("a factor reading a Func and an input, with a math function, is hoisted with the Func as its callee", "[poly][invariant]") {
    Var x("x"), y("y"), j("j"), i("i");
    InputBuffer<double> A("A", 2), B("B", 2), w("w", 1);
    Func P("P"), C("C");
    P(x, y) = A(x, y) * 2.0 + 1.0;
    RDom k(0, A.width(), "k");
    C(j, i) = 0.0;
    C(j, i) += sqrt(P(k, i) * P(k, i) + w(k)) * B(j, k);
    P.compute_root();  // (a directive: nothing is hoisted)
    CHECK_FALSE(has(funcs_of(Pipeline(C)), "C_invariant"));

    Func P2("P2"), C2("C2");
    P2(x, y) = A(x, y) * 2.0 + 1.0;
    C2(j, i) = 0.0;
    C2(j, i) += sqrt(P2(k, i) * P2(k, i) + w(k)) * B(j, k);
    Pipeline p(C2);
    CHECK(has(funcs_of(p), "C2_invariant"));
    for (int n : {1, 9, 40}) {
        A.set(random_buffer<double>({n + 1, n}, {0, 0}, uint32_t(n)));
        B.set(random_buffer<double>({n + 2, n + 1}, {0, 0}, uint32_t(n + 1)));
        Buffer<double> wb = random_buffer<double>({n + 1}, {0}, 5);
        for (int e = 0; e < n + 1; ++e) wb(e) = std::abs(wb(e));
        w.set(wb);
        check_against_interpreter(p, {n + 2, n}, {0, 0}, "n = " + std::to_string(n));
    }
}

TEST_CASE("what varies along the vector loop, a bare call, a shifted index or a triangular reduction is not hoisted",
          "[poly][invariant]") {
    Var j("j"), i("i");
    InputBuffer<double> A("A", 2), B("B", 2), x("x", 1);
    Param<double> alpha("alpha");
    alpha.set(0.5);
    RDom k(0, A.width() - 1, "k");
    // A matrix-vector product: alpha * A(k, i) involves the store's own Var i.
    Func w("w");
    w(i) = 0.0;
    w(i) += alpha * A(k, i) * x(k);
    CHECK_FALSE(has(funcs_of(Pipeline(w)), "w_invariant"));
    // A bare call (nothing to compute once) and a shifted index (the copy would read other elements).
    Func c1("c1"), c2("c2");
    c1(j, i) = 0.0;
    c1(j, i) += A(k, i) * B(j, k);
    CHECK_FALSE(has(funcs_of(Pipeline(c1)), "c1_invariant"));
    c2(j, i) = 0.0;
    c2(j, i) += alpha * A(k + 1, i) * B(j, k);
    CHECK_FALSE(has(funcs_of(Pipeline(c2)), "c2_invariant"));
    // Triangular in the vector loop (syrk's lower triangle): no register tiles, LLVM hoists it.
    RDom t(0, A.width(), "t");
    t.where(j <= i);
    Func s("s");
    s(j, i) = 0.0;
    s(j, i) += alpha * A(t, i) * A(t, j);
    CHECK_FALSE(has(funcs_of(Pipeline(s)), "s_invariant"));
    // Not on GPU targets.
    Func g("g");
    g(j, i) = 0.0;
    g(j, i) += alpha * A(k, i) * B(j, k);
    Pipeline pg(g);
    CHECK(has(funcs_of(pg), "g_invariant"));
    std::shared_ptr<const poly::Model> gpu = poly::build_model(pg, "", true);
    bool hoisted_for_gpu = false;
    for (const auto &f : gpu->graph.funcs) hoisted_for_gpu = hoisted_for_gpu || f->name == "g_invariant";
    CHECK_FALSE(hoisted_for_gpu);
    // The shifted one still computes what it should.
    for (int n : {2, 17}) {
        A.set(random_buffer<double>({n + 1, n}, {0, 0}, uint32_t(n)));
        B.set(random_buffer<double>({n, n}, {0, 0}, uint32_t(n + 7)));
        check_against_interpreter(Pipeline(c2), {n, n}, {0, 0}, "shifted, n = " + std::to_string(n));
    }
}
