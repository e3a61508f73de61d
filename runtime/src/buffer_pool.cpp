#include "tessera/runtime/buffer_pool.h"

#include <cstdlib>
#include <list>
#include <mutex>

namespace tessera::runtime {
namespace {

struct Cached {
    void *buffer;
    int64_t bytes;
};

struct Pool {
    std::mutex mutex;
    std::list<Cached> free_buffers;  // most recently freed first
    BufferPoolStats stats;

    void release() {
        std::lock_guard<std::mutex> lock(mutex);
        for (const Cached &c : free_buffers) std::free(c.buffer);
        free_buffers.clear();
        stats.cached_bytes = 0;
    }
};

// Never destroyed: a buffer may come back after static destructors have run (a torch tensor
// made by pooled_output and freed by another library's static destructor, an OpenMP thread's
// scratchpad at exit), and the pool's mutex must still be there to take it.
Pool &pool() {
    static Pool *p = new Pool;
    return *p;
}

} // namespace

void *buffer_pool_alloc(int64_t bytes) {
    if (bytes >= kPooledBytes) {
        Pool &p = pool();
        std::lock_guard<std::mutex> lock(p.mutex);
        for (auto it = p.free_buffers.begin(); it != p.free_buffers.end(); ++it)
            if (it->bytes == bytes) {
                void *buffer = it->buffer;
                p.free_buffers.erase(it);
                p.stats.cached_bytes -= bytes;
                ++p.stats.reused;
                return buffer;
            }
        ++p.stats.allocated;
    }
    return std::aligned_alloc(64, size_t(bytes));
}

void buffer_pool_free(void *buffer, int64_t bytes) {
    if (!buffer) return;
    if (bytes < kPooledBytes || bytes > kPoolCapacityBytes) {
        std::free(buffer);
        return;
    }
    Pool &p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    p.free_buffers.push_front({buffer, bytes});
    p.stats.cached_bytes += bytes;
    // Over capacity, the least recently freed buffers go back to the system.
    while (p.stats.cached_bytes > kPoolCapacityBytes) {
        const Cached &oldest = p.free_buffers.back();
        std::free(oldest.buffer);
        p.stats.cached_bytes -= oldest.bytes;
        p.free_buffers.pop_back();
    }
}

BufferPoolStats buffer_pool_stats() {
    Pool &p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    return p.stats;
}

void buffer_pool_release() { pool().release(); }

} // namespace tessera::runtime
