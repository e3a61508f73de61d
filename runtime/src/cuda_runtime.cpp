#include "cuda_runtime.h"

#include <dlfcn.h>

#include <algorithm>
#include <type_traits>

#include <tessera/error.h>

#include "tessera/codegen/gpu_target.h"
#include "tessera/runtime/cuda_device.h"
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
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
constexpr int64_t kDefaultSharedBytes = 48 * 1024;  // a block's dynamic shared memory without opt-in

// libcuda.so.1, opened once per process and never closed; NVTX when it is installed too.
struct Driver {
    CUresult (*cuInit)(unsigned);
    CUresult (*cuDeviceGetCount)(int *);
    CUresult (*cuDeviceGet)(CUdevice *, int);
    CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuCtxSynchronize)();
    CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
    CUresult (*cuModuleUnload)(CUmodule);
    CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
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
        sym(d.cuDeviceGetAttribute, "cuDeviceGetAttribute");
        sym(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
        sym(d.cuCtxSetCurrent, "cuCtxSetCurrent");
        sym(d.cuCtxSynchronize, "cuCtxSynchronize");
        sym(d.cuModuleLoadDataEx, "cuModuleLoadDataEx");
        sym(d.cuModuleUnload, "cuModuleUnload");
        sym(d.cuModuleGetFunction, "cuModuleGetFunction");
        sym(d.cuFuncSetAttribute, "cuFuncSetAttribute");
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

// Device 0's primary context, retained on first use and shared by every program, so that a
// buffer's device copy made for one pipeline serves the next. A UserError when there is none.
CUcontext primary_context() {
    static std::mutex mutex;
    static CUcontext context = nullptr;
    std::lock_guard<std::mutex> lock(mutex);
    if (!context) {
        Driver &d = Driver::get();
        CUdevice device = 0;
        if (CUresult r = d.cuDeviceGet(&device, 0)) user_error("The CUDA driver gives no device 0: ", d.error(r), ".");
        if (CUresult r = d.cuDevicePrimaryCtxRetain(&context, device))
            user_error("The CUDA driver gives no context for device 0: ", d.error(r), ".");
    }
    return context;
}

// cuMemAlloc of at least one byte (the driver refuses zero); 0 when it fails, with its result.
CUdeviceptr device_alloc(int64_t bytes, CUresult &result) {
    CUdeviceptr p = 0;
    result = Driver::get().cuMemAlloc_v2(&p, size_t(std::max<int64_t>(bytes, 1)));
    return result ? 0 : p;
}

} // namespace

int cuda_device_capability(std::string *why) {
    Driver &d = Driver::get();
    std::string missing = d.missing;
    int major = 0, minor = 0;
    if (missing.empty()) {
        CUdevice device = 0;
        constexpr int kMajor = 75, kMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, _MINOR
        if (CUresult r = d.cuDeviceGet(&device, 0)) missing = "the CUDA driver gives no device 0 (" + d.error(r) + ")";
        else if (CUresult r2 = d.cuDeviceGetAttribute(&major, kMajor, device); r2 || d.cuDeviceGetAttribute(&minor, kMinor, device))
            missing = "the CUDA driver does not tell device 0's compute capability";
    }
    if (!missing.empty()) {
        if (why) *why = missing;
        return 0;
    }
    return major * 10 + minor;
}

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
        d.cuCtxSetCurrent(primary_context());
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
    if (CUresult r = d.cuCtxSetCurrent(primary_context())) user_error("The CUDA context cannot be made current: ", d.error(r), ".");
    if (module_) return;
    std::vector<char> log(16384, 0);
    int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {log.data(), reinterpret_cast<void *>(uintptr_t(log.size()))};
    if (CUresult r = d.cuModuleLoadDataEx(&module_, ptx_.c_str(), 2, options, values)) {
        module_ = nullptr;
        user_error("The CUDA driver rejected the pipeline's PTX (", d.error(r), "): ", log.data());
    }
    functions_.assign(kernels_.size(), nullptr);
    shared_opted_in_.assign(kernels_.size(), kDefaultSharedBytes);
    for (size_t k = 0; k < kernels_.size(); ++k)
        if (CUresult r = d.cuModuleGetFunction(&functions_[k], module_, kernels_[k].function.c_str()))
            internal_error("the PTX module has no kernel ", kernels_[k].function, ": ", d.error(r));
}

