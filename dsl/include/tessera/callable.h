// Compiled pipelines: Pipeline::compile(target, options) returns a Callable.
//
//   Callable blur = pipeline.compile();              // host CPU, automatic schedule
//   blur.realize(out);                               // reads the InputBuffers' / Params' values
//   blur.run(Bindings().set(input, img), {out});     // explicit values: safe from many threads
//
// One compilation serves every input and output size unless CompileOptions::specialize_sizes
// asks otherwise. Inputs are checked against the region the pipeline reads before any access.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/buffer.h"
#include "tessera/ir.h"
#include "tessera/param.h"

namespace tessera {

class Pipeline;
class Realization;

// Where code runs.
//   Target::host()                 the host CPU
//   Target::cuda(80)               an NVIDIA GPU of compute capability 8.0 (sm_80): PTX kernels
//   Target::cuda(80).emulated()    the same kernels run by Tessera's GPU emulator on the host
//                                  (docs/gpu.md): blocks, threads, barriers, shared memory
//   Target::cuda(80).with_shared_memory_opt_in()
//                                  blocks may use more than 48 KiB of shared memory (163 KiB on
//                                  sm_80, 227 KiB on sm_90): bigger tiles, fewer blocks per SM
struct Target {
    enum class Arch { Host, CUDA };
    Arch arch = Arch::Host;
    std::string cpu;       // empty: the host CPU
    std::string features;  // empty: the host CPU's features
    int sm = 0;            // CUDA: the compute capability times 10
    bool emulate = false;  // CUDA: run the kernels in the emulator
    bool shared_memory_opt_in = false;  // CUDA: blocks may use the architecture's maximum shared memory
    static Target host() { return Target{}; }
    static Target cuda(int sm) {
        Target t;
        t.arch = Arch::CUDA;
        t.sm = sm;
        return t;
    }
    Target emulated() const {
        Target t = *this;
        t.emulate = true;
        return t;
    }
    Target with_shared_memory_opt_in() const {
        Target t = *this;
        t.shared_memory_opt_in = true;
        return t;
    }
};

struct CompileOptions {
    int threads = 0;                // parallel loops' threads; 0: OMP_NUM_THREADS, else every core
    bool fast_math = false;         // allow reassociation / contraction of float arithmetic
    std::string fusion = "smart";   // none | smart | max
    std::vector<int> tile_sizes;    // dimension 0 first; empty: chosen by the tile-size model
    // Smart fusion's bounds (poly/grouping.h): a producer's stages join their consumer's
    // tiles only while the tiles recompute at most `max_recompute` of their useful work (unset:
    // 0.4) and their working set fits `cache_bytes` (unset: the host's L2 cache, which the
    // tile-size model also sizes tiles against). Host targets only: a GPU tile's scratchpads
    // are bounded by its block's shared memory. tessera-tune searches both.
    std::optional<double> max_recompute;
    std::optional<int64_t> cache_bytes;
    bool parallel = true;           // parallel loops (OpenMP)
    bool vectorize = true;          // vector loops; false: no loop is vectorized, not even by LLVM
    std::vector<int> specialize_sizes;  // output extents to specialize for (all outputs); empty: any size
    bool keep_assembly = false;     // keep the optimized IR and the assembly for inspection
    // Use the persistent compile cache (docs/cache.md): machine code compiled before, by any
    // process, for the same pipeline, schedule, target, options and Tessera build is loaded
    // instead of compiled. TESSERA_CACHE=0 in the environment turns it off for the process.
    bool cache = true;
    // Threads the compiler works on: isl's ASTs of independent groups (poly/program.h,
    // AstQuota::threads) and LLVM's optimization and machine code of the module's functions
    // (codegen/parallel_compile.h); 0: TESSERA_COMPILE_THREADS, else the hardware's threads up
    // to 8. Not part of the cache key: the code is the same however many threads compile it.
    int compile_threads = 0;
    // GPU targets: rows of a tile each thread loads before it uses them (the row loop around a
    // thread loop unrolled and jammed into it, docs/gpu.md); 0: the target's choice
    // (TargetInfo::rows_in_flight), 1: none.
    int gpu_unroll_rows = 0;
    // GPU targets: a thread loop that stores to global memory, or copies an input into shared
    // memory, can start each row's warps on a 32-byte sector (docs/gpu.md, "Aligned warps"):
    //   "auto"    the target's choice ("off": on an H200, blur took 0.167 ms unaligned, 0.245
    //             with its output's rows aligned one at a time);
    //   "rows"    aligned, such loops' rows one at a time (not unrolled);
    //   "jammed"  aligned, and their rows unrolled and jammed too, each row with its own shift;
    //   "off"     not aligned; their rows unrolled and jammed like any other loop's.
    std::string gpu_align_warps = "auto";
    // GPU targets: stencil inputs copied into shared memory per tile (docs/gpu.md, "Staged
    // inputs"); false: every stage reads them from global memory, where the GPU's L1 cache
    // serves a stencil's overlapping loads (on an H200, blur took 0.167 ms unstaged and 0.200
    // at best staged).
    bool gpu_stage_inputs = false;
    // GPU targets: a fused group whose stages read each other only in their own column (blur_y
    // reading blur_x) runs as column windows (docs/gpu.md, "Column windows"): each thread walks
    // down its columns (TargetInfo::window_columns of them side by side), keeping the rows its
    // later stages still read in registers, with no shared memory and no barrier; false: the
    // stages of a tile run one after another across the block, through shared memory. On by
    // default: the traffic model moves 39% fewer sectors for blur, with no barrier, and a
    // hand-written kernel of this shape ran blur on an H200 in 0.122 ms against the shared
    // shape's 0.166 (docs/benchmarks.md); Tessera's own has not been timed on a GPU yet.
    bool gpu_column_windows = true;
};

// Time spent in each compilation phase, and the generated code when asked for.
struct CompileReport {
    std::vector<std::pair<std::string, double>> phase_ms;  // model, schedule, AST, lowering, optimization, machine code
    double total_ms = 0;
    std::string llvm_ir, assembly;  // with CompileOptions::keep_assembly
    std::string ptx;                // GPU targets, with CompileOptions::keep_assembly: the kernels' PTX
    int kernels = 0;                // GPU targets: kernels the pipeline launches (outside loops)
    // The LLVM module's instructions before optimization, and the optimization level it got
    // (2; 1 for very large modules, see codegen/cpu_target.h; 0 with TESSERA_LLVM_PIPELINE set).
    size_t llvm_instructions = 0;
    int llvm_optimization_level = 0;
    // How many parts the module was split into and compiled on threads of their own (1: not split;
    // codegen/parallel_compile.h); for a cache hit, those of the compile that stored it.
    int llvm_partitions = 1;
    // The persistent compile cache: "hit" (machine code loaded; phase_ms holds the lookup and
    // the load, and llvm_instructions / llvm_optimization_level are those of the compile that
    // stored it), "miss" (compiled, then stored), or "off: <reason>".
    std::string cache;
};

// Values for a pipeline's InputBuffers and Params, passed explicitly to Callable::run.
class Bindings {
public:
    Bindings &set(const InputBuffer<void> &input, const Buffer<void> &buffer);
    template <typename T>
    Bindings &set(const Param<T> &p, T value) {
        params_[p.contents().get()] = Param<T>::to_value(value);
        return *this;
    }
    const std::map<const InputContents *, Buffer<void>> &inputs() const { return inputs_; }
    const std::map<const ParamContents *, Value> &params() const { return params_; }

private:
    std::map<const InputContents *, Buffer<void>> inputs_;
    std::map<const ParamContents *, Value> params_;
};

// Implemented by the runtime layer.
class CallableImpl {
public:
    virtual ~CallableImpl() = default;
    // Runs with `bindings`, or with the InputBuffers' and Params' current values when null.
    virtual void run(const Bindings *bindings, const std::vector<Buffer<void>> &outputs) const = 0;
    virtual const CompileReport &report() const = 0;
    virtual const Pipeline &pipeline() const = 0;
    virtual std::string compiler_ir(const std::string &stage) const = 0;
    virtual void write_report(const std::string &path) const = 0;
};

// The stages Callable::compiler_ir returns, in the order the compiler produces them:
//   pipeline          the DSL as text (pipeline_text.h)
//   model             isl's view: every statement's domain, write and reads; every array's region
//   dependences       flow, anti and output dependences between statement instances (isl maps)
//   schedule          the schedule as JSON (docs/schedule-json.md)
//   loop_nest         C-like pseudocode of the loop nest from isl's AST, with its marks
//   llvm_unoptimized  the LLVM IR as generated         } kept when compiled with
//   llvm              the LLVM IR after optimization  } CompileOptions::keep_assembly or
//   asm / ptx         host assembly / the kernels' PTX } TESSERA_DUMP set
inline const std::vector<std::string> &compiler_ir_stages() {
    static const std::vector<std::string> stages{"pipeline", "model", "dependences", "schedule", "loop_nest",
                                                 "llvm_unoptimized", "llvm", "asm", "ptx"};
    return stages;
}

class Callable {
public:
    Callable() = default;
    explicit Callable(std::shared_ptr<const CallableImpl> impl) : impl_(std::move(impl)) {}
    bool defined() const { return impl_ != nullptr; }

