// The program a pipeline's scheduling directives describe (dsl stage.h), on top of the
// automatic scheduler's or in its place.
//
// Each definition with directives runs at root in the original order (a Func's buffer holds its
// whole region), as one band over the loops its directives produce (stage_loops.h), then named
// tree edits: mark_member ("parallel", "parallel:2", "vector") and unroll_member; unrolled rows and a vector
// block below reduction loops get a "register_tile" mark (register_tiling.h). Example:
// f(x, y) = g(x, y) + 1 with f.split(x, xo, xi, 8).parallel(y) makes f's band
// [y, floor(x / 8), x mod 8] with a "parallel" mark above a band of y alone. Funcs computed at a
// consumer's loop (compute_at, store_at) run in the consumer's tiles instead: an overlapped group
// (overlapped_tiling.h) with the consumer's tile sizes and order, rows sliding through a ring
// when stored at the tile and computed at its row loop. The Funcs without directives are
// grouped, fused and tiled by the automatic scheduler (scheduler.h's schedule_group), never with
// a Func that has directives, each group at the place of its last Func; with `automatic` false
// they run at root too, in Halide's default loop order. Example: in in → blur_x → blur_y → out
// with out.parallel(y).vectorize(x, 8), blur_x and blur_y are one overlapped-tiled group as
// without directives, and out runs after it as written.
//
// The program is checked against the dependences (legality.h) under isl's operation quota. An
// illegal one is a UserError that names a directive whose addition makes it illegal (binary
// search over the directives in definition order, then as written) and the dependence it
// violates: "Func f: the directive f.update(0).reorder(r.y, r.x) is illegal. The schedule
// violates the flow (read-after-write) dependence from S_f_1 to S_f_1 (distance [1, -1]) ...".
#pragma once

#include <memory>

#include "tessera/poly/program.h"
#include "tessera/poly/schedule_options.h"

namespace tessera::poly {

// `options`: the automatic scheduler's; their max_operations is isl's quota for the dependence
// analysis and the check, and `gpu` says the pipeline is compiled for a GPU target, where
// gpu_blocks and gpu_threads apply (elsewhere they are a UserError). `automatic`: the Funcs
// without directives are scheduled by the automatic scheduler (Pipeline::auto_schedule, the
// default); false: they are computed at root in Halide's default loop order.
Program schedule_from_directives(std::shared_ptr<const Model> model, const ScheduleOptions &options, bool automatic = true);

} // namespace tessera::poly
