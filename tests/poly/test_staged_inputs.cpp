// Input tiles staged in GPU shared memory (poly/staged_inputs.h): which inputs get a copy, that
// only GPU schedules make one, that an exported GPU schedule brings its copies back on import,
// and that the emulated results stay those of the reference interpreter.
#include "poly_test_util.h"

#include <nlohmann/json.hpp>

#include <tessera/poly/staged_inputs.h>
#include <tessera/runtime/compiled_pipeline.h>

using namespace tessera;
using json = nlohmann::json;

namespace {

// The inputs a model of `p` stages, with the GPU's choice (`gpu`) or the CPU's.
std::vector<std::string> staged(const Pipeline &p, bool gpu) { return poly::staged_input_names(*poly::build_model(p, "", gpu)); }

Target emulated_gpu() { return Target::cuda(80).emulated(); }

// Staging is a GPU option, off by default (CompileOptions::gpu_stage_inputs).
CompileOptions staging() {
    CompileOptions o;
    o.gpu_stage_inputs = true;
    return o;
}

} // namespace

TEST_CASE("a GPU stencil's input read at several offsets along x is staged, and one read at one offset or along y only is not",
          "[poly][gpu]") {
    Var x("x"), y("y");
    InputBuffer<float> in("in", 2), other("other", 2), rows("rows", 2);
    Func f("f"), g("g");
    // in: three offsets along x; other: one; rows: three offsets along y only (each warp-wide
    // load is a row, aligned where the tile is).
    f(x, y) = in(x - 1, y) + in(x, y) + in(x + 1, y) + other(x, y) + rows(x, y - 1) + rows(x, y + 1);
    g(x, y) = f(x, y) * 2.0f;
    Pipeline p(g);
    CHECK(staged(p, true) == std::vector<std::string>{"in"});
    CHECK(staged(p, false).empty());  // a CPU's caches do this already
    json j = json::parse(p.schedule_json());
    CHECK_FALSE(j["pipeline"].contains("staged_inputs"));
}

TEST_CASE("an input read at a data-dependent or scaled coordinate, or a pipeline with directives, stages nothing",
          "[poly][gpu]") {
    Var x("x"), y("y");
    InputBuffer<float> in("in", 2);
    InputBuffer<int32_t> idx("idx", 1);
    Func gathered("gathered"), scaled("scaled");
    gathered(x, y) = in(clamp(idx(x), 0, in.width() - 1), y) + in(x + 1, y);  // one call not at x plus a constant
    CHECK(staged(Pipeline(gathered), true).empty());
    scaled(x, y) = in(2 * x, y) + in(2 * x + 1, y);
    CHECK(staged(Pipeline(scaled), true).empty());
    Func f("f"), g("g");
    f(x, y) = in(x, y) + in(x + 1, y);
    g(x, y) = f(x, y) + f(x + 1, y);
    f.compute_root();
    CHECK(staged(Pipeline(g), true).empty());  // a written schedule says itself what it stages
}

TEST_CASE("a staged GPU stencil matches the reference interpreter at awkward sizes and offsets", "[poly][gpu]") {
    Var x("x"), y("y");
    InputBuffer<float> in("in", 2);
    Func f("f"), g("g");
    f(x, y) = in(x, y) + 2.0f * in(x + 1, y) + in(x + 3, y) - in(x + 1, y + 2);
    g(x, y) = f(x, y) - f(x, y + 1);
    Pipeline p(g);
    Callable c = p.compile(emulated_gpu(), staging());
    REQUIRE(c.compiler_ir("schedule").find("staged_inputs") != std::string::npos);
    for (auto [w, h, x0] : std::vector<std::array<int, 3>>{{1, 1, 0}, {7, 3, -5}, {33, 9, 3}, {257, 5, 1}, {300, 37, -7}}) {
        Buffer<float> input(w + 3, h + 3);
        input.set_min({x0, 2});
        for (int j = 0; j < h + 3; ++j)
            for (int i = 0; i < w + 3; ++i) input(x0 + i, 2 + j) = float((i * 37 + j * 11) % 23) * 0.25f;
        in.set(input);
        Buffer<float> got(w, h), want(w, h);
        got.set_min({x0, 2});
        want.set_min({x0, 2});
        c.realize(got);
        interpret(p, {want});
        INFO(w << " x " << h << " at " << x0);
        for (int j = 0; j < h; ++j)
            for (int i = 0; i < w; ++i) REQUIRE(got(x0 + i, 2 + j) == want(x0 + i, 2 + j));
    }
}

TEST_CASE("a schedule JSON that stages an input the pipeline cannot stage is refused, naming the input", "[poly][gpu][errors]") {
    Var x("x"), y("y");
    InputBuffer<float> in("in", 2);
    Func f("f");
    f(x, y) = in(x, y) + in(x + 1, y);
    Pipeline p(f);
    json j = json::parse(p.schedule_json());
    j["pipeline"]["staged_inputs"] = json::array({"nothing"});
    CHECK_THROWS_WITH(p.set_schedule_json(j.dump()), Catch::Matchers::Contains("stages input nothing in shared memory"));
}

TEST_CASE("an input two outputs read, each in a group of its own, is not staged: its copy would be stored whole",
          "[poly][gpu]") {
    Var x("x"), y("y");
    InputBuffer<float> in("in", 2);
    Func f1("f1"), f2("f2");
    f1(x, y) = in(x, y) + in(x + 1, y);
    f2(x, y) = in(x, y) * in(x + 2, y + 1);
    Pipeline p({f1, f2});
    CHECK(staged(p, true) == std::vector<std::string>{"in"});  // the model makes the copy ...
    CompileReport report;
    auto program = runtime::program_for(p, runtime::gpu_schedule_options(staging(), TargetInfo::nvidia_gpu(80)), report);
    CHECK(program->model->staged_copies.empty());  // ... and the schedule does without it
    REQUIRE_FALSE(program->groups.empty());
    CHECK_THAT(program->groups[0].note, Catch::Matchers::Contains("inputs not staged in shared memory (in_shared is stored whole"));
    for (const auto &g : program->groups)
        for (int s : g.statements) CHECK(program->model->statements[size_t(s)].name.find("_shared") == std::string::npos);
    Buffer<float> input(41, 9);
    for (int j = 0; j < 9; ++j)
        for (int i = 0; i < 41; ++i) input(i, j) = float(i - 2 * j);
    in.set(input);
    Buffer<float> g1(38, 8), g2(38, 8), w1(38, 8), w2(38, 8);
    p.compile(emulated_gpu(), staging()).realize({g1, g2});
    interpret(p, {w1, w2});
    for (int j = 0; j < 8; ++j)
        for (int i = 0; i < 38; ++i) {
            REQUIRE(g1(i, j) == w1(i, j));
            REQUIRE(g2(i, j) == w2(i, j));
        }
}