    // Computes the outputs into the given buffers, reading the InputBuffers' and Params' current
    // values. Do not call set() on them concurrently.
    void realize(const std::vector<Buffer<void>> &outputs) const;
    void realize(const Buffer<void> &output) const { realize(std::vector<Buffer<void>>{output}); }
    Realization realize(const std::vector<int> &sizes) const;
    Realization realize(std::initializer_list<int> sizes) const;
    // Computes the outputs with explicit values; safe to call from many threads at once.
    void run(const Bindings &bindings, const std::vector<Buffer<void>> &outputs) const;
    const CompileReport &report() const;
    // One stage of compiling this pipeline as text (compiler_ir_stages()). A stage the compile
    // did not keep (the LLVM IR and assembly without keep_assembly, ptx on the host) is a
    // UserError saying how to get it. The model, dependences, schedule and loop nest of a
    // Callable loaded from the compile cache are computed again on first request: the same
    // schedule, since the cache key holds everything the scheduler reads.
    std::string compiler_ir(const std::string &stage) const;
    // Writes a self-contained HTML page (docs/cache.md, "Report"): the Func graph with its fusion
    // groups, each group's tiles and scratchpads, the loop nest, compile time by phase, and the
    // cache status.
    void write_report(const std::string &path) const;

private:
    void check() const;
    std::shared_ptr<const CallableImpl> impl_;
};

namespace detail {
using CompileHook = std::shared_ptr<const CallableImpl> (*)(const Pipeline &, const Target &, const CompileOptions &);
void set_compile_hook(CompileHook hook);
CompileHook compile_hook();
} // namespace detail

} // namespace tessera
