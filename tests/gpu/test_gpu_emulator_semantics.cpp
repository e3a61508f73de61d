// The emulator's GPU semantics, with hand-written kernels: what a kernel sees of threads,
// blocks, barriers and shared memory, and the errors it reports. (The code generator's kernels
// call the same device interface: tessera_gpu_thread_t in abi.h.)
#include <cmath>
#include <cstring>

#include "../test_util.h"

#include <tessera/runtime/gpu_emulator.h>

using namespace tessera;

namespace {

tessera_gpu_thread_t *thread_of(void *device) { return static_cast<tessera_gpu_thread_t *>(device); }

// Reads and writes as the generated code does: each access announced to the emulator first.
float load(tessera_gpu_thread_t *t, const float *p, bool shared) {
    t->access(t, p, 4, shared ? 2 : 0);
    return *p;
}
void store(tessera_gpu_thread_t *t, float *p, float v, bool shared) {
    t->access(t, p, 4, shared ? 3 : 1);
    *p = v;
}

// out[block * threads + t] = the shared value thread t + 1 (mod threads) wrote; with a barrier
// between the write and the read when context[2] is 1.
void neighbour_kernel(int64_t *context, void *device) {
    tessera_gpu_thread_t *t = thread_of(device);
    const float *in = reinterpret_cast<const float *>(context[0]);
    float *out = reinterpret_cast<float *>(context[1]);
    float *shared = static_cast<float *>(t->shared);
    int64_t i = t->block * t->threads + t->thread;
    store(t, &shared[t->thread], load(t, &in[i], false) * 2.f, true);
    if (context[2]) t->barrier(t);
    store(t, &out[i], load(t, &shared[(t->thread + 1) % t->threads], true), false);
}

int32_t launch(void (*kernel)(int64_t *, void *), int64_t blocks, int32_t threads, int64_t shared_bytes, int64_t *context) {
    tessera_gpu_runtime_t *rt = runtime::emulator_runtime();
    return rt->launch(rt->state, 0, kernel, blocks, threads, shared_bytes, context, 3);
}

} // namespace

TEST_CASE("the emulator runs a block's threads phase by phase: after a barrier each reads what its neighbour wrote",
          "[gpu][emulator]") {
    std::vector<float> in(3 * 64), out(3 * 64, -1.f);
    for (size_t i = 0; i < in.size(); ++i) in[i] = float(i);
    int64_t context[3] = {int64_t(reinterpret_cast<uintptr_t>(in.data())), int64_t(reinterpret_cast<uintptr_t>(out.data())), 1};
    runtime::EmulatedBuffers buffers({{in.data(), int64_t(in.size() * 4)}, {out.data(), int64_t(out.size() * 4)}});
    REQUIRE(launch(neighbour_kernel, 3, 64, 64 * 4, context) == 0);
    for (int b = 0; b < 3; ++b)
        for (int t = 0; t < 64; ++t) CHECK(out[size_t(b * 64 + t)] == 2.f * float(b * 64 + (t + 1) % 64));
}

TEST_CASE("without the barrier, threads read shared memory their neighbour has not written: poison", "[gpu][emulator]") {
    std::vector<float> in(64, 1.f), out(64, 0.f);
    int64_t context[3] = {int64_t(reinterpret_cast<uintptr_t>(in.data())), int64_t(reinterpret_cast<uintptr_t>(out.data())), 0};
    runtime::EmulatedBuffers buffers({{in.data(), 256}, {out.data(), 256}});
    REQUIRE(launch(neighbour_kernel, 1, 64, 64 * 4, context) == 0);
    // Threads run in order until a barrier: thread t reads thread t + 1's slot before it is
    // written (all but the last thread, whose neighbour is thread 0).
    for (int t = 0; t < 63; ++t) CHECK(std::isnan(out[size_t(t)]));
    CHECK(out[63] == 2.f);
}

namespace {
void divergent_barrier(int64_t *, void *device) {
    tessera_gpu_thread_t *t = thread_of(device);
    if (t->thread % 2 == 0) t->barrier(t);
}
void shared_overflow(int64_t *, void *device) {
    tessera_gpu_thread_t *t = thread_of(device);
    float *shared = static_cast<float *>(t->shared);
    store(t, &shared[t->thread + 1], 0.f, true);  // the last thread writes one past the end
}
void global_overflow(int64_t *context, void *device) {
    tessera_gpu_thread_t *t = thread_of(device);
    float *out = reinterpret_cast<float *>(context[1]);
    store(t, &out[t->thread + 1], 0.f, false);  // the last thread writes one past the buffer
}
} // namespace

TEST_CASE("the emulator reports a barrier that not every thread of a block reaches", "[gpu][emulator]") {
    int64_t context[3] = {};
    REQUIRE(launch(divergent_barrier, 1, 32, 0, context) == TESSERA_ERROR_GPU);
    CHECK(runtime::take_gpu_error().find("a barrier that not every thread reaches") != std::string::npos);
}

TEST_CASE("the emulator reports an access outside the block's shared memory, and one outside every buffer", "[gpu][emulator]") {
    int64_t context[3] = {};
    REQUIRE(launch(shared_overflow, 1, 32, 32 * 4, context) == TESSERA_ERROR_GPU);
    CHECK(runtime::take_gpu_error().find("thread 31 of block 0 writes shared memory at byte 128, outside the block's 128 bytes") !=
          std::string::npos);
    std::vector<float> out(32 + 1);  // (the extra element keeps the stray write in this test's memory)
    context[1] = int64_t(reinterpret_cast<uintptr_t>(out.data()));
    runtime::EmulatedBuffers buffers({{out.data(), 32 * 4}});
    REQUIRE(launch(global_overflow, 1, 32, 0, context) == TESSERA_ERROR_GPU);
    CHECK(runtime::take_gpu_error().find("thread 31 of block 0 writes 4 bytes of global memory outside every buffer") != std::string::npos);
}

namespace {
// Each thread reads a float claiming it 8-byte aligned (bits 24-28 of the size: log2 of the
// alignment, as the emulator's instrumentation passes a load with `align 8`): thread t reads
// element t, which is 8-byte aligned for even t only.
void claims_alignment(int64_t *context, void *device) {
    tessera_gpu_thread_t *t = thread_of(device);
    const float *in = reinterpret_cast<const float *>(context[0]);
    t->access(t, &in[t->thread], 4 | (3 << 24), 0);
}
} // namespace

TEST_CASE("the emulator reports an access not as aligned as it claims (a GPU's vector load would fault)", "[gpu][emulator]") {
    alignas(64) float in[32] = {};
    int64_t context[3] = {int64_t(reinterpret_cast<uintptr_t>(&in[0])), 0, 0};
    runtime::EmulatedBuffers buffers({{in, sizeof in}});
    REQUIRE(launch(claims_alignment, 1, 1, 0, context) == 0);  // thread 0: aligned
    REQUIRE(launch(claims_alignment, 1, 2, 0, context) == TESSERA_ERROR_GPU);
    CHECK(runtime::take_gpu_error().find("thread 1 of block 0 reads 4 bytes at an address that is not 8-byte aligned") != std::string::npos);
}
