// GPU kernels from the loop nest's kernel marks (gpu_mapping.h), target-neutral: the kernel
// calls the device interface (gpu_target.h) for its thread and block indices, barriers and
// shared memory, which the NVPTX back end and the emulator each define. The host side packs
// what the kernel reads into a context array and launches it through tessera_gpu_runtime_t.
//
//   kernel:2 ─ for T0 (blocks) ─ for T1 (blocks) ─ body        block b: T0 = lo0 + b / n1,
//                                                                         T1 = lo1 + b % n1
//   thread ─ for x in [lo, hi]                                 thread t runs x = lo + t, lo + t +
//                                                              blockDim, ...
//   barrier ─ body                                             every thread waits, then body
//   a subtree with neither (a scan, a reduction's init)        only thread 0 runs it
#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include <llvm/IR/Verifier.h>

#include "../function_lowering.h"
#include "kernel_parts.h"
#include "tessera/codegen/abi.h"
#include "tessera/codegen/gpu_target.h"

namespace tessera::codegen {

using llvm::Value;

namespace {

// Whether `n` is a Mark node of kind `k`.
bool is_mark_node(const poly::LoopNode &n, poly::Mark::Kind k) {
    if (n.kind != poly::LoopNode::Kind::Mark) return false;
    std::optional<poly::Mark> mk = poly::parse_mark(n.mark);
    return mk && mk->kind == k;
}

bool is_barrier(const poly::LoopNode &n) { return is_mark_node(n, poly::Mark::Kind::Barrier); }

// The unit of global memory traffic: a warp-wide access moves the 32-byte sectors it touches.
constexpr int64_t kSectorBytes = 32;

} // namespace

bool is_kernel_mark(const poly::LoopNode &n) { return is_mark_node(n, poly::Mark::Kind::Kernel); }

// (kernel_parts.h)
Value *trip_count(FunctionLowering &f, Value *lo, Value *hi, int64_t step) {
    Value *n = f.b.CreateAdd(f.b.CreateSDiv(f.b.CreateSub(hi, lo), f.i64(step)), f.i64(1));
    return f.b.CreateSelect(f.b.CreateICmpSLT(hi, lo), f.i64(0), n);
}

// (kernel_parts.h)
Scope instance_scope(FunctionLowering &f, const poly::LoopNode &call, const Scope &s) {
    const poly::ExecStatement &e = f.p.statements[size_t(call.statement)];
    Scope body = s;
    bool saved = f.index_mode;
    f.index_mode = true;
    for (size_t i = 0; i < e.dims.size(); ++i)
        body.vars[e.dims[i]] = f.b.CreateTrunc(f.expr(call.args[i], s), f.b.getInt32Ty(), "", false, true);
    f.index_mode = saved;
    return body;
}

// (kernel_parts.h)
bool reads_var(const Expr &e, const std::string &var) {
    bool reads = false;
    ir::visit(e, [&](const Expr &x) {
        reads = reads || (x->op == Op::Var && x->name == var);
        return !reads;
    });
    return reads;
}


namespace {

// Whether every thread of the block runs `n`: it holds a thread loop or a barrier.
bool uniform(const poly::LoopNodePtr &n) {
    if (!n) return false;
    if ((n->kind == poly::LoopNode::Kind::For && n->vectorize) || is_barrier(*n)) return true;
    for (const auto &c : n->children)
        if (uniform(c)) return true;
    return uniform(n->body) || uniform(n->then_case) || uniform(n->else_case);
}

// A call of the device interface: `name(device)`.
Value *device_call(FunctionLowering &f, const char *name, llvm::Type *ret) {
    llvm::FunctionCallee fn = f.module.getOrInsertFunction(name, ret, f.b.getPtrTy());
    return f.b.CreateCall(fn, {f.kernel->device});
}

// Returns `code` from the entry (its error filled in, with `amount` as need_min and need_max),
// after releasing what it allocated. Leaves the insertion point in the returning block.
void fail_with(FunctionLowering &f, int code, Value *amount) {
    llvm::BasicBlock *fill = llvm::BasicBlock::Create(f.ctx, "fill", f.function);
    llvm::BasicBlock *ret = llvm::BasicBlock::Create(f.ctx, "ret", f.function);
    f.b.CreateCondBr(f.b.CreateIsNull(f.error_arg), ret, fill);
    f.b.SetInsertPoint(fill);
    auto put = [&](size_t offset, Value *v) { f.b.CreateStore(v, f.b.CreateConstInBoundsGEP1_64(f.b.getInt8Ty(), f.error_arg, offset)); };
    put(offsetof(tessera_error_t, code), f.b.getInt32(uint32_t(code)));
    put(offsetof(tessera_error_t, need_min), amount);
    put(offsetof(tessera_error_t, need_max), amount);
    f.b.CreateBr(ret);
    f.b.SetInsertPoint(ret);
    f.free_heap();
    f.b.CreateRet(f.b.getInt32(uint32_t(code)));
}

// The groups (and their Funcs) whose statements run below `n`: what a profiler names the kernel.
std::string groups_named(const FunctionLowering &f, const poly::LoopNodePtr &n) {
    std::set<size_t> groups;
    std::function<void(const poly::LoopNodePtr &)> visit = [&](const poly::LoopNodePtr &x) {
        if (!x) return;
        if (x->kind == poly::LoopNode::Kind::Call) {
            int st = f.p.statements[size_t(x->statement)].statement;
            for (size_t g = 0; g < f.p.groups.size(); ++g)
                for (int s : f.p.groups[g].statements)
                    if (s == st) groups.insert(g);
        }
        for (const auto &c : x->children) visit(c);
        visit(x->body);
        visit(x->then_case);
        visit(x->else_case);
    };
    visit(n);
    std::string names;
    for (size_t g : groups) {
        names += (names.empty() ? "" : "; ") + f.p.groups[g].name + " (";
        for (size_t i = 0; i < f.p.groups[g].funcs.size(); ++i) names += (i ? ", " : "") + f.p.groups[g].funcs[i]->name;
        names += ")";
    }
    return names;
}

// Emits the kernel of the mark node `mark` and its launch.
void emit_kernel(FunctionLowering &f, const poly::LoopNode &mark, Scope &s) {
    std::optional<poly::Mark> mk = poly::parse_mark(mark.mark);
    // The block loops, outermost first: the mark's loops, as far as each one's bounds do not
    // depend on the others (a rectangular grid); loops past them run inside each block. The
    // first one's collapse counts those of the marked band that isl did not drop (program.cpp).
    std::vector<const poly::LoopNode *> loops;
    if (mk->collapse > 0 && mark.body && mark.body->kind == poly::LoopNode::Kind::For && mark.body->parallel) {
        loops.push_back(mark.body.get());
        while (int(loops.size()) < std::min(mk->collapse, std::max(1, mark.body->collapse))) {
            const poly::LoopNodePtr &next = loops.back()->body;
            if (!next || next->kind != poly::LoopNode::Kind::For || next->vectorize) break;
            bool depends = false;
            for (const Expr &e : {next->min, next->max})
                ir::visit(e, [&](const Expr &x) {
                    for (const poly::LoopNode *l : loops) depends = depends || (x->op == Op::Var && x->name == l->var);
                    return !depends;
                });
            if (depends) break;
            loops.push_back(next.get());
        }
    }
    // The grid: the product of the block loops' iterations (or one block).
    std::vector<Value *> los, counts;
    Value *blocks = f.i64(1);
    for (const poly::LoopNode *l : loops) {
        los.push_back(f.expr(l->min, s));
        counts.push_back(trip_count(f, los.back(), f.expr(l->max, s), l->step));
        blocks = f.b.CreateMul(blocks, counts.back());
    }
    const poly::LoopNodePtr &body = loops.empty() ? mark.body : loops.back()->body;
    int threads = uniform(body) ? f.options.gpu_threads : 1;

    // The block's scratchpads, one after another: in shared memory when they fit, else in
    // global memory, one slice per block.
    std::vector<ScratchLayout> layouts;
    int64_t scratch_bytes = 0;
    for (int g : groups_below(f.p, body, false)) {
        int64_t bytes = 0;
        for (ScratchLayout l : f.scratch_layouts(g, bytes)) {
            l.offset += scratch_bytes;
            layouts.push_back(l);
        }
        scratch_bytes += bytes;
    }
    bool shared = scratch_bytes <= f.options.gpu_shared_bytes;
    llvm::PointerType *ptr = f.b.getPtrTy();
    Value *global_scratch = llvm::ConstantPointerNull::get(ptr);
    if (!shared) {
        Value *bytes = f.b.CreateMul(f.b.CreateSelect(f.b.CreateICmpSGT(blocks, f.i64(0)), blocks, f.i64(1)), f.i64(scratch_bytes));
        global_scratch = f.device_alloc(bytes);
        llvm::BasicBlock *oom = llvm::BasicBlock::Create(f.ctx, "scratch.oom", f.function);
        llvm::BasicBlock *ok = llvm::BasicBlock::Create(f.ctx, "scratch.ok", f.function);
        f.b.CreateCondBr(f.b.CreateIsNull(global_scratch), oom, ok);
        f.b.SetInsertPoint(oom);
        fail_with(f, TESSERA_ERROR_OUT_OF_MEMORY, bytes);
        f.b.SetInsertPoint(ok);
    }

    std::vector<Value *> extra = {global_scratch};
    extra.insert(extra.end(), los.begin(), los.end());
    extra.insert(extra.end(), counts.begin(), counts.end());
    OutlinedValues live = outlined_values(f, s, extra);
    Value *context = store_context(f, live, "kernel.context");

    // void kernel(i64 *context, void *device)
    llvm::FunctionType *fty = llvm::FunctionType::get(f.b.getVoidTy(), {ptr, ptr}, false);
    int index = f.kernel_count++;
    llvm::Function *fn = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage,
                                                f.options.function_name + "_kernel" + std::to_string(index), f.module);
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    fn->addFnAttr(kKernelAttribute, groups_named(f, body));
    fn->addFnAttr(kContextWordsAttribute, std::to_string(std::max<size_t>(live.values.size(), 1)));

