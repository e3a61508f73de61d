// A process-wide pool of the large buffers JIT-compiled pipelines allocate on entry and free on
// return (a Func's full region), and of the tiles' scratchpads too large for the stack, which
// each thread running a parallel loop allocates at its start and frees at its end, so that calls
// after the first find their pages mapped.
//
// glibc serves an allocation this large (over its mmap threshold, at most 32 MiB) with a fresh
// mmap and unmaps it on free, so every call faulted the buffer's pages in again and the kernel
// zeroed them: PolyBench's gemver (a 32 MB intermediate, N = 2000) took about 1,200 page faults
// per call, 4–8 ms a call where its loops need about half that. Halide allocates per call the
// same way. local_laplacian's scratchpads (512 KiB a thread and parallel loop) took 4,000 page
// faults a call from malloc, 6% of its time. Freed buffers of at least kPooledBytes (the stack's
// limit for scratchpads) wait here, keyed by their exact size (a pipeline called again with the
// same sizes asks for the same ones), up to kPoolCapacityBytes in all, least recently freed first
// out. Thread-safe; AOT objects use aligned_alloc and free.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera::runtime {

constexpr int64_t kPooledBytes = int64_t(1) << 18;          // smaller ones go to malloc
constexpr int64_t kPoolCapacityBytes = int64_t(1) << 30;    // cached, not in use

// 64-byte aligned, `bytes` a multiple of 64; null when out of memory.
void *buffer_pool_alloc(int64_t bytes);
// `bytes` as allocated.
void buffer_pool_free(void *buffer, int64_t bytes);

struct BufferPoolStats {
    uint64_t reused = 0;      // allocations served from the pool
    uint64_t allocated = 0;   // pooled-size allocations that were not
    int64_t cached_bytes = 0;  // held for reuse now
};
BufferPoolStats buffer_pool_stats();
// Frees every cached buffer.
void buffer_pool_release();

} // namespace tessera::runtime
