// DSL expressions → LLVM IR, with exactly the semantics of dsl/src/scalar_ops.cpp.
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>

#include "function_lowering.h"

namespace tessera::codegen {

using llvm::Value;

llvm::Value *FunctionLowering::i32(int64_t v) { return b.getInt32(uint32_t(int32_t(v))); }
llvm::Value *FunctionLowering::i64(int64_t v) { return b.getInt64(uint64_t(v)); }

llvm::Constant *FunctionLowering::lane_numbers(int w) {
    std::vector<llvm::Constant *> lane;
    for (int l = 0; l < w; ++l) lane.push_back(b.getInt64(uint64_t(l)));
    return llvm::ConstantVector::get(lane);
}

llvm::Type *FunctionLowering::value_type(Type t, int lanes) {
    llvm::Type *e;
    if (t.is_bool()) e = b.getInt1Ty();
    else if (t.is_int_or_uint()) e = b.getIntNTy(unsigned(t.bits));
    else if (t.code == TypeCode::Float && t.bits == 64) e = b.getDoubleTy();
    else e = b.getFloatTy();  // float32, and float16 / bfloat16 held in float registers
    return lanes > 1 ? llvm::FixedVectorType::get(e, unsigned(lanes)) : e;
}

int lanes_of(llvm::Value *v) {
    if (auto *vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType())) return int(vt->getNumElements());
    return 1;
}

// `element`, or a vector of it with as many lanes as `like`.
llvm::Type *shaped(llvm::Type *element, llvm::Value *like) {
    int n = lanes_of(like);
    return n > 1 ? llvm::FixedVectorType::get(element, unsigned(n)) : element;
}

llvm::Type *FunctionLowering::storage_type(Type t) {
    if (t.is_bool()) return b.getInt8Ty();
    if (t.code == TypeCode::Float && t.bits == 16) return b.getHalfTy();
    if (t.code == TypeCode::BFloat) return b.getInt16Ty();
    return value_type(t);
}

namespace {

bool narrow_float(Type t) { return t.is_float() && t.bits == 16; }

llvm::Constant *int_const(llvm::Type *like, uint64_t v) { return llvm::ConstantInt::get(like, v); }

llvm::Function *intrinsic(llvm::Module &m, llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Type *> types) {
    return llvm::Intrinsic::getDeclaration(&m, id, types);
}

} // namespace

// Rounds a float register to float16 / bfloat16 (to nearest, ties to even); other types pass.
Value *FunctionLowering::round_to(Type t, Value *v) {
    if (t.code == TypeCode::Float && t.bits == 16)
        return b.CreateFPExt(b.CreateFPTrunc(v, shaped(b.getHalfTy(), v)), shaped(b.getFloatTy(), v));
    if (t.code == TypeCode::BFloat) {
        llvm::Type *i32 = shaped(b.getInt32Ty(), v);
        Value *bits = b.CreateBitCast(v, i32);
        Value *lsb = b.CreateAnd(b.CreateLShr(bits, 16), int_const(i32, 1));
        Value *rounded = b.CreateAnd(b.CreateAdd(b.CreateAdd(bits, int_const(i32, 0x7fff)), lsb), int_const(i32, 0xffff0000u));
        Value *isnan = b.CreateFCmpUNO(v, v);
        return b.CreateSelect(isnan, v, b.CreateBitCast(rounded, v->getType()));
    }
    return v;
}

