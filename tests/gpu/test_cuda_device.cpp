// Tessera's pipelines on a real NVIDIA GPU (Target::cuda(sm) through the CUDA driver), checked
// against each app's plain C++ loops and against the emulator. Runs only where device 0 is a
// usable CUDA GPU: elsewhere the program prints why not and exits with 77, which CTest reports
// as skipped (SKIP_RETURN_CODE). The stand-in driver (test_cuda_driver.cpp) checks the calls;
// this checks that the PTX computes the right thing on the hardware, at awkward sizes (below,
// at and around a block) and at sizes that fill the GPU (grids of thousands of blocks).
#define CATCH_CONFIG_RUNNER
#include "../test_util.h"
#include "../codegen/compiled_app_check.h"

#include <tessera/runtime/cuda_device.h>
#include <tessera/runtime/gpu_emulator.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <unistd.h>

#include "tessera_apps/app.h"

using namespace tessera;

namespace {

int device_sm = 0;      // device 0's compute capability, from main
bool on_emulator = false;  // TESSERA_DEVICE_TESTS_ON_EMULATOR=1: the tests themselves tried without a GPU

Target gpu() { return on_emulator ? Target::cuda(device_sm).emulated() : Target::cuda(device_sm); }

void check_on_gpu(const std::string &name, const std::vector<std::vector<int>> &sizes, CompileOptions o = {}) {
    auto app = apps::make_app(name);
    Callable c = app->pipeline().compile(gpu(), o);
    compiled_app_check::check_callable(*app, c, sizes, 11, "on sm_" + std::to_string(device_sm));
}

// local_laplacian's remapping curve calls exp, which on the GPU is libdevice's: its float may
// differ from the host libm's (the loops') in the last bit, and a uint16 output computed from it
// may then round to the neighbouring integer. Every element within 1 of the loops', and at
// least 99% exactly equal (on an H100: 151 of 77,421 elements off by one, 0.2%).
void check_integers_within_one(const std::string &name, const std::vector<int> &sizes) {
    auto app = apps::make_app(name);
    Callable c = app->pipeline().compile(gpu());
    app->prepare(sizes, 11);
    std::vector<Buffer<void>> got = app->make_outputs(), want = app->make_outputs();
    c.realize(got);
    app->reference(want);
    for (size_t i = 0; i < got.size(); ++i) {
        REQUIRE(got[i].type().is_uint());
        int64_t elements = 0, off_by_one = 0, further = 0;
        want[i].for_each_coordinate([&](const std::vector<int64_t> &at) {
            double d = std::fabs(apps::element(got[i], at) - apps::element(want[i], at));
            ++elements;
            off_by_one += d == 1;
            further += d > 1;
        });
        INFO(name << " on sm_" << device_sm << ": " << off_by_one << " of " << elements << " elements off by one");
        CHECK(further == 0);
        CHECK(off_by_one * 100 <= elements);
    }
}

// The app's sizes with each one capped at `cap` (primes and odd numbers below a block).
std::vector<int> capped(const std::string &name, int cap) {
    std::vector<int> sizes = apps::make_app(name)->default_sizes();
    for (size_t i = 0; i < sizes.size(); ++i) sizes[i] = std::min(sizes[i], i % 2 ? cap : cap - 6);
    return sizes;
}

} // namespace

TEST_CASE("blur_x_blur_y on the GPU matches plain loops, below a block and over thousands of blocks", "[device]") {
    check_on_gpu("blur_x_blur_y", {{5, 5}, {9, 13}, {37, 71}, {263, 41}, {1031, 769}, {4100, 2049}});
}

TEST_CASE("the image apps on the GPU match plain loops", "[device]") {
    check_on_gpu("harris", {{5, 5}, {23, 19}, {70, 37}, {1283, 967}});
    check_on_gpu("unsharp_mask", {{5, 5}, {31, 37}, {1031, 517}});
    check_on_gpu("histogram", {{1, 1}, {13, 7}, {61, 37}, {1031, 769}});
    check_on_gpu("bilateral_grid", {{1, 1}, {9, 17}, {40, 29}, {517, 389}});
}

