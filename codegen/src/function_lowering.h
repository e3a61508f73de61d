// Private to codegen: the state of lowering one program into one LLVM function (and the
// functions outlined from it for parallel loops).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "tessera/codegen/arguments.h"
#include "tessera/codegen/llvm_lowering.h"
#include "tessera/poly/marks.h"

namespace tessera::codegen {

// The overlapped groups with statements below `n`, skipping those under a parallel loop when
// `outside_parallel`: whose scratchpads a function (or an outlined parallel body) allocates.
std::set<int> groups_below(const poly::Program &p, const poly::LoopNodePtr &n, bool outside_parallel);

int lanes_of(llvm::Value *v);
// Whether the operands of `op` inside a coordinate keep FunctionLowering::index_mode.
bool on_index_spine(Op op);
llvm::Type *shaped(llvm::Type *element, llvm::Value *like);

// The statement instances of a loop's body, appended to `calls`: Calls, Blocks of them and
// Marks around them; false when the body holds loops or conditionals.
bool body_calls(const poly::LoopNodePtr &n, std::vector<const poly::LoopNode *> &calls);

// The loop directly inside a parallel loop marked to collapse two loops, when the two can run
// as one iteration space: both step by 1, and the inner loop's bounds do not depend on the
// outer one (isl's tiles of a rectangular band). Null otherwise: the outer loop then runs alone.
const poly::LoopNode *collapsible_inner(const poly::LoopNode &n);

// Whether a loop-nest Mark node is a GPU kernel's ("kernel", "kernel:<n>").
bool is_kernel_mark(const poly::LoopNode &n);

// Where one scratchpad of an overlapped group lives: its element strides (Halide order), its
// bytes, and its offset among the scratchpads allocated together (64-byte aligned).
struct ScratchLayout {
    size_t storage;
    std::vector<int64_t> strides;
    int64_t bytes;
    int64_t offset;
};

// DSL variable name → its LLVM value (i32 coordinates, typed scalars).
struct Scope {
    std::map<std::string, llvm::Value *> vars;
};

class FunctionLowering;

// The values a body outlined into a function of its own (a parallel loop's, a GPU kernel's)
// reads from its parent, in a fixed order: the scope's variables, then the base, mins and
// strides of every storage and input view, then `extra`. They travel as one array of 64-bit
// words (the context).
struct OutlinedValues {
    std::vector<std::string> names;  // the scope's variables, first in `values`
    std::vector<llvm::Value *> values;
    std::vector<llvm::Value *> loaded;  // each value as load_context loaded it, once it has
};
OutlinedValues outlined_values(const FunctionLowering &f, const Scope &s, const std::vector<llvm::Value *> &extra);
// A value (pointer, integer, float or double) packed into a 64-bit word of a context array, and
// the word unpacked back to type `t`.
llvm::Value *pack(llvm::IRBuilder<> &b, llvm::Value *v);
llvm::Value *unpack(llvm::IRBuilder<> &b, llvm::Value *w, llvm::Type *t);
// Stores the values into a context array allocated in the current function's entry block.
// After load_context and the outlined body, only the values the body uses are stored, and the
// loads of the others are erased: a body reads a few of the dozens of views and parameters a
// pipeline has (a fuzzer pipeline stored 185 words before each of its 19 parallel loops).
// Before (a GPU kernel's context, which is copied whole), every value is.
llvm::Value *store_context(FunctionLowering &f, OutlinedValues &o, const char *name = "context");
// In the outlined function, at f's insertion point: loads the values back from `context`,
// binds the scope's variables in `scope` and points f's views at the loaded ones; returns the
// loaded `extra` values.
std::vector<llvm::Value *> load_context(FunctionLowering &f, OutlinedValues &o, llvm::Value *context, Scope &scope);


// How to address one array: element (c_0, ...) lives at base + sum_d (c_d - min_d) * stride_d.
struct StorageView {
    Type type;
    llvm::Value *base = nullptr;
    std::vector<llvm::Value *> min, stride;  // i64 per dimension (Halide order)
    bool output = false;                     // written once by its statements (streaming stores)
    bool scratch = false;
    int alias = -1;  // its alias scope (FunctionLowering::alias_scopes)
    // A column window (poly::Storage::thread_window, gpu/kernel_lowering.cpp): `base` is one
    // thread's `window_rows` slots for the column it runs, addressed by global coordinates
    // through window_address.
    int window_dim = -1;                 // its row dimension (Halide order); -1: not a window
    int64_t window_rows = 0;             // the slots (the fold)
    std::optional<int64_t> window_anchor;  // the row offset its writer stores at, from the row
                                           // loop's variable: slot 0; none: a ring (row mod rows)
    llvm::Value *window_row = nullptr;   // the row loop's variable (i64) in this iteration
};

// While the body of an outlined function (a parallel loop's, a GPU kernel's) is emitted: f
// emits into `fn`, from a new entry block, with views and heap allocations of its own; finish()
// takes f back to the parent function where it left off, with the parent's views.
class OutlinedBody {
public:
    OutlinedBody(FunctionLowering &f, llvm::Function *fn);
    void finish();

private:
    FunctionLowering &f_;
    llvm::BasicBlock *parent_block_;
    llvm::Function *parent_;
    std::vector<StorageView> storage_;
    std::map<const InputContents *, StorageView> inputs_;
    std::vector<llvm::Value *> heap_;
    std::vector<std::pair<llvm::Value *, llvm::Value *>> pooled_;
    bool streamed_;
};

class FunctionLowering {
public:
    FunctionLowering(const poly::Program &p, llvm::Module &m, const CodegenOptions &o);
    void run();

