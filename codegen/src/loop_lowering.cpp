// The loop nest → LLVM IR: loops, conditionals, marks and statement instances.
#include "function_lowering.h"
#include "loop_generator.h"

namespace tessera::codegen {

using llvm::Value;

void FunctionLowering::node(const poly::LoopNodePtr &n, Scope &s) {
    if (!n) return;
    if (options.gpu && gpu_node(n, s)) return;
    switch (n->kind) {
    case poly::LoopNode::Kind::Block:
        for (const auto &c : n->children) node(c, s);
        return;
    case poly::LoopNode::Kind::Mark: {
        std::optional<poly::Mark> mark = poly::parse_mark(n->mark);
        if (mark && mark->kind == poly::Mark::Kind::RegisterTile && register_tile(*n, *mark, s)) return;
        node(n->body, s);
        return;
    }
    case poly::LoopNode::Kind::If: {
        Value *c = expr(n->condition, s);
        llvm::BasicBlock *then_bb = llvm::BasicBlock::Create(ctx, "then", function);
        llvm::BasicBlock *else_bb = n->else_case ? llvm::BasicBlock::Create(ctx, "else", function) : nullptr;
        llvm::BasicBlock *done = llvm::BasicBlock::Create(ctx, "endif", function);
        b.CreateCondBr(c, then_bb, else_bb ? else_bb : done);
        b.SetInsertPoint(then_bb);
        node(n->then_case, s);
        b.CreateBr(done);
        if (else_bb) {
            b.SetInsertPoint(else_bb);
            node(n->else_case, s);
            b.CreateBr(done);
        }
        b.SetInsertPoint(done);
        return;
    }
    case poly::LoopNode::Kind::For:
        if (n->parallel && parallel_depth == 0) {
            parallel_loops->emit(*this, *n, s);
        } else {
            Value *lo = expr(n->min, s), *hi = expr(n->max, s);
            bool vector = n->vectorize && !kernel;  // a GPU thread's code stays scalar
            if (!(vector && vector_for(*n, s, lo, hi))) serial_for(*n, s, lo, hi, vector);
        }
        return;
    case poly::LoopNode::Kind::Call: call(*n, s); return;
    }
}

namespace {
// Whether a loop below `n` (not `n` itself) is a vector loop; `storing_constant`: one that only
// stores constants (a zero initialization), which LLVM turns into one memset.
bool encloses_vector_loop(const poly::LoopNode &n, const poly::Program &p, const poly::Model &m, bool storing_constant) {
    std::function<bool(const poly::LoopNodePtr &, bool)> has = [&](const poly::LoopNodePtr &c, bool in_vector) -> bool {
        if (!c) return false;
        switch (c->kind) {
        case poly::LoopNode::Kind::For: return has(c->body, in_vector || c->vectorize);
        case poly::LoopNode::Kind::Mark: return has(c->body, in_vector);
        case poly::LoopNode::Kind::If: return has(c->then_case, in_vector) || has(c->else_case, in_vector);
        case poly::LoopNode::Kind::Block:
            for (const poly::LoopNodePtr &k : c->children)
                if (has(k, in_vector)) return true;
            return false;
        case poly::LoopNode::Kind::Call: {
            if (!in_vector) return false;
            if (!storing_constant) return true;
            const poly::Statement &st = m.statements[size_t(p.statements[size_t(c->statement)].statement)];
            return st.value.defined() && ir::is_const(st.value);
        }
        }
        return false;
    };
    return has(n.body, false);
}
} // namespace

// for (var = lo; var <= hi; var += step) body, with the vectorizer's metadata when `vector`.
// The counter is int64, as the loop nest's expressions are: an int32 one would overflow past a
// loop that ends at INT32_MAX.
// its accesses form one access group declared parallel (the vector mark was checked to carry no
// dependence), so LLVM vectorizes without runtime alias checks.
void FunctionLowering::serial_for(const poly::LoopNode &n, Scope &s, Value *lo, Value *hi, bool vector, bool remainder,
                                  const std::function<void(llvm::Value *)> &emit_body) {
    llvm::BasicBlock *pre = b.GetInsertBlock();
    llvm::BasicBlock *head = llvm::BasicBlock::Create(ctx, n.var + ".head", function);
    llvm::BasicBlock *body = llvm::BasicBlock::Create(ctx, n.var + ".body", function);
    llvm::BasicBlock *latch = llvm::BasicBlock::Create(ctx, n.var + ".latch", function);
    llvm::BasicBlock *exit = llvm::BasicBlock::Create(ctx, n.var + ".exit", function);
    b.CreateBr(head);
    b.SetInsertPoint(head);
    llvm::PHINode *i = b.CreatePHI(b.getInt64Ty(), 2, n.var + ".wide");
    i->addIncoming(lo, pre);
    b.CreateCondBr(b.CreateICmpSLE(i, hi), body, exit);

    b.SetInsertPoint(body);
    llvm::MDNode *saved_group = access_group;
    if (vector) access_group = llvm::MDNode::getDistinct(ctx, {});
    if (emit_body) {
        emit_body(i);
    } else {
        Value *saved = s.vars.count(n.var) ? s.vars[n.var] : nullptr;
        s.vars[n.var] = i;
        node(n.body, s);
        if (saved) s.vars[n.var] = saved;
        else s.vars.erase(n.var);
    }
    b.CreateBr(latch);

    b.SetInsertPoint(latch);
    Value *next = b.CreateAdd(i, i64(n.step), n.var + ".next", false, true);
    i->addIncoming(next, latch);
    llvm::BranchInst *back = b.CreateBr(head);
    // (A register tile's loops, given their body as `emit_body`, are not looked into.)
    bool around_vector = !remainder && !n.plain && !vector && !emit_body && encloses_vector_loop(n, p, m, false);
    bool around_memset = around_vector && encloses_vector_loop(n, p, m, true);
    if (remainder || n.plain) {
        // The few iterations around an explicitly vectorized loop or a register tile's partial
        // block, or a loop of the case that runs only at degenerate sizes (LoopNode::plain):
        // not worth LLVM's time.
        llvm::MDNode *loop = llvm::MDNode::getDistinct(
            ctx, {nullptr,
                  llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.vectorize.enable"),
                                          llvm::ConstantAsMetadata::get(b.getFalse())}),
                  llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.unroll.disable")})});
        loop->replaceOperandWith(0, loop);
        back->setMetadata(llvm::LLVMContext::MD_loop, loop);
    } else if (vector || options.vector_width == 1 || around_vector) {
        std::vector<llvm::Metadata *> md = {nullptr};
        // A loop around a vector loop that stores a constant is not unrolled by LLVM: that
        // vector loop becomes one memset (a zero initialization of a row), the loops around it
        // then look nearly empty to LLVM's unroller, and their full unrolling made basic blocks
        // of a thousand vector stores, which the instruction schedulers handle in quadratic time
        // (a transformer layer's three zero-initialized attention products: 60 ms of machine
        // code each). Other loops around vector loops keep LLVM's full and partial unrolling of
        // constant trip counts, which folds their constants into the copies (with every loop
        // around a vector loop kept a loop, camera_pipe's loops over 3 colours ran 6% slower,
        // conv2d's 3 x 3 window 5-15%), but not its unrolling of run-time trip counts: that
        // copies the whole nest inside (a vector loop and its remainder, twice, plus a prologue
        // for the odd iteration) for no speed (A/B on ten apps, within noise), and heat-3d's
        // machine code took 112 -> 100 ms on one thread.
        if (around_memset)
            md.push_back(llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.unroll.disable")}));
        else if (around_vector)
            md.push_back(llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.unroll.runtime.disable")}));
        if (vector) {
            md.push_back(llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.vectorize.enable"),
                                                 llvm::ConstantAsMetadata::get(b.getTrue())}));
            md.push_back(llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.parallel_accesses"), access_group}));
        }
        // No vectors asked for: no loop gets them, not even an outer one that LLVM's full
        // unrolling of the inner loops leaves innermost (which the loop vectorizer would widen to
        // 64 lanes of gathers, 81 unrolled bodies each: 10 s of instruction scheduling).
        if (options.vector_width == 1)
            md.push_back(llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.vectorize.width"),
                                                 llvm::ConstantAsMetadata::get(b.getInt32(1))}));
        llvm::MDNode *loop = llvm::MDNode::getDistinct(ctx, md);
        loop->replaceOperandWith(0, loop);
        back->setMetadata(llvm::LLVMContext::MD_loop, loop);
    }
    access_group = saved_group;
    b.SetInsertPoint(exit);
}

