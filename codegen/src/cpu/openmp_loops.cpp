// Parallel loops on the OpenMP runtime (libomp), the way Polly's LoopGeneratorsKMP does it: the
// loop body is emitted into an outlined function that receives every live value through one
// context array, and __kmpc_fork_call runs it on the team; each thread allocates its own
// scratchpads and takes chunks of iterations (guided: large first) from __kmpc_dispatch_next_8.

#include "../function_lowering.h"
#include "../loop_generator.h"

namespace tessera::codegen {

using llvm::Value;

namespace {

llvm::StructType *ident_type(llvm::LLVMContext &ctx) {
    if (auto *t = llvm::StructType::getTypeByName(ctx, "struct.ident_t")) return t;
    auto *i32 = llvm::Type::getInt32Ty(ctx);
    return llvm::StructType::create(ctx, {i32, i32, i32, i32, llvm::PointerType::get(ctx, 0)}, "struct.ident_t");
}

// The source location libomp wants with every call.
llvm::Constant *ident(llvm::Module &m) {
    if (auto *g = m.getNamedGlobal(".tessera.omp.loc")) return g;
    llvm::LLVMContext &ctx = m.getContext();
    llvm::IRBuilder<> b(ctx);
    llvm::Constant *str = llvm::ConstantDataArray::getString(ctx, ";tessera;pipeline;0;0;;");
    auto *sg = new llvm::GlobalVariable(m, str->getType(), true, llvm::GlobalValue::PrivateLinkage, str, ".tessera.omp.str");
    llvm::Constant *init = llvm::ConstantStruct::get(
        ident_type(ctx), {b.getInt32(0), b.getInt32(2 /* KMP_IDENT_KMPC */), b.getInt32(0), b.getInt32(0), sg});
    return new llvm::GlobalVariable(m, ident_type(ctx), true, llvm::GlobalValue::PrivateLinkage, init, ".tessera.omp.loc");
}

} // namespace

namespace {

// Parallel loops on OpenMP threads.
class OpenMPLoopGenerator : public ParallelLoopGenerator {
public:
    void emit(FunctionLowering &f, const poly::LoopNode &n, Scope &s) override;
};

} // namespace

std::unique_ptr<ParallelLoopGenerator> make_openmp_loop_generator() { return std::make_unique<OpenMPLoopGenerator>(); }

void OpenMPLoopGenerator::emit(FunctionLowering &f, const poly::LoopNode &n, Scope &s) {
    Value *lo = f.expr(n.min, s);
    Value *hi = f.expr(n.max, s);
    // Collapsed: threads share the iterations 0 .. n0 * n1 - 1 of the two loops (n0, n1 their
    // trip counts); iteration L is outer lo + L / n1, inner lo1 + L % n1. OpenMP's collapse.
    const poly::LoopNode *inner = collapsible_inner(n);
    Value *outer_lo = lo, *inner_lo = nullptr, *inner_n = nullptr;
    if (inner) {
        inner_lo = f.expr(inner->min, s);
        Value *zero = f.i64(0);
        auto trips = [&](Value *l, Value *h) {
            Value *t = f.b.CreateAdd(f.b.CreateSub(h, l), f.i64(1));
            return f.b.CreateSelect(f.b.CreateICmpSGT(t, zero), t, zero);
        };
        inner_n = trips(inner_lo, f.expr(inner->max, s));
        lo = zero;
        hi = f.b.CreateSub(f.b.CreateMul(trips(outer_lo, hi), inner_n), f.i64(1));
    }

    // Everything the body may use: the scope's values, the storage and input views.
    std::vector<Value *> extra = {lo, hi};
    if (inner) extra.insert(extra.end(), {outer_lo, inner_lo, inner_n});
    OutlinedValues live = outlined_values(f, s, extra);

    // The outlined function: void(i32 *gtid, i32 *btid, i64 *context).
    llvm::PointerType *ptr = llvm::PointerType::get(f.ctx, 0);
    llvm::FunctionType *fty = llvm::FunctionType::get(f.b.getVoidTy(), {ptr, ptr, ptr}, false);
    llvm::Function *outlined = llvm::Function::Create(fty, llvm::GlobalValue::InternalLinkage,
                                                      f.function->getName() + ".par." + n.var, f.module);
    outlined->addFnAttr(llvm::Attribute::NoUnwind);
    // Called directly where the loop has one iteration (below): never inlined there, which would
    // compile the body twice.
    outlined->addFnAttr(llvm::Attribute::NoInline);

    // Emit into the outlined function.
    OutlinedBody body(f, outlined);
    Scope scope;
    std::vector<Value *> mine = load_context(f, live, outlined->getArg(2), scope);
    Value *my_lo = mine[0], *my_hi = mine[1];
    Value *my_outer_lo = inner ? mine[2] : nullptr, *my_inner_lo = inner ? mine[3] : nullptr,
          *my_inner_n = inner ? mine[4] : nullptr;

    // This thread's scratchpads: those of the groups whose statements run inside the loop.
    for (int g : groups_below(f.p, n.body, false)) f.allocate_scratch(g);

    // Guided worksharing of [lo, hi]: each thread takes chunks of the remaining iterations, large
    // ones first and smaller ones towards the end, until none remain. A thread slowed by another
    // process, or given the costlier tiles (edge tiles are narrower), takes fewer; a static
    // split left the other thread waiting at the region's end (8% of harris's samples).
    llvm::Constant *loc = ident(f.module);
    Value *gtid = f.b.CreateLoad(f.b.getInt32Ty(), outlined->getArg(0), "gtid");
    llvm::IRBuilder<> ib(&outlined->getEntryBlock(), outlined->getEntryBlock().begin());
    Value *plast = ib.CreateAlloca(f.b.getInt32Ty());
    Value *plo = ib.CreateAlloca(f.b.getInt64Ty());
    Value *phi = ib.CreateAlloca(f.b.getInt64Ty());
    Value *pstride = ib.CreateAlloca(f.b.getInt64Ty());
    llvm::FunctionCallee init = f.module.getOrInsertFunction("__kmpc_dispatch_init_8", f.b.getVoidTy(), ptr,
                                                             f.b.getInt32Ty(), f.b.getInt32Ty(), f.b.getInt64Ty(),
                                                             f.b.getInt64Ty(), f.b.getInt64Ty(), f.b.getInt64Ty());
    llvm::BasicBlock *shared = llvm::BasicBlock::Create(f.ctx, "omp.shared", outlined);
    llvm::BasicBlock *whole = llvm::BasicBlock::Create(f.ctx, "omp.whole", outlined);
    llvm::BasicBlock *dispatch = llvm::BasicBlock::Create(f.ctx, "omp.dispatch", outlined);
    llvm::BasicBlock *chunk = llvm::BasicBlock::Create(f.ctx, "omp.chunk", outlined);
    llvm::BasicBlock *done = llvm::BasicBlock::Create(f.ctx, "omp.done", outlined);
    // Called by the serialized region below (a null bound thread id), the body runs [lo, hi] as
    // one chunk without the worksharing calls: Debian's libomp formats a debug trace string in
    // every __kmpc_dispatch_init_8, about 1 us, a third of a small pipeline's run().
    Value *alone = f.b.CreateICmpEQ(outlined->getArg(1), llvm::ConstantPointerNull::get(ptr), "alone");
    f.b.CreateCondBr(alone, whole, shared);
    f.b.SetInsertPoint(whole);
    f.b.CreateStore(my_lo, plo);
    f.b.CreateStore(my_hi, phi);
    f.b.CreateCondBr(f.b.CreateICmpSLE(my_lo, my_hi), chunk, done);  // a chunk is never empty
    f.b.SetInsertPoint(shared);
    f.b.CreateCall(init, {loc, gtid, f.b.getInt32(36 /* kmp_sch_guided_chunked */), my_lo, my_hi, f.i64(n.step), f.i64(1)});
    llvm::FunctionCallee next = f.module.getOrInsertFunction(
        "__kmpc_dispatch_next_8", f.b.getInt32Ty(), ptr, f.b.getInt32Ty(), ptr, ptr, ptr, ptr);
    f.b.CreateBr(dispatch);
    f.b.SetInsertPoint(dispatch);
    Value *more = f.b.CreateCall(next, {loc, gtid, plast, plo, phi, pstride});
    f.b.CreateCondBr(f.b.CreateICmpNE(more, f.b.getInt32(0)), chunk, done);
    f.b.SetInsertPoint(chunk);
    Value *first = f.b.CreateLoad(f.b.getInt64Ty(), plo);
    Value *last = f.b.CreateLoad(f.b.getInt64Ty(), phi);
    ++f.parallel_depth;
    if (inner) {
        // This chunk's iterations first .. last of the collapsed space, as the two loops again
        // (each an induction variable LLVM can analyze): outer iterations first / n1 .. last / n1,
        // each running the inner loop over all of its range but the first and last, which start
        // at first % n1 and stop at last % n1.
        Value *n1 = f.b.CreateSelect(f.b.CreateICmpSGT(my_inner_n, f.i64(0)), my_inner_n, f.i64(1));
        Value *q0 = f.b.CreateSDiv(first, n1), *q1 = f.b.CreateSDiv(last, n1);
        Value *r0 = f.b.CreateSRem(first, n1), *r1 = f.b.CreateSRem(last, n1);
        f.serial_for(n, scope, q0, q1, false, false, [&](Value *t) {
            Scope body = scope;
            body.vars[n.var] = f.b.CreateAdd(my_outer_lo, t, n.var, false, true);
            Value *from = f.b.CreateSelect(f.b.CreateICmpEQ(t, q0), r0, f.i64(0));
            Value *to = f.b.CreateSelect(f.b.CreateICmpEQ(t, q1), r1, f.b.CreateSub(n1, f.i64(1)));
            f.serial_for(*inner, body, f.b.CreateAdd(my_inner_lo, from), f.b.CreateAdd(my_inner_lo, to), false);
        });
    } else if (!(n.vectorize && f.vector_for(n, scope, first, last))) {
        f.serial_for(n, scope, first, last, n.vectorize);
    }
    --f.parallel_depth;
    f.b.CreateCondBr(alone, done, dispatch);
    f.b.SetInsertPoint(done);
    f.fence_streaming_stores();
    f.free_heap();  // the body's scratchpads
    f.b.CreateRetVoid();

    // Back in the parent: store what the body reads, and fork the team.
    body.finish();
    Value *context = store_context(f, live, "omp.context");
    llvm::FunctionCallee num = f.module.getOrInsertFunction("__kmpc_global_thread_num", f.b.getInt32Ty(), ptr);
    Value *parent_gtid = f.b.CreateCall(num, {loc}, "parent.gtid");
    // One iteration or none (a small tensor, a one-element pipeline): the body runs on this
    // thread in a serialized parallel region, as OpenMP's `if` clause does, instead of waking
    // the team: a one-element pipeline's run() took 8-9 us with two threads while another
    // process kept the second core busy, 1.2 us on one thread.
    llvm::Function *parent = f.b.GetInsertBlock()->getParent();
    llvm::BasicBlock *serial = llvm::BasicBlock::Create(f.ctx, "omp.serial", parent);
    llvm::BasicBlock *team = llvm::BasicBlock::Create(f.ctx, "omp.team", parent);
    llvm::BasicBlock *joined = llvm::BasicBlock::Create(f.ctx, "omp.joined", parent);
    f.b.CreateCondBr(f.b.CreateICmpSLT(f.b.CreateSub(hi, lo), f.i64(n.step)), serial, team);
    f.b.SetInsertPoint(serial);
    {
        llvm::IRBuilder<> pb(&parent->getEntryBlock(), parent->getEntryBlock().begin());
        Value *gtid_slot = pb.CreateAlloca(f.b.getInt32Ty(), nullptr, "serial.gtid");
        f.b.CreateStore(parent_gtid, gtid_slot);
        llvm::FunctionCallee enter =
            f.module.getOrInsertFunction("__kmpc_serialized_parallel", f.b.getVoidTy(), ptr, f.b.getInt32Ty());
        llvm::FunctionCallee leave =
            f.module.getOrInsertFunction("__kmpc_end_serialized_parallel", f.b.getVoidTy(), ptr, f.b.getInt32Ty());
        f.b.CreateCall(enter, {loc, parent_gtid});
        f.b.CreateCall(outlined, {gtid_slot, llvm::ConstantPointerNull::get(ptr), context});
        f.b.CreateCall(leave, {loc, parent_gtid});
        f.b.CreateBr(joined);
    }
    f.b.SetInsertPoint(team);
    if (f.options.threads > 0) {
        llvm::FunctionCallee push =
            f.module.getOrInsertFunction("__kmpc_push_num_threads", f.b.getVoidTy(), ptr, f.b.getInt32Ty(), f.b.getInt32Ty());
        f.b.CreateCall(push, {loc, parent_gtid, f.b.getInt32(uint32_t(f.options.threads))});
    }
    llvm::FunctionType *fork_ty = llvm::FunctionType::get(f.b.getVoidTy(), {ptr, f.b.getInt32Ty(), ptr}, true);
    llvm::FunctionCallee fork = f.module.getOrInsertFunction("__kmpc_fork_call", fork_ty);
    f.b.CreateCall(fork, {loc, f.b.getInt32(1), outlined, context});
    f.b.CreateBr(joined);
    f.b.SetInsertPoint(joined);
}

} // namespace tessera::codegen
