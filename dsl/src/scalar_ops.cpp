// The exact semantics of every scalar operation of the DSL. The reference interpreter and
// constant folding both evaluate through these functions; code generators must match them.
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "tessera/ir.h"

namespace tessera::ir {
namespace {

int64_t sign_extend(uint64_t v, int bits) {
    if (bits >= 64) return int64_t(v);
    uint64_t shifted = v << (64 - bits);
    int64_t r;
    std::memcpy(&r, &shifted, sizeof r);
    return r >> (64 - bits);
}

uint64_t zero_extend(uint64_t v, int bits) {
    if (bits >= 64) return v;
    return v & ((uint64_t(1) << bits) - 1);
}

// Applies a float operation in the precision of type t: float32 in float, float64 in double,
// float16/bfloat16 in double and rounded once (innocuous double rounding: double has more than
// twice their precision plus two bits).
template <typename F32, typename F64>
double float_op(Type t, F32 f32, F64 f64) {
    if (t.code == TypeCode::Float && t.bits == 32) return double(f32());
    double r = f64();
    return normalize(t, Value{.f = r}).f;
}

Value make_bool_value(bool b) {
    Value v;
    v.u = b ? 1 : 0;
    return v;
}

// Euclidean division and remainder on int64 (remainder in [0, |b|)); b == 0 gives 0, 0.
void euclid_div(int64_t a, int64_t b, int64_t &q, int64_t &r) {
    if (b == 0) {
        q = 0;
        r = 0;
        return;
    }
    if (b == -1) {  // avoids the overflow of INT64_MIN / -1; wraps like the other operations
        q = int64_t(uint64_t(0) - uint64_t(a));
        r = 0;
        return;
    }
    q = a / b;
    r = a % b;
    if (r < 0) {
        if (b > 0) {
            q -= 1;
            r += b;
        } else {
            q += 1;
            r -= b;
        }
    }
}

int compare_values(Type t, Value a, Value b, bool &unordered) {
    unordered = false;
    if (t.is_float()) {
        if (std::isnan(a.f) || std::isnan(b.f)) {
            unordered = true;
            return 0;
        }
        return a.f < b.f ? -1 : (a.f > b.f ? 1 : 0);
    }
    if (t.is_int()) return a.i < b.i ? -1 : (a.i > b.i ? 1 : 0);
    return a.u < b.u ? -1 : (a.u > b.u ? 1 : 0);
}

// Shifts by `magnitude` bits, left or right; a magnitude of at least the width gives 0 (or -1
// for a right shift of a negative signed value).
Value shift(Type t, Value a, bool left, uint64_t magnitude) {
    Value r;
    if (magnitude >= uint64_t(t.bits)) {
        if (!left && t.is_int()) r.i = a.i < 0 ? -1 : 0;
        else r.u = 0;
        return r;
    }
    if (left) r.u = a.u << magnitude;
    else if (t.is_int()) r.i = a.i >> magnitude;
    else r.u = a.u >> magnitude;
    return normalize(t, r);
}

} // namespace

Value normalize(Type t, Value v) {
    switch (t.code) {
    case TypeCode::Int: v.i = sign_extend(v.u, t.bits); break;
    case TypeCode::UInt: v.u = zero_extend(v.u, t.bits); break;
    case TypeCode::Float:
        if (t.bits == 32) v.f = double(float(v.f));
        else if (t.bits == 16) v.f = detail::round_to_float16(v.f);
        break;
    case TypeCode::BFloat: v.f = detail::round_to_bfloat16(v.f); break;
    }
    return v;
}

Value eval_binary(Op op, Type t, Value a, Value b) {
    Value r;
    bool unordered = false;
    switch (op) {
    case Op::Add:
        if (t.is_float()) r.f = float_op(t, [&] { return float(a.f) + float(b.f); }, [&] { return a.f + b.f; });
        else r.u = a.u + b.u;
        return normalize(t, r);
    case Op::Sub:
        if (t.is_float()) r.f = float_op(t, [&] { return float(a.f) - float(b.f); }, [&] { return a.f - b.f; });
        else r.u = a.u - b.u;
        return normalize(t, r);
    case Op::Mul:
        if (t.is_float()) r.f = float_op(t, [&] { return float(a.f) * float(b.f); }, [&] { return a.f * b.f; });
        else r.u = a.u * b.u;
        return normalize(t, r);
    case Op::Div:
        if (t.is_float()) {
            r.f = float_op(t, [&] { return float(a.f) / float(b.f); }, [&] { return a.f / b.f; });
        } else if (t.is_int()) {
            int64_t q, rem;
            euclid_div(a.i, b.i, q, rem);
            r.i = q;
        } else {
            r.u = b.u == 0 ? 0 : a.u / b.u;
        }
        return normalize(t, r);
    case Op::Mod:
        if (t.is_float()) {
            r.f = float_op(
                t, [&] { return float(a.f) - float(b.f) * std::floor(float(a.f) / float(b.f)); },
                [&] { return a.f - b.f * std::floor(a.f / b.f); });
        } else if (t.is_int()) {
            int64_t q, rem;
            euclid_div(a.i, b.i, q, rem);
            r.i = rem;
        } else {
            r.u = b.u == 0 ? 0 : a.u % b.u;
        }
        return normalize(t, r);
    case Op::Min:
    case Op::Max: {
        // min(a, b) = a < b ? a : b and max(a, b) = a > b ? a : b (NaN in a gives b), which is
        // what x86 minps/maxps compute.
        int c = compare_values(t, a, b, unordered);
        if (op == Op::Min) return (!unordered && c < 0) ? a : b;
        return (!unordered && c > 0) ? a : b;
    }
    case Op::EQ: {
        int c = compare_values(t, a, b, unordered);
        return make_bool_value(!unordered && c == 0);
    }
    case Op::NE: {
        int c = compare_values(t, a, b, unordered);
        return make_bool_value(unordered || c != 0);
    }
    case Op::LT: {
        int c = compare_values(t, a, b, unordered);
        return make_bool_value(!unordered && c < 0);
    }
    case Op::LE: {
        int c = compare_values(t, a, b, unordered);
        return make_bool_value(!unordered && c <= 0);
    }
    case Op::GT: {
        int c = compare_values(t, a, b, unordered);
        return make_bool_value(!unordered && c > 0);
    }
    case Op::GE: {
        int c = compare_values(t, a, b, unordered);
        return make_bool_value(!unordered && c >= 0);
    }
    case Op::And: return make_bool_value(a.u && b.u);
    case Op::Or: return make_bool_value(a.u || b.u);
    case Op::BitAnd: r.u = a.u & b.u; return normalize(t, r);
    case Op::BitOr: r.u = a.u | b.u; return normalize(t, r);
    case Op::BitXor: r.u = a.u ^ b.u; return normalize(t, r);
    case Op::Shl:
    case Op::Shr: {
        // A negative (signed) amount shifts the other way; its magnitude is computed unsigned so
        // that the most negative amount is well defined.
        bool negative = t.is_int() && b.i < 0;
        uint64_t magnitude = negative ? uint64_t(0) - b.u : b.u;
        return shift(t, a, (op == Op::Shl) != negative, magnitude);
    }
    default: break;
    }
    internal_error("eval_binary: not a binary operator: ", op_name(op));
}

Value eval_unary(Op op, Type t, Value a) {
    Value r;
    switch (op) {
    case Op::Not: return make_bool_value(!a.u);
    case Op::BitNot: r.u = ~a.u; return normalize(t, r);
    case Op::Abs:
        if (t.is_float()) {
            r.f = std::fabs(a.f);
            return r;
        }
        if (t.is_int()) {
            r.u = a.i < 0 ? uint64_t(0) - uint64_t(a.i) : uint64_t(a.i);
            return normalize(UInt(t.bits), r);
        }
        return a;
    case Op::Likely: return a;
    default: break;
    }
    internal_error("eval_unary: not a unary operator: ", op_name(op));
}

Value eval_cast(Type to, Type from, Value v) {
    Value r;
    if (to.is_bool()) {
        if (from.is_float()) return make_bool_value(v.f != 0.0);
        return make_bool_value(v.u != 0);
    }
    if (from.is_float()) {
        if (to.is_float()) {
            r.f = v.f;
            return normalize(to, r);
        }
        // Truncate toward zero and saturate; NaN becomes 0 (LLVM's fptosi.sat/fptoui.sat).
        if (std::isnan(v.f)) {
            r.u = 0;
            return r;
        }
        double t = std::trunc(v.f);
        if (to.is_int()) {
            double lo = to.min_value();
            double hi_excl = std::ldexp(1.0, to.bits - 1);
            if (t <= lo) r.i = int64_t(lo);
            else if (t >= hi_excl) r.i = to.bits == 64 ? INT64_MAX : int64_t(hi_excl) - 1;
            else r.i = int64_t(t);
        } else {
            double hi_excl = std::ldexp(1.0, to.bits);
            if (t <= 0) r.u = 0;
            else if (t >= hi_excl) r.u = to.bits == 64 ? UINT64_MAX : uint64_t(hi_excl) - 1;
            else r.u = uint64_t(t);
        }
        return r;
    }
    if (to.is_float()) {
        if (to.code == TypeCode::Float && to.bits == 32) {
            r.f = from.is_int() ? double(float(v.i)) : double(float(v.u));
        } else if (to.code == TypeCode::Float && to.bits == 64) {
            r.f = from.is_int() ? double(v.i) : double(v.u);
        } else {
            r.f = from.is_int() ? double(v.i) : double(v.u);
            r = normalize(to, r);
        }
        return r;
    }
    // Integer to integer: reinterpret the 64-bit pattern (sign- or zero-extended), then wrap.
    return normalize(to, v);
}

Value eval_math(MathFn fn, Type t, const Value *args) {
    Value r{};
    double a = args[0].f;
    auto f = [&](auto f32, auto f64) {
        return float_op(t, [&] { return f32(float(a)); }, [&] { return f64(a); });
    };
    switch (fn) {
    case MathFn::Sqrt: r.f = f([](float x) { return std::sqrt(x); }, [](double x) { return std::sqrt(x); }); break;
    case MathFn::Exp: r.f = f([](float x) { return std::exp(x); }, [](double x) { return std::exp(x); }); break;
    case MathFn::Log: r.f = f([](float x) { return std::log(x); }, [](double x) { return std::log(x); }); break;
    case MathFn::Sin: r.f = f([](float x) { return std::sin(x); }, [](double x) { return std::sin(x); }); break;
    case MathFn::Cos: r.f = f([](float x) { return std::cos(x); }, [](double x) { return std::cos(x); }); break;
    case MathFn::Tan: r.f = f([](float x) { return std::tan(x); }, [](double x) { return std::tan(x); }); break;
    case MathFn::Tanh: r.f = f([](float x) { return std::tanh(x); }, [](double x) { return std::tanh(x); }); break;
    case MathFn::Floor: r.f = std::floor(a); break;
    case MathFn::Ceil: r.f = std::ceil(a); break;
    case MathFn::Round: r.f = std::nearbyint(a); break;
    case MathFn::Trunc: r.f = std::trunc(a); break;
    case MathFn::Pow: {
        double b = args[1].f;
        r.f = float_op(t, [&] { return std::pow(float(a), float(b)); }, [&] { return std::pow(a, b); });
        break;
    }
    case MathFn::Fma: {
        double b = args[1].f, c = args[2].f;
        r.f = float_op(t, [&] { return std::fma(float(a), float(b), float(c)); },
                       [&] { return std::fma(a, b, c); });
        break;
    }
    }
    return r;
}

double value_as_double(Type t, Value v) {
    if (t.is_float()) return v.f;
    if (t.is_int()) return double(v.i);
    return double(v.u);
}

Value value_from_double(Type t, double d) { return eval_cast(t, Float(64), Value{.f = d}); }

std::string value_to_string(Type t, Value v) {
    std::ostringstream s;
    if (t.is_bool()) s << (v.u ? "true" : "false");
    else if (t.is_int()) s << v.i;
    else if (t.is_uint()) s << v.u;
    else {
        s.precision(9);
        s << v.f;
    }
    return s.str();
}

} // namespace tessera::ir
