// The op library from C++ (frontends/ops): results against plain loops. The Python tests
// (frontends/python/tests/test_ops.py) cover every op against NumPy.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include <tessera/ops/tensor.h>
#include <tessera/structural_equality.h>
#include <tessera/tessera.h>

#include "../test_util.h"

using namespace tessera;

TEST_CASE("linear then relu from C++ matches plain loops in summation order", "[ops]") {
    const int m = 7, k = 13, n = 5;  // odd, prime, smaller than any tile
    Buffer<float> xb(k, m), wb(k, n), bb(n);
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-2, 2);
    xb.for_each_coordinate([&](const std::vector<int64_t> &c) { xb(c[0], c[1]) = u(rng); });
    wb.for_each_coordinate([&](const std::vector<int64_t> &c) { wb(c[0], c[1]) = u(rng); });
    bb.for_each_coordinate([&](const std::vector<int64_t> &c) { bb(c[0]) = u(rng); });
    InputBuffer<float> xi("x", 2), wi("w", 2), bi("b", 1);
    xi.set(xb);
    wi.set(wb);
    bi.set(bb);
    ops::Tensor bias = ops::input(bi, {n});
    ops::Tensor y = ops::relu(ops::linear(ops::input(xi, {m, k}), ops::input(wi, {n, k}), &bias));
    REQUIRE(y.shape() == std::vector<int64_t>{m, n});
    Buffer<float> out = y.func().realize(y.realize_sizes());
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            float acc = bb(j);
            for (int r = 0; r < k; ++r) acc = acc + xb(r, i) * wb(r, j);
            CHECK(out(j, i) == std::max(acc, 0.0f));
        }
}

TEST_CASE("ops reject shapes that do not broadcast, naming both", "[ops]") {
    InputBuffer<float> a("a", 2), b("b", 1);
    REQUIRE_USER_ERROR(ops::add(ops::input(a, {3, 4}), ops::input(b, {3})), "[3, 4] and [3]", "broadcast");
    REQUIRE_USER_ERROR(ops::matmul(ops::input(a, {3, 4}), ops::input(a, {3, 4})), "must match");
    REQUIRE_USER_ERROR(ops::sum(ops::input(b, {3}), {1}), "axis 1 is out of range");
}

TEST_CASE("sum over the middle axis with keepdim keeps a size-1 axis", "[ops]") {
    Buffer<int16_t> ab(5, 3, 2);  // shape {2, 3, 5}
    int v = -40;
    ab.for_each_coordinate([&](const std::vector<int64_t> &c) { ab(c[0], c[1], c[2]) = int16_t(v += 7); });
    InputBuffer<int16_t> a("a", 3);
    a.set(ab);
    ops::Tensor s = ops::sum(ops::input(a, {2, 3, 5}), {1}, true);
    REQUIRE(s.shape() == std::vector<int64_t>{2, 1, 5});
    REQUIRE(s.type() == Int(64));
    Buffer<int64_t> out = s.func().realize(s.realize_sizes());
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 5; ++j) {
            int64_t want = 0;
            for (int r = 0; r < 3; ++r) want += ab(j, r, i);
            CHECK(out(j, 0, i) == want);
        }
}

// The Funcs a tensor's pipeline computes, from its schedule JSON.
static size_t stages_of(const ops::Tensor &t) {
    std::string json = Pipeline(t.func()).schedule_json();
    size_t begin = json.find("\"funcs\": [");
    size_t end = json.find(']', begin);
    std::string list = json.substr(begin, end - begin);
    return size_t(std::count(list.begin(), list.end(), '"')) / 2 - 1;  // less the key itself
}

TEST_CASE("elementwise ops and slices are inlined into one stage, and materialize makes a stage", "[ops]") {
    const int n = 11, m = 6;
    Buffer<float> xb(n, m);
    int v = 0;
    xb.for_each_coordinate([&](const std::vector<int64_t> &c) { xb(c[0], c[1]) = float((v += 5) % 17) - 8; });
    InputBuffer<float> xi("x", 2);
    xi.set(xb);
    ops::Tensor x = ops::input(xi, {m, n});
    // blur_x written with ops: three slices, two adds and a division by a full() constant.
    ops::Tensor sum3 = ops::add(ops::add(ops::slice(x, 1, 0, n - 2), ops::slice(x, 1, 1, n - 1)), ops::slice(x, 1, 2, n));
    ops::Tensor blur_x = ops::div(sum3, ops::full({1}, 3.0, Float(32)));
    REQUIRE(blur_x.is_inline());
    CHECK(stages_of(blur_x) == 1);
    // Read by three slices, it is computed once when materialized; inlined three times when not
    // (until the expression reaches the inline cap).
    ops::Tensor shared = ops::materialize(blur_x);
    REQUIRE_FALSE(shared.is_inline());
    auto blur_y = [&](const ops::Tensor &bx) {
        return ops::div(ops::add(ops::add(ops::slice(bx, 0, 0, m - 2), ops::slice(bx, 0, 1, m - 1)), ops::slice(bx, 0, 2, m)),
                        ops::full({1}, 3.0, Float(32)));
    };
    CHECK(stages_of(blur_y(shared)) == 2);
    for (const ops::Tensor &out_t : {blur_y(shared), blur_y(blur_x)}) {
        Buffer<float> out = out_t.func().realize(out_t.realize_sizes());
        for (int y = 0; y < m - 2; ++y)
            for (int xx = 0; xx < n - 2; ++xx) {
                auto bx = [&](int yy) { return (xb(xx, yy) + xb(xx + 1, yy) + xb(xx + 2, yy)) / 3.0f; };
                CHECK(out(xx, y) == (bx(y) + bx(y + 1) + bx(y + 2)) / 3.0f);
            }
    }
}

