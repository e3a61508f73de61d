// The reference interpreter against the plain C++ loops of every app, on random inputs at
// awkward sizes (odd, prime, tiny).
#include "../test_util.h"

#include <climits>

#include "tessera_apps/app.h"

using namespace tessera;

namespace {

void check_app(const std::string &name, const std::vector<std::vector<int>> &problem_sizes) {
    auto app = apps::make_app(name);
    uint32_t seed = 11;
    for (const auto &sizes : problem_sizes) {
        app->prepare(sizes, seed++);
        std::vector<Buffer<void>> got = app->make_outputs(), want = app->make_outputs();
        interpret(app->pipeline(), got);
        app->reference(want);
        for (size_t i = 0; i < got.size(); ++i) {
            apps::Comparison c = apps::compare(got[i], want[i], app->tolerance());
            INFO(name << " at sizes " << Catch::Detail::stringify(sizes) << ": " << c.first_mismatch);
            CHECK(c.ok);
        }
    }
}

} // namespace

TEST_CASE("interpreter matches plain loops: blur_x_blur_y", "[dsl][apps]") {
    check_app("blur_x_blur_y", {{5, 5}, {6, 9}, {37, 23}, {64, 61}});
}
TEST_CASE("interpreter matches plain loops: harris", "[dsl][apps]") { check_app("harris", {{5, 5}, {7, 13}, {41, 29}}); }
TEST_CASE("interpreter matches plain loops: unsharp_mask", "[dsl][apps]") {
    check_app("unsharp_mask", {{5, 5}, {11, 17}, {31, 37}});
}
TEST_CASE("interpreter matches plain loops: histogram", "[dsl][apps]") {
    check_app("histogram", {{1, 1}, {13, 7}, {101, 53}});
}
TEST_CASE("interpreter matches plain loops: matmul and gemm", "[dsl][apps]") {
    check_app("matmul", {{1, 1, 1}, {7, 5, 3}, {17, 19, 23}});
    check_app("gemm", {{1, 1, 1}, {5, 7, 11}, {16, 13, 9}});
}
TEST_CASE("interpreter matches plain loops: prefix_sum", "[dsl][apps]") { check_app("prefix_sum", {{1}, {2}, {97}, {1000}}); }
TEST_CASE("interpreter matches plain loops: jacobi_2d and seidel_2d", "[dsl][apps]") {
    check_app("jacobi_2d", {{3, 3, 1}, {11, 7, 4}, {19, 23, 5}, {8, 8, 0}});
    check_app("seidel_2d", {{3, 3, 1}, {11, 7, 4}, {19, 23, 5}});
}
TEST_CASE("interpreter matches plain loops: bilateral_grid", "[dsl][apps]") {
    check_app("bilateral_grid", {{1, 1}, {9, 17}, {37, 29}});
}

TEST_CASE("the interpreter computes each Func over exactly the region its consumers read", "[dsl][interpreter]") {
    auto app = apps::make_app("blur_x_blur_y");
    app->prepare({20, 15}, 1);
    std::vector<Buffer<void>> out = app->make_outputs();  // 16 x 11 x 3
    InterpretReport report;
    interpret(app->pipeline(), out, &report);
    using R = std::vector<std::pair<int64_t, int64_t>>;
    CHECK(report.computed_region["blur_y"] == R{{0, 15}, {0, 10}, {0, 2}});
    CHECK(report.computed_region["blur_x"] == R{{0, 15}, {0, 14}, {0, 2}});  // y + 4 halo
    CHECK(report.points == 16 * 11 * 3 + 16 * 15 * 3);
}

TEST_CASE("realize into a buffer with non-zero mins computes that region", "[dsl][interpreter]") {
    std::string way = RUN_WAYS();
    INFO("run by " << way);
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = x * 100 + y;
    Buffer<int> out(3, 2);
    out.set_min({-1, 5});
    if (way == "realize") f.realize(out);
    else interpret(Pipeline(f), {out});
    CHECK(out(-1, 5) == -95);
    CHECK(out(1, 6) == 106);
}

TEST_CASE("a pipeline with several outputs computes them together", "[dsl][interpreter]") {
    std::string way = RUN_WAYS();
    INFO("run by " << way);
    Var x("x");
    Func a("a"), b("b");
    a(x) = x * 2;
    b(x) = a(x) * 3 + 1;
    Realization r = way == "realize" ? Pipeline({a, b}).realize({4}) : interpret(Pipeline({a, b}), {4});
    CHECK(Buffer<int>(r[0])(3) == 6);
    CHECK(Buffer<int>(r[1])(3) == 19);
}

TEST_CASE("an output read by another output outside its own buffer is an error", "[dsl][interpreter]") {
    std::string way = RUN_WAYS();
    INFO("run by " << way);
    Var x("x");
    Func a("a"), b("b");
    a(x) = x * 2;
    b(x) = a(x) + a(x + 1);
    Pipeline p({a, b});
    REQUIRE_USER_ERROR(way == "realize" ? p.realize({5}) : interpret(p, {5}), "Func a is an output", "[0, 5]",
                       "covers [0, 4]");
}

TEST_CASE("a 3 x 256 x 256 blur interprets quickly", "[dsl][interpreter]") {
    auto app = apps::make_app("blur_x_blur_y");
    app->prepare({260, 260}, 1);
    std::vector<Buffer<void>> out = app->make_outputs();
    // Functional check only; the time is printed by the app executable, not asserted here.
    interpret(app->pipeline(), out);
    std::vector<Buffer<void>> want = app->make_outputs();
    app->reference(want);
    CHECK(apps::compare(out[0], want[0], 0).ok);
}

TEST_CASE("a Func computed inline has no region, so a coordinate its value ignores needs no bound", "[dsl][interpreter]") {
    // From the directive fuzzer (seed 4773): f(x, y) = y computed inline and read at x + r.x
    // near INT32_MAX, where x + r.x wraps. The compiled code substitutes f's value and never
    // bounds x + r.x; the interpreter computed f at root and rejected the unbounded region.
    Var x("x"), y("y");
    Func f("f"), g("g");
    f(x, y) = y * 3;
    RDom r(2, 8, "r");
    g(x, y) = 0;
    g(x, y) += f(x + r.x, y + 2);
    f.compute_inline();
    Pipeline p(g);
    for (int way = 0; way < 2; ++way) {
        Buffer<int> out(std::vector<int>{13, 3});
        out.set_min({INT_MAX - 12, 5});
        if (way == 0) p.compile(Target::host(), {}).realize(out);
        else interpret(p, std::vector<Buffer<void>>{Buffer<void>(out)});
        INFO((way == 0 ? "compiled" : "interpreted"));
        CHECK(out(INT_MAX, 7) == 8 * 27);
        CHECK(out(INT_MAX - 12, 5) == 8 * 21);
    }
    // Not inlined, f's region is unbounded, and both paths say so.
    Func f2("f2"), g2("g2");
    f2(x, y) = y * 3;
    g2(x, y) = 0;
    g2(x, y) += f2(x + r.x, y + 2);
    Buffer<int> out(std::vector<int>{13, 3});
    out.set_min({INT_MAX - 12, 5});
    REQUIRE_USER_ERROR(interpret(Pipeline(g2), std::vector<Buffer<void>>{Buffer<void>(out)}), "region of f2");
    REQUIRE_USER_ERROR(Pipeline(g2).compile(Target::host(), {}).realize(out), "f2");
}
