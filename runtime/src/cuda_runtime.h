// Private to the runtime: a GPU program's kernels on an NVIDIA GPU, through the CUDA driver API
// opened with dlopen("libcuda.so.1") (never linked: without a driver, everything else works).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <tessera/buffer.h>
#include <tessera/codegen/abi.h>
#include <tessera/codegen/gpu_target.h>

namespace tessera::runtime {

class CudaProgram {
public:
    CudaProgram();
    ~CudaProgram();
    // The kernels' PTX and names, once the program is lowered (it needs runtime() first).
    void set_code(std::string ptx, std::vector<codegen::KernelName> kernels);
    CudaProgram(const CudaProgram &) = delete;
    CudaProgram &operator=(const CudaProgram &) = delete;

    // What the program's entry launches through (CodegenOptions::gpu_runtime).
    tessera_gpu_runtime_t *runtime() { return &runtime_; }

    // Loads the driver, the device's context and the module on first use, and makes the
    // context current on this thread. A UserError when there is no driver or no GPU, or when
    // the driver rejects the PTX (with its JIT log).
    void prepare();

    // A device copy of a buffer's host bytes [host + span_lo, host + span_lo + span_bytes), its
    // contents undefined until copied (a UserError when the GPU has no room). It stays valid
    // after this program is gone: the context is the device's primary one.
    static std::shared_ptr<DeviceCopy> make_device_copy(int64_t span_lo, int64_t span_bytes);
    // What DeviceCopy::api is for the copies made here.
    static const void *api();

private:
    static int32_t launch(void *state, int32_t kernel, void (*fn)(int64_t *, void *), int64_t blocks, int32_t threads,
                          int64_t shared_bytes, int64_t *context, int64_t context_words);
    static void *alloc(void *state, int64_t bytes);
    static void free_memory(void *state, void *device);
    static void release(void *device);

    std::string ptx_;
    std::vector<codegen::KernelName> kernels_;
    tessera_gpu_runtime_t runtime_;
    std::mutex mutex_;
    void *module_ = nullptr;              // CUmodule
    std::vector<void *> functions_;       // CUfunction per kernel
    std::vector<int64_t> shared_opted_in_;  // the dynamic shared memory each kernel may use so far
};

} // namespace tessera::runtime
