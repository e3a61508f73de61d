#include "cuda_runtime.h"

#include <dlfcn.h>

#include <algorithm>
#include <type_traits>

#include <tessera/error.h>

#include "tessera/runtime/gpu_emulator.h"

namespace tessera::runtime {

namespace {

// The driver API's types, as cuda.h declares them (64-bit).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

// libcuda.so.1, opened once per process and never closed; NVTX when it is installed too.
struct Driver {
    CUresult (*cuInit)(unsigned);
    CUresult (*cuDeviceGetCount)(int *);
    CUresult (*cuDeviceGet)(CUdevice *, int);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuCtxSynchronize)();
    CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
    CUresult (*cuModuleUnload)(CUmodule);
    CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*cuMemAlloc_v2)(CUdeviceptr *, size_t);
    CUresult (*cuMemFree_v2)(CUdeviceptr);
    CUresult (*cuMemcpyHtoD_v2)(CUdeviceptr, const void *, size_t);
    CUresult (*cuMemcpyDtoH_v2)(void *, CUdeviceptr, size_t);
    CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                               void **, void **);
    CUresult (*cuGetErrorString)(CUresult, const char **);
    int (*nvtxRangePushA)(const char *) = nullptr;
    int (*nvtxRangePop)() = nullptr;
    std::string missing;  // why the driver cannot be used ("" when it can)

    static Driver &get() {
        static Driver d = load();
        return d;
    }

    std::string error(CUresult r) const {
        const char *s = nullptr;
        if (cuGetErrorString && cuGetErrorString(r, &s) == 0 && s) return s;
        return "CUDA error " + std::to_string(r);
    }

private:
    static Driver load() {
        Driver d{};
        // The driver is installed with the GPU's kernel module, not by Tessera's set-up.
        void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char *e = dlerror();
            d.missing = std::string("the NVIDIA driver library libcuda.so.1 cannot be loaded (") + (e ? e : "not found") + ")";
            return d;
        }
        bool ok = true;
        auto sym = [&](auto &fn, const char *name) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
            if (!fn && ok) {
                ok = false;
                d.missing = std::string("libcuda.so.1 lacks ") + name;
            }
        };
        sym(d.cuInit, "cuInit");
        sym(d.cuDeviceGetCount, "cuDeviceGetCount");
        sym(d.cuDeviceGet, "cuDeviceGet");
        sym(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
        sym(d.cuCtxSetCurrent, "cuCtxSetCurrent");
        sym(d.cuCtxSynchronize, "cuCtxSynchronize");
        sym(d.cuModuleLoadDataEx, "cuModuleLoadDataEx");
        sym(d.cuModuleUnload, "cuModuleUnload");
        sym(d.cuModuleGetFunction, "cuModuleGetFunction");
        sym(d.cuMemAlloc_v2, "cuMemAlloc_v2");
        sym(d.cuMemFree_v2, "cuMemFree_v2");
        sym(d.cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2");
        sym(d.cuMemcpyDtoH_v2, "cuMemcpyDtoH_v2");
        sym(d.cuLaunchKernel, "cuLaunchKernel");
        sym(d.cuGetErrorString, "cuGetErrorString");
        if (!ok) return d;
        if (CUresult r = d.cuInit(0)) {
            d.missing = "the CUDA driver does not initialize (" + d.error(r) + ")";
            return d;
        }
        int count = 0;
        if (d.cuDeviceGetCount(&count) != 0 || count == 0) {
            d.missing = "the CUDA driver finds no GPU";
            return d;
        }
        // NVTX ranges name each launch in an nsys timeline, when the library is there.
        if (void *nvtx = dlopen("libnvToolsExt.so.1", RTLD_NOW | RTLD_LOCAL)) {
            d.nvtxRangePushA = reinterpret_cast<int (*)(const char *)>(dlsym(nvtx, "nvtxRangePushA"));
            d.nvtxRangePop = reinterpret_cast<int (*)()>(dlsym(nvtx, "nvtxRangePop"));
        }
        return d;
    }
};

} // namespace

CudaProgram::CudaProgram() {
    runtime_.launch = launch;
    runtime_.alloc = alloc;
    runtime_.release = free_memory;
    runtime_.state = this;
}

void CudaProgram::set_code(std::string ptx, std::vector<codegen::KernelName> kernels) {
    ptx_ = std::move(ptx);
    kernels_ = std::move(kernels);
}

CudaProgram::~CudaProgram() {
    if (module_) {
        Driver &d = Driver::get();
        d.cuCtxSetCurrent(context_);
        d.cuModuleUnload(module_);
    }
}

