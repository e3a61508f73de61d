// Interval arithmetic over Exprs, conservative for every operator.
#include "tessera/bounds.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>
#include <vector>

#include "tessera/buffer.h"

namespace tessera {

bool Interval::bounded() const { return std::isfinite(min) && std::isfinite(max); }

Interval Interval::hull(const Interval &o) const {
    if (empty()) return o;
    if (o.empty()) return *this;
    return Interval{std::min(min, o.min), std::max(max, o.max)};
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Interval type_range(Type t) {
    if (t.is_float()) return Interval::everything();
    return Interval{t.min_value(), t.max_value()};
}

// Integer arithmetic wraps: a result that may leave the type's range may be any value of it.
Interval fit(Type t, Interval i) {
    if (i.empty() || t.is_float()) return i;
    Interval r = type_range(t);
    if (i.min < r.min || i.max > r.max) return r;
    return i;
}

double mul(double a, double b) {
    if (a == 0 || b == 0) return 0;
    return a * b;
}

Interval corners(double a0, double a1, double b0, double b1, double (*f)(double, double)) {
    double c[4] = {f(a0, b0), f(a0, b1), f(a1, b0), f(a1, b1)};
    Interval r = Interval::nothing();
    for (double v : c) {
        if (std::isnan(v)) return Interval::everything();
        r = r.hull(Interval::point(v));
    }
    return r;
}

Interval divide(Type t, Interval a, Interval b) {
    if (t.is_float()) {
        if (b.min <= 0 && b.max >= 0) return Interval::everything();
        return corners(a.min, a.max, b.min, b.max, [](double x, double y) { return x / y; });
    }
    if (b.min == b.max && b.min != 0) {
        double c = std::fabs(b.min);
        Interval q{std::floor(a.min / c), std::floor(a.max / c)};
        if (b.min < 0) q = Interval{-q.max, -q.min};
        return q;
    }
    if (b.min > 0 || b.max < 0) {
        Interval r = corners(a.min, a.max, b.min, b.max, [](double x, double y) { return x / y; });
        return Interval{std::floor(r.min), std::ceil(r.max)};
    }
    // The divisor may be 0 (giving 0) or any other integer: |a / b| <= |a|.
    double m = std::max(std::fabs(a.min), std::fabs(a.max));
    return Interval{-m, m};
}

Interval modulo(Type t, Interval a, Interval b) {
    double m = std::max(std::fabs(b.min), std::fabs(b.max));
    if (t.is_float()) {
        if (b.min > 0) return Interval{0, b.max};
        return Interval::everything();
    }
    if (b.min == b.max && b.min != 0 && a.bounded()) {
        double c = std::fabs(b.min);
        if (std::floor(a.min / c) == std::floor(a.max / c)) {
            double base = std::floor(a.min / c) * c;
            return Interval{a.min - base, a.max - base};
        }
    }
    if (a.min >= 0 && a.max < m && b.min > 0 && a.max < b.min) return a;
    return Interval{0, std::isfinite(m) ? std::max(m - 1, 0.0) : kInf};
}

Interval bitwise(Op op, Type t, Interval a, Interval b) {
    if (a.min >= 0 && b.min >= 0 && a.bounded() && b.bounded()) {
        if (op == Op::BitAnd) return Interval{0, std::min(a.max, b.max)};
        double m = std::max(a.max, b.max);
        double p = 1;
        while (p <= m) p *= 2;
        return fit(t, Interval{0, p - 1});
    }
    return type_range(t);
}

struct Bounder {
    const BoundsScope &scope;

    // A NaN bound (a NaN constant, or inf - inf) is no bound: without this it would poison the
    // bounds around it, where min(max(int32(x + nan), -2), 1) is in [-2, 1] whatever x (fuzzer
    // seed 2200747: the interpreter rejected a pipeline the compiled path ran).
    Interval operator()(const Expr &e) const {
        Interval r = bound(e);
        if (std::isnan(r.min)) r.min = -kInf;
        if (std::isnan(r.max)) r.max = kInf;
        return r;
    }

    Interval bound(const Expr &e) const {
        const ExprNode &n = *e;
        switch (n.op) {
        case Op::IntConst: return Interval::point(double(n.int_value));
        case Op::UIntConst: return Interval::point(double(n.uint_value));
        case Op::FloatConst: return Interval::point(n.float_value);
        case Op::Var: {
            auto it = scope.vars.find(n.name);
            return it == scope.vars.end() ? type_range(n.type) : it->second;
        }
        case Op::RVar: {
            auto it = scope.rvars.find({n.rdom.get(), n.index});
            return it == scope.rvars.end() ? type_range(n.type) : it->second;
        }
        case Op::Param:
            if (n.param->is_set && !scope.symbolic) return Interval::point(ir::value_as_double(n.type, n.param->value));
            return type_range(n.type);
        case Op::BufferDim:
            if (n.input->bound && !scope.symbolic) {
                const BufferDim &d = n.input->bound->dims[size_t(n.index)];
                return Interval::point(double(n.which == 0 ? d.min : d.extent));
            }
            return n.which == 0 ? type_range(Int(32)) : Interval{0, Int(32).max_value()};
        case Op::Cast: {
            Interval a = (*this)(n.args[0]);
            Type from = n.args[0].type(), to = n.type;
            if (to.is_bool()) return Interval{0, 1};
            if (to.is_float()) return a;
            if (from.is_float()) {
                Interval r = type_range(to);
                if (a.empty()) return a;
                return Interval{std::clamp(std::trunc(a.min), r.min, r.max), std::clamp(std::trunc(a.max), r.min, r.max)};
            }
            return fit(to, a);
        }
        case Op::Add: {
            Interval a = (*this)(n.args[0]), b = (*this)(n.args[1]);
            return fit(n.type, Interval{a.min + b.min, a.max + b.max});
        }
        case Op::Sub: {
            Interval a = (*this)(n.args[0]), b = (*this)(n.args[1]);
            return fit(n.type, Interval{a.min - b.max, a.max - b.min});
        }
        case Op::Mul: {
            Interval a = (*this)(n.args[0]), b = (*this)(n.args[1]);
            return fit(n.type, corners(a.min, a.max, b.min, b.max, mul));
        }
        case Op::Div: return fit(n.type, divide(n.type, (*this)(n.args[0]), (*this)(n.args[1])));
        case Op::Mod: return fit(n.type, modulo(n.type, (*this)(n.args[0]), (*this)(n.args[1])));
        case Op::Min: {
            Interval a = (*this)(n.args[0]), b = (*this)(n.args[1]);
            return Interval{std::min(a.min, b.min), std::min(a.max, b.max)};
        }
        case Op::Max: {
            Interval a = (*this)(n.args[0]), b = (*this)(n.args[1]);
            return Interval{std::max(a.min, b.min), std::max(a.max, b.max)};
        }
        case Op::EQ:
        case Op::NE:
        case Op::LT:
        case Op::LE:
        case Op::GT:
        case Op::GE: {
            // Only "always false" is derived, and only for integers: a float may be NaN, and
            // nothing here relies on a comparison being always true.
            if (!n.args[0].type().is_int_or_uint()) return Interval{0, 1};
            Interval a = (*this)(n.args[0]), b = (*this)(n.args[1]);
            bool never = false;
            switch (n.op) {
            case Op::EQ: never = a.max < b.min || b.max < a.min; break;
            case Op::NE: never = a.min == a.max && b.min == b.max && a.min == b.min; break;
            case Op::LT: never = a.min >= b.max; break;
            case Op::LE: never = a.min > b.max; break;
            case Op::GT: never = a.max <= b.min; break;
            case Op::GE: never = a.max < b.min; break;
            default: break;
            }
            return never ? Interval{0, 0} : Interval{0, 1};
        }
        case Op::And: {
            Interval a = (*this)(n.args[0]), b = (*this)(n.args[1]);
            return a.max < 0.5 || b.max < 0.5 ? Interval{0, 0} : Interval{0, 1};
        }
        case Op::Or: {
            Interval a = (*this)(n.args[0]), b = (*this)(n.args[1]);
            return a.max < 0.5 && b.max < 0.5 ? Interval{0, 0} : Interval{0, 1};
        }
        case Op::Not: return Interval{0, 1};
        case Op::BitAnd:
        case Op::BitOr:
        case Op::BitXor: return bitwise(n.op, n.type, (*this)(n.args[0]), (*this)(n.args[1]));
        case Op::BitNot: return type_range(n.type);
        case Op::Shl:
        case Op::Shr: {
            Interval a = (*this)(n.args[0]), b = (*this)(n.args[1]);
            if (b.min == b.max && b.min >= 0 && b.min < n.type.bits && a.bounded()) {
                double s = std::ldexp(1.0, int(b.min));
                if (n.op == Op::Shl) return fit(n.type, Interval{a.min * s, a.max * s});
                return Interval{std::floor(a.min / s), std::floor(a.max / s)};
            }
            return type_range(n.type);
        }
        case Op::Abs: {
            Interval a = (*this)(n.args[0]);
            if (a.min >= 0) return fit(n.type, a);
            if (a.max <= 0) return fit(n.type, Interval{-a.max, -a.min});
            return fit(n.type, Interval{0, std::max(-a.min, a.max)});
        }
        case Op::Select: return (*this)(n.args[1]).hull((*this)(n.args[2]));
        case Op::Likely: return (*this)(n.args[0]);
        case Op::Math: {
            Interval a = (*this)(n.args[0]);
            switch (MathFn(n.index)) {
            case MathFn::Floor: return Interval{std::floor(a.min), std::floor(a.max)};
            case MathFn::Ceil: return Interval{std::ceil(a.min), std::ceil(a.max)};
            case MathFn::Round: return Interval{std::nearbyint(a.min), std::nearbyint(a.max)};
            case MathFn::Trunc: return Interval{std::trunc(a.min), std::trunc(a.max)};
            case MathFn::Sqrt:
                if (a.max < 0) return Interval::everything();  // NaN
                return Interval{std::sqrt(std::max(0.0, a.min)), std::sqrt(a.max)};
            case MathFn::Exp: return Interval{std::exp(a.min), std::exp(a.max)};
            case MathFn::Tanh: return Interval{std::tanh(a.min), std::tanh(a.max)};
            case MathFn::Sin:
            case MathFn::Cos: return Interval{-1, 1};
            default: return Interval::everything();
            }
        }
        case Op::FuncCall:
        case Op::InputCall: return type_range(n.type);
        }
        return type_range(n.type);
    }
};

} // namespace

Interval bounds_of(const Expr &e, const BoundsScope &scope) {
    Interval r = Bounder{scope}(e);
    if (std::isnan(r.min) || std::isnan(r.max)) return Interval::everything();
    return r;
}

namespace {

// An RVar or a Var plus a constant offset: `r.x`, `r.x + 2`, `2 + r.x`, `x - 2`.
struct RVarOffset {
    const ExprNode *rvar = nullptr;  // an RVar or a Var node
    int64_t offset = 0;
};

bool is_variable(const Expr &e) { return e->op == Op::RVar || e->op == Op::Var; }

std::optional<RVarOffset> rvar_offset(const Expr &e) {
    if (!e.type().is_int() || e.type().bits < 32) return std::nullopt;
    if (is_variable(e)) return RVarOffset{e.get(), 0};
    if (e->op != Op::Add && e->op != Op::Sub) return std::nullopt;
    const Expr &a = e->args[0], &b = e->args[1];
    if (is_variable(a) && b->op == Op::IntConst) return RVarOffset{a.get(), e->op == Op::Add ? b->int_value : -b->int_value};
    if (e->op == Op::Add && is_variable(b) && a->op == Op::IntConst) return RVarOffset{b.get(), a->int_value};
    return std::nullopt;
}

// The interval of the RVar (or Var) of `v` in `scope`, or null.
Interval *interval_of(const RVarOffset &v, BoundsScope &scope) {
    if (v.rvar->op == Op::RVar) {
        auto it = scope.rvars.find({v.rvar->rdom.get(), v.rvar->index});
        return it == scope.rvars.end() ? nullptr : &it->second;
    }
    auto it = scope.vars.find(v.rvar->name);
    return it == scope.vars.end() ? nullptr : &it->second;
}

// Narrows the interval of the RVar (or Var) of `v` by `v <= bound - strict` (upper) or
// `v >= bound + strict` (lower); true when it changed. A Var narrows to the values for which
// the condition can hold for some value of the RVars (`r.y <= x` with r.y >= 2 keeps x >= 2): an
// update's instances outside it run no RDom iteration and read nothing.
bool narrow(const RVarOffset &v, Type t, double bound, bool upper, int strict, BoundsScope &scope) {
    Interval *found = interval_of(v, scope);
    if (!found || !std::isfinite(bound) || found->empty()) return false;
    Interval &i = *found;
    auto narrowed = [&](Interval piece, double offset) {
        if (upper) piece.max = std::min(piece.max, std::floor(bound) - strict - offset);
        else piece.min = std::max(piece.min, std::ceil(bound) + strict - offset);
        return piece;
    };
    Interval shifted{i.min + double(v.offset), i.max + double(v.offset)};
    Interval r;
    if (shifted.min >= t.min_value() && shifted.max <= t.max_value()) {
        r = narrowed(i, double(v.offset));
    } else if (t.bits == 32) {
        // Where int32 r + offset wraps, it is r + offset -+ 2^32: the hull of the narrowed
        // pieces of r where it takes each form (the polyhedral model holds the same condition
        // exactly, to_set_wrapping).
        const double turn = 4294967296.0;
        r = Interval::nothing();
        for (double k : {-1.0, 0.0, 1.0}) {
            double offset = double(v.offset) + k * turn;
            Interval piece{std::max(i.min, t.min_value() - offset), std::min(i.max, t.max_value() - offset)};
            if (piece.empty()) continue;
            piece = narrowed(piece, offset);
            if (!piece.empty()) r = r.hull(piece);
        }
    } else {
        return false;  // a wrapping 64-bit sum says nothing about r here
    }
    if (r.min == i.min && r.max == i.max) return false;
    i = r;
    return true;
}

// Narrows the interval of the RVar (or Var) of `v` by `v != value`, where value is an end of
// the range of v (r + offset, which may not wrap); true when it changed.
bool exclude_end(const RVarOffset &v, Type t, double value, BoundsScope &scope) {
    Interval *found = interval_of(v, scope);
    if (!found || found->empty() || !found->bounded()) return false;
    Interval &i = *found;
    double offset = double(v.offset);
    if (i.min + offset < t.min_value() || i.max + offset > t.max_value()) return false;
    if (i.min + offset == value) {
        i.min += 1;
        return true;
    }
    if (i.max + offset == value) {
        i.max -= 1;
        return true;
    }
    return false;
}

} // namespace

void narrow_by_condition(const Expr &condition, BoundsScope &scope) {
    std::vector<Expr> cs = ir::conjuncts(condition);
    for (int round = 0; round < 4; ++round) {
        bool changed = false;
        for (const Expr &c : cs) {
            if (c->args.size() != 2 || !c->args[0].type().is_int_or_uint()) continue;
            // As pairs (lhs, rhs, strict) meaning lhs <= rhs - strict.
            std::vector<std::tuple<Expr, Expr, int>> les;
            const Expr &a = c->args[0], &b = c->args[1];
            switch (c->op) {
            case Op::LT: les.emplace_back(a, b, 1); break;
            case Op::LE: les.emplace_back(a, b, 0); break;
            case Op::GT: les.emplace_back(b, a, 1); break;
            case Op::GE: les.emplace_back(b, a, 0); break;
            case Op::EQ: les.emplace_back(a, b, 0); les.emplace_back(b, a, 0); break;
            default: break;
            }
            for (const auto &[lhs, rhs, strict] : les) {
                if (auto v = rvar_offset(lhs)) changed |= narrow(*v, lhs.type(), bounds_of(rhs, scope).max, true, strict, scope);
                if (auto v = rvar_offset(rhs)) changed |= narrow(*v, rhs.type(), bounds_of(lhs, scope).min, false, strict, scope);
            }
            // `r + c != k` excludes one value: an end of r's range that it is (the polyhedral
            // model sees the predicate exactly; fuzzer seed 2422218 wrote f(r, r) with r in
            // [-1, 2] where r != -1, and only the interpreter asked the output to cover -1).
            if (c->op == Op::NE)
                for (const auto &[var, other] : {std::pair{a, b}, std::pair{b, a}}) {
                    auto v = rvar_offset(var);
                    Interval k = bounds_of(other, scope);
                    if (v && k.bounded() && k.min == k.max) changed |= exclude_end(*v, var.type(), k.min, scope);
                }
        }
        if (!changed) break;
    }
}

} // namespace tessera
