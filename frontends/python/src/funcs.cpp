// Funcs, their definitions, and boundary conditions, for Python.
//
//   f = tessera.Func("f")
//   f[x, y] = inp[x, y] * 2            # pure definition
//   f[r.x, 0] += 1                     # update definition (a pure one, 0, is added first)
//   g = tessera.BoundaryConditions.repeat_edge(inp)
//
// `f[x, y]` is a FuncRef: an Expr on the right of a definition, a definition when assigned to.
// Python runs `f[k] += v` as `f[k] = f[k].__iadd__(v)`: the in-place operator makes the update
// definition (as C++'s does) and returns a marker that the assignment then ignores.
#include "bindings.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace tessera::python {

namespace {

// A loop named in a scheduling directive: a Var, an RVar, or a one-dimensional RDom.
VarOrRVar to_loop(nb::handle h, const std::string &directive) {
    if (Var v; nb::try_cast<Var>(h, v)) return v;
    if (RVar r; nb::try_cast<RVar>(h, r)) return r;
    if (RDom d; nb::try_cast<RDom>(h, d)) return VarOrRVar(d);
    user_error(directive, ": ", nb::repr(h).c_str(), " is not a loop. Pass a tessera.Var or a tessera.RVar.");
}

// The directives of stage.h on Func (the pure definition) and Stage, each returning its object
// so that calls chain: f.split(x, xo, xi, 8).vectorize(xi).parallel(y).
template <typename T>
void bind_directives(nb::class_<T> &c) {
    c.def("split",
          [](T &s, nb::handle old, nb::handle outer, nb::handle inner, int factor) -> T & {
              return s.split(to_loop(old, "split"), to_loop(outer, "split"), to_loop(inner, "split"), factor);
          },
          nb::arg("old"), nb::arg("outer"), nb::arg("inner"), nb::arg("factor"), nb::rv_policy::reference_internal,
          "Splits loop `old` into `outer` and `inner` (inner over [0, factor)).")
        .def("fuse",
             [](T &s, nb::handle inner, nb::handle outer, nb::handle fused) -> T & {
                 return s.fuse(to_loop(inner, "fuse"), to_loop(outer, "fuse"), to_loop(fused, "fuse"));
             },
             nb::arg("inner"), nb::arg("outer"), nb::arg("fused"), nb::rv_policy::reference_internal,
             "Fuses `inner` (of constant range) and `outer` into one loop `fused`.")
        .def("reorder",
             [](T &s, nb::args loops) -> T & {
                 std::vector<VarOrRVar> v;
                 for (nb::handle h : loops) v.push_back(to_loop(h, "reorder"));
                 return s.reorder(v);
             },
             nb::rv_policy::reference_internal, "Puts the named loops, innermost first, into the positions they hold.")
        .def("tile",
             [](T &s, nb::handle x, nb::handle y, nb::handle xo, nb::handle yo, nb::handle xi, nb::handle yi, int fx,
                int fy) -> T & {
                 return s.tile(to_loop(x, "tile"), to_loop(y, "tile"), to_loop(xo, "tile"), to_loop(yo, "tile"),
                               to_loop(xi, "tile"), to_loop(yi, "tile"), fx, fy);
             },
             nb::arg("x"), nb::arg("y"), nb::arg("xo"), nb::arg("yo"), nb::arg("xi"), nb::arg("yi"), nb::arg("x_factor"),
             nb::arg("y_factor"), nb::rv_policy::reference_internal,
             "split(x, xo, xi, x_factor), split(y, yo, yi, y_factor), reorder(xi, yi, xo, yo).")
        .def("vectorize", [](T &s, nb::handle v, int factor) -> T & { return s.vectorize(to_loop(v, "vectorize"), factor); },
             nb::arg("loop"), nb::arg("factor") = 0, nb::rv_policy::reference_internal,
             "Runs the (innermost) loop as SIMD lanes; with a factor, splits it first.")
        .def("unroll", [](T &s, nb::handle v, int factor) -> T & { return s.unroll(to_loop(v, "unroll"), factor); },
             nb::arg("loop"), nb::arg("factor") = 0, nb::rv_policy::reference_internal,
             "Unrolls the loop; with a factor, splits it first and unrolls the inner loop.")
        .def("parallel", [](T &s, nb::handle v) -> T & { return s.parallel(to_loop(v, "parallel")); }, nb::arg("loop"),
             nb::rv_policy::reference_internal, "Runs the loop's iterations on threads.")
        .def("gpu_blocks",
             [](T &s, nb::args loops) -> T & {
                 if (loops.size() == 1) return s.gpu_blocks(to_loop(loops[0], "gpu_blocks"));
                 if (loops.size() == 2) return s.gpu_blocks(to_loop(loops[0], "gpu_blocks"), to_loop(loops[1], "gpu_blocks"));
                 user_error("gpu_blocks takes one loop, or two adjacent ones (outer, inner).");
             },
             nb::rv_policy::reference_internal, "GPU targets: the loop's (or two adjacent loops') iterations are the blocks.")
        .def("gpu_threads", [](T &s, nb::handle v) -> T & { return s.gpu_threads(to_loop(v, "gpu_threads")); },
             nb::arg("loop"), nb::rv_policy::reference_internal, "GPU targets: the innermost loop runs across a block's threads.")
        .def("gpu_tile",
             [](T &s, nb::handle x, nb::handle y, nb::handle bx, nb::handle by, nb::handle tx, nb::handle ty, int fx,
                int fy) -> T & {
                 return s.gpu_tile(to_loop(x, "gpu_tile"), to_loop(y, "gpu_tile"), to_loop(bx, "gpu_tile"),
                                   to_loop(by, "gpu_tile"), to_loop(tx, "gpu_tile"), to_loop(ty, "gpu_tile"), fx, fy);
             },
             nb::arg("x"), nb::arg("y"), nb::arg("bx"), nb::arg("by"), nb::arg("tx"), nb::arg("ty"), nb::arg("x_factor"),
             nb::arg("y_factor"), nb::rv_policy::reference_internal,
             "GPU targets: tiles of x_factor x y_factor threads, the tiles as blocks.");
}

// What `FuncRef.__iadd__` and its kin return: the update is already made.
struct AppliedUpdate {
    Func func;
};

template <Op op>
AppliedUpdate update_in_place(const PyFuncRef &self, nb::handle value) {
    Expr e = to_expr(value, ("an update definition of Func " + self.func.name()).c_str());
    FuncRef ref = self.ref();
    if constexpr (op == Op::Add) ref += e;
    else if constexpr (op == Op::Sub) ref -= e;
    else if constexpr (op == Op::Mul) ref *= e;
    else ref /= e;
    return AppliedUpdate{self.func};
}

// Bounds {min, extent} per dimension of a Func given to a boundary condition; None for an
// unbounded dimension.
BoundaryConditions::Region to_region(nb::handle bounds, const char *what) {
    if (bounds.is_none())
        user_error(what, ": a Func source needs bounds, one (min, extent) pair per dimension (None for unbounded).");
    BoundaryConditions::Region region;
    for (nb::handle b : bounds) {
        if (b.is_none()) {
            region.emplace_back();
            continue;
        }
        nb::sequence pair = nb::borrow<nb::sequence>(b);
        if (nb::len(pair) != 2) user_error(what, ": each bound is a pair (min, extent) or None.");
        region.emplace_back(to_expr(pair[0], what), to_expr(pair[1], what));
    }
    return region;
}

using FuncBoundary = Func (*)(const Func &, const BoundaryConditions::Region &);
using BufferBoundary = Func (*)(const Buffer<void> &);
using InputBoundary = Func (*)(const InputBuffer<void> &);

// One boundary condition, for every kind of source.
Func boundary(nb::handle source, nb::handle bounds, FuncBoundary on_func, BufferBoundary on_buffer,
              InputBoundary on_input, const char *what) {
    if (nb::isinstance<Func>(source)) return on_func(nb::cast<Func &>(source), to_region(bounds, what));
    if (nb::isinstance<InputBuffer<void>>(source)) return on_input(nb::cast<InputBuffer<void> &>(source));
    return on_buffer(to_buffer(source, false, what).buffer);
}

} // namespace

