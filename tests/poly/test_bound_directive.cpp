// Func::bound and Func::align_bounds: the region a Func is computed over, set or widened by the
// user. Compiled code, the AST interpreter and the reference interpreter compute the same
// values and the same regions, and all three reject a run that needs a Func outside its bound.
#include "../test_util.h"

#include <tessera/pipeline_text.h>
#include <tessera/poly/ast_interpreter.h>
#include <tessera/poly/scheduler.h>

using namespace tessera;

namespace {

Buffer<float> random_image(int w, int h, uint32_t seed, int min = 0) {
    Buffer<float> b(std::vector<int>{w, h});
    b.set_min({min, min});
    uint32_t s = seed;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            s = s * 1664525u + 1013904223u;
            b(x + min, y + min) = float(s >> 8) / float(1 << 24);
        }
    return b;
}

bool same(const Buffer<float> &a, const Buffer<float> &b) {
    for (int y = a.min(1); y < a.min(1) + a.extent(1); ++y)
        for (int x = a.min(0); x < a.min(0) + a.extent(0); ++x)
            if (a(x, y) != b(x, y)) return false;
    return true;
}

// h(x, y) = g(x, y) + g(x + 1, y), g(x, y) = in(x, y) + 1: g is needed over h's region and one
// column more.
struct TwoStage {
    Var x{"x"}, y{"y"};
    Func g{"g"}, h{"h"};
    Buffer<float> in = random_image(96, 40, 7, -20);
    TwoStage() {
        g(x, y) = in(x, y) + 1.0f;
        h(x, y) = g(x, y) + g(x + 1, y) * 0.5f;
    }
};

// Runs `p` compiled, through the AST interpreter (its parallel loops backwards) and through the
// reference interpreter over w x h at (mx, my); all three must agree. Returns g's region as the
// reference interpreter computed it.
std::vector<std::pair<int64_t, int64_t>> run_three_ways(const Pipeline &p, int w, int h, int mx, int my,
                                                        const std::string &func = "g") {
    Buffer<float> compiled(std::vector<int>{w, h}), ast(std::vector<int>{w, h}), reference(std::vector<int>{w, h});
    for (Buffer<float> *b : {&compiled, &ast, &reference}) b->set_min({mx, my});
    p.compile(Target::host(), {}).realize(compiled);
    poly::ExecuteOptions eo;
    eo.reverse_parallel_loops = true;
    poly::execute(poly::schedule_pipeline(p), {Buffer<void>(ast)}, eo);
    InterpretReport report;
    interpret(p, {Buffer<void>(reference)}, &report);
    INFO(w << " x " << h << " at (" << mx << ", " << my << ")");
    CHECK(same(compiled, reference));
    CHECK(same(ast, reference));
    return report.computed_region[func];
}

} // namespace

TEST_CASE("bound computes an intermediate over exactly the bound, under the automatic schedule too", "[directives][bound]") {
    TwoStage t;
    t.g.bound(t.x, -10, 60);
    Pipeline p(t.h);
    CHECK(p.auto_scheduled());
    for (auto [w, mx] : {std::pair{30, 0}, std::pair{17, -10}, std::pair{59, -10}, std::pair{1, 48}}) {
        auto region = run_three_ways(p, w, 7, mx, 3);
        REQUIRE(region.size() == 2);
        CHECK(region[0] == std::pair<int64_t, int64_t>{-10, 49});
    }
}

TEST_CASE("a run that needs a bounded Func outside its bound fails in every way of running, naming it", "[directives][bound]") {
    TwoStage t;
    t.g.bound(t.x, -10, 60);
    Pipeline p(t.h);
    // h over [-10, 49] needs g over [-10, 50].
    for (auto [w, mx] : {std::pair{60, -10}, std::pair{5, -11}}) {
        Buffer<float> out(std::vector<int>{w, 4});
        out.set_min({mx, 0});
        INFO(w << " at " << mx);
        REQUIRE_USER_ERROR(p.compile(Target::host(), {}).realize(out), "Func g is computed over [-10, 49] in dimension 0 (x)",
                           "by its bound()", "Widen the bound");
        REQUIRE_USER_ERROR(interpret(p, {Buffer<void>(out)}), "Func g is computed over [-10, 49] in dimension 0 (x)");
        REQUIRE_USER_ERROR(poly::execute(poly::schedule_pipeline(p), {Buffer<void>(out)}),
                           "Func g is computed over [-10, 49] in dimension 0 (x)");
    }
}

