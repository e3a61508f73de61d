// Every misuse of the DSL throws a tessera::UserError whose message names what is wrong and
// says what to do.
#include "../test_util.h"

using namespace tessera;

TEST_CASE("user errors and internal errors are distinct kinds of tessera::Error", "[dsl][errors]") {
    try {
        user_error("bad");
    } catch (const UserError &e) {
        CHECK(std::string(e.what()) == "bad");
    }
    try {
        internal_error("broken");
    } catch (const UserError &) {
        FAIL("an internal error must not be a user error");
    } catch (const InternalError &e) {
        CHECK(std::string(e.what()).find("broken") != std::string::npos);
        const Error &base = e;
        CHECK(std::string(base.what()).find("Tessera bug") != std::string::npos);
    }
}

TEST_CASE("calling a Func with the wrong number of arguments is an error", "[dsl][errors]") {
    Var x("x"), y("y");
    Func f("f"), g("g");
    f(x, y) = x + y;
    REQUIRE_USER_ERROR(g(x) = f(x), "Func f", "2 dimensions", "1 arguments", "arity");
    REQUIRE_USER_ERROR(f(x, y, x) = 1, "Func f", "2 dimensions", "3 arguments");
}

TEST_CASE("using a Func before it is defined is an error", "[dsl][errors]") {
    Var x("x");
    Func f("f"), g("g");
    REQUIRE_USER_ERROR(g(x) = f(x) + 1, "Func f", "undefined Func", "Define f");
    REQUIRE_USER_ERROR(Pipeline(g).realize({4}), "g", "undefined");
    REQUIRE_USER_ERROR(g.type(), "Func g is undefined");
}

TEST_CASE("a recursive pure definition is an error", "[dsl][errors]") {
    Var x("x");
    Func f("f"), h("h");
    REQUIRE_USER_ERROR(f(x) = f(x - 1) + 1, "Func f", "recursive pure definition");
    REQUIRE_USER_ERROR(h(x) = h(x), "Func h", "recursive pure definition", "update definition");
}

TEST_CASE("an update whose type differs from the pure definition is an error", "[dsl][errors]") {
    Var x("x");
    InputBuffer<float> in("in", 1);
    Func f("f");
    f(x) = 0;
    REQUIRE_USER_ERROR(f(x) = in(x), "Type mismatch", "Func f", "int32", "float32", "Cast");
    REQUIRE_USER_ERROR(f(x) = 0.5f, "Type mismatch", "Func f");
}

TEST_CASE("a pure definition with a repeated Var is an error", "[dsl][errors]") {
    Var x("x");
    Func f("f");
    REQUIRE_USER_ERROR(f(x, x) = x, "Func f", "Var x", "more than once");
}

TEST_CASE("a pure definition with a non-Var argument is an error", "[dsl][errors]") {
    Var x("x");
    Func f("f");
    REQUIRE_USER_ERROR(f(x + 1) = x, "Func f", "must have Vars", "(x + 1)");
    REQUIRE_USER_ERROR(f(3) = 1, "Func f", "must have Vars");
}

TEST_CASE("a free variable on the right that is not bound on the left is an error", "[dsl][errors]") {
    Var x("x"), y("y");
    Func f("f"), g("g");
    REQUIRE_USER_ERROR(f(x) = x + y, "free variable y", "not bound on the left", "f(x)");
    g(x) = x;
    REQUIRE_USER_ERROR(g(x) = g(x) + y, "Func g", "free variable y", "not bound on the left");
}

TEST_CASE("RDom variables on the left of a pure definition are an error", "[dsl][errors]") {
    RDom r(0, 10, "r");
    Func f("f");
    REQUIRE_USER_ERROR(f(r) = 1, "Func f", "RDom variable r.x", "pure definition");
}

TEST_CASE("RDom variables on the right of a pure definition are an error", "[dsl][errors]") {
    Var x("x");
    RDom r(0, 10, "r");
    Func f("f");
    REQUIRE_USER_ERROR(f(x) = x + r, "Func f", "RDom variable", "inline reduction");
}

TEST_CASE("a float-typed index is an error", "[dsl][errors]") {
    Var x("x");
    InputBuffer<float> in("in", 1);
    Func f("f"), g("g");
    f(x) = x;
    REQUIRE_USER_ERROR(g(x) = f(x * 0.5f), "Func f", "float32", "float-typed index");
    REQUIRE_USER_ERROR(g(x) = in(in(x)), "InputBuffer in", "float-typed index");
}

TEST_CASE("realize with the wrong number of sizes is an error", "[dsl][errors]") {
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = x * y;
    REQUIRE_USER_ERROR(f.realize({10}), "Func f", "2 dimensions", "1 sizes");
    REQUIRE_USER_ERROR(f.realize({10, 10, 10}), "Func f", "2 dimensions", "3 sizes");
    REQUIRE_USER_ERROR(f.realize(Buffer<int>(10)), "Func f", "2 dimensions");
    REQUIRE_USER_ERROR(f.realize(Buffer<float>(10, 10)), "Func f", "int32", "float32");
}

