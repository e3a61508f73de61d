// The GPU path without a GPU: every app compiled for Target::cuda(80), its kernels run by the
// emulator (the same kernel IR that becomes PTX), against the app's plain C++ loops at odd,
// prime and smaller-than-a-block sizes.
#include <dlfcn.h>

#include <map>

#include "../test_util.h"
#include "../codegen/compiled_app_check.h"

#include <tessera/poly/gpu_mapping.h>
#include <tessera/poly/schedule_json.h>
#include <tessera/runtime/compiled_pipeline.h>
#include <tessera/runtime/cuda_device.h>
#include <tessera/runtime/gpu_emulator.h>

#include <isl/schedule.h>
#include <nlohmann/json.hpp>

#include "tessera_apps/app.h"

using namespace tessera;

namespace {

Target emulated_gpu() { return Target::cuda(80).emulated(); }

// The emulator's profile of one run of `app` (prepared at `sizes`) compiled for the emulated GPU.
std::vector<runtime::GpuKernelProfile> profiled_run(apps::App &app, const std::vector<int> &sizes, uint32_t seed,
                                                    const CompileOptions &o = {}) {
    app.prepare(sizes, seed);
    Callable c = app.pipeline().compile(emulated_gpu(), o);
    std::vector<Buffer<void>> out = app.make_outputs();
    runtime::set_emulator_profiling(true);
    c.realize(out);
    runtime::set_emulator_profiling(false);
    return runtime::take_emulator_profile();
}

void check_emulated(const std::string &name, const std::vector<std::vector<int>> &sizes, CompileOptions o = {}) {
    auto app = apps::make_app(name);
    compiled_app_check::check_callable(*app, app->pipeline().compile(emulated_gpu(), o), sizes, 5, "on the emulated GPU");
}

} // namespace