namespace {

// double → float rounded to odd (truncate, then set the last bit if inexact), so that a second
// rounding to float16 / bfloat16 is correct: float has more than p + 2 bits for both.
Value *to_float_round_odd(llvm::IRBuilder<> &b, llvm::Module &m, Value *d) {
    llvm::Type *f32 = shaped(b.getFloatTy(), d), *i32 = shaped(b.getInt32Ty(), d);
    Value *f = b.CreateFPTrunc(d, f32);
    Value *back = b.CreateFPExt(f, d->getType());
    llvm::Function *fabs = intrinsic(m, llvm::Intrinsic::fabs, {d->getType()});
    Value *away = b.CreateFCmpOGT(b.CreateCall(fabs, {back}), b.CreateCall(fabs, {d}));
    Value *bits = b.CreateBitCast(f, i32);
    bits = b.CreateSelect(away, b.CreateSub(bits, int_const(i32, 1)), bits);
    Value *inexact = b.CreateFCmpONE(back, d);
    bits = b.CreateSelect(inexact, b.CreateOr(bits, int_const(i32, 1)), bits);
    return b.CreateBitCast(bits, f32);
}

// Float lanes to integer lanes of at most 32 bits, truncated toward zero, saturated, NaN to 0
// (docs/dsl.md), as vector instructions: each lane clamped to the integer type's range in the
// float type, converted, and NaN lanes replaced by 0. x86 expands llvm.fptosi.sat on vectors
// lane by lane (a scalar convert and two conditional moves per lane: bilateral_grid's slicing
// spent most of its time there). The bounds are exact in float32 below 2^24 and at -2^31; an
// int32 lane of 2^31 or more, whose bound float32 cannot hold, takes the maximum by a select.
// Null for scalars and for the types this does not cover (64 bits, uint32), which keep the
// intrinsic.
Value *saturating_vector_cast(llvm::IRBuilder<> &b, Value *v, Type to, llvm::Type *target) {
    auto *vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType());
    if (!vt || to.bits > 32 || (to.bits == 32 && !to.is_int())) return nullptr;
    llvm::Type *ft = vt->getElementType();
    bool f32 = ft->isFloatTy();
    if (!f32 && !ft->isDoubleTy()) return nullptr;
    double lo = to.min_value(), hi = to.max_value();
    bool clipped_hi = f32 && to.bits == 32;  // 2^31 - 1 is not a float32
    if (clipped_hi) hi = 2147483520.0;       // the largest float32 below 2^31
    auto splat = [&](double x) { return llvm::ConstantFP::get(vt, x); };
    Value *t = b.CreateSelect(b.CreateFCmpOLT(v, splat(lo)), splat(lo), v);
    t = b.CreateSelect(b.CreateFCmpOGT(t, splat(hi)), splat(hi), t);
    // In range now (NaN lanes aside, whose poison the last select drops).
    llvm::Type *i32 = llvm::FixedVectorType::get(b.getInt32Ty(), unsigned(vt->getNumElements()));
    Value *r = b.CreateFPToSI(t, i32);
    if (clipped_hi)
        r = b.CreateSelect(b.CreateFCmpOGE(v, splat(2147483648.0)), llvm::ConstantInt::get(i32, uint64_t(INT32_MAX)), r);
    r = b.CreateSelect(b.CreateFCmpUNO(v, v), llvm::Constant::getNullValue(i32), r);
    return to.bits == 32 ? r : b.CreateTrunc(r, target);
}

} // namespace

Value *FunctionLowering::cast(Type from, Type to, Value *v) {
    if (from == to) return v;
    int lanes = lanes_of(v);
    llvm::Type *target = value_type(to, lanes);
    if (to.is_bool()) {
        if (from.is_float()) return b.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
        return b.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
    }
    if (from.is_float()) {
        if (to.is_int_or_uint()) {
            if (Value *r = saturating_vector_cast(b, v, to, target)) return r;
            auto id = to.is_int() ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
            return b.CreateCall(intrinsic(module, id, {target, v->getType()}), {v});
        }
        if (to.code == TypeCode::Float && to.bits == 64) return b.CreateFPExt(v, target);
        if (narrow_float(to)) {
            if (from.bits == 64) return round_to(to, to_float_round_odd(b, module, v));
            return round_to(to, v);
        }
        // to float32
        if (from.bits == 64) return b.CreateFPTrunc(v, target);
        return v;  // float16 / bfloat16 registers already hold floats
    }
    // From an integer or bool.
    bool is_signed = from.is_int();
    if (to.is_float()) {
        if (narrow_float(to)) {
            llvm::Type *f64 = shaped(b.getDoubleTy(), v);
            Value *d = is_signed ? b.CreateSIToFP(v, f64) : b.CreateUIToFP(v, f64);
            return round_to(to, to_float_round_odd(b, module, d));
        }
        return is_signed ? b.CreateSIToFP(v, target) : b.CreateUIToFP(v, target);
    }
    return b.CreateIntCast(v, target, is_signed);
}