    // ---- Expressions (expr_lowering.cpp) ----
    llvm::Value *expr(const Expr &e, const Scope &s);
    // An operation on already lowered operands (scalars, or vectors of equal lanes): every Op but
    // leaves and loads. Used by the scalar and the vector lowering alike.
    llvm::Value *apply(const ExprNode &n, const std::vector<llvm::Value *> &args);
    llvm::Type *value_type(Type t, int lanes = 1);  // type of values in registers
    llvm::Type *storage_type(Type t);  // type of values in memory
    llvm::Value *cast(Type from, Type to, llvm::Value *v);
    llvm::Value *round_to(Type t, llvm::Value *v);  // float16/bfloat16: round a float once
    const StorageView &view_of(const FuncContents *f) const;  // where a Func's values live
    llvm::Value *load(const StorageView &view, const std::vector<Expr> &coords, const Scope &s);
    llvm::Value *load_at(const StorageView &view, const std::vector<llvm::Value *> &coords);  // one element
    void store(const StorageView &view, const std::vector<llvm::Value *> &coords, llvm::Value *v, bool streaming);
    // Between the memory form of a type (bool as i8, float16/bfloat16 as their bits) and the
    // register form (i1, float); scalars or vectors alike.
    llvm::Value *from_memory(Type t, llvm::Value *loaded);
    llvm::Value *to_memory(Type t, llvm::Value *v);
    void mark_nontemporal(llvm::StoreInst *st);
    llvm::Value *address(const StorageView &view, const std::vector<llvm::Value *> &coords);
    llvm::Value *widened_index(llvm::Value *coordinate);  // the int32 coordinate as int64
    llvm::Value *i32(int64_t v);
    llvm::Value *i64(int64_t v);
    // The int64 vector <0, 1, ..., w - 1>: each lane's number (masks of a step's first lanes).
    llvm::Constant *lane_numbers(int w);

