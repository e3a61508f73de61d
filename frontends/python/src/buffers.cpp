// Buffers, InputBuffers and Params, for Python.
//
//   img = numpy.zeros((480, 640), numpy.float32)
//   b = tessera.Buffer(img)          # shares img's memory; b.width == 640, b.height == 480
//   inp = tessera.InputBuffer(tessera.float32, 2, "input")
//   inp.set(img)                     # the same, bound for realize()
//   out = f.realize([640, 480])      # a tessera.Buffer; out.numpy() is a (480, 640) view
//
// A Buffer made from an array (NumPy's buffer protocol or any DLPack producer, such as JAX)
// never copies, and keeps the array alive as long as Tessera holds the buffer. The axes are
// reversed, as in Halide's Python bindings: Tessera's dimension 0 (x, innermost) is the array's
// last axis, so a C-ordered image of shape (height, width) is indexed f[x, y].
#include "bindings.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <tessera/eval.h>

namespace tessera::python {

namespace {

using AnyArray = nb::ndarray<nb::ro>;

Type type_of_dlpack(nb::dlpack::dtype t, const std::string &what) {
    using Code = nb::dlpack::dtype_code;
    if (t.lanes == 1) {
        switch (Code(t.code)) {
        case Code::Int:
            if (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64) return Int(t.bits);
            break;
        case Code::UInt:
            if (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64) return UInt(t.bits);
            break;
        case Code::Float:
            if (t.bits == 16 || t.bits == 32 || t.bits == 64) return Float(t.bits);
            break;
        case Code::Bfloat:
            if (t.bits == 16) return BFloat(16);
            break;
        case Code::Bool:
            if (t.bits == 8) return Bool();
            break;
        default: break;
        }
    }
    user_error(what, ": the array's element type (DLPack code ", int(t.code), ", ", int(t.bits), " bits, ", int(t.lanes),
               " lanes) has no Tessera type. Use bool, (u)int8/16/32/64, float16, bfloat16, float32 or float64.");
}

nb::dlpack::dtype dlpack_of_type(Type t) {
    using Code = nb::dlpack::dtype_code;
    nb::dlpack::dtype d;
    d.lanes = 1;
    d.bits = uint8_t(t.is_bool() ? 8 : t.bits);
    d.code = uint8_t(t.is_bool()     ? Code::Bool
                     : t.is_int()    ? Code::Int
                     : t.is_uint()   ? Code::UInt
                     : t.code == TypeCode::BFloat ? Code::Bfloat
                                                  : Code::Float);
    return d;
}

// Whether Python says the memory of `value` may not be written: a read-only NumPy array or
// buffer-protocol object, or a JAX array (immutable: XLA may share its memory between arrays,
// and DLPack before version 1.0 has no read-only flag to say so). A bare DLPack capsule (what
// torch.utils.dlpack.to_dlpack gives; the PyTorch frontend passes its tensors so) says nothing:
// writable, and asked no further, which keeps a call on small tensors cheap.
bool python_says_read_only(nb::handle value) {
    if (PyCapsule_CheckExact(value.ptr())) return false;
    std::string module = nb::cast<std::string>(nb::getattr(value.type(), "__module__", nb::str("")));
    if (module.rfind("jax", 0) == 0) return true;
    if (nb::hasattr(value, "flags")) {
        nb::object flags = value.attr("flags");
        if (nb::hasattr(flags, "writeable")) return !nb::cast<bool>(flags.attr("writeable"));
    }
    if (PyObject_CheckBuffer(value.ptr())) {
        Py_buffer view;
        if (PyObject_GetBuffer(value.ptr(), &view, PyBUF_WRITABLE) != 0) {
            PyErr_Clear();
            return true;
        }
        PyBuffer_Release(&view);
    }
    return false;
}

// Wraps an array's memory as a Buffer, keeping the array alive with the buffer.
PyBuffer wrap_array(nb::handle value, const AnyArray &array, bool reverse_axes, const std::string &name,
                    const std::string &what) {
    if (array.device_type() != nb::device::cpu::value)
        user_error(what, ": the array lives on a device (DLPack device type ", array.device_type(),
                   "), not in host memory. Pass a CPU array (e.g. tensor.cpu()).");
    Type type = type_of_dlpack(array.dtype(), what);
    int n = int(array.ndim());
    detail::check_dimension_count(what, n);
    std::vector<BufferDim> dims(static_cast<size_t>(n));
    // An array without elements may report any strides (NumPy's from a DLPack export: 0).
    bool empty = false;
    for (int i = 0; i < n; ++i) empty = empty || array.shape(size_t(i)) == 0;
    for (int i = 0; i < n; ++i) {
        int axis = reverse_axes ? n - 1 - i : i;
        int64_t extent = int64_t(array.shape(size_t(axis)));
        int64_t stride = int64_t(array.stride(size_t(axis)));
        if (stride == 0) {
            if (extent > 1 && !empty)
                user_error(what, ": axis ", axis, " of the array has stride 0 (a broadcast view); Tessera buffers "
                           "need distinct elements. Pass a copy (numpy.ascontiguousarray).");
            stride = 1;
        }
        dims[size_t(i)] = {0, extent, stride};
    }
    // Zero-size arrays may come with a null pointer; give the buffer a harmless address.
    static uint8_t empty_element[16];
    void *data = array.data() ? const_cast<void *>(array.data()) : empty_element;
    PyBuffer b{Buffer<void>(type, data, dims, name), python_says_read_only(value)};
    // The buffer's `allocation` owns nothing but a reference to the array, dropped (under the
    // GIL) when the last handle of the buffer goes, whichever thread that is.
    auto *keep = new AnyArray(array);
    b.buffer.impl()->allocation = std::shared_ptr<uint8_t>(static_cast<uint8_t *>(data), [keep](uint8_t *) {
        if (!Py_IsInitialized()) return;  // interpreter gone: nothing left to release
        nb::gil_scoped_acquire gil;
        delete keep;
    });
    return b;
}

// The same for any Python object that exports its memory (buffer protocol or DLPack).
PyBuffer wrap_any_array(nb::handle value, bool reverse_axes, const std::string &name, const std::string &what) {
    AnyArray array;
    if (!nb::try_cast(value, array, /*convert=*/false))
        user_error(what, ": ", nb::cast<std::string>(nb::repr(value.type())),
                   " is neither a tessera.Buffer nor an array (NumPy, or a DLPack producer such as a JAX array); "
                   "for a new buffer pass a type and sizes: Buffer(tessera.float32, [w, h]).");
    return wrap_array(value, array, reverse_axes, name, what);
}

nb::object element_at(const Buffer<void> &b, nb::handle key) {
    std::vector<int64_t> coords;
    bool all_ints = true;
    std::vector<nb::handle> items;
    if (nb::isinstance<nb::tuple>(key) || nb::isinstance<nb::list>(key))
        for (nb::handle k : key) items.push_back(k);
    else
        items.push_back(key);
    for (nb::handle k : items) {
        if (!PyLong_Check(k.ptr()) || PyBool_Check(k.ptr())) {
            all_ints = false;
            break;
        }
        coords.push_back(nb::cast<int64_t>(k));
    }
    if (!all_ints) return nb::cast(b(to_coordinates(key, ("Buffer " + b.name()).c_str())));
    if (int(coords.size()) != b.dimensions())
        user_error("Buffer ", b.name(), " has ", b.dimensions(), " dimensions but ", coords.size(),
                   " coordinates were given.");
    void *p = b.address_of(coords);
    return scalar_to_python(b.type(), load_scalar(b.type(), static_cast<const uint8_t *>(p)));
}

// A view of the buffer's host elements as an array (axes reversed), owned by `owner`.
template <typename... Framework>
nb::ndarray<Framework...> host_view(const PyBuffer &self, nb::handle owner) {
    const Buffer<void> &b = self.buffer;
    int n = b.dimensions();
    std::vector<size_t> shape(static_cast<size_t>(n));
    std::vector<int64_t> strides(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
        shape[size_t(n - 1 - i)] = size_t(std::max<int64_t>(b.extent(i), 0));
        strides[size_t(n - 1 - i)] = b.stride(i);
    }
    // raw_data() brings back elements a GPU computed and marks the host's copy the newer one
    // (the view may be written).
    return nb::ndarray<Framework...>(b.raw_data(), size_t(n), shape.data(), owner, strides.data(), dlpack_of_type(b.type()));
}

} // namespace

nb::object scalar_to_python(Type t, Value v) {
    if (t.is_bool()) return nb::bool_(v.u != 0);
    if (t.is_int()) return nb::int_(v.i);
    if (t.is_uint()) return nb::steal(PyLong_FromUnsignedLongLong(v.u));
    return nb::float_(v.f);
}

Value python_to_scalar(Type t, nb::handle value, const std::string &what) {
    Value v{};
    if (t.is_float()) {
        double d = PyFloat_AsDouble(value.ptr());
        if (d == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            user_error(what, ": ", nb::cast<std::string>(nb::repr(value)), " is not a number.");
        }
        return ir::value_from_double(t, d);
    }
    nb::object index = nb::steal(PyNumber_Index(value.ptr()));
    if (!index.is_valid()) {
        PyErr_Clear();
        user_error(what, ": ", nb::cast<std::string>(nb::repr(value)), " is not an integer, and the type is ", t, ".");
    }
    if (t.is_uint() && !t.is_bool()) {
        unsigned long long u = PyLong_AsUnsignedLongLong(index.ptr());
        if (PyErr_Occurred()) {
            PyErr_Clear();
            user_error(what, ": ", nb::str(value).c_str(), " is not representable in ", t, ".");
        }
        v.u = u;
        if (t.bits < 64 && (u >> t.bits) != 0) user_error(what, ": ", u, " is not representable in ", t, ".");
        return v;
    }
    int overflow = 0;
    long long i = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (overflow || !t.can_represent(int64_t(i)))
        user_error(what, ": ", nb::str(value).c_str(), " is not representable in ", t, ".");
    if (t.is_bool()) v.u = uint64_t(i);
    else v.i = int64_t(i);
    return v;
}

PyBuffer to_buffer(nb::handle value, bool for_output, const char *what) {
    PyBuffer b;
    if (nb::try_cast<PyBuffer>(value, b)) {
        // b is a copy of the handle: same elements, same residency.
    } else {
        b = wrap_any_array(value, true, "", what);
    }
    if (for_output && b.read_only)
        user_error(what, ": the output array is read-only. Pass a writable array (for NumPy: arr.flags.writeable).");
    return b;
}

nb::object wrap_buffer(const Buffer<void> &b) { return nb::cast(PyBuffer{b, false}); }

void define_buffers(nb::module_ &m) {
    nb::class_<PyBuffer>(m, "Buffer",
                         "A buffer of elements: Buffer(array) wraps a NumPy array or DLPack tensor without copying "
                         "(axes reversed: the last axis is dimension 0); Buffer(type, sizes) allocates a zeroed one.")
        .def("__init__",
             [](PyBuffer *self, nb::handle source, nb::handle sizes, const std::string &name, bool reverse_axes) {
                 if (sizes.is_none()) {
                     new (self) PyBuffer(wrap_any_array(source, reverse_axes, name, "tessera.Buffer"));
                 } else {
                     std::vector<int> s = nb::cast<std::vector<int>>(sizes);
                     new (self) PyBuffer{Buffer<void>(to_type(source, "tessera.Buffer"), s, name), false};
                 }
             },
             nb::arg("source"), nb::arg("sizes") = nb::none(), nb::arg("name") = "", nb::arg("reverse_axes") = true)
        .def_prop_ro("type", [](const PyBuffer &b) { return b.buffer.type(); })
        .def_prop_ro("name", [](const PyBuffer &b) { return b.buffer.name(); })
        .def_prop_ro("read_only", [](const PyBuffer &b) { return b.read_only; })
        .def("dimensions", [](const PyBuffer &b) { return b.buffer.dimensions(); })
        .def("min", [](const PyBuffer &b, int i) { return b.buffer.min(i); })
        .def("extent", [](const PyBuffer &b, int i) { return b.buffer.extent(i); })
        .def("stride", [](const PyBuffer &b, int i) { return b.buffer.stride(i); })
        .def_prop_ro("width", [](const PyBuffer &b) { return b.buffer.width(); })
        .def_prop_ro("height", [](const PyBuffer &b) { return b.buffer.height(); })
        .def_prop_ro("channels", [](const PyBuffer &b) { return b.buffer.channels(); })
        .def_prop_ro("sizes", [](const PyBuffer &b) {
            std::vector<int64_t> s;
            for (int i = 0; i < b.buffer.dimensions(); ++i) s.push_back(b.buffer.extent(i));
            return s;
        }, "The extents, dimension 0 first (the array's shape reversed).")
        .def("set_min", [](PyBuffer &b, const std::vector<int64_t> &mins) { b.buffer.set_min(mins); },
             "Shifts the coordinates so that dimension i starts at mins[i].")
        .def("copy", [](const PyBuffer &b) { return PyBuffer{b.buffer.copy(), false}; },
             "A dense copy in new memory, with the same mins and extents.")
        .def("__getitem__", [](const PyBuffer &b, nb::handle key) { return element_at(b.buffer, key); },
             "b[x, y] with integers: the element; with expressions: an Expr reading the buffer.")
        .def("__setitem__", [](const PyBuffer &b, nb::handle key, nb::handle value) {
            if (b.read_only) user_error("Buffer ", b.buffer.name(), " wraps read-only memory.");
            std::vector<int64_t> coords;
            if (nb::isinstance<nb::tuple>(key)) coords = nb::cast<std::vector<int64_t>>(key);
            else coords.push_back(nb::cast<int64_t>(key));
            if (int(coords.size()) != b.buffer.dimensions())
                user_error("Buffer ", b.buffer.name(), " has ", b.buffer.dimensions(), " dimensions but ", coords.size(),
                           " coordinates were given.");
            store_scalar(b.buffer.type(), static_cast<uint8_t *>(b.buffer.address_of(coords)),
                         python_to_scalar(b.buffer.type(), value, "Buffer " + b.buffer.name()));
        })
        .def("numpy", [](nb::handle self) { return host_view<nb::numpy>(nb::cast<PyBuffer &>(self), self); },
             "The elements as a NumPy array sharing the buffer's memory (axes reversed: shape (..., height, width)).")
        .def("__array__",
             [](nb::handle self, nb::handle dtype, nb::handle copy) {
                 nb::object view = nb::cast(host_view<nb::numpy>(nb::cast<PyBuffer &>(self), self));
                 if (!dtype.is_none()) view = view.attr("astype")(dtype);
                 if (!copy.is_none() && nb::cast<bool>(copy)) view = view.attr("copy")();
                 return view;
             },
             nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none())
        .def("__dlpack__",
             [](nb::handle self, nb::kwargs) {
                 // A framework-less ndarray goes to Python as a DLPack capsule ("dltensor"), which
                 // is what __dlpack__ returns; the capsule owns a reference to the buffer.
                 return nb::cast(host_view<>(nb::cast<PyBuffer &>(self), self));
             },
             "The DLPack capsule of the host elements (for numpy.from_dlpack, jax.numpy.from_dlpack).")
        .def("__dlpack_device__", [](nb::handle) { return nb::make_tuple(int(nb::device::cpu::value), 0); })
        // GPU residency (docs/gpu.md).
        .def("has_device_allocation", [](const PyBuffer &b) { return b.buffer.has_device_allocation(); })
        .def("host_dirty", [](const PyBuffer &b) { return b.buffer.host_dirty(); })
        .def("device_dirty", [](const PyBuffer &b) { return b.buffer.device_dirty(); })
        .def("set_host_dirty", [](const PyBuffer &b, bool dirty) { b.buffer.set_host_dirty(dirty); }, nb::arg("dirty") = true)
        .def("copy_to_host", [](const PyBuffer &b) { b.buffer.copy_to_host(); })
        .def("device_free", [](const PyBuffer &b) { b.buffer.device_free(); })
        .def("data_address", [](const PyBuffer &b) { return uintptr_t(b.buffer.impl()->host); },
             "The host address of the element at the mins (for identity checks; does not copy back from a GPU).")
        .def("__repr__", [](const PyBuffer &b) {
            std::string s = "<tessera.Buffer " + b.buffer.name() + " of " + b.buffer.type().to_string() + " [";
            for (int i = 0; i < b.buffer.dimensions(); ++i) s += (i ? ", " : "") + std::to_string(b.buffer.extent(i));
            return s + "]>";
        });

    nb::class_<InputBuffer<void>::Dimension>(m, "InputDimension")
        .def("min", &InputBuffer<void>::Dimension::min)
        .def("extent", &InputBuffer<void>::Dimension::extent)
        .def("max", &InputBuffer<void>::Dimension::max);

    nb::class_<InputBuffer<void>>(m, "InputBuffer",
                                  "A buffer given when the pipeline runs: InputBuffer(type, dimensions, name).")
        .def("__init__",
             [](InputBuffer<void> *self, nb::handle type, int dimensions, const std::string &name) {
                 new (self) InputBuffer<void>(to_type(type, "tessera.InputBuffer"), dimensions, name);
             },
             nb::arg("type"), nb::arg("dimensions"), nb::arg("name") = "")
        .def_prop_ro("name", &InputBuffer<void>::name)
        .def_prop_ro("type", &InputBuffer<void>::type)
        .def("dimensions", &InputBuffer<void>::dimensions)
        .def("dim", &InputBuffer<void>::dim)
        .def_prop_ro("width", &InputBuffer<void>::width)
        .def_prop_ro("height", &InputBuffer<void>::height)
        .def_prop_ro("channels", &InputBuffer<void>::channels)
        .def("__getitem__",
             [](const InputBuffer<void> &in, nb::handle key) { return in(to_coordinates(key, ("InputBuffer " + in.name()).c_str())); })
        .def("set",
             [](const InputBuffer<void> &in, nb::handle buffer) {
                 in.set(to_buffer(buffer, false, ("InputBuffer " + in.name() + ".set").c_str()).buffer);
             },
             nb::arg("buffer"), "Binds the buffer (or array, without copying) that realize() reads.")
        .def("get", [](const InputBuffer<void> &in) { return wrap_buffer(in.get()); })
        .def("reset", &InputBuffer<void>::reset)
        .def("__hash__", [](const InputBuffer<void> &in) { return (Py_hash_t)(intptr_t)in.contents().get(); })
        .def("__eq__", [](const InputBuffer<void> &a, nb::handle b) {
            return nb::isinstance<InputBuffer<void>>(b) && nb::cast<InputBuffer<void> &>(b).contents() == a.contents();
        })
        .def("__repr__", [](const InputBuffer<void> &in) {
            return "<tessera.InputBuffer " + in.name() + " of " + in.type().to_string() + ", " +
                   std::to_string(in.dimensions()) + " dimensions>";
        });
}

} // namespace tessera::python