    OutlinedBody outlined(f, fn);
    Scope scope;
    std::vector<Value *> mine = load_context(f, live, fn->getArg(0), scope);
    FunctionLowering::KernelState state;
    state.device = fn->getArg(1);
    f.kernel = &state;
    state.thread = f.b.CreateZExt(device_call(f, kThreadIdFunction, f.b.getInt32Ty()), f.b.getInt64Ty(), "tid");
    state.threads = f.b.CreateZExt(device_call(f, kBlockSizeFunction, f.b.getInt32Ty()), f.b.getInt64Ty(), "ntid");
    Value *block = device_call(f, kBlockIdFunction, f.b.getInt64Ty());
    Value *base = shared ? device_call(f, kSharedFunction, ptr)
                         : f.b.CreateGEP(f.b.getInt8Ty(), mine[0], f.b.CreateMul(block, f.i64(scratch_bytes)));
    for (const ScratchLayout &l : layouts) f.place_scratch(l, f.b.CreateConstInBoundsGEP1_64(f.b.getInt8Ty(), base, uint64_t(l.offset)));
    // Block b's iteration of each block loop, innermost fastest.
    Value *rest = block;
    for (size_t i = loops.size(); i-- > 0;) {
        Value *count = mine[1 + loops.size() + i];
        Value *index = i == 0 ? rest : f.b.CreateSRem(rest, count);
        if (i > 0) rest = f.b.CreateSDiv(rest, count);
        scope.vars[loops[i]->var] = f.b.CreateAdd(mine[1 + i], f.b.CreateMul(index, f.i64(loops[i]->step)), loops[i]->var);
    }
    ++f.parallel_depth;
    f.node(body, scope);
    --f.parallel_depth;
    f.b.CreateRetVoid();
    f.kernel = nullptr;
    outlined.finish();
    llvm::Function *parent = f.function;

