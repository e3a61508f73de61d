// The program a pipeline's scheduling directives describe (dsl stage.h), in place of the
// automatic scheduler's.
//
// Start from the model's original schedule (one band per definition, in definition order, each
// over the definition's loops in Halide's default order), and replace each definition's band by
// the loops its directives produce (stage_loops.h), as named tree edits: replace_band_members,
// then mark_member ("parallel", "vector") and unroll_member. Every Func keeps a full buffer
// (computed at root). Example: f(x, y) = g(x, y) + 1 with f.split(x, xo, xi, 8).parallel(y)
// makes f's band [y, floor(x / 8), x mod 8] with a "parallel" mark above a band of y alone.
//
// The program is checked against the dependences (legality.h). An illegal one is a UserError
// that names the first directive (in definition order, then as written) whose addition makes it
// illegal, and the dependence it violates: "Func f: f.update(0).reorder(r.y, r.x) is illegal.
// The schedule violates the flow (read-after-write) dependence from S_f_1 to S_f_1 (distance
// ...)".
#pragma once

#include <memory>

#include "tessera/poly/program.h"

namespace tessera::poly {

// `max_operations`: isl's quota for the dependence analysis and the check. `gpu`: compiling for
// a GPU target, where gpu_blocks and gpu_threads apply (elsewhere they are a UserError).
Program schedule_from_directives(std::shared_ptr<const Model> model, long max_operations, bool gpu = false);

} // namespace tessera::poly
