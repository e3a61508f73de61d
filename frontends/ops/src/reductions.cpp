// Reductions over axes, softmax and log_softmax (tensor.h).
#include <algorithm>
#include <functional>

#include <tessera/var.h>

#include "tensor_util.h"

namespace tessera::ops {

namespace {

enum class Kind { Sum, Max, Min };

// result(kept axes) = reduction over the `axes` of a, as a pure definition (the first point of
// the reduced axes, or zero for a sum) and one update over an RDom of the reduced axes.
Tensor reduce(const std::string &op, const Tensor &a, std::vector<int> axes, bool keepdim, Kind kind, Type type) {
    int rank = a.rank();
    std::vector<bool> reduced(size_t(rank), false);
    for (int &ax : axes) {
        ax = normalize_axis(ax, rank, op);
        if (reduced[size_t(ax)]) user_error("ops::", op, ": axis ", ax, " is listed twice.");
        reduced[size_t(ax)] = true;
    }
    std::vector<Range> ranges;
    std::vector<int64_t> shape;
    for (int i = 0; i < rank; ++i) {
        if (reduced[size_t(i)]) {
            if (kind != Kind::Sum && a.shape()[size_t(i)] == 0)
                user_error("ops::", op, ": axis ", i, " of ", a.name(), " is empty; the reduction has no identity.");
            ranges.emplace_back(Expr(0), Expr(int32_t(a.shape()[size_t(i)])));
        }
        if (!reduced[size_t(i)] || keepdim) shape.push_back(reduced[size_t(i)] ? 1 : a.shape()[size_t(i)]);
    }
    if (shape.empty())
        user_error("ops::", op, ": reducing every axis of ", a.name(),
                   " without keepdim gives a tensor of no axes, which the op library does not have yet; pass keepdim=true.");
    Axes out = make_axes(shape.size());
    RDom r(ranges, detail::unique_name(op + "_r"));
    std::vector<Expr> first, point;  // a's index at the reduced axes' first point, and at r
    int next_out = 0, next_r = 0;
    for (int i = 0; i < rank; ++i) {
        if (reduced[size_t(i)]) {
            first.push_back(Expr(0));
            point.push_back(r[next_r++]);
            if (keepdim) ++next_out;
        } else {
            first.push_back(out.exprs[size_t(next_out)]);
            point.push_back(out.exprs[size_t(next_out)]);
            ++next_out;
        }
    }
    Func f(detail::unique_name(op));
    define(f, out, kind == Kind::Sum ? make_zero(type) : cast(type, a(first)));
    Expr value = cast(type, a(point));
    if (kind == Kind::Sum) at(f, out) = at(f, out) + value;
    else if (kind == Kind::Max) at(f, out) = max(at(f, out), value);
    else at(f, out) = min(at(f, out), value);
    return Tensor(f, shape);
}

// The type a sum accumulates and returns in: torch sums integers and bools as int64.
Type sum_type(Type t) { return t.is_float() ? t : Int(64); }

} // namespace

Tensor sum(const Tensor &a, std::vector<int> axes, bool keepdim) {
    return reduce("sum", a, std::move(axes), keepdim, Kind::Sum, sum_type(a.type()));
}

Tensor mean(const Tensor &a, std::vector<int> axes, bool keepdim) {
    if (!a.type().is_float())
        user_error("ops::mean of ", a.name(), " (", a.type(), "): mean needs a float tensor; cast it first.");
    int64_t count = 1;
    for (int ax : axes) count *= a.shape()[size_t(normalize_axis(ax, a.rank(), "mean"))];
    Tensor s = sum(a, std::move(axes), keepdim);
    return mul(s, 1.0 / double(count));
}

Tensor amax(const Tensor &a, std::vector<int> axes, bool keepdim) {
    return reduce("amax", a, std::move(axes), keepdim, Kind::Max, a.type());
}

Tensor amin(const Tensor &a, std::vector<int> axes, bool keepdim) {
    return reduce("amin", a, std::move(axes), keepdim, Kind::Min, a.type());
}

Tensor softmax(const Tensor &a, int axis) {
    Tensor x = a.type().is_float() ? a : cast(a, Float(32));
    Tensor shifted = sub(x, amax(x, {axis}, true));
    Tensor e = exp(shifted);
    return div(e, sum(e, {axis}, true));
}

Tensor log_softmax(const Tensor &a, int axis) {
    Tensor x = a.type().is_float() ? a : cast(a, Float(32));
    Tensor shifted = sub(x, amax(x, {axis}, true));
    return sub(shifted, log(sum(exp(shifted), {axis}, true)));
}

} // namespace tessera::ops
