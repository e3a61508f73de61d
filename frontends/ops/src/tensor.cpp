// Tensor, input, broadcasting and type promotion (tensor.h).
#include "tessera/ops/tensor.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <sstream>

#include <tessera/ir.h>

#include "tensor_util.h"

namespace tessera::ops {

namespace {
std::string shape_string(const std::vector<int64_t> &s) {
    std::ostringstream o;
    o << "[";
    for (size_t i = 0; i < s.size(); ++i) o << (i ? ", " : "") << s[i];
    o << "]";
    return o.str();
}
} // namespace

namespace {
void check_shape(const std::string &name, int dimensions, const std::vector<int64_t> &shape) {
    if (dimensions != int(shape.size()))
        user_error("ops::Tensor: ", name, " has ", dimensions, " dimensions but the shape ", shape_string(shape), " has ",
                   shape.size(), " axes.");
    for (int64_t d : shape)
        if (d < 0 || d > INT32_MAX)
            user_error("ops::Tensor: ", name, ": the shape ", shape_string(shape), " has a size out of [0, 2^31).");
}
} // namespace

Tensor::Tensor(Func func, std::vector<int64_t> shape) : func_(std::move(func)), shape_(std::move(shape)) {
    if (!func_.defined()) user_error("ops::Tensor: Func ", func_.name(), " is undefined.");
    check_shape("Func " + func_.name(), func_.dimensions(), shape_);
}

Tensor::Tensor(InputBuffer<void> buffer, std::vector<int64_t> shape) : input_(std::move(buffer)), shape_(std::move(shape)) {
    check_shape("InputBuffer " + input_.name(), input_.dimensions(), shape_);
}

Tensor::Tensor(std::vector<Var> axes, Expr value, std::vector<int64_t> shape, std::string name)
    : axes_(std::move(axes)), value_(std::move(value)), name_(std::move(name)),
      materialized_(std::make_shared<Func>()), shape_(std::move(shape)) {
    if (!value_.defined()) user_error("ops::Tensor ", name_, ": the inline value is undefined.");
    check_shape("inline tensor " + name_, int(axes_.size()), shape_);
}

Func Tensor::func() const {
    if (func_.defined() || (!input_.contents() && !is_inline())) return func_;
    if (is_inline() && materialized_->defined()) return *materialized_;
    Axes axes = make_axes(shape_.size());
    Func f(detail::unique_name(is_inline() ? name_ : input_.name() + "_tensor"));
    define(f, axes, (*this)(axes.exprs));
    if (is_inline()) *materialized_ = f;
    return f;
}

std::string Tensor::name() const {
    if (input_.contents()) return input_.name();
    return is_inline() ? name_ : func_.name();
}

Type Tensor::type() const {
    if (input_.contents()) return input_.type();
    return is_inline() ? value_.type() : func_.type();
}

bool Tensor::is_index_map() const {
    return is_inline() && (value_->op == Op::FuncCall || value_->op == Op::InputCall);
}

Tensor materialize(const Tensor &t) { return t.is_inline() ? Tensor(t.func(), t.shape()) : t; }

int64_t Tensor::number_of_elements() const {
    int64_t n = 1;
    for (int64_t d : shape_) n *= d;
    return n;
}

Expr Tensor::operator()(const std::vector<Expr> &index) const {
    if (index.size() != shape_.size())
        user_error("ops::Tensor ", name(), " has ", shape_.size(), " axes but was indexed with ", index.size(), ".");
    if (is_inline()) {
        std::map<std::string, Expr> at;
        for (size_t i = 0; i < axes_.size(); ++i) at[axes_[i].name()] = index[i];
        // Folded: a split read at a merge's coordinates, (i / 8) * 8 + i % 8, is i again.
        return ir::substitute_and_fold(value_, at);
    }
    std::vector<Expr> args(index.rbegin(), index.rend());
    if (input_.contents()) return input_(args);
    return func_(args);
}

std::vector<int> Tensor::realize_sizes() const {
    std::vector<int> sizes;
    for (auto it = shape_.rbegin(); it != shape_.rend(); ++it) sizes.push_back(int(*it));
    return sizes;
}

Tensor input(const InputBuffer<void> &buffer, std::vector<int64_t> shape) { return Tensor(buffer, std::move(shape)); }

Tensor full(std::vector<int64_t> shape, double value, Type type) {
    Axes axes = make_axes(shape.size());
    Expr v = type.is_float() ? make_const(type, value) : make_const(type, int64_t(value));
    return Tensor(axes.vars, v, std::move(shape), detail::unique_name("full"));
}

std::vector<int64_t> broadcast_shapes(const std::vector<int64_t> &a, const std::vector<int64_t> &b, const std::string &op) {
    size_t n = std::max(a.size(), b.size());
    std::vector<int64_t> out(n);
    for (size_t i = 0; i < n; ++i) {
        int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
        int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
        if (da != db && da != 1 && db != 1)
            user_error("ops::", op, ": the shapes ", shape_string(a), " and ", shape_string(b),
                       " do not broadcast (axis ", i, ": ", da, " against ", db, "). Sizes must match or be 1.");
        out[i] = da == 1 ? db : da;
    }
    return out;
}

Type promote_types(Type a, Type b) {
    if (a == b) return a;
    if (a.is_float() || b.is_float()) {
        if (!b.is_float()) return a;
        if (!a.is_float()) return b;
        if (a.bits == 16 && b.bits == 16) return Float(32);  // float16 with bfloat16
        return a.bits > b.bits ? a : b;
    }
    if (a.is_bool()) return b;
    if (b.is_bool()) return a;
    if (a.code == b.code) return a.bits > b.bits ? a : b;
    Type s = a.is_int() ? a : b, u = a.is_int() ? b : a;
    if (s.bits > u.bits) return s;
    return Int(std::min(64, 2 * u.bits));
}

namespace detail_ops {

Axes make_axes(size_t rank) {
    Axes a;
    for (size_t i = 0; i < rank; ++i) {
        a.vars.push_back(Var(detail::unique_name("i" + std::to_string(i))));
        a.exprs.push_back(a.vars.back());
    }
    return a;
}

FuncRef at(const Func &f, const Axes &axes) { return f(std::vector<Expr>(axes.exprs.rbegin(), axes.exprs.rend())); }

void define(const Func &f, const Axes &axes, const Expr &value) { at(f, axes) = value; }

Tensor reused_operand(const Tensor &t) { return t.is_inline() && !t.is_index_map() ? materialize(t) : t; }

Tensor inline_or_func(const std::string &op, const Axes &axes, const Expr &value, std::vector<int64_t> shape) {
    if (ir::expanded_size(value, kInlineNodes + 1) <= kInlineNodes)
        return Tensor(axes.vars, value, std::move(shape), detail::unique_name(op));
    return func_tensor(op, axes, value, std::move(shape));
}

Tensor func_tensor(const std::string &op, const Axes &axes, const Expr &value, std::vector<int64_t> shape) {
    Func f(detail::unique_name(op));
    define(f, axes, value);
    return Tensor(f, std::move(shape));
}

Expr read_broadcast(const Tensor &t, const std::vector<int64_t> &out_shape, const std::vector<Expr> &out_index) {
    size_t offset = out_shape.size() - t.shape().size();
    std::vector<Expr> index;
    for (size_t j = 0; j < t.shape().size(); ++j)
        index.push_back(t.shape()[j] == 1 && out_shape[j + offset] != 1 ? Expr(0) : out_index[j + offset]);
    return t(index);
}

Type float_type_for(Type t) { return t.is_float() ? t : Float(32); }

int normalize_axis(int axis, int rank, const std::string &op) {
    if (axis < -rank || axis >= rank)
        user_error("ops::", op, ": axis ", axis, " is out of range for a tensor of ", rank, " axes.");
    return axis < 0 ? axis + rank : axis;
}

} // namespace detail_ops

} // namespace tessera::ops