TEST_CASE("emulated GPU blur_x_blur_y matches plain loops", "[gpu][apps]") {
    check_emulated("blur_x_blur_y", {{5, 5}, {9, 13}, {37, 71}, {263, 41}});
}
TEST_CASE("a tile's rows unrolled and jammed into the thread loop compute what one row at a time does, whatever rows are left over",
          "[gpu][apps]") {
    // Tiles of 32 rows (36 of blur_x); the sizes are the input's, 4 rows more than the output's:
    // outputs of 1 to 6 rows leave 1 to 3 rows past each jammed step, 31 to 38 a full tile and a
    // partial one; 1 is no unrolling, 3 and 8 leave other remainders.
    for (int unroll : {1, 2, 3, 4, 8}) {
        CompileOptions o;
        o.gpu_unroll_rows = unroll;
        INFO("gpu_unroll_rows " << unroll);
        check_emulated("blur_x_blur_y", {{7, 5}, {9, 6}, {5, 7}, {6, 8}, {263, 9}, {11, 10}, {40, 35}, {13, 37}, {17, 39}, {300, 42}}, o);
    }
    CompileOptions bad;
    bad.gpu_unroll_rows = 33;
    REQUIRE_USER_ERROR(apps::make_app("blur_x_blur_y")->pipeline().compile(emulated_gpu(), bad), "gpu_unroll_rows", "1 to 32");
}
TEST_CASE("warps aligned a row at a time, aligned in jammed rows or not aligned, with inputs staged or not, compute what plain "
          "loops do",
          "[gpu][apps]") {
    for (const char *align : {"rows", "jammed", "off"})
        for (bool staged : {true, false})
            for (int unroll : {1, 3, 4}) {
                CompileOptions o;
                o.gpu_align_warps = align;
                o.gpu_stage_inputs = staged;
                o.gpu_unroll_rows = unroll;
                INFO("gpu_align_warps " << align << ", gpu_stage_inputs " << staged << ", gpu_unroll_rows " << unroll);
                // Input rows 5 to 9 wider than the output, so that pitches fall at every offset
                // from a sector; row counts leave every remainder of the jammed steps.
                check_emulated("blur_x_blur_y", {{7, 5}, {263, 9}, {13, 37}, {300, 42}}, o);
                check_emulated("unsharp_mask", {{5, 6}, {31, 37}}, o);
                check_emulated("harris", {{9, 7}, {70, 37}}, o);
            }
    CompileOptions bad;
    bad.gpu_align_warps = "diagonal";
    REQUIRE_USER_ERROR(apps::make_app("blur_x_blur_y")->pipeline().compile(emulated_gpu(), bad), "gpu_align_warps",
                       "auto, rows, jammed or off");
}
TEST_CASE("jammed rows each start their warps on a sector: blur moves the sectors it moves a row at a time, fewer than unaligned",
          "[gpu][model]") {
    auto app = apps::make_app("blur_x_blur_y");
    std::map<std::string, runtime::GpuKernelProfile> by_alignment;
    for (const char *align : {"rows", "jammed", "off"}) {
        CompileOptions o;
        o.gpu_align_warps = align;
        o.gpu_stage_inputs = true;  // the input's copy into shared memory is aligned too
        std::vector<runtime::GpuKernelProfile> kernels = profiled_run(*app, {260, 68}, 3, o);
        REQUIRE(kernels.size() == 1);
        by_alignment[align] = kernels[0];
    }
    // The input's pitch is 1040 bytes, 16 past a multiple of 32: every other row is off a sector.
    const runtime::GpuKernelProfile &rows = by_alignment["rows"], &jammed = by_alignment["jammed"], &off = by_alignment["off"];
    INFO("coalescing: rows " << rows.coalescing() << ", jammed " << jammed.coalescing() << ", off " << off.coalescing());
    CHECK(jammed.requested_bytes == rows.requested_bytes);
    CHECK(jammed.transferred_bytes == rows.transferred_bytes);
    CHECK(off.requested_bytes == rows.requested_bytes);
    CHECK(off.transferred_bytes > rows.transferred_bytes * 21 / 20);
    CHECK(jammed.global_load_bytes + jammed.global_store_bytes == rows.global_load_bytes + rows.global_store_bytes);
}
TEST_CASE("a kernel whose outer block loop runs once at bounded sizes launches the next tile loop's blocks, not one",
          "[gpu][model]") {
    // bound() to 3 rows, one tile along y: isl drops the y tile loop, and the x tile loop
    // collapsed with it under the kernel:2 mark ran inside one block, all 8 x tiles in turn.
    test_util::BoundedStencil stencil(2000, 3);
    Callable c = Pipeline(stencil.g).compile(emulated_gpu());
    INFO(c.compiler_ir("loop_nest"));
    Buffer<int> got(2000, 3), want(2000, 3);
    runtime::set_emulator_profiling(true);
    c.realize(got);
    runtime::set_emulator_profiling(false);
    std::vector<runtime::GpuKernelProfile> kernels = runtime::take_emulator_profile();
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0].blocks == 8);  // 2000 columns in tiles of 256
    interpret(Pipeline(stencil.g), {want});
    CHECK(apps::compare(got, want, 0).ok);
}
TEST_CASE("inputs not staged: blur's stages read the input from global memory, and one barrier separates them", "[gpu][model]") {
    auto app = apps::make_app("blur_x_blur_y");
    CompileOptions o;
    o.gpu_stage_inputs = false;
    o.gpu_column_windows = false;  // (blur's stages through shared memory: test_gpu_column_windows.cpp has the default)
    std::vector<runtime::GpuKernelProfile> kernels = profiled_run(*app, {260, 68}, 3, o);
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0].barriers == kernels[0].blocks);  // after blur_x only
    CHECK(app->pipeline().compile(emulated_gpu(), o).compiler_ir("schedule").find("staged_inputs") == std::string::npos);
    CompileOptions staged;
    staged.gpu_stage_inputs = true;
    staged.gpu_column_windows = false;
    CHECK(app->pipeline().compile(emulated_gpu(), staged).compiler_ir("schedule").find("staged_inputs") != std::string::npos);
}
TEST_CASE("emulated GPU harris matches plain loops", "[gpu][apps]") { check_emulated("harris", {{5, 5}, {23, 19}, {70, 37}}); }
TEST_CASE("emulated GPU unsharp_mask matches plain loops", "[gpu][apps]") { check_emulated("unsharp_mask", {{5, 5}, {31, 37}}); }
TEST_CASE("emulated GPU histogram matches plain loops", "[gpu][apps]") { check_emulated("histogram", {{1, 1}, {13, 7}, {61, 37}}); }
TEST_CASE("emulated GPU matmul and gemm match plain loops", "[gpu][apps]") {
    check_emulated("matmul", {{1, 1, 1}, {7, 5, 3}, {37, 41, 43}});
    check_emulated("gemm", {{1, 1, 1}, {13, 11, 9}, {35, 66, 33}});
}
TEST_CASE("emulated GPU prefix_sum matches plain loops", "[gpu][apps]") { check_emulated("prefix_sum", {{1}, {2}, {97}, {1031}}); }
TEST_CASE("emulated GPU jacobi_2d and seidel_2d match plain loops", "[gpu][apps]") {
    check_emulated("jacobi_2d", {{3, 3, 1}, {11, 7, 4}, {37, 23, 5}});
    check_emulated("seidel_2d", {{3, 3, 1}, {11, 7, 4}, {23, 19, 3}});
}
TEST_CASE("emulated GPU bilateral_grid matches plain loops", "[gpu][apps]") {
    check_emulated("bilateral_grid", {{1, 1}, {9, 17}, {40, 29}});
}

