// Run-time inputs of a pipeline: InputBuffer (a buffer whose shape is known only at run time)
// and Param (a scalar).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/buffer.h"
#include "tessera/expr.h"
#include "tessera/ir.h"

namespace tessera {

template <typename T = void>
class InputBuffer;

// A symbolic input buffer of a type known at run time (InputBuffer<>).
template <>
class InputBuffer<void> {
public:
    InputBuffer() = default;
    InputBuffer(Type type, int dimensions, const std::string &name = "");

    const std::string &name() const;
    int dimensions() const;
    Type type() const;

    // The min and extent of one dimension, as symbolic expressions.
    class Dimension {
    public:
        Dimension(std::shared_ptr<InputContents> c, int d) : c_(std::move(c)), d_(d) {}
        Expr min() const;
        Expr extent() const;
        Expr max() const;  // min + extent - 1

    private:
        std::shared_ptr<InputContents> c_;
        int d_;
    };
    Dimension dim(int i) const;
    Expr width() const { return dim(0).extent(); }
    Expr height() const { return dim(1).extent(); }
    Expr channels() const { return dim(2).extent(); }

    Expr operator()(std::vector<Expr> args) const;
    template <typename... Args>
    Expr operator()(Args &&...args) const {
        return (*this)(std::vector<Expr>{Expr(args)...});
    }

    // Binds the buffer that realize() will read. Its type and dimensionality must match.
    void set(const Buffer<void> &buffer) const;
    Buffer<void> get() const;
    void reset() const;

    const std::shared_ptr<InputContents> &contents() const { return c_; }

protected:
    std::shared_ptr<InputContents> c_;
};

template <typename T>
class InputBuffer : public InputBuffer<void> {
public:
    InputBuffer() = default;
    InputBuffer(const std::string &name, int dimensions) : InputBuffer<void>(type_of<T>(), dimensions, name) {}
};

template <typename T = void>
class Param;

// A scalar parameter of a type known at run time (Param<>).
template <>
class Param<void> {
public:
    Param() = default;
    Param(Type type, const std::string &name = "");
    const std::string &name() const;
    Type type() const;
    operator Expr() const;
    bool is_set() const;
    // Sets the value from a double (converted to the parameter's type with the DSL's cast).
    void set_double(double v) const;
    double get_double() const;
    const std::shared_ptr<ParamContents> &contents() const { return c_; }

protected:
    std::shared_ptr<ParamContents> c_;
};

template <typename T>
class Param : public Param<void> {
public:
    Param() : Param<void>(type_of<T>()) {}
    explicit Param(const std::string &name) : Param<void>(type_of<T>(), name) {}
    Param(const std::string &name, T value) : Param<void>(type_of<T>(), name) { set(value); }

    void set(T value) const {
        c_->value = to_value(value);
        c_->is_set = true;
    }
    // A value of T as the pipeline holds it.
    static Value to_value(T value) {
        Value v;
        if constexpr (std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>) v.f = value.to_double();
        else if constexpr (std::is_floating_point_v<T>) v.f = double(value);
        else if constexpr (std::is_signed_v<T>) v.i = int64_t(value);
        else v.u = uint64_t(value);
        return v;
    }
    T get() const {
        if constexpr (std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>) return T(c_->value.f);
        else if constexpr (std::is_floating_point_v<T>) return T(c_->value.f);
        else if constexpr (std::is_signed_v<T>) return T(c_->value.i);
        else return T(c_->value.u);
    }
};

} // namespace tessera
