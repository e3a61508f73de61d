// Column windows (CompileOptions::gpu_column_windows, on by default; poly::column_window, and
// codegen/src/gpu/kernel_lowering.cpp): a fused group whose stages read each other only in their
// own column runs each column's rows on one thread, the rows its later stages still read kept
// by that thread, with no shared memory and no barrier. Checked on the emulator against plain
// loops and the interpreter, and as PTX through ptxas (the rows in registers: no stack frame).
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "../test_util.h"
#include "../codegen/compiled_app_check.h"

#include <tessera/poly/schedule_json.h>
#include <tessera/runtime/compiled_pipeline.h>
#include <tessera/runtime/gpu_emulator.h>

#include "tessera_apps/app.h"

using namespace tessera;

namespace {

Target emulated_gpu() { return Target::cuda(80).emulated(); }

CompileOptions column_windows() {
    CompileOptions o;
    o.gpu_column_windows = true;
    return o;
}

std::vector<runtime::GpuKernelProfile> profile(const Callable &c, std::vector<Buffer<void>> out) {
    runtime::set_emulator_profiling(true);
    c.realize(out);
    runtime::set_emulator_profiling(false);
    return runtime::take_emulator_profile();
}

// The w x h float output `c` computes for `p` is the interpreter's, bit for bit.
void require_as_interpreted(const Pipeline &p, const Callable &c, int w, int h) {
    Buffer<float> got({w, h}), want({w, h});
    c.realize(got);
    interpret(p, {want});
    for (int j = 0; j < h; ++j)
        for (int i = 0; i < w; ++i) REQUIRE(got(i, j) == want(i, j));
}

// ptxas -v's report on `ptx` for sm_80, or "" without a CUDA toolkit.
std::string ptxas_report(const std::string &ptx) {
    std::string ptxas;
    if (const char *home = std::getenv("CUDA_HOME"); home && std::filesystem::exists(std::string(home) + "/bin/ptxas"))
        ptxas = std::string(home) + "/bin/ptxas";
    else if (std::filesystem::exists("/usr/local/cuda/bin/ptxas"))
        ptxas = "/usr/local/cuda/bin/ptxas";
    else if (std::system("command -v ptxas > /dev/null 2>&1") == 0)
        ptxas = "ptxas";
    if (ptxas.empty()) return "";
    std::string stem = (std::filesystem::temp_directory_path() / ("tessera_column_windows_" + std::to_string(::getpid()))).string();
    {
        FILE *f = std::fopen((stem + ".ptx").c_str(), "w");
        REQUIRE(f);
        std::fwrite(ptx.data(), 1, ptx.size(), f);
        std::fclose(f);
    }
    std::string output;
    FILE *pipe = popen((ptxas + " -arch=sm_80 -v " + stem + ".ptx -o " + stem + ".cubin 2>&1").c_str(), "r");
    REQUIRE(pipe);
    std::array<char, 4096> buf{};
    while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) output.append(buf.data(), n);
    int status = pclose(pipe);
    std::filesystem::remove(stem + ".ptx");
    std::filesystem::remove(stem + ".cubin");
    INFO(output);
    REQUIRE(status == 0);
    return output;
}

} // namespace

TEST_CASE("blur in column windows: one kernel, each thread two columns down 32 rows, no shared memory and no barrier",
          "[gpu][column_windows]") {
    auto app = apps::make_app("blur_x_blur_y");
    Callable c = app->pipeline().compile(emulated_gpu(), column_windows());
    std::string loops = c.compiler_ir("loop_nest");
    INFO(loops);
    // The thread loop over the tile's 512 columns lies outside the row loop, blur_x's rows kept
    // 8 deep (5 read).
    CHECK(loops.find("// thread") < loops.find("fold:F_blur_x:1:8"));
    CHECK(loops.find("512") != std::string::npos);
    app->prepare({263, 41}, 3);
    std::vector<runtime::GpuKernelProfile> kernels = profile(c, app->make_outputs());
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0].barriers == 0);
    CHECK(kernels[0].shared_bytes == 0);
    CHECK(kernels[0].shared_accesses == 0);
    // The same pipeline without column windows: blur_x through shared memory, a barrier a block.
    CompileOptions off;
    off.gpu_column_windows = false;
    std::vector<runtime::GpuKernelProfile> shared = profile(app->pipeline().compile(emulated_gpu(), off), app->make_outputs());
    REQUIRE(shared.size() == 1);
    CHECK(shared[0].barriers == shared[0].blocks);
    CHECK(shared[0].shared_bytes > 0);
}

