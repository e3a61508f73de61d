// Shared pieces of the Python extension tessera._tessera (nanobind). Each define_* function
// binds one part of the DSL; module.cpp calls them in order.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <functional>
#include <string>
#include <vector>

#include <tessera/tessera.h>

namespace tessera::python {

namespace nb = nanobind;

void define_expressions(nb::module_ &m);
void define_buffers(nb::module_ &m);
void define_funcs(nb::module_ &m);
void define_pipelines(nb::module_ &m);
void define_ops(nb::module_ &m);
void define_pooled_outputs(nb::module_ &m);

// A Python value as an Expr: an Expr, Var, RVar, one-dimensional RDom, Param or Func reference,
// or a Python bool, int (int32 when it fits, else int64) or float (float32, as in Halide's
// Python bindings). Throws a tessera::UserError naming `what` for anything else.
Expr to_expr(nb::handle value, const char *what);
// The same, or false when `value` is none of those (for operators, which then return
// NotImplemented so that Python can try the other operand).
bool try_to_expr(nb::handle value, Expr &out);
// `self op other` (or `other op self` when reflected) for an operator of the classes that stand
// for an Expr; NotImplemented when `other` is not an expression.
nb::object binary(Op op, nb::handle self, nb::handle other, bool reflected, const char *what);
// `//`: the DSL's division, then floor() when the quotient is a float.
nb::object floor_divide(nb::handle self, nb::handle other, bool reflected);

// Binds Python's operators on one of the classes that stand for an Expr.
template <typename Class>
void add_operators(Class &cls) {
#define TESSERA_PY_BINARY(NAME, RNAME, OP, WHAT)                                                              \
    cls.def(NAME, [](nb::handle a, nb::handle b) { return binary(OP, a, b, false, WHAT); }, nb::is_operator()); \
    cls.def(RNAME, [](nb::handle a, nb::handle b) { return binary(OP, a, b, true, WHAT); }, nb::is_operator());
    TESSERA_PY_BINARY("__add__", "__radd__", Op::Add, "operator+")
    TESSERA_PY_BINARY("__sub__", "__rsub__", Op::Sub, "operator-")
    TESSERA_PY_BINARY("__mul__", "__rmul__", Op::Mul, "operator*")
    TESSERA_PY_BINARY("__truediv__", "__rtruediv__", Op::Div, "operator/")
    TESSERA_PY_BINARY("__mod__", "__rmod__", Op::Mod, "operator%")
    TESSERA_PY_BINARY("__and__", "__rand__", Op::BitAnd, "operator&")
    TESSERA_PY_BINARY("__or__", "__ror__", Op::BitOr, "operator|")
    TESSERA_PY_BINARY("__xor__", "__rxor__", Op::BitXor, "operator^")
    TESSERA_PY_BINARY("__lshift__", "__rlshift__", Op::Shl, "operator<<")
    TESSERA_PY_BINARY("__rshift__", "__rrshift__", Op::Shr, "operator>>")
#undef TESSERA_PY_BINARY
    cls.def("__floordiv__", [](nb::handle a, nb::handle b) { return floor_divide(a, b, false); }, nb::is_operator());
    cls.def("__rfloordiv__", [](nb::handle a, nb::handle b) { return floor_divide(a, b, true); }, nb::is_operator());
    // Comparisons build Exprs. (`a < b` reflected is `b > a`, which Python asks for itself.)
    cls.def("__eq__", [](nb::handle a, nb::handle b) { return binary(Op::EQ, a, b, false, "operator=="); }, nb::is_operator());
    cls.def("__ne__", [](nb::handle a, nb::handle b) { return binary(Op::NE, a, b, false, "operator!="); }, nb::is_operator());
    cls.def("__lt__", [](nb::handle a, nb::handle b) { return binary(Op::LT, a, b, false, "operator<"); }, nb::is_operator());
    cls.def("__le__", [](nb::handle a, nb::handle b) { return binary(Op::LE, a, b, false, "operator<="); }, nb::is_operator());
    cls.def("__gt__", [](nb::handle a, nb::handle b) { return binary(Op::GT, a, b, false, "operator>"); }, nb::is_operator());
    cls.def("__ge__", [](nb::handle a, nb::handle b) { return binary(Op::GE, a, b, false, "operator>="); }, nb::is_operator());
    cls.def("__neg__", [](nb::handle a) { return -to_expr(a, "operator-"); });
    cls.def("__pos__", [](nb::handle a) { return to_expr(a, "operator+"); });
    cls.def("__abs__", [](nb::handle a) { return abs(to_expr(a, "abs")); });
    cls.def("__invert__", [](nb::handle a) {
        Expr e = to_expr(a, "operator~");
        return e.type().is_bool() ? !e : ~e;
    });
    // An Expr has no truth value while the pipeline is being written: `if e:`, `a and b` and
    // `a < b < c` would silently drop one side.
    cls.def("__bool__", [](nb::handle a) -> bool {
        throw nb::type_error(("The tessera expression " + to_string(to_expr(a, "bool()")) +
                              " has no truth value: use tessera.select(c, a, b) instead of `if`, and "
                              "`&`, `|`, `~` instead of `and`, `or`, `not` (with parentheses: (a < b) & (c < d)).")
                                 .c_str());
    });
}

// A Type, a type name ("float32"), or a NumPy dtype or scalar type (numpy.float32).
Type to_type(nb::handle value, const char *what);
// Coordinates of a Func, buffer or input reference: a tuple of values, or a single value.
std::vector<Expr> to_coordinates(nb::handle key, const char *what);

// A Func at coordinates, f[x, y], as Python holds it (tessera.FuncRef): an Expr on the right of
// a definition, a definition when assigned to.
struct PyFuncRef {
    Func func;
    std::vector<Expr> args;
    FuncRef ref() const { return FuncRef(func, args); }
};

// A Tessera Buffer as Python holds it. Buffers made from a NumPy array or a DLPack producer
// (JAX, for one) share its memory and keep it alive; `read_only` is set when the producer said
// its memory may not be written, so that such a buffer is refused as an output.
struct PyBuffer {
    Buffer<void> buffer;
    bool read_only = false;
};

// A Buffer for a Python argument: a tessera.Buffer, or an array (NumPy or DLPack) wrapped
// without copying. Axes are reversed, as in Halide's Python bindings: the array's last axis
// (contiguous in C order) is dimension 0. `for_output` refuses read-only memory.
PyBuffer to_buffer(nb::handle value, bool for_output, const char *what);

// The realize() of Funcs, Pipelines, Callables and interpret: given a list of sizes, computes
// new buffers (`into_new`) and returns them (one Buffer, or a list for several outputs); given
// a Buffer, an array or a list of them, computes into those (`into_given`) and returns None.
// Both run without the GIL.
nb::object realize_either(nb::handle what, const char *where,
                          const std::function<Realization(const std::vector<int> &)> &into_new,
                          const std::function<void(const std::vector<Buffer<void>> &)> &into_given);

// The Python object for a buffer (a tessera.Buffer).
nb::object wrap_buffer(const Buffer<void> &b);

// A Python scalar of a buffer element or a Param value.
nb::object scalar_to_python(Type t, Value v);
// A Python number as a Value of type t (integers exactly; floats rounded as the DSL's cast).
Value python_to_scalar(Type t, nb::handle value, const std::string &what);

} // namespace tessera::python
