// Boundary conditions as Funcs that clamp, reflect or wrap their coordinates into the source's
// bounds (or select a constant outside), so that the source is never read outside them.
#include "tessera/boundary.h"

#include <functional>

#include "tessera/ir.h"

namespace tessera::BoundaryConditions {
namespace {

struct Source {
    std::string name;
    int dimensions = 0;
    std::function<Expr(const std::vector<Expr> &)> read;
    Region bounds;
};

Source from_func(const Func &f, const Region &bounds, const char *what) {
    if (!f.defined()) user_error("BoundaryConditions::", what, ": Func ", f.name(), " is undefined. Define it first.");
    if (int(bounds.size()) > f.dimensions())
        user_error("BoundaryConditions::", what, ": ", bounds.size(), " bounds given for Func ", f.name(), " with ",
                   f.dimensions(), " dimensions.");
    Source s;
    s.name = f.name();
    s.dimensions = f.dimensions();
    s.read = [f](const std::vector<Expr> &c) { return Expr(f(c)); };
    s.bounds = bounds;
    s.bounds.resize(size_t(s.dimensions));
    return s;
}

Source from_buffer(const Buffer<void> &b, const char *what) {
    if (!b.defined()) user_error("BoundaryConditions::", what, ": the buffer is undefined.");
    Source s;
    s.name = b.name();
    s.dimensions = b.dimensions();
    s.read = [b](const std::vector<Expr> &c) { return b(c); };
    for (int i = 0; i < b.dimensions(); ++i) s.bounds.emplace_back(Expr(int(b.min(i))), Expr(int(b.extent(i))));
    return s;
}

Source from_input(const InputBuffer<void> &in, const char *) {
    Source s;
    s.name = in.name();
    s.dimensions = in.dimensions();
    s.read = [in](const std::vector<Expr> &c) { return in(c); };
    for (int i = 0; i < in.dimensions(); ++i) s.bounds.emplace_back(in.dim(i).min(), in.dim(i).extent());
    return s;
}

// Builds f(args) = source(index_i(arg_i, min_i, extent_i)...) where unbounded dimensions keep
// their coordinate.
Func remap(const Source &s, const std::string &suffix,
           const std::function<Expr(Expr coordinate, Expr min, Expr extent)> &index) {
    Func f(s.name + "_" + suffix);
    std::vector<Expr> args, coords;
    for (int i = 0; i < s.dimensions; ++i) {
        Expr v = Var(detail::unique_name(s.name + "_" + std::to_string(i)));
        args.push_back(v);
        const Range &r = s.bounds[size_t(i)];
        if (r.min.defined() && r.extent.defined()) coords.push_back(index(v, r.min, r.extent));
        else coords.push_back(v);
    }
    f(args) = s.read(coords);
    return f;
}

Expr clamp_index(Expr x, Expr min, Expr extent) { return clamp(x, min, min + extent - 1); }

Expr mirror_image_index(Expr x, Expr min, Expr extent) {
    // Period 2n: t in [0, n) reads t, t in [n, 2n) reads 2n - 1 - t.
    // The clamp changes no value; it tells bounds inference that the read stays inside.
    Expr t = (x - min) % (2 * extent);
    return min + clamp(select(t < extent, t, 2 * extent - 1 - t), 0, extent - 1);
}

Expr mirror_interior_index(Expr x, Expr min, Expr extent) {
    // Period 2n - 2 (n > 1): t in [0, n) reads t, t in [n, 2n - 2) reads 2n - 2 - t. A
    // one-element dimension always reads its only element.
    Expr period = max(2 * extent - 2, 1);
    Expr t = (x - min) % period;
    return min + clamp(select(t < extent, t, 2 * extent - 2 - t), 0, extent - 1);
}

Expr repeat_image_index(Expr x, Expr min, Expr extent) { return min + clamp((x - min) % extent, 0, extent - 1); }

Func exterior(const Source &s, Expr value) {
    if (!value.defined()) user_error("BoundaryConditions::constant_exterior: the exterior value is undefined.");
    Func f(s.name + "_constant_exterior");
    std::vector<Expr> args, coords;
    Expr inside = make_bool(true);
    for (int i = 0; i < s.dimensions; ++i) {
        Expr v = Var(detail::unique_name(s.name + "_" + std::to_string(i)));
        args.push_back(v);
        const Range &r = s.bounds[size_t(i)];
        if (r.min.defined() && r.extent.defined()) {
            coords.push_back(clamp_index(v, r.min, r.extent));
            inside = inside && v >= r.min && v < r.min + r.extent;
        } else {
            coords.push_back(v);
        }
    }
    // The clamped read keeps every access inside the source even where the value is unused.
    Expr read = s.read(coords);
    if (value.type() != read.type()) {
        if (!ir::is_const(value))
            user_error("BoundaryConditions::constant_exterior: the exterior value ", value, " has type ", value.type(),
                       " but ", s.name, " has type ", read.type(), ". Cast the value.");
        value = cast(read.type(), value);
    }
    f(args) = select(likely(inside), read, value);
    return f;
}

} // namespace

Func repeat_edge(const Func &f, const Region &b) { return remap(from_func(f, b, "repeat_edge"), "repeat_edge", clamp_index); }
Func repeat_edge(const Buffer<void> &b) { return remap(from_buffer(b, "repeat_edge"), "repeat_edge", clamp_index); }
Func repeat_edge(const InputBuffer<void> &b) { return remap(from_input(b, "repeat_edge"), "repeat_edge", clamp_index); }

Func constant_exterior(const Func &f, Expr v, const Region &b) { return exterior(from_func(f, b, "constant_exterior"), v); }
Func constant_exterior(const Buffer<void> &b, Expr v) { return exterior(from_buffer(b, "constant_exterior"), v); }
Func constant_exterior(const InputBuffer<void> &b, Expr v) { return exterior(from_input(b, "constant_exterior"), v); }

Func mirror_image(const Func &f, const Region &b) {
    return remap(from_func(f, b, "mirror_image"), "mirror_image", mirror_image_index);
}
Func mirror_image(const Buffer<void> &b) { return remap(from_buffer(b, "mirror_image"), "mirror_image", mirror_image_index); }
Func mirror_image(const InputBuffer<void> &b) {
    return remap(from_input(b, "mirror_image"), "mirror_image", mirror_image_index);
}

Func mirror_interior(const Func &f, const Region &b) {
    return remap(from_func(f, b, "mirror_interior"), "mirror_interior", mirror_interior_index);
}
Func mirror_interior(const Buffer<void> &b) {
    return remap(from_buffer(b, "mirror_interior"), "mirror_interior", mirror_interior_index);
}
Func mirror_interior(const InputBuffer<void> &b) {
    return remap(from_input(b, "mirror_interior"), "mirror_interior", mirror_interior_index);
}

Func repeat_image(const Func &f, const Region &b) {
    return remap(from_func(f, b, "repeat_image"), "repeat_image", repeat_image_index);
}
Func repeat_image(const Buffer<void> &b) { return remap(from_buffer(b, "repeat_image"), "repeat_image", repeat_image_index); }
Func repeat_image(const InputBuffer<void> &b) {
    return remap(from_input(b, "repeat_image"), "repeat_image", repeat_image_index);
}

} // namespace tessera::BoundaryConditions