TEST_CASE("a bound given by a Param follows its value", "[directives][bound]") {
    TwoStage t;
    Param<int> n("n");
    t.g.bound(t.y, 2, n);
    Pipeline p(t.h);
    n.set(9);
    CHECK(run_three_ways(p, 13, 9, -4, 2)[1] == std::pair<int64_t, int64_t>{2, 10});
    CHECK(run_three_ways(p, 13, 3, -4, 5)[1] == std::pair<int64_t, int64_t>{2, 10});
    n.set(3);
    CHECK(run_three_ways(p, 13, 3, -4, 2)[1] == std::pair<int64_t, int64_t>{2, 4});
    Buffer<float> out(std::vector<int>{13, 4});
    out.set_min({0, 2});
    REQUIRE_USER_ERROR(p.compile(Target::host(), {}).realize(out), "Func g is computed over [2, 4] in dimension 1 (y)",
                       "needs it over [2, 5]");
}

TEST_CASE("bound on an output makes its range constant, so that the loop unrolls completely", "[directives][bound]") {
    Var x("x"), y("y"), c("c");
    Buffer<float> in = random_image(32, 32, 3);
    Func f("f");
    f(x, y, c) = in(x, y) * cast<float>(c + 1) + cast<float>(c);
    f.bound(c, 0, 3).unroll(c);
    Pipeline p(f);
    std::string nest = p.compile(Target::host(), {}).compiler_ir("loop_nest");
    INFO(nest);
    // No loop over c is left: its three iterations are unrolled.
    CHECK(nest.find("for c") == std::string::npos);
    Buffer<float> got(std::vector<int>{19, 23, 3}), want(std::vector<int>{19, 23, 3});
    p.compile(Target::host(), {}).realize(got);
    interpret(p, {Buffer<void>(want)});
    bool equal = true;
    for (int k = 0; k < 3; ++k)
        for (int j = 0; j < 23; ++j)
            for (int i = 0; i < 19; ++i) equal = equal && got(i, j, k) == want(i, j, k);
    CHECK(equal);
    // The output buffer must cover the bound exactly.
    Buffer<float> wide(std::vector<int>{8, 8, 4}), narrow(std::vector<int>{8, 8, 2});
    REQUIRE_USER_ERROR(p.compile(Target::host(), {}).realize(wide), "Func f is computed over [0, 2] in dimension 2 (c)",
                       "needs it over [0, 3]");
    REQUIRE_USER_ERROR(interpret(p, {Buffer<void>(wide)}), "Func f is computed over [0, 2] in dimension 2 (c)");
    REQUIRE_USER_ERROR(p.compile(Target::host(), {}).realize(narrow), "Func f is an output", "covers [0, 1]");
}

TEST_CASE("align_bounds widens the region to aligned ends, for parametric and constant regions", "[directives][bound]") {
    SECTION("parametric: the output's region") {
        TwoStage t;
        t.g.align_bounds(t.x, 8);
        Pipeline p(t.h);
        // h over x in [-3, 9] needs g over [-3, 10]: widened to [-8, 15].
        CHECK(run_three_ways(p, 13, 5, -3, 0)[0] == std::pair<int64_t, int64_t>{-8, 15});
        CHECK(run_three_ways(p, 16, 5, 0, 0)[0] == std::pair<int64_t, int64_t>{0, 23});
        CHECK(run_three_ways(p, 1, 1, 7, 0)[0] == std::pair<int64_t, int64_t>{0, 15});
    }
    SECTION("with a remainder") {
        TwoStage t;
        t.g.align_bounds(t.x, 4, 1);
        Pipeline p(t.h);
        // -3 is 1 modulo 4; 10 rounds up to 12.
        CHECK(run_three_ways(p, 13, 5, -3, 0)[0] == std::pair<int64_t, int64_t>{-3, 12});
        CHECK(run_three_ways(p, 12, 5, -2, 0)[0] == std::pair<int64_t, int64_t>{-3, 12});
    }
    SECTION("constant: a bound, widened") {
        TwoStage t;
        t.g.bound(t.x, 1, 30).align_bounds(t.x, 8);
        Pipeline p(t.h);
        CHECK(run_three_ways(p, 20, 5, 3, 0)[0] == std::pair<int64_t, int64_t>{0, 31});
        CHECK(constant_bound(*t.g.contents(), 0) == std::pair<int64_t, int64_t>{0, 32});
    }
}