    // ---- Loop nest (loop_lowering.cpp) ----
    void node(const poly::LoopNodePtr &n, Scope &s);
    // `remainder`: a loop that runs few of the iterations (the scalar ones around a vectorized
    // loop, those around a register tile's partial block): neither vectorized nor unrolled by
    // LLVM.
    // `emit_body`, when given, emits each iteration instead of n.body (given the iteration's
    // value, in place of binding n.var).
    void serial_for(const poly::LoopNode &n, Scope &s, llvm::Value *lo, llvm::Value *hi, bool vector,
                    bool remainder = false, const std::function<void(llvm::Value *)> &emit_body = nullptr);
    // A loop marked vector, lowered W lanes at a time (cpu/vector_lowering.cpp); false if its body
    // does not allow it (the caller then leaves it to LLVM's vectorizer). `known_count`: the
    // loop runs exactly that many iterations (a register tile's block), a multiple of W: its
    // steps are emitted one after another, without a loop.
    bool vector_for(const poly::LoopNode &n, Scope &s, llvm::Value *lo, llvm::Value *hi, int64_t known_count = 0);
    int vector_lanes(const poly::LoopNode &n) const;  // the lanes vector_for uses; 0: it cannot
    // The address of the element that the one statement under the vector loop `n` stores at
    // n.var = x (the first lane of a vector step), when its store is contiguous along the loop;
    // null otherwise (or when vector_for cannot lower `n`).
    llvm::Value *contiguous_store_address(const poly::LoopNode &n, Scope &s, llvm::Value *x);
    // The elements of the Func `call` reads, when they are a table byte permutes may look up
    // (CodegenOptions::byte_table_permutes): 8-bit values over one dimension, in a full buffer of
    // a constant extent of at most kByteTableEntries; 0 otherwise.
    int64_t byte_table_entries(const ExprNode &call) const;
    // A loop marked vector whose body guards statements by conditions affine in its variable,
    // lowered as consecutive vector loops without the guards (cpu/vector_guard_splitting.cpp);
    // false, emitting nothing, when its body is not of that form.
    bool split_vector_guards(const poly::LoopNode &n, Scope &s, llvm::Value *lo, llvm::Value *hi);
    // The loops below a register_tile mark (register_tile_lowering.cpp); false, emitting
    // nothing, when they are not of the register tile's shape.
    bool register_tile(const poly::LoopNode &mark, const poly::Mark &tile, Scope &s);
    // A register tile's partial block of `count` elements from `lo` in `active` masked vector
    // steps (of the `steps` a whole block has), under the loops `outer` around the rows' vector
    // loops (register_tile_lowering.cpp).
    void masked_block(const std::vector<const poly::LoopNode *> &outer, const poly::LoopNode &rows, const poly::LoopNode &vec,
                      const poly::LoopNode &call, const poly::Mark &tile, int steps, int active, llvm::Value *row_lo,
                      llvm::Value *lo, llvm::Value *count, Scope &s);
    void fence_streaming_stores();
    void call(const poly::LoopNode &n, Scope &s);

    // ---- Entry (host_entry.cpp) ----
    void allocate_scratch(int group_or_all);
    // The scratchpads of a group (all groups when -1), laid out one after another; their
    // total bytes in `total`.
    std::vector<ScratchLayout> scratch_layouts(int group_or_all, int64_t &total) const;
    // Points a scratchpad's view at `base`.
    void place_scratch(const ScratchLayout &l, llvm::Value *base);

    // ---- GPU kernels (gpu/kernel_lowering.cpp) ----
    // Lowers `n` as the GPU mapping asks (kernel marks outside kernels; thread loops, barriers
    // and one-thread regions inside); false when n is lowered as on the CPU.
    bool gpu_node(const poly::LoopNodePtr &n, Scope &s);
    struct KernelState {
        llvm::Value *device = nullptr;   // the device interface's argument
        llvm::Value *thread = nullptr;   // threadIdx.x (i64)
        llvm::Value *threads = nullptr;  // blockDim.x (i64)
        bool single = false;             // emitting one thread's code: a region only thread 0
                                         // runs, or the body of a thread loop
        // The row loop of the column window being emitted (its thread loop's body), which
        // window_rows lowers; null outside one.
        const poly::LoopNode *window_loop = nullptr;
        std::function<void(const poly::LoopNode &, Scope &)> window_rows;
        // In the version of a column window whose inputs are aligned (column_window_for): its
        // first column's variable and its columns. A load of an input at a column `d` past it,
        // d a multiple of the columns, is that many elements aligned (load_at), so that LLVM
        // loads a thread's columns together (8-byte loads of two floats).
        llvm::Value *aligned_column = nullptr;
        int aligned_columns = 1;
    };
    KernelState *kernel = nullptr;  // set while a kernel's body is emitted
    int kernel_count = 0;
    // The element of a column window (StorageView::window_dim) at `coords` (global coordinates):
    // the slot `anchor - (row - window_row)` of the thread's rows, where a row written
    // `anchor` rows ahead of the row loop's variable sits at slot 0 and moves up one slot an
    // iteration (a constant slot, which LLVM keeps in a register, when the row is the loop's
    // variable plus a constant); or, with no anchor, the slot `row mod rows` of a ring.
    llvm::Value *window_address(const StorageView &view, const std::vector<llvm::Value *> &coords);
    // c where `v` is `base` plus the constant c (through additions and subtractions of constants
    // and integer casts: coordinates are int32 values that do not wrap); nullopt otherwise.
    static std::optional<int64_t> constant_offset(llvm::Value *v, llvm::Value *base);
    std::optional<llvm::Align> column_alignment(const StorageView &view, const std::vector<llvm::Value *> &coords);
    // The GPU runtime's member at `offset` in tessera_gpu_runtime_t (abi.h).
    llvm::Value *gpu_runtime_member(size_t offset);
    // `bytes` of device memory (null when out of memory), and its release.
    llvm::Value *device_alloc(llvm::Value *bytes);
    void device_release(llvm::Value *memory);
    // `bytes` (a multiple of 64) of host memory, 64-byte aligned, null when out of memory: from
    // the buffer pool where the loader provides one (CodegenOptions::pooled_buffers), else
    // aligned_alloc; free_heap() gives it back.
    llvm::Value *host_alloc(llvm::Value *bytes, const std::string &name);
    // Frees heap_allocations (device memory on GPU targets) and gives pooled_buffers back.
    void free_heap();