TEST_CASE("matmul, gemm, prefix_sum and the time-iterated stencils on the GPU match plain loops", "[device]") {
    check_on_gpu("matmul", {{1, 1, 1}, {7, 5, 3}, {37, 41, 43}, {257, 131, 129}});
    check_on_gpu("gemm", {{1, 1, 1}, {13, 11, 9}, {35, 66, 33}, {200, 130, 97}});
    check_on_gpu("prefix_sum", {{1}, {2}, {97}, {1031}, {100003}});
    check_on_gpu("jacobi_2d", {{3, 3, 1}, {11, 7, 4}, {37, 23, 5}, {301, 203, 6}});
    check_on_gpu("seidel_2d", {{3, 3, 1}, {11, 7, 4}, {23, 19, 3}});
}

TEST_CASE("PolyBench kernels and DNN layers on the GPU match their plain loops", "[device]") {
    for (const char *name : {"pb_2mm", "pb_3mm", "pb_gemm", "pb_lu", "pb_cholesky", "pb_trisolv", "pb_heat_3d", "pb_jacobi_1d",
                             "pb_jacobi_2d", "pb_floyd_warshall", "pb_syrk", "pb_syr2k", "pb_symm", "pb_trmm", "pb_covariance",
                             "pb_correlation", "pb_seidel_2d", "pb_atax", "pb_bicg", "pb_mvt", "pb_gemver", "pb_gesummv",
                             "pb_doitgen", "conv2d", "batched_matmul"}) {
        SECTION(name) { check_on_gpu(name, {capped(name, 19), capped(name, 47)}); }
    }
}

TEST_CASE("the deep image pipelines on the GPU match plain loops: camera_pipe exactly, local_laplacian within one (libdevice exp)",
          "[device]") {
    for (const char *name : {"camera_pipe", "pyramid_blend", "interpolate", "local_laplacian"}) {
        SECTION(name) {
            std::vector<int> sizes = apps::make_app(name)->default_sizes();
            std::vector<int> small = sizes;
            for (size_t i = 0; i < 2 && i < small.size(); ++i) small[i] = std::min(small[i], i ? 131 : 197);
            if (std::string(name) == "local_laplacian" && !on_emulator) check_integers_within_one(name, small);
            else check_on_gpu(name, {small});
        }
    }
}

TEST_CASE("the GPU and the emulator compute blur and histogram bit for bit alike", "[device]") {
    for (const char *name : {"blur_x_blur_y", "histogram"}) {
        auto app = apps::make_app(name);
        Callable on_gpu = app->pipeline().compile(gpu());
        Callable emulated = app->pipeline().compile(Target::cuda(device_sm).emulated());
        app->prepare({301, 203}, 4);
        std::vector<Buffer<void>> a = app->make_outputs(), b = app->make_outputs();
        on_gpu.realize(a);
        emulated.realize(b);
        for (size_t i = 0; i < a.size(); ++i) {
            apps::Comparison cmp = apps::compare(a[i], b[i], 0.0);
            INFO(name << ": " << cmp.first_mismatch);
            CHECK(cmp.ok);
        }
    }
}

TEST_CASE("with the shared-memory opt-in, harris's blocks use more than 48 KiB on the GPU and still match plain loops",
          "[device]") {
    auto app = apps::make_app("harris");
    Callable c = app->pipeline().compile(gpu().with_shared_memory_opt_in());
    compiled_app_check::check_callable(*app, c, {{23, 19}, {300, 70}, {1024, 256}, {2053, 1031}}, 5,
                                       "on the GPU with the shared-memory opt-in");
    // The same kernels in the emulator do use more than 48 KiB per block.
    Callable emulated = app->pipeline().compile(Target::cuda(device_sm).emulated().with_shared_memory_opt_in());
    app->prepare({1024, 256}, 1);
    std::vector<Buffer<void>> out = app->make_outputs();
    runtime::set_emulator_profiling(true);
    emulated.realize(out);
    std::vector<runtime::GpuKernelProfile> kernels = runtime::take_emulator_profile();
    runtime::set_emulator_profiling(false);
    REQUIRE(kernels.size() == 1);
    CHECK(kernels[0].shared_bytes > 48 * 1024);
}

