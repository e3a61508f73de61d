#include "tessera/target_info.h"

#include "tessera/error.h"

namespace tessera {

namespace {
// The most dynamic shared memory a block of compute capability `sm` may opt in to.
int64_t opt_in_shared_bytes(int sm) {
    int major = sm / 10;
    if (major >= 12) return 99 * 1024;
    if (major >= 9) return 227 * 1024;
    if (sm == 86 || sm == 89) return 99 * 1024;
    if (major == 8) return 163 * 1024;
    if (sm == 75) return 64 * 1024;
    if (major == 7) return 96 * 1024;
    return 48 * 1024;
}
} // namespace

TargetInfo TargetInfo::nvidia_gpu(int sm, bool shared_memory_opt_in) {
    if (sm < 50) user_error("TargetInfo::nvidia_gpu: compute capability sm_", sm, " is not supported; use sm_50 or newer.");
    TargetInfo t;
    t.kind = Kind::NvidiaGPU;
    t.name = "sm_" + std::to_string(sm);
    t.vector_bits = 32;  // one 32-bit register per thread
    t.warp_size = 32;
    t.max_threads_per_block = 1024;
    t.rows_in_flight = 4;
    t.window_columns = 2;
    t.max_shared_bytes_per_block = opt_in_shared_bytes(sm);
    if (shared_memory_opt_in && sm < 70)
        user_error("Target::cuda(", sm, ").with_shared_memory_opt_in(): sm_", sm, " blocks have no shared memory beyond the "
                   "default 48 KiB to opt in to (sm_70 and newer do). Leave the opt-in out.");
    t.shared_bytes_per_block = shared_memory_opt_in ? t.max_shared_bytes_per_block : 48 * 1024;
    t.l1_bytes = 0;
    t.l2_bytes = 0;
    t.prefetch_bytes = 0;
    return t;
}

TargetInfo TargetInfo::amd_gpu(const std::string &gfx) {
    if (gfx.rfind("gfx", 0) != 0) user_error("TargetInfo::amd_gpu: '", gfx, "' is not an AMD GPU architecture such as gfx90a.");
    TargetInfo t;
    t.kind = Kind::AmdGPU;
    t.name = gfx;
    t.vector_bits = 32;
    t.warp_size = 64;
    t.max_threads_per_block = 1024;
    t.shared_bytes_per_block = 64 * 1024;
    t.max_shared_bytes_per_block = 64 * 1024;
    t.l1_bytes = 0;
    t.l2_bytes = 0;
    t.prefetch_bytes = 0;
    return t;
}

} // namespace tessera