TEST_CASE("a reshape of a reshape is one stage reading the first one's operand, and a merge undone by a split is "
          "the operand itself",
          "[ops]") {
    const int a = 4, b = 5, c = 6;  // x is [a, c, b], outermost first
    Buffer<float> xb(b, c, a);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    xb.for_each_coordinate([&](const std::vector<int64_t> &i) { xb(i[0], i[1], i[2]) = uniform(rng); });
    InputBuffer<float> xi("x", 3);
    xi.set(xb);
    ops::Tensor x = ops::input(xi, {a, c, b});
    ops::Tensor p = ops::permute(x, {0, 2, 1});            // [a, b, c], an index map
    ops::Tensor merged = ops::reshape(p, {a, b * c});       // merges b and c: a stage copying p
    ops::Tensor again = ops::reshape(merged, {a * b, c});   // read from p: one stage, not two
    CHECK(stages_of(merged) == 1);
    CHECK(stages_of(again) == 1);
    Buffer<float> out = again.func().realize(again.realize_sizes());
    for (int i = 0; i < a * b; ++i)
        for (int k = 0; k < c; ++k) {
            INFO(i << ", " << k);
            CHECK(out(k, i) == xb(i % b, k, i / b));
        }
    // [a, c, b] -> [a * c, b] -> [a, c, b] reads x as it is.
    ops::Tensor round_trip = ops::reshape(ops::reshape(x, {a * c, b}), {a, c, b});
    CHECK(round_trip.name() == x.name());
    // A reshape of a computed inline tensor is not composed through (its values would be
    // computed twice): the merge copies the sum, and the split reads that copy.
    ops::Tensor sum = ops::add(p, p);
    ops::Tensor sum_merged = ops::reshape(sum, {a, b * c});
    CHECK(sum_merged.reshape_source() == nullptr);
    ops::Tensor sum_again = ops::reshape(sum_merged, {a * b, c});
    Buffer<float> twice = sum_again.func().realize(sum_again.realize_sizes());
    for (int i = 0; i < a * b; ++i)
        for (int k = 0; k < c; ++k) CHECK(twice(k, i) == 2 * xb(i % b, k, i / b));
}

TEST_CASE("an inline tensor read at a quotient and remainder of its split folds the index back", "[ops]") {
    InputBuffer<float> xi("x", 1);
    ops::Tensor flat = ops::materialize(ops::add(ops::input(xi, {128}), ops::full({1}, 1.0, Float(32))));
    ops::Tensor split = ops::reshape(flat, {8, 16});  // an inline index map: flat(8 * i + j)
    REQUIRE(split.is_inline());
    Var i("i");
    Expr read = split({Expr(i) / 16, Expr(i) % 16});
    CHECK(ir::structurally_equal(read, flat({Expr(i)})));
}

TEST_CASE("an inline expression that would grow past the cap becomes a Func", "[ops]") {
    Buffer<float> xb(8);
    for (int i = 0; i < 8; ++i) xb(i) = float(i) - 3.5f;
    InputBuffer<float> xi("x", 1);
    xi.set(xb);
    ops::Tensor t = ops::input(xi, {8});
    for (int i = 0; i < 8; ++i) t = ops::add(t, t);  // each step doubles the written-out expression
    CHECK(stages_of(t) >= 2);
    Buffer<float> out = t.func().realize(t.realize_sizes());
    for (int i = 0; i < 8; ++i) CHECK(out(i) == xb(i) * 256);
}

TEST_CASE("integer division rounded toward zero or down matches C++ and floor division for every sign", "[ops]") {
    // a: 19 x 1 of -9..9, b: 1 x 6 of divisors of both signs; the quotient broadcasts to 19 x 6.
    Buffer<int32_t> ab(1, 19), bb(6, 1);
    for (int i = 0; i < 19; ++i) ab(0, i) = i - 9;
    const int divisors[6] = {-4, -3, -1, 1, 2, 5};
    for (int j = 0; j < 6; ++j) bb(j, 0) = divisors[j];
    InputBuffer<int32_t> a("a", 2), b("b", 2);
    a.set(ab);
    b.set(bb);
    for (ops::Rounding mode : {ops::Rounding::Trunc, ops::Rounding::Floor}) {
        ops::Tensor q = ops::div(ops::input(a, {19, 1}), ops::input(b, {1, 6}), mode);
        REQUIRE(q.type() == Int(32));
        Buffer<int32_t> out = q.func().realize(q.realize_sizes());
        for (int i = 0; i < 19; ++i)
            for (int j = 0; j < 6; ++j) {
                int x = i - 9, y = divisors[j];
                int want = x / y;  // C++ truncates
                if (mode == ops::Rounding::Floor && x % y != 0 && ((x < 0) != (y < 0))) want -= 1;
                INFO(x << " / " << y);
                CHECK(out(j, i) == want);
            }
    }
    InputBuffer<float> f("f", 1);
    REQUIRE_USER_ERROR(ops::div(ops::input(f, {4}), ops::input(f, {4}), ops::Rounding::Floor), "rounding_mode \"floor\"",
                       "not supported");
}
