// The GPU emulator: runs a GPU program's kernels on the host with GPU semantics. It is the test
// oracle of the GPU path and lets GPU schedules run on machines without a GPU.
//
// It runs the very kernel IR that becomes PTX, compiled for the host with the emulator's device
// interface (codegen/gpu_target.h). Blocks run one after another; a block's threads are fibers
// that run phase by phase: every thread runs until its next barrier (or its end) before any
// thread goes past that barrier. Shared memory starts each block poisoned (every byte 0xFF: NaN
// floats, -1 integers), so a missing barrier or a race on shared memory gives a wrong answer.
// A barrier that not every thread of a block reaches is an error, and so is an access outside
// the block's shared memory or outside every buffer of the call (its inputs and outputs, which
// the caller registers with EmulatedBuffers, and the intermediates the program allocates).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <tessera/codegen/abi.h>

namespace tessera::runtime {

// The runtime an emulated GPU program launches its kernels through.
tessera_gpu_runtime_t *emulator_runtime();

// The message of the last failed launch on this thread (and forgets it), and its setter for
// the GPU runtimes.
std::string take_gpu_error();
void set_gpu_error(const std::string &message);

// The buffers of one call of an emulated program, for the emulator's bounds checks of global
// memory, registered for the lifetime of this object on this thread: [begin, begin + bytes).
class EmulatedBuffers {
public:
    explicit EmulatedBuffers(const std::vector<std::pair<const void *, int64_t>> &spans);
    ~EmulatedBuffers();
    EmulatedBuffers(const EmulatedBuffers &) = delete;
    EmulatedBuffers &operator=(const EmulatedBuffers &) = delete;
};

// The emulator's performance model of one kernel, summed over its launches on this thread:
// global memory in 32-byte sectors, counted two ways, shared-memory bank conflicts, barriers.
struct GpuKernelProfile {
    int kernel = 0;                // the kernel's launch index in its pipeline
    int64_t launches = 0, blocks = 0;
    int threads_per_block = 0;
    int64_t shared_bytes = 0;      // per block
    int64_t barriers = 0;          // barriers executed, summed over blocks
    // DRAM traffic: the distinct sectors each block loads and stores (its reuse caught by the
    // caches, none across blocks: a halo re-read by the next block counts again).
    int64_t global_load_bytes = 0, global_store_bytes = 0;
    // Coalescing: the bytes the threads ask for, and the sectors each warp-wide access (32
    // threads, threadIdx.x fastest; the k-th execution of one access by each thread of a
    // warp) transfers.
    int64_t requested_bytes = 0, transferred_bytes = 0;
    // Warp-wide shared accesses, and the extra passes their bank conflicts need (32 banks of
    // 4 bytes; threads reading one word share it).
    int64_t shared_accesses = 0, bank_conflicts = 0;

    double coalescing() const { return transferred_bytes ? double(requested_bytes) / double(transferred_bytes) : 1.0; }
};

// Whether this thread's emulated launches keep a profile (off by default: it slows them).
void set_emulator_profiling(bool on);
// This thread's profiles since the last call (one per kernel index), and forgets them.
std::vector<GpuKernelProfile> take_emulator_profile();

} // namespace tessera::runtime
