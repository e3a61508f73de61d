#include "tessera/runtime/gpu_emulator.h"

#include <ucontext.h>

#include <cstring>
#include <memory>
#include <vector>

#include <tessera/error.h>

namespace tessera::runtime {

namespace {

// Each emulated thread's stack: kernels are leaf code (no recursion, scratchpads in shared
// memory), the barrier's frame included.
constexpr size_t kStackBytes = 64 * 1024;

thread_local std::string g_error;

struct Fiber {
    ucontext_t context;
    tessera_gpu_thread_t thread;
    bool done = false;
    long barriers = 0;
};

// The block being run on this host thread.
struct Block {
    ucontext_t scheduler;
    std::vector<Fiber> fibers;
    Fiber *current = nullptr;
    void (*kernel)(int64_t *, void *) = nullptr;
    int64_t *context = nullptr;
};

thread_local Block *g_block = nullptr;

void fiber_barrier(tessera_gpu_thread_t *t) {
    Fiber &f = g_block->fibers[size_t(t->thread)];
    ++f.barriers;
    swapcontext(&f.context, &g_block->scheduler);
}

void no_barrier(tessera_gpu_thread_t *) {}  // one thread per block: nothing to wait for

void fiber_main() {
    Fiber *f = g_block->current;
    g_block->kernel(g_block->context, &f->thread);
    f->done = true;  // then back to the scheduler (uc_link)
}

// A fiber that starts at fiber_main on `stack` and returns to `scheduler`. (Apart from the
// launch: getcontext returns twice, which would clobber the launch's locals.)
[[gnu::noinline]] void start_fiber(Fiber &f, char *stack, ucontext_t *scheduler) {
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = stack;
    f.context.uc_stack.ss_size = kStackBytes;
    f.context.uc_link = scheduler;
    makecontext(&f.context, fiber_main, 0);
}

int32_t fail(const std::string &message) {
    g_error = message;
    return TESSERA_ERROR_GPU;
}

int32_t emulate(void *, int32_t kernel, void (*fn)(int64_t *, void *), int64_t blocks, int32_t threads, int64_t shared_bytes,
                int64_t *context) {
    if (threads < 1 || threads > 1024)
        return fail(detail::str_cat("GPU kernel ", kernel, " was launched with ", threads, " threads per block (1 to 1024)."));
    std::vector<unsigned char> shared(size_t(std::max<int64_t>(shared_bytes, 0)) + 64);
    unsigned char *shared_base = shared.data() + (64 - reinterpret_cast<uintptr_t>(shared.data()) % 64) % 64;
    if (threads == 1) {
        Fiber f;
        f.thread = {0, 1, 0, shared_base, no_barrier};
        for (int64_t b = 0; b < blocks; ++b) {
            std::memset(shared_base, 0xFF, size_t(std::max<int64_t>(shared_bytes, 0)));
            f.thread.block = b;
            fn(context, &f.thread);
        }
        return 0;
    }
    static thread_local std::unique_ptr<char[]> stacks;
    static thread_local int32_t stack_count = 0;
    if (stack_count < threads) {
        stacks.reset(new char[size_t(threads) * kStackBytes]);
        stack_count = threads;
    }
    Block block;
    block.kernel = fn;
    block.context = context;
    block.fibers.resize(size_t(threads));
    Block *saved = g_block;
    g_block = &block;
    int32_t rc = 0;
    for (int64_t b = 0; b < blocks && rc == 0; ++b) {
        std::memset(shared_base, 0xFF, size_t(std::max<int64_t>(shared_bytes, 0)));
        for (int32_t t = 0; t < threads; ++t) {
            Fiber &f = block.fibers[size_t(t)];
            f.done = false;
            f.barriers = 0;
            f.thread = {t, threads, b, shared_base, fiber_barrier};
            start_fiber(f, stacks.get() + size_t(t) * kStackBytes, &block.scheduler);
        }
        // Phase by phase: every live thread runs to its next barrier or its end.
        for (long phase = 0;; ++phase) {
            bool live = false;
            for (Fiber &f : block.fibers) {
                if (f.done) continue;
                block.current = &f;
                swapcontext(&block.scheduler, &f.context);
                live = live || !f.done;
            }
            if (!live) break;
            for (const Fiber &f : block.fibers)
                if (f.done) {
                    rc = fail(detail::str_cat("GPU kernel ", kernel, ", block ", b, ": thread ", f.thread.thread,
                                              " ended while other threads of its block wait at barrier ", phase + 1,
                                              " (a barrier that not every thread reaches)."));
                    break;
                }
            if (rc) break;  // the waiting fibers are abandoned with their stacks
        }
    }
    g_block = saved;
    return rc;
}

int32_t no_device(void *, int32_t, void (*)(int64_t *, void *), int64_t, int32_t, int64_t, int64_t *) {
    return fail("This pipeline was compiled for a CUDA GPU, and this build of Tessera cannot run kernels on a GPU yet "
                "(the CUDA driver runtime is not built). Compile with Target::cuda(sm).emulated() to run the same kernels "
                "in the GPU emulator; the PTX is in the compile report (CompileOptions::keep_assembly).");
}

tessera_gpu_runtime_t g_emulator{emulate, nullptr};
tessera_gpu_runtime_t g_no_device{no_device, nullptr};

} // namespace

tessera_gpu_runtime_t *emulator_runtime() { return &g_emulator; }
tessera_gpu_runtime_t *no_device_runtime() { return &g_no_device; }

std::string take_gpu_error() {
    std::string e = g_error;
    g_error.clear();
    return e.empty() ? "a GPU kernel launch failed" : e;
}

} // namespace tessera::runtime