namespace {

bool const_int(const Expr &e, int64_t &v) {
    auto c = ir::as_const_int(e);
    if (!c) return false;
    v = *c;
    return true;
}

bool power_of_two(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

int log2_of(int64_t v) {
    int k = 0;
    while ((int64_t(1) << k) < v) ++k;
    return k;
}

} // namespace

bool on_index_spine(Op op) { return op == Op::Add || op == Op::Sub || op == Op::Mul; }

Value *FunctionLowering::expr(const Expr &e, const Scope &s) {
    const ExprNode &n = *e;
    Type t = n.type;
    switch (n.op) {
    case Op::IntConst: return llvm::ConstantInt::get(value_type(t), uint64_t(n.int_value), true);
    case Op::UIntConst: return llvm::ConstantInt::get(value_type(t), n.uint_value, false);
    case Op::FloatConst: return llvm::ConstantFP::get(value_type(t), n.float_value);
    case Op::Var: {
        auto it = s.vars.find(n.name);
        if (it == s.vars.end()) internal_error("codegen: the variable ", n.name, " is not bound");
        return it->second;
    }
    case Op::RVar:
    case Op::Param:
    case Op::BufferDim: internal_error("codegen: unlowered ", op_name(n.op), " ", n.name);
    case Op::FuncCall:
    case Op::InputCall: {
        if (n.op == Op::InputCall) return load(inputs.at(n.input.get()), n.args, s);
        return load(view_of(n.func_ptr), n.args, s);
    }
    default: {
        // index_mode (nsw) holds along the add/sub/mul spine of a coordinate, whose value the
        // entry checks bound; below a min, clamp, select or division the DSL's int32 may wrap.
        bool saved = index_mode;
        index_mode = index_mode && on_index_spine(n.op);
        std::vector<Value *> args;
        for (const Expr &a : n.args) args.push_back(expr(a, s));
        index_mode = saved;
        return apply(n, args);
    }
    }
}

Value *FunctionLowering::apply(const ExprNode &n, const std::vector<Value *> &args) {
    Type t = n.type;
    auto arg = [&](size_t i) { return args[i]; };
    int lanes = args.empty() ? 1 : lanes_of(args[0]);
    switch (n.op) {
    case Op::Cast: return cast(n.args[0].type(), t, arg(0));
    case Op::Likely: return arg(0);
    case Op::Select: return b.CreateSelect(arg(0), arg(1), arg(2));
    case Op::Not: return b.CreateNot(arg(0));
    case Op::BitNot: return b.CreateNot(arg(0));
    case Op::Abs: {
        Value *a = arg(0);
        if (n.args[0].type().is_float())
            return b.CreateCall(intrinsic(module, llvm::Intrinsic::fabs, {a->getType()}), {a});
        Value *neg = b.CreateICmpSLT(a, llvm::ConstantInt::get(a->getType(), 0));
        return b.CreateSelect(neg, b.CreateNeg(a), a);
    }
    case Op::Math: {
        MathFn fn = MathFn(n.index);
        std::vector<Value *> a;
        for (size_t i = 0; i < n.args.size(); ++i) a.push_back(arg(i));
        // Rounding functions are exact in any precision; float16 / bfloat16 math runs in double
        // and is rounded once, as in the interpreter.
        bool exact = fn == MathFn::Floor || fn == MathFn::Ceil || fn == MathFn::Trunc || fn == MathFn::Round;
        bool via_double = narrow_float(t) && !exact;
        if (via_double)
            for (Value *&x : a) x = b.CreateFPExt(x, shaped(b.getDoubleTy(), x));
        llvm::Type *ty = a[0]->getType();
        Value *r = nullptr;
        auto call = [&](llvm::Intrinsic::ID id) { return b.CreateCall(intrinsic(module, id, {ty}), a); };
        // libm functions without an LLVM intrinsic, lane by lane for vectors.
        auto libm = [&](const char *f32, const char *f64) -> Value * {
            llvm::Type *et = ty->getScalarType();
            llvm::FunctionCallee f = module.getOrInsertFunction(et->isDoubleTy() ? f64 : f32, et, et);
            if (lanes == 1) return b.CreateCall(f, {a[0]});
            Value *r = llvm::PoisonValue::get(ty);
            for (int l = 0; l < lanes; ++l)
                r = b.CreateInsertElement(r, b.CreateCall(f, {b.CreateExtractElement(a[0], uint64_t(l))}), uint64_t(l));
            return r;
        };
        switch (fn) {
        case MathFn::Sqrt: r = call(llvm::Intrinsic::sqrt); break;
        case MathFn::Exp: r = call(llvm::Intrinsic::exp); break;
        case MathFn::Log: r = call(llvm::Intrinsic::log); break;
        case MathFn::Pow: r = call(llvm::Intrinsic::pow); break;
        case MathFn::Sin: r = call(llvm::Intrinsic::sin); break;
        case MathFn::Cos: r = call(llvm::Intrinsic::cos); break;
        case MathFn::Tan: r = libm("tanf", "tan"); break;
        case MathFn::Tanh: r = libm("tanhf", "tanh"); break;
        case MathFn::Floor: r = call(llvm::Intrinsic::floor); break;
        case MathFn::Ceil: r = call(llvm::Intrinsic::ceil); break;
        case MathFn::Round: r = call(llvm::Intrinsic::roundeven); break;
        case MathFn::Trunc: r = call(llvm::Intrinsic::trunc); break;
        case MathFn::Fma: r = call(llvm::Intrinsic::fma); break;
        }
        if (via_double) return round_to(t, to_float_round_odd(b, module, r));
        return r;
    }
    default: break;
    }

    // Binary operators.
    Type at = n.args[0].type();
    Value *a = arg(0), *c = arg(1);
    bool is_float = at.is_float(), is_int = at.is_int();
    switch (n.op) {
    case Op::Add: return is_float ? round_to(t, b.CreateFAdd(a, c)) : b.CreateAdd(a, c, "", false, index_mode && is_int);
    case Op::Sub: return is_float ? round_to(t, b.CreateFSub(a, c)) : b.CreateSub(a, c, "", false, index_mode && is_int);
    case Op::Mul: return is_float ? round_to(t, b.CreateFMul(a, c)) : b.CreateMul(a, c, "", false, index_mode && is_int);
    case Op::Min:
    case Op::Max: {
        Value *pick;
        if (is_float) pick = n.op == Op::Min ? b.CreateFCmpOLT(a, c) : b.CreateFCmpOGT(a, c);
        else if (is_int) pick = n.op == Op::Min ? b.CreateICmpSLT(a, c) : b.CreateICmpSGT(a, c);
        else pick = n.op == Op::Min ? b.CreateICmpULT(a, c) : b.CreateICmpUGT(a, c);
        return b.CreateSelect(pick, a, c);
    }
    case Op::EQ: return is_float ? b.CreateFCmpOEQ(a, c) : b.CreateICmpEQ(a, c);
    case Op::NE: return is_float ? b.CreateFCmpUNE(a, c) : b.CreateICmpNE(a, c);
    case Op::LT: return is_float ? b.CreateFCmpOLT(a, c) : (is_int ? b.CreateICmpSLT(a, c) : b.CreateICmpULT(a, c));
    case Op::LE: return is_float ? b.CreateFCmpOLE(a, c) : (is_int ? b.CreateICmpSLE(a, c) : b.CreateICmpULE(a, c));
    case Op::GT: return is_float ? b.CreateFCmpOGT(a, c) : (is_int ? b.CreateICmpSGT(a, c) : b.CreateICmpUGT(a, c));
    case Op::GE: return is_float ? b.CreateFCmpOGE(a, c) : (is_int ? b.CreateICmpSGE(a, c) : b.CreateICmpUGE(a, c));
    case Op::And:
    case Op::BitAnd: return b.CreateAnd(a, c);
    case Op::Or:
    case Op::BitOr: return b.CreateOr(a, c);
    case Op::BitXor: return b.CreateXor(a, c);
    default: break;
    }

    llvm::Type *ty = a->getType();
    auto k = [&](int64_t v) { return llvm::ConstantInt::get(ty, uint64_t(v), true); };
    int64_t cv = 0;
    bool constant = const_int(n.args[1], cv);

    if (n.op == Op::Div || n.op == Op::Mod) {
        bool div = n.op == Op::Div;
        if (is_float) {
            if (div) return round_to(t, b.CreateFDiv(a, c));
            // a - b * floor(a / b): float32 in float, float64 and float16/bfloat16 in double.
            Value *x = a, *y = c;
            if (narrow_float(at)) {
                x = b.CreateFPExt(a, shaped(b.getDoubleTy(), a));
                y = b.CreateFPExt(c, shaped(b.getDoubleTy(), c));
            }
            Value *fl = b.CreateCall(intrinsic(module, llvm::Intrinsic::floor, {x->getType()}), {b.CreateFDiv(x, y)});
            Value *r = b.CreateFSub(x, b.CreateFMul(y, fl));
            if (narrow_float(at)) return round_to(t, to_float_round_odd(b, module, r));
            return r;
        }
        if (!is_int) {  // unsigned: x / 0 == x % 0 == 0
            if (constant) {
                if (cv == 0) return k(0);
                if (power_of_two(cv)) return div ? b.CreateLShr(a, uint64_t(log2_of(cv))) : b.CreateAnd(a, k(cv - 1));
                return div ? b.CreateUDiv(a, c) : b.CreateURem(a, c);
            }
            Value *zero = b.CreateICmpEQ(c, k(0));
            Value *safe = b.CreateSelect(zero, k(1), c);
            return b.CreateSelect(zero, k(0), div ? b.CreateUDiv(a, safe) : b.CreateURem(a, safe));
        }
        // Signed: Euclidean division; the remainder is in [0, |b|).
        if (constant) {
            if (cv == 0) return k(0);
            if (cv == -1) return div ? b.CreateNeg(a) : k(0);
            if (power_of_two(cv)) return div ? b.CreateAShr(a, uint64_t(log2_of(cv))) : b.CreateAnd(a, k(cv - 1));
            Value *q = b.CreateSDiv(a, c), *r = b.CreateSRem(a, c);
            Value *neg = b.CreateICmpSLT(r, k(0));
            // A negative remainder moves the quotient one away from the divisor's sign.
            if (div) return cv > 0 ? b.CreateSub(q, b.CreateZExt(neg, ty)) : b.CreateAdd(q, b.CreateZExt(neg, ty));
            return b.CreateSelect(neg, b.CreateAdd(r, k(cv > 0 ? cv : -cv)), r);
        }
        Value *zero = b.CreateICmpEQ(c, k(0)), *minus_one = b.CreateICmpEQ(c, k(-1));
        Value *safe = b.CreateSelect(b.CreateOr(zero, minus_one), k(1), c);
        Value *q = b.CreateSDiv(a, safe), *r = b.CreateSRem(a, safe);
        Value *neg = b.CreateICmpSLT(r, k(0));
        if (div) {
            Value *adjust = b.CreateSelect(neg, b.CreateSelect(b.CreateICmpSGT(safe, k(0)), k(-1), k(1)), k(0));
            q = b.CreateAdd(q, adjust);
            q = b.CreateSelect(minus_one, b.CreateNeg(a), q);
            return b.CreateSelect(zero, k(0), q);
        }
        Value *abs_b = b.CreateSelect(b.CreateICmpSLT(safe, k(0)), b.CreateNeg(safe), safe);
        r = b.CreateSelect(neg, b.CreateAdd(r, abs_b), r);
        return b.CreateSelect(b.CreateOr(zero, minus_one), k(0), r);
    }

    if (n.op == Op::Shl || n.op == Op::Shr) {
        int bits = at.bits;
        bool left = n.op == Op::Shl;
        if (constant && cv > -bits && cv < bits) {
            if (cv < 0) {
                left = !left;
                cv = -cv;
            }
            if (left) return b.CreateShl(a, uint64_t(cv));
            return is_int ? b.CreateAShr(a, uint64_t(cv)) : b.CreateLShr(a, uint64_t(cv));
        }
        // A negative amount shifts the other way; past the width gives 0 (or -1 for >> of a
        // negative signed value).
        Value *neg = is_int ? b.CreateICmpSLT(c, k(0)) : llvm::ConstantInt::getFalse(shaped(b.getInt1Ty(), c));
        Value *mag = b.CreateSelect(neg, b.CreateNeg(c), c);
        Value *big = b.CreateICmpUGE(mag, k(bits));
        Value *safe = b.CreateSelect(big, k(0), mag);
        Value *go_left = left ? b.CreateNot(neg) : neg;
        Value *l = b.CreateShl(a, safe);
        Value *r = is_int ? b.CreateAShr(a, safe) : b.CreateLShr(a, safe);
        Value *res = b.CreateSelect(go_left, l, r);
        Value *fill = is_int ? b.CreateSelect(b.CreateICmpSLT(a, k(0)), k(-1), k(0)) : k(0);
        Value *big_res = b.CreateSelect(go_left, k(0), fill);
        return b.CreateSelect(big, big_res, res);
    }
    internal_error("codegen: unsupported operator ", op_name(n.op));
}

// sext(trunc nsw x) is x, and sext(a op nsw c) is sext(a) op nsw sext(c); LLVM 19 folds
// neither in loops (it keeps the coordinate in the high half of an int64 and shifts it down at
// every access: 7 scalar instructions beside gemm's 3 vector ones).
Value *FunctionLowering::widened_index(Value *v) {
    if (auto *t = llvm::dyn_cast<llvm::TruncInst>(v); t && t->hasNoSignedWrap() && t->getSrcTy()->isIntegerTy(64))
        return t->getOperand(0);
    if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(v)) return i64(c->getSExtValue());
    if (auto *o = llvm::dyn_cast<llvm::BinaryOperator>(v); o && o->hasNoSignedWrap()) {
        auto op = o->getOpcode();
        if (op == llvm::Instruction::Add || op == llvm::Instruction::Sub || op == llvm::Instruction::Mul) {
            Value *a = widened_index(o->getOperand(0)), *c = widened_index(o->getOperand(1));
            if (op == llvm::Instruction::Add) return b.CreateAdd(a, c, "", false, true);
            if (op == llvm::Instruction::Sub) return b.CreateSub(a, c, "", false, true);
            return b.CreateMul(a, c, "", false, true);
        }
    }
    return b.CreateSExt(v, b.getInt64Ty());
}

