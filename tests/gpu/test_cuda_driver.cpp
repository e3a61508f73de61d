// Tessera's CUDA runtime against a stand-in for the NVIDIA driver (tests/gpu/fake_driver): the
// calls a GPU run makes, without a GPU. The stand-in cannot run PTX, so what is checked is the
// plumbing: the PTX loaded and its kernels found, the grid, block and shared memory of each
// launch, the buffers copied to and from device memory, every allocation released, and the
// driver's JIT log in the error when it rejects the PTX. Results on a real GPU are not checked
// here (no GPU); the emulator checks the kernels themselves.
#define CATCH_CONFIG_MAIN
#include <dlfcn.h>

#include "../test_util.h"

#include <tessera/runtime/cuda_device.h>

#include <filesystem>
#include <unistd.h>

#include "tessera_apps/app.h"

#include "fake_driver/fake_cuda.h"
#include <tessera/codegen/gpu_target.h>

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
    CHECK(r.last_shared == 0);  // column windows: blur_x's rows in each thread's registers
    CHECK(r.last_grid >= 3);    // tiles of the 3 channels at least
    CHECK(r.last_context_words > 8);
    CHECK(r.last_context_by_value);  // the kernel's parameter: no device memory for it
    // The input (300 x 70 x 3 floats) went to the device; the output (296 x 66 x 3: the 5-tap
    // stencils' valid part) stays there until the host reads it.
    CHECK(r.bytes_to_device == 300 * 70 * 3 * 4);
    CHECK(r.bytes_to_host == 0);
    CHECK(out[0].device_dirty());
    CHECK(r.live_allocations == 2);  // the input's and the output's device copies
    // A second run reuses the module.
    c.realize(out);
    CHECK(record().modules_loaded == 1);
    CHECK(record().launches == 2);
    (void)out[0].raw_data();
    CHECK(record().bytes_to_host == 296 * 66 * 3 * 4);
    // Every device allocation goes with its buffer (the input's is held by the app's InputBuffer,
    // which the Callable's pipeline holds too).
    out.clear();
    app.reset();
    c = Callable();
    CHECK(record().live_allocations == 0);
    CHECK(record().allocations == record().frees);
}

// GPU residency (Buffer: has_device_allocation, host_dirty, device_dirty). The stand-in's device
// memory is host memory, so a test can play the kernel: write what it would have computed at
// the output's device_handle(), and see the host read exactly that.
TEST_CASE("a GPU pipeline's output stays on the device until the host reads it, and the read copies it once", "[cuda]") {
    Buffer<float> input({37, 5}, "input");
    Var x("x"), y("y");
    Func f("twice");
    f(x, y) = input(x, y) * 2.0f;
    Callable c = Pipeline(f).compile(Target::cuda(80));
    Buffer<float> out({37, 5}, "out");
    FakeCudaRecord before = record();
    c.realize({out});
    FakeCudaRecord after = record();
    CHECK(after.bytes_to_host == before.bytes_to_host);
    REQUIRE(out.has_device_allocation());
    CHECK(out.device_dirty());
    CHECK_FALSE(out.host_dirty());
    // The kernel's result, as the device holds it.
    auto *device = reinterpret_cast<float *>(uintptr_t(out.device_handle()));
    for (int i = 0; i < 37 * 5; ++i) device[i] = float(i) + 0.5f;
    CHECK(out(3, 2) == float(2 * 37 + 3) + 0.5f);
    CHECK(record().bytes_to_host - after.bytes_to_host == 37 * 5 * 4);
    CHECK_FALSE(out.device_dirty());
    // The host access may have written: the host's elements are the newer ones now.
    CHECK(out.host_dirty());
    CHECK(out(36, 4) == float(4 * 37 + 36) + 0.5f);
    CHECK(record().bytes_to_host - after.bytes_to_host == 37 * 5 * 4);  // copied once
}

