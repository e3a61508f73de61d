// Structural equality of expressions (dsl/structural_equality.h), and the model's use of it: a
// statement's calls are read once per distinct call, however many times inlining repeats them.
#include "../test_util.h"

#include <cmath>

#include <tessera/structural_equality.h>
#include <tessera/poly/model.h>

using namespace tessera;

TEST_CASE("calls built separately are structurally equal, and calls of another Func or at another point are not", "[dsl][equality]") {
    Var x("x"), y("y");
    Func f("f"), g("f");  // two Funcs, one name
    f(x, y) = x + y;
    g(x, y) = x - y;
    CHECK(ir::structurally_equal(f(x - 1, y), f(x - 1, y)));
    CHECK_FALSE(ir::structurally_equal(f(x - 1, y), f(x + 1, y)));
    CHECK_FALSE(ir::structurally_equal(f(x - 1, y), g(x - 1, y)));
    CHECK_FALSE(ir::structurally_equal(f(x - 1, y), f(y - 1, x)));
}

TEST_CASE("structural equality tells apart a Var and a Param of one name, constant types, and signed zeros", "[dsl][equality]") {
    Var x("x");
    Param<int> p("x");
    Expr var = x, param = p;
    CHECK_FALSE(ir::structurally_equal(var + 1, param + 1));
    CHECK_FALSE(ir::structurally_equal(Expr(int32_t(1)), Expr(int64_t(1))));
    CHECK_FALSE(ir::structurally_equal(Expr(0.0f), Expr(-0.0f)));
    CHECK_FALSE(ir::structurally_equal(Expr(1.0f), Expr(1.0)));
    CHECK(ir::structurally_equal(Expr(0.5f) * x, Expr(0.5f) * x));
}

TEST_CASE("structural equality of two DAGs built apart takes time linear in their distinct nodes", "[dsl][equality]") {
    // Each 2^60 nodes as a tree: compared as trees, this would not finish.
    Var x("x");
    auto build = [&] {
        Expr e = x;
        for (int i = 0; i < 60; ++i) e = select(e > 3, e * 3, e - 1);
        return e;
    };
    Expr a = build(), b = build();
    CHECK_FALSE(a.same_as(b));
    CHECK(ir::structurally_equal(a, b));
    ir::ExprSet set;
    CHECK(set.insert(a));
    CHECK_FALSE(set.insert(b));
}

TEST_CASE("an ExprSet keeps one of each structurally equal expression", "[dsl][equality]") {
    Var x("x");
    Func f("f");
    f(x) = x * 2;
    ir::ExprSet set;
    CHECK(set.insert(f(x + 1)));
    CHECK_FALSE(set.insert(f(x + 1)));
    CHECK(set.insert(f(x + 2)));
    CHECK(set.insert(f(x) + 1));
    CHECK_FALSE(set.insert(f(x) + 1));
}

TEST_CASE("the model reads each distinct point once, however many times inlining repeats its call", "[poly][equality]") {
    Var x("x"), y("y");
    InputBuffer<float> in("in", 2);
    Func ix("ix"), sq("sq"), out("out");
    ix(x, y) = in(x + 1, y) - in(x - 1, y);
    sq(x, y) = ix(x, y) * ix(x, y);  // one-to-one: inlined into out, its two calls of ix each time
    out(x, y) = sq(x, y) + sq(x, y + 1) + sq(x, y) * sq(x, y + 1);
    std::shared_ptr<const poly::Model> m(poly::build_model(Pipeline(out)));
    const poly::Statement *consumer = nullptr;
    for (const poly::Statement &s : m->statements)
        if (s.func->name == "out") consumer = &s;
    REQUIRE(consumer != nullptr);
    // ix at (x, y) and (x, y + 1), whether ix is stored or itself inlined (then the input at
    // four points).
    CHECK((consumer->reads.size() == 2 || consumer->reads.size() == 4));

    Buffer<float> input(37, 23);
    for (int j = 0; j < 23; ++j)
        for (int i = 0; i < 37; ++i) input(i, j) = std::sin(float(i * 7 + j * 3));
    in.set(input);
    Buffer<float> result(35, 22);
    result.set_min({1, 0});
    Pipeline(out).realize({result});
    for (int j = 0; j < 22; ++j)
        for (int i = 1; i < 36; ++i) {
            float a = input(i + 1, j) - input(i - 1, j), b = input(i + 1, j + 1) - input(i - 1, j + 1);
            CHECK(result(i, j) == Approx(a * a + b * b + (a * a) * (b * b)).margin(1e-5));
        }
}
