// Vector loops' loads. Rotated loads (codegen/src/cpu/rotated_loads.h): a vector loop's loads of
// one row at neighbouring offsets are one load per step, the others shuffled from it and the
// step before. Lanes (vector_lanes.cpp) and prefetches of input rows (vector_step.h). The
// results are those of the interpreter at every width around the vector's.
#include "../test_util.h"

#include <algorithm>
#include <map>
#include <random>
#include <regex>

#include <tessera/codegen/cpu_target.h>

#include "tessera_apps/app.h"

using namespace tessera;

namespace {

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

CompileOptions kept() {
    CompileOptions o;
    o.keep_assembly = true;
    o.cache = false;
    return o;
}

// Compiles `out`, checks it against the interpreter over widths 1 .. 40 and a few heights (the
// input `in_extra` columns and `in_extra_rows` rows larger), and returns the unoptimized LLVM IR.
template <typename T>
std::string check_against_interpreter(Func out, InputBuffer<T> &in, int in_extra, CompileOptions options = kept(),
                                      int in_extra_rows = 0) {
    Callable c = Pipeline(out).compile(Target::host(), options);
    for (int w = 1; w <= 40; ++w) {
        for (int h : {1, 3}) {
            Buffer<T> data(w + in_extra, h + in_extra_rows);
            std::mt19937 rng(uint32_t(w * 17 + h));
            apps::fill_random(data, rng, -10, 10);
            in.set(data);
            Buffer<T> got(w, h), want(w, h);
            c.realize(got);
            interpret(Pipeline(out), {want});
            apps::Comparison cmp = apps::compare(got, want, 0);
            INFO(out.name() << " " << w << "x" << h << ": " << cmp.first_mismatch);
            REQUIRE(cmp.ok);
        }
    }
    return c.compiler_ir("llvm_unoptimized");
}

// A polynomial of `v` of 16 operations or more: enough that an output's streamed stores do not
// cap a vector loop's lanes (vector_lanes.cpp).
Expr enough_operations(Expr v) {
    Expr p = v;
    for (int k = 1; k <= 8; ++k) p = p * v + float(k);
    return p;
}

// That the unoptimized IR `ir` has vectors of as many float lanes as the host's vector register.
void check_whole_register_of_floats(const std::string &ir) {
    int lanes = codegen::host_target_info().vector_bits / 32;
    INFO("host vector bits " << codegen::host_target_info().vector_bits);
    CHECK(contains(ir, "<" + std::to_string(lanes) + " x float>"));
}

} // namespace

TEST_CASE("loads of one row at x, x + 1 and x + 2 are carried from step to step, with the interpreter's results",
          "[codegen][rotated]") {
    InputBuffer<double> in("in", 2);
    Var x("x"), y("y");
    Func out("three_points");
    out(x, y) = (in(x, y) + in(x + 1, y)) * 0.5 + in(x + 2, y) * 0.25;
    std::string ir = check_against_interpreter(out, in, 2);
    CHECK(contains(ir, "%rotated"));
    // One vector load of the input per step: the group's highest one.
    CHECK(contains(ir, "shufflevector"));
}

TEMPLATE_TEST_CASE("rotated loads keep each element type's memory form (bool-sized, narrow, half and wide elements)",
                   "[codegen][rotated]", uint8_t, int16_t, float16_t, bfloat16_t, int64_t) {
    InputBuffer<TestType> in("in", 2);
    Var x("x"), y("y");
    Func out("mixed_offsets");
    // Offsets 0, 1 and 3, and a load of another row that is not in the group.
    out(x, y) = in(x + 3, y) - in(x, y) + in(x + 1, y) * in(x + 1, y + 1);
    Callable c = Pipeline(out).compile(Target::host(), kept());
    CHECK(contains(c.compiler_ir("llvm_unoptimized"), "%rotated"));
    for (int w : {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 65}) {
        Buffer<TestType> data(w + 3, 3);
        std::mt19937 rng{uint32_t(w)};
        apps::fill_random(data, rng, -4, 4);
        in.set(data);
        Buffer<TestType> got(w, 2), want(w, 2);
        c.realize(got);
        interpret(Pipeline(out), {want});
        apps::Comparison cmp = apps::compare(got, want, 0);
        INFO(w << ": " << cmp.first_mismatch);
        CHECK(cmp.ok);
    }
}

