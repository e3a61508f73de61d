// The entry function of a compiled pipeline: arguments, checks, storage, loop nest.
#include <cstddef>
#include <functional>
#include <set>

#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "function_lowering.h"
#include "loop_generator.h"
#include "tessera/codegen/abi.h"

namespace tessera::codegen {

using llvm::Value;

FunctionLowering::FunctionLowering(const poly::Program &prog, llvm::Module &mod, const CodegenOptions &o)
    : p(prog), m(*prog.model), module(mod), options(o), ctx(mod.getContext()), b(mod.getContext()),
      parallel_loops(make_openmp_loop_generator()) {
    // fast_math: float arithmetic may be reassociated and contracted (fused multiply-add). The
    // flags live in the IR, so every target honours them; NaN and infinity semantics stay.
    if (o.fast_math) {
        llvm::FastMathFlags f;
        f.setAllowReassoc();
        f.setAllowContract(true);
        b.setFastMathFlags(f);
    }
}

namespace {

// Scratchpads up to this many bytes per thread live on the stack; larger ones on the heap.
constexpr int64_t kStackScratchBytes = 256 * 1024;

// Field offsets in tessera_buffer_t and tessera_error_t, from the structs themselves; the loads
// and stores below assume the field types checked here.
static_assert(sizeof(((tessera_buffer_t *)nullptr)->host) == 8 && sizeof(((tessera_buffer_t *)nullptr)->version) == 4,
              "tessera_buffer_t: host is a pointer, version an int32");
static_assert(sizeof(tessera_dim_t) == 3 * sizeof(int64_t), "tessera_dim_t is min, extent, stride (int64)");
static_assert(sizeof(((tessera_error_t *)nullptr)->code) == 4 && sizeof(((tessera_error_t *)nullptr)->need_min) == 8,
              "tessera_error_t: int32 code, argument, dim; int64 ranges");
constexpr int64_t kHostField = offsetof(tessera_buffer_t, host);
constexpr int64_t kVersionField = offsetof(tessera_buffer_t, version);
int64_t dim_field(int d, int which) {  // which: 0 min, 1 extent, 2 stride
    constexpr int64_t field[3] = {offsetof(tessera_dim_t, min), offsetof(tessera_dim_t, extent), offsetof(tessera_dim_t, stride)};
    return int64_t(offsetof(tessera_buffer_t, dim)) + d * int64_t(sizeof(tessera_dim_t)) + field[which];
}

} // namespace

std::set<int> groups_below(const poly::Program &p, const poly::LoopNodePtr &root, bool outside_parallel) {
    std::set<int> groups;
    std::function<void(const poly::LoopNodePtr &)> visit = [&](const poly::LoopNodePtr &n) {
        if (!n || (outside_parallel && n->kind == poly::LoopNode::Kind::For && n->parallel)) return;
        // A GPU kernel allocates its groups' scratchpads in each block's shared memory.
        if (outside_parallel && n->kind == poly::LoopNode::Kind::Mark && is_kernel_mark(*n)) return;
        if (n->kind == poly::LoopNode::Kind::Call && p.statements[size_t(n->statement)].group >= 0)
            groups.insert(p.statements[size_t(n->statement)].group);
        for (const auto &c : n->children) visit(c);
        visit(n->body);
        visit(n->then_case);
        visit(n->else_case);
    };
    visit(root);
    return groups;
}

std::vector<ScratchLayout> FunctionLowering::scratch_layouts(int group, int64_t &total) const {
    std::vector<ScratchLayout> layouts;
    total = 0;
    for (size_t i = 0; i < p.storage.size(); ++i) {
        const poly::Storage &st = p.storage[i];
        // (A column window's rows are each thread's own: gpu/kernel_lowering.cpp.)
        if (st.kind != poly::Storage::Kind::Scratch || st.thread_window || (group >= 0 && st.group != group)) continue;
        ScratchLayout l{i, {}, 0, total};
        int64_t stride = 1;
        for (size_t d = 0; d < st.extent.size(); ++d) {
            l.strides.push_back(stride);
            int64_t ext = ir::as_const_int(st.extent[d]).value_or(1);
            // Long rows get one cache line of padding: rows a power of two apart would map to
            // the same cache sets. Not in a GPU block's shared memory, which has no cache sets
            // and where the padding is what the tile model did not count (harris's 4 x 256
            // tiles: 47472 bytes of scratchpads, 50416 padded, over the 48 KiB).
            if (d == 0 && !options.gpu && ext * st.type.bytes() >= 1024) ext += 64 / std::max(1, st.type.bytes());
            stride *= ext;
        }
        l.bytes = std::max<int64_t>(stride * st.type.bytes(), 1);
        total += (l.bytes + 63) / 64 * 64;
        layouts.push_back(std::move(l));
    }
    return layouts;
}

void FunctionLowering::place_scratch(const ScratchLayout &l, Value *base) {
    const poly::Storage &st = p.storage[l.storage];
    StorageView &v = storage[l.storage];
    v.type = st.type;
    v.scratch = true;
    v.alias = int(m.graph.inputs.size() + l.storage);
    v.min.assign(size_t(st.dimensions), i64(0));
    v.stride.clear();
    for (int64_t s : l.strides) v.stride.push_back(i64(s));
    v.base = base;
}

// Allocates the scratchpads of overlapped group `group` (all groups when -1) in the entry block
// of the current function: one set per thread when called inside an outlined parallel body.
void FunctionLowering::allocate_scratch(int group) {
    llvm::IRBuilder<> eb(&function->getEntryBlock(), function->getEntryBlock().begin());
    int64_t total = 0;
    std::vector<ScratchLayout> layouts = scratch_layouts(group, total);
    bool heap = total > kStackScratchBytes;
    for (const ScratchLayout &l : layouts) {
        const poly::Storage &st = p.storage[l.storage];
        if (heap) {
            // A parallel body's scratchpads are allocated by each thread on every call and freed
            // at its end: from the pool, calls after the first find their pages mapped.
            place_scratch(l, host_alloc(i64((l.bytes + 63) / 64 * 64), st.name + ".scratch"));
        } else {
            llvm::AllocaInst *a = eb.CreateAlloca(b.getInt8Ty(), i64(l.bytes), st.name + ".scratch");
            a->setAlignment(llvm::Align(64));
            place_scratch(l, a);
        }
    }
}

Value *FunctionLowering::host_alloc(Value *bytes, const std::string &name) {
    if (options.pooled_buffers && !options.gpu) {
        Value *buffer = b.CreateCall(module.getOrInsertFunction(kBufferPoolAllocSymbol, b.getPtrTy(), b.getInt64Ty()), {bytes}, name);
        pooled_buffers.emplace_back(buffer, bytes);
        return buffer;
    }
    llvm::FunctionCallee alloc = module.getOrInsertFunction("aligned_alloc", b.getPtrTy(), b.getInt64Ty(), b.getInt64Ty());
    Value *buffer = b.CreateCall(alloc, {i64(64), bytes}, name);
    heap_allocations.push_back(buffer);
    return buffer;
}

void FunctionLowering::free_heap() {
    llvm::FunctionCallee free_fn = module.getOrInsertFunction("free", b.getVoidTy(), b.getPtrTy());
    for (Value *h : heap_allocations) {
        if (options.gpu) device_release(h);
        else b.CreateCall(free_fn, {h});
    }
    llvm::FunctionCallee pool_free = module.getOrInsertFunction(kBufferPoolFreeSymbol, b.getVoidTy(), b.getPtrTy(), b.getInt64Ty());
    for (auto [buffer, bytes] : pooled_buffers) b.CreateCall(pool_free, {buffer, bytes});
}

void FunctionLowering::run() {
    arguments = pipeline_arguments(m);
    llvm::PointerType *ptr = b.getPtrTy();
    llvm::FunctionType *fty = llvm::FunctionType::get(b.getInt32Ty(), {ptr, ptr}, false);
    function = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, options.function_name, module);
    function->addFnAttr(llvm::Attribute::NoUnwind);
    llvm::Function *entry_function = function;
    llvm::BasicBlock *entry = llvm::BasicBlock::Create(ctx, "entry", function);
    b.SetInsertPoint(entry);

