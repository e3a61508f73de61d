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

// max(0, (hi - lo) / step + 1): the iterations of `for (v = lo; v <= hi; v += step)`.
Value *trip_count(FunctionLowering &f, Value *lo, Value *hi, int64_t step) {
    Value *n = f.b.CreateAdd(f.b.CreateSDiv(f.b.CreateSub(hi, lo), f.i64(step)), f.i64(1));
    return f.b.CreateSelect(f.b.CreateICmpSLT(hi, lo), f.i64(0), n);
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

// The scope of the statement instance a call node runs in scope `s`: its instance Vars bound to
// the call's coordinates (int32, as FunctionLowering::call binds them).
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

// The loop that spreads `count` iterations k over the block's threads: thread t runs k = t,
// t + blockDim, ... (the emulator's traffic model told each step). Emits its head and leaves the
// insertion point in its body, k its variable; finish() closes it after the body.
struct ThreadSteps {
    ThreadSteps(FunctionLowering &f, const std::string &name, Value *count) : f(f) {
        step = f.module.getOrInsertFunction(kStepFunction, f.b.getVoidTy(), f.b.getPtrTy(), f.b.getInt64Ty());
        f.b.CreateCall(step, {f.kernel->device, f.i64(-1)});
        llvm::BasicBlock *pre = f.b.GetInsertBlock();
        head = llvm::BasicBlock::Create(f.ctx, name + ".threads", f.function);
        llvm::BasicBlock *body = llvm::BasicBlock::Create(f.ctx, name + ".thread", f.function);
        exit = llvm::BasicBlock::Create(f.ctx, name + ".threads.exit", f.function);
        f.b.CreateBr(head);
        f.b.SetInsertPoint(head);
        k = f.b.CreatePHI(f.b.getInt64Ty(), 2);
        k->addIncoming(f.kernel->thread, pre);
        f.b.CreateCondBr(f.b.CreateICmpSLT(k, count), body, exit);
        f.b.SetInsertPoint(body);
        f.b.CreateCall(step, {f.kernel->device, f.b.CreateSDiv(k, f.kernel->threads)});
    }
    void finish() {
        k->addIncoming(f.b.CreateAdd(k, f.kernel->threads), f.b.GetInsertBlock());
        f.b.CreateBr(head);
        f.b.SetInsertPoint(exit);
    }
    FunctionLowering &f;
    llvm::FunctionCallee step;
    llvm::BasicBlock *head, *exit;
    llvm::PHINode *k;
};

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

// Whether `e` reads the loop variable `var`.
bool reads_var(const Expr &e, const std::string &var) {
    bool reads = false;
    ir::visit(e, [&](const Expr &x) {
        reads = reads || (x->op == Op::Var && x->name == var);
        return !reads;
    });
    return reads;
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

// ---- Column windows (poly::column_window) ----
//
//   thread for (x ...)                  thread k runs columns x0 = lo + C k, ..., x0 + C - 1:
//     for (y ...)                         for (y ...) { body(x0); ...; body(x0 + C - 1); shift }
//       S_blur_x(y + 4, x)  → F(x, y + 4)
//       S_blur_y(y, x)      ← F(x, y ... y + 4)
//
// Each column's rows of F are its thread's own (poly::Storage::thread_window): `fold` slots in
// the thread's frame, which LLVM keeps in registers when every slot is a constant. The row a
// window's writer stores, `anchor` rows ahead of the row loop's variable, goes to slot 0 and
// moves up a slot each iteration (the shift at the end of the body), so the row y + a sits at
// slot anchor - a (FunctionLowering::window_address). C columns a thread (the thread loop
// jammed into the row loop; CodegenOptions::gpu_window_columns) share their input loads:
// blur_x's two columns load 6 elements a row, not 10.

// Every statement call below `n`.
void calls_below(const poly::LoopNode *n, std::vector<const poly::LoopNode *> &out) {
    if (!n) return;
    if (n->kind == poly::LoopNode::Kind::Call) out.push_back(n);
    for (const auto &c : n->children) calls_below(c.get(), out);
    calls_below(n->body.get(), out);
    calls_below(n->then_case.get(), out);
    calls_below(n->else_case.get(), out);
}

// Whether a loop lies at or below `n`.
bool has_loop_below(const poly::LoopNode *n) {
    if (!n) return false;
    if (n->kind == poly::LoopNode::Kind::For) return true;
    for (const auto &c : n->children)
        if (has_loop_below(c.get())) return true;
    return has_loop_below(n->body.get()) || has_loop_below(n->then_case.get()) || has_loop_below(n->else_case.get());
}

// The storage a call's statement writes.
size_t storage_written(const FunctionLowering &f, const poly::LoopNode &call) {
    const poly::ExecStatement &e = f.p.statements[size_t(call.statement)];
    return size_t(f.p.storage_of_array[size_t(f.m.array_of(f.m.statements[size_t(e.statement)].func))]);
}

// The column windows below the thread loop `threads`: each thread_window storage a statement
// below it writes.
std::vector<size_t> windows_below(const FunctionLowering &f, const poly::LoopNode &threads) {
    std::vector<const poly::LoopNode *> calls;
    calls_below(threads.body.get(), calls);
    std::set<size_t> out;
    for (const poly::LoopNode *c : calls)
        if (f.p.storage[storage_written(f, *c)].thread_window) out.insert(storage_written(f, *c));
    return {out.begin(), out.end()};
}

// The row loop of a column window: the innermost of the loops that are, one inside the other,
// all of the thread loop's body (through marks and blocks of one child), when no loop lies
// below it. Null when there is none (isl gives a tile of one row no loop).
const poly::LoopNode *window_row_loop(const poly::LoopNode &threads) {
    const poly::LoopNode *rows = nullptr;
    const poly::LoopNode *n = threads.body.get();
    while (n) {
        if (n->kind == poly::LoopNode::Kind::Mark || (n->kind == poly::LoopNode::Kind::Block && n->children.size() == 1)) {
            n = n->kind == poly::LoopNode::Kind::Mark ? n->body.get() : n->children[0].get();
        } else if (n->kind == poly::LoopNode::Kind::For && !n->vectorize) {
            rows = n;
            n = n->body.get();
        } else {
            break;
        }
    }
    return rows && !has_loop_below(rows->body.get()) ? rows : nullptr;
}

// Lowers `n` for every column `xs` (the columns past `hi` skipped; none if null), jammed: a
// block child by child, a conditional not on the column once around the columns of its
// branches, anything else (a statement) once per column, each with its window slots.
void jam_columns(FunctionLowering &f, const poly::LoopNodePtr &n, const poly::LoopNode &threads, const std::vector<size_t> &windows,
                 const std::vector<std::vector<Value *>> &slots, const std::vector<Value *> &xs, Value *hi, Scope &row) {
    if (!n) return;
    if (n->kind == poly::LoopNode::Kind::Mark) return jam_columns(f, n->body, threads, windows, slots, xs, hi, row);
    if (n->kind == poly::LoopNode::Kind::Block) {
        for (const poly::LoopNodePtr &c : n->children) jam_columns(f, c, threads, windows, slots, xs, hi, row);
        return;
    }
    if (n->kind == poly::LoopNode::Kind::If && !reads_var(n->condition, threads.var)) {
        row.vars[threads.var] = xs[0];
        Value *c = f.expr(n->condition, row);
        llvm::BasicBlock *then_bb = llvm::BasicBlock::Create(f.ctx, "then", f.function);
        llvm::BasicBlock *else_bb = n->else_case ? llvm::BasicBlock::Create(f.ctx, "else", f.function) : nullptr;
        llvm::BasicBlock *done = llvm::BasicBlock::Create(f.ctx, "endif", f.function);
        f.b.CreateCondBr(c, then_bb, else_bb ? else_bb : done);
        f.b.SetInsertPoint(then_bb);
        jam_columns(f, n->then_case, threads, windows, slots, xs, hi, row);
        f.b.CreateBr(done);
        if (else_bb) {
            f.b.SetInsertPoint(else_bb);
            jam_columns(f, n->else_case, threads, windows, slots, xs, hi, row);
            f.b.CreateBr(done);
        }
        f.b.SetInsertPoint(done);
        return;
    }
    for (size_t c = 0; c < xs.size(); ++c) {
        llvm::BasicBlock *past = nullptr;
        if (c > 0 && hi) {
            llvm::BasicBlock *run = llvm::BasicBlock::Create(f.ctx, threads.var + ".jammed", f.function);
            past = llvm::BasicBlock::Create(f.ctx, threads.var + ".jammed.done", f.function);
            f.b.CreateCondBr(threads.step > 0 ? f.b.CreateICmpSLE(xs[c], hi) : f.b.CreateICmpSGE(xs[c], hi), run, past);
            f.b.SetInsertPoint(run);
        }
        row.vars[threads.var] = xs[c];
        for (size_t i = 0; i < windows.size(); ++i) f.storage[windows[i]].base = slots[c][i];
        f.node(n, row);
        if (past) {
            f.b.CreateBr(past);
            f.b.SetInsertPoint(past);
        }
    }
}

// One iteration of a column window's row loop (variable `y`, scope `row`): the body once per
// column `xs` (each column's rows in `slots`, the columns past `hi` skipped; every column when
// `hi` is null), then the shift.
void window_row(FunctionLowering &f, const poly::LoopNode &loop, const poly::LoopNode &threads, const std::vector<size_t> &windows,
                const std::vector<std::vector<Value *>> &slots, const std::vector<Value *> &xs, Value *hi, Value *y, Scope &row) {
    row.vars[loop.var] = y;
    row.vars[threads.var] = xs[0];
    // Where each window's writer stores, from y: a constant keeps its rows in registers; else
    // (and where y steps by more than one) the rows are a ring, slot = row modulo the rows kept.
    std::vector<const poly::LoopNode *> calls;
    calls_below(loop.body.get(), calls);
    for (size_t w : windows) {
        StorageView &v = f.storage[w];
        v.window_row = y;
        v.window_anchor.reset();
        for (const poly::LoopNode *c : calls) {
            if (loop.step != 1 || storage_written(f, *c) != w) continue;
            Scope at = instance_scope(f, *c, row);
            f.index_mode = true;
            Value *stored = f.expr(f.p.statements[size_t(c->statement)].store[size_t(v.window_dim)], at);
            f.index_mode = false;
            v.window_anchor = FunctionLowering::constant_offset(f.widened_index(stored), y);
            break;
        }
    }
    // The columns jammed statement by statement (jam_columns): a stage's accesses for every
    // column lie in one basic block, where LLVM combines them. (Any order across columns is
    // legal: a column's stages read only that column.)
    jam_columns(f, loop.body, threads, windows, slots, xs, hi, row);
    // Every row kept moves up a slot: the next iteration's y is one row further.
    for (size_t i = 0; i < windows.size(); ++i) {
        const StorageView &v = f.storage[windows[i]];
        if (!v.window_anchor) continue;
        llvm::Type *t = f.storage_type(v.type);
        for (const std::vector<Value *> &column : slots)
            for (int64_t j = v.window_rows - 1; j > 0; --j)
                f.b.CreateStore(f.b.CreateLoad(t, f.b.CreateConstInBoundsGEP1_64(t, column[i], uint64_t(j - 1))),
                                f.b.CreateConstInBoundsGEP1_64(t, column[i], uint64_t(j)));
    }
}

void column_window_version(FunctionLowering &f, const poly::LoopNode &threads, const std::vector<size_t> &windows,
                           const std::vector<std::vector<Value *>> &slots, const poly::LoopNode *rows, int columns, Value *lo,
                           Value *hi, bool aligned, Scope &s);
void column_window_body(FunctionLowering &f, const poly::LoopNode &threads, const std::vector<size_t> &windows,
                        const std::vector<std::vector<Value *>> &slots, const poly::LoopNode *rows, const std::vector<Value *> &xs,
                        Value *hi, Scope &s);

// Whether every buffer in global memory the statements below the thread loop `threads` read or
// write (inputs, outputs, Funcs stored whole) lets a thread access its `columns` consecutive
// columns together: its element at the loop's first column `lo`, and every row and plane after
// it, starts on a multiple of `columns` elements (the buffer's base so aligned, lo's distance
// from its min and its strides multiples of `columns`). Then an access at a column a multiple
// of `columns` past a thread's first is that aligned (load_at, store). An i1 value, or null
// when some buffer's elements could not be (their size times `columns` not a power of two of at
// most 16 bytes).
Value *columns_aligned(FunctionLowering &f, const poly::LoopNode &threads, int columns, Value *lo) {
    std::vector<const poly::LoopNode *> calls;
    calls_below(threads.body.get(), calls);
    std::set<const StorageView *> global;
    for (const poly::LoopNode *c : calls) {
        const poly::ExecStatement &e = f.p.statements[size_t(c->statement)];
        if (const StorageView &w = f.view_of(f.m.statements[size_t(e.statement)].func); !w.scratch) global.insert(&w);
        auto visit = [&](const Expr &root) {
            ir::visit(root, [&](const Expr &x) {
                if (x->op == Op::InputCall) global.insert(&f.inputs.at(x->input.get()));
                if (x->op == Op::FuncCall && !f.view_of(x->func_ptr).scratch) global.insert(&f.view_of(x->func_ptr));
                return true;
            });
        };
        visit(e.value);
        for (const Expr &g : e.guards) visit(g);
    }
    if (global.empty()) return nullptr;
    Value *ok = f.b.getTrue();
    for (const StorageView *v : global) {
        int64_t bytes = int64_t(v->type.bytes()) * columns;
        if (bytes <= 0 || bytes > 16 || (bytes & (bytes - 1)) != 0 || v->min.empty() || !v->base) return nullptr;
        Value *base = f.b.CreatePtrToInt(v->base, f.b.getInt64Ty());
        ok = f.b.CreateAnd(ok, f.b.CreateICmpEQ(f.b.CreateAnd(base, f.i64(bytes - 1)), f.i64(0)));
        ok = f.b.CreateAnd(ok, f.b.CreateICmpEQ(f.b.CreateSRem(f.b.CreateSub(lo, v->min[0]), f.i64(columns)), f.i64(0)));
        for (size_t d = 1; d < v->stride.size(); ++d)
            ok = f.b.CreateAnd(ok, f.b.CreateICmpEQ(f.b.CreateSRem(v->stride[d], f.i64(columns)), f.i64(0)));
    }
    return ok;
}

// The thread loop `threads` over the columns of the column windows `windows` (windows_below).
void column_window_for(FunctionLowering &f, const poly::LoopNode &threads, const std::vector<size_t> &windows, Scope &s) {
    const poly::LoopNode *rows = window_row_loop(threads);
    // Several columns a thread where the loops down to the rows do not depend on the column.
    int columns = 1;
    if (rows && f.options.gpu_window_columns > 1) {
        bool depends = false;
        for (const poly::LoopNode *n = threads.body.get(); n && n != rows->body.get();
             n = n->kind == poly::LoopNode::Kind::Block ? n->children[0].get() : n->body.get())
            if (n->kind == poly::LoopNode::Kind::For) depends = depends || reads_var(n->min, threads.var) || reads_var(n->max, threads.var);
        if (!depends) columns = f.options.gpu_window_columns;
    }
    // Each column's rows of each window, in the kernel's frame.
    llvm::IRBuilder<> entry(&f.function->getEntryBlock(), f.function->getEntryBlock().begin());
    std::vector<std::vector<Value *>> slots;
    slots.resize(size_t(columns));
    std::vector<StorageView> saved;
    for (size_t w : windows) {
        const poly::Storage &st = f.p.storage[w];
        saved.push_back(f.storage[w]);
        StorageView v;
        v.type = st.type;
        v.scratch = true;
        v.alias = int(f.m.graph.inputs.size() + w);
        for (size_t d = 0; d < st.fold.size(); ++d)
            if (st.fold[d] > 0) v.window_dim = int(d), v.window_rows = st.fold[d];
        if (v.window_dim < 0) internal_error("the column window ", st.name, " keeps no rows");
        for (int c = 0; c < columns; ++c)
            slots[size_t(c)].push_back(entry.CreateAlloca(f.storage_type(st.type), f.i64(v.window_rows), st.name + ".rows"));
        v.base = slots[0].back();
        f.storage[w] = v;
    }

    Value *lo = f.expr(threads.min, s), *hi = f.expr(threads.max, s);
    // Two versions when a thread runs several columns: one where every buffer the window reads
    // and writes in global memory is aligned for accessing them together (columns_aligned), the
    // other as it is.
    Value *aligned = columns > 1 ? columns_aligned(f, threads, columns, lo) : nullptr;
    if (!aligned) {
        column_window_version(f, threads, windows, slots, rows, columns, lo, hi, false, s);
    } else {
        llvm::BasicBlock *yes = llvm::BasicBlock::Create(f.ctx, threads.var + ".aligned", f.function);
        llvm::BasicBlock *no = llvm::BasicBlock::Create(f.ctx, threads.var + ".unaligned", f.function);
        llvm::BasicBlock *done = llvm::BasicBlock::Create(f.ctx, threads.var + ".versions.done", f.function);
        f.b.CreateCondBr(aligned, yes, no);
        f.b.SetInsertPoint(yes);
        column_window_version(f, threads, windows, slots, rows, columns, lo, hi, true, s);
        f.b.CreateBr(done);
        f.b.SetInsertPoint(no);
        column_window_version(f, threads, windows, slots, rows, columns, lo, hi, false, s);
        f.b.CreateBr(done);
        f.b.SetInsertPoint(done);
    }
    for (size_t i = 0; i < windows.size(); ++i) f.storage[windows[i]] = saved[i];
}

// One version of column_window_for's thread loop (`aligned`: its inputs are aligned for its
// columns' accesses together, columns_aligned).
void column_window_version(FunctionLowering &f, const poly::LoopNode &threads, const std::vector<size_t> &windows,
                           const std::vector<std::vector<Value *>> &slots, const poly::LoopNode *rows, int columns, Value *lo,
                           Value *hi, bool aligned, Scope &s) {
    Value *count = trip_count(f, lo, hi, threads.step);
    Value *groups = f.b.CreateSDiv(f.b.CreateAdd(count, f.i64(columns - 1)), f.i64(columns));
    ThreadSteps steps(f, threads.var, groups);
    Value *k = steps.k;
    // Column c is the first plus c steps (so that a load's column is the first's plus a constant).
    std::vector<Value *> xs{f.b.CreateAdd(lo, f.b.CreateMul(f.b.CreateMul(k, f.i64(columns)), f.i64(threads.step)), threads.var, false, true)};
    for (int c = 1; c < columns; ++c) xs.push_back(f.b.CreateAdd(xs[0], f.i64(int64_t(c) * threads.step), threads.var, false, true));
    f.kernel->aligned_column = aligned ? xs[0] : nullptr;
    f.kernel->aligned_columns = columns;
    // The thread's columns all within the loop (every thread but the last of a tile whose width
    // is not a multiple of the columns): run with no test per column and row, which also lets
    // LLVM load the columns' shared inputs together.
    if (columns > 1) {
        Value *full = threads.step > 0 ? f.b.CreateICmpSLE(xs.back(), hi) : f.b.CreateICmpSGE(xs.back(), hi);
        llvm::BasicBlock *all = llvm::BasicBlock::Create(f.ctx, threads.var + ".all_columns", f.function);
        llvm::BasicBlock *some = llvm::BasicBlock::Create(f.ctx, threads.var + ".some_columns", f.function);
        llvm::BasicBlock *done = llvm::BasicBlock::Create(f.ctx, threads.var + ".columns_done", f.function);
        f.b.CreateCondBr(full, all, some);
        f.b.SetInsertPoint(all);
        column_window_body(f, threads, windows, slots, rows, xs, nullptr, s);
        f.b.CreateBr(done);
        f.b.SetInsertPoint(some);
        column_window_body(f, threads, windows, slots, rows, xs, hi, s);
        f.b.CreateBr(done);
        f.b.SetInsertPoint(done);
    } else {
        column_window_body(f, threads, windows, slots, rows, xs, hi, s);
    }
    f.kernel->aligned_column = nullptr;
    steps.finish();
}

// A thread's columns `xs` of a column window (the columns past `hi` skipped, none if null):
// the thread loop's body, its row loop lowered by window_row.
void column_window_body(FunctionLowering &f, const poly::LoopNode &threads, const std::vector<size_t> &windows,
                        const std::vector<std::vector<Value *>> &slots, const poly::LoopNode *rows, const std::vector<Value *> &xs,
                        Value *hi, Scope &s) {
    Scope inside = s;
    inside.vars[threads.var] = xs[0];
    bool saved_single = f.kernel->single;
    f.kernel->single = true;
    f.kernel->window_loop = rows;
    f.kernel->window_rows = [&](const poly::LoopNode &loop, Scope &around) {
        f.kernel->window_loop = nullptr;
        // gpu_unroll_rows rows an iteration, then the rows left one at a time: each thread
        // issues the loads of several rows before it uses them (jammed_rows).
        int unroll = std::max(1, f.options.gpu_unroll_rows);
        Value *first = f.expr(loop.min, around), *last = f.expr(loop.max, around);
        Value *count = trip_count(f, first, last, loop.step);
        Value *rest = f.b.CreateAdd(first, f.b.CreateMul(f.b.CreateSub(count, f.b.CreateSRem(count, f.i64(unroll))), f.i64(loop.step)));
        poly::LoopNode by_unroll = loop;
        by_unroll.step = loop.step * unroll;
        f.serial_for(by_unroll, around, first, f.b.CreateSub(rest, f.i64(1)), false, false, [&](Value *y) {
            Scope row = around;
            for (int j = 0; j < unroll; ++j)
                window_row(f, loop, threads, windows, slots, xs, hi, j == 0 ? y : f.b.CreateAdd(y, f.i64(int64_t(j) * loop.step), "", false, true), row);
        });
        f.serial_for(loop, around, rest, last, false, true, [&](Value *y) {
            Scope row = around;
            window_row(f, loop, threads, windows, slots, xs, hi, y, row);
        });
    };
    f.node(threads.body, inside);
    f.kernel->window_loop = nullptr;
    f.kernel->window_rows = nullptr;
    f.kernel->single = saved_single;
}
} // namespace

std::optional<int64_t> FunctionLowering::constant_offset(Value *v, Value *base) {
    if (v == base) return int64_t(0);
    if (llvm::isa<llvm::SExtInst>(v) || llvm::isa<llvm::ZExtInst>(v) || llvm::isa<llvm::TruncInst>(v))
        return constant_offset(llvm::cast<llvm::CastInst>(v)->getOperand(0), base);
    auto *o = llvm::dyn_cast<llvm::BinaryOperator>(v);
    if (!o) return std::nullopt;
    auto *k0 = llvm::dyn_cast<llvm::ConstantInt>(o->getOperand(0));
    auto *k1 = llvm::dyn_cast<llvm::ConstantInt>(o->getOperand(1));
    if (o->getOpcode() == llvm::Instruction::Add && (k0 || k1)) {
        std::optional<int64_t> r = constant_offset(o->getOperand(k1 ? 0 : 1), base);
        if (r) return *r + (k1 ? k1 : k0)->getSExtValue();
    }
    if (o->getOpcode() == llvm::Instruction::Sub && k1) {
        std::optional<int64_t> r = constant_offset(o->getOperand(0), base);
        if (r) return *r - k1->getSExtValue();
    }
    return std::nullopt;
}

Value *FunctionLowering::window_address(const StorageView &view, const std::vector<Value *> &coords) {
    Value *row = widened_index(coords[size_t(view.window_dim)]);
    Value *slot;
    if (view.window_anchor && view.window_row) {
        std::optional<int64_t> ahead = FunctionLowering::constant_offset(row, view.window_row);
        slot = b.CreateSub(i64(*view.window_anchor), ahead ? i64(*ahead) : b.CreateSub(row, view.window_row));
    } else {
        Value *r = b.CreateSRem(row, i64(view.window_rows));
        slot = b.CreateSelect(b.CreateICmpSLT(r, i64(0)), b.CreateAdd(r, i64(view.window_rows)), r);
    }
    return b.CreateInBoundsGEP(storage_type(view.type), view.base, slot);
}

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
