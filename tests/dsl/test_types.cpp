// Construction of expressions and the type rules (promotion, constants, results of operators).
#include "../test_util.h"

#include <tessera/ir.h>

using namespace tessera;

TEST_CASE("C++ constants become constants of the matching type", "[dsl][types]") {
    CHECK(Expr(1).type() == Int(32));
    CHECK(Expr(1.5f).type() == Float(32));
    CHECK(Expr(1.5).type() == Float(64));
    CHECK(Expr(true).type() == Bool());
    CHECK(Expr(uint8_t(3)).type() == UInt(8));
    CHECK(Expr(int64_t(3)).type() == Int(64));
    CHECK(Expr(float16_t(1.0)).type() == Float(16));
    CHECK(Expr(bfloat16_t(1.0)).type() == BFloat(16));
    CHECK(Var("x").name() == "x");
    CHECK(Expr(Var("x")).type() == Int(32));
}

TEST_CASE("an int constant takes the type of the expression it meets", "[dsl][types]") {
    InputBuffer<uint8_t> u8("u8", 1);
    InputBuffer<float16_t> h("h", 1);
    Var x("x");
    CHECK((u8(x) + 1).type() == UInt(8));
    CHECK((1 + u8(x)).type() == UInt(8));
    CHECK((h(x) * 2).type() == Float(16));
    CHECK((h(x) * 0.5f).type() == Float(16));
    CHECK((h(x) * 0.5).type() == Float(16));
}

TEST_CASE("an int expression meeting a float constant computes in float32", "[dsl][types]") {
    Var x("x");
    CHECK((x * 0.5f).type() == Float(32));
    CHECK((x * 0.5).type() == Float(32));
    CHECK((x + 1).type() == Int(32));
}

TEST_CASE("mixed expression types promote as in Halide", "[dsl][types]") {
    InputBuffer<uint8_t> u8("u8", 1);
    InputBuffer<int16_t> i16("i16", 1);
    InputBuffer<uint32_t> u32("u32", 1);
    InputBuffer<float> f32("f32", 1);
    InputBuffer<double> f64("f64", 1);
    InputBuffer<float16_t> f16("f16", 1);
    InputBuffer<bfloat16_t> bf16("bf16", 1);
    Var x("x");
    CHECK((u8(x) + i16(x)).type() == Int(16));     // mixed signedness: signed, wider width
    CHECK((u8(x) + u32(x)).type() == UInt(32));    // same signedness: wider
    CHECK((i16(x) + u32(x)).type() == Int(32));
    CHECK((u8(x) + f16(x)).type() == Float(16));   // int meets float: the float type
    CHECK((f32(x) + f64(x)).type() == Float(64));  // floats: the wider
    CHECK((f16(x) + bf16(x)).type() == Float(32)); // float16 with bfloat16: float32
    CHECK((u8(x) < i16(x)).type() == Bool());
    CHECK((u8(x) == 3 && f32(x) > 0.f).type() == Bool());
}

TEST_CASE("abs of a signed integer is unsigned, as in Halide", "[dsl][types]") {
    Var x("x");
    CHECK(abs(x).type() == UInt(32));
    CHECK(abs(cast<float>(x)).type() == Float(32));
    CHECK(abs(cast<uint16_t>(x)).type() == UInt(16));
}

TEST_CASE("math functions work on floats and convert integers to float32", "[dsl][types]") {
    Var x("x");
    CHECK(sqrt(x).type() == Float(32));
    CHECK(exp(cast<double>(x)).type() == Float(64));
    CHECK(pow(cast<float16_t>(x), 2).type() == Float(16));
    CHECK(fma(cast<float>(x), 2.f, 1.f).type() == Float(32));
    CHECK(floor(cast<float>(x)).type() == Float(32));
}

TEST_CASE("select, min, max and clamp bring operands to a common type", "[dsl][types]") {
    Var x("x");
    InputBuffer<uint8_t> u8("u8", 1);
    CHECK(select(x > 0, u8(x), 0).type() == UInt(8));
    CHECK(min(u8(x), 3).type() == UInt(8));
    CHECK(max(x, 2.5f).type() == Float(32));
    CHECK(clamp(u8(x), 10, 20).type() == UInt(8));
    CHECK(select(x < 0, -1, x == 0, 0, 1).type() == Int(32));
}

TEST_CASE("constant expressions fold with the DSL's semantics", "[dsl][types]") {
    CHECK(ir::as_const_int(Expr(-7) / 2) == -4);
    CHECK(ir::as_const_int(Expr(-7) % 2) == 1);
    CHECK(ir::as_const_int(Expr(7) / -2) == -3);
    CHECK(ir::as_const_int(Expr(-7) % -2) == 1);
    CHECK(ir::as_const_int(Expr(5) / 0) == 0);
    CHECK(ir::as_const_int(cast<uint8_t>(300)) == 44);
    CHECK(ir::as_const_int(cast<int8_t>(200)) == -56);
}