    // The argument checks and the parameters go into a function of their own, which LLVM
    // compiles without optimizing (optnone): it runs once a call, straight-line code of a few
    // hundred instructions, and optimized it was the entry's largest part for LLVM
    // (local_laplacian: 10,000 of its 11,000 lines; heat-3d: 70%, 30 ms of LLVM on one thread).
    // It returns 0, an error code (having filled *error), or kNothingToCompute; the parameters'
    // values come back in the array of its third argument, one 64-bit word each.
    llvm::Function *setup = llvm::Function::Create(llvm::FunctionType::get(b.getInt32Ty(), {ptr, ptr, ptr}, false),
                                                   llvm::GlobalValue::InternalLinkage, options.function_name + ".setup", module);
    setup->addFnAttr(llvm::Attribute::NoUnwind);
    setup->addFnAttr(llvm::Attribute::NoInline);
    setup->addFnAttr(llvm::Attribute::OptimizeNone);
    constexpr int32_t kNothingToCompute = -1;
    OutlinedBody in_setup(*this, setup);
    Value *args = setup->getArg(0);
    error_arg = setup->getArg(1);

    auto arg_ptr = [&](size_t i) { return b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, args, i)); };
    auto field = [&](Value *desc, int64_t offset, llvm::Type *t) {
        return b.CreateLoad(t, b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), desc, uint64_t(offset)));
    };
    // The buffer descriptors, loaded from `args` in the function being emitted.
    std::vector<Value *> desc(arguments.size(), nullptr);
    auto load_descriptors = [&] {
        for (size_t i = 0; i < arguments.size(); ++i)
            if (arguments[i].kind != Argument::Kind::Param) desc[i] = arg_ptr(i);
    };
    load_descriptors();
    auto arg_of_input = [&](const InputContents *in) {
        for (size_t i = 0; i < arguments.size(); ++i)
            if (arguments[i].input.get() == in) return i;
        internal_error("codegen: no argument for input ", in->name);
    };
    auto arg_of_output = [&](int o) {
        for (size_t i = 0; i < arguments.size(); ++i)
            if (arguments[i].kind == Argument::Kind::Output && arguments[i].output == o) return i;
        internal_error("codegen: no argument for output ", o);
    };

    // Returns `code` after filling *error when `bad` holds. Every check branches to one block
    // that fills the record from phis of its fields: a block of stores per check made the
    // entry of a transformer layer's pipeline (196 checks) 8,500 instructions, a hundred ms of
    // LLVM on one thread.
    llvm::BasicBlock *failed = nullptr;
    std::vector<llvm::PHINode *> record;  // code, argument, dim, need_min, need_max, have_min, have_max
    auto fail_if = [&](Value *bad, int code, size_t argument, int dim, Value *need_min, Value *need_max, Value *have_min,
                       Value *have_max) {
        llvm::BasicBlock *here = b.GetInsertBlock();
        if (!failed) {
            failed = llvm::BasicBlock::Create(ctx, "fail", function);
            llvm::IRBuilder<>::InsertPointGuard guard(b);
            b.SetInsertPoint(failed);
            for (llvm::Type *t : {b.getInt32Ty(), b.getInt32Ty(), b.getInt32Ty(), b.getInt64Ty(), b.getInt64Ty(), b.getInt64Ty(),
                                  b.getInt64Ty()})
                record.push_back(b.CreatePHI(t, 16));
            llvm::BasicBlock *fill = llvm::BasicBlock::Create(ctx, "fill", function);
            llvm::BasicBlock *ret = llvm::BasicBlock::Create(ctx, "ret", function);
            b.CreateCondBr(b.CreateIsNull(error_arg), ret, fill);
            b.SetInsertPoint(fill);
            const size_t offsets[] = {offsetof(tessera_error_t, code),     offsetof(tessera_error_t, argument),
                                      offsetof(tessera_error_t, dim),      offsetof(tessera_error_t, need_min),
                                      offsetof(tessera_error_t, need_max), offsetof(tessera_error_t, have_min),
                                      offsetof(tessera_error_t, have_max)};
            for (size_t k = 0; k < record.size(); ++k)
                b.CreateStore(record[k], b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), error_arg, uint64_t(offsets[k])));
            b.CreateBr(ret);
            b.SetInsertPoint(ret);
            b.CreateRet(record[0]);
        }
        Value *values[] = {b.getInt32(uint32_t(code)), b.getInt32(uint32_t(argument)), b.getInt32(uint32_t(dim)),
                           need_min ? need_min : i64(0), need_max ? need_max : i64(0), have_min ? have_min : i64(0),
                           have_max ? have_max : i64(0)};
        for (size_t k = 0; k < record.size(); ++k) record[k]->addIncoming(values[k], here);
        llvm::BasicBlock *ok = llvm::BasicBlock::Create(ctx, "ok", function);
        b.CreateCondBr(bad, failed, ok);
        b.SetInsertPoint(ok);
    };

    // Every buffer descriptor must have this layout.
    for (size_t i = 0; i < arguments.size(); ++i) {
        if (arguments[i].kind == Argument::Kind::Param) continue;
        Value *version = b.CreateSExt(field(desc[i], kVersionField, b.getInt32Ty()), b.getInt64Ty());
        fail_if(b.CreateICmpNE(version, i64(TESSERA_ABI_VERSION)), TESSERA_ERROR_ABI_VERSION, i, 0, version, version,
                nullptr, nullptr);
    }

    // Dimension 0 of every buffer must be dense.
    for (size_t i = 0; i < arguments.size(); ++i) {
        if (arguments[i].kind == Argument::Kind::Param || arguments[i].dimensions == 0) continue;
        Value *stride = field(desc[i], dim_field(0, 2), b.getInt64Ty());
        fail_if(b.CreateICmpNE(stride, i64(1)), TESSERA_ERROR_NOT_DENSE, i, 0, nullptr, nullptr, stride, stride);
    }

    // Coordinates are int32 in the loops: every buffer's coordinates must fit.
    auto outside_int32 = [&](Value *lo, Value *hi) {
        return b.CreateOr(b.CreateICmpSLT(lo, i64(INT32_MIN)), b.CreateICmpSGT(hi, i64(INT32_MAX)));
    };
    for (size_t i = 0; i < arguments.size(); ++i) {
        if (arguments[i].kind == Argument::Kind::Param) continue;
        for (int d = 0; d < arguments[i].dimensions; ++d) {
            Value *lo = field(desc[i], dim_field(d, 0), b.getInt64Ty());
            Value *hi = b.CreateSub(b.CreateAdd(lo, field(desc[i], dim_field(d, 1), b.getInt64Ty())), i64(1));
            fail_if(outside_int32(lo, hi), TESSERA_ERROR_BUFFER_RANGE, i, d, lo, hi, nullptr, nullptr);
        }
    }

    // No output may share memory with another buffer argument: the schedule and the alias
    // scopes of the accesses assume distinct arrays. Spans are in bytes, [lo, hi).
    struct Span {
        Value *lo, *hi, *empty;
    };
    auto span_of = [&](size_t i) {
        const Argument &a = arguments[i];
        Value *host = b.CreatePtrToInt(field(desc[i], kHostField, ptr), b.getInt64Ty());
        int64_t bytes = std::max(1, a.type.bytes());
        Span s{host, b.CreateAdd(host, i64(bytes)), b.getFalse()};
        for (int d = 0; d < a.dimensions; ++d) {
            Value *ext = field(desc[i], dim_field(d, 1), b.getInt64Ty());
            Value *stride = field(desc[i], dim_field(d, 2), b.getInt64Ty());
            Value *reach = b.CreateMul(b.CreateMul(stride, b.CreateSub(ext, i64(1))), i64(bytes));
            Value *zero = i64(0);
            s.lo = b.CreateAdd(s.lo, b.CreateSelect(b.CreateICmpSLT(reach, zero), reach, zero));
            s.hi = b.CreateAdd(s.hi, b.CreateSelect(b.CreateICmpSGT(reach, zero), reach, zero));
            s.empty = b.CreateOr(s.empty, b.CreateICmpSLE(ext, zero));
        }
        return s;
    };
    std::vector<Span> spans(arguments.size(), Span{nullptr, nullptr, nullptr});  // once per buffer
    bool any_output = false;
    for (const Argument &a : arguments) any_output = any_output || a.kind == Argument::Kind::Output;
    for (size_t i = 0; i < arguments.size() && any_output; ++i)
        if (arguments[i].kind != Argument::Kind::Param) spans[i] = span_of(i);
    for (size_t o = 0; o < arguments.size(); ++o) {
        if (arguments[o].kind != Argument::Kind::Output) continue;
        const Span &so = spans[o];
        for (size_t i = 0; i < arguments.size(); ++i) {
            if (i == o || arguments[i].kind == Argument::Kind::Param) continue;
            const Span &si = spans[i];
            Value *overlap = b.CreateAnd(b.CreateICmpULT(so.lo, si.hi), b.CreateICmpULT(si.lo, so.hi));
            overlap = b.CreateAnd(overlap, b.CreateNot(b.CreateOr(so.empty, si.empty)));
            fail_if(overlap, TESSERA_ERROR_ALIASING, o, 0, i64(int64_t(i)), i64(int64_t(i)), nullptr, nullptr);
        }
    }

    // Parameters, in order (region parameters use the ones before them).
    Scope scope;
    std::vector<std::pair<const poly::Parameter *, Value *>> region_bounds;  // exact (int64) values
    for (const poly::Parameter &prm : m.params) {
        Value *v = nullptr;
        switch (prm.kind) {
        case poly::Parameter::Kind::OutputMin:
        case poly::Parameter::Kind::OutputExtent: {
            Value *d = desc[arg_of_output(prm.output)];
            int which = prm.kind == poly::Parameter::Kind::OutputMin ? 0 : 1;
            v = b.CreateTrunc(field(d, dim_field(prm.dim, which), b.getInt64Ty()), b.getInt32Ty());
            if (which == 1 && prm.output < int(options.specialized_extents.size()) &&
                prm.dim < int(options.specialized_extents[size_t(prm.output)].size())) {
                int64_t want = options.specialized_extents[size_t(prm.output)][size_t(prm.dim)];
                Value *have = b.CreateSExt(v, b.getInt64Ty());
                fail_if(b.CreateICmpNE(have, i64(want)), TESSERA_ERROR_SPECIALIZATION, arg_of_output(prm.output), prm.dim,
                        i64(want), i64(want), have, have);
                v = i32(want);
            }
            break;
        }
        case poly::Parameter::Kind::InputMin:
        case poly::Parameter::Kind::InputExtent: {
            Value *d = desc[arg_of_input(prm.input.get())];
            int which = prm.kind == poly::Parameter::Kind::InputMin ? 0 : 1;
            v = b.CreateTrunc(field(d, dim_field(prm.dim, which), b.getInt64Ty()), b.getInt32Ty());
            break;
        }
        case poly::Parameter::Kind::Scalar: {
            size_t ai = 0;
            for (size_t i = 0; i < arguments.size(); ++i)
                if (arguments[i].param == prm.param) ai = i;
            Type t = prm.param->type;
            v = from_memory(t, b.CreateLoad(storage_type(t), arg_ptr(ai)));
            break;
        }
        case poly::Parameter::Kind::Region: {
            // Computed in int64 (pw_aff_to_expr), checked against int32 below.
            Value *wide = expr(prm.value, scope);
            region_bounds.emplace_back(&prm, wide);
            v = b.CreateTrunc(wide, b.getInt32Ty());
            break;
        }
        }
        scope.vars[prm.var->name] = v;
    }

    // Nothing to compute for an empty output (the model assumes extents of at least 1).
    for (const poly::Parameter &prm : m.params)
        if (prm.kind == poly::Parameter::Kind::OutputExtent) {
            llvm::BasicBlock *empty = llvm::BasicBlock::Create(ctx, "empty", function);
            llvm::BasicBlock *go = llvm::BasicBlock::Create(ctx, "nonempty", function);
            b.CreateCondBr(b.CreateICmpSLE(scope.vars[prm.var->name], i32(0)), empty, go);
            b.SetInsertPoint(empty);
            b.CreateRet(b.getInt32(uint32_t(kNothingToCompute)));
            b.SetInsertPoint(go);
        }

    // Every region, intermediate Funcs' included, must fit the int32 coordinates of the loops.
    for (size_t ai = 0; ai < m.arrays.size(); ++ai) {
        const poly::Array &a = m.arrays[ai];
        if (a.region.is_empty()) continue;
        for (int d = 0; d < a.dimensions; ++d) {
            Value *mn = expr(a.min[size_t(d)], scope), *ext = expr(a.extent[size_t(d)], scope);
            Value *mx = b.CreateSub(b.CreateAdd(mn, ext), i64(1));
            fail_if(b.CreateAnd(b.CreateICmpSGT(ext, i64(0)), outside_int32(mn, mx)), TESSERA_ERROR_REGION_RANGE, ai, d,
                    mn, mx, nullptr, nullptr);
        }
    }
    for (const auto &[prm, wide] : region_bounds)
        fail_if(outside_int32(wide, wide), TESSERA_ERROR_REGION_RANGE, size_t(prm->array), prm->dim, wide, wide, nullptr,
                nullptr);

    // A bounded Func must not be needed outside its bound (Func::bound).
    for (const poly::BoundCheck &c : m.bound_checks) {
        Value *need_min = expr(c.need_min, scope), *need_max = expr(c.need_max, scope);
        Value *bound_min = expr(c.bound_min, scope), *bound_max = expr(c.bound_max, scope);
        Value *outside = b.CreateOr(b.CreateICmpSLT(need_min, bound_min), b.CreateICmpSGT(need_max, bound_max));
        fail_if(b.CreateAnd(b.CreateICmpSLE(need_min, need_max), outside), TESSERA_ERROR_BOUND, size_t(c.array), c.dim,
                need_min, need_max, bound_min, bound_max);
    }

    // Inputs must cover what is read; outputs what their computation touches.
    for (const poly::Array &a : m.arrays) {
        if (a.region.is_empty()) continue;
        bool input = a.kind == poly::Array::Kind::Input;
        if (!input && a.output < 0) continue;
        size_t ai = input ? arg_of_input(a.input.get()) : arg_of_output(a.output);
        for (int d = 0; d < a.dimensions; ++d) {
            Value *mn = expr(a.min[size_t(d)], scope);  // int64 (model.h)
            Value *ext = expr(a.extent[size_t(d)], scope);
            Value *mx = b.CreateSub(b.CreateAdd(mn, ext), i64(1));
            Value *have_min = field(desc[ai], dim_field(d, 0), b.getInt64Ty());
            Value *have_max = b.CreateSub(b.CreateAdd(have_min, field(desc[ai], dim_field(d, 1), b.getInt64Ty())), i64(1));
            Value *bad = b.CreateAnd(b.CreateICmpSGT(ext, i64(0)),
                                     b.CreateOr(b.CreateICmpSLT(mn, have_min), b.CreateICmpSGT(mx, have_max)));
            fail_if(bad, input ? TESSERA_ERROR_INPUT_TOO_SMALL : TESSERA_ERROR_OUTPUT_TOO_SMALL, ai, d, mn, mx, have_min,
                    have_max);
        }
    }

    // The parameters back to the entry: constants (extents the code is specialized for) as
    // constants, the others through the array.
    std::vector<std::pair<std::string, Value *>> parameters;
    for (const poly::Parameter &prm : m.params) parameters.emplace_back(prm.var->name, scope.vars.at(prm.var->name));
    Value *words = setup->getArg(2);
    for (size_t k = 0; k < parameters.size(); ++k)
        if (!llvm::isa<llvm::Constant>(parameters[k].second))
            b.CreateStore(pack(b, parameters[k].second), b.CreateConstInBoundsGEP1_64(b.getInt64Ty(), words, k));
    b.CreateRet(b.getInt32(0));
    in_setup.finish();

    // The entry: the setup, then storage and the loop nest.
    failed = nullptr;  // (the setup's; a failure of the entry's own gets a block of its own)
    record.clear();
    args = entry_function->getArg(0);
    error_arg = entry_function->getArg(1);
    load_descriptors();
    llvm::AllocaInst *parameter_words =
        b.CreateAlloca(llvm::ArrayType::get(b.getInt64Ty(), std::max<size_t>(1, parameters.size())), nullptr, "parameters");
    Value *code = b.CreateCall(setup, {args, error_arg, parameter_words}, "setup");
    llvm::BasicBlock *stop = llvm::BasicBlock::Create(ctx, "stop", function);
    llvm::BasicBlock *go = llvm::BasicBlock::Create(ctx, "go", function);
    b.CreateCondBr(b.CreateICmpEQ(code, b.getInt32(0)), go, stop);
    b.SetInsertPoint(stop);
    b.CreateRet(b.CreateSelect(b.CreateICmpEQ(code, b.getInt32(uint32_t(kNothingToCompute))), b.getInt32(0), code));
    b.SetInsertPoint(go);
    scope = Scope{};
    for (size_t k = 0; k < parameters.size(); ++k) {
        Value *v = parameters[k].second;
        if (!llvm::isa<llvm::Constant>(v))
            v = unpack(b, b.CreateLoad(b.getInt64Ty(), b.CreateConstInBoundsGEP2_64(parameter_words->getAllocatedType(), parameter_words, 0, k)),
                       v->getType());
        scope.vars[parameters[k].first] = v;
    }

    // Views of inputs and outputs.
    auto view_of = [&](Value *d, Type t, int dims) {
        StorageView v;
        v.type = t;
        v.base = field(d, kHostField, ptr);
        for (int k = 0; k < dims; ++k) {
            v.min.push_back(field(d, dim_field(k, 0), b.getInt64Ty()));
            v.stride.push_back(field(d, dim_field(k, 2), b.getInt64Ty()));
        }
        return v;
    };
    make_alias_scopes(m.graph.inputs.size() + p.storage.size());
    for (size_t k = 0; k < m.graph.inputs.size(); ++k) {
        const auto &in = m.graph.inputs[k];
        StorageView &v = inputs[in.get()] = view_of(desc[arg_of_input(in.get())], in->type, in->dimensions);
        v.alias = int(k);
    }
    storage.assign(p.storage.size(), StorageView{});
    for (size_t i = 0; i < p.storage.size(); ++i) {
        const poly::Storage &st = p.storage[i];
        const FuncContents *f = m.arrays[size_t(st.array)].func;
        if (st.kind == poly::Storage::Kind::Output) {
            storage[i] = view_of(desc[arg_of_output(st.output)], st.type, st.dimensions);
            storage[i].output = f->updates.empty();
        } else if (st.kind == poly::Storage::Kind::Buffer) {
            // A dense buffer over the Func's region: sizes from the parameters.
            StorageView v;
            v.type = st.type;
            Value *elems = i64(1);
            for (int d = 0; d < st.dimensions; ++d) {
                Value *ext = b.CreateSExt(expr(st.extent[size_t(d)], scope), b.getInt64Ty());
                ext = b.CreateSelect(b.CreateICmpSGT(ext, i64(0)), ext, i64(0));
                v.min.push_back(b.CreateSExt(expr(st.min[size_t(d)], scope), b.getInt64Ty()));
                v.stride.push_back(elems);
                elems = b.CreateMul(elems, ext);
            }
            Value *bytes = b.CreateMul(elems, i64(st.type.bytes()));
            bytes = b.CreateAnd(b.CreateAdd(bytes, i64(127)), i64(~int64_t(63)));
            // On a GPU target, in the device's memory. (On the host, a failed allocation's null
            // is given back with the others on the way out: free and the pool ignore it.)
            v.base = options.gpu ? device_alloc(bytes) : host_alloc(bytes, st.name + ".buffer");
            fail_if(b.CreateIsNull(v.base), TESSERA_ERROR_OUT_OF_MEMORY, 0, 0, bytes, bytes, nullptr, nullptr);
            if (options.gpu) heap_allocations.push_back(v.base);
            storage[i] = v;
        }
        storage[i].alias = int(m.graph.inputs.size() + i);
    }
    // Scratchpads of groups that run outside parallel loops live in this function (the others
    // are allocated per thread by the outlined bodies).
    for (int g : groups_below(p, p.nest, true)) allocate_scratch(g);

    node(p.nest, scope);
    fence_streaming_stores();

    free_heap();
    b.CreateRet(b.getInt32(0));
}

void lower_program(const poly::Program &p, llvm::Module &module, const CodegenOptions &options) {
    FunctionLowering f(p, module, options);
    f.run();
    std::string err;
    llvm::raw_string_ostream os(err);
    if (llvm::verifyModule(module, &os)) internal_error("codegen produced invalid LLVM IR: ", os.str());
}

} // namespace tessera::codegen
