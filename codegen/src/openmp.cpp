// Parallel loops on the OpenMP runtime (libomp), the way Polly's LoopGeneratorsKMP does it: the
// loop body is emitted into an outlined function that receives every live value through one
// context array, and __kmpc_fork_call runs it on the team; each thread takes a static block of
// iterations from __kmpc_for_static_init_8 and allocates its own scratchpads.

#include "function_lowering.h"

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

// Packs a value into 64 bits for the context array, and back.
static Value *pack(llvm::IRBuilder<> &b, Value *v) {
    llvm::Type *t = v->getType();
    if (t->isPointerTy()) return b.CreatePtrToInt(v, b.getInt64Ty());
    if (t->isDoubleTy()) return b.CreateBitCast(v, b.getInt64Ty());
    if (t->isFloatTy()) return b.CreateZExt(b.CreateBitCast(v, b.getInt32Ty()), b.getInt64Ty());
    if (t->isIntegerTy(64)) return v;
    return b.CreateZExt(v, b.getInt64Ty());
}

static Value *unpack(llvm::IRBuilder<> &b, Value *w, llvm::Type *t) {
    if (t->isPointerTy()) return b.CreateIntToPtr(w, t);
    if (t->isDoubleTy()) return b.CreateBitCast(w, t);
    if (t->isFloatTy()) return b.CreateBitCast(b.CreateTrunc(w, b.getInt32Ty()), t);
    if (t->isIntegerTy(64)) return w;
    return b.CreateTrunc(w, t);
}