TEST_CASE("a kernel whose context exceeds the kernel parameters' 4 KiB reads it from device memory", "[cuda]") {
    // 150 inputs: their bases, mins and strides are more words than a parameter may hold.
    std::vector<Buffer<float>> inputs;
    Var x("x"), y("y");
    Expr sum = 0.0f;
    for (int i = 0; i < 150; ++i) {
        inputs.emplace_back(std::vector<int>{8, 2}, "in" + std::to_string(i));
        inputs.back().fill(float(i));
        sum = sum + inputs.back()(x, y);
    }
    Func f("sum_of_many");
    f(x, y) = sum;
    Callable c = Pipeline(f).compile(Target::cuda(80));
    Buffer<float> out({8, 2}, "out");
    FakeCudaRecord r0 = record();
    c.realize({out});
    FakeCudaRecord r1 = record();
    CHECK(r1.launches - r0.launches == 1);
    CHECK(r1.last_context_words > codegen::kMaxContextParameterWords);
    CHECK_FALSE(r1.last_context_by_value);
    CHECK(r1.bytes_to_device - r0.bytes_to_device == 150 * 8 * 2 * 4 + r1.last_context_words * 8);
    CHECK(r1.live_allocations - r0.live_allocations == 151);  // the context is freed after the launch
}

TEST_CASE("an input already on the device is not copied again until the host writes it", "[cuda]") {
    Buffer<float> input({64, 3}, "input");
    Var x("x"), y("y");
    Func f("plus_one");
    f(x, y) = input(x, y) + 1.0f;  // the Buffer itself in the definition: bound through a handle of its own
    Callable c = Pipeline(f).compile(Target::cuda(80));
    Buffer<float> out({64, 3}, "out");
    input(5, 1) = 7.0f;
    FakeCudaRecord r0 = record();
    c.realize({out});
    FakeCudaRecord r1 = record();
    int64_t context_bytes = r1.last_context_by_value ? 0 : r1.last_context_words * 8;
    CHECK(r1.bytes_to_device - r0.bytes_to_device == 64 * 3 * 4 + context_bytes);
    // The handle the definition reads through and this one share the device copy.
    REQUIRE(input.has_device_allocation());
    CHECK_FALSE(input.host_dirty());
    c.realize({out});
    FakeCudaRecord r2 = record();
    CHECK(r2.bytes_to_device - r1.bytes_to_device == context_bytes);
    // A host write makes the next run copy the input again, with the new value.
    input(5, 1) = 9.0f;
    CHECK(input.host_dirty());
    c.realize({out});
    FakeCudaRecord r3 = record();
    CHECK(r3.bytes_to_device - r2.bytes_to_device == 64 * 3 * 4 + context_bytes);
    auto *device = reinterpret_cast<const float *>(uintptr_t(input.device_handle()));
    CHECK(device[1 * 64 + 5] == 9.0f);
    // A write through a pointer kept from before is declared with set_host_dirty.
    float *kept = input.data();
    c.realize({out});
    kept[0] = 4.0f;
    input.set_host_dirty();
    c.realize({out});
    CHECK(device[0] == 4.0f);
}

TEST_CASE("a pipeline on the host reads what a GPU pipeline left on the device", "[cuda]") {
    Buffer<int32_t> input({19, 7}, "input");
    Var x("x"), y("y");
    Func gpu("on_gpu"), host("on_host");
    gpu(x, y) = input(x, y) + 1;
    Buffer<int32_t> middle({19, 7}, "middle");
    host(x, y) = middle(x, y) * 3;
    Callable on_gpu = Pipeline(gpu).compile(Target::cuda(80));
    Callable on_host = Pipeline(host).compile(Target::host());
    on_gpu.realize({middle});
    REQUIRE(middle.device_dirty());
    auto *device = reinterpret_cast<int32_t *>(uintptr_t(middle.device_handle()));
    for (int i = 0; i < 19 * 7; ++i) device[i] = 100 + i;  // what the kernel computed
    Buffer<int32_t> out({19, 7}, "out"), interpreted({19, 7}, "interpreted");
    on_host.realize({out});
    CHECK_FALSE(middle.device_dirty());
    CHECK(out(4, 6) == 3 * (100 + 6 * 19 + 4));
    // The interpreter reads it the same way.
    on_gpu.realize({middle});
    for (int i = 0; i < 19 * 7; ++i) device[i] = 200 + i;
    interpret(Pipeline(host), {interpreted});
    CHECK(interpreted(18, 0) == 3 * (200 + 18));
}