TEST_CASE("with the shared-memory opt-in, harris's blocks use more than 48 KiB and still match plain loops", "[gpu][apps]") {
    auto app = apps::make_app("harris");
    Target opted_in = emulated_gpu().with_shared_memory_opt_in();
    Callable c = app->pipeline().compile(opted_in);
    compiled_app_check::check_callable(*app, c, {{23, 19}, {300, 70}}, 5, "on the emulated GPU with the shared-memory opt-in");
    // Bigger tiles: the scratchpads of a block exceed the default 48 KiB, within sm_80's 163 KiB.
    app->prepare({1024, 256}, 1);
    std::vector<Buffer<void>> out = app->make_outputs();
    runtime::set_emulator_profiling(true);
    c.realize(out);
    std::vector<runtime::GpuKernelProfile> kernels = runtime::take_emulator_profile();
    runtime::set_emulator_profiling(false);
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0].shared_bytes > 48 * 1024);
    CHECK(kernels[0].shared_bytes <= 163 * 1024);
    // Only GPU targets take it.
    REQUIRE_USER_ERROR(app->pipeline().compile(Target::host().with_shared_memory_opt_in()), "with_shared_memory_opt_in",
                       "Target::cuda");
}

TEST_CASE("blur_x_blur_y and harris compile to one GPU kernel each", "[gpu]") {
    for (const char *name : {"blur_x_blur_y", "harris"}) {
        auto app = apps::make_app(name);
        Callable c = app->pipeline().compile(emulated_gpu());
        INFO(name);
        CHECK(c.report().kernels == 1);
    }
}

