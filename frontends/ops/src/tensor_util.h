// Helpers shared by the op library's files: the Vars of a result's axes, broadcast reads.
#pragma once

#include <string>
#include <vector>

#include "tessera/ops/tensor.h"

namespace tessera::ops {
namespace detail_ops {

// One fresh Var per axis of a result, outermost first.
struct Axes {
    std::vector<Var> vars;
    std::vector<Expr> exprs;
};
Axes make_axes(size_t rank);
// f at a result's axes: f(axes reversed), since the Func's dimension 0 is the last axis.
FuncRef at(const Func &f, const Axes &axes);
// at(f, axes) = value: the pure definition of a result over its axes.
void define(const Func &f, const Axes &axes, const Expr &value);
// t's value at the coordinates of a result of shape `out_shape` that t broadcasts to: t's axes
// align with the result's last ones, and an axis of size 1 reads index 0.
Expr read_broadcast(const Tensor &t, const std::vector<int64_t> &out_shape, const std::vector<Expr> &out_index);
// A result over `shape` whose value at `axes` is `value`: an inline tensor (tensor.h) while the
// expression, with the inline operands it reads, stays small (kInlineNodes nodes written out),
// a Func of its own otherwise, so that chains of cheap ops fuse without an expression growing
// with every reuse.
constexpr uint64_t kInlineNodes = 48;
// A Func named after `op` defined as `value` over `axes`, as a tensor of `shape`.
Tensor func_tensor(const std::string &op, const Axes &axes, const Expr &value, std::vector<int64_t> shape);
Tensor inline_or_func(const std::string &op, const Axes &axes, const Expr &value, std::vector<int64_t> shape);
// An operand whose every element an op reads many times (a matmul's, a convolution's, a
// pool's window): an inline tensor that computes something is materialized, so that it is
// computed once rather than once per read; an inline index map (a transposed or sliced read)
// stays inline.
Tensor reused_operand(const Tensor &t);
// The type a float function computes in: float types themselves, float32 for integers (torch).
Type float_type_for(Type t);
// An axis in [0, rank), from one that may count from the end.
int normalize_axis(int axis, int rank, const std::string &op);

} // namespace detail_ops
using namespace detail_ops;
} // namespace tessera::ops