TEST_CASE("offsets a whole vector apart are carried too, and farther ones are loaded as written", "[codegen][rotated]") {
    InputBuffer<float> in("in", 2);
    Var x("x"), y("y");
    // 4 lanes apart: within any vector of floats this target has (4 .. 16 lanes).
    Func near("near");
    near(x, y) = in(x, y) - in(x + 4, y);
    CHECK(contains(check_against_interpreter(near, in, 4), "%rotated"));
    // 40 apart: more than a vector of 16 floats; nothing to carry.
    Func far("far");
    far(x, y) = in(x, y) - in(x + 40, y);
    CHECK_FALSE(contains(check_against_interpreter(far, in, 40), "%rotated"));
}

namespace {
// jacobi-1d written the natural way: the update stores into the ring's other plane. `scaled`:
// the output is twice the last plane (a stage of its own) rather than the plane itself.
struct RingJacobi {
    InputBuffer<double> in{"in", 1};
    Param<int> steps{"steps"};
    Var x{"x"}, t{"t"};
    Func J{"J"}, out{"out"};
    explicit RingJacobi(bool scaled) {
        RDom r(1, in.width() - 2, 0, steps, "r");
        J(x, t) = in(x);
        J(r.x, r.y + 1) = 0.33333 * (J(r.x - 1, r.y) + J(r.x, r.y) + J(r.x + 1, r.y));
        if (scaled) out(x) = J(x, steps) * 2.0;
        else out(x) = J(x, steps);
    }
    // Runs `c` at widths around a vector's, for each of `step_counts`, against the interpreter.
    void check(Callable &c, const std::vector<int> &step_counts, uint32_t seed) {
        for (int w : {3, 4, 9, 17, 18, 33, 100}) {
            for (int s : step_counts) {
                Buffer<double> data(w);
                std::mt19937 rng(uint32_t(w) * seed + uint32_t(s));
                apps::fill_random(data, rng, -1, 1);
                in.set(data);
                steps.set(s);
                Buffer<double> got(w), want(w);
                c.realize(got);
                interpret(Pipeline(out), {want});
                apps::Comparison cmp = apps::compare(got, want, 0);
                INFO(w << " x " << s << " steps: " << cmp.first_mismatch);
                CHECK(cmp.ok);
            }
        }
    }
};
} // namespace

TEST_CASE("a time stencil folded to two planes carries its loads of plane t while it stores plane t + 1",
          "[codegen][rotated]") {
    // The loads of plane t never read the plane the update stores, so they are rotated.
    RingJacobi j(false);
    Callable c = Pipeline(j.out).compile(Target::host(), kept());
    CHECK(contains(c.compiler_ir("loop_nest"), "fold:F_J:1:2"));
    CHECK(contains(c.compiler_ir("llvm_unoptimized"), "%rotated"));
    j.check(c, {1, 2, 7}, 5);
}

namespace {
// Per explicit vector loop of `ir`, whether iterations of its variable run before it, as a scalar
// loop or one masked step: the block that enters it (its `.vfirst` block, which loads the first
// step's rotated vectors, or else its `.vhead`) is entered from that loop's exit block
// (`<var>.exit`) or the masked step's (`<var>.vpeel_done`).
std::vector<bool> scalar_loop_before_vector_loops(const std::string &ir) {
    std::vector<bool> peeled;
    // A block's label and its predecessors, as LLVM prints them: `"$c1.vhead":  ; preds = %a, %"$c1.vfirst"`.
    std::regex label("\n\"?([$a-zA-Z0-9_.]+)\"?:[^\n]*; preds = ([^\n]*)"), block_name("%\"?([$a-zA-Z0-9_.]+)");
    for (const std::string &f : test_util::ir_functions(ir)) {
        std::map<std::string, std::vector<std::string>> preds;
        for (std::sregex_iterator m(f.begin(), f.end(), label), none; m != none; ++m) {
            std::string list = (*m)[2].str();
            for (std::sregex_iterator p(list.begin(), list.end(), block_name); p != none; ++p) preds[(*m)[1].str()].push_back((*p)[1].str());
        }
        for (const auto &[block, from] : preds) {
            size_t v = block.find(".vhead");
            if (v == std::string::npos) continue;
            std::string var = block.substr(0, v);
            std::vector<std::string> entered = from;
            for (const std::string &b : from)
                if (b.rfind(var + ".vfirst", 0) == 0) entered = preds[b];
            peeled.push_back(std::any_of(entered.begin(), entered.end(), [&](const std::string &b) {
                return b.rfind(var + ".exit", 0) == 0 || b.rfind(var + ".vpeel_done", 0) == 0;
            }));
        }
    }
    return peeled;
}
} // namespace