// One statement instance: bind its dimensions, test its guards, store its value.
void FunctionLowering::call(const poly::LoopNode &n, Scope &s) {
    const poly::ExecStatement &e = p.statements[size_t(n.statement)];
    const poly::Statement &ms = m.statements[size_t(e.statement)];
    Scope body = s;
    index_mode = true;
    // The instance's coordinates: int64 in the loop nest, int32 (they fit: the regions are
    // checked at entry) in the statement.
    for (size_t i = 0; i < e.dims.size(); ++i) body.vars[e.dims[i]] = b.CreateTrunc(expr(n.args[i], s), b.getInt32Ty(), "", false, true);
    index_mode = false;
    llvm::BasicBlock *done = nullptr;
    if (!e.guards.empty()) {
        Value *ok = b.getTrue();
        for (const Expr &g : e.guards) ok = b.CreateAnd(ok, expr(g, body));
        llvm::BasicBlock *run = llvm::BasicBlock::Create(ctx, "guarded", function);
        done = llvm::BasicBlock::Create(ctx, "unguarded", function);
        b.CreateCondBr(ok, run, done);
        b.SetInsertPoint(run);
    }
    const StorageView &view = view_of(ms.func);
    std::vector<Value *> coords;
    index_mode = !view.scratch || view.window_dim >= 0;  // local coordinates wrap (Storage::Kind::Scratch)
    for (const Expr &c : e.store) coords.push_back(expr(c, body));
    index_mode = false;
    Value *v = expr(e.value, body);
    bool streaming = options.streaming_output_stores && view.output && access_group != nullptr;
    store(view, coords, v, streaming);
    if (done) {
        b.CreateBr(done);
        b.SetInsertPoint(done);
    }
}