Value *FunctionLowering::address(const StorageView &view, const std::vector<Value *> &coords) {
    if (view.window_dim >= 0) return window_address(view, coords);
    Value *offset = nullptr;
    for (size_t d = 0; d < coords.size(); ++d) {
        Value *c = widened_index(coords[d]);
        Value *rel = b.CreateSub(c, view.min[d]);
        // Dimension 0 is dense (stride 1) in every buffer compiled code sees.
        Value *term = d == 0 ? rel : b.CreateMul(rel, view.stride[d]);
        offset = offset ? b.CreateAdd(offset, term) : term;
    }
    if (!offset) offset = i64(0);
    return b.CreateInBoundsGEP(storage_type(view.type), view.base, offset);
}

const StorageView &FunctionLowering::view_of(const FuncContents *f) const {
    return storage[size_t(p.storage_of_array[size_t(m.array_of(f))])];
}

Value *FunctionLowering::load(const StorageView &view, const std::vector<Expr> &coords, const Scope &s) {
    std::vector<Value *> c;
    bool saved = index_mode;
    index_mode = !view.scratch || view.window_dim >= 0;  // local coordinates wrap (Storage::Kind::Scratch)
    for (const Expr &e : coords) c.push_back(expr(e, s));
    index_mode = saved;
    return load_at(view, c);
}

