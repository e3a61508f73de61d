// The program a pipeline's scheduling directives describe (dsl stage.h), in place of the
// automatic scheduler's.
//
// Each definition runs at root in the original order (a Func's buffer holds its whole region),
// as one band over the loops its directives produce (stage_loops.h), then named tree edits:
// mark_member ("parallel", "parallel:2", "vector") and unroll_member; unrolled rows and a vector
// block below reduction loops get a "register_tile" mark (register_tiling.h). Example:
// f(x, y) = g(x, y) + 1 with f.split(x, xo, xi, 8).parallel(y) makes f's band
// [y, floor(x / 8), x mod 8] with a "parallel" mark above a band of y alone. Funcs computed at a
// consumer's loop (compute_at, store_at) run in the consumer's tiles instead: an overlapped group
// (overlapped_tiling.h) with the consumer's tile sizes and order, rows sliding through a ring
// when stored at the tile and computed at its row loop.
//
// The program is checked against the dependences (legality.h) under isl's operation quota. An
// illegal one is a UserError that names a directive whose addition makes it illegal (binary
// search over the directives in definition order, then as written) and the dependence it
// violates: "Func f: the directive f.update(0).reorder(r.y, r.x) is illegal. The schedule
// violates the flow (read-after-write) dependence from S_f_1 to S_f_1 (distance [1, -1]) ...".
#pragma once

#include <memory>

#include "tessera/poly/program.h"

namespace tessera::poly {

// `max_operations`: isl's quota for the dependence analysis and the check. `gpu`: compiling for
// a GPU target, where gpu_blocks and gpu_threads apply (elsewhere they are a UserError).
Program schedule_from_directives(std::shared_ptr<const Model> model, long max_operations, bool gpu = false);

} // namespace tessera::poly