TEST_CASE("column windows compute what plain loops do at sizes around their tiles: odd column counts, a row or a tile and one",
          "[gpu][column_windows]") {
    auto app = apps::make_app("blur_x_blur_y");
    // (Input sizes, 4 more than the output's.) Outputs 1 to 3 columns (one thread's pair cut
    // short), 511 to 517 (a tile of 512 columns and a partial one, pairs cut at odd counts), 1
    // row to 37 (a tile of 32 rows and a partial one).
    compiled_app_check::check_callable(*app, app->pipeline().compile(emulated_gpu(), column_windows()),
                                       {{5, 5}, {6, 9}, {7, 13}, {515, 6}, {516, 37}, {521, 40}, {9, 41}, {37, 71}}, 5,
                                       "in column windows on the emulated GPU");
}

TEST_CASE("column windows apply only where each stage reads the others in its own column, other pipelines compiling as before",
          "[gpu][column_windows]") {
    // harris and unsharp_mask read their producers at neighbouring columns: no column window.
    for (const char *name : {"harris", "unsharp_mask"}) {
        INFO(name);
        auto app = apps::make_app(name);
        Callable c = app->pipeline().compile(emulated_gpu(), column_windows());
        CompileOptions off;
        off.gpu_column_windows = false;
        CHECK(c.compiler_ir("loop_nest") == app->pipeline().compile(emulated_gpu(), off).compiler_ir("loop_nest"));
        compiled_app_check::check_callable(*app, c, {{9, 7}, {70, 37}}, 3, "with column windows asked for");
    }
}

TEST_CASE("a chain of vertical stages keeps each producer's rows in its column window, updates and conditions included",
          "[gpu][column_windows]") {
    Var x("x"), y("y");
    InputBuffer<float> in("in", 2);
    Func a("a"), b("b"), c("c"), out("out");
    a(x, y) = in(x, y) * 2.f + in(x + 1, y);                           // reads the input's columns x, x + 1
    b(x, y) = a(x, y) + a(x, y + 3) * 0.5f;                             // rows ahead of its own
    c(x, y) = select(b(x, y + 1) > 1.f, b(x, y + 1), b(x, y)) - a(x, y + 2);  // two producers
    out(x, y) = c(x, y) * c(x, y + 2) + b(x, y);
    Pipeline p(out);
    Callable compiled = p.compile(emulated_gpu(), column_windows());
    INFO(compiled.compiler_ir("loop_nest"));
    // (a and c are inlined where they are read: b's rows are the window.)
    CHECK(compiled.compiler_ir("loop_nest").find("// thread") < compiled.compiler_ir("loop_nest").find("fold:F_"));
    for (auto [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {3, 2}, {17, 29}, {515, 35}, {40, 70}}) {
        INFO(w << " x " << h);
        Buffer<float> input({w + 1, h + 8});
        for (int j = 0; j < h + 8; ++j)
            for (int i = 0; i < w + 1; ++i) input(i, j) = float((i * 7 + j * 13) % 17) * 0.125f;
        in.set(input);
        require_as_interpreted(p, compiled, w, h);
    }
}

TEST_CASE("a column window's rows are registers, and a thread's two columns load and store together where the buffers are "
          "aligned: blur's kernel has 8-byte accesses and assembles with no stack frame",
          "[gpu][column_windows][ptx]") {
    CompileOptions o = column_windows();
    o.keep_assembly = true;
    Callable c = apps::make_app("blur_x_blur_y")->pipeline().compile(Target::cuda(80), o);
    // The version for aligned buffers (the other loads a float at a time).
    CHECK(c.report().ptx.find("ld.global.nc.v2.f32") != std::string::npos);
    CHECK(c.report().ptx.find("st.global.v2.f32") != std::string::npos);
    std::string report = ptxas_report(c.report().ptx);
    if (report.empty()) {
        WARN("no CUDA toolkit (ptxas): the PTX is not assembled");
        return;
    }
    INFO(report);
    CHECK(report.find("0 bytes stack frame") != std::string::npos);
    CHECK(report.find(" 0 bytes spill stores") != std::string::npos);
}

