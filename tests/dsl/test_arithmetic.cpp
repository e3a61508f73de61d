// The exact semantics of arithmetic in the reference interpreter: integer division and
// modulo, wrapping, shifts, saturating casts, and correctly rounded float16 / bfloat16.
#include "../test_util.h"

#include <cmath>
#include <limits>
#include <random>

using namespace tessera;

namespace {

// Evaluates f(x) for x in [0, n) through the interpreter, with `in` bound to `values`.
template <typename Out, typename In>
std::vector<Out> run_unary(const std::vector<In> &values, const std::function<Expr(Expr)> &fn) {
    InputBuffer<In> in("in", 1);
    Buffer<In> b(int(values.size()));
    for (size_t i = 0; i < values.size(); ++i) b(int(i)) = values[i];
    in.set(b);
    Var x("x");
    Func f("f");
    f(x) = fn(in(x));
    Buffer<Out> out = interpret(f, {int(values.size())});
    std::vector<Out> r;
    for (size_t i = 0; i < values.size(); ++i) r.push_back(out(int(i)));
    return r;
}

int64_t euclid_div(int64_t a, int64_t b) {
    if (b == 0) return 0;
    int64_t q = a / b, r = a % b;
    if (r < 0) q += b > 0 ? -1 : 1;
    return q;
}

int64_t euclid_mod(int64_t a, int64_t b) {
    if (b == 0) return 0;
    int64_t r = a % b;
    return r < 0 ? r + (b > 0 ? b : -b) : r;
}

} // namespace

TEST_CASE("integer division rounds toward negative infinity for positive divisors and the remainder is never negative",
          "[dsl][arithmetic]") {
    std::vector<int32_t> a;
    for (int v = -9; v <= 9; ++v) a.push_back(v);
    for (int d : {1, 2, 3, 4, 7, -1, -2, -3, 0}) {
        auto q = run_unary<int32_t, int32_t>(a, [d](Expr e) { return e / d; });
        auto r = run_unary<int32_t, int32_t>(a, [d](Expr e) { return e % d; });
        for (size_t i = 0; i < a.size(); ++i) {
            INFO(a[i] << " / " << d);
            CHECK(q[i] == euclid_div(a[i], d));
            CHECK(r[i] == euclid_mod(a[i], d));
            if (d != 0) {
                CHECK(r[i] >= 0);
                CHECK(int64_t(q[i]) * d + r[i] == a[i]);
            }
            if (d > 0) CHECK(q[i] == int32_t(std::floor(double(a[i]) / d)));
        }
    }
}

TEST_CASE("a quotient times its divisor plus the remainder folds to the dividend, except for divisor 0",
          "[dsl][arithmetic]") {
    Var x("x");
    Expr i = x;
    CHECK(((i / 128) * 128 + i % 128).same_as(i));   // what a reshape's merge and split compose to
    CHECK((i % 8 + (i / 8) * 8).same_as(i));
    CHECK_FALSE(((i / 8) * 4 + i % 8).same_as(i));  // another multiple: kept
    CHECK_FALSE(((i / 0) * 0 + i % 0).same_as(i));  // x / 0 and x % 0 are 0
    // The same values as the expression evaluated as written, negative dividends and divisors too.
    std::vector<int32_t> a;
    for (int v = -9; v <= 9; ++v) a.push_back(v);
    a.push_back(std::numeric_limits<int32_t>::min());
    for (int d : {3, -3, 1, 0}) {
        auto folded = run_unary<int32_t, int32_t>(a, [d](Expr e) { return (e / d) * d + e % d; });
        for (size_t k = 0; k < a.size(); ++k) {
            INFO(a[k] << " with divisor " << d);
            int64_t written = d == 0 ? 0 : int64_t(int32_t(uint32_t(euclid_div(a[k], d) * d + euclid_mod(a[k], d))));
            CHECK(folded[k] == written);
        }
    }
}

TEST_CASE("division of the most negative integer by -1 wraps instead of trapping", "[dsl][arithmetic]") {
    auto q = run_unary<int32_t, int32_t>({std::numeric_limits<int32_t>::min()}, [](Expr e) { return e / -1; });
    CHECK(q[0] == std::numeric_limits<int32_t>::min());
}

TEST_CASE("integer arithmetic wraps in its type", "[dsl][arithmetic]") {
    auto u = run_unary<uint8_t, uint8_t>({250, 3}, [](Expr e) { return e + 10; });
    CHECK(u[0] == 4);
    CHECK(u[1] == 13);
    auto s = run_unary<int8_t, int8_t>({120, -128}, [](Expr e) { return e + 10; });
    CHECK(s[0] == -126);
    CHECK(s[1] == -118);
    auto m = run_unary<int16_t, int16_t>({300}, [](Expr e) { return e * e; });
    CHECK(m[0] == int16_t(uint16_t(90000 & 0xffff)));
}

