// Private to the runtime: a GPU program's kernels on an NVIDIA GPU, through the CUDA driver API
// opened with dlopen("libcuda.so.1") (never linked: without a driver, everything else works).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

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

    // Device memory, and copies between it and the host (UserErrors on failure).
    void *allocate(int64_t bytes);
    void release(void *device);
    void to_device(void *device, const void *host, int64_t bytes);
    void to_host(void *host, const void *device, int64_t bytes);

private:
    static int32_t launch(void *state, int32_t kernel, void (*fn)(int64_t *, void *), int64_t blocks, int32_t threads,
                          int64_t shared_bytes, int64_t *context, int64_t context_words);
    static void *alloc(void *state, int64_t bytes);
    static void free_memory(void *state, void *device);

    std::string ptx_;
    std::vector<codegen::KernelName> kernels_;
    tessera_gpu_runtime_t runtime_;
    std::mutex mutex_;
    void *context_ = nullptr;             // CUcontext (the device's primary context)
    void *module_ = nullptr;              // CUmodule
    std::vector<void *> functions_;       // CUfunction per kernel
};

} // namespace tessera::runtime
