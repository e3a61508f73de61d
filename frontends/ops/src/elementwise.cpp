// Elementwise ops with broadcasting and torch's type promotion (tensor.h).
#include <cmath>
#include <functional>

#include <tessera/expr.h>

#include "tensor_util.h"

namespace tessera::ops {

namespace {

// A result over the broadcast shape of `operands`, each read at its broadcast coordinates.
Tensor elementwise(const std::string &op, const std::vector<const Tensor *> &operands,
                   const std::function<Expr(const std::vector<Expr> &)> &fn) {
    std::vector<int64_t> shape = operands[0]->shape();
    for (size_t i = 1; i < operands.size(); ++i) shape = broadcast_shapes(shape, operands[i]->shape(), op);
    Axes axes = make_axes(shape.size());
    std::vector<Expr> values;
    for (const Tensor *t : operands) values.push_back(read_broadcast(*t, shape, axes.exprs));
    return inline_or_func(op, axes, fn(values), shape);
}

Tensor binary(const std::string &op, const Tensor &a, const Tensor &b, Type compute,
              const std::function<Expr(Expr, Expr)> &fn) {
    return elementwise(op, {&a, &b}, [&](const std::vector<Expr> &v) { return fn(cast(compute, v[0]), cast(compute, v[1])); });
}

Tensor promoted(const std::string &op, const Tensor &a, const Tensor &b, const std::function<Expr(Expr, Expr)> &fn) {
    Type t = promote_types(a.type(), b.type());
    if (t.is_bool() && op != "maximum" && op != "minimum")
        user_error("ops::", op, ": both operands are bool; cast one to an integer type first.");
    return binary(op, a, b, t, fn);
}

Tensor unary(const std::string &op, const Tensor &a, Type compute, const std::function<Expr(Expr)> &fn) {
    return elementwise(op, {&a}, [&](const std::vector<Expr> &v) { return fn(cast(compute, v[0])); });
}

Tensor float_unary(const std::string &op, const Tensor &a, const std::function<Expr(Expr)> &fn) {
    return unary(op, a, float_type_for(a.type()), fn);
}

// The type of `a op scalar` in torch: the tensor's type, unless a float scalar meets an integer
// or bool tensor (float32), or an integer scalar a bool tensor (int64).
Type type_with_scalar(Type t, double scalar) {
    bool integral = std::floor(scalar) == scalar && std::fabs(scalar) < 9.2e18;
    if (t.is_float()) return t;
    if (!integral) return Float(32);
    return t.is_bool() ? Int(64) : t;
}

Tensor with_scalar(const std::string &op, const Tensor &a, double b, const std::function<Expr(Expr, Expr)> &fn) {
    Type t = type_with_scalar(a.type(), b);
    Expr s = t.is_float() ? make_const(t, b) : make_const(t, int64_t(b));
    return unary(op, a, t, [&](Expr x) { return fn(x, s); });
}

// erf(x) for float32 arithmetic: Abramowitz and Stegun 7.1.26, absolute error below 1.5e-7.
Expr erf_approximation(Expr x) {
    Type t = x.type();
    auto c = [&](double v) { return make_const(t, v); };
    Expr ax = abs(x);
    Expr k = c(1) / (c(1) + c(0.3275911) * ax);
    Expr poly = k * (c(0.254829592) + k * (c(-0.284496736) + k * (c(1.421413741) + k * (c(-1.453152027) + k * c(1.061405429)))));
    Expr y = c(1) - poly * exp(-ax * ax);
    return select(x < c(0), -y, y);
}

} // namespace

Tensor add(const Tensor &a, const Tensor &b) { return promoted("add", a, b, [](Expr x, Expr y) { return x + y; }); }
Tensor sub(const Tensor &a, const Tensor &b) { return promoted("sub", a, b, [](Expr x, Expr y) { return x - y; }); }
Tensor mul(const Tensor &a, const Tensor &b) { return promoted("mul", a, b, [](Expr x, Expr y) { return x * y; }); }
Tensor div(const Tensor &a, const Tensor &b) {
    return binary("div", a, b, float_type_for(promote_types(a.type(), b.type())), [](Expr x, Expr y) { return x / y; });
}
Tensor div(const Tensor &a, const Tensor &b, Rounding rounding) {
    Type t = promote_types(a.type(), b.type());
    if (t.is_float()) {
        if (rounding == Rounding::Floor)
            user_error("ops::div: rounding toward negative infinity (rounding_mode \"floor\") of ", t,
                       " tensors is not supported; use Rounding::Trunc, or floor the true quotient if the last bit "
                       "of torch's floor division does not matter.");
        return binary("div", a, b, t, [](Expr x, Expr y) { return trunc(x / y); });
    }
    if (t.is_bool()) user_error("ops::div: both operands are bool; cast one to an integer type first.");
    return binary("div", a, b, t, [rounding](Expr x, Expr y) {
        // q is the floor or the ceiling of the exact quotient x / y (whichever the DSL's division
        // gives for these signs); the remainder r = x - q y tells which.
        Type it = x.type();
        Expr zero = make_const(it, int64_t(0)), one = make_const(it, int64_t(1));
        Expr q = x / y;
        Expr r = x - q * y;
        Expr inexact = r != zero;
        Expr q_is_floor = (r > zero) == (y > zero);  // x / y = q + r / y with r / y in (0, 1)
        Expr floor_q = select(inexact && !q_is_floor, q - one, q);
        if (rounding == Rounding::Floor) return floor_q;
        Expr ceil_q = select(inexact && q_is_floor, q + one, q);
        return select((x < zero) != (y < zero), ceil_q, floor_q);
    });
}
Tensor maximum(const Tensor &a, const Tensor &b) { return promoted("maximum", a, b, [](Expr x, Expr y) { return max(x, y); }); }
Tensor minimum(const Tensor &a, const Tensor &b) { return promoted("minimum", a, b, [](Expr x, Expr y) { return min(x, y); }); }
Tensor pow(const Tensor &a, const Tensor &b) {
    return binary("pow", a, b, float_type_for(promote_types(a.type(), b.type())), [](Expr x, Expr y) { return pow(x, y); });
}
Tensor add(const Tensor &a, double b) { return with_scalar("add", a, b, [](Expr x, Expr y) { return x + y; }); }
Tensor mul(const Tensor &a, double b) { return with_scalar("mul", a, b, [](Expr x, Expr y) { return x * y; }); }

Tensor compare(Compare op, const Tensor &a, const Tensor &b) {
    return binary("compare", a, b, promote_types(a.type(), b.type()), [op](Expr x, Expr y) {
        switch (op) {
        case Compare::EQ: return x == y;
        case Compare::NE: return x != y;
        case Compare::LT: return x < y;
        case Compare::LE: return x <= y;
        case Compare::GT: return x > y;
        case Compare::GE: return x >= y;
        }
        return x == y;
    });
}

Tensor where(const Tensor &cond, const Tensor &a, const Tensor &b) {
    if (!cond.type().is_bool()) user_error("ops::where: the condition ", cond.name(), " is ", cond.type(), ", not bool.");
    Type t = promote_types(a.type(), b.type());
    return elementwise("where", {&cond, &a, &b},
                       [&](const std::vector<Expr> &v) { return select(v[0], cast(t, v[1]), cast(t, v[2])); });
}

Tensor clamp(const Tensor &a, double lo, double hi) {
    if (lo > hi) user_error("ops::clamp: the lower bound ", lo, " is above the upper bound ", hi, ".");
    Type t = type_with_scalar(type_with_scalar(a.type(), lo), hi);
    auto c = [&](double v) { return t.is_float() ? make_const(t, v) : make_const(t, int64_t(v)); };
    return unary("clamp", a, t, [&](Expr x) { return min(max(x, c(lo)), c(hi)); });
}

Tensor cast(const Tensor &a, Type t) { return unary("cast", a, t, [](Expr x) { return x; }); }

Tensor neg(const Tensor &a) {
    if (a.type().is_bool()) user_error("ops::neg of the bool tensor ", a.name(), ": use a logical not instead.");
    return unary("neg", a, a.type(), [](Expr x) { return -x; });
}
Tensor abs(const Tensor &a) {
    // The DSL's abs of a signed integer is unsigned (Halide); torch keeps the type.
    return unary("abs", a, a.type(), [t = a.type()](Expr x) { return t.is_int() ? cast(t, abs(x)) : abs(x); });
}
Tensor exp(const Tensor &a) { return float_unary("exp", a, [](Expr x) { return exp(x); }); }
Tensor log(const Tensor &a) { return float_unary("log", a, [](Expr x) { return log(x); }); }
Tensor sqrt(const Tensor &a) { return float_unary("sqrt", a, [](Expr x) { return sqrt(x); }); }
Tensor rsqrt(const Tensor &a) {
    return float_unary("rsqrt", a, [](Expr x) { return make_one(x.type()) / sqrt(x); });
}
Tensor tanh(const Tensor &a) { return float_unary("tanh", a, [](Expr x) { return tanh(x); }); }
Tensor sigmoid(const Tensor &a) {
    return float_unary("sigmoid", a, [](Expr x) { return make_one(x.type()) / (make_one(x.type()) + exp(-x)); });
}
Tensor relu(const Tensor &a) { return unary("relu", a, a.type(), [](Expr x) { return max(x, make_zero(x.type())); }); }
Tensor silu(const Tensor &a) {
    return float_unary("silu", a, [](Expr x) { return x / (make_one(x.type()) + exp(-x)); });
}
Tensor gelu(const Tensor &a, bool tanh_approximation) {
    return float_unary("gelu", a, [tanh_approximation](Expr x) {
        Type t = x.type();
        auto c = [&](double v) { return make_const(t, v); };
        if (tanh_approximation)
            return c(0.5) * x * (c(1) + tanh(c(0.7978845608028654) * (x + c(0.044715) * x * x * x)));
        return c(0.5) * x * (c(1) + erf_approximation(x * c(0.7071067811865476)));
    });
}

} // namespace tessera::ops
