// The GPU emulator: runs a GPU program's kernels on the host with GPU semantics. It is the test
// oracle of the GPU path and lets GPU schedules run on machines without a GPU.
//
// It runs the very kernel IR that becomes PTX, compiled for the host with the emulator's device
// interface (codegen/gpu_target.h). Blocks run one after another; a block's threads are fibers
// that run phase by phase: every thread runs until its next barrier (or its end) before any
// thread goes past that barrier. Shared memory starts each block poisoned (every byte 0xFF: NaN
// floats, -1 integers), so a missing barrier or a race on shared memory gives a wrong answer.
// A barrier that not every thread of a block reaches is an error.
#pragma once

#include <string>

#include <tessera/codegen/abi.h>

namespace tessera::runtime {

// The runtime an emulated GPU program launches its kernels through.
tessera_gpu_runtime_t *emulator_runtime();

// A runtime whose every launch fails: GPU programs compiled for a real GPU, which this build
// cannot run yet (no CUDA driver runtime).
tessera_gpu_runtime_t *no_device_runtime();

// The message of the last failed launch on this thread (and forgets it).
std::string take_gpu_error();

} // namespace tessera::runtime