TEST_CASE("a column-window schedule exported as JSON imports to the same loop nest and runs the same", "[gpu][column_windows]") {
    auto app = apps::make_app("blur_x_blur_y");
    CompileReport report;
    auto program = runtime::program_for(app->pipeline(), runtime::gpu_schedule_options(column_windows(), TargetInfo::nvidia_gpu(80)), report);
    std::string json = poly::schedule_to_json(*program);
    poly::Program imported = poly::schedule_from_json(program->model, json);
    CHECK(imported.ast_c == program->ast_c);
    app->pipeline().set_schedule_json(json);
    Callable c = app->pipeline().compile(emulated_gpu());
    CHECK(c.compiler_ir("loop_nest").find("// thread") < c.compiler_ir("loop_nest").find("fold:F_blur_x"));
    compiled_app_check::check_callable(*app, c, {{29, 23}, {519, 37}}, 2, "imported column windows");
    app->pipeline().clear_schedule_json();
}

TEST_CASE("an imported column window whose stage reads a neighbouring column is rejected", "[gpu][column_windows]") {
    Var x("x"), y("y");
    InputBuffer<float> in("in", 2);
    auto make = [&](int dx) {
        Func f("f"), g("g");
        f(x, y) = (in(x, y) + in(x + 1, y) * 2.f + in(x + 2, y)) * 0.25f;
        g(x, y) = (f(x, y) + f(x, y + 1) + f(x + dx, y + 2)) * (1.f / 3);
        return Pipeline(g);
    };
    Pipeline same_column = make(0), neighbour = make(1);
    CompileReport report;
    auto program = runtime::program_for(same_column, runtime::gpu_schedule_options(column_windows(), TargetInfo::nvidia_gpu(80)), report);
    std::string json = poly::schedule_to_json(*program);
    INFO(json);
    REQUIRE(json.find("fold:F_f") != std::string::npos);
    same_column.set_schedule_json(json);  // legal
    std::string error;
    try {
        neighbour.set_schedule_json(json);
    } catch (const Error &e) {
        error = e.what();
    }
    // (f's part a tile computes is that of its own columns: the neighbour's is not in it.)
    INFO(error);
    CHECK(error.find("The imported schedule is illegal") != std::string::npos);
    CHECK(error.find("footprint of f is too small") != std::string::npos);
}

TEST_CASE("random chains of vertical stencils in column windows compute what the interpreter computes", "[gpu][column_windows]") {
    // Each stage reads the one before at two or three row offsets in its own column, sometimes
    // the one before that too; the first reads the input at neighbouring columns. Random depths,
    // offsets and sizes (tiny, odd, around the 512 x 32 tiles).
    std::mt19937 rng(20261201);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    int windowed = 0;
    for (int trial = 0; trial < 12; ++trial) {
        Var x("x"), y("y");
        InputBuffer<float> in("in", 2);
        std::vector<Func> stages;
        Func first("s0");
        first(x, y) = in(x, y) * 0.5f + in(x + pick(0, 2), y + pick(0, 2)) * 0.25f;
        stages.push_back(first);
        int depth = pick(2, 4);
        for (int s = 1; s < depth; ++s) {
            Func f("s" + std::to_string(s));
            Expr e = stages.back()(x, y + pick(0, 3)) * 0.75f;
            for (int t = pick(1, 2); t > 0; --t) e = e + stages.back()(x, y + pick(0, 4)) * (0.125f * float(pick(1, 4)));
            if (s >= 2 && pick(0, 1)) e = e - stages[size_t(s) - 2](x, y + pick(0, 2));
            f(x, y) = e;
            stages.push_back(f);
        }
        Pipeline p(stages.back());
        Callable c = p.compile(emulated_gpu(), column_windows());
        std::string loops = c.compiler_ir("loop_nest");
        windowed += loops.find("// thread") < loops.find("fold:") && loops.find("fold:") != std::string::npos;
        int w = std::vector<int>{1, 2, 7, 33, 511, 515}[size_t(pick(0, 5))], h = std::vector<int>{1, 3, 31, 33, 40}[size_t(pick(0, 4))];
        INFO("trial " << trial << ": " << depth << " stages at " << w << " x " << h << "\n" << loops);
        Buffer<float> input({w + 2, h + 4 * depth});
        for (int j = 0; j < h + 4 * depth; ++j)
            for (int i = 0; i < w + 2; ++i) input(i, j) = float(pick(-8, 8)) * 0.25f;
        in.set(input);
        require_as_interpreted(p, c, w, h);
    }
    CHECK(windowed >= 4);  // 6 of the 12 keep a window (other stages are inlined, or groups split)
}