void define_funcs(nb::module_ &m) {
    nb::class_<AppliedUpdate>(m, "_AppliedUpdate");

    auto ref = nb::class_<PyFuncRef>(m, "FuncRef", "A Func at coordinates: f[x, y].")
                   .def_prop_ro("function", [](const PyFuncRef &r) { return r.func; })
                   .def("__iadd__", &update_in_place<Op::Add>)
                   .def("__isub__", &update_in_place<Op::Sub>)
                   .def("__imul__", &update_in_place<Op::Mul>)
                   .def("__itruediv__", &update_in_place<Op::Div>)
                   .def("__repr__", [](const PyFuncRef &r) { return "<tessera.FuncRef of " + r.func.name() + ">"; });
    add_operators(ref);

    auto func = nb::class_<Func>(m, "Func", "A function over integer coordinates: a pure definition and any number of updates.");
    func
        .def(nb::init<>())
        .def(nb::init<const std::string &>(), nb::arg("name"))
        .def_prop_ro("name", &Func::name)
        .def("defined", &Func::defined)
        .def("dimensions", &Func::dimensions)
        .def_prop_ro("type", &Func::type)
        .def("args", &Func::args)
        .def("value", &Func::value)
        .def("num_update_definitions", &Func::num_update_definitions)
        .def("__getitem__", [](const Func &f, nb::handle key) { return PyFuncRef{f, to_coordinates(key, ("Func " + f.name()).c_str())}; })
        .def("__setitem__",
             [](const Func &f, nb::handle key, nb::handle value) {
                 if (nb::isinstance<AppliedUpdate>(value)) return;  // `f[k] += v` made it already
                 FuncRef r = f(to_coordinates(key, ("Func " + f.name()).c_str()));
                 r = to_expr(value, ("the definition of Func " + f.name()).c_str());
             })
        .def("realize",
             [](const Func &f, nb::handle what) {
                 return realize_either(
                     what, ("Func " + f.name() + ".realize").c_str(),
                     [&](const std::vector<int> &sizes) { return Realization({f.realize(sizes)}); },
                     [&](const std::vector<Buffer<void>> &outs) {
                         if (outs.size() != 1)
                             user_error("Func ", f.name(), ".realize: a Func has one output, but ", outs.size(),
                                        " output buffers were given.");
                         f.realize(outs[0]);
                     });
             },
             nb::arg("sizes_or_output"),
             "realize([w, h, ...]) returns a new Buffer over [0, size) per dimension; realize(out) computes into a "
             "Buffer or writable array (over its region) and returns None.")
        .def("__hash__", [](const Func &f) { return (Py_hash_t)(intptr_t)f.contents().get(); })
        .def("__repr__", [](const Func &f) { return "<tessera.Func " + f.name() + ">"; });
    // Scheduling directives (docs/dsl.md, "Scheduling").
    auto stage = nb::class_<Stage>(m, "Stage", "One definition of a Func, for scheduling directives: Func.update(k).");
    stage.def_prop_ro("name", &Stage::name).def("__repr__", [](const Stage &s) { return "<tessera.Stage " + s.name() + ">"; });
    bind_directives(stage);
    bind_directives(func);
    func.def("update", &Func::update, nb::arg("k") = 0, "The update definition k, for scheduling directives.")
        .def("compute_root", &Func::compute_root, nb::rv_policy::reference_internal,
             "Computes the Func in a loop nest and buffer of its own (the directive schedule's default).")
        .def("compute_at",
             [](Func &f, const Func &consumer, nb::handle loop) -> Func & { return f.compute_at(consumer, to_loop(loop, "compute_at")); },
             nb::arg("consumer"), nb::arg("loop"), nb::rv_policy::reference_internal,
             "Computes what each iteration of the consumer's tile loop needs, inside it (overlapped tiles).")
        .def("compute_inline", &Func::compute_inline, nb::rv_policy::reference_internal,
             "Computes the Func where it is used: each call becomes its value at the call's coordinates.")
        .def("store_at",
             [](Func &f, const Func &consumer, nb::handle loop) -> Func & { return f.store_at(consumer, to_loop(loop, "store_at")); },
             nb::arg("consumer"), nb::arg("loop"), nb::rv_policy::reference_internal,
             "With compute_at at the row loop inside the tile: rows slide through a ring stored per tile.")
        .def("bound",
             [](Func &f, const Var &v, nb::handle min, nb::handle extent) -> Func & {
                 return f.bound(v, to_expr(min, "Func.bound"), to_expr(extent, "Func.bound"));
             },
             nb::arg("var"), nb::arg("min"), nb::arg("extent"), nb::rv_policy::reference_internal,
             "Computes the Func over exactly [min, min + extent) in dimension var (constants, Params, input sizes); "
             "running fails if more is needed.")
        .def("align_bounds", &Func::align_bounds, nb::arg("var"), nb::arg("modulus"), nb::arg("remainder") = 0,
             nb::rv_policy::reference_internal,
             "Widens the range computed in dimension var to start at remainder modulo modulus, with an extent a multiple "
             "of modulus.");

    nb::module_ bc = m.def_submodule("BoundaryConditions",
                                     "Funcs defined everywhere that read a bounded source only inside its bounds.");
#define TESSERA_PY_BOUNDARY(NAME)                                                                                  \
    bc.def(#NAME,                                                                                                   \
           [](nb::handle source, nb::handle bounds) {                                                               \
               return boundary(source, bounds, &BoundaryConditions::NAME, &BoundaryConditions::NAME,                \
                               &BoundaryConditions::NAME, "BoundaryConditions." #NAME);                             \
           },                                                                                                       \
           nb::arg("source"), nb::arg("bounds") = nb::none());
    TESSERA_PY_BOUNDARY(repeat_edge)
    TESSERA_PY_BOUNDARY(mirror_image)
    TESSERA_PY_BOUNDARY(mirror_interior)
    TESSERA_PY_BOUNDARY(repeat_image)
#undef TESSERA_PY_BOUNDARY
    bc.def("constant_exterior",
           [](nb::handle source, nb::handle value, nb::handle bounds) {
               const char *what = "BoundaryConditions.constant_exterior";
               Expr v = to_expr(value, what);
               if (nb::isinstance<Func>(source))
                   return BoundaryConditions::constant_exterior(nb::cast<Func &>(source), v, to_region(bounds, what));
               if (nb::isinstance<InputBuffer<void>>(source))
                   return BoundaryConditions::constant_exterior(nb::cast<InputBuffer<void> &>(source), v);
               return BoundaryConditions::constant_exterior(to_buffer(source, false, what).buffer, v);
           },
           nb::arg("source"), nb::arg("value"), nb::arg("bounds") = nb::none());
}

} // namespace tessera::python
