// Lowering of a scheduled program to LLVM IR (target-independent part).
//
// The program becomes `int32_t <function_name>(void **args, tessera_error_t *error)` (abi.h):
// it reads its parameters from the argument buffers, checks every input against the region
// the program reads and every output against the region it writes, allocates intermediate
// buffers, runs the loop nest and frees them. Statement bodies keep the DSL's exact semantics
// (scalar_ops.cpp): Euclidean division, wrapping integers, saturating float-to-int casts,
// float16/bfloat16 rounded once per operation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tessera/poly/program.h>

namespace llvm {
class Module;
}

namespace tessera::codegen {

// The largest table of 8-bit values looked up with byte permutes (CodegenOptions::byte_table_permutes):
// 8 pairs of 64-byte registers.
constexpr int64_t kByteTableEntries = 1024;

struct CodegenOptions {
    std::string function_name = "tessera_pipeline";
    int threads = 0;         // 0: the OpenMP runtime's default (OMP_NUM_THREADS, else every core)
    bool fast_math = false;  // allow reassociation and contraction of float arithmetic
    // Extents of each output the code is specialized for (constants in the code; other sizes are
    // rejected at entry). Empty: one function for every size.
    std::vector<std::vector<int64_t>> specialized_extents;
    // Streaming (non-temporal) stores for outputs written once, in vectorized loops: the
    // output is not read back through the cache, which saves the read of every written line.
    bool streaming_output_stores = true;
    // Vector loops prefetch what their contiguous loads of inputs read this many bytes later
    // (TargetInfo::prefetch_bytes; 0: no prefetches). With two threads streaming rows, the
    // hardware prefetchers alone left memory idle: blur_x_blur_y 10.7 -> 8.9 ms, harris
    // 18.9 -> 16.5, unsharp_mask 3.75 -> 2.4 (docs/benchmarks.md).
    int64_t input_prefetch_bytes = 0;
    // Width of the target's vector registers in bits (256 for AVX2, 512 for AVX-512); loops
    // marked vector take as many lanes as their widest element fits.
    int vector_bits = 256;
    // Lanes per vector step for loops marked vector (0: from vector_bits; 1: no vectors).
    int vector_width = 0;
    // The target permutes bytes across a 512-bit register pair (AVX-512 VBMI's vpermi2b): a
    // vector loop that looks up a Func of 8-bit values over at most kByteTableEntries
    // elements (a tone curve) takes 64 lanes and finds them with permutes of the table held in
    // registers, not one load per lane (cpu/vector_lowering.cpp).
    bool byte_table_permutes = false;
    // GPU targets: the program's kernel marks become kernels (`<function_name>_kernel<k>`,
    // tessera_gpu_runtime_t in abi.h) that call the device interface (gpu_target.h), launched
    // by the entry. Blocks of `gpu_threads` threads (1 for kernels without thread loops); a
    // block's scratchpads live in its shared memory when they fit in `gpu_shared_bytes`, else in
    // global memory the entry allocates.
    bool gpu = false;
    int gpu_threads = 256;
    int64_t gpu_shared_bytes = 48 * 1024;
    // A loop over rows whose body is a thread loop runs this many rows per thread iteration
    // (unroll and jam, gpu/kernel_lowering.cpp); 1: as written.
    int gpu_unroll_rows = 1;
    // A thread loop over a column window's rows (its body the row loop, the folded scratchpads
    // below it thread-private: poly::Storage::thread_window) runs this many consecutive
    // columns a thread, jammed into the row loop.
    int gpu_window_columns = 1;
    // A thread loop whose one statement stores to global memory, or copies an input into
    // shared memory, starts each row's warps on a 32-byte sector and runs its rows one at a
    // time (Rows); is aligned and jammed too, each row with its own shift (Jammed); or is not
    // aligned and is jammed like any other (Off). gpu/kernel_lowering.cpp, aligned_access.
    enum class WarpAlignment { Rows, Jammed, Off };
    WarpAlignment gpu_warp_alignment = WarpAlignment::Rows;
    // The tessera_gpu_runtime_t the entry launches through, when known at compile time (a JIT
    // in this process); else the entry's `<function_name>_gpu_runtime` global starts null and
    // the loader sets it.
    const void *gpu_runtime = nullptr;
    // Whether the entry takes and returns its buffers over Funcs' full regions through the
    // external functions kBufferPoolAllocSymbol and kBufferPoolFreeSymbol, which the loader
    // resolves (the JIT: runtime/buffer_pool.h); else aligned_alloc and free. Named symbols,
    // not addresses of this process, so that the object can be cached and loaded by another.
    bool pooled_buffers = false;
};

// void *tessera_buffer_pool_alloc(int64_t bytes) and void tessera_buffer_pool_free(void *, int64_t).
constexpr const char *kBufferPoolAllocSymbol = "tessera_buffer_pool_alloc";
constexpr const char *kBufferPoolFreeSymbol = "tessera_buffer_pool_free";

// Emits the program's function into `module` (whose context and data layout are used).
void lower_program(const poly::Program &p, llvm::Module &module, const CodegenOptions &options);

} // namespace tessera::codegen