TEST_CASE("shifts by negative amounts go the other way and shifts past the width saturate", "[dsl][arithmetic]") {
    auto l = run_unary<int32_t, int32_t>({-3, 0, 1, 4, 31, 32, 40}, [](Expr e) { return Expr(5) << e; });
    CHECK(l == std::vector<int32_t>{0, 5, 10, 80, int32_t(0x80000000u), 0, 0});
    auto r = run_unary<int32_t, int32_t>({1, 33, -2}, [](Expr e) { return Expr(-64) >> e; });
    CHECK(r == std::vector<int32_t>{-32, -1, -256});
    auto ur = run_unary<uint32_t, uint32_t>({1, 40}, [](Expr e) { return Expr(uint32_t(0x80000000u)) >> e; });
    CHECK(ur == std::vector<uint32_t>{0x40000000u, 0});
}

TEST_CASE("float to integer casts truncate toward zero and saturate, and NaN gives zero", "[dsl][arithmetic]") {
    float nan = std::numeric_limits<float>::quiet_NaN();
    auto u8 = run_unary<uint8_t, float>({300.f, -5.f, 2.9f, nan}, [](Expr e) { return cast<uint8_t>(e); });
    CHECK(u8 == std::vector<uint8_t>{255, 0, 2, 0});
    auto i8 = run_unary<int8_t, float>({-1000.f, -2.7f, 127.9f}, [](Expr e) { return cast<int8_t>(e); });
    CHECK(i8 == std::vector<int8_t>{-128, -2, 127});
    auto i32 = run_unary<int32_t, double>({3e10, -3e10, -0.5}, [](Expr e) { return cast<int32_t>(e); });
    CHECK(i32 == std::vector<int32_t>{std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(), 0});
    auto b = run_unary<bool, float>({0.f, -0.f, 0.1f, nan}, [](Expr e) { return cast<bool>(e); });
    CHECK(b == std::vector<bool>{false, false, true, true});
}

TEST_CASE("float16 conversion rounds to nearest even directly from double", "[dsl][float16]") {
    CHECK(float16_t(1.0 + std::ldexp(1, -11)).to_double() == 1.0);                               // tie → even
    CHECK(float16_t(1.0 + 3 * std::ldexp(1, -11)).to_double() == 1.0 + std::ldexp(1, -9));       // tie → even
    // Rounding through float first would hit a false tie and give 1.0.
    CHECK(float16_t(1.0 + std::ldexp(1, -11) + std::ldexp(1, -40)).to_double() == 1.0 + std::ldexp(1, -10));
    CHECK(float16_t(65504.0).to_double() == 65504.0);
    CHECK(float16_t(65519.99).to_double() == 65504.0);
    CHECK(std::isinf(float16_t(65520.0).to_double()));
    CHECK(float16_t(std::ldexp(1, -24)).bits == 1);                 // smallest subnormal
    CHECK(float16_t(std::ldexp(1, -25)).bits == 0);                 // tie with 0 → even (0)
    CHECK(float16_t(3 * std::ldexp(1, -26)).bits == 1);
    CHECK(float16_t(std::ldexp(1, -14)).bits == 0x0400);            // smallest normal
    CHECK(float16_t(-2.0).bits == 0xc000);
    CHECK(std::isnan(float16_t(std::nan("")).to_double()));
}

TEST_CASE("bfloat16 conversion rounds to nearest even", "[dsl][float16]") {
    CHECK(bfloat16_t(1.0 + std::ldexp(1, -8)).to_double() == 1.0);
    CHECK(bfloat16_t(1.0 + 3 * std::ldexp(1, -8)).to_double() == 1.0 + std::ldexp(1, -6));
    CHECK(bfloat16_t(1.0 + std::ldexp(1, -8) + std::ldexp(1, -30)).to_double() == 1.0 + std::ldexp(1, -7));
    CHECK(bfloat16_t(3.0).bits == 0x4040);
    CHECK(bfloat16_t(std::ldexp(1, -133)).bits == 1);
    CHECK(std::isinf(bfloat16_t(std::ldexp(1.0, 128)).to_double()));
}

TEST_CASE("float16 and bfloat16 arithmetic is correctly rounded in the declared type", "[dsl][float16]") {
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> dist(-100, 100);
    for (int trial = 0; trial < 2; ++trial) {
        bool bf = trial == 1;
        Type t = bf ? BFloat(16) : Float(16);
        const int n = 500;
        Buffer<> a(t, {n}), b(t, {n});
        std::vector<double> av, bv;
        for (int i = 0; i < n; ++i) {
            double x = bf ? bfloat16_t(dist(rng)).to_double() : float16_t(dist(rng)).to_double();
            double y = bf ? bfloat16_t(dist(rng)).to_double() : float16_t(dist(rng)).to_double();
            av.push_back(x);
            bv.push_back(y);
            if (bf) {
                Buffer<bfloat16_t> ta(a), tb(b);
                ta(i) = bfloat16_t(x);
                tb(i) = bfloat16_t(y);
            } else {
                Buffer<float16_t> ta(a), tb(b);
                ta(i) = float16_t(x);
                tb(i) = float16_t(y);
            }
        }
        InputBuffer<> ia(t, 1, "a"), ib(t, 1, "b");
        ia.set(a);
        ib.set(b);
        Var x("x");
        Func add("add"), mul("mul"), div("div"), sq("sq");
        add(x) = ia(x) + ib(x);
        mul(x) = ia(x) * ib(x);
        div(x) = ia(x) / ib(x);
        sq(x) = sqrt(abs(ia(x)));
        Realization r = interpret(Pipeline({add, mul, div, sq}), {n});
        auto round = [bf](double v) { return bf ? detail::round_to_bfloat16(v) : detail::round_to_float16(v); };
        for (int i = 0; i < n; ++i) {
            auto get = [&](size_t k) {
                return bf ? Buffer<bfloat16_t>(r[k])(i).to_double() : Buffer<float16_t>(r[k])(i).to_double();
            };
            CHECK(get(0) == round(av[size_t(i)] + bv[size_t(i)]));
            CHECK(get(1) == round(av[size_t(i)] * bv[size_t(i)]));
            CHECK(get(2) == round(av[size_t(i)] / bv[size_t(i)]));
            CHECK(get(3) == round(std::sqrt(std::fabs(av[size_t(i)]))));
        }
    }
}

