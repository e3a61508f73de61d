// A folded Func's pure definition run on the ring's first planes only (storage_folding.h).
//
// Worked example: jacobi-2d over its time planes, folded to a ring of 2 planes,
//
//     J(x, y, s) = select(s % 2 == 0, A(x, y), B(x, y));      // S_J_0[s, y, x], every plane
//     J(r.x, r.y, r.z + 1) = 0.2 * (J(r.x, r.y, r.z) + ...);   // S_J_1: plane s + 1's interior
//
// In the ring, every plane s >= 2 of S_J_0 is redundant. Its interior is overwritten by S_J_1
// before anything reads it (Model::overwritten). Its border, which no update writes in any
// plane, still holds the value S_J_0 wrote there for plane s - 2, and that value is S_J_0's for
// plane s: select((s - 2) % 2 == 0, ...) equals select(s % 2 == 0, ...). So S_J_0 runs on planes
// 0 and 1 only, before the time loop, and the time loop runs S_J_1 alone: no copy of an input
// per point and step, no guard around the update. (heat-3d, 2 threads: 481 -> 361 ms.)
//
// An instance of the pure definition past the ring's first planes is left out when
//   - an update overwrites its element before anything reads it (Model::overwritten),
//   - nothing reads it, or
//   - no update writes its element's slot at or before its plane, and the pure value is
//     periodic along the folded dimension with a period dividing the ring's (its Var appears
//     only in `x % k`, x linear in it, k dividing the ring's planes times its coefficient): the
//     slot keeps that value from the first planes.
// A read of an element of the last kind finds the value an instance of the first planes wrote
// in its slot, so those must run before every read of the Func: the legality check verifies it
// wherever a schedule leaves instances out (check_legality).
#pragma once

#include <string>

#include "tessera/poly/model.h"
#include "tessera/poly/storage_folding.h"

namespace tessera::poly {

struct RingInitialization {
    isl::union_set first_planes;  // the pure definition's instances that must run
    isl::union_set left_out;      // those that need not (empty when why_not says why)
    std::string why_not;
};

// The instances of `fold`'s Func's pure definition that a schedule storing it folded may leave
// out. Under the isl operation quota `max_operations` (0: none); over it, none. An analysis that
// finished is kept in the model (Model::ring_initializations) and not made again.
RingInitialization ring_initialization(const Model &m, const StorageFold &fold, long max_operations = 0);

// The schedule of a group whose folded Funcs' pure definitions run on `first_planes` only:
// those instances first, in their own band (planes outermost and in parallel, the innermost
// dimension vectorized: they are independent, each writing its own element from inputs), then
// `rest`, the group's other statements as scheduled without them.
isl::schedule initialize_ring_first(const isl::union_set &first_planes, const isl::schedule &rest);

} // namespace tessera::poly
