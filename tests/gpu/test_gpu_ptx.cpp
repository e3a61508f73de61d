// Every app's kernels as PTX, assembled by the CUDA toolkit's ptxas for sm_80 and sm_90 when a
// toolkit is present ($CUDA_HOME, else /usr/local/cuda, else ptxas on the PATH).
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../test_util.h"

#include "tessera_apps/app.h"

using namespace tessera;

namespace {

std::string find_ptxas() {
    std::vector<std::string> candidates;
    if (const char *home = std::getenv("CUDA_HOME")) candidates.push_back(std::string(home) + "/bin/ptxas");
    candidates.push_back("/usr/local/cuda/bin/ptxas");
    for (const std::string &c : candidates)
        if (std::filesystem::exists(c)) return c;
    if (std::system("command -v ptxas > /dev/null 2>&1") == 0) return "ptxas";
    return "";
}

// Runs ptxas -v on `ptx` for `arch`; its exit status and output.
std::pair<int, std::string> assemble(const std::string &ptxas, const std::string &ptx, const std::string &arch) {
    std::filesystem::path dir = std::filesystem::temp_directory_path();
    std::string stem = (dir / ("tessera_ptx_" + std::to_string(::getpid()))).string();
    {
        std::ofstream out(stem + ".ptx");
        out << ptx;
    }
    std::string cmd = ptxas + " -arch=" + arch + " -v " + stem + ".ptx -o " + stem + ".cubin 2>&1";
    std::string output;
    FILE *pipe = popen(cmd.c_str(), "r");
    REQUIRE(pipe);
    std::array<char, 4096> buf{};
    while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) output.append(buf.data(), n);
    int status = pclose(pipe);
    std::filesystem::remove(stem + ".ptx");
    std::filesystem::remove(stem + ".cubin");
    return {status, output};
}

} // namespace

TEST_CASE("every app's GPU kernels assemble with ptxas for sm_80 and sm_90", "[gpu][ptx]") {
    std::string ptxas = find_ptxas();
    if (ptxas.empty()) {
        WARN("no CUDA toolkit (ptxas): the PTX is not assembled");
        return;
    }
    for (const char *name : {"blur_x_blur_y", "harris", "unsharp_mask", "histogram", "matmul", "gemm", "bilateral_grid",
                             "prefix_sum", "jacobi_2d", "seidel_2d"}) {
        auto app = apps::make_app(name);
        for (int sm : {80, 90}) {
            CompileOptions o;
            o.keep_assembly = true;
            Callable c = app->pipeline().compile(Target::cuda(sm), o);
            REQUIRE(c.report().ptx.find(".entry") != std::string::npos);
            auto [status, output] = assemble(ptxas, c.report().ptx, "sm_" + std::to_string(sm));
            INFO(name << " sm_" << sm << ": " << output);
            CHECK(status == 0);
            if (std::string(name) == "blur_x_blur_y" || std::string(name) == "harris") CHECK(output.find(" 0 bytes spill stores") != std::string::npos);
            CHECK(output.find("bytes spill stores") != std::string::npos);
        }
    }
}

TEST_CASE("GPU kernels with transcendental math take it from CUDA's libdevice, and assemble", "[gpu][ptx]") {
    Var x("x");
    InputBuffer<float> in("in", 1);
    InputBuffer<double> ind("ind", 1);
    Func f("f"), g("g");
    f(x) = exp(in(x)) + log(in(x) + 2.f) + pow(in(x), 1.5f) + sin(in(x)) + cos(in(x)) + tan(in(x)) + tanh(in(x));
    g(x) = f(x) + cast<float>(exp(ind(x)) + tanh(ind(x)));
    Pipeline p(g);
    CompileOptions o;
    o.keep_assembly = true;
    Callable c = p.compile(Target::cuda(80).emulated(), o);
    const std::string &ptx = c.report().ptx;
    CHECK(ptx.find(".entry") != std::string::npos);
    CHECK(ptx.find("__nvvm_reflect") == std::string::npos);  // resolved by NVVMReflect
    // The emulated kernels agree with the interpreter.
    Buffer<float> input({37});
    Buffer<double> inputd({37});
    for (int i = 0; i < 37; ++i) {
        input(i) = 0.05f * float(i);
        inputd(i) = 0.03 * i;
    }
    in.set(input);
    ind.set(inputd);
    Buffer<float> got({37}), want({37});
    c.realize(got);
    interpret(p, {want});
    for (int i = 0; i < 37; ++i) CHECK(got(i) == want(i));
    std::string ptxas = find_ptxas();
    if (ptxas.empty()) return;
    auto [status, output] = assemble(ptxas, ptx, "sm_80");
    INFO(output);
    CHECK(status == 0);
}