TEST_CASE("an unbound InputBuffer or Param is an error at realize", "[dsl][errors]") {
    std::string way = RUN_WAYS();
    INFO("run by " << way);
    Var x("x");
    InputBuffer<float> in("image", 1);
    Param<float> gain("gain");
    Func f("f");
    f(x) = in(x) * gain;
    REQUIRE_USER_ERROR(test_util::run_as(way, f, {4}), "InputBuffer image", "not bound", "image.set(");
    in.set(Buffer<float>(4));
    REQUIRE_USER_ERROR(test_util::run_as(way, f, {4}), "Param gain", "no value", "gain.set(");
    gain.set(2.f);
    CHECK_NOTHROW(test_util::run_as(way, f, {4}));
}

TEST_CASE("an input buffer smaller than the region the pipeline reads is an error", "[dsl][errors]") {
    std::string way = RUN_WAYS();
    INFO("run by " << way);
    Var x("x"), y("y");
    InputBuffer<float> in("input", 2);
    Func blur("blur");
    blur(x, y) = in(x - 1, y) + in(x + 1, y + 2);
    in.set(Buffer<float>(10, 10));
    // Output 10 x 6 needs x in [-1, 10] and y in [0, 7].
    REQUIRE_USER_ERROR(test_util::run_as(way, blur, {10, 6}), "InputBuffer input", "too small", "dimension 0",
                       "needs [-1, 10]", "covers [0, 9]", "BoundaryConditions");
    Buffer<float> shifted(12, 10);
    shifted.set_min({-1, 0});
    in.set(shifted);
    CHECK_NOTHROW(test_util::run_as(way, blur, {10, 6}));
    REQUIRE_USER_ERROR(test_util::run_as(way, blur, {10, 9}), "InputBuffer input", "dimension 1", "needs [0, 10]",
                       "covers [0, 9]");
}

TEST_CASE("binding a buffer of the wrong type or dimensionality is an error", "[dsl][errors]") {
    InputBuffer<float> in("in", 2);
    REQUIRE_USER_ERROR(in.set(Buffer<int>(3, 3)), "InputBuffer in", "float32", "int32");
    REQUIRE_USER_ERROR(in.set(Buffer<float>(3)), "InputBuffer in", "2 dimensions", "with 1");
}

TEST_CASE("an index that cannot be bounded is an error naming the callee", "[dsl][errors]") {
    std::string way = RUN_WAYS();
    INFO("run by " << way);
    Var x("x");
    InputBuffer<float> lut("lut", 1);
    InputBuffer<int> idx("idx", 1);
    Func f("f");
    f(x) = lut(idx(x));
    lut.set(Buffer<float>(256));
    idx.set(Buffer<int>(8));
    REQUIRE_USER_ERROR(test_util::run_as(way, f, {8}), "Cannot bound the region of lut", "read by f", "Clamp");
    Func g("g");
    g(x) = lut(clamp(idx(x), 0, 255));
    CHECK_NOTHROW(test_util::run_as(way, g, {8}));
}

TEST_CASE("operators reject operands of the wrong kind", "[dsl][errors]") {
    Var x("x");
    REQUIRE_USER_ERROR(x && x, "operator&&", "bool operands", "int32");
    REQUIRE_USER_ERROR(select(x, 1, 2), "select", "condition", "must be bool");
    REQUIRE_USER_ERROR(cast<float>(x) << 1, "operator<<", "integer operands");
    REQUIRE_USER_ERROR(cast<uint8_t>(x) + 300, "constant 300", "does not fit in uint8");
    REQUIRE_USER_ERROR(Expr() + 1, "undefined Expr");
    REQUIRE_USER_ERROR(sum(x + 1), "sum", "no RDom variable");
}

TEST_CASE("update definitions must keep pure Vars in their own position", "[dsl][errors]") {
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = 0;
    REQUIRE_USER_ERROR(f(y, x) = 1, "Func f", "argument 0 is the Var y", "own position");
    RDom r(0, 3);
    REQUIRE_USER_ERROR(f(x + r, y) = 1, "Func f", "uses the Var x");
}

TEST_CASE("an update may use one RDom only", "[dsl][errors]") {
    Var x("x");
    RDom r(0, 3, "r"), s(0, 3, "s");
    Func f("f");
    f(x) = 0;
    REQUIRE_USER_ERROR(f(r) = f(r) + s, "Func f", "2 RDoms", "single RDom");
}

TEST_CASE("RDom bounds may not depend on Vars or computed values", "[dsl][errors]") {
    Var x("x");
    InputBuffer<int> in("in", 1);
    REQUIRE_USER_ERROR(RDom(0, x, "r"), "RDom r", "extent", "Var x");
    REQUIRE_USER_ERROR(RDom(in(0), 4, "q"), "RDom q", "min", "reads in");
    REQUIRE_USER_ERROR(RDom(0, 1.5f, "p"), "RDom p", "must be integers");
}

