#include "tessera/target_info.h"

#include "tessera/error.h"

namespace tessera {

TargetInfo TargetInfo::nvidia_gpu(int sm) {
    if (sm < 50) user_error("TargetInfo::nvidia_gpu: compute capability sm_", sm, " is not supported; use sm_50 or newer.");
    TargetInfo t;
    t.kind = Kind::NvidiaGPU;
    t.name = "sm_" + std::to_string(sm);
    t.vector_bits = 32;  // one 32-bit register per thread
    t.warp_size = 32;
    t.max_threads_per_block = 1024;
    t.shared_bytes_per_block = 48 * 1024;
    t.max_shared_bytes_per_block = sm >= 90 ? 227 * 1024 : sm >= 80 ? 163 * 1024 : sm >= 70 ? 96 * 1024 : 48 * 1024;
    t.l1_bytes = 0;
    t.l2_bytes = 0;
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
    return t;
}

} // namespace tessera