TEST_CASE("bound and align_bounds are part of the pipeline text, so the compile cache tells them apart", "[directives][bound]") {
    TwoStage t;
    Pipeline p(t.h);
    std::string plain = pipeline_text(p);
    t.g.bound(t.x, 0, 64);
    std::string bounded = pipeline_text(p);
    t.g.align_bounds(t.x, 16);
    std::string aligned = pipeline_text(p);
    CHECK(plain != bounded);
    CHECK(bounded != aligned);
    CHECK(aligned.find("bound x min 0 extent 64 align 16 remainder 0") != std::string::npos);
}

TEST_CASE("bound and align_bounds that cannot apply fail where they are written", "[directives][bound]") {
    TwoStage t;
    Var z("z"), r("r");
    REQUIRE_USER_ERROR(t.g.bound(z, 0, 4), "Func g.bound(z, 0, 4)", "z is not one of its pure Vars (x, y)");
    REQUIRE_USER_ERROR(t.g.bound(t.x, 0.5f, 4), "the min has type float32", "must be an integer");
    REQUIRE_USER_ERROR(t.g.bound(t.x, 0, t.y), "the extent uses y", "constants, Params and input sizes");
    REQUIRE_USER_ERROR(t.g.bound(t.x, 0, 0), "the extent must be positive");
    REQUIRE_USER_ERROR(t.g.align_bounds(t.x, 0), "Func g.align_bounds(x, 0, 0)", "the modulus must be positive");
    Func u("u");
    REQUIRE_USER_ERROR(u.bound(t.x, 0, 4), "Func u.bound(x, 0, 4)", "no definition yet");
    // An inlined Func has no region; the two directives exclude each other in either order.
    Func a("a"), b("b");
    a(t.x) = t.x * 2;
    b(t.x) = t.x * 3;
    a.compute_inline();
    REQUIRE_USER_ERROR(a.bound(t.x, 0, 4), "the Func is computed inline");
    b.bound(t.x, 0, 4);
    REQUIRE_USER_ERROR(b.compute_inline(), "Func b: compute_inline(), but it has bound() or align_bounds()");
    // Unrolling a loop completely needs the bound first, and the message says so.
    Func c("c");
    c(t.x, t.y) = t.x + t.y;
    REQUIRE_USER_ERROR(c.unroll(t.y), "no constant range to unroll completely", "bound(y, 0, 4)");
}

TEST_CASE("a bound that is a non-affine function of Params is computed at entry, as Halide's are", "[directives][bound]") {
    // n * n is a parameter of its own (model.cpp, parameters_for_opaque_values): g is computed
    // over exactly [0, n * n).
    Param<int> n("n");
    n.set(4);
    TwoStage s;
    s.g.bound(s.x, 0, n * n);
    auto region = run_three_ways(Pipeline(s.h), 8, 8, 0, 0);
    REQUIRE(!region.empty());
    CHECK(region[0] == std::make_pair(int64_t(0), int64_t(15)));
    n.set(2);  // [0, 4) no longer covers the 9 columns h reads
    REQUIRE_USER_ERROR(s.h.realize({8, 8}), "Func g", "[0, 8]");
}

TEST_CASE("a bounded Func's updates run over the bound, and one that writes outside it fails", "[directives][bound]") {
    TwoStage t;
    RDom r(0, 8, "r");
    // Update 0 over the pure Vars; update 1 writes row 0 over [0, 8).
    t.g(t.x, t.y) = t.g(t.x, t.y) * 2.0f + t.in(t.x - 1, t.y);
    t.g(r.x, 0) = t.g(r.x, 0) + 100.0f;
    t.g.bound(t.x, -6, 20);
    Pipeline p(t.h);
    CHECK(run_three_ways(p, 9, 4, -5, -2)[0] == std::pair<int64_t, int64_t>{-6, 13});
    t.g.bound(t.x, 0, 6);  // the update writes up to 7
    Buffer<float> out(std::vector<int>{3, 3});
    REQUIRE_USER_ERROR(p.compile(Target::host(), {}).realize(out), "Func g is computed over [0, 5] in dimension 0 (x)",
                       "needs it over [0, 7]");
    REQUIRE_USER_ERROR(interpret(p, {Buffer<void>(out)}), "Func g is computed over [0, 5] in dimension 0 (x)",
                       "needs it over [0, 7]");
}