    // Launch (if the grid is not empty) through the module's runtime.
    llvm::BasicBlock *launch = llvm::BasicBlock::Create(f.ctx, "launch", parent);
    llvm::BasicBlock *launched = llvm::BasicBlock::Create(f.ctx, "launched", parent);
    f.b.CreateCondBr(f.b.CreateICmpSGT(blocks, f.i64(0)), launch, launched);
    f.b.SetInsertPoint(launch);
    Value *launch_fn = f.gpu_runtime_member(offsetof(tessera_gpu_runtime_t, launch));
    Value *rt_state = f.gpu_runtime_member(offsetof(tessera_gpu_runtime_t, state));
    llvm::FunctionType *launch_ty = llvm::FunctionType::get(
        f.b.getInt32Ty(), {ptr, f.b.getInt32Ty(), ptr, f.b.getInt64Ty(), f.b.getInt32Ty(), f.b.getInt64Ty(), ptr, f.b.getInt64Ty()}, false);
    Value *rc = f.b.CreateCall(launch_ty, launch_fn,
                               {rt_state, f.b.getInt32(uint32_t(index)), fn, blocks, f.b.getInt32(uint32_t(threads)),
                                f.i64(shared ? scratch_bytes : 0), context, f.i64(int64_t(live.values.size()))});
    llvm::BasicBlock *failed = llvm::BasicBlock::Create(f.ctx, "launch.failed", parent);
    f.b.CreateCondBr(f.b.CreateICmpNE(rc, f.b.getInt32(0)), failed, launched);
    f.b.SetInsertPoint(failed);
    if (!shared) f.device_release(global_scratch);
    fail_with(f, TESSERA_ERROR_GPU, f.i64(0));
    f.b.SetInsertPoint(launched);
    if (!shared) f.device_release(global_scratch);
}

// The global access a thread loop's warps are aligned to: the body is one unguarded statement
// call (through blocks of one child and marks), and it stores to global memory (an output, or a
// Func stored whole), or else copies an input element as it is (a staged input,
// poly/staged_inputs.h) into shared memory.
struct AlignedAccess {
    const poly::LoopNode *call = nullptr;
    const StorageView *view = nullptr;
    std::vector<Expr> coords;  // over the statement's instance Vars
    bool copies_input = false;  // the statement copies an input element into shared memory
};

// The one statement call a loop's body is (through blocks of one child and marks), or null.
const poly::LoopNode *only_call(const poly::LoopNode &loop) {
    const poly::LoopNode *n = loop.body.get();
    while (n && (n->kind == poly::LoopNode::Kind::Mark || (n->kind == poly::LoopNode::Kind::Block && n->children.size() == 1)))
        n = n->kind == poly::LoopNode::Kind::Mark ? n->body.get() : n->children[0].get();
    return n && n->kind == poly::LoopNode::Kind::Call ? n : nullptr;
}

std::optional<AlignedAccess> aligned_access(const FunctionLowering &f, const poly::LoopNode &loop) {
    if (f.options.gpu_warp_alignment == CodegenOptions::WarpAlignment::Off) return std::nullopt;
    const poly::LoopNode *n = only_call(loop);
    if (!n || loop.step != 1) return std::nullopt;
    const poly::ExecStatement &e = f.p.statements[size_t(n->statement)];
    // The shift is computed from the address the statement touches at the loop's first
    // iteration, which a guard might leave untouched (and out of its buffer).
    if (!e.guards.empty()) return std::nullopt;
    const StorageView &stored = f.view_of(f.m.statements[size_t(e.statement)].func);
    AlignedAccess a;
    a.call = n;
    if (!stored.scratch) {
        a.view = &stored;
        a.coords = e.store;
    } else if (e.value->op == Op::InputCall) {
        a.view = &f.inputs.at(e.value->input.get());
        a.coords = e.value->args;
        a.copies_input = true;
    } else {
        return std::nullopt;
    }
    int bytes = a.view->type.bytes();
    if (bytes < 1 || kSectorBytes % bytes != 0) return std::nullopt;
    return a;
}

// How many elements past the 32-byte sector boundary at or below it the element lies that the
// access `a` of the thread loop `loop` touches when the loop's variable is `v`: 0 to
// (32 bytes / element) - 1.
Value *sector_offset(FunctionLowering &f, const poly::LoopNode &loop, const AlignedAccess &a, const Scope &s, Value *v) {
    Scope at = s;
    at.vars[loop.var] = v;
    Scope body = instance_scope(f, *a.call, at);
    std::vector<Value *> coords;
    f.index_mode = !a.view->scratch;
    for (const Expr &c : a.coords) coords.push_back(f.expr(c, body));
    f.index_mode = false;
    Value *address = f.b.CreatePtrToInt(f.address(*a.view, coords), f.b.getInt64Ty());
    return f.b.CreateUDiv(f.b.CreateAnd(address, f.i64(kSectorBytes - 1)), f.i64(a.view->type.bytes()));
}

// for (v = lo + thread * step; v <= hi; v += threads * step): the loop's iterations spread
// over the block's threads, each thread's code inside lowered as on the CPU (scalar). With
// `rows` (an enclosing loop's variable `row_var` and its values), each iteration runs the body
// once per row, in that order: unroll and jam (jammed_rows).
//
// A loop whose one statement stores a row to global memory, or copies an input row into shared
// memory (aligned_access), starts its iterations `shift` threads later, where `shift` is how
// far lo's element lies past a 32-byte sector boundary:
// thread k runs v = lo + k - shift when shift <= k < count + shift. Then every warp's 32
// accesses start on a sector boundary and move the fewest sectors (a row of 260 floats whose
// pitch is 16 bytes past a multiple of 32, as a 1028-wide image's is on every other row: 33
// sectors instead of 41). Any spread of a thread loop's iterations over the threads is legal
// (they carry no dependence). Jammed rows each have their own shift (a row's pitch need not be
// a whole number of sectors), so thread k runs row r's column lo + k - shift_r: each row's
// columns, and the addresses of its accesses, are their own, and stay in registers (ptxas gave
// blur 56 and unsharp_mask 113 registers a thread with rows jammed by 4 and aligned, against 29
// and 40). Whether such loops are jammed is CodegenOptions::gpu_warp_alignment's choice
// (aligned_rather_than_unrolled).
void thread_for(FunctionLowering &f, const poly::LoopNode &n, Scope &s, const std::string &row_var = "",
                const std::vector<Value *> &rows = {}) {
    Value *lo = f.expr(n.min, s), *hi = f.expr(n.max, s);
    Value *count = trip_count(f, lo, hi, n.step);
    // Jammed rows are aligned only under WarpAlignment::Jammed (under Rows, the loops that are
    // jammed are those whose alignment gains least).
    std::optional<AlignedAccess> aligned =
        rows.empty() || f.options.gpu_warp_alignment == CodegenOptions::WarpAlignment::Jammed ? aligned_access(f, n) : std::nullopt;
    // Each row's shift (one, unjammed), from the address at the row's first iteration.
    std::vector<Value *> shifts;
    if (aligned) {
        if (rows.empty()) shifts.push_back(sector_offset(f, n, *aligned, s, lo));
        for (Value *row : rows) {
            Scope at = s;
            at.vars[row_var] = row;
            shifts.push_back(sector_offset(f, n, *aligned, at, lo));
        }
    }
    // The iterations k the threads run: count, plus room for the largest shift.
    Value *span = aligned ? f.b.CreateSelect(f.b.CreateICmpSGT(count, f.i64(0)),
                                             f.b.CreateAdd(count, f.i64(kSectorBytes / aligned->view->type.bytes() - 1)), count)
                          : count;
    ThreadSteps steps(f, n.var, span);
    Value *k = steps.k;
    Scope inside = s;
    bool saved = f.kernel->single;
    f.kernel->single = true;
    if (aligned) {
        for (size_t r = 0; r < shifts.size(); ++r) {
            // This thread's iteration of row r, when it has one.
            Value *j = f.b.CreateSub(k, shifts[r]);
            llvm::BasicBlock *run = llvm::BasicBlock::Create(f.ctx, n.var + ".aligned", f.function);
            llvm::BasicBlock *done = llvm::BasicBlock::Create(f.ctx, n.var + ".aligned.done", f.function);
            f.b.CreateCondBr(f.b.CreateAnd(f.b.CreateICmpSGE(j, f.i64(0)), f.b.CreateICmpSLT(j, count)), run, done);
            f.b.SetInsertPoint(run);
            inside.vars[n.var] = f.b.CreateAdd(lo, j, n.var, false, true);
            if (!rows.empty()) inside.vars[row_var] = rows[r];
            f.node(n.body, inside);
            f.b.CreateBr(done);
            f.b.SetInsertPoint(done);
        }
    } else {
        inside.vars[n.var] = f.b.CreateAdd(lo, f.b.CreateMul(k, f.i64(n.step)), n.var, false, true);
        if (rows.empty()) f.node(n.body, inside);
        for (Value *row : rows) {
            inside.vars[row_var] = row;
            f.node(n.body, inside);
        }
    }
    f.kernel->single = saved;
    steps.finish();
}

// Whether the thread loop `loop`'s rows are aligned (thread_for) and not unrolled, under
// WarpAlignment::Rows: it copies an input into shared memory (one load per row, each row's
// alignment its own as the input's pitch goes), or stores to global memory what it computes
// from shared memory only (unrolling its rows puts no more global loads in flight). blur on
// sm_80: the input's copy and blur_y aligned, neither unrolled, 97% of the sectors moved used,
// against 84%. Under Jammed and Off every row loop around a thread loop is jammed.
bool aligned_rather_than_unrolled(const FunctionLowering &f, const poly::LoopNode &loop) {
    if (f.options.gpu_warp_alignment != CodegenOptions::WarpAlignment::Rows) return false;
    std::optional<AlignedAccess> a = aligned_access(f, loop);
    if (!a) return false;
    if (a->copies_input) return true;
    bool global = false;
    ir::visit(f.p.statements[size_t(a->call->statement)].value, [&](const Expr &x) {
        if (x->op == Op::InputCall || (x->op == Op::FuncCall && !f.view_of(x->func_ptr).scratch)) global = true;
        return !global;
    });
    return !global;
}

// The thread loop that is all of `rows`'s body (through thread marks), when its bounds do not depend
// on `rows`'s variable; null otherwise.
const poly::LoopNode *jammable_thread_loop(const poly::LoopNode &rows) {
    if (rows.kind != poly::LoopNode::Kind::For || rows.vectorize || rows.step < 1) return nullptr;
    const poly::LoopNode *n = rows.body.get();
    // Not through a barrier: rows a barrier separates depend on each other (a time tile's).
    while (n && (is_mark_node(*n, poly::Mark::Kind::Thread) || (n->kind == poly::LoopNode::Kind::Block && n->children.size() == 1)))
        n = n->kind == poly::LoopNode::Kind::Mark ? n->body.get() : n->children[0].get();
    if (!n || n->kind != poly::LoopNode::Kind::For || !n->vectorize) return nullptr;
    if (reads_var(n->min, rows.var) || reads_var(n->max, rows.var)) return nullptr;
    return n;
}

// A loop over a tile's rows around a thread loop, unrolled by `unroll` and jammed into it:
//
//   for (y = lo; y <= hi; y++)              for (y = lo; y + 3 <= hi; y += 4)
//     thread for (x ...)             →        thread for (x ...) { S(y, x); S(y+1, x); S(y+2, x); S(y+3, x); }
//       S(y, x);                             for (; y <= hi; y++)
//                                              thread for (x ...) S(y, x);
//
// so that each thread issues the loads of `unroll` rows before it uses them: one row's loads
// per warp in flight do not cover a GPU's memory latency (docs/gpu.md). Every thread runs the
// same x for every row, so each thread keeps its order of S(y, x) over y for each x; what
// changes is the order between different x, which run on different threads for a block as
// wide as the loop and so carry no dependence (the mapping's legality: thread loops are
// coincident, a flow between threads crosses a barrier, and a barrier is never inside a thread).
void jammed_rows(FunctionLowering &f, const poly::LoopNode &rows, const poly::LoopNode &threads, Scope &s, int unroll) {
    Value *lo = f.expr(rows.min, s), *hi = f.expr(rows.max, s);
    Value *count = trip_count(f, lo, hi, rows.step);
    // The first row the jammed loop leaves to the remainder: lo + (count - count % unroll) * step.
    Value *jammed = f.b.CreateSub(count, f.b.CreateSRem(count, f.i64(unroll)));
    Value *rest = f.b.CreateAdd(lo, f.b.CreateMul(jammed, f.i64(rows.step)));
    poly::LoopNode by_unroll = rows;
    by_unroll.step = rows.step * unroll;
    f.serial_for(by_unroll, s, lo, f.b.CreateSub(rest, f.i64(1)), false, false, [&](Value *y) {
        std::vector<Value *> ys;
        for (int j = 0; j < unroll; ++j) ys.push_back(j == 0 ? y : f.b.CreateAdd(y, f.i64(int64_t(j) * rows.step), "", false, true));
        thread_for(f, threads, s, rows.var, ys);
    });
    f.serial_for(rows, s, rest, hi, false, true);
}

} // namespace