Value *pack(llvm::IRBuilder<> &b, Value *v) {
    llvm::Type *t = v->getType();
    if (t->isPointerTy()) return b.CreatePtrToInt(v, b.getInt64Ty());
    if (t->isDoubleTy()) return b.CreateBitCast(v, b.getInt64Ty());
    if (t->isFloatTy()) return b.CreateZExt(b.CreateBitCast(v, b.getInt32Ty()), b.getInt64Ty());
    if (t->isIntegerTy(64)) return v;
    return b.CreateZExt(v, b.getInt64Ty());
}

Value *unpack(llvm::IRBuilder<> &b, Value *w, llvm::Type *t) {
    if (t->isPointerTy()) return b.CreateIntToPtr(w, t);
    if (t->isDoubleTy()) return b.CreateBitCast(w, t);
    if (t->isFloatTy()) return b.CreateBitCast(b.CreateTrunc(w, b.getInt32Ty()), t);
    if (t->isIntegerTy(64)) return w;
    return b.CreateTrunc(w, t);
}

namespace {

template <typename F>
void for_each_view(const FunctionLowering &f, F &&visit) {
    for (size_t i = 0; i < f.storage.size(); ++i) visit(false, i);
    // Inputs in the pipeline's order (the map's pointer order would make the IR differ from
    // run to run).
    for (size_t i = 0; i < f.m.graph.inputs.size(); ++i)
        if (f.inputs.count(f.m.graph.inputs[i].get())) visit(true, i);
}

} // namespace

OutlinedBody::OutlinedBody(FunctionLowering &f, llvm::Function *fn)
    : f_(f), parent_block_(f.b.GetInsertBlock()), parent_(f.function), storage_(f.storage), inputs_(f.inputs),
      heap_(f.heap_allocations), pooled_(f.pooled_buffers), streamed_(f.streamed) {
    f.heap_allocations.clear();
    f.pooled_buffers.clear();
    f.streamed = false;
    f.function = fn;
    f.b.SetInsertPoint(llvm::BasicBlock::Create(f.ctx, "entry", fn));
}

void OutlinedBody::finish() {
    f_.function = parent_;
    f_.storage = storage_;
    f_.inputs = inputs_;
    f_.heap_allocations = heap_;
    f_.pooled_buffers = pooled_;
    f_.streamed = streamed_;
    f_.b.SetInsertPoint(parent_block_);
}