TEST_CASE("a GPU kernel's stages are separated by barriers, each justified by the scratchpad two stages share", "[gpu]") {
    auto app = apps::make_app("blur_x_blur_y");
    for (bool staged : {false, true}) {
        CompileOptions o;
        o.gpu_stage_inputs = staged;
        o.gpu_column_windows = false;  // (the shared-memory shape; column windows have no barrier)
        CompileReport report;
        auto program = runtime::program_for(app->pipeline(), runtime::gpu_schedule_options(o, TargetInfo::nvidia_gpu(80)), report);
        std::string json = poly::schedule_to_json(*program);
        INFO("gpu_stage_inputs " << staged);
        // (The tree is isl's text inside a JSON string: its quotes are escaped.)
        CHECK(json.find(R"(mark: \"kernel:3\")") != std::string::npos);
        CHECK(json.find(R"(mark: \"thread\")") != std::string::npos);
        size_t barriers = 0;
        for (size_t at = json.find(R"(mark: \"barrier\")"); at != std::string::npos; at = json.find(R"(mark: \"barrier\")", at + 1))
            ++barriers;
        // blur_x, then blur_y, which reads it: one barrier. Staged, the input's tile is copied
        // into shared memory first (poly/staged_inputs.h), and blur_x reads the copy: two.
        int stages = staged ? 3 : 2;
        CHECK(barriers == size_t(stages - 1));
        // The schedule JSON's summary of the kernels.
        nlohmann::json j = nlohmann::json::parse(json);
        REQUIRE(j.contains("gpu_kernels"));
        REQUIRE(j["gpu_kernels"].size() == 1);
        CHECK(j["gpu_kernels"][0]["block_loops"] == 3);
        CHECK(j["gpu_kernels"][0]["barriers"] == stages - 1);
        CHECK(j["gpu_kernels"][0]["thread_loops"] == stages);
        if (staged) {
            CHECK(j["gpu_kernels"][0]["block_scratch"] == nlohmann::json::array({"input_shared", "blur_x"}));
            CHECK(j["pipeline"]["staged_inputs"] == nlohmann::json::array({"input"}));
        } else {
            CHECK(j["gpu_kernels"][0]["block_scratch"] == nlohmann::json::array({"blur_x"}));
            CHECK(!j["pipeline"].contains("staged_inputs"));
        }
    }
}

TEST_CASE("the emulator catches a missing barrier: a stage reading its neighbours' scratchpad without it gives a wrong answer",
          "[gpu]") {
    // g reads f at x + 2, which another thread of the block computes: the stages need the
    // barrier between them. (blur_y reads blur_x in its own column, x, which the same thread
    // computed.)
    Var x("x"), y("y");
    InputBuffer<float> in("in", 2);
    Func f("f"), g("g");
    // 5 operations: too many to be recomputed at g's two points (automatic_inlining.h).
    f(x, y) = ((in(x, y) * 2.f + 1.f) * in(x, y) - 3.f) * 0.5f;
    g(x, y) = f(x, y) + f(x + 2, y) * 3.f;
    Pipeline p(g);
    Buffer<float> input({71, 19});
    for (int j = 0; j < 19; ++j)
        for (int i = 0; i < 71; ++i) input(i, j) = float((i * 7 + j * 13) % 17);
    in.set(input);
    Buffer<float> want({69, 19});
    interpret(p, {want});
    // Runs `program` in the emulator, as it is.
    auto run = [&](const poly::Program &program) {
        Buffer<float> got({69, 19});
        Callable c(runtime::compile_program_for_cuda(p, std::make_shared<const poly::Program>(program), emulated_gpu(), {}));
        c.realize(got);
        for (int j = 0; j < 19; ++j)
            for (int i = 0; i < 69; ++i)
                if (got(i, j) != want(i, j)) return false;
        return true;
    };
    CompileReport report;
    auto program = runtime::program_for(p, runtime::gpu_schedule_options({}, TargetInfo::nvidia_gpu(80)), report);
    REQUIRE(program->groups.size() == 1);
    CHECK(run(*program));
    std::string json = poly::schedule_to_json(*program);
    p.set_schedule_json(json);  // the exported schedule imports, legal
    p.clear_schedule_json();
    // The barrier mark renamed to one Tessera does not know (a plain mark).
    std::string racy = json;
    size_t at = racy.find(R"(mark: \"barrier\")");
    REQUIRE(at != std::string::npos);
    racy.replace(at, std::string(R"(mark: \"barrier\")").size(), R"(mark: \"removed\")");
    // Legality rejects it, naming the stages...
    REQUIRE_USER_ERROR(p.set_schedule_json(racy), "no barrier between them", "G0_S_g_0", "G0_S_f_0");
    // ... and the emulator, made to run it anyway (the test-only path), gets a wrong answer: g's
    // stage reads scratchpad elements of f before the other threads have written them, and
    // gets the emulator's poison.
    std::string tree = nlohmann::json::parse(racy)["schedule_tree"].get<std::string>();
    std::shared_ptr<const poly::Model> model = program->model;
    poly::Program unchecked = [&] {
        std::lock_guard<std::mutex> lock(model->isl_mutex);
        return poly::program_from_tree(model, isl::manage(isl_schedule_read_from_str(model->ctx().get(), tree.c_str())), {});
    }();
    CHECK_FALSE(run(unchecked));
}

