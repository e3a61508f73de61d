// GPU targets of the code generator (after Halide's CodeGen_GPU_Dev): the kernels that
// lower_program emits for a GPU program (CodegenOptions::gpu) call a small device interface,
//
//   i32 tessera_gpu_thread_id(ptr device)     threadIdx.x
//   i32 tessera_gpu_block_size(ptr device)    blockDim.x
//   i64 tessera_gpu_block_id(ptr device)      blockIdx.x
//   ptr tessera_gpu_shared(ptr device)        the block's shared memory
//   void tessera_gpu_barrier(ptr device)      __syncthreads()
//   void tessera_gpu_step(ptr device, i64 k)  a thread loop starts (k = -1) or runs iteration k:
//                                             nothing on a GPU; the emulator's warp model
//
// which each target defines: NVPTX with its special registers, shared address space and
// barrier; the emulator (runtime/gpu_emulator.h) by reading the tessera_gpu_thread_t it passes
// as `device` (abi.h). Everything else in a kernel is the same IR on both.
#pragma once

#include <string>
#include <vector>

namespace llvm {
class Module;
}

namespace tessera::codegen {

constexpr const char *kThreadIdFunction = "tessera_gpu_thread_id";
constexpr const char *kBlockSizeFunction = "tessera_gpu_block_size";
constexpr const char *kBlockIdFunction = "tessera_gpu_block_id";
constexpr const char *kSharedFunction = "tessera_gpu_shared";
constexpr const char *kBarrierFunction = "tessera_gpu_barrier";
constexpr const char *kStepFunction = "tessera_gpu_step";
// The emulator's only addition to the kernel IR: a call before each memory access
// (tessera_gpu_thread_t::access in abi.h).
constexpr const char *kAccessFunction = "tessera_gpu_access";
// The function attribute that marks kernels; its value names the groups (and Funcs) the kernel
// computes, e.g. "G0 (blur_x, blur_y)": profiler ranges carry it.
constexpr const char *kKernelAttribute = "tessera-kernel";
// The kernels' attribute that holds how many 64-bit words their context has (emit_kernel).
constexpr const char *kContextWordsAttribute = "tessera-context-words";
// A context of at most this many words is the CUDA kernel's first parameter itself, by value:
// the launch carries it, with no allocation, copy and free of device memory around each launch
// (tens of microseconds). Kernel parameters may take 4 KiB (CUDA before 12.1), the device
// pointer 8 bytes of it. A larger context stays in device memory and the kernel gets a pointer.
constexpr long kMaxContextParameterWords = 480;
inline bool context_by_value(long words) { return words <= kMaxContextParameterWords; }
// The entry's global that points at its tessera_gpu_runtime_t: <function name> + this suffix.
constexpr const char *kRuntimeGlobalSuffix = "_gpu_runtime";

// The module's kernels in launch-index order: their names, and the groups each computes.
struct KernelName {
    std::string function, groups;
};
std::vector<KernelName> kernel_names(const llvm::Module &m);

// Defines the device interface for the emulator: each function reads the tessera_gpu_thread_t
// at `device`; the barrier calls its `barrier` member. Inlined into the kernels. Before that,
// every load and store of the kernels is preceded by a call of `access` with its address, size,
// site and whether it touches shared memory (memory derived from tessera_gpu_shared): the
// emulator's traffic model and bounds checks. Call it on the unoptimized module.
void define_emulated_device(llvm::Module &m);

// The kernels of `m` (a GPU program's module) as PTX for NVIDIA compute capability `sm` (80 for
// sm_80): copied into a module of their own for nvptx64-nvidia-cuda, the device interface
// defined with NVPTX's special registers, optimized at O3. A UserError names what NVPTX cannot
// compile yet (transcendental math, which needs CUDA's libdevice).
std::string emit_ptx(const llvm::Module &m, int sm);

} // namespace tessera::codegen