TEST_CASE("expressions print in a readable C-like syntax", "[dsl][types]") {
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = x + y;
    CHECK(to_string(f(x + 1, y) * 2) == "(f((x + 1), y) * 2)");
    CHECK(to_string(cast<float>(x) / 2.f) == "(float32(x) / 2f)");
    CHECK(to_string(select(x > 0, x, -x)) == "select((x > 0), x, (0 - x))");
}

TEST_CASE("Func definitions record their Vars, type and updates", "[dsl][func]") {
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = cast<float>(x + y);
    CHECK(f.defined());
    CHECK(f.dimensions() == 2);
    CHECK(f.type() == Float(32));
    CHECK(f.args()[1].name() == "y");
    RDom r(0, 4);
    f(r, y) = f(r, y) * 2.f;
    f(x, y) += 1;  // an int constant meets a float Func: it is converted
    CHECK(f.num_update_definitions() == 2);
}

TEST_CASE("an update may use pure Vars inside other arguments when they also stand in their place", "[dsl][func]") {
    Var x("x"), y("y");
    Func g("g");
    g(x, y) = 0;
    RDom r(0, 3);
    g(x, x % 3 + r) += 1;  // y's position holds an expression of x; x is in its own position
    CHECK(g.num_update_definitions() == 1);
}

TEST_CASE("RDom variables are named after their RDom and carry their bounds", "[dsl][func]") {
    RDom r(0, 10, 5, 20, "r");
    CHECK(r.dimensions() == 2);
    CHECK(r.x.name() == "r.x");
    CHECK(r.y.name() == "r.y");
    CHECK(ir::as_const_int(r.y.min()) == 5);
    CHECK(ir::as_const_int(r.y.extent()) == 20);
}

TEST_CASE("Buffer wraps external memory with explicit strides without copying", "[dsl][buffer]") {
    std::vector<float> storage(20);
    for (int i = 0; i < 20; ++i) storage[size_t(i)] = float(i);
    // A 4 x 5 view, transposed: x steps 5 elements, y steps 1.
    Buffer<float> t(storage.data(), std::vector<BufferDim>{{0, 4, 5}, {0, 5, 1}}, "t");
    CHECK(t(1, 2) == 7.f);
    t(3, 4) = -1.f;
    CHECK(storage[19] == -1.f);
    Buffer<float> dense(storage.data(), std::vector<int>{5, 4});
    CHECK(dense(2, 3) == 17.f);
    CHECK(dense.width() == 5);
    CHECK(dense.height() == 4);
    CHECK(dense.channels() == 1);
}

TEST_CASE("Buffer wraps dense external memory from a braced list of sizes, one dimension included", "[dsl][buffer]") {
    std::vector<double> storage(12);
    for (int i = 0; i < 12; ++i) storage[size_t(i)] = double(i);
    int n = 12;
    Buffer<double> line(storage.data(), {n});  // was ambiguous with vector<BufferDim>(n)
    CHECK(line.dimensions() == 1);
    CHECK(line.width() == 12);
    CHECK(line(7) == 7.0);
    Buffer<double> grid(storage.data(), {4, 3}, "grid");
    CHECK(grid(1, 2) == 9.0);
    grid(3, 2) = -1.0;
    CHECK(storage[11] == -1.0);
    // Braced BufferDims still pick the strided form.
    Buffer<double> strided(storage.data(), {{0, 3, 4}, {0, 4, 1}});
    CHECK(strided(2, 1) == 9.0);
}

TEST_CASE("Buffer allocates from a braced list of variable sizes", "[dsl][buffer]") {
    int w = 5, h = 3;
    Buffer<double> b({w, h});  // was ambiguous with a copy of Buffer<double>(w, h)
    CHECK(b.dimensions() == 2);
    CHECK(b.width() == 5);
    CHECK(b.height() == 3);
    Buffer<int> named({w}, "line");
    CHECK(named.dimensions() == 1);
    CHECK(named.width() == 5);
    Buffer<float> from_vector(std::vector<int>{w, h, 2});
    CHECK(from_vector.channels() == 2);
}

TEST_CASE("Buffer<T> views of a Buffer<> check the element type", "[dsl][buffer]") {
    Buffer<> b(Float(32), {3, 3});
    Buffer<float> ok = b;
    CHECK(ok.width() == 3);
    REQUIRE_USER_ERROR((void)Buffer<int>(b), "float32", "Buffer<int32>");
}

TEST_CASE("Params and InputBuffers are symbolic until bound", "[dsl][param]") {
    Param<float> p("p", 2.5f);
    CHECK(p.get() == 2.5f);
    CHECK(Expr(p).type() == Float(32));
    InputBuffer<uint16_t> in("in", 2);
    CHECK(in.dimensions() == 2);
    CHECK(to_string(in.width()) == "in.extent.0");
    CHECK(to_string(in.dim(1).min()) == "in.min.1");
    CHECK(!in.get().defined());
    in.set(Buffer<uint16_t>(4, 4));
    CHECK(in.get().width() == 4);
}
