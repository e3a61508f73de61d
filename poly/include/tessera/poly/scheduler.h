// Automatic scheduling behind one interface.
//
//   pipeline → model → dependences → groups (grouping.h) → per group: overlapped tiling
//   (stencil groups) or isl's scheduler (affine nests) → sequence of groups in dependence order
//   → program (storage, loop nest) → legality check.
//
// Never hangs: dependence analysis and every call of isl's scheduler run under an operation
// quota (ScheduleOptions::max_operations). Over the quota in dependence analysis, the whole
// pipeline runs in its original sequential order; over it in the scheduler, that group keeps its
// original order. Either is legal by construction; the group's note records the fallback.
#pragma once

#include <memory>

#include "tessera/poly/dependences.h"
#include "tessera/poly/program.h"
#include "tessera/poly/schedule_options.h"

namespace tessera::poly {

Program schedule_model(std::shared_ptr<const Model> model, const ScheduleOptions &options);
Program schedule_pipeline(const Pipeline &p, const ScheduleOptions &options = {});

} // namespace tessera::poly