// In the aligned version of a column window (KernelState::aligned_column), the alignment of an
// access to a buffer in global memory at `coords`: the columns' when its column is a multiple of
// them past the thread's first (columns_aligned made sure the buffer allows it).
std::optional<llvm::Align> FunctionLowering::column_alignment(const StorageView &view, const std::vector<Value *> &coords) {
    if (!kernel || !kernel->aligned_column || view.scratch || coords.empty() || view.type.bytes() <= 0) return std::nullopt;
    std::optional<int64_t> d = constant_offset(widened_index(coords[0]), kernel->aligned_column);
    if (!d || *d % kernel->aligned_columns != 0) return std::nullopt;
    return llvm::Align(uint64_t(view.type.bytes()) * uint64_t(kernel->aligned_columns));
}

Value *FunctionLowering::load_at(const StorageView &view, const std::vector<Value *> &coords) {
    llvm::LoadInst *l = b.CreateLoad(storage_type(view.type), address(view, coords));
    if (std::optional<llvm::Align> a = column_alignment(view, coords)) l->setAlignment(*a);
    if (access_group) l->setMetadata(llvm::LLVMContext::MD_access_group, access_group);
    tag_access(l, view);
    return from_memory(view.type, l);
}

Value *FunctionLowering::from_memory(Type t, Value *l) {
    if (t.is_bool()) return b.CreateTrunc(l, shaped(b.getInt1Ty(), l));
    if (t.code == TypeCode::Float && t.bits == 16) return b.CreateFPExt(l, shaped(b.getFloatTy(), l));
    if (t.code == TypeCode::BFloat) {
        llvm::Type *i32 = shaped(b.getInt32Ty(), l);
        return b.CreateBitCast(b.CreateShl(b.CreateZExt(l, i32), llvm::ConstantInt::get(i32, 16)), shaped(b.getFloatTy(), l));
    }
    return l;
}

