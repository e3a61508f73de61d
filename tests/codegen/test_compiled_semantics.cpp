// Compiled code computes exactly what the reference interpreter computes: every operator and
// cast, in every type, on random values and edge values (0, ±1, extremes, NaN, ±inf).
#include "../test_util.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "tessera_apps/app.h"

using namespace tessera;

namespace {

const std::vector<Type> kTypes = {Int(8),  Int(16),  Int(32),  Int(64),   UInt(8),  UInt(16),
                                  UInt(32), UInt(64), Float(16), BFloat(16), Float(32), Float(64)};

// A buffer of n values of type t: edge values first, then random ones.
Buffer<void> values(Type t, int n, uint32_t seed) {
    Buffer<void> b(t, {n});
    std::mt19937_64 rng(seed);
    std::vector<double> edges;
    if (t.is_float())
        edges = {0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-3, t.max_value(), -t.max_value(),
                 std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                 std::numeric_limits<double>::quiet_NaN(), 65504.0, 1e30,
                 // around the integer types' bounds, where casts saturate (also as vector lanes)
                 2147483520.0, 2147483648.0, -2147483648.0, -2147483904.0, 4294967040.0, 255.5, 256.0, -0.99,
                 -128.5, -129.0, 127.9, 65535.5, 65536.0, 32767.9, -32768.9, -32769.0};
    else
        edges = {0, 1, 2, 3, 7, t.max_value(), t.min_value(), t.is_int() ? -1.0 : 5.0, t.is_int() ? -7.0 : 9.0,
                 double(t.bits), double(t.bits + 3), t.is_int() ? -double(t.bits) : 31.0};
    for (int i = 0; i < n; ++i) {
        double v;
        if (size_t(i) < edges.size()) v = edges[size_t(i)];
        else if (t.is_float()) v = std::uniform_real_distribution<double>(-300, 300)(rng);
        else if (t.bits == 64) v = double(int64_t(rng())) / (t.is_int() ? 1.0 : 1.0);
        else v = std::uniform_real_distribution<double>(t.min_value(), t.max_value())(rng);
        apps::set_element(b, {i}, v);
    }
    return b;
}

bool same_bits(const Buffer<void> &a, const Buffer<void> &b, std::string &where) {
    size_t bytes = size_t(a.type().bytes());
    for (int i = 0; i < a.width(); ++i) {
        const void *pa = a.address_of({i}), *pb = b.address_of({i});
        if (std::memcmp(pa, pb, bytes) == 0) continue;
        double x = apps::element(a, {i}), y = apps::element(b, {i});
        if (a.type().is_float() && std::isnan(x) && std::isnan(y)) continue;  // any NaN
        where = "element " + std::to_string(i) + ": compiled " + std::to_string(x) + ", interpreted " + std::to_string(y);
        return false;
    }
    return true;
}

// Compiles and interprets f(x) = fn(a(x), b(x)) and compares bit for bit.
void check(const std::string &what, Type ta, Type tb, const std::function<Expr(Expr, Expr)> &fn) {
    const int n = 64;
    InputBuffer<> a(ta, 1, "a"), b(tb, 1, "b");
    a.set(values(ta, n, 11));
    b.set(values(tb, n, 23));
    Var x("x");
    Func f("f");
    f(x) = fn(a(x), b(x));
    Pipeline p(f);
    CompileOptions o;
    o.threads = 1;
    Callable c = p.compile(Target::host(), o);
    Buffer<> got(f.type(), {n}), want(f.type(), {n});
    c.realize(got);
    interpret(p, {want});
    std::string where;
    INFO(what << " on " << ta << ", " << tb << " → " << f.type() << ": " << where);
    CHECK(same_bits(got, want, where));
    if (!where.empty()) FAIL_CHECK(where);
}

} // namespace

