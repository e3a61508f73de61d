// CompileOptions checked, and turned into the scheduler's and the code generator's options
// (host and GPU targets).
#include "compile_options.h"

#include <algorithm>

#include <tessera/codegen/cpu_target.h>
#include <tessera/codegen/parallel_compile.h>
#include <tessera/poly/scheduler.h>

#include "tessera/runtime/compiled_pipeline.h"

namespace tessera::runtime {

namespace {

void check_tile_sizes(const CompileOptions &o) {
    for (size_t i = 0; i < o.tile_sizes.size(); ++i)
        if (o.tile_sizes[i] < 1)
            user_error("CompileOptions::tile_sizes[", i, "] is ", o.tile_sizes[i],
                       "; tile sizes must be at least 1 (leave tile_sizes empty to let Tessera choose).");
}

} // namespace

codegen::CodegenOptions::WarpAlignment gpu_warp_alignment(const CompileOptions &o) {
    using A = codegen::CodegenOptions::WarpAlignment;
    if (o.gpu_align_warps == "rows") return A::Rows;
    if (o.gpu_align_warps == "jammed") return A::Jammed;
    if (o.gpu_align_warps == "auto" || o.gpu_align_warps == "off") return A::Off;
    user_error("CompileOptions::gpu_align_warps is '", o.gpu_align_warps, "'; use auto, rows, jammed or off (docs/gpu.md, \"Aligned warps\").");
}

void check_compile_options(const Pipeline &p, const CompileOptions &o) {
    check_tile_sizes(o);
    if (o.threads < 0)
        user_error("CompileOptions::threads is ", o.threads,
                   "; use a positive number of threads, or 0 for OMP_NUM_THREADS (else every core).");
    if (o.compile_threads < 0 || o.compile_threads > 256)
        user_error("CompileOptions::compile_threads is ", o.compile_threads,
                   "; use 1 to 256 threads for LLVM to compile with, or 0 for TESSERA_COMPILE_THREADS (else the hardware's, up to 8).");
    if (o.gpu_unroll_rows < 0 || o.gpu_unroll_rows > 32)
        user_error("CompileOptions::gpu_unroll_rows is ", o.gpu_unroll_rows,
                   "; use 1 to 32 rows per GPU thread iteration (1: no unrolling), or 0 for the target's choice.");
    gpu_warp_alignment(o);
    for (size_t i = 0; i < o.specialize_sizes.size(); ++i)
        if (o.specialize_sizes[i] < 0)
            user_error("CompileOptions::specialize_sizes[", i, "] is ", o.specialize_sizes[i], "; extents cannot be negative.");
    if (!o.specialize_sizes.empty())
        for (const Func &f : p.outputs())
            if (int(o.specialize_sizes.size()) != f.dimensions())
                user_error("CompileOptions::specialize_sizes has ", o.specialize_sizes.size(), " sizes but output ", f.name(),
                           " has ", f.dimensions(), " dimensions.");
    poly::parse_fusion(o.fusion);
    if (o.max_recompute && !(*o.max_recompute >= 0))
        user_error("CompileOptions::max_recompute is ", *o.max_recompute,
                   "; use a share of a tile's useful work of 0 or more (0.4: 40%), or leave it unset for the default.");
    if (o.cache_bytes && *o.cache_bytes <= 0)
        user_error("CompileOptions::cache_bytes is ", *o.cache_bytes,
                   "; use the bytes of cache a tile's working set should fit (the host's L2 by default), or leave it unset.");
}

poly::ScheduleOptions schedule_options(const CompileOptions &o) {
    check_tile_sizes(o);
    const TargetInfo &host = codegen::host_target_info();
    poly::ScheduleOptions s;
    s.cache_bytes = host.l2_bytes;
    s.vector_width = host.lanes(4);
    s.fusion = poly::parse_fusion(o.fusion);
    s.tile_sizes = o.tile_sizes;
    if (o.max_recompute) s.max_recompute = *o.max_recompute;
    if (o.cache_bytes) s.cache_bytes = *o.cache_bytes;
    s.parallel = o.parallel;
    s.ast_threads = o.compile_threads > 0 ? o.compile_threads : codegen::compile_threads();
    return s;
}

codegen::CodegenOptions codegen_options(const Pipeline &p, const CompileOptions &o, const std::string &function_name) {
    check_compile_options(p, o);
    codegen::CodegenOptions c;
    if (!o.specialize_sizes.empty())
        for (size_t i = 0; i < p.outputs().size(); ++i)
            c.specialized_extents.emplace_back(o.specialize_sizes.begin(), o.specialize_sizes.end());
    c.function_name = function_name;
    c.threads = o.threads;
    c.fast_math = o.fast_math;
    c.vector_bits = codegen::host_target_info().vector_bits;
    c.input_prefetch_bytes = codegen::host_target_info().prefetch_bytes;
    c.byte_table_permutes = codegen::host_permutes_bytes();
    if (!o.vectorize) c.vector_width = 1;
    return c;
}

int gpu_block_threads(const TargetInfo &device) { return std::min(256, device.max_threads_per_block); }

poly::ScheduleOptions gpu_schedule_options(const CompileOptions &o, const TargetInfo &device) {
    if (o.cache_bytes)
        user_error("CompileOptions::cache_bytes is set for a GPU target, whose tiles' scratchpads are bounded by the block's shared memory; "
                   "leave it unset (Target::with_shared_memory_opt_in() allows more shared memory on sm_80 and newer).");
    poly::ScheduleOptions s = schedule_options(o);
    s.gpu = true;
    s.sliding_window = false;    // stages run one after another across the block's threads
    s.register_tiling = false;   // a CPU register blocking
    s.cache_bytes = device.shared_bytes_per_block;  // a tile's scratchpads live in shared memory
    s.vector_width = device.warp_size;
    s.gpu_block_threads = gpu_block_threads(device);
    s.gpu_stage_inputs = o.gpu_stage_inputs;
    s.gpu_column_windows = o.gpu_column_windows;
    s.gpu_window_columns = device.window_columns;
    return s;
}

} // namespace tessera::runtime