Value *FunctionLowering::to_memory(Type t, Value *v) {
    if (t.is_bool()) return b.CreateZExt(v, shaped(b.getInt8Ty(), v));
    if (t.code == TypeCode::Float && t.bits == 16) return b.CreateFPTrunc(v, shaped(b.getHalfTy(), v));
    if (t.code == TypeCode::BFloat) {
        llvm::Type *i32 = shaped(b.getInt32Ty(), v);
        return b.CreateTrunc(b.CreateLShr(b.CreateBitCast(v, i32), llvm::ConstantInt::get(i32, 16)), shaped(b.getInt16Ty(), v));
    }
    return v;
}

void FunctionLowering::make_alias_scopes(size_t arrays) {
    llvm::MDBuilder mdb(ctx);
    llvm::MDNode *domain = mdb.createAnonymousAliasScopeDomain("tessera arrays");
    for (size_t i = 0; i < arrays; ++i) alias_scopes.push_back(mdb.createAnonymousAliasScope(domain));
    for (size_t i = 0; i < arrays; ++i) {
        std::vector<llvm::Metadata *> others;
        for (size_t j = 0; j < arrays; ++j)
            if (j != i) others.push_back(alias_scopes[j]);
        noalias_lists.push_back(llvm::MDNode::get(ctx, others));
    }
}

