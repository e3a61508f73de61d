// The op library (frontends/ops) for Python: tessera.ops.
//
//   a = tessera.ops.from_array(np_array)          # an InputBuffer bound to the array, as a Tensor
//   y = tessera.ops.relu(tessera.ops.linear(a, w, b))
//   y.realize().numpy()                           # shape y.shape
#include "bindings.h"

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <tessera/ops/tensor.h>

namespace tessera::python {

namespace {

using ops::Tensor;

Tensor from_array(nb::handle array, const std::string &name) {
    PyBuffer b = to_buffer(array, false, "tessera.ops.from_array");
    InputBuffer<void> in(b.buffer.type(), b.buffer.dimensions(), name.empty() ? detail::unique_name("input") : name);
    in.set(b.buffer);
    std::vector<int64_t> shape;
    for (int i = b.buffer.dimensions() - 1; i >= 0; --i) shape.push_back(b.buffer.extent(i));
    return ops::input(in, shape);
}

// A Tensor, or a number for the ops that take scalars.
Tensor binary_operand(nb::handle v, const char *what) {
    Tensor t;
    if (nb::try_cast<Tensor>(v, t)) return t;
    user_error(what, ": ", nb::cast<std::string>(nb::repr(v)), " is not a tessera.ops.Tensor.");
}

// An optional Tensor argument (None or a Tensor), kept in `storage`; null for None.
const Tensor *optional_tensor(nb::handle v, Tensor &storage, const char *what) {
    if (v.is_none()) return nullptr;
    storage = binary_operand(v, what);
    return &storage;
}

} // namespace

void define_ops(nb::module_ &m) {
    nb::module_ o = m.def_submodule("ops", "Tensor ops, each a DSL Func (frontends/ops, docs/python.md).");
    nb::class_<Tensor>(o, "Tensor", "The values of a Func over a concrete shape (outermost axis first).")
        .def("__init__", [](Tensor *self, const Func &f, const std::vector<int64_t> &shape) { new (self) Tensor(f, shape); },
             nb::arg("func"), nb::arg("shape"))
        .def_prop_ro("func", &Tensor::func, "The Func computing the tensor (an inline tensor's is made once).")
        .def_prop_ro("is_inline", &Tensor::is_inline,
                     "Whether consumers read the tensor's expression itself (elementwise ops, simple index maps).")
        .def_prop_ro("shape", &Tensor::shape)
        .def_prop_ro("type", &Tensor::type)
        .def("__getitem__", [](const Tensor &t, nb::handle key) { return t(to_coordinates(key, "ops.Tensor")); },
             "The value at an index (outermost first) as an Expr.")
        .def("realize",
             [](const Tensor &t) {
                 std::vector<int> sizes = t.realize_sizes();
                 Buffer<void> out;
                 {
                     nb::gil_scoped_release release;
                     out = t.func().realize(sizes);
                 }
                 return wrap_buffer(out);
             },
             "Computes the tensor: a Buffer whose .numpy() has the tensor's shape.")
        .def("__repr__", [](const Tensor &t) {
            std::string s = "<tessera.ops.Tensor " + t.func().name() + " of " + t.type().to_string() + " [";
            for (size_t i = 0; i < t.shape().size(); ++i) s += (i ? ", " : "") + std::to_string(t.shape()[i]);
            return s + "]>";
        });
    o.def("from_array", &from_array, nb::arg("array"), nb::arg("name") = "",
          "A Tensor reading the array in place (an InputBuffer bound to it; C-ordered axes, outermost first).");
    o.def("input", [](const InputBuffer<void> &in, const std::vector<int64_t> &shape) { return ops::input(in, shape); });
    o.def("full", [](const std::vector<int64_t> &shape, double value, nb::handle type) {
        return ops::full(shape, value, to_type(type, "ops.full"));
    }, nb::arg("shape"), nb::arg("value"), nb::arg("type"), "A tensor of the shape holding value everywhere (inline).");
    o.def("materialize", &ops::materialize, nb::arg("a"),
          "The tensor as a stage of its own (an inline tensor's values computed once), for values read by several "
          "consumers.");
    o.def("broadcast_shapes", [](const std::vector<int64_t> &a, const std::vector<int64_t> &b) {
        return ops::broadcast_shapes(a, b, "broadcast_shapes");
    });
    o.def("promote_types", [](nb::handle a, nb::handle b) {
        return ops::promote_types(to_type(a, "promote_types"), to_type(b, "promote_types"));
    });
#define TESSERA_PY_OP2(NAME)                                                                                     \
    o.def(#NAME, [](const Tensor &a, nb::handle b) { return ops::NAME(a, binary_operand(b, "ops." #NAME)); });
    TESSERA_PY_OP2(sub)
    TESSERA_PY_OP2(maximum)
    TESSERA_PY_OP2(minimum)
    TESSERA_PY_OP2(pow)
#undef TESSERA_PY_OP2
    o.def("div", [](const Tensor &a, nb::handle b, nb::handle rounding_mode) {
        Tensor bt = binary_operand(b, "ops.div");
        if (rounding_mode.is_none()) return ops::div(a, bt);
        std::string mode = nb::cast<std::string>(rounding_mode);
        if (mode == "trunc") return ops::div(a, bt, ops::Rounding::Trunc);
        if (mode == "floor") return ops::div(a, bt, ops::Rounding::Floor);
        user_error("ops.div: rounding_mode is None, \"trunc\" or \"floor\", not \"", mode, "\".");
    }, nb::arg("a"), nb::arg("b"), nb::arg("rounding_mode") = nb::none());
    // add and mul also take a number.
    o.def("add", [](const Tensor &a, nb::handle b) {
        if (PyFloat_Check(b.ptr()) || PyLong_Check(b.ptr())) return ops::add(a, nb::cast<double>(b));
        return ops::add(a, binary_operand(b, "ops.add"));
    });
    o.def("mul", [](const Tensor &a, nb::handle b) {
        if (PyFloat_Check(b.ptr()) || PyLong_Check(b.ptr())) return ops::mul(a, nb::cast<double>(b));
        return ops::mul(a, binary_operand(b, "ops.mul"));
    });
#define TESSERA_PY_CMP(NAME, OP) \
    o.def(#NAME, [](const Tensor &a, const Tensor &b) { return ops::compare(ops::Compare::OP, a, b); });
    TESSERA_PY_CMP(eq, EQ)
    TESSERA_PY_CMP(ne, NE)
    TESSERA_PY_CMP(lt, LT)
    TESSERA_PY_CMP(le, LE)
    TESSERA_PY_CMP(gt, GT)
    TESSERA_PY_CMP(ge, GE)
#undef TESSERA_PY_CMP
    o.def("where", &ops::where, nb::arg("condition"), nb::arg("a"), nb::arg("b"));
    o.def("clamp", &ops::clamp, nb::arg("a"), nb::arg("min"), nb::arg("max"));
    o.def("cast", [](const Tensor &a, nb::handle t) { return ops::cast(a, to_type(t, "ops.cast")); });
#define TESSERA_PY_OP1(NAME) o.def(#NAME, [](const Tensor &a) { return ops::NAME(a); });
    TESSERA_PY_OP1(neg)
    TESSERA_PY_OP1(abs)
    TESSERA_PY_OP1(exp)
    TESSERA_PY_OP1(log)
    TESSERA_PY_OP1(sqrt)
    TESSERA_PY_OP1(rsqrt)
    TESSERA_PY_OP1(tanh)
    TESSERA_PY_OP1(sigmoid)
    TESSERA_PY_OP1(relu)
    TESSERA_PY_OP1(silu)
#undef TESSERA_PY_OP1
    o.def("gelu", [](const Tensor &a, const std::string &approximate) {
        if (approximate != "none" && approximate != "tanh")
            user_error("ops.gelu: approximate is \"none\" or \"tanh\", not \"", approximate, "\".");
        return ops::gelu(a, approximate == "tanh");
    }, nb::arg("a"), nb::arg("approximate") = "none");
#define TESSERA_PY_REDUCE(NAME) \
    o.def(#NAME, &ops::NAME, nb::arg("a"), nb::arg("axes"), nb::arg("keepdim") = false);
    TESSERA_PY_REDUCE(sum)
    TESSERA_PY_REDUCE(mean)
    TESSERA_PY_REDUCE(amax)
    TESSERA_PY_REDUCE(amin)
#undef TESSERA_PY_REDUCE
    o.def("softmax", &ops::softmax, nb::arg("a"), nb::arg("axis"));
    o.def("log_softmax", &ops::log_softmax, nb::arg("a"), nb::arg("axis"));
    o.def("var", &ops::var, nb::arg("a"), nb::arg("axes"), nb::arg("correction") = 1, nb::arg("keepdim") = false);
    o.def("layer_norm",
          [](const Tensor &x, int normalized_axes, nb::handle weight, nb::handle bias, double eps) {
              Tensor w, b;
              return ops::layer_norm(x, normalized_axes, optional_tensor(weight, w, "ops.layer_norm weight"),
                                     optional_tensor(bias, b, "ops.layer_norm bias"), eps);
          },
          nb::arg("x"), nb::arg("normalized_axes"), nb::arg("weight") = nb::none(), nb::arg("bias") = nb::none(),
          nb::arg("eps") = 1e-5);
    o.def("batch_norm",
          [](const Tensor &x, const Tensor &mean, const Tensor &var, nb::handle weight, nb::handle bias, double eps) {
              Tensor w, b;
              return ops::batch_norm(x, mean, var, optional_tensor(weight, w, "ops.batch_norm weight"),
                                     optional_tensor(bias, b, "ops.batch_norm bias"), eps);
          },
          nb::arg("x"), nb::arg("running_mean"), nb::arg("running_var"), nb::arg("weight") = nb::none(),
          nb::arg("bias") = nb::none(), nb::arg("eps") = 1e-5);
    o.def("permute", &ops::permute, nb::arg("a"), nb::arg("dims"));
    o.def("transpose", &ops::transpose, nb::arg("a"), nb::arg("axis0"), nb::arg("axis1"));
    o.def("reshape", &ops::reshape, nb::arg("a"), nb::arg("shape"));
    o.def("flatten", &ops::flatten, nb::arg("a"), nb::arg("start") = 0, nb::arg("end") = -1);
    o.def("squeeze", &ops::squeeze, nb::arg("a"), nb::arg("axis"));
    o.def("unsqueeze", &ops::unsqueeze, nb::arg("a"), nb::arg("axis"));
    o.def("expand", &ops::expand, nb::arg("a"), nb::arg("shape"));
    o.def("slice", &ops::slice, nb::arg("a"), nb::arg("axis"), nb::arg("start"), nb::arg("end"), nb::arg("step") = 1);
    o.def("cat", &ops::cat, nb::arg("tensors"), nb::arg("axis"));
    o.def("pad", &ops::pad, nb::arg("a"), nb::arg("pads"), nb::arg("value") = 0.0,
          "pads: one (before, after) pair per axis, outermost first; leading axes without a pair are not padded.");
    o.def("conv2d",
          [](const Tensor &x, const Tensor &w, nb::handle bias, std::pair<int, int> stride, std::pair<int, int> padding,
             std::pair<int, int> dilation, int groups, bool channels_last) {
              Tensor b;
              return ops::conv2d(x, w, optional_tensor(bias, b, "ops.conv2d bias"),
                                 ops::Conv2dOptions{stride, padding, dilation, groups, channels_last});
          },
          nb::arg("x"), nb::arg("weight"), nb::arg("bias") = nb::none(), nb::arg("stride") = std::pair<int, int>(1, 1),
          nb::arg("padding") = std::pair<int, int>(0, 0), nb::arg("dilation") = std::pair<int, int>(1, 1),
          nb::arg("groups") = 1, nb::arg("channels_last") = false);
    auto pool_options = [](std::pair<int, int> kernel, nb::handle stride, std::pair<int, int> padding, bool channels_last) {
        ops::Pool2dOptions opt;
        opt.kernel = kernel;
        opt.stride = stride.is_none() ? kernel : nb::cast<std::pair<int, int>>(stride);
        opt.padding = padding;
        opt.channels_last = channels_last;
        return opt;
    };
    o.def("max_pool2d",
          [pool_options](const Tensor &x, std::pair<int, int> kernel, nb::handle stride, std::pair<int, int> padding,
                         bool channels_last) { return ops::max_pool2d(x, pool_options(kernel, stride, padding, channels_last)); },
          nb::arg("x"), nb::arg("kernel"), nb::arg("stride") = nb::none(), nb::arg("padding") = std::pair<int, int>(0, 0),
          nb::arg("channels_last") = false);
    o.def("avg_pool2d",
          [pool_options](const Tensor &x, std::pair<int, int> kernel, nb::handle stride, std::pair<int, int> padding,
                         bool channels_last, bool count_include_pad) {
              ops::Pool2dOptions opt = pool_options(kernel, stride, padding, channels_last);
              opt.count_include_pad = count_include_pad;
              return ops::avg_pool2d(x, opt);
          },
          nb::arg("x"), nb::arg("kernel"), nb::arg("stride") = nb::none(), nb::arg("padding") = std::pair<int, int>(0, 0),
          nb::arg("channels_last") = false, nb::arg("count_include_pad") = true);
    o.def("adaptive_avg_pool2d", &ops::adaptive_avg_pool2d, nb::arg("x"), nb::arg("output_size"),
          nb::arg("channels_last") = false);
    o.def("matmul", &ops::matmul, nb::arg("a"), nb::arg("b"));
    o.def("linear", [](const Tensor &x, const Tensor &w, nb::handle bias) {
        Tensor b;
        return ops::linear(x, w, optional_tensor(bias, b, "ops.linear bias"));
    }, nb::arg("x"), nb::arg("weight"), nb::arg("bias") = nb::none());
}

} // namespace tessera::python