TEST_CASE("an explicit vector loop has iterations before it only to align a streaming store", "[codegen][rotated]") {
    // The stage into the ring of planes streams nothing: its scalar iterations are the
    // remainder after the vector steps, with no empty loop before them (LLVM kept one, a copy
    // of the body through every pass to machine code). The output's loop streams its stores
    // and peels up to a vector's worth of iterations to align them: one masked step on AVX-512,
    // else a scalar loop.
    RingJacobi j(true);
    Callable c = Pipeline(j.out).compile(Target::host(), kept());
    std::string ir = c.compiler_ir("llvm_unoptimized");
    CHECK((ir.find(".vpeel") != std::string::npos) == (codegen::host_target_info().vector_bits >= 512));
    std::vector<bool> peeled = scalar_loop_before_vector_loops(ir);
    REQUIRE(peeled.size() >= 2);
    CHECK(std::count(peeled.begin(), peeled.end(), false) >= 1);  // the ring's stages
    CHECK(std::count(peeled.begin(), peeled.end(), true) >= 1);   // the output
    j.check(c, {0, 1, 2, 7}, 7);
}

TEST_CASE("a vector loop whose update is guarded to a plane's interior is split at the guard into explicit vector loops",
          "[codegen][rotated]") {
    // jacobi-2d written the natural way: in its time tiles, a row's loop initializes the plane
    // everywhere and updates it on the interior only, behind a guard affine in x. Split at the
    // guard's bounds, the interior is a vector loop of its own whose loads are rotated, and
    // the initialization there is left out (the update overwrites it) unless the update reads
    // the element the initialization stored (`reads_own`). (The initial value changes from plane
    // to plane, so that every plane is initialized in the time tiles: a value the ring keeps
    // would be initialized on the first planes only, before them, ring_initialization.h.)
    for (bool reads_own : {false, true}) {
    InputBuffer<double> in("in", 2);
    Param<int> steps("steps");
    Var x("x"), y("y"), t("t");
    Func J("J"), out("out");
    RDom r(1, in.width() - 2, 1, in.height() - 2, 0, steps, "r");
    J(x, y, t) = in(x, y) + t;
    Expr own = reads_own ? J(r.x, r.y, r.z + 1) * 0.5 : Expr(0.0);
    J(r.x, r.y, r.z + 1) =
        0.2 * (J(r.x, r.y, r.z) + J(r.x - 1, r.y, r.z) + J(r.x + 1, r.y, r.z) + J(r.x, r.y - 1, r.z) + J(r.x, r.y + 1, r.z)) + own;
    out(x, y) = J(x, y, steps);
    Callable c = Pipeline(out).compile(Target::host(), kept());
    std::string nest = c.compiler_ir("loop_nest");
    size_t vector_loop = nest.find("vectorized for");
    REQUIRE(vector_loop != std::string::npos);
    INFO(nest);
    CHECK(nest.find("if (", vector_loop) < nest.find("S_J_1", vector_loop));  // the update is guarded in the loop
    CHECK(contains(c.compiler_ir("llvm_unoptimized"), "%rotated"));
    for (auto [w, h] : std::vector<std::pair<int, int>>{{3, 3}, {4, 5}, {9, 4}, {17, 3}, {18, 7}, {33, 9}, {70, 5}}) {
        for (int s : {1, 2, 5}) {
            Buffer<double> data(w, h);
            std::mt19937 rng(uint32_t(w * 5 + h * 3 + s));
            apps::fill_random(data, rng, -1, 1);
            in.set(data);
            steps.set(s);
            Buffer<double> got(w, h), want(w, h);
            c.realize(got);
            interpret(Pipeline(out), {want});
            apps::Comparison cmp = apps::compare(got, want, 0);
            INFO(w << "x" << h << ", " << s << " steps" << (reads_own ? ", reading its own element: " : ": ") << cmp.first_mismatch);
            CHECK(cmp.ok);
        }
    }
    }
}


TEST_CASE("a float stage that writes a scratchpad gets a whole vector register of lanes", "[codegen][rotated]") {
    // The scratchpad's coordinates subtract an int64 tile offset; they stay scalar in a vector
    // step and do not make the lanes 64-bit (they once halved them).
    InputBuffer<float> in("in", 2);
    Var x("x"), y("y");
    Func bx("bx"), by("by");
    // 5 operations: too many to be recomputed at by's two points (automatic_inlining.h).
    bx(x, y) = in(x, y) + in(x + 1, y) * 2.f + in(x + 2, y) * 3.f - 1.f;
    by(x, y) = bx(x, y) - bx(x + 1, y);
    std::string ir = check_against_interpreter(by, in, 3);
    check_whole_register_of_floats(ir);
}