OutlinedValues outlined_values(const FunctionLowering &f, const Scope &s, const std::vector<Value *> &extra) {
    OutlinedValues o;
    for (const auto &kv : s.vars) {
        o.names.push_back(kv.first);
        o.values.push_back(kv.second);
    }
    for_each_view(f, [&](bool input, size_t i) {
        const StorageView &v = input ? f.inputs.at(f.m.graph.inputs[i].get()) : f.storage[i];
        if (!v.base) return;
        o.values.push_back(v.base);
        for (Value *x : v.min) o.values.push_back(x);
        for (Value *x : v.stride) o.values.push_back(x);
    });
    o.values.insert(o.values.end(), extra.begin(), extra.end());
    return o;
}

namespace {
// Erases `v` and the instructions it was computed from (a load and its unpacking) when nothing
// uses them. True when `v` is gone.
bool erase_if_unused(Value *v) {
    auto *inst = llvm::dyn_cast<llvm::Instruction>(v);
    if (!inst || !inst->use_empty()) return false;
    while (inst && inst->use_empty()) {
        auto *operand = inst->getNumOperands() > 0 ? llvm::dyn_cast<llvm::Instruction>(inst->getOperand(0)) : nullptr;
        inst->eraseFromParent();
        inst = operand;
    }
    return true;
}
} // namespace

Value *store_context(FunctionLowering &f, OutlinedValues &o, const char *name) {
    llvm::IRBuilder<> entry_builder(&f.function->getEntryBlock(), f.function->getEntryBlock().begin());
    llvm::AllocaInst *context =
        entry_builder.CreateAlloca(llvm::ArrayType::get(f.b.getInt64Ty(), std::max<size_t>(1, o.values.size())), nullptr, name);
    for (size_t i = 0; i < o.values.size(); ++i) {
        if (!o.loaded.empty() && erase_if_unused(o.loaded[i])) continue;  // the body does not read it
        f.b.CreateStore(pack(f.b, o.values[i]), f.b.CreateConstInBoundsGEP2_64(context->getAllocatedType(), context, 0, i));
    }
    return context;
}

std::vector<Value *> load_context(FunctionLowering &f, OutlinedValues &o, Value *context, Scope &scope) {
    std::vector<Value *> values;
    for (size_t i = 0; i < o.values.size(); ++i) {
        Value *w = f.b.CreateLoad(f.b.getInt64Ty(), f.b.CreateConstInBoundsGEP1_64(f.b.getInt64Ty(), context, i));
        values.push_back(unpack(f.b, w, o.values[i]->getType()));
    }
    o.loaded = values;
    size_t k = 0;
    for (const std::string &name : o.names) scope.vars[name] = values[k++];
    for_each_view(f, [&](bool input, size_t i) {
        StorageView &v = input ? f.inputs.at(f.m.graph.inputs[i].get()) : f.storage[i];
        if (!v.base) return;
        v.base = values[k++];
        for (Value *&x : v.min) x = values[k++];
        for (Value *&x : v.stride) x = values[k++];
    });
    return std::vector<Value *>(values.begin() + long(k), values.end());
}

// The loop directly inside a parallel loop marked to collapse two loops, when the two can run
// as one iteration space: both step by 1, and the inner loop's bounds do not depend on the
// outer one (isl's tiles of a rectangular band). Null otherwise: the outer loop then runs alone
// on threads.
const poly::LoopNode *collapsible_inner(const poly::LoopNode &n) {
    if (n.collapse < 2 || n.step != 1 || !n.body || n.body->kind != poly::LoopNode::Kind::For) return nullptr;
    const poly::LoopNode &inner = *n.body;
    if (inner.step != 1 || inner.vectorize || inner.parallel) return nullptr;
    bool depends = false;
    for (const Expr &e : {inner.min, inner.max})
        ir::visit(e, [&](const Expr &x) {
            depends = depends || (x->op == Op::Var && x->name == n.var);
            return !depends;
        });
    return depends ? nullptr : &inner;
}

bool body_calls(const poly::LoopNodePtr &n, std::vector<const poly::LoopNode *> &calls) {
    if (!n) return true;
    if (n->kind == poly::LoopNode::Kind::Call) {
        calls.push_back(n.get());
        return true;
    }
    if (n->kind == poly::LoopNode::Kind::Block) {
        for (const auto &c : n->children)
            if (!body_calls(c, calls)) return false;
        return true;
    }
    if (n->kind == poly::LoopNode::Kind::Mark) return body_calls(n->body, calls);
    return false;  // inner loops or conditionals: leave them to LLVM
}

} // namespace tessera::codegen
