// Types, Exprs, Vars, RDoms and the DSL's operators and functions, for Python.
//
//   x, y = tessera.Var("x"), tessera.Var("y")
//   e = tessera.clamp(x + 1, 0, 99) * 2.5      # float32, as in C++ with 2.5f
//   e // 2, e % 3, (x > 0) & (y > 0)           # see docs/python.md, "Expressions"
//
// Python scalars meet Exprs as C++ constants do (docs/dsl.md, "Types and promotion"): an int
// takes the type of the Expr it meets when it fits, a float makes an integer Expr float32.
// `/` is the DSL's division (integer division rounds toward negative infinity, as Python's
// `//` does); `//` is the same for integers and the floor of the quotient for floats.
#include "bindings.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace tessera::python {

namespace {

bool is_python_int(nb::handle h) {
    return PyLong_Check(h.ptr()) || (!PyFloat_Check(h.ptr()) && PyIndex_Check(h.ptr()));
}
bool is_python_float(nb::handle h) {
    return PyFloat_Check(h.ptr()) || (!is_python_int(h) && nb::hasattr(h, "__float__") && !nb::hasattr(h, "__dlpack__"));
}

int64_t python_int64(nb::handle h, const char *what) {
    nb::object i = nb::steal(PyNumber_Index(h.ptr()));
    if (!i.is_valid()) throw nb::python_error();
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
    if (overflow) user_error(what, ": the integer ", nb::str(h).c_str(), " does not fit in 64 bits.");
    return int64_t(v);
}

double python_double(nb::handle h) {
    double v = PyFloat_AsDouble(h.ptr());
    if (v == -1.0 && PyErr_Occurred()) throw nb::python_error();
    return v;
}

} // namespace

nb::object binary(Op op, nb::handle self, nb::handle other, bool reflected, const char *what) {
    Expr a = to_expr(self, what);
    Expr result;
    if (PyBool_Check(other.ptr())) {
        Expr b(other.ptr() == Py_True);
        result = reflected ? detail::binary_op(op, b, a, what) : detail::binary_op(op, a, b, what);
    } else if (is_python_int(other)) {
        result = detail::binary_with_int(op, a, python_int64(other, what), reflected, what);
    } else if (is_python_float(other)) {
        result = detail::binary_with_double(op, a, python_double(other), reflected, what);
    } else {
        Expr b;
        if (!try_to_expr(other, b)) return nb::borrow(Py_NotImplemented);
        // `&`, `|` and `^` of two bools are the logical operators, as in Halide.
        if (a.type().is_bool() && b.type().is_bool()) {
            if (op == Op::BitAnd) op = Op::And;
            else if (op == Op::BitOr) op = Op::Or;
            else if (op == Op::BitXor) op = Op::NE;
        }
        result = reflected ? detail::binary_op(op, b, a, what) : detail::binary_op(op, a, b, what);
    }
    return nb::cast(result);
}

nb::object floor_divide(nb::handle self, nb::handle other, bool reflected) {
    nb::object q = binary(Op::Div, self, other, reflected, "operator//");
    if (q.ptr() == Py_NotImplemented) return q;
    Expr e = nb::cast<Expr>(q);
    return e.type().is_float() ? nb::cast(floor(e)) : q;
}

namespace {

// min/max of two or more values, left to right.
Expr fold(const char *name, const nb::args &args, Expr (*fn)(Expr, Expr)) {
    if (args.size() < 2) user_error(name, " needs at least two values.");
    Expr r = to_expr(args[0], name);
    for (size_t i = 1; i < args.size(); ++i) r = fn(r, to_expr(args[i], name));
    return r;
}

Type parse_type_name(const std::string &name) {
    static const std::pair<const char *, Type> names[] = {
        {"bool", Bool()},        {"int8", Int(8)},        {"int16", Int(16)},    {"int32", Int(32)},
        {"int64", Int(64)},      {"uint8", UInt(8)},      {"uint16", UInt(16)},  {"uint32", UInt(32)},
        {"uint64", UInt(64)},    {"float16", Float(16)},  {"float32", Float(32)}, {"float64", Float(64)},
        {"bfloat16", BFloat(16)},
    };
    for (const auto &[n, t] : names)
        if (name == n) return t;
    user_error("Unknown element type '", name,
               "'. Use one of bool, int8/16/32/64, uint8/16/32/64, float16, bfloat16, float32, float64.");
}

} // namespace

