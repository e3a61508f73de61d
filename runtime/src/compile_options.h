// What compile_options.cpp gives the rest of the runtime beside compiled_pipeline.h's option
// functions (check_compile_options, schedule_options, codegen_options, gpu_schedule_options).
#pragma once

#include <tessera/callable.h>
#include <tessera/codegen/llvm_lowering.h>
#include <tessera/target_info.h>

namespace tessera::runtime {

// CompileOptions::gpu_align_warps as the kernel lowering's choice; a clear error for an unknown one.
codegen::CodegenOptions::WarpAlignment gpu_warp_alignment(const CompileOptions &o);

// The threads of every GPU block: 256 (8 warps), or fewer where the device allows fewer.
int gpu_block_threads(const TargetInfo &device);

} // namespace tessera::runtime