void FunctionLowering::tag_access(llvm::Instruction *access, const StorageView &view) const {
    if (view.alias < 0 || size_t(view.alias) >= alias_scopes.size()) return;
    if (tile_slot >= 0 && &view == tile_view && size_t(tile_slot) < tile_scopes.size()) {
        // A vector step of a full register tile: its own scope besides the array's, and no
        // alias with the tile's other steps (register_tiling.h: they never touch the same element).
        std::vector<llvm::Metadata *> scopes{alias_scopes[size_t(view.alias)], tile_scopes[size_t(tile_slot)]};
        std::vector<llvm::Metadata *> others;
        for (const llvm::MDOperand &o : noalias_lists[size_t(view.alias)]->operands()) others.push_back(o.get());
        for (size_t r = 0; r < tile_scopes.size(); ++r)
            if (int(r) != tile_slot) others.push_back(tile_scopes[r]);
        access->setMetadata(llvm::LLVMContext::MD_alias_scope, llvm::MDNode::get(ctx, scopes));
        access->setMetadata(llvm::LLVMContext::MD_noalias, llvm::MDNode::get(ctx, others));
        return;
    }
    access->setMetadata(llvm::LLVMContext::MD_alias_scope, llvm::MDNode::get(ctx, {alias_scopes[size_t(view.alias)]}));
    access->setMetadata(llvm::LLVMContext::MD_noalias, noalias_lists[size_t(view.alias)]);
}

void FunctionLowering::mark_nontemporal(llvm::StoreInst *st) {
    st->setMetadata(llvm::LLVMContext::MD_nontemporal, llvm::MDNode::get(ctx, llvm::ConstantAsMetadata::get(b.getInt32(1))));
}

void FunctionLowering::store(const StorageView &view, const std::vector<Value *> &coords, Value *v, bool streaming) {
    llvm::StoreInst *st = b.CreateStore(to_memory(view.type, v), address(view, coords));
    if (std::optional<llvm::Align> a = column_alignment(view, coords)) st->setAlignment(*a);
    if (access_group) st->setMetadata(llvm::LLVMContext::MD_access_group, access_group);
    tag_access(st, view);
    if (streaming) mark_nontemporal(st);
}

} // namespace tessera::codegen