// A Type, a type name ("float32"), or anything numpy.dtype() understands (np.float32, a dtype).
Type to_type(nb::handle value, const char *what) {
    if (nb::isinstance<Type>(value)) return nb::cast<Type>(value);
    if (nb::isinstance<nb::str>(value)) return parse_type_name(nb::cast<std::string>(value));
    try {
        nb::object dtype = nb::module_::import_("numpy").attr("dtype")(value);
        return parse_type_name(nb::cast<std::string>(dtype.attr("name")));
    } catch (const nb::python_error &) {
        user_error(what, ": ", nb::cast<std::string>(nb::repr(value)),
                   " is not an element type. Pass a tessera type (tessera.float32), a name (\"float32\") or a NumPy dtype.");
    }
}

bool try_to_expr(nb::handle value, Expr &out) {
    if (nb::try_cast<Expr>(value, out)) return true;
    if (PyBool_Check(value.ptr())) {
        out = Expr(value.ptr() == Py_True);
        return true;
    }
    if (is_python_int(value)) {
        int64_t v = python_int64(value, "an integer constant");
        out = Int(32).can_represent(v) ? Expr(int32_t(v)) : Expr(v);
        return true;
    }
    if (is_python_float(value)) {
        out = Expr(float(python_double(value)));
        return true;
    }
    if (Var v; nb::try_cast<Var>(value, v)) return out = Expr(v), true;
    if (RVar r; nb::try_cast<RVar>(value, r)) return out = Expr(r), true;
    if (RDom r; nb::try_cast<RDom>(value, r)) return out = Expr(r), true;
    if (Param<void> p; nb::try_cast<Param<void>>(value, p)) return out = Expr(p), true;
    if (PyFuncRef *f = nullptr; nb::try_cast<PyFuncRef *>(value, f) && f) return out = Expr(f->ref()), true;
    return false;
}

Expr to_expr(nb::handle value, const char *what) {
    Expr e;
    if (!try_to_expr(value, e))
        user_error(what, ": ", nb::cast<std::string>(nb::repr(value)),
                   " is not an expression. Pass a tessera Expr, Var, RVar, Param, Func reference f[x, y], or a number.");
    return e;
}

std::vector<Expr> to_coordinates(nb::handle key, const char *what) {
    std::vector<Expr> args;
    if (nb::isinstance<nb::tuple>(key) || nb::isinstance<nb::list>(key)) {
        for (nb::handle k : key) args.push_back(to_expr(k, what));
    } else {
        args.push_back(to_expr(key, what));
    }
    return args;
}

