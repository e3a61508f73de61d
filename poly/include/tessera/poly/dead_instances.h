// Dead-instance elimination: the instances of a Func's definitions whose value is overwritten
// before anything reads it, which a schedule may leave out (Polly's DeadCodeElimination).
//
// Worked example: jacobi-1d written over its time planes,
//
//     J(i, s) = select(s % 2 == 0, A(i), B(i));          // S_J_0[s, i], every plane
//     J(r.x, r.y + 1) = (J(r.x - 1, r.y) + J(r.x, r.y) + J(r.x + 1, r.y)) / 3;   // S_J_1[r.y, r.x]
//
// S_J_1 overwrites the interior of every plane s >= 1 before any read of it, so S_J_0's
// instances there are dead: { S_J_0[s, i] : s >= 1 and 1 <= i <= N - 2 }. Without them the
// scheduled loop of a plane runs S_J_0 at its two ends and S_J_1, unguarded, between.
//
// An instance is dead when a later must-write of the element it writes comes (in the original,
// sequential order) before any read of it. Instances whose element is never written again stay,
// even unread (a stencil's corners): leaving them out would cut domains into pieces that no loop
// covers simply. Only Funcs that are not outputs (their final values are not observed) and have
// update definitions (the only way an element of a Func is written twice) are looked at; a
// statement with a data-dependent (may-) write or a run-time guard is never dead, and never
// counts as overwriting. Over the isl operation quota a Func has no dead instances. A Func whose
// every update reads the element it writes (a reduction: f(x) = f(x) + g(x, r)) is not
// analysed: each later write reads the value it replaces, so none is dead.
#pragma once

#include <functional>

#include "tessera/poly/model.h"

namespace tessera::poly {

// The dead instances of `m`'s statements, under `m.original` (struct DeadInstances: model.h).
DeadInstances dead_instances(const Model &m);

// The same analysis started on a thread of its own, in an isl context of its own (the accesses
// it reads copied there, copied_to): `m`'s context stays free for the caller meanwhile. The
// function returned waits for the result and gives it in `m`'s context (call it once, on a
// thread that may use that context). A model without candidate Funcs starts no thread.
std::function<DeadInstances()> start_dead_instances(const Model &m);

} // namespace tessera::poly