TEST_CASE("without the NVIDIA driver, running a pipeline compiled for a CUDA GPU says so, and its PTX is there", "[gpu][errors]") {
    auto app = apps::make_app("blur_x_blur_y");
    CompileOptions o;
    o.keep_assembly = true;
    Callable c = app->pipeline().compile(Target::cuda(80), o);  // compiling needs no driver
    CHECK(c.report().ptx.find(".entry") != std::string::npos);
    if (void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
        dlclose(driver);
        WARN("this machine has a CUDA driver: the missing-driver error is not checked");
        return;
    }
    app->prepare({9, 7}, 1);
    std::vector<Buffer<void>> out = app->make_outputs();
    REQUIRE_USER_ERROR(c.realize(out), "libcuda.so.1", "Target::cuda(sm).emulated()");
    // Asking first is how a program (the main job) decides: no device, and why.
    std::string why;
    CHECK(runtime::cuda_device_capability(&why) == 0);
    CHECK_THAT(why, Catch::Matchers::Contains("libcuda.so.1"));
}

TEST_CASE("Target::cuda rejects a compute capability it does not know", "[gpu][errors]") {
    auto app = apps::make_app("blur_x_blur_y");
    CHECK_THROWS_WITH(app->pipeline().compile(Target::cuda(7)), Catch::Matchers::Contains("compute capability"));
}

TEST_CASE("the emulator's traffic model: blur reads its input and writes its output about once, in aligned sectors, without "
          "bank conflicts",
          "[gpu][model]") {
    // The staged and aligned configuration (not the default: on an H200 it ran slower, docs/gpu.md).
    auto app = apps::make_app("blur_x_blur_y");
    CompileOptions o;
    o.gpu_stage_inputs = true;
    o.gpu_align_warps = "rows";
    std::vector<runtime::GpuKernelProfile> kernels = profiled_run(*app, {260, 68}, 3, o);
    REQUIRE(kernels.size() == 1);
    const runtime::GpuKernelProfile &k = kernels[0];
    double moved = double(k.global_load_bytes + k.global_store_bytes);
    INFO("global bytes " << moved << ", minimum " << app->minimum_bytes() << ", coalescing " << k.coalescing());
    // Halos are recomputed in shared memory, not read again from global memory: only the rows
    // of input a tile's halo shares with the next tile are read twice.
    CHECK(moved >= app->minimum_bytes());
    CHECK(moved <= 1.15 * app->minimum_bytes());
    CHECK(k.bank_conflicts == 0);
    CHECK(k.shared_accesses > 0);
    CHECK(k.barriers == 2 * k.blocks);  // per block: after the input's copy, and after blur_x
    // The input tile is staged with aligned loads although the input's rows are not: its pitch
    // is 1040 bytes, 16 past a multiple of 32 (84% of the sectors moved were used before the
    // copy, 92% with the copy's warps not aligned). The output, 256 x 64 points, is whole tiles.
    CHECK(k.coalescing() > 0.95);
    CHECK(runtime::take_emulator_profile().empty());  // taken
}

TEST_CASE("a GPU schedule says which groups run in a kernel of one block", "[gpu]") {
    // prefix_sum's scan carries its dependence along its only loop: nothing is parallel.
    auto app = apps::make_app("prefix_sum");
    CompileReport report;
    auto program = runtime::program_for(app->pipeline(), runtime::gpu_schedule_options({}, TargetInfo::nvidia_gpu(80)), report);
    bool said = false;
    for (const poly::Group &g : program->groups) said = said || g.note.find("kernel of one block") != std::string::npos;
    CHECK(said);
    CHECK(poly::schedule_to_json(*program).find(R"(mark: \"kernel:0\")") != std::string::npos);
}