namespace {

// A buffer's copy in the GPU's memory (cuMemAlloc), freed with the buffer. The context is made
// current for each call: a buffer may be read or freed on any thread.
class CudaDeviceCopy final : public DeviceCopy {
public:
    CudaDeviceCopy(CUcontext context, CUdeviceptr memory, int64_t span_lo, int64_t span_bytes)
        : DeviceCopy(CudaProgram::api(), span_lo, span_bytes), context_(context), memory_(memory) {}
    ~CudaDeviceCopy() override {
        Driver &d = Driver::get();
        d.cuCtxSetCurrent(context_);
        d.cuMemFree_v2(memory_);
    }
    uint64_t address() const override { return memory_; }
    void copy_to_host(uint8_t *span) const override {
        copy("from", [&](Driver &d) { return d.cuMemcpyDtoH_v2(span, memory_, size_t(span_bytes)); });
    }
    void copy_to_device(const uint8_t *span) const override {
        copy("to", [&](Driver &d) { return d.cuMemcpyHtoD_v2(memory_, span, size_t(span_bytes)); });
    }

private:
    // Runs `memcpy` (a cuMemcpy of the span) with the context current; a UserError if it fails.
    template <typename Memcpy>
    void copy(const char *direction, Memcpy &&memcpy) const {
        if (span_bytes <= 0) return;
        Driver &d = Driver::get();
        CUresult r = d.cuCtxSetCurrent(context_);
        if (r == 0) r = memcpy(d);
        if (r) user_error("Copying ", span_bytes, " bytes ", direction, " the GPU failed (", d.error(r), ").");
    }

    CUcontext context_;
    CUdeviceptr memory_;
};

} // namespace

const void *CudaProgram::api() {
    static const char tag = 0;
    return &tag;
}

std::shared_ptr<DeviceCopy> CudaProgram::make_device_copy(int64_t span_lo, int64_t span_bytes) {
    Driver &d = Driver::get();
    CUresult r = 0;
    CUdeviceptr p = device_alloc(span_bytes, r);
    if (r)
        user_error("The GPU could not allocate ", span_bytes, " bytes for a buffer (", d.error(r),
                   "). Free buffers' device copies (Buffer::device_free) or use smaller buffers.");
    return std::make_shared<CudaDeviceCopy>(primary_context(), p, span_lo, span_bytes);
}

void CudaProgram::release(void *device) {
    if (device) Driver::get().cuMemFree_v2(CUdeviceptr(reinterpret_cast<uintptr_t>(device)));
}

void *CudaProgram::alloc(void *, int64_t bytes) {
    CUresult r = 0;
    return reinterpret_cast<void *>(uintptr_t(device_alloc(bytes, r)));
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
    // A small context is the kernel's parameter by value (codegen/gpu_target.h); a large one
    // the kernel reads from device memory.
    CUdeviceptr words = 0;
    int64_t bytes = std::max<int64_t>(context_words, 1) * 8;
    bool by_value = codegen::context_by_value(long(std::max<int64_t>(context_words, 1)));
    if (!by_value) {
        if (CUresult r = d.cuMemAlloc_v2(&words, size_t(bytes))) return fail("allocating its context: " + d.error(r));
        if (CUresult r = d.cuMemcpyHtoD_v2(words, context, size_t(bytes))) {
            d.cuMemFree_v2(words);
            return fail("copying its context: " + d.error(r));
        }
    }
    // More than 48 KiB of dynamic shared memory needs the kernel's opt-in (compiled with
    // Target::with_shared_memory_opt_in, within the architecture's maximum).
    int64_t &opted_in = self->shared_opted_in_[size_t(kernel)];
    if (shared_bytes > opted_in) {
        if (CUresult r = d.cuFuncSetAttribute(self->functions_[size_t(kernel)], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                              int(shared_bytes))) {
            if (words) d.cuMemFree_v2(words);
            return fail("opting in to " + std::to_string(shared_bytes) + " bytes of shared memory: " + d.error(r));
        }
        opted_in = shared_bytes;
    }
    void *device = nullptr;
    int64_t no_words = 0;  // an empty context is still one word of parameter (emit_kernel)
    void *by_value_words = context_words > 0 ? static_cast<void *>(context) : static_cast<void *>(&no_words);
    void *params[] = {by_value ? by_value_words : static_cast<void *>(&words), &device};
    if (d.nvtxRangePushA) d.nvtxRangePushA(("tessera " + self->kernels_[size_t(kernel)].groups).c_str());
    CUresult r = d.cuLaunchKernel(self->functions_[size_t(kernel)], unsigned(blocks), 1, 1, unsigned(threads), 1, 1,
                                  unsigned(shared_bytes), nullptr, params, nullptr);
    if (r == 0) r = d.cuCtxSynchronize();
    if (d.nvtxRangePop) d.nvtxRangePop();
    if (words) d.cuMemFree_v2(words);
    if (r) return fail(d.error(r));
    return 0;
}

} // namespace tessera::runtime
