// Explicit vectorization of loops marked "vector" (the step itself: vector_step.h): a loop's
// whole steps, the peel that aligns a streaming store and the remainder, each of the last two one
// masked step on AVX-512 or scalar iterations; a register tile's blocks as straight steps.
#include "vector_step.h"

namespace tessera::codegen {

// Vectorizes `n` over [lo, hi] if its body allows it; returns false (emitting nothing) otherwise.
bool FunctionLowering::vector_for(const poly::LoopNode &n, Scope &s, Value *lo, Value *hi, int64_t known_count) {
    int w = vector_lanes(n);
    if (w == 0) return known_count == 0 && split_vector_guards(n, s, lo, hi);
    // A register tile's sub-block narrower than a vector (register_tile_lowering.cpp): vectors
    // of its width.
    if (known_count >= 4 && known_count < w && (known_count & (known_count - 1)) == 0) w = int(known_count);
    std::vector<const poly::LoopNode *> calls;
    body_calls(n.body, calls);
    const StorageView *stream_view = nullptr;
    const poly::LoopNode *stream_call = nullptr;
    for (const poly::LoopNode *c : calls) {
        const StorageView &view = view_of(m.statements[size_t(p.statements[size_t(c->statement)].statement)].func);
        if (view.output && options.streaming_output_stores && !stream_view) {
            stream_view = &view;
            stream_call = c;
        }
    }
    VectorLowering v(*this, w);

    if (known_count > 0 && known_count % w == 0 && known_count / w <= 8) {
        // A block of a register tile (register_tile_lowering.cpp): its steps one after another,
        // no loop, so that each vector's address is plain in the loop around (and LLVM can
        // keep it in a register there).
        // Inside a register tile's row (tile_slot is the row's first slot), each step is a slot.
        VScope vs;
        for (const auto &kv : s.vars) vs[kv.first] = Lanes{Lanes::Kind::Uniform, kv.second, 0, nullptr};
        int first_slot = tile_slot;
        for (int64_t step = 0; step < known_count; step += w) {
            if (first_slot >= 0) tile_slot = first_slot + int(step / w);
            if (!tile_masks.empty()) v.set_mask(tile_masks.at(size_t(step / w)));  // (null: every lane)
            vs[n.var] = Lanes{Lanes::Kind::Affine, b.CreateAdd(lo, i64(step), "", false, true), 1, nullptr};
            for (const poly::LoopNode *c : calls) v.call(*c, vs, false);
        }
        tile_slot = first_slot;
        return true;
    }

    // Peel to align the first streaming store: its address at x = lo, in elements, modulo w.
    // Loop control in int64, as in serial_for.
    Value *count = b.CreateAdd(b.CreateSub(hi, lo), i64(1));
    Value *peel = i64(0);
    if (stream_view) {
        Scope probe = s;
        probe.vars[n.var] = lo;
        const poly::ExecStatement &e = p.statements[size_t(stream_call->statement)];
        Scope body = probe;
        for (size_t i = 0; i < e.dims.size(); ++i) body.vars[e.dims[i]] = expr(stream_call->args[i], probe);
        std::vector<Value *> coords;
        for (const Expr &x : e.store) coords.push_back(expr(x, body));
        Value *addr = b.CreatePtrToInt(address(*stream_view, coords), b.getInt64Ty());
        int64_t bytes = std::max(1, stream_view->type.bytes());
        Value *elem = b.CreateLShr(addr, uint64_t(__builtin_ctzll(uint64_t(bytes))));
        Value *mis = b.CreateAnd(elem, uint64_t(w - 1));
        peel = b.CreateAnd(b.CreateSub(i64(w), mis), i64(w - 1));
        // An element-misaligned buffer cannot be aligned by peeling: no streaming then.
        Value *element_aligned = b.CreateICmpEQ(b.CreateAnd(addr, uint64_t(bytes - 1)), b.getInt64(0));
        peel = b.CreateSelect(element_aligned, peel, i64(0));
        // The probe's arithmetic may overflow (nsw, poison) when the loop is empty.
        peel = b.CreateFreeze(b.CreateSelect(b.CreateICmpSLT(peel, count), peel, count));
    }
    Value *start = b.CreateAdd(lo, peel);
    Value *vector_count = b.CreateMul(b.CreateSDiv(b.CreateSub(count, peel), i64(w)), i64(w));
    Value *end = b.CreateAdd(start, vector_count);  // exclusive

    // A step's calls whose stores a later call overwrites are left out, in the masked steps too
    // (the scalar iterations around run them all).
    std::vector<bool> dead = overwritten_calls(*this, calls, n.var);
    std::vector<const poly::LoopNode *> live;
    for (size_t i = 0; i < calls.size(); ++i)
        if (!dead[i]) live.push_back(calls[i]);

    // The iterations before the first aligned store and after the last whole step (fewer than
    // W each): one masked step where the target masks vector accesses cheaply (AVX-512) and the
    // step's accesses are all contiguous or uniform, else scalar iterations. A DNN's rows are
    // short (56, 28, 14, 7 elements), where a scalar loop ran a quarter of each row: conv2d's
    // zero-padded copy of its input, 58 elements a row, spent 10 of them in a scalar loop of 45
    // instructions each; harris's output tiles spent 2.4% of its time in the scalar iterations
    // that align its streaming stores. A masked gather or scatter is lane by lane on x86, each
    // lane behind a test: bilateral_grid's histogram of 2 channels in 8 lanes took 13.5 -> 25 ms
    // as a masked step of scatters; such steps stay scalar.
    auto masked_step = [&](Value *at, Value *lanes, const char *name) {
        if (options.vector_bits < 512 || tile_view) return false;
        llvm::BasicBlock *before = b.GetInsertBlock();
        llvm::BasicBlock *step = llvm::BasicBlock::Create(ctx, n.var + name, function);
        b.SetInsertPoint(step);
        VectorLowering t(*this, w);
        t.set_mask(b.CreateICmpSLT(lane_numbers(w), b.CreateVectorSplat(unsigned(w), lanes)));
        VScope ms;
        for (const auto &kv : s.vars) ms[kv.first] = Lanes{Lanes::Kind::Uniform, kv.second, 0, nullptr};
        ms[n.var] = Lanes{Lanes::Kind::Affine, at, 1, nullptr};
        for (const poly::LoopNode *c : live) t.call(*c, ms, false);
        if (t.masked_lane_accesses() == 0) {
            llvm::BasicBlock *done = llvm::BasicBlock::Create(ctx, n.var + name + "_done", function);
            b.CreateBr(done);
            b.SetInsertPoint(before);
            b.CreateCondBr(b.CreateICmpSGT(lanes, i64(0)), step, done);
            b.SetInsertPoint(done);
            return true;
        }
        // The step's blocks (it and those emitted after it, at the function's end) go; nothing
        // outside them uses their values.
        std::vector<llvm::BasicBlock *> emitted;
        for (auto it = step->getIterator(); it != function->end(); ++it) emitted.push_back(&*it);
        for (llvm::BasicBlock *bb : emitted) bb->dropAllReferences();
        for (llvm::BasicBlock *bb : emitted) bb->eraseFromParent();
        b.SetInsertPoint(before);
        return false;
    };

    // Without a streaming store there are no iterations before the first step: no loop at all
    // (LLVM kept an empty one, a copy of the body that ran when lo was INT64_MIN only, through
    // every pass down to machine code).
    if (stream_view && !masked_step(lo, peel, ".vpeel")) serial_for(n, s, lo, b.CreateSub(start, i64(1)), false, true);

    VScope vs;
    for (const auto &kv : s.vars) vs[kv.first] = Lanes{Lanes::Kind::Uniform, kv.second, 0, nullptr};
    v.plan_rotation(rotated_load_groups(*this, live, n.var, w), live);
    llvm::BasicBlock *head = llvm::BasicBlock::Create(ctx, n.var + ".vhead", function);
    llvm::BasicBlock *body = llvm::BasicBlock::Create(ctx, n.var + ".vbody", function);
    llvm::BasicBlock *exit = llvm::BasicBlock::Create(ctx, n.var + ".vexit", function);
    std::vector<Value *> first_previous;
    if (v.rotating()) {
        // The first step's previous vectors load what the first step reads: only when it runs.
        llvm::BasicBlock *first = llvm::BasicBlock::Create(ctx, n.var + ".vfirst", function, head);
        b.CreateCondBr(b.CreateICmpSLT(start, end), first, exit);
        b.SetInsertPoint(first);
        vs[n.var] = Lanes{Lanes::Kind::Affine, start, 1, nullptr};
        first_previous = v.first_previous(vs);
    }
    llvm::BasicBlock *pre = b.GetInsertBlock();
    b.CreateBr(head);
    b.SetInsertPoint(head);
    llvm::PHINode *x = b.CreatePHI(b.getInt64Ty(), 2, n.var + ".v");
    x->addIncoming(start, pre);
    v.previous_phis(first_previous, pre);
    b.CreateCondBr(b.CreateICmpSLT(x, end), body, exit);
    b.SetInsertPoint(body);
    vs[n.var] = Lanes{Lanes::Kind::Affine, x, 1, nullptr};
    v.set_prefetch(options.input_prefetch_bytes);
    if (v.rotating()) v.load_highest(vs);
    for (const poly::LoopNode *c : live) v.call(*c, vs, stream_view != nullptr);
    v.set_prefetch(0);
    Value *next = b.CreateAdd(x, i64(w), "", false, true);
    v.close_phis(b.GetInsertBlock());
    x->addIncoming(next, b.GetInsertBlock());
    llvm::BranchInst *back = b.CreateBr(head);
    // Already vectorized: keep LLVM from vectorizing it again (or unrolling it, but as below).
    std::vector<llvm::Metadata *> md{nullptr, llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.isvectorized"),
                                                                       llvm::ConstantAsMetadata::get(b.getInt32(1))})};
    // A loop with rotated loads and few loads in all runs two steps per iteration: each step's
    // loaded vector is the next one's previous without a register copy between them
    // (jacobi-1d, 2000 x 1000 planes, one load per step: 0.17 ms as one step, 0.145 as two,
    // 0.15 as four). With more, the two steps' addresses ran out of registers (heat-3d, five
    // loads per step: 550 ms as one step, 760-890 as two).
    if (v.rotating() && v.loads_per_step() <= 2)
        md.push_back(llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.unroll.count"),
                                             llvm::ConstantAsMetadata::get(b.getInt32(2))}));
    llvm::MDNode *loop = llvm::MDNode::getDistinct(ctx, md);
    loop->replaceOperandWith(0, loop);
    back->setMetadata(llvm::LLVMContext::MD_loop, loop);
    b.SetInsertPoint(exit);

    if (!masked_step(end, b.CreateAdd(b.CreateSub(hi, end), i64(1)), ".vtail")) serial_for(n, s, end, hi, false, true);
    return true;
}

Value *FunctionLowering::contiguous_store_address(const poly::LoopNode &n, Scope &s, Value *x) {
    std::vector<const poly::LoopNode *> calls;
    int w = vector_lanes(n);
    if (w == 0 || !body_calls(n.body, calls) || calls.size() != 1) return nullptr;
    VectorLowering v(*this, w);
    VScope vs;
    for (const auto &kv : s.vars) vs[kv.first] = Lanes{Lanes::Kind::Uniform, kv.second, 0, nullptr};
    vs[n.var] = Lanes{Lanes::Kind::Affine, x, 1, nullptr};
    return v.contiguous_store_address(*calls[0], vs);
}

// Orders this thread's non-temporal stores before anything that follows (a barrier, the
// return to the caller).
void FunctionLowering::fence_streaming_stores() {
    if (!streamed) return;
    llvm::Triple triple(module.getTargetTriple());
    if (triple.isX86()) b.CreateCall(llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::x86_sse_sfence));
    else b.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent);
}

} // namespace tessera::codegen