TEST_CASE("an output whose updates reach outside the output buffer is an error", "[dsl][errors]") {
    std::string way = RUN_WAYS();
    INFO("run by " << way);
    Var x("x");
    Func f("f");
    RDom r(0, 5, "r");
    f(x) = x;
    f(r) = f(r + 1);
    REQUIRE_USER_ERROR(test_util::run_as(way, f, {5}), "Func f is an output", "[0, 5]", "covers [0, 4]");
}

TEST_CASE("an expression that doubles at each step of a C++ loop is an error, not an exponential compile",
          "[dsl][errors]") {
    // e is used twice in each step: 70 steps share 70 nodes but are 2^70 written out. Every
    // pass walks expressions as trees, so before this check the definition itself never ended.
    Var x("x");
    Param<int> p("p");
    Expr e = x;
    for (int k = 0; k < 70; ++k) e = select(p > k, e * 3, e - 1);
    CHECK(ir::expanded_size(e, UINT64_MAX) == UINT64_MAX);  // saturates
    Func f("f");
    REQUIRE_USER_ERROR(f(x) = e, "The definition of Func f", "more than 100000 nodes", "in a Func of its own");
    f(x) = x;
    REQUIRE_USER_ERROR(f(x) += e, "The definition of Func f", "more than 100000 nodes");
    Func g("g");
    g(x) = 0;
    REQUIRE_USER_ERROR(g(e) = 1, "The definition of Func g", "more than 100000 nodes");
    RDom r(0, 4, "r");
    REQUIRE_USER_ERROR(r.where(e > 0), "RDom r", "where()", "more than 100000 nodes");

    // Sharing that stays small is fine, and the shared value is computed as written: 12 steps
    // (about 2^12 * 5 nodes written out) compile and match the interpreter.
    Expr small = x;
    for (int k = 0; k < 12; ++k) small = select(p > k, small * 3, small - 1);
    CHECK(ir::expanded_size(small, UINT64_MAX) < detail::kMaxExpandedNodes);
    Func h("h");
    h(x) = small;
    p.set(5);
    Buffer<int> got(19), want(19);
    Pipeline(h).realize({got});
    interpret(Pipeline(h), {want});
    for (int i = 0; i < 19; ++i) CHECK(got(i) == want(i));
}

TEST_CASE("an expression nested deeper than the compiler's stack allows is an error, not a crash", "[dsl][errors]") {
    // e = e + in(x + i) in a C++ loop grows one level per step. Every pass recurses through
    // operands; before this check a chain 30,000 deep overflowed the stack in vector lowering.
    Var x("x");
    Buffer<float> in({20}, "in");
    for (int i = 0; i < 20; ++i) in(i) = float(i % 5) - 1.5f;
    auto chain = [&](uint64_t depth) {
        // The first step gives depth 5 (+, *, the call, + and x); each further step adds one.
        Expr e = in(x);
        for (uint64_t d = 0; d + 3 < depth; ++d) e = e + in(x + int(d % 7)) * 0.25f;
        return e;
    };
    Expr deepest = chain(detail::kMaxExprDepth);
    CHECK(ir::expression_depth(deepest) == detail::kMaxExprDepth);
    Expr too_deep = in(x);
    while (ir::expression_depth(too_deep) <= detail::kMaxExprDepth) too_deep = too_deep + 1.0f;
    Func f("f");
    REQUIRE_USER_ERROR(f(x) = too_deep, "The definition of Func f", "nested", "levels deep", "at most 4096",
                       "as a reduction");
    f(x) = x;
    REQUIRE_USER_ERROR(f(x) += cast<int>(too_deep), "The definition of Func f", "levels deep");
    RDom r(0, 4, "r");
    REQUIRE_USER_ERROR(r.where(too_deep + r.x > 0.f), "RDom r", "where()", "levels deep");
    Func s("s");
    REQUIRE_USER_ERROR(s(x) = sum(too_deep + r.x), "The expression given to sum", "levels deep");

    // A chain far deeper than any stack can check and free without recursing.
    Expr enormous = x;
    for (int i = 0; i < 200000; ++i) enormous = enormous * x;  // (x + 1 + 1 would fold)
    CHECK(ir::expression_depth(enormous) == 200001);
    Func g("g");
    REQUIRE_USER_ERROR(g(x) = enormous, "The definition of Func g", "200001 levels deep");
    enormous = Expr();  // freed here: would overflow the stack if released recursively

    // At the limit, the chain compiles and matches the interpreter.
    Func h("h");
    h(x) = deepest;
    Buffer<float> got(13), want(13);
    Pipeline p(h);
    p.compile(Target::host(), {}).realize(got);
    interpret(p, {want});
    for (int i = 0; i < 13; ++i) CHECK(got(i) == want(i));
}