TEST_CASE("compiled arithmetic matches the interpreter in every type", "[codegen][semantics]") {
    for (Type t : kTypes) {
        check("+", t, t, [](Expr a, Expr b) { return a + b; });
        check("-", t, t, [](Expr a, Expr b) { return a - b; });
        check("*", t, t, [](Expr a, Expr b) { return a * b; });
        check("/", t, t, [](Expr a, Expr b) { return a / b; });
        check("%", t, t, [](Expr a, Expr b) { return a % b; });
        check("min", t, t, [](Expr a, Expr b) { return min(a, b); });
        check("max", t, t, [](Expr a, Expr b) { return max(a, b); });
        check("select(<)", t, t, [](Expr a, Expr b) { return select(a < b, a, b); });
        check("comparisons", t, t, [](Expr a, Expr b) {
            return cast<int>(a == b) + 2 * cast<int>(a != b) + 4 * cast<int>(a <= b) + 8 * cast<int>(a > b) +
                   16 * cast<int>(a >= b);
        });
        if (!t.is_uint()) check("abs", t, t, [](Expr a, Expr) { return abs(a); });
        check("negate", t, t, [](Expr a, Expr) { return -a; });
    }
}

TEST_CASE("compiled division by constants matches the interpreter", "[codegen][semantics]") {
    for (Type t : {Int(8), Int(32), Int(64), UInt(16), UInt(32)})
        for (int d : {1, 2, 3, 4, 7, 8, 16, -1, -2, -3, -8, 0}) {
            if (t.is_uint() && d < 0) continue;
            check("/ " + std::to_string(d), t, t, [d](Expr a, Expr) { return a / d; });
            check("% " + std::to_string(d), t, t, [d](Expr a, Expr) { return a % d; });
        }
}

TEST_CASE("compiled bitwise operations and shifts match the interpreter", "[codegen][semantics]") {
    for (Type t : {Int(8), Int(16), Int(32), Int(64), UInt(8), UInt(32), UInt(64)}) {
        check("&|^", t, t, [](Expr a, Expr b) { return (a & b) ^ (a | ~b); });
        check("<<", t, t, [](Expr a, Expr b) { return a << b; });
        check(">>", t, t, [](Expr a, Expr b) { return a >> b; });
        check("<< 3", t, t, [](Expr a, Expr) { return a << 3; });
        check(">> 2", t, t, [](Expr a, Expr) { return a >> 2; });
    }
}

TEST_CASE("compiled casts between every pair of types match the interpreter", "[codegen][semantics]") {
    for (Type from : kTypes)
        for (Type to : kTypes) check("cast", from, from, [to](Expr a, Expr) { return cast(to, a); });
    for (Type from : kTypes) check("cast<bool>", from, from, [](Expr a, Expr) { return select(cast<bool>(a), 1, 0); });
}

TEST_CASE("compiled math functions match the interpreter", "[codegen][semantics]") {
    for (Type t : {Float(16), BFloat(16), Float(32), Float(64)}) {
        check("sqrt", t, t, [](Expr a, Expr) { return sqrt(a); });
        check("exp", t, t, [](Expr a, Expr) { return exp(a / 100); });
        check("log", t, t, [](Expr a, Expr) { return log(a); });
        check("pow", t, t, [](Expr a, Expr b) { return pow(a, b / 100); });
        check("sin cos", t, t, [](Expr a, Expr) { return sin(a) + cos(a); });
        check("tan tanh", t, t, [](Expr a, Expr) { return tan(a) * tanh(a); });
        check("floor ceil round trunc", t, t, [](Expr a, Expr) { return floor(a) + ceil(a) * 2 + round(a) * 4 + trunc(a); });
        check("fma", t, t, [](Expr a, Expr b) { return fma(a, b, a); });
    }
    check("lerp u8", UInt(8), UInt(8), [](Expr a, Expr b) { return lerp(a, b, b); });
    check("lerp f32", Float(32), Float(32), [](Expr a, Expr b) { return lerp(a, b, 0.25f); });
}

TEST_CASE("compiled bool logic matches the interpreter", "[codegen][semantics]") {
    check("logic", Int(32), Int(32), [](Expr a, Expr b) {
        Expr p = a < b, q = a % 3 == 0;
        return select((p && q) || !p, 1, 0);
    });
}
