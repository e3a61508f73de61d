// Boundary conditions: Funcs defined everywhere that read a bounded source only inside its
// bounds. Each takes a Buffer, an InputBuffer (symbolic bounds) or a Func with explicit
// bounds {min, extent} per dimension; an undefined bound leaves that dimension unbounded.
#pragma once

#include <utility>
#include <vector>

#include "tessera/buffer.h"
#include "tessera/func.h"
#include "tessera/param.h"

namespace tessera::BoundaryConditions {

using Region = std::vector<Range>;

// The nearest edge value: f(clamp(x, min, max)).
Func repeat_edge(const Func &source, const Region &bounds);
Func repeat_edge(const Buffer<void> &source);
Func repeat_edge(const InputBuffer<void> &source);

// `value` outside the bounds, the source inside.
Func constant_exterior(const Func &source, Expr value, const Region &bounds);
Func constant_exterior(const Buffer<void> &source, Expr value);
Func constant_exterior(const InputBuffer<void> &source, Expr value);

// Reflection including the edge: ... 2 1 0 | 0 1 2 ... n-1 | n-1 n-2 ...
Func mirror_image(const Func &source, const Region &bounds);
Func mirror_image(const Buffer<void> &source);
Func mirror_image(const InputBuffer<void> &source);

// Reflection excluding the edge: ... 2 1 | 0 1 2 ... n-1 | n-2 ...
Func mirror_interior(const Func &source, const Region &bounds);
Func mirror_interior(const Buffer<void> &source);
Func mirror_interior(const InputBuffer<void> &source);

// Periodic tiling of the source: f(min + (x - min) mod extent).
Func repeat_image(const Func &source, const Region &bounds);
Func repeat_image(const Buffer<void> &source);
Func repeat_image(const InputBuffer<void> &source);

} // namespace tessera::BoundaryConditions
