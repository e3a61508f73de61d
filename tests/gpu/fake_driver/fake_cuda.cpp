// A stand-in for the NVIDIA driver library (libcuda.so.1) for tests on machines without a GPU:
// it implements the driver API calls Tessera's CUDA runtime makes, with host memory for device
// memory, and records them. It cannot run PTX: a launch only checks its arguments and records
// them. The tests read the record through fakeCudaRecord().
#include "fake_cuda.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

struct Record {
    int modules_loaded = 0, functions = 0, launches = 0, shared_opt_ins = 0;
    long long allocations = 0, frees = 0, bytes_to_device = 0, bytes_to_host = 0;
    unsigned last_grid = 0, last_block = 0, last_shared = 0;
    long long last_context_words = 0;
    int last_context_by_value = 0;
    std::string ptx, last_function;
};
Record g_record;
std::map<uintptr_t, size_t> g_allocations;
std::map<uintptr_t, std::string> g_functions;
std::map<uintptr_t, long long> g_context_parameter_bytes;  // per function: its first parameter's bytes when by value
std::map<uintptr_t, int> g_max_dynamic_shared;  // per function, by cuFuncSetAttribute
std::vector<std::unique_ptr<char>> g_function_handles;  // what CUfunction handles point at

} // namespace

extern "C" {

FakeCudaRecord fakeCudaRecord() {
    return FakeCudaRecord{g_record.modules_loaded, g_record.functions, g_record.launches, g_record.shared_opt_ins, g_record.allocations, g_record.frees,
                          (long long)g_allocations.size(), g_record.bytes_to_device, g_record.bytes_to_host, g_record.last_grid,
                          g_record.last_block, g_record.last_shared, g_record.last_context_words, g_record.last_context_by_value,
                          g_record.last_function.c_str()};
}

int cuInit(unsigned) { return 0; }
int cuDeviceGetCount(int *n) {
    *n = 1;
    return 0;
}
int cuDeviceGet(int *d, int) {
    *d = 0;
    return 0;
}
// An sm_80 device (CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75, _MINOR 76).
int cuDeviceGetAttribute(int *value, int attribute, int) {
    if (attribute == 75) *value = 8;
    else if (attribute == 76) *value = 0;
    else return 1;
    return 0;
}
int cuDevicePrimaryCtxRetain(void **ctx, int) {
    static int context;
    *ctx = &context;
    return 0;
}
int cuCtxSetCurrent(void *) { return 0; }
int cuCtxSynchronize() { return 0; }

int cuModuleLoadDataEx(void **module, const void *image, unsigned n, int *options, void **values) {
    std::string ptx = static_cast<const char *>(image);
    if (std::getenv("FAKE_CUDA_REJECT_PTX")) {
        for (unsigned i = 0; i < n; ++i)
            if (options[i] == 5 /* CU_JIT_ERROR_LOG_BUFFER */) std::strcpy(static_cast<char *>(values[i]), "ptxas fatal : fake rejection");
        return 218;  // CUDA_ERROR_INVALID_PTX
    }
    if (ptx.find(".entry") == std::string::npos || ptx.find(".target sm_") == std::string::npos) return 218;
    g_record.ptx = ptx;
    ++g_record.modules_loaded;
    static int m;
    *module = &m;
    return 0;
}
int cuModuleUnload(void *) { return 0; }
int cuModuleGetFunction(void **f, void *, const char *name) {
    if (g_record.ptx.find(std::string(".entry ") + name + "(") == std::string::npos) return 500;  // CUDA_ERROR_NOT_FOUND
    ++g_record.functions;
    g_function_handles.push_back(std::make_unique<char>());
    char *handle = g_function_handles.back().get();
    g_functions[uintptr_t(handle)] = name;
    // The first parameter: `.param .u64 <name>_param_0` (a pointer) or `.param .align 8 .b8
    // <name>_param_0[<bytes>]` (the context by value).
    std::string first = std::string(name) + "_param_0[";
    size_t at = g_record.ptx.find(first);
    g_context_parameter_bytes[uintptr_t(handle)] = at == std::string::npos ? 0 : std::atoll(g_record.ptx.c_str() + at + first.size());
    *f = handle;
    return 0;
}

// Only the attribute Tessera sets: CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (8), up to
// an sm_90's 227 KiB.
int cuFuncSetAttribute(void *f, int attribute, int value) {
    if (!g_functions.count(uintptr_t(f)) || attribute != 8 || value < 0 || value > 227 * 1024) return 1;
    g_max_dynamic_shared[uintptr_t(f)] = value;
    ++g_record.shared_opt_ins;
    return 0;
}
int cuMemAlloc_v2(unsigned long long *p, size_t bytes) {
    void *m = std::malloc(bytes);
    if (!m) return 2;  // CUDA_ERROR_OUT_OF_MEMORY
    g_allocations[uintptr_t(m)] = bytes;
    ++g_record.allocations;
    *p = (unsigned long long)uintptr_t(m);
    return 0;
}
int cuMemFree_v2(unsigned long long p) {
    auto it = g_allocations.find(uintptr_t(p));
    if (it == g_allocations.end()) return 1;  // CUDA_ERROR_INVALID_VALUE: not an allocation
    g_allocations.erase(it);
    std::free(reinterpret_cast<void *>(uintptr_t(p)));
    ++g_record.frees;
    return 0;
}
// A copy must stay inside one allocation.
static bool inside(unsigned long long p, size_t bytes) {
    auto it = g_allocations.upper_bound(uintptr_t(p));
    if (it == g_allocations.begin()) return false;
    --it;
    return uintptr_t(p) >= it->first && uintptr_t(p) + bytes <= it->first + it->second;
}
int cuMemcpyHtoD_v2(unsigned long long dst, const void *src, size_t bytes) {
    if (!inside(dst, bytes)) return 1;
    std::memcpy(reinterpret_cast<void *>(uintptr_t(dst)), src, bytes);
    g_record.bytes_to_device += (long long)bytes;
    return 0;
}
int cuMemcpyDtoH_v2(void *dst, unsigned long long src, size_t bytes) {
    if (!inside(src, bytes)) return 1;
    std::memcpy(dst, reinterpret_cast<void *>(uintptr_t(src)), bytes);
    g_record.bytes_to_host += (long long)bytes;
    return 0;
}
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shared, void *,
                   void **params, void **) {
    auto it = g_functions.find(uintptr_t(f));
    if (it == g_functions.end() || gx == 0 || gy != 1 || gz != 1 || bx == 0 || bx > 1024 || by != 1 || bz != 1) return 1;
    // Beyond 48 KiB a kernel must have opted in (CUDA_ERROR_INVALID_VALUE otherwise).
    auto opt_in = g_max_dynamic_shared.find(uintptr_t(f));
    if (shared > 48 * 1024 && (opt_in == g_max_dynamic_shared.end() || shared > unsigned(opt_in->second))) return 1;
    // The first parameter is the kernel's context array by value (its words read here, as the
    // driver copies them), or the device address of the array.
    long long by_value = g_context_parameter_bytes[uintptr_t(f)];
    long long words = 0;
    if (by_value > 0) {
        std::vector<char> copy(static_cast<size_t>(by_value));
        std::memcpy(copy.data(), params[0], copy.size());
        words = by_value / 8;
    } else {
        unsigned long long context = *static_cast<unsigned long long *>(params[0]);
        auto a = g_allocations.find(uintptr_t(context));
        if (a == g_allocations.end()) return 1;
        words = (long long)(a->second / 8);
    }
    ++g_record.launches;
    g_record.last_context_by_value = by_value > 0;
    g_record.last_grid = gx;
    g_record.last_block = bx;
    g_record.last_shared = shared;
    g_record.last_context_words = words;
    g_record.last_function = it->second;
    return 0;
}
int cuGetErrorString(int r, const char **s) {
    *s = r == 218 ? "a PTX JIT compilation failed" : "fake CUDA error";
    return 0;
}

} // extern "C"
