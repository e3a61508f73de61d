// Tessera's CUDA runtime against a stand-in for the NVIDIA driver (tests/gpu/fake_driver): the
// calls a GPU run makes, without a GPU. The stand-in cannot run PTX, so what is checked is the
// plumbing: the PTX loaded and its kernels found, the grid, block and shared memory of each
// launch, the buffers copied to and from device memory, every allocation released, and the
// driver's JIT log in the error when it rejects the PTX. Results on a real GPU are not checked
// here (no GPU); the emulator checks the kernels themselves.
#define CATCH_CONFIG_MAIN
#include <dlfcn.h>

#include "../test_util.h"

#include "tessera_apps/app.h"

#include "fake_driver/fake_cuda.h"

using namespace tessera;

namespace {

FakeCudaRecord record() {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);  // the one the runtime opens, or opens later
    REQUIRE(lib);
    auto fn = reinterpret_cast<FakeCudaRecord (*)()>(dlsym(lib, "fakeCudaRecord"));
    REQUIRE(fn);  // the stand-in, not a real driver
    return fn();
}

} // namespace

TEST_CASE("a pipeline compiled for a CUDA GPU loads its PTX, copies its buffers and launches its kernel", "[cuda]") {
    auto app = apps::make_app("blur_x_blur_y");
    Callable c = app->pipeline().compile(Target::cuda(80));
    app->prepare({300, 70}, 1);
    std::vector<Buffer<void>> out = app->make_outputs();
    c.realize(out);
    FakeCudaRecord r = record();
    CHECK(r.modules_loaded == 1);
    CHECK(r.functions == 1);
    CHECK(r.launches == 1);
    CHECK(std::string(r.last_function).find("_kernel0") != std::string::npos);
    CHECK(r.last_block == 256);
    CHECK(r.last_shared > 0);
    CHECK(r.last_shared <= 48 * 1024);
    CHECK(r.last_grid >= 3);  // tiles of the 3 channels at least
    CHECK(r.last_context_words > 8);
    // The input (300 x 70 x 3 floats) and the kernel's context went to the device, the output
    // (296 x 66 x 3: the 5-tap stencils' valid part) came back.
    CHECK(r.bytes_to_device == 300 * 70 * 3 * 4 + r.last_context_words * 8);
    CHECK(r.bytes_to_host == 296 * 66 * 3 * 4);
    CHECK(r.live_allocations == 0);
    CHECK(r.allocations == r.frees);
    // A second run reuses the module.
    c.realize(out);
    CHECK(record().modules_loaded == 1);
    CHECK(record().launches == 2);
}

TEST_CASE("the driver's JIT log is in the error when it rejects the PTX", "[cuda]") {
    setenv("FAKE_CUDA_REJECT_PTX", "1", 1);
    auto app = apps::make_app("harris");
    Callable c = app->pipeline().compile(Target::cuda(80));
    app->prepare({40, 30}, 1);
    std::vector<Buffer<void>> out = app->make_outputs();
    REQUIRE_USER_ERROR(c.realize(out), "rejected the pipeline's PTX", "fake rejection");
    unsetenv("FAKE_CUDA_REJECT_PTX");
}

TEST_CASE("a pipeline of several kernels keeps its intermediates in device memory and frees them", "[cuda]") {
    auto app = apps::make_app("unsharp_mask");
    CompileOptions o;
    o.fusion = "none";  // one kernel per Func, each intermediate a full buffer
    Callable c = app->pipeline().compile(Target::cuda(80), o);
    REQUIRE(c.report().kernels >= 3);
    app->prepare({50, 40}, 1);
    std::vector<Buffer<void>> out = app->make_outputs();
    FakeCudaRecord before = record();
    c.realize(out);
    FakeCudaRecord after = record();
    CHECK(after.launches - before.launches == c.report().kernels);
    // Inputs, outputs, the intermediates and one context per launch.
    CHECK(after.allocations - before.allocations >= 2 + (c.report().kernels - 1) + c.report().kernels);
    CHECK(after.live_allocations == 0);
}