TEST_CASE("device_free brings the device's elements back and frees the device copy", "[cuda]") {
    Buffer<float> input({10}, "input");
    Var x("x");
    Func f("copy");
    f(x) = input(x);
    Callable c = Pipeline(f).compile(Target::cuda(80));
    Buffer<float> out({10}, "out");
    c.realize({out});
    auto *device = reinterpret_cast<float *>(uintptr_t(out.device_handle()));
    device[9] = 42.0f;
    long long live = record().live_allocations;
    out.device_free();
    CHECK(record().live_allocations == live - 1);
    CHECK_FALSE(out.has_device_allocation());
    CHECK(out.device_handle() == 0);
    CHECK(out(9) == 42.0f);
    // Declaring the host newer while the device's copy is newer would lose the GPU's result.
    c.realize({out});
    REQUIRE_USER_ERROR(out.set_host_dirty(), "Buffer out", "copy_to_host");
    out.copy_to_host();
    CHECK_FALSE(out.device_dirty());
}

TEST_CASE("a kernel given more than 48 KiB of shared memory opts in to it before its launch", "[cuda]") {
    auto app = apps::make_app("harris");
    Callable c = app->pipeline().compile(Target::cuda(80).with_shared_memory_opt_in());
    app->prepare({1024, 256}, 1);
    std::vector<Buffer<void>> out = app->make_outputs();
    FakeCudaRecord before = record();
    c.realize(out);  // the stand-in refuses a launch beyond 48 KiB without the opt-in
    FakeCudaRecord after = record();
    CHECK(after.launches - before.launches == 1);
    CHECK(after.last_shared > 48 * 1024);
    CHECK(after.shared_opt_ins - before.shared_opt_ins == 1);
    c.realize(out);
    CHECK(record().shared_opt_ins - before.shared_opt_ins == 1);  // once per kernel
}

TEST_CASE("the compute capability of device 0 comes from the driver", "[cuda]") {
    std::string why = "unchanged";
    CHECK(runtime::cuda_device_capability(&why) == 80);  // the stand-in is an sm_80
    CHECK(why == "unchanged");
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
    auto app = apps::make_app("harris");
    CompileOptions o;
    o.fusion = "none";  // one kernel per Func (Ix, Iy, harris), each intermediate a full buffer
    Callable c = app->pipeline().compile(Target::cuda(80), o);
    REQUIRE(c.report().kernels >= 3);
    app->prepare({50, 40}, 1);
    std::vector<Buffer<void>> out = app->make_outputs();
    FakeCudaRecord before = record();
    c.realize(out);
    FakeCudaRecord after = record();
    CHECK(after.launches - before.launches == c.report().kernels);
    // Inputs, outputs and the intermediates (the contexts are the kernels' parameters).
    CHECK(after.allocations - before.allocations >= 2 + (c.report().kernels - 1));
    CHECK(after.live_allocations - before.live_allocations == 2);  // only the input's and the output's copies remain
}

TEST_CASE("a CUDA pipeline loaded from the compile cache loads the stored PTX and launches its kernel", "[cuda][cache]") {
    // A cache of this test's own (the tests run with TESSERA_CACHE=0).
    std::string dir = std::filesystem::temp_directory_path() / ("tessera-cuda-cache-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    setenv("TESSERA_CACHE_DIR", dir.c_str(), 1);
    unsetenv("TESSERA_CACHE");
    {
        auto first = apps::make_app("blur_x_blur_y");
        CHECK(first->pipeline().compile(Target::cuda(80)).report().cache == "miss");
    }
    auto app = apps::make_app("blur_x_blur_y");
    Callable c = app->pipeline().compile(Target::cuda(80));
    CHECK(c.report().cache == "hit");
    CHECK(c.report().kernels == 1);
    app->prepare({300, 70}, 1);
    std::vector<Buffer<void>> out = app->make_outputs();
    c.realize(out);
    FakeCudaRecord r = record();
    CHECK(r.modules_loaded == 1);
    CHECK(r.functions == 1);
    CHECK(r.launches == 1);
    CHECK(std::string(r.last_function).find("_kernel0") != std::string::npos);
    CHECK(r.last_block == 256);
    setenv("TESSERA_CACHE", "0", 1);
    std::filesystem::remove_all(dir);
}