TEST_CASE("float16 addition loses what its precision cannot hold", "[dsl][float16]") {
    auto r = run_unary<float16_t, float16_t>({float16_t(2048.0)}, [](Expr e) { return e + 1; });
    CHECK(r[0].to_double() == 2048.0);
    auto s = run_unary<float16_t, float16_t>({float16_t(2048.0)}, [](Expr e) { return e + 2; });
    CHECK(s[0].to_double() == 2050.0);
}

TEST_CASE("float32 arithmetic is done in float, not double", "[dsl][arithmetic]") {
    // 2^24 + 1 is not a float: the sum rounds to 2^24 in float32.
    auto r = run_unary<float, float>({16777216.f}, [](Expr e) { return (e + 1.f) - 16777216.f; });
    CHECK(r[0] == 0.f);
    auto d = run_unary<double, double>({16777216.0}, [](Expr e) { return (e + 1.0) - 16777216.0; });
    CHECK(d[0] == 1.0);
}

TEST_CASE("min and max on floats follow a < b ? a : b", "[dsl][arithmetic]") {
    float nan = std::numeric_limits<float>::quiet_NaN();
    auto mn = run_unary<float, float>({nan, 1.f}, [](Expr e) { return min(e, 0.5f); });
    CHECK(mn[0] == 0.5f);
    CHECK(mn[1] == 0.5f);
    auto mx = run_unary<float, float>({-1.f, 2.f}, [](Expr e) { return max(e, 0.5f); });
    CHECK(mx == std::vector<float>{0.5f, 2.f});
}

TEST_CASE("math functions, select, lerp and rounding evaluate as documented", "[dsl][arithmetic]") {
    auto rd = run_unary<float, float>({0.5f, 1.5f, 2.5f, -0.5f, -1.7f}, [](Expr e) { return round(e); });
    CHECK(rd == std::vector<float>{0.f, 2.f, 2.f, -0.f, -2.f});
    auto fl = run_unary<float, float>({-1.5f, 1.5f}, [](Expr e) { return floor(e) + ceil(e) * 10.f + trunc(e) * 100.f; });
    CHECK(fl == std::vector<float>{-2.f - 10.f - 100.f, 1.f + 20.f + 100.f});
    auto ex = run_unary<float, float>({1.f}, [](Expr e) { return exp(e) + log(e) + sin(e) + cos(e) + tan(e) + tanh(e); });
    CHECK(ex[0] == std::exp(1.f) + std::log(1.f) + std::sin(1.f) + std::cos(1.f) + std::tan(1.f) + std::tanh(1.f));
    auto pw = run_unary<float, float>({2.f}, [](Expr e) { return pow(e, 10.f) + fma(e, 3.f, 1.f); });
    CHECK(pw[0] == 1024.f + 7.f);
    auto lp = run_unary<uint8_t, uint8_t>({0, 255, 128}, [](Expr e) { return lerp(Expr(uint8_t(10)), Expr(uint8_t(20)), e); });
    CHECK(lp == std::vector<uint8_t>{10, 20, 15});
    auto lf = run_unary<float, float>({0.25f}, [](Expr e) { return lerp(Expr(2.f), Expr(6.f), e); });
    CHECK(lf[0] == 3.f);
    auto ab = run_unary<uint8_t, int8_t>({-128, -3, 5}, [](Expr e) { return abs(e); });
    CHECK(ab == std::vector<uint8_t>{128, 3, 5});
    auto sel = run_unary<int, int>({-2, 0, 3}, [](Expr e) { return select(e < 0, -1, e == 0, 0, 1); });
    CHECK(sel == std::vector<int>{-1, 0, 1});
    auto bits = run_unary<uint8_t, uint8_t>({0xf0}, [](Expr e) { return (e & 0x3c) | (~e ^ 0x01); });
    CHECK(bits[0] == uint8_t((0xf0 & 0x3c) | (uint8_t(~0xf0) ^ 0x01)));
}
