// Transposed copies of reduction operands (poly/transposed_operands.h): which calls get one,
// what the schedule does with it, and the results against the reference interpreter (which
// reads the operands in place) at sizes around the tiles, with non-zero mins.
#include "poly_test_util.h"

#include <random>

#include <nlohmann/json.hpp>

using namespace tessera;
using json = nlohmann::json;
using poly_test::check_against_interpreter;
using poly_test::funcs_of;
using poly_test::has;
using poly_test::random_buffer;

TEST_CASE("an operand the reduction walks contiguously is read through a transposed copy, and j becomes the vector loop",
          "[poly][transposed_operands]") {
    // syrk: C(j, i) += A(k, i) * A(k, j) on j <= i.
    Var j("j"), i("i");
    InputBuffer<double> A("A", 2), C0("C0", 2);
    RDom k(0, A.width(), "k");
    k.where(j <= i);
    Func C("C");
    C(j, i) = C0(j, i) * 0.5;
    C(j, i) += A(k, i) * A(k, j);
    Pipeline p(C);
    std::vector<std::string> funcs = funcs_of(p);
    INFO(json(funcs).dump());
    CHECK(has(funcs, "A_transposed"));

    // The update's innermost loop is the vector loop over j, below the reduction over k.
    json s = json::parse(p.schedule_json());
    std::string nest = s["loop_nest"];
    size_t update = nest.find("S_C_1(");
    REQUIRE(update != std::string::npos);
    size_t vector = nest.rfind("// vector", update);
    REQUIRE(vector != std::string::npos);
    std::string innermost = nest.substr(vector, update - vector);
    INFO(nest);
    CHECK(innermost.find("for (") != std::string::npos);
    CHECK(innermost.find("for (") == innermost.rfind("for ("));

    // Sizes below, around and past the 8 x 32 x 512 tiles; mins that are not multiples of them.
    for (auto [N, K, min_j, min_i] : std::vector<std::array<int, 4>>{
             {1, 1, 0, 0}, {7, 5, -3, 2}, {33, 31, 5, 5}, {67, 1, 0, 0}, {130, 513, 11, 11}, {9, 64, 2, -1}}) {
        Buffer<double> a = random_buffer<double>({K, N + std::max(min_i, min_j) - std::min(min_i, min_j)},
                                                 {0, std::min(min_i, min_j)}, uint32_t(N * 7 + K));
        A.set(a);
        C0.set(random_buffer<double>({N, N}, {min_j, min_i}, uint32_t(K)));
        check_against_interpreter(p, {N, N}, {min_j, min_i},
                                  "N " + std::to_string(N) + " K " + std::to_string(K) + " mins " + std::to_string(min_j) + ", " +
                                      std::to_string(min_i));
    }
}

TEST_CASE("an operand read once per reduction, as in a matrix-vector product, is not copied", "[poly][transposed_operands]") {
    Var j("j"), i("i");
    InputBuffer<double> A("A", 2), x("x", 1), T("T", 3);
    RDom k(0, 17, "k");
    Func y("y");
    y(i) = 0.0;
    y(i) += A(k, i) * x(k);  // one pure Var: nothing to reuse the copy along
    Func z("z");
    z(j, i) = 0.0;
    z(j, i) += T(k, j, i);  // every pure Var indexes T: each element is read once
    Pipeline p({y, z});
    std::vector<std::string> funcs = funcs_of(p);
    INFO(json(funcs).dump());
    CHECK(funcs.size() == 2);

    // Neither is a data-dependent index, nor an operand whose other dimensions involve j.
    InputBuffer<int> idx("idx", 1);
    Func w("w"), u("u");
    w(j, i) = 0.0;
    w(j, i) += A(clamp(idx(k), 0, 16), j) * A(k, i);
    u(j, i) = 0.0;
    u(j, i) += A(k + j, j) * A(k, i);
    CHECK(funcs_of(Pipeline(w)).size() == 1);
    CHECK(funcs_of(Pipeline(u)).size() == 1);
}

TEST_CASE("a Func operand is copied after its updates, and a copy takes a name no Func has", "[poly][transposed_operands]") {
    Var j("j"), i("i"), x("x"), y("y");
    InputBuffer<double> in("in", 2), in2("in2", 2);
    Func P("P"), taken("P_transposed"), C("C");
    P(x, y) = in(x, y) * 2.0;
    P(x, 0) += 1.0;  // the copy must see this update
    taken(x, y) = in2(x, y) + 1.0;
    RDom k(0, in.width(), "k");
    C(j, i) = taken(j, i);
    C(j, i) += P(k, i) * P(k, j);
    Pipeline p(C);
    std::vector<std::string> funcs = funcs_of(p);
    INFO(json(funcs).dump());
    CHECK(has(funcs, "P_transposed_2"));
    for (auto [N, K] : std::vector<std::array<int, 2>>{{1, 1}, {13, 7}, {40, 33}}) {
        in.set(random_buffer<double>({K, N}, {0, 0}, uint32_t(N + K)));
        in2.set(random_buffer<double>({N, N}, {0, 0}, uint32_t(N)));
        check_against_interpreter(p, {N, N}, {0, 0}, "N " + std::to_string(N) + " K " + std::to_string(K));
    }
}

TEST_CASE("a three-dimensional operand gets its vector dimension moved first", "[poly][transposed_operands]") {
    // C(j, i, c) += W(k, c, j) * X(k, i): W walks k contiguously and j at its outermost dimension,
    // and is reused along i.
    Var j("j"), i("i"), c("c");
    InputBuffer<double> W("W", 3), X("X", 2);
    RDom k(0, X.width(), "k");
    Func C("C");
    C(j, i, c) = 0.0;
    C(j, i, c) += W(k, c, j) * X(k, i);
    Pipeline p(C);
    std::vector<std::string> funcs = funcs_of(p);
    INFO(json(funcs).dump());
    CHECK(has(funcs, "W_transposed"));
    for (auto [J, I, Cn, K] : std::vector<std::array<int, 4>>{{1, 1, 1, 1}, {9, 5, 3, 11}, {35, 4, 2, 17}}) {
        W.set(random_buffer<double>({K, Cn, J}, {0, 0, 0}, uint32_t(J * I)));
        X.set(random_buffer<double>({K, I}, {0, 0}, uint32_t(K)));
        check_against_interpreter(p, {J, I, Cn}, {0, 0, 0}, "J " + std::to_string(J) + " K " + std::to_string(K));
    }
}
