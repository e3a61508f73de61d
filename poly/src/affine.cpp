// Expr → isl conversion: exact pw_affs for affine expressions, sets for affine conditions, and
// affine bounds for the rest.
#include "tessera/poly/affine.h"

#include <cmath>
#include <limits>

#include <isl/aff.h>
#include <isl/local_space.h>
#include <isl/set.h>

#include <tessera/bounds.h>

namespace tessera::poly {
namespace {

// Whether every value of the integer type `from` is a value of `to` (a cast is then the identity).
bool keeps_every_value(Type from, Type to) {
    return to.min_value() <= from.min_value() && from.max_value() <= to.max_value();
}

isl::pw_aff constant(const AffineSpace &s, long v) {
    isl_local_space *ls = isl_local_space_from_space(s.universe.space().release());
    return isl::manage(isl_pw_aff_from_aff(isl_aff_val_on_domain(ls, isl_val_int_from_si(s.universe.ctx().get(), v))));
}

std::optional<long> const_int(const Expr &e) {
    auto c = ir::as_const_int(e);
    if (!c || *c > (1L << 40) || *c < -(1L << 40)) return std::nullopt;
    return long(*c);
}

bool is_integer(const Expr &e) { return e.type().is_int_or_uint() && !e.type().is_bool(); }

// Arithmetic that wraps within its type at values an index reaches: in a type narrower than 32
// bits, or unsigned (uint16 x + 65530 is x - 6 modulo 65536). Its structural bounds do not hold;
// only interval bounds that know the wrap (numeric_bounds) do. Signed 32- and 64-bit index
// arithmetic is taken not to wrap (regions are checked against int32 at run time).
bool wrapping_arithmetic(const Expr &e) {
    Type t = e.type();
    bool arithmetic = e->op == Op::Add || e->op == Op::Sub || e->op == Op::Mul;
    return arithmetic && is_integer(e) && (t.bits < 32 || t.is_uint());
}

} // namespace

std::optional<isl::pw_aff> to_pw_aff(const Expr &e, const AffineSpace &s) {
    if (!e.defined() || !is_integer(e) || wrapping_arithmetic(e)) return std::nullopt;
    const ExprNode &n = *e;
    switch (n.op) {
    case Op::IntConst:
    case Op::UIntConst: {
        auto c = const_int(e);
        if (!c) return std::nullopt;
        return constant(s, *c);
    }
    case Op::Var: {
        auto it = s.var_dims.find(n.name);
        if (it != s.var_dims.end())
            return isl::manage(isl_pw_aff_var_on_domain(isl_local_space_from_space(s.universe.space().release()),
                                                        isl_dim_set, unsigned(it->second)));
        if (s.param_id) {
            if (auto id = s.param_id(n.name))
                return isl::manage(isl_pw_aff_param_on_domain_id(s.universe.copy(), id->release()));
        }
        return std::nullopt;
    }
    case Op::Cast: {
        // The identity only when the new type holds every value of the old one: a narrowing or
        // sign-changing cast wraps (cast<uint8_t>(r) of r = -1 is 255; modeling it as r made a
        // region too small and the compiled code read outside it, fuzzer seed 2688).
        if (!is_integer(n.args[0]) || !keeps_every_value(n.args[0].type(), n.type)) return std::nullopt;
        return to_pw_aff(n.args[0], s);
    }
    case Op::Likely: return to_pw_aff(n.args[0], s);
    case Op::Add:
    case Op::Sub: {
        auto a = to_pw_aff(n.args[0], s), b = to_pw_aff(n.args[1], s);
        if (!a || !b) return std::nullopt;
        return n.op == Op::Add ? a->add(*b) : a->sub(*b);
    }
    case Op::Mul: {
        auto ca = const_int(n.args[0]), cb = const_int(n.args[1]);
        if (cb) {
            auto a = to_pw_aff(n.args[0], s);
            if (!a) return std::nullopt;
            return a->scale(isl::val(s.universe.ctx(), *cb));
        }
        if (ca) {
            auto b = to_pw_aff(n.args[1], s);
            if (!b) return std::nullopt;
            return b->scale(isl::val(s.universe.ctx(), *ca));
        }
        return std::nullopt;
    }
    case Op::Div: {
        auto c = const_int(n.args[1]);
        if (!c || *c == 0) return std::nullopt;
        auto a = to_pw_aff(n.args[0], s);
        if (!a) return std::nullopt;
        // Euclidean division: floor(a / c) for c > 0, -floor(a / -c) for c < 0.
        isl::pw_aff q = a->scale_down(isl::val(s.universe.ctx(), std::labs(*c))).floor();
        return *c > 0 ? q : q.neg();
    }
    case Op::Mod: {
        auto c = const_int(n.args[1]);
        if (!c || *c == 0) return std::nullopt;
        auto a = to_pw_aff(n.args[0], s);
        if (!a) return std::nullopt;
        return a->mod(isl::val(s.universe.ctx(), std::labs(*c)));
    }
    case Op::Min:
    case Op::Max: {
        auto a = to_pw_aff(n.args[0], s), b = to_pw_aff(n.args[1], s);
        if (!a || !b) return std::nullopt;
        return n.op == Op::Min ? a->min(*b) : a->max(*b);
    }
    case Op::Select: {
        if (!s.exact_selects) return std::nullopt;
        auto c = to_set(n.args[0], s);
        auto a = to_pw_aff(n.args[1], s), b = to_pw_aff(n.args[2], s);
        if (!c || !a || !b) return std::nullopt;
        isl::pw_aff indicator = isl::manage(isl_set_indicator_function(c->copy()));
        return indicator.cond(*a, *b);
    }
    default: return std::nullopt;
    }
}

namespace {

// Whether `e` is an int32 Var plus or minus a constant, or a constant: the form the
// interpreter's bounds narrow exactly where the sum wraps (narrow_by_condition), which keeps the
// two paths' regions the same.
bool int32_offset_or_constant(const Expr &e) {
    if (e.type() != Int(32)) return false;
    const ExprNode &n = *e;
    if (n.op == Op::IntConst || n.op == Op::Var) return true;
    if (n.op != Op::Add && n.op != Op::Sub) return false;
    const Expr &a = n.args[0], &b = n.args[1];
    return (a->op == Op::Var && b->op == Op::IntConst) || (n.op == Op::Add && a->op == Op::IntConst && b->op == Op::Var);
}

// v wrapped into int32 as two's complement: v - 2^32 floor((v + 2^31) / 2^32).
isl::pw_aff wrapped_int32(const isl::pw_aff &v, const AffineSpace &s) {
    isl::ctx ctx = s.universe.ctx();
    isl::pw_aff shifted = v.add(isl::manage(isl_pw_aff_val_on_domain(s.universe.copy(), isl_val_int_from_si(ctx.get(), 1L << 31))));
    isl::pw_aff turns = shifted.scale_down(isl::val(ctx, 1L << 32)).floor();
    return v.sub(turns.scale(isl::val(ctx, 1L << 32)));
}

// The set where `e` holds, for to_set (`wrapping` false: comparisons of affine values that do
// not wrap) and to_set_wrapping (comparisons of an int32 Var plus or minus a constant with a
// constant, wrapped modulo 2^32).
std::optional<isl::set> condition_set(const Expr &e, const AffineSpace &s, bool wrapping) {
    if (!e.defined() || !e.type().is_bool()) return std::nullopt;
    const ExprNode &n = *e;
    switch (n.op) {
    case Op::UIntConst:
        if (wrapping) return std::nullopt;
        return n.uint_value ? s.universe : isl::set::empty(s.universe.space());
    case Op::Likely: return condition_set(n.args[0], s, wrapping);
    case Op::Not: {
        auto a = condition_set(n.args[0], s, wrapping);
        if (!a) return std::nullopt;
        return s.universe.subtract(*a);
    }
    case Op::And:
    case Op::Or: {
        auto a = condition_set(n.args[0], s, wrapping), b = condition_set(n.args[1], s, wrapping);
        if (!a || !b) return std::nullopt;
        return n.op == Op::And ? a->intersect(*b) : a->unite(*b);
    }
    case Op::EQ:
    case Op::NE:
    case Op::LT:
    case Op::LE:
    case Op::GT:
    case Op::GE: {
        if (wrapping ? !int32_offset_or_constant(n.args[0]) || !int32_offset_or_constant(n.args[1]) ||
                           (n.args[0]->op != Op::IntConst && n.args[1]->op != Op::IntConst)
                     : !is_integer(n.args[0]))
            return std::nullopt;
        auto a = to_pw_aff(n.args[0], s), b = to_pw_aff(n.args[1], s);
        if (!a || !b) return std::nullopt;
        if (wrapping) {
            a = wrapped_int32(*a, s);
            b = wrapped_int32(*b, s);
        }
        isl::set r;
        switch (n.op) {
        case Op::EQ: r = a->eq_set(*b); break;
        case Op::NE: r = a->ne_set(*b); break;
        case Op::LT: r = a->lt_set(*b); break;
        case Op::LE: r = a->le_set(*b); break;
        case Op::GT: r = a->gt_set(*b); break;
        default: r = a->ge_set(*b); break;
        }
        return r.intersect(s.universe);
    }
    default: return std::nullopt;
    }
}

} // namespace

std::optional<isl::set> to_set(const Expr &e, const AffineSpace &s) { return condition_set(e, s, false); }

std::optional<isl::set> to_set_wrapping(const Expr &e, const AffineSpace &s) { return condition_set(e, s, true); }

isl::set exact_conditions(const Expr &e, const AffineSpace &s) {
    isl::set r = s.universe;
    auto in_range = [&](const Expr &operand) {
        ir::visit(operand, [&](const Expr &n) {
            bool arithmetic = n->op == Op::Add || n->op == Op::Sub || n->op == Op::Mul || n->op == Op::Div;
            if (!arithmetic || !is_integer(n)) return true;
            auto v = to_pw_aff(n, s);  // narrow and unsigned arithmetic is never affine
            if (!v) return true;
            int bits = n.type().bits;
            long lo = bits >= 64 ? std::numeric_limits<long>::min() : -(1L << (bits - 1));
            long hi = bits >= 64 ? std::numeric_limits<long>::max() : (1L << (bits - 1)) - 1;
            r = r.intersect(v->ge_set(constant(s, lo))).intersect(v->le_set(constant(s, hi)));
            return true;
        });
    };
    ir::visit(e, [&](const Expr &n) {
        switch (n->op) {
        case Op::EQ:
        case Op::NE:
        case Op::LT:
        case Op::LE:
        case Op::GT:
        case Op::GE:
            in_range(n->args[0]);
            in_range(n->args[1]);
            return false;
        default: return true;
        }
    });
    return r;
}

namespace {

std::optional<isl::pw_aff> opt_min(const std::optional<isl::pw_aff> &a, const std::optional<isl::pw_aff> &b) {
    if (!a || !b) return std::nullopt;
    return a->min(*b);
}
std::optional<isl::pw_aff> opt_max(const std::optional<isl::pw_aff> &a, const std::optional<isl::pw_aff> &b) {
    if (!a || !b) return std::nullopt;
    return a->max(*b);
}
std::optional<isl::pw_aff> opt_add(const std::optional<isl::pw_aff> &a, const std::optional<isl::pw_aff> &b) {
    if (!a || !b) return std::nullopt;
    return a->add(*b);
}

// Numeric bounds that hold whatever the variables and parameters are (types, clamps of
// constants, loaded values).
AffineBounds numeric_bounds(const Expr &e, const AffineSpace &s) {
    BoundsScope scope;
    scope.symbolic = true;
    Interval i = bounds_of(e, scope);
    AffineBounds b;
    const double limit = 2147483647.0;
    if (std::isfinite(i.min) && std::fabs(i.min) <= limit) b.lo = constant(s, long(std::ceil(i.min)));
    if (std::isfinite(i.max) && std::fabs(i.max) <= limit) b.hi = constant(s, long(std::floor(i.max)));
    // The whole range of a 32-bit or wider integer is no useful bound.
    if (i.min <= -limit && i.max >= limit) b.lo = b.hi = std::nullopt;
    return b;
}

} // namespace

AffineBounds affine_bounds(const Expr &e, const AffineSpace &s) {
    if (auto exact = to_pw_aff(e, s)) return AffineBounds{exact, exact, true};
    if (wrapping_arithmetic(e)) return numeric_bounds(e, s);  // inexact: the type's range at most
    const ExprNode &n = *e;
    AffineBounds r;
    switch (n.op) {
    case Op::Min: {
        AffineBounds a = affine_bounds(n.args[0], s), b = affine_bounds(n.args[1], s);
        r.lo = opt_min(a.lo, b.lo);
        r.hi = a.hi && b.hi ? opt_min(a.hi, b.hi) : (a.hi ? a.hi : b.hi);
        break;
    }
    case Op::Max: {
        AffineBounds a = affine_bounds(n.args[0], s), b = affine_bounds(n.args[1], s);
        r.lo = a.lo && b.lo ? opt_max(a.lo, b.lo) : (a.lo ? a.lo : b.lo);
        r.hi = opt_max(a.hi, b.hi);
        break;
    }
    case Op::Select: {
        AffineBounds a = affine_bounds(n.args[1], s), b = affine_bounds(n.args[2], s);
        r.lo = opt_min(a.lo, b.lo);
        r.hi = opt_max(a.hi, b.hi);
        break;
    }
    case Op::Add: {
        AffineBounds a = affine_bounds(n.args[0], s), b = affine_bounds(n.args[1], s);
        r.lo = opt_add(a.lo, b.lo);
        r.hi = opt_add(a.hi, b.hi);
        break;
    }
    case Op::Sub: {
        AffineBounds a = affine_bounds(n.args[0], s), b = affine_bounds(n.args[1], s);
        if (a.lo && b.hi) r.lo = a.lo->sub(*b.hi);
        if (a.hi && b.lo) r.hi = a.hi->sub(*b.lo);
        break;
    }
    case Op::Mul: {
        auto c = ir::as_const_int(n.args[1]);
        const Expr &other = c ? n.args[0] : n.args[1];
        if (!c) c = ir::as_const_int(n.args[0]);
        if (!c) break;
        AffineBounds a = affine_bounds(other, s);
        isl::val v(s.universe.ctx(), long(*c));
        if (*c >= 0) {
            if (a.lo) r.lo = a.lo->scale(v);
            if (a.hi) r.hi = a.hi->scale(v);
        } else {
            if (a.hi) r.lo = a.hi->scale(v);
            if (a.lo) r.hi = a.lo->scale(v);
        }
        break;
    }
    case Op::Div: {
        auto c = ir::as_const_int(n.args[1]);
        if (!c || *c <= 0) break;
        AffineBounds a = affine_bounds(n.args[0], s);
        isl::val v(s.universe.ctx(), long(*c));
        if (a.lo) r.lo = a.lo->scale_down(v).floor();
        if (a.hi) r.hi = a.hi->scale_down(v).floor();
        break;
    }
    case Op::Mod: {
        // The remainder is in [0, |b| - 1]; a non-constant divisor is assumed positive.
        if (auto c = ir::as_const_int(n.args[1]); c && *c != 0) {
            r.lo = constant(s, 0);
            r.hi = constant(s, long(std::llabs(*c) - 1));
        } else {
            AffineBounds b = affine_bounds(n.args[1], s);
            r.lo = constant(s, 0);
            if (b.hi) r.hi = b.hi->sub(constant(s, 1));
        }
        break;
    }
    case Op::Cast:
        if (is_integer(n.args[0]) && is_integer(e)) {
            // A cast to a type that holds every value keeps the bounds; any other may wrap (its
            // bounds are then the new type's, from numeric_bounds below).
            if (keeps_every_value(n.args[0].type(), e.type())) {
                r = affine_bounds(n.args[0], s);
            } else if (e.type().bits <= 32) {
                // Where the operand's bounds lie in the new type's range, the cast keeps them;
                // elsewhere it may wrap to any value of the type (as the interpreter's interval
                // arithmetic has it: clamp(int32(int8(x)), 1, 16) over x in [-1, 15] needs
                // [1, 15], fuzzer seed 1806989).
                AffineBounds a = affine_bounds(n.args[0], s);
                if (a.lo && a.hi) {
                    isl::pw_aff tmin = constant(s, long(e.type().min_value())), tmax = constant(s, long(e.type().max_value()));
                    isl::set fits = a.lo->ge_set(tmin).intersect(a.hi->le_set(tmax));
                    isl::pw_aff inside = isl::manage(isl_set_indicator_function(fits.copy()));
                    r.lo = inside.cond(*a.lo, tmin);
                    r.hi = inside.cond(*a.hi, tmax);
                }
            }
        }
        break;
    case Op::Likely: r = affine_bounds(n.args[0], s); break;
    default: break;
    }
    r.exact = false;
    // Tighten with the numeric bounds where the structural ones are missing.
    AffineBounds num = numeric_bounds(e, s);
    if (!r.lo) r.lo = num.lo;
    if (!r.hi) r.hi = num.hi;
    return r;
}

} // namespace tessera::poly