TEST_CASE("float16 pipelines run in the emulated GPU as in the interpreter, and their PTX assembles", "[gpu][ptx]") {
    Var x("x"), y("y");
    InputBuffer<float16_t> in("in", 2);
    Func f("f"), g("g");
    f(x, y) = in(x, y) * float16_t(1.5f) + in(x + 1, y);
    g(x, y) = cast<float>(f(x, y)) + cast<float>(f(x, y + 1)) * 0.25f;
    Pipeline p(g);
    CompileOptions o;
    o.keep_assembly = true;
    Callable c = p.compile(Target::cuda(80).emulated(), o);
    Buffer<float16_t> input({41, 23});
    for (int j = 0; j < 23; ++j)
        for (int i = 0; i < 41; ++i) input(i, j) = float16_t(float((i * 3 + j * 5) % 11) * 0.125f);
    in.set(input);
    Buffer<float> got({40, 22}), want({40, 22});
    c.realize(got);
    interpret(p, {want});
    for (int j = 0; j < 22; ++j)
        for (int i = 0; i < 40; ++i) CHECK(got(i, j) == want(i, j));
    std::string ptxas = find_ptxas();
    if (ptxas.empty()) return;
    auto [status, output] = assemble(ptxas, c.report().ptx, "sm_80");
    INFO(output);
    CHECK(status == 0);
}

TEST_CASE("GPU kernels read their inputs through ld.global.nc, and an array a kernel also writes through plain ld.global",
          "[gpu][ptx]") {
    auto ptx_of = [](const std::string &name, int unroll_rows = 1, bool staged_and_aligned = false) {
        CompileOptions o;
        o.keep_assembly = true;
        o.gpu_unroll_rows = unroll_rows;
        o.gpu_column_windows = false;  // (blur through shared memory; test_gpu_column_windows.cpp has the default)
        if (staged_and_aligned) {
            o.gpu_stage_inputs = true;
            o.gpu_align_warps = "rows";
        }
        return apps::make_app(name)->pipeline().compile(Target::cuda(80).emulated(), o).report().ptx;
    };
    auto count = [](const std::string &text, const std::string &what) {
        size_t n = 0;
        for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
        return n;
    };
    // blur: blur_x's five loads of the input through the read-only path, its store to shared
    // memory, blur_y's five loads of blur_x from shared memory, the output stored to global
    // memory; no generic access to a buffer.
    std::string blur = ptx_of("blur_x_blur_y");
    CHECK(count(blur, "ld.global.nc.f32") == 5);
    CHECK(count(blur, "ld.shared.f32") == 5);
    CHECK(count(blur, "st.shared.f32") == 1);
    CHECK(count(blur, "st.global.f32") == 1);
    CHECK(count(blur, "\tld.f32") + count(blur, "\tst.f32") == 0);
    // By default each thread runs four rows of a tile per step (unroll and jam), and the rows
    // left over one at a time: blur_x's five loads and its store, and blur_y's store, in 4 + 1
    // copies. blur_y's jammed rows share four of their five rows of blur_x with the next: 8
    // loads for 4 rows, and 5 for the row left over.
    std::string jammed = ptx_of("blur_x_blur_y", 0);
    CHECK(count(jammed, "ld.global.nc.f32") == 5 * 5);
    CHECK(count(jammed, "st.shared.f32") == 5);
    CHECK(count(jammed, "st.global.f32") == 5);
    CHECK(count(jammed, "ld.shared.f32") == 8 + 5);
    // With the input staged in shared memory (poly/staged_inputs.h) and warps aligned a row at
    // a time: the input's tile copied through the read-only path (one load per point), blur_x's
    // five loads of it and blur_y's five of blur_x from shared memory. The copy and blur_y,
    // aligned, run a row at a time; blur_x's rows are jammed.
    std::string staged = ptx_of("blur_x_blur_y", 1, true);
    CHECK(count(staged, "ld.global.nc.f32") == 1);
    CHECK(count(staged, "ld.shared.f32") == 10);
    CHECK(count(staged, "st.shared.f32") == 2);
    CHECK(count(staged, "st.global.f32") == 1);
    std::string staged_jammed = ptx_of("blur_x_blur_y", 0, true);
    CHECK(count(staged_jammed, "ld.global.nc.f32") == 1);
    CHECK(count(staged_jammed, "st.shared.f32") == 1 + 5);
    CHECK(count(staged_jammed, "st.global.f32") == 1);
    CHECK(count(staged_jammed, "ld.shared.f32") == 5 * 5 + 5);
    // seidel_2d: its first kernel copies the input into the array (the input through .nc), the
    // second updates the array in place, so none of its loads may take the non-coherent path.
    std::string seidel = ptx_of("seidel_2d");
    size_t second = seidel.find(".entry", seidel.find(".entry") + 1);
    REQUIRE(second != std::string::npos);
    std::string copy = seidel.substr(0, second), in_place = seidel.substr(second);
    CHECK(count(copy, "ld.global.nc.f32") == 1);
    CHECK(count(in_place, "ld.global.nc.") == 0);
    CHECK(count(in_place, "ld.global.f32") > 0);
    CHECK(count(in_place, "st.global.f32") > 0);
    // histogram: the image through .nc, the counts it increments through plain loads.
    std::string histogram = ptx_of("histogram");
    CHECK(count(histogram, "ld.global.nc.u8") > 0);
    CHECK(count(histogram, "ld.global.nc.u32") == 0);
    CHECK(count(histogram, "ld.global.u32") > 0);
}