void FunctionLowering::parallel_for(const poly::LoopNode &n, Scope &s) {
    Value *lo = expr(n.min, s);
    Value *hi = expr(n.max, s);

    // Everything the body may use: the scope's values, the storage and input views.
    std::vector<Value *> live;
    std::vector<std::string> names;
    for (const auto &kv : s.vars) {
        names.push_back(kv.first);
        live.push_back(kv.second);
    }
    auto add_view = [&](const StorageView &v) {
        if (!v.base) return;
        live.push_back(v.base);
        for (Value *x : v.min) live.push_back(x);
        for (Value *x : v.stride) live.push_back(x);
    };
    for (const StorageView &v : storage) add_view(v);
    // Inputs in the pipeline's order (the map's pointer order would make the IR differ from
    // run to run).
    for (const auto &in : m.graph.inputs)
        if (auto it = inputs.find(in.get()); it != inputs.end()) add_view(it->second);
    live.push_back(lo);
    live.push_back(hi);

    // The context array, filled in the parent.
    llvm::IRBuilder<> entry_builder(&function->getEntryBlock(), function->getEntryBlock().begin());
    llvm::AllocaInst *context =
        entry_builder.CreateAlloca(llvm::ArrayType::get(b.getInt64Ty(), live.size()), nullptr, "omp.context");
    for (size_t i = 0; i < live.size(); ++i)
        b.CreateStore(pack(b, live[i]), b.CreateConstInBoundsGEP2_64(context->getAllocatedType(), context, 0, i));

    // The outlined function: void(i32 *gtid, i32 *btid, i64 *context).
    llvm::PointerType *ptr = llvm::PointerType::get(ctx, 0);
    llvm::FunctionType *fty = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr}, false);
    llvm::Function *outlined = llvm::Function::Create(fty, llvm::GlobalValue::InternalLinkage,
                                                      function->getName() + ".par." + n.var, module);
    outlined->addFnAttr(llvm::Attribute::NoUnwind);

    // Save the parent's state, emit into the outlined function.
    llvm::BasicBlock *parent_block = b.GetInsertBlock();
    llvm::Function *parent = function;
    std::vector<StorageView> saved_storage = storage;
    std::map<const InputContents *, StorageView> saved_inputs = inputs;
    std::vector<Value *> saved_heap = heap_allocations;
    heap_allocations.clear();
    bool saved_streamed = streamed;
    streamed = false;
    function = outlined;
    llvm::BasicBlock *entry = llvm::BasicBlock::Create(ctx, "entry", outlined);
    b.SetInsertPoint(entry);
    Value *ctx_arg = outlined->getArg(2);
    std::vector<Value *> values;
    for (size_t i = 0; i < live.size(); ++i) {
        Value *w = b.CreateLoad(b.getInt64Ty(), b.CreateConstInBoundsGEP1_64(b.getInt64Ty(), ctx_arg, i));
        values.push_back(unpack(b, w, live[i]->getType()));
    }
    Scope inner;
    size_t k = 0;
    for (const std::string &name : names) inner.vars[name] = values[k++];
    auto read_view = [&](StorageView &v) {
        if (!v.base) return;
        v.base = values[k++];
        for (Value *&x : v.min) x = values[k++];
        for (Value *&x : v.stride) x = values[k++];
    };
    for (StorageView &v : storage) read_view(v);
    for (const auto &in : m.graph.inputs)
        if (auto it = inputs.find(in.get()); it != inputs.end()) read_view(it->second);
    Value *my_lo = values[k++], *my_hi = values[k++];

    // This thread's scratchpads: those of the groups whose statements run inside the loop.
    for (int g : groups_below(p, n.body, false)) allocate_scratch(g);

    // Static worksharing of [lo, hi].
    llvm::Constant *loc = ident(module);
    Value *gtid = b.CreateLoad(b.getInt32Ty(), outlined->getArg(0), "gtid");
    llvm::IRBuilder<> ib(&outlined->getEntryBlock(), outlined->getEntryBlock().begin());
    Value *plast = ib.CreateAlloca(b.getInt32Ty());
    Value *plo = ib.CreateAlloca(b.getInt64Ty());
    Value *phi = ib.CreateAlloca(b.getInt64Ty());
    Value *pstride = ib.CreateAlloca(b.getInt64Ty());
    b.CreateStore(b.getInt32(0), plast);
    b.CreateStore(my_lo, plo);
    b.CreateStore(my_hi, phi);
    b.CreateStore(i64(1), pstride);
    llvm::FunctionCallee init = module.getOrInsertFunction(
        "__kmpc_for_static_init_8", b.getVoidTy(), ptr, b.getInt32Ty(), b.getInt32Ty(), ptr, ptr, ptr, ptr,
        b.getInt64Ty(), b.getInt64Ty());
    b.CreateCall(init, {loc, gtid, b.getInt32(34 /* kmp_sch_static */), plast, plo, phi, pstride, i64(n.step), i64(1)});
    Value *first = b.CreateLoad(b.getInt64Ty(), plo);
    Value *last = b.CreateLoad(b.getInt64Ty(), phi);
    ++parallel_depth;
    if (!(n.vectorize && vector_for(n, inner, first, last)))
        serial_for(n, inner, first, last, n.vectorize);
    --parallel_depth;
    fence_streaming_stores();
    llvm::FunctionCallee fini = module.getOrInsertFunction("__kmpc_for_static_fini", b.getVoidTy(), ptr, b.getInt32Ty());
    b.CreateCall(fini, {loc, gtid});
    llvm::FunctionCallee free_fn = module.getOrInsertFunction("free", b.getVoidTy(), ptr);
    for (Value *h : heap_allocations) b.CreateCall(free_fn, {h});
    b.CreateRetVoid();

    // Back in the parent: fork the team.
    function = parent;
    storage = saved_storage;
    inputs = saved_inputs;
    heap_allocations = saved_heap;
    streamed = saved_streamed;
    b.SetInsertPoint(parent_block);
    if (options.threads > 0) {
        llvm::FunctionCallee num = module.getOrInsertFunction("__kmpc_global_thread_num", b.getInt32Ty(), ptr);
        llvm::FunctionCallee push =
            module.getOrInsertFunction("__kmpc_push_num_threads", b.getVoidTy(), ptr, b.getInt32Ty(), b.getInt32Ty());
        b.CreateCall(push, {loc, b.CreateCall(num, {loc}), b.getInt32(uint32_t(options.threads))});
    }
    llvm::FunctionType *fork_ty = llvm::FunctionType::get(b.getVoidTy(), {ptr, b.getInt32Ty(), ptr}, true);
    llvm::FunctionCallee fork = module.getOrInsertFunction("__kmpc_fork_call", fork_ty);
    b.CreateCall(fork, {loc, b.getInt32(1), outlined, context});
}

} // namespace tessera::codegen