TEST_CASE("a GPU pipeline's entry checks its buffers as the host's does", "[gpu][errors]") {
    auto app = apps::make_app("blur_x_blur_y");
    Callable c = app->pipeline().compile(emulated_gpu());
    app->prepare({16, 16}, 1);
    // An output larger than the input allows: the input does not cover what the pipeline reads.
    Buffer<float> too_big({16, 16, 3});
    REQUIRE_USER_ERROR(c.realize(too_big), "InputBuffer");
}

TEST_CASE("emulated GPU PolyBench kernels and DNN layers match their plain loops", "[gpu][apps]") {
    // Reductions, triangular loops, in-place updates, time loops: sizes capped at 19 (primes
    // and odd sizes below a block).
    for (const char *name : {"pb_2mm", "pb_gemm", "pb_lu", "pb_cholesky", "pb_trisolv", "pb_heat_3d", "pb_jacobi_1d",
                             "pb_floyd_warshall", "pb_syrk", "pb_symm", "pb_covariance", "pb_seidel_2d", "conv2d", "batched_matmul"}) {
        auto app = apps::make_app(name);
        std::vector<int> sizes = app->default_sizes();
        for (size_t i = 0; i < sizes.size(); ++i) sizes[i] = std::min(sizes[i], i % 2 ? 19 : 13);
        check_emulated(name, {sizes});
    }
}

TEST_CASE("a GPU schedule exported as JSON imports to the same loop nest and runs the same", "[gpu]") {
    auto app = apps::make_app("harris");
    CompileReport report;
    auto program = runtime::program_for(app->pipeline(), runtime::gpu_schedule_options({}, TargetInfo::nvidia_gpu(80)), report);
    std::string json = poly::schedule_to_json(*program);
    poly::Program imported = poly::schedule_from_json(program->model, json);
    CHECK(imported.ast_c == program->ast_c);
    CHECK(poly::count_kernels(imported.schedule) == 1);
    app->pipeline().set_schedule_json(json);
    Callable c = app->pipeline().compile(emulated_gpu());
    CHECK(c.report().kernels == 1);
    app->prepare({29, 23}, 2);
    std::vector<Buffer<void>> got = app->make_outputs(), want = app->make_outputs();
    c.realize(got);
    app->reference(want);
    apps::Comparison cmp = apps::compare(got[0], want[0], app->tolerance());
    INFO(cmp.first_mismatch);
    CHECK(cmp.ok);
    app->pipeline().clear_schedule_json();
}

TEST_CASE("GPU tiles are rows as wide as the block's threads, and their scratchpads fit its shared memory unpadded", "[gpu][model]") {
    CompileOptions shared;
    shared.gpu_column_windows = false;  // (blur's column windows are two passes of the threads wide, in no shared memory)
    for (const char *name : {"blur_x_blur_y", "harris", "unsharp_mask"}) {
        INFO(name);
        auto app = apps::make_app(name);
        CompileReport report;
        auto program = runtime::program_for(app->pipeline(), runtime::gpu_schedule_options(shared, TargetInfo::nvidia_gpu(80)), report);
        REQUIRE(program->groups.size() == 1);
        // A narrower tile would leave threads of every block idle on each of its rows.
        CHECK(program->groups[0].tile_sizes.back() == 256);
        std::vector<runtime::GpuKernelProfile> kernels = profiled_run(*app, {300, 40}, 5, shared);
        REQUIRE(kernels.size() == 1);
        // In shared memory (harris's 4 x 256 tiles, padded as a CPU's scratchpads are, did not
        // fit and went to global memory).
        CHECK(kernels[0].shared_bytes > 0);
        CHECK(kernels[0].shared_bytes <= 48 * 1024);
    }
}