void CudaProgram::prepare() {
    Driver &d = Driver::get();
    if (!d.missing.empty())
        user_error("This pipeline was compiled for a CUDA GPU, but ", d.missing,
                   ". Compile it with Target::cuda(sm).emulated() to run the same kernels in Tessera's GPU emulator, "
                   "or with Target::host() for the CPU.");
    std::lock_guard<std::mutex> lock(mutex_);
    if (!context_) {
        CUdevice device = 0;
        if (CUresult r = d.cuDeviceGet(&device, 0)) user_error("The CUDA driver gives no device 0: ", d.error(r), ".");
        if (CUresult r = d.cuDevicePrimaryCtxRetain(&context_, device))
            user_error("The CUDA driver gives no context for device 0: ", d.error(r), ".");
    }
    if (CUresult r = d.cuCtxSetCurrent(context_)) user_error("The CUDA context cannot be made current: ", d.error(r), ".");
    if (module_) return;
    std::vector<char> log(16384, 0);
    int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {log.data(), reinterpret_cast<void *>(uintptr_t(log.size()))};
    if (CUresult r = d.cuModuleLoadDataEx(&module_, ptx_.c_str(), 2, options, values)) {
        module_ = nullptr;
        user_error("The CUDA driver rejected the pipeline's PTX (", d.error(r), "): ", log.data());
    }
    functions_.assign(kernels_.size(), nullptr);
    for (size_t k = 0; k < kernels_.size(); ++k)
        if (CUresult r = d.cuModuleGetFunction(&functions_[k], module_, kernels_[k].function.c_str()))
            internal_error("the PTX module has no kernel ", kernels_[k].function, ": ", d.error(r));
}

void *CudaProgram::allocate(int64_t bytes) {
    Driver &d = Driver::get();
    CUdeviceptr p = 0;
    if (CUresult r = d.cuMemAlloc_v2(&p, size_t(std::max<int64_t>(bytes, 1))))
        user_error("The GPU could not allocate ", bytes, " bytes (", d.error(r), ").");
    return reinterpret_cast<void *>(uintptr_t(p));
}

void CudaProgram::release(void *device) {
    if (device) Driver::get().cuMemFree_v2(CUdeviceptr(reinterpret_cast<uintptr_t>(device)));
}

void CudaProgram::to_device(void *device, const void *host, int64_t bytes) {
    Driver &d = Driver::get();
    if (bytes <= 0) return;
    if (CUresult r = d.cuMemcpyHtoD_v2(CUdeviceptr(reinterpret_cast<uintptr_t>(device)), host, size_t(bytes)))
        user_error("Copying ", bytes, " bytes to the GPU failed (", d.error(r), ").");
}

void CudaProgram::to_host(void *host, const void *device, int64_t bytes) {
    Driver &d = Driver::get();
    if (bytes <= 0) return;
    if (CUresult r = d.cuMemcpyDtoH_v2(host, CUdeviceptr(reinterpret_cast<uintptr_t>(device)), size_t(bytes)))
        user_error("Copying ", bytes, " bytes from the GPU failed (", d.error(r), ").");
}

void *CudaProgram::alloc(void *, int64_t bytes) {
    CUdeviceptr p = 0;
    if (Driver::get().cuMemAlloc_v2(&p, size_t(std::max<int64_t>(bytes, 1)))) return nullptr;
    return reinterpret_cast<void *>(uintptr_t(p));
}

void CudaProgram::free_memory(void *state, void *device) { static_cast<CudaProgram *>(state)->release(device); }

int32_t CudaProgram::launch(void *state, int32_t kernel, void (*)(int64_t *, void *), int64_t blocks, int32_t threads,
                            int64_t shared_bytes, int64_t *context, int64_t context_words) {
    auto *self = static_cast<CudaProgram *>(state);
    Driver &d = Driver::get();
    auto fail = [&](const std::string &what) {
        set_gpu_error("GPU kernel " + std::to_string(kernel) + " (" + self->kernels_[size_t(kernel)].groups + "): " + what);
        return int32_t(TESSERA_ERROR_GPU);
    };
    if (size_t(kernel) >= self->functions_.size() || !self->functions_[size_t(kernel)]) return fail("not loaded");
    if (blocks > 0x7fffffff) return fail(std::to_string(blocks) + " blocks exceed the grid's 2^31 - 1");
    // The kernel reads its context from device memory.
    CUdeviceptr words = 0;
    int64_t bytes = std::max<int64_t>(context_words, 1) * 8;
    if (CUresult r = d.cuMemAlloc_v2(&words, size_t(bytes))) return fail("allocating its context: " + d.error(r));
    if (CUresult r = d.cuMemcpyHtoD_v2(words, context, size_t(bytes))) {
        d.cuMemFree_v2(words);
        return fail("copying its context: " + d.error(r));
    }
    void *device = nullptr;
    void *params[] = {&words, &device};
    if (d.nvtxRangePushA) d.nvtxRangePushA(("tessera " + self->kernels_[size_t(kernel)].groups).c_str());
    CUresult r = d.cuLaunchKernel(self->functions_[size_t(kernel)], unsigned(blocks), 1, 1, unsigned(threads), 1, 1,
                                  unsigned(shared_bytes), nullptr, params, nullptr);
    if (r == 0) r = d.cuCtxSynchronize();
    if (d.nvtxRangePop) d.nvtxRangePop();
    d.cuMemFree_v2(words);
    if (r) return fail(d.error(r));
    return 0;
}

} // namespace tessera::runtime