void define_expressions(nb::module_ &m) {
    nb::class_<Type>(m, "Type", "An element type: a code (int, uint, float, bfloat) and a bit width.")
        .def_prop_ro("bits", [](const Type &t) { return t.bits; })
        .def("bytes", &Type::bytes)
        .def("is_int", &Type::is_int)
        .def("is_uint", &Type::is_uint)
        .def("is_bool", &Type::is_bool)
        .def("is_float", &Type::is_float)
        .def("__eq__", [](const Type &a, nb::handle b) { return nb::isinstance<Type>(b) && a == nb::cast<Type>(b); })
        .def("__hash__", [](const Type &t) { return int(t.code) * 1000 + t.bits; })
        .def("__str__", &Type::to_string)
        .def("__repr__", [](const Type &t) { return "tessera." + t.to_string(); });
    m.def("Int", [](int bits) { return Int(bits); });
    m.def("UInt", [](int bits) { return UInt(bits); });
    m.def("Float", [](int bits) { return Float(bits); });
    m.def("BFloat", [](int bits) { return BFloat(bits); });
    m.def("Bool", []() { return Bool(); });
    m.attr("bool_") = Bool();
    for (int bits : {8, 16, 32, 64}) {
        m.attr(("int" + std::to_string(bits)).c_str()) = Int(bits);
        m.attr(("uint" + std::to_string(bits)).c_str()) = UInt(bits);
    }
    m.attr("float16") = Float(16);
    m.attr("float32") = Float(32);
    m.attr("float64") = Float(64);
    m.attr("bfloat16") = BFloat(16);

    auto expr = nb::class_<Expr>(m, "Expr", "An expression of the DSL (immutable).")
                    .def("__init__", [](Expr *self, nb::handle v) { new (self) Expr(to_expr(v, "tessera.Expr")); })
                    .def_prop_ro("type", &Expr::type)
                    .def("__str__", [](const Expr &e) { return to_string(e); })
                    .def("__repr__", [](const Expr &e) { return "<tessera.Expr " + to_string(e) + " of type " + e.type().to_string() + ">"; });
    add_operators(expr);
    expr.def("__hash__", [](const Expr &e) { return (Py_hash_t)(intptr_t)e.get(); });

    auto var = nb::class_<Var>(m, "Var", "A pure variable: a coordinate of a Func definition.")
                   .def(nb::init<>())
                   .def(nb::init<const std::string &>(), nb::arg("name"))
                   .def_prop_ro("name", &Var::name)
                   .def("__repr__", [](const Var &v) { return "<tessera.Var " + v.name() + ">"; });
    add_operators(var);
    var.def("__hash__", [](const Var &v) { return (Py_hash_t)std::hash<std::string>()(v.name()); });

    auto rvar = nb::class_<RVar>(m, "RVar", "One dimension of a reduction domain.")
                    .def_prop_ro("name", &RVar::name)
                    .def_prop_ro("min", &RVar::min)
                    .def_prop_ro("extent", &RVar::extent)
                    .def("__repr__", [](const RVar &v) { return "<tessera.RVar " + v.name() + ">"; });
    add_operators(rvar);
    rvar.def("__hash__", [](const RVar &v) { return (Py_hash_t)((intptr_t)v.domain().get() + v.index()); });

    auto rdom = nb::class_<RDom>(m, "RDom",
                                 "A reduction domain: RDom([(min, extent), ...], name), or RDom(buffer) over a "
                                 "buffer's or InputBuffer's region. Its dimensions are r.x, r.y, r.z, r.w (or r[i]).")
                    .def("__init__",
                         [](RDom *self, nb::handle ranges, const std::string &name) {
                             if (nb::isinstance<InputBuffer<void>>(ranges)) {
                                 new (self) RDom(nb::cast<InputBuffer<void>>(ranges));
                                 return;
                             }
                             if (nb::isinstance<PyBuffer>(ranges)) {
                                 new (self) RDom(nb::cast<PyBuffer &>(ranges).buffer);
                                 return;
                             }
                             std::vector<Range> rs;
                             for (nb::handle r : ranges) {
                                 nb::sequence pair = nb::borrow<nb::sequence>(r);
                                 if (nb::len(pair) != 2)
                                     user_error("RDom ", name, ": each range is a pair (min, extent); got ",
                                                nb::cast<std::string>(nb::repr(r)), ".");
                                 rs.emplace_back(to_expr(pair[0], "RDom min"), to_expr(pair[1], "RDom extent"));
                             }
                             new (self) RDom(rs, name);
                         },
                         nb::arg("ranges"), nb::arg("name") = "")
                    .def_prop_ro("x", [](const RDom &r) { return r[0]; })
                    .def_prop_ro("y", [](const RDom &r) { return r[1]; })
                    .def_prop_ro("z", [](const RDom &r) { return r[2]; })
                    .def_prop_ro("w", [](const RDom &r) { return r[3]; })
                    .def("__getitem__", [](const RDom &r, int i) { return r[i]; })
                    .def("__len__", &RDom::dimensions)
                    .def("dimensions", &RDom::dimensions)
                    .def_prop_ro("name", &RDom::name)
                    .def("where",
                         [](RDom &r, nb::handle predicate) -> RDom & { return r.where(to_expr(predicate, "RDom.where")); },
                         nb::rv_policy::reference_internal,
                         "Restricts the domain to the points where the bool predicate holds; returns the RDom.")
                    .def("__repr__", [](const RDom &r) { return "<tessera.RDom " + r.name() + ">"; });
    add_operators(rdom);
    rdom.def("__hash__", [](const RDom &r) { return (Py_hash_t)(intptr_t)r.contents().get(); });

    auto param = nb::class_<Param<void>>(m, "Param", "A scalar given when the pipeline runs: Param(type, name, value).")
                     .def("__init__",
                          [](Param<void> *self, nb::handle type, const std::string &name, nb::handle value) {
                              new (self) Param<void>(to_type(type, "tessera.Param"), name);
                              if (!value.is_none()) {
                                  self->contents()->value = python_to_scalar(self->type(), value, "Param " + self->name());
                                  self->contents()->is_set = true;
                              }
                          },
                          nb::arg("type"), nb::arg("name") = "", nb::arg("value") = nb::none())
                     .def_prop_ro("name", &Param<void>::name)
                     .def_prop_ro("type", &Param<void>::type)
                     .def("is_set", &Param<void>::is_set)
                     .def_prop_rw(
                         "value",
                         [](const Param<void> &p) -> nb::object {
                             if (!p.is_set()) return nb::none();
                             return scalar_to_python(p.type(), p.contents()->value);
                         },
                         [](Param<void> &p, nb::handle value) {
                             p.contents()->value = python_to_scalar(p.type(), value, "Param " + p.name());
                             p.contents()->is_set = true;
                         })
                     .def("set",
                          [](Param<void> &p, nb::handle value) {
                              p.contents()->value = python_to_scalar(p.type(), value, "Param " + p.name());
                              p.contents()->is_set = true;
                          })
                     .def("__repr__", [](const Param<void> &p) { return "<tessera.Param " + p.name() + " of " + p.type().to_string() + ">"; });
    add_operators(param);
    // Params are dictionary keys of Callable.run: hash by identity of the parameter.
    param.def("__hash__", [](const Param<void> &p) { return (Py_hash_t)(intptr_t)p.contents().get(); });

    // ---- Functions of Exprs -----------------------------------------------------------------
    m.def("cast", [](nb::handle type, nb::handle e) { return cast(to_type(type, "cast"), to_expr(e, "cast")); },
          nb::arg("type"), nb::arg("value"), "Converts to `type` (float to int truncates and saturates).");
    m.def("select",
          [](nb::args args) {
              if (args.size() < 3 || args.size() % 2 == 0)
                  user_error("select takes (condition, value, ..., default): an odd number of arguments, at least 3; got ",
                             args.size(), ".");
              Expr result = to_expr(args[args.size() - 1], "select");
              for (size_t i = args.size() - 1; i >= 2; i -= 2)
                  result = select(to_expr(args[i - 2], "select"), to_expr(args[i - 1], "select"), result);
              return result;
          },
          "select(c0, v0, c1, v1, ..., default): the first value whose condition holds.");
    m.def("min", [](nb::args args) { return fold("min", args, [](Expr a, Expr b) { return min(a, b); }); });
    m.def("max", [](nb::args args) { return fold("max", args, [](Expr a, Expr b) { return max(a, b); }); });
    m.def("clamp", [](nb::handle e, nb::handle lo, nb::handle hi) {
        return clamp(to_expr(e, "clamp"), to_expr(lo, "clamp"), to_expr(hi, "clamp"));
    });
    m.def("abs", [](nb::handle e) { return abs(to_expr(e, "abs")); });
    m.def("lerp", [](nb::handle a, nb::handle b, nb::handle w) {
        return lerp(to_expr(a, "lerp"), to_expr(b, "lerp"), to_expr(w, "lerp"));
    });
    m.def("likely", [](nb::handle e) { return likely(to_expr(e, "likely")); });
    m.def("pow", [](nb::handle a, nb::handle b) { return pow(to_expr(a, "pow"), to_expr(b, "pow")); });
    m.def("fma", [](nb::handle a, nb::handle b, nb::handle c) {
        return fma(to_expr(a, "fma"), to_expr(b, "fma"), to_expr(c, "fma"));
    });
#define TESSERA_PY_MATH(NAME) m.def(#NAME, [](nb::handle e) { return NAME(to_expr(e, #NAME)); });
    TESSERA_PY_MATH(sqrt)
    TESSERA_PY_MATH(exp)
    TESSERA_PY_MATH(log)
    TESSERA_PY_MATH(sin)
    TESSERA_PY_MATH(cos)
    TESSERA_PY_MATH(tan)
    TESSERA_PY_MATH(tanh)
    TESSERA_PY_MATH(floor)
    TESSERA_PY_MATH(ceil)
    TESSERA_PY_MATH(round)
    TESSERA_PY_MATH(trunc)
#undef TESSERA_PY_MATH

    // ---- Inline reductions ------------------------------------------------------------------
#define TESSERA_PY_REDUCTION(NAME)                                                                                 \
    m.def(#NAME, [](nb::handle e, const std::string &name) { return NAME(to_expr(e, #NAME), name); }, nb::arg("value"), \
          nb::arg("name") = #NAME);
    TESSERA_PY_REDUCTION(sum)
    TESSERA_PY_REDUCTION(product)
    TESSERA_PY_REDUCTION(maximum)
    TESSERA_PY_REDUCTION(minimum)
#undef TESSERA_PY_REDUCTION
    m.def("argmax", [](nb::handle e, const std::string &name) { return argmax(to_expr(e, "argmax"), name).as_vector(); },
          nb::arg("value"), nb::arg("name") = "argmax",
          "The coordinates of the first largest point of the RDom, then the value: [r.x, ..., max].");
    m.def("argmin", [](nb::handle e, const std::string &name) { return argmin(to_expr(e, "argmin"), name).as_vector(); },
          nb::arg("value"), nb::arg("name") = "argmin");
}

} // namespace tessera::python