    const poly::Program &p;
    const poly::Model &m;
    llvm::Module &module;
    const CodegenOptions &options;
    llvm::LLVMContext &ctx;
    llvm::IRBuilder<> b;
    // Loops marked parallel: the target's back end (loop_generator.h).
    std::unique_ptr<class ParallelLoopGenerator> parallel_loops;
    std::vector<Argument> arguments;
    std::vector<StorageView> storage;  // per p.storage
    std::map<const InputContents *, StorageView> inputs;
    llvm::Function *function = nullptr;  // the function being emitted into (entry or outlined)
    llvm::BasicBlock *error_exit = nullptr;
    llvm::Value *error_arg = nullptr;
    // One alias scope per input and per storage: a pipeline's arrays never share memory (the
    // entry rejects outputs that overlap another buffer), so every access is tagged with its
    // array's scope and as not aliasing the others. LLVM can then keep values in registers
    // across loops, such as an accumulator across a reduction loop.
    std::vector<llvm::MDNode *> alias_scopes, noalias_lists;
    void make_alias_scopes(size_t arrays);
    void tag_access(llvm::Instruction *access, const StorageView &view) const;
    // While vector step `tile_slot` (row r, step k: r * steps + k) of a full register tile is
    // emitted: the accesses to `tile_view` (the array the tile writes) get that slot's alias
    // scope too, and no alias with the tile's other slots (register_tiling.h: they never touch
    // the same element).
    const StorageView *tile_view = nullptr;
    int tile_slot = -1;
    std::vector<llvm::MDNode *> tile_scopes;
    // While a register tile's masked block is emitted (a partial block whose width is no multiple
    // of its narrowest part: register_tile_lowering.cpp): per vector step, the lanes that hold
    // elements (<W x i1>); the others are neither loaded nor stored. Empty otherwise.
    std::vector<llvm::Value *> tile_masks;
    // Inside such a block's reduction loops: per slot, the stack slot that holds the slot's
    // elements of `tile_view` (LLVM keeps it in registers), where the statement reads and stores
    // them. Empty otherwise.
    std::vector<llvm::AllocaInst *> tile_accumulators;
    llvm::MDNode *access_group = nullptr;  // set inside loops marked vector
    int parallel_depth = 0;
    bool streamed = false;  // the current function issued non-temporal stores
    // Set while lowering coordinates: their integer arithmetic cannot overflow (coordinates are
    // bounded by the regions the entry checks enforce), so it is marked nsw, which lets LLVM
    // fold it into addresses.
    bool index_mode = false;
    std::vector<llvm::Value *> heap_allocations;  // freed before returning
    // Buffers from the pool (CodegenOptions::pooled_buffers), with their sizes: given back before returning.
    std::vector<std::pair<llvm::Value *, llvm::Value *>> pooled_buffers;
};

} // namespace tessera::codegen
