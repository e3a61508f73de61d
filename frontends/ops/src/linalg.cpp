// matmul and linear (tensor.h): one update over an RDom of the contracted axis, which the
// loop-nest optimizer reorders, tiles and register-tiles like any reduction.
#include <tessera/var.h>

#include "tensor_util.h"

namespace tessera::ops {

Tensor matmul(const Tensor &a_in, const Tensor &b_in) {
    Tensor a = reused_operand(a_in), b = reused_operand(b_in);
    if (a.rank() < 2 || b.rank() < 2)
        user_error("ops::matmul: both operands need at least 2 axes (got ", a.rank(), " and ", b.rank(),
                   "); add an axis of size 1 for a vector.");
    int64_t m = a.shape()[size_t(a.rank() - 2)], k = a.shape().back();
    int64_t kb = b.shape()[size_t(b.rank() - 2)], n = b.shape().back();
    if (k != kb)
        user_error("ops::matmul: ", a.name(), " has ", k, " columns but ", b.name(), " has ", kb,
                   " rows; they must match.");
    std::vector<int64_t> batch_a(a.shape().begin(), a.shape().end() - 2), batch_b(b.shape().begin(), b.shape().end() - 2);
    std::vector<int64_t> shape = broadcast_shapes(batch_a, batch_b, "matmul");
    size_t batch = shape.size();
    shape.push_back(m);
    shape.push_back(n);
    Type t = promote_types(a.type(), b.type());
    if (t.is_bool()) t = Int(64);
    Axes out = make_axes(shape.size());
    RDom r({Range(Expr(0), Expr(int32_t(k)))}, detail::unique_name("matmul_k"));
    auto operand = [&](const Tensor &x, const std::vector<int64_t> &x_batch, Expr row, Expr col) {
        std::vector<Expr> index;
        size_t offset = batch - x_batch.size();
        for (size_t j = 0; j < x_batch.size(); ++j)
            index.push_back(x_batch[j] == 1 && shape[j + offset] != 1 ? Expr(0) : out.exprs[j + offset]);
        index.push_back(row);
        index.push_back(col);
        return cast(t, x(index));
    };
    Func f(detail::unique_name("matmul"));
    define(f, out, make_zero(t));
    at(f, out) = at(f, out) + operand(a, batch_a, out.exprs[batch], r.x) *
                                  operand(b, batch_b, r.x, out.exprs[batch + 1]);
    return Tensor(f, shape);
}

Tensor linear(const Tensor &x_in, const Tensor &weight_in, const Tensor *bias) {
    Tensor x = reused_operand(x_in), weight = reused_operand(weight_in);
    if (x.rank() < 1 || weight.rank() != 2)
        user_error("ops::linear: the input needs at least 1 axis and the weight exactly 2 ([out, in]); got ", x.rank(),
                   " and ", weight.rank(), ".");
    int64_t k = x.shape().back(), n = weight.shape()[0];
    if (weight.shape()[1] != k)
        user_error("ops::linear: ", x.name(), " has ", k, " features but the weight ", weight.name(),
                   " takes ", weight.shape()[1], ".");
    if (bias && (bias->rank() != 1 || bias->shape()[0] != n))
        user_error("ops::linear: the bias ", bias->name(), " must have shape [", n, "].");
    Type t = promote_types(x.type(), weight.type());
    if (bias) t = promote_types(t, bias->type());
    std::vector<int64_t> shape(x.shape().begin(), x.shape().end() - 1);
    shape.push_back(n);
    Axes out = make_axes(shape.size());
    RDom r({Range(Expr(0), Expr(int32_t(k)))}, detail::unique_name("linear_k"));
    std::vector<Expr> xi(out.exprs.begin(), out.exprs.end() - 1);
    xi.push_back(r.x);
    Func f(detail::unique_name("linear"));
    define(f, out, bias ? cast(t, (*bias)({out.exprs.back()})) : make_zero(t));
    at(f, out) = at(f, out) + cast(t, x(xi)) * cast(t, weight({out.exprs.back(), Expr(r.x)}));
    return Tensor(f, shape);
}

} // namespace tessera::ops
