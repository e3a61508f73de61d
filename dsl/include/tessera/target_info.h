// The hardware facts that scheduling and code generation read, in one place (after TVM's target
// kinds): vector width and cache sizes for CPUs; warp size, shared memory and threads per block
// for GPUs. The code generator fills it for the host (codegen::host_target_info); GPU targets
// start from their documented limits (nvidia_gpu, amd_gpu).
#pragma once

#include <cstdint>
#include <string>

namespace tessera {

struct TargetInfo {
    enum class Kind { CPU, NvidiaGPU, AmdGPU };
    Kind kind = Kind::CPU;
    std::string name;  // the CPU ("znver4", "skylake-avx512") or the GPU architecture ("sm_80")

    // CPUs.
    int vector_bits = 256;                // SIMD register width: 128 (SSE), 256 (AVX2), 512 (AVX-512)
    int64_t l1_bytes = 32 * 1024;         // data cache per core
    int64_t l2_bytes = 512 * 1024;        // per core: the tile-size model sizes tiles for it
    int64_t l3_bytes = 0;                 // shared; 0 when unknown
    int cores = 1;                        // CPUs the process may run on (its affinity mask)
    // How far ahead of a vector loop's loads of an input row the loop prefetches, in bytes: 64
    // steps of a 64-byte vector. (1, 2, 4, 8 and 16 KB measured on an AMD EPYC with 2 threads:
    // 4 KB the best or within the noise of it on blur, harris and unsharp_mask.)
    int64_t prefetch_bytes = 4096;

    // GPUs (0 on CPUs).
    int warp_size = 0;                    // threads that execute together: 32 (NVIDIA), 64 (AMD wavefront)
    int max_threads_per_block = 0;
    int64_t shared_bytes_per_block = 0;   // what a block may use: the default, or the opt-in maximum when opted in
    int64_t max_shared_bytes_per_block = 0;  // with the opt-in of newer architectures
    // Rows of a tile each thread loads before it uses them (the row loop around a thread loop
    // unrolled and jammed into it): one row per warp in flight leaves a GPU's memory latency
    // uncovered. CompileOptions::gpu_unroll_rows overrides it.
    int rows_in_flight = 0;
    // Consecutive columns each thread of a column window runs (the thread loop jammed into the
    // row loop below it): their input loads overlap, so two columns load 6 elements a row where
    // one column each loads 5 (blur on an H200, hand-written: 0.132 ms against 0.156).
    int window_columns = 0;

    // Elements of `bytes` each that one vector register holds (16 floats with AVX-512).
    int lanes(int bytes) const { return vector_bits / (8 * bytes); }

    // NVIDIA compute capability `sm` (80 for A100, 90 for H100): warps of 32, 1024 threads per
    // block, 48 KiB of shared memory per block by default and, by opt-in, 96 KiB (sm_70, 72),
    // 64 KiB (75), 163 KiB (80, 87), 99 KiB (86, 89, 12x) or 227 KiB (90, 10x, 110) (CUDA C
    // Programming Guide, "Compute Capabilities"). `shared_memory_opt_in`: blocks may use the
    // maximum (Target::with_shared_memory_opt_in); a UserError before sm_70, which has none.
    static TargetInfo nvidia_gpu(int sm, bool shared_memory_opt_in = false);
    // AMD GCN/CDNA `gfx` architecture (e.g. "gfx90a"): wavefronts of 64, 1024 threads per block,
    // 64 KiB of LDS per workgroup.
    static TargetInfo amd_gpu(const std::string &gfx);
};

} // namespace tessera
