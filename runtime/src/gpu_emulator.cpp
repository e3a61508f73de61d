#include "tessera/runtime/gpu_emulator.h"

#include <ucontext.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <tuple>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include <tessera/error.h>

// AddressSanitizer follows stack switches only when told (its fiber interface).
#if defined(__SANITIZE_ADDRESS__)
#define TESSERA_ASAN_FIBERS 1
extern "C" {
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old, size_t *size_old);
}
#else
#define TESSERA_ASAN_FIBERS 0
#endif

namespace tessera::runtime {

namespace {

// Each emulated thread's stack: kernels are leaf code (no recursion, scratchpads in shared
// memory), the emulator's callbacks included.
constexpr size_t kStackBytes = 64 * 1024;
constexpr int kWarp = 32;
constexpr int64_t kSector = 32;
constexpr int kBanks = 32;

thread_local std::string g_error;
// Global memory a kernel may touch, by start address: the call's buffers and the program's
// allocations. Checked only while a call has registered its buffers (`g_checking`).
thread_local std::map<uintptr_t, uintptr_t> g_global;  // begin -> end
thread_local int g_checking = 0;

bool in_global(uintptr_t a, uintptr_t bytes) {
    auto it = g_global.upper_bound(a);
    if (it == g_global.begin()) return false;
    --it;
    return a >= it->first && a + bytes <= it->second;
}
thread_local bool g_profiling = false;
thread_local std::map<int, GpuKernelProfile> g_profiles;

struct Fiber {
    ucontext_t context;
    char *stack = nullptr;
    tessera_gpu_thread_t thread;
    bool done = false;
    // Where the thread is, for the warp model: thread loops entered so far, the iteration of
    // the current one (-1 before its first), and each access site's executions since.
    uint64_t loops = 0;
    int64_t iteration = -1;
    std::unordered_map<int32_t, uint64_t> occurrences;
};

// One access of one thread, for the warp-wide model.
struct Record {
    int32_t site;
    uint64_t loop;
    int64_t iteration;
    uint64_t occurrence;
    int32_t warp;
    uint64_t address;
    int32_t bytes;
};

// The block being run on this host thread.
struct Block {
    ucontext_t scheduler;
    std::vector<Fiber> fibers;
    Fiber *current = nullptr;
    void (*kernel)(int64_t *, void *) = nullptr;
    int64_t *context = nullptr;
    unsigned char *shared = nullptr;
    int64_t shared_bytes = 0;
    std::string error;
    GpuKernelProfile *profile = nullptr;
    std::vector<Record> records;  // this phase's
    std::unordered_set<uint64_t> load_sectors, store_sectors;  // this block's
    // The scheduler's stack, for AddressSanitizer's fiber interface.
    const void *scheduler_stack = nullptr;
    size_t scheduler_stack_size = 0;
};

thread_local Block *g_block = nullptr;

// From fiber `f` back to the scheduler; `dying`: f never resumes.
void to_scheduler(Fiber &f, bool dying) {
    Block &b = *g_block;
#if TESSERA_ASAN_FIBERS
    void *fake = nullptr;
    __sanitizer_start_switch_fiber(dying ? nullptr : &fake, b.scheduler_stack, b.scheduler_stack_size);
    if (dying) return;  // (fiber_main returns into uc_link)
    swapcontext(&f.context, &b.scheduler);
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
    if (!dying) swapcontext(&f.context, &b.scheduler);
#endif
}

// From the scheduler into fiber `f`.
void to_fiber(Fiber &f) {
    Block &b = *g_block;
    b.current = &f;
#if TESSERA_ASAN_FIBERS
    void *fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, f.stack, kStackBytes);
    swapcontext(&b.scheduler, &f.context);
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
    swapcontext(&b.scheduler, &f.context);
#endif
}

void fiber_barrier(tessera_gpu_thread_t *t) { to_scheduler(g_block->fibers[size_t(t->thread)], false); }

void fiber_access(tessera_gpu_thread_t *t, const void *address, int32_t bytes, int32_t site) {
    Block &b = *g_block;
    Fiber &f = b.fibers[size_t(t->thread)];
    bool shared = site & 2, store = site & 1;
    auto a = reinterpret_cast<uintptr_t>(address);
    // (Bits 24-28 of `bytes`: the log2 of an alignment the access claims beyond its size.)
    if (uintptr_t align = uintptr_t(1) << ((bytes >> 24) & 31); bytes >> 24 && (a & (align - 1)) != 0) {
        b.error = detail::str_cat("thread ", t->thread, " of block ", t->block, " ", store ? "writes" : "reads", " ", bytes & 0xffffff,
                                  " bytes at an address that is not ", align, "-byte aligned, as the access claims");
        to_scheduler(f, false);
    }
    bytes &= 0xffffff;
    if (shared && (a < reinterpret_cast<uintptr_t>(b.shared) || a + uintptr_t(bytes) > reinterpret_cast<uintptr_t>(b.shared) + uintptr_t(b.shared_bytes))) {
        b.error = detail::str_cat("thread ", t->thread, " of block ", t->block, " ", store ? "writes" : "reads", " shared memory at byte ",
                                  int64_t(a - reinterpret_cast<uintptr_t>(b.shared)), ", outside the block's ", b.shared_bytes, " bytes");
        // The access is not made: this thread stops here, and the launch fails.
        to_scheduler(f, false);
    }
    if (!shared && g_checking && !in_global(a, uintptr_t(bytes))) {
        b.error = detail::str_cat("thread ", t->thread, " of block ", t->block, " ", store ? "writes" : "reads", " ", bytes,
                                  " bytes of global memory outside every buffer of the pipeline");
        to_scheduler(f, false);
    }
    if (!b.profile) return;
    uint64_t k = f.occurrences[site]++;
    b.records.push_back(Record{site, f.loops, f.iteration, k, t->thread / kWarp, a, bytes});
    if (!shared)
        for (uint64_t s = a / kSector; s <= (a + uint64_t(bytes) - 1) / kSector; ++s) (store ? b.store_sectors : b.load_sectors).insert(s);
}

// The threads of a warp run one iteration of a thread loop together.
void fiber_step(tessera_gpu_thread_t *t, int64_t iteration) {
    Fiber &f = g_block->fibers[size_t(t->thread)];
    if (iteration < 0) ++f.loops;
    f.iteration = iteration;
    f.occurrences.clear();
}

void fiber_main() {
#if TESSERA_ASAN_FIBERS
    __sanitizer_finish_switch_fiber(nullptr, &g_block->scheduler_stack, &g_block->scheduler_stack_size);
#endif
    Fiber *f = g_block->current;
    g_block->kernel(g_block->context, &f->thread);
    f->done = true;
    to_scheduler(*f, true);  // then back to the scheduler (uc_link)
}

// A fiber that starts at fiber_main on `stack` and returns to `scheduler`. (Apart from the
// launch: getcontext returns twice, which would clobber the launch's locals.)
[[gnu::noinline]] void start_fiber(Fiber &f, char *stack, ucontext_t *scheduler) {
    f.stack = stack;
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = stack;
    f.context.uc_stack.ss_size = kStackBytes;
    f.context.uc_link = scheduler;
    makecontext(&f.context, fiber_main, 0);
}

// The warp-wide accesses of one phase (between barriers) into the profile.
void account_phase(Block &b) {
    GpuKernelProfile &p = *b.profile;
    std::sort(b.records.begin(), b.records.end(), [](const Record &x, const Record &y) {
        return std::tie(x.site, x.loop, x.iteration, x.occurrence, x.warp, x.address) <
               std::tie(y.site, y.loop, y.iteration, y.occurrence, y.warp, y.address);
    });
    std::vector<uint64_t> units;
    for (size_t i = 0; i < b.records.size();) {
        size_t j = i;
        while (j < b.records.size() && b.records[j].site == b.records[i].site && b.records[j].loop == b.records[i].loop &&
               b.records[j].iteration == b.records[i].iteration && b.records[j].occurrence == b.records[i].occurrence &&
               b.records[j].warp == b.records[i].warp)
            ++j;
        bool shared = b.records[i].site & 2;
        units.clear();
        for (size_t k = i; k < j; ++k) {
            const Record &r = b.records[k];
            uint64_t unit = shared ? 4 : uint64_t(kSector);
            for (uint64_t u = r.address / unit; u <= (r.address + uint64_t(r.bytes) - 1) / unit; ++u) units.push_back(u);
            if (!shared) p.requested_bytes += r.bytes;
        }
        std::sort(units.begin(), units.end());
        units.erase(std::unique(units.begin(), units.end()), units.end());
        if (shared) {
            // Distinct words per bank: the passes the access needs.
            int per_bank[kBanks] = {};
            int passes = 1;
            for (uint64_t w : units) passes = std::max(passes, ++per_bank[w % kBanks]);
            p.shared_accesses += 1;
            p.bank_conflicts += passes - 1;
        } else {
            p.transferred_bytes += int64_t(units.size()) * kSector;
        }
        i = j;
    }
    b.records.clear();
}

int32_t fail(const std::string &message) {
    g_error = message;
    return TESSERA_ERROR_GPU;
}

int32_t emulate(void *, int32_t kernel, void (*fn)(int64_t *, void *), int64_t blocks, int32_t threads, int64_t shared_bytes,
                int64_t *context, int64_t) {
    if (threads < 1 || threads > 1024)
        return fail(detail::str_cat("GPU kernel ", kernel, " was launched with ", threads, " threads per block (1 to 1024)."));
    shared_bytes = std::max<int64_t>(shared_bytes, 0);
    std::vector<unsigned char> shared(size_t(shared_bytes) + 64);
    unsigned char *shared_base = shared.data() + (64 - reinterpret_cast<uintptr_t>(shared.data()) % 64) % 64;
    static thread_local std::unique_ptr<char[]> stacks;
    static thread_local int32_t stack_count = 0;
    if (stack_count < threads) {
        stacks.reset(new char[size_t(threads) * kStackBytes]);
        stack_count = threads;
    }
    Block block;
    block.kernel = fn;
    block.context = context;
    block.shared = shared_base;
    block.shared_bytes = shared_bytes;
    block.fibers.resize(size_t(threads));
    if (g_profiling) {
        GpuKernelProfile &p = g_profiles[kernel];
        p.kernel = kernel;
        p.launches += 1;
        p.blocks += blocks;
        p.threads_per_block = threads;
        p.shared_bytes = shared_bytes;
        block.profile = &p;
    }
    Block *saved = g_block;
    g_block = &block;
    for (int64_t b = 0; b < blocks && block.error.empty(); ++b) {
        std::memset(shared_base, 0xFF, size_t(shared_bytes));  // poison: NaN floats, -1 integers
        for (int32_t t = 0; t < threads; ++t) {
            Fiber &f = block.fibers[size_t(t)];
            f.done = false;
            f.loops = 0;
            f.iteration = -1;
            f.occurrences.clear();
            f.thread = {t, threads, b, shared_base, fiber_barrier, fiber_access, fiber_step};
            start_fiber(f, stacks.get() + size_t(t) * kStackBytes, &block.scheduler);
        }
        // Phase by phase: every live thread runs to its next barrier or its end.
        for (long phase = 0;; ++phase) {
            bool live = false;
            for (Fiber &f : block.fibers) {
                if (f.done) continue;
                to_fiber(f);
                if (!block.error.empty()) break;
                live = live || !f.done;
            }
            if (!block.error.empty()) break;
            if (block.profile) account_phase(block);
            if (!live) break;
            if (block.profile) block.profile->barriers += 1;
            for (const Fiber &f : block.fibers)
                if (f.done) {
                    block.error = detail::str_cat("block ", b, ": thread ", f.thread.thread, " ended while other threads of its block wait at barrier ",
                                                  phase + 1, " (a barrier that not every thread reaches)");
                    break;
                }
            if (!block.error.empty()) break;  // the waiting fibers are abandoned with their stacks
        }
        if (block.profile) {
            block.profile->global_load_bytes += int64_t(block.load_sectors.size()) * kSector;
            block.profile->global_store_bytes += int64_t(block.store_sectors.size()) * kSector;
            block.load_sectors.clear();
            block.store_sectors.clear();
        }
    }
    g_block = saved;
    if (!block.error.empty()) return fail(detail::str_cat("GPU kernel ", kernel, " (emulated): ", block.error, "."));
    return 0;
}

// The emulator's global memory is the host's; what the program allocates is registered for the
// bounds checks.
void *host_alloc(void *, int64_t bytes) {
    void *p = std::aligned_alloc(64, size_t((std::max<int64_t>(bytes, 1) + 63) / 64 * 64));
    if (p) g_global[reinterpret_cast<uintptr_t>(p)] = reinterpret_cast<uintptr_t>(p) + uintptr_t(std::max<int64_t>(bytes, 0));
    return p;
}
void host_release(void *, void *memory) {
    g_global.erase(reinterpret_cast<uintptr_t>(memory));
    std::free(memory);
}

tessera_gpu_runtime_t g_emulator{emulate, host_alloc, host_release, nullptr};

} // namespace

tessera_gpu_runtime_t *emulator_runtime() { return &g_emulator; }

std::string take_gpu_error() {
    std::string e = g_error;
    g_error.clear();
    return e.empty() ? "a GPU kernel launch failed" : e;
}

void set_gpu_error(const std::string &message) { g_error = message; }

EmulatedBuffers::EmulatedBuffers(const std::vector<std::pair<const void *, int64_t>> &spans) {
    for (const auto &[begin, bytes] : spans) {
        auto b = reinterpret_cast<uintptr_t>(begin);
        uintptr_t &end = g_global[b];
        end = std::max(end, b + uintptr_t(std::max<int64_t>(bytes, 0)));
    }
    ++g_checking;
}

EmulatedBuffers::~EmulatedBuffers() {
    // (The call's allocations are released by the program itself.)
    if (--g_checking == 0) g_global.clear();
}

void set_emulator_profiling(bool on) { g_profiling = on; }

std::vector<GpuKernelProfile> take_emulator_profile() {
    std::vector<GpuKernelProfile> r;
    for (auto &[k, p] : g_profiles) r.push_back(p);
    g_profiles.clear();
    return r;
}

} // namespace tessera::runtime