Value *FunctionLowering::gpu_runtime_member(size_t offset) {
    static_assert(sizeof(((tessera_gpu_runtime_t *)nullptr)->launch) == 8 && sizeof(((tessera_gpu_runtime_t *)nullptr)->alloc) == 8 &&
                      sizeof(((tessera_gpu_runtime_t *)nullptr)->release) == 8 && sizeof(((tessera_gpu_runtime_t *)nullptr)->state) == 8,
                  "tessera_gpu_runtime_t holds pointers");
    llvm::PointerType *ptr = b.getPtrTy();
    llvm::GlobalVariable *runtime = module.getNamedGlobal(options.function_name + kRuntimeGlobalSuffix);
    if (!runtime) {
        llvm::Constant *known = llvm::ConstantPointerNull::get(ptr);
        if (options.gpu_runtime)
            known = llvm::ConstantExpr::getIntToPtr(b.getInt64(uint64_t(reinterpret_cast<uintptr_t>(options.gpu_runtime))), ptr);
        runtime = new llvm::GlobalVariable(module, ptr, false, llvm::GlobalValue::ExternalLinkage, known,
                                           options.function_name + kRuntimeGlobalSuffix);
    }
    Value *rt = b.CreateLoad(ptr, runtime);
    return b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), rt, offset));
}

