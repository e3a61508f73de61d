#include "tessera/param.h"

#include "tessera/var.h"

#include "input_call.h"

namespace tessera {

InputBuffer<void>::InputBuffer(Type type, int dimensions, const std::string &name) {
    if (dimensions < 0) user_error("InputBuffer ", name, ": the number of dimensions must not be negative.");
    detail::check_dimension_count("InputBuffer " + name, dimensions);
    c_ = std::make_shared<InputContents>();
    c_->name = name.empty() ? detail::unique_name("input") : name;
    c_->type = type;
    c_->dimensions = dimensions;
    c_->is_parameter = true;
}

namespace {
const std::shared_ptr<InputContents> &checked(const std::shared_ptr<InputContents> &c) {
    if (!c) user_error("InputBuffer: the InputBuffer is undefined (default-constructed).");
    return c;
}
} // namespace

const std::string &InputBuffer<void>::name() const { return checked(c_)->name; }
int InputBuffer<void>::dimensions() const { return checked(c_)->dimensions; }
Type InputBuffer<void>::type() const { return checked(c_)->type; }

InputBuffer<void>::Dimension InputBuffer<void>::dim(int i) const {
    if (i < 0 || i >= dimensions())
        user_error("InputBuffer ", name(), ": dimension ", i, " does not exist (it has ", dimensions(), ").");
    return Dimension(c_, i);
}

Expr InputBuffer<void>::Dimension::min() const { return ir::make_buffer_dim(c_, d_, 0); }
Expr InputBuffer<void>::Dimension::extent() const { return ir::make_buffer_dim(c_, d_, 1); }
Expr InputBuffer<void>::Dimension::max() const { return min() + extent() - 1; }

Expr InputBuffer<void>::operator()(std::vector<Expr> args) const {
    return detail::checked_input_call(checked(c_), std::move(args));
}

void InputBuffer<void>::set(const Buffer<void> &buffer) const {
    checked(c_);
    if (!buffer.defined()) user_error("InputBuffer ", c_->name, ": set() was given an undefined Buffer.");
    if (buffer.type() != c_->type)
        user_error("InputBuffer ", c_->name, " has type ", c_->type, " but was bound to Buffer ", buffer.name(),
                   " of type ", buffer.type(), ".");
    if (buffer.dimensions() != c_->dimensions)
        user_error("InputBuffer ", c_->name, " has ", c_->dimensions, " dimensions but was bound to Buffer ",
                   buffer.name(), " with ", buffer.dimensions(), ".");
    c_->bound = buffer.impl();
}

Buffer<void> InputBuffer<void>::get() const {
    checked(c_);
    if (!c_->bound) return Buffer<void>();
    struct Access : Buffer<void> {
        explicit Access(std::shared_ptr<BufferImpl> i) : Buffer<void>(std::move(i)) {}
    };
    return Access(c_->bound);
}

void InputBuffer<void>::reset() const { checked(c_)->bound.reset(); }

Param<void>::Param(Type type, const std::string &name) {
    c_ = std::make_shared<ParamContents>();
    c_->name = name.empty() ? detail::unique_name("p") : name;
    c_->type = type;
}

const std::string &Param<void>::name() const { return c_->name; }
Type Param<void>::type() const { return c_->type; }
Param<void>::operator Expr() const { return ir::make_param(c_); }
bool Param<void>::is_set() const { return c_->is_set; }

void Param<void>::set_double(double v) const {
    c_->value = ir::value_from_double(c_->type, v);
    c_->is_set = true;
}

double Param<void>::get_double() const { return ir::value_as_double(c_->type, c_->value); }

} // namespace tessera