TEST_CASE("a lookup at an index computed from data gets a whole vector register of float lanes", "[codegen][rotated]") {
    // The table's lane offsets are int32 (vector_step.h, gather): the lookup counts as its
    // float element, not as a 64-bit address per lane (which once halved the lanes: 8 floats on
    // AVX-512, where bilateral_grid's and local_laplacian's lookups ran 4% faster with 16).
    InputBuffer<float> in("in", 2);
    Var x("x"), y("y");
    Func out("looked_up");
    Expr v = in(x, y), index = clamp(cast<int>(v * 3.f), 0, 9) + 10;
    Expr p = enough_operations(v);
    out(x, y) = in(index, y) * p;
    std::string ir = check_against_interpreter(out, in, 20);
    check_whole_register_of_floats(ir);
}

TEST_CASE("a read through a repeat_edge boundary gets a whole vector register of float lanes", "[codegen][rotated]") {
    // Its clamped coordinates load contiguous vectors (or every other element, downsampled) in
    // the interior and gather at int32 lane offsets at the edges only: they count as the float
    // element, not as a 64-bit address per lane (which once halved the lanes: 8 floats on
    // AVX-512, where local_laplacian and bilateral_grid ran 3% faster with 16). Widths 1 .. 40
    // take the edges' gathers at both ends.
    InputBuffer<float> in("in", 2);
    Var x("x"), y("y");
    Func clamped = BoundaryConditions::repeat_edge(in);
    Func out("downsampled");
    Expr v = clamped(2 * x - 1, y - 1) + clamped(2 * x, y) * 2.f + clamped(2 * x + 1, y + 1);
    Expr p = enough_operations(v);
    out(x, y) = p;
    std::string ir = check_against_interpreter(out, in, 2);
    check_whole_register_of_floats(ir);
}

TEST_CASE("an int16 stage that compares in int32 gets a whole vector register of int16 lanes", "[codegen][rotated]") {
    // camera_pipe's demosaic: int16 loads and stores, absolute differences compared in int32.
    // The lanes are a register of the int16 elements, each int32 value two registers
    // (vector_lanes.cpp); a register of the int32 values would halve them. `out` computes in
    // double (each value at most two registers: half a register of int16 lanes), so that any
    // int16 vector of a whole register is green's.
    InputBuffer<int16_t> in("in", 2);
    Var x("x"), y("y");
    Func green("green"), out("out");
    Expr a = cast<int32_t>(in(x, y)), b = cast<int32_t>(in(x + 1, y)), c = cast<int32_t>(in(x + 2, y));
    green(x, y) = select(abs(a - b) < abs(c - b), cast<int16_t>((a + b + 1) / 2), cast<int16_t>((c + b + 1) / 2));
    out(x, y) = cast<int16_t>(cast<double>(green(x, y)) * 0.5 - cast<double>(green(x + 1, y)));
    std::string ir = check_against_interpreter(out, in, 3);
    int lanes = codegen::host_target_info().vector_bits / 16;
    INFO("host vector bits " << codegen::host_target_info().vector_bits);
    CHECK(contains(ir, "<" + std::to_string(lanes) + " x i16>"));
    CHECK(contains(ir, "<" + std::to_string(lanes) + " x i32>"));
}

TEST_CASE("a vector loop prefetches each input point it loads once, a fixed distance ahead", "[codegen][prefetch]") {
    // Two rows of the input streamed, in(x, y) read three times: one prefetch per row in the
    // vector loop's body, none in the scalar loops around it. The line ahead lies past the
    // input at the small widths, which a prefetch ignores.
    InputBuffer<float> in("in", 2);
    Var x("x"), y("y");
    Func out("two_rows");
    out(x, y) = in(x, y) * 2.f + in(x, y + 1) + in(x, y) * in(x, y);
    std::string ir = check_against_interpreter(out, in, 0, kept(), 1);
    int64_t ahead = codegen::host_target_info().prefetch_bytes;
    REQUIRE(ahead > 0);
    std::regex prefetch(R"(getelementptr i8, ptr %[^,]+, i64 (\d+)\n\s*call void @llvm\.prefetch)");
    std::vector<std::string> distances;
    for (auto it = std::sregex_iterator(ir.begin(), ir.end(), prefetch); it != std::sregex_iterator(); ++it)
        distances.push_back((*it)[1]);
    INFO(ir);
    CHECK(distances == std::vector<std::string>{std::to_string(ahead), std::to_string(ahead)});
}