Value *FunctionLowering::device_alloc(Value *bytes) {
    llvm::PointerType *ptr = b.getPtrTy();
    Value *fn = gpu_runtime_member(offsetof(tessera_gpu_runtime_t, alloc));
    Value *state = gpu_runtime_member(offsetof(tessera_gpu_runtime_t, state));
    return b.CreateCall(llvm::FunctionType::get(ptr, {ptr, b.getInt64Ty()}, false), fn, {state, bytes});
}

void FunctionLowering::device_release(Value *memory) {
    llvm::PointerType *ptr = b.getPtrTy();
    Value *fn = gpu_runtime_member(offsetof(tessera_gpu_runtime_t, release));
    Value *state = gpu_runtime_member(offsetof(tessera_gpu_runtime_t, state));
    b.CreateCall(llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr}, false), fn, {state, memory});
}

bool FunctionLowering::gpu_node(const poly::LoopNodePtr &n, Scope &s) {
    if (!kernel) {
        if (is_kernel_mark(*n)) {
            emit_kernel(*this, *n, s);
            return true;
        }
        if (n->kind == poly::LoopNode::Kind::Call)
            internal_error("statement ", n->statement_name, " lies outside every GPU kernel of the schedule");
        return false;  // loops and conditionals around kernels run on the host
    }
    if (kernel->single) {
        if (kernel->window_loop == n.get()) {  // a column window's rows (column_window_for)
            kernel->window_rows(*n, s);
            return true;
        }
        return false;  // one thread's code
    }
    if (is_barrier(*n)) {
        device_call(*this, kBarrierFunction, b.getVoidTy());
        node(n->body, s);
        return true;
    }
    if (n->kind == poly::LoopNode::Kind::For && n->vectorize) {
        if (std::vector<size_t> windows = windows_below(*this, *n); !windows.empty()) column_window_for(*this, *n, windows, s);
        else thread_for(*this, *n, s);
        return true;
    }
    // Rows are unrolled for the global loads they put in flight (jammed_rows), but not those
    // that gain more from aligned warps (aligned_rather_than_unrolled).
    if (options.gpu_unroll_rows > 1)
        if (const poly::LoopNode *threads = jammable_thread_loop(*n); threads && !aligned_rather_than_unrolled(*this, *threads)) {
            jammed_rows(*this, *n, *threads, s, options.gpu_unroll_rows);
            return true;
        }
    if (uniform(n)) return false;  // every thread runs it: lowered as usual, its inside here
    // Only thread 0 runs what no thread loop spreads over the block.
    llvm::BasicBlock *one = llvm::BasicBlock::Create(ctx, "thread0", function);
    llvm::BasicBlock *done = llvm::BasicBlock::Create(ctx, "thread0.done", function);
    b.CreateCondBr(b.CreateICmpEQ(kernel->thread, i64(0)), one, done);
    b.SetInsertPoint(one);
    kernel->single = true;
    node(n, s);
    kernel->single = false;
    b.CreateBr(done);
    b.SetInsertPoint(done);
    return true;
}

} // namespace tessera::codegen