TEST_CASE("a pipeline of one kernel per Func keeps its intermediates on the GPU and matches plain loops", "[device]") {
    CompileOptions o;
    o.fusion = "none";
    check_on_gpu("unsharp_mask", {{5, 5}, {50, 40}, {1031, 517}}, o);
    check_on_gpu("harris", {{23, 19}, {517, 389}}, o);
}

TEST_CASE("buffers stay on the GPU between pipelines, and a host write reaches the next run", "[device]") {
    Buffer<float> input({1000, 3}, "input");
    for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 1000; ++x) input(x, y) = float(x + 1000 * y);
    Var x("x"), y("y");
    Func first("plus_one"), second("times_two");
    first(x, y) = input(x, y) + 1.0f;
    Buffer<float> middle({1000, 3}, "middle"), out({1000, 3}, "out");
    second(x, y) = middle(x, y) * 2.0f;
    Callable a = Pipeline(first).compile(gpu());
    Callable b = Pipeline(second).compile(gpu());
    a.realize({middle});
    if (!on_emulator) CHECK(middle.device_dirty());
    b.realize({out});  // reads middle where it is
    CHECK(out(999, 2) == 2.0f * (999 + 2000 + 1));
    CHECK(middle(5, 1) == 1005 + 1);  // the host read copies it back
    input(5, 1) = -7.0f;               // a host write: the next run copies the input again
    a.realize({middle});
    b.realize({out});
    CHECK(out(5, 1) == 2.0f * (-7.0f + 1.0f));
    CHECK(out(6, 1) == 2.0f * (1006 + 1));
    // A host pipeline reads what the GPU left on the device.
    Func host("on_host");
    host(x, y) = out(x, y) - 1.0f;
    Buffer<float> back({1000, 3}, "back");
    a.realize({middle});
    b.realize({out});
    Pipeline(host).compile(Target::host()).realize({back});
    CHECK(back(5, 1) == 2.0f * (-7.0f + 1.0f) - 1.0f);
    out.device_free();
    CHECK_FALSE(out.has_device_allocation());
    CHECK(out(0, 0) == 2.0f);
}

TEST_CASE("a GPU pipeline loaded from the compile cache runs its stored PTX on the GPU", "[device][cache]") {
    std::string dir = std::filesystem::temp_directory_path() / ("tessera-device-cache-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    setenv("TESSERA_CACHE_DIR", dir.c_str(), 1);
    unsetenv("TESSERA_CACHE");
    {
        auto first = apps::make_app("harris");
        CHECK(first->pipeline().compile(gpu()).report().cache == "miss");
    }
    auto app = apps::make_app("harris");
    Callable c = app->pipeline().compile(gpu());
    CHECK(c.report().cache == "hit");
    compiled_app_check::check_callable(*app, c, {{23, 19}, {300, 70}}, 9, "from the cache on the GPU");
    setenv("TESSERA_CACHE", "0", 1);
    std::filesystem::remove_all(dir);
}

TEST_CASE("a GPU pipeline's entry checks its buffers as the host's does", "[device][errors]") {
    auto app = apps::make_app("blur_x_blur_y");
    Callable c = app->pipeline().compile(gpu());
    app->prepare({16, 16}, 1);
    Buffer<float> too_big({16, 16, 3});
    REQUIRE_USER_ERROR(c.realize(too_big), "InputBuffer");
}

int main(int argc, char **argv) {
    std::string why;
    const char *emulate = std::getenv("TESSERA_DEVICE_TESTS_ON_EMULATOR");
    on_emulator = emulate && !std::strcmp(emulate, "1");
    device_sm = on_emulator ? 90 : runtime::cuda_device_capability(&why);
    if (!device_sm) {
        std::printf("no CUDA GPU, the device tests are skipped: %s\n", why.c_str());
        return 77;  // CTest's SKIP_RETURN_CODE
    }
    std::printf(on_emulator ? "on the emulator as sm_%d (TESSERA_DEVICE_TESTS_ON_EMULATOR)\n" : "device 0: sm_%d\n", device_sm);
    setenv("TESSERA_CACHE", "0", 1);
    return Catch::Session().run(argc, argv);
}
