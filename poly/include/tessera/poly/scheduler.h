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

#include <functional>
#include <memory>
#include <optional>

#include "tessera/poly/dependences.h"
#include "tessera/poly/grouping.h"
#include "tessera/poly/program.h"
#include "tessera/poly/schedule_options.h"

namespace tessera::poly {

Program schedule_model(std::shared_ptr<const Model> model, const ScheduleOptions &options);
Program schedule_pipeline(const Pipeline &p, const ScheduleOptions &options = {});

// One planned group (grouping.h) scheduled as the automatic scheduler does: overlapped tiles
// for a stencil group, else isl's scheduler (with storage folding where a Func steps along a
// dimension), pure definitions before updates. `index` names it ("G<index>"), and its copies in
// overlapped tiles. `dependences` is asked for the pipeline's dependences only when the group
// needs them, and returns nullptr when their analysis exceeded its quota: no schedule then.
// The directive scheduler uses it for the Funcs without directives (directive_schedule.h).
// `ring_first`: a folded Func's pure definition on the ring's first planes only, before the
// group's updates, where ring_initialization.h finds that legal (CPU targets).
struct GroupSchedule {
    isl::schedule schedule;
    Group group;
    bool folded = false;      // storage folded: the whole program's legality check must confirm it
    bool ring_first = false;  // and its pure definition runs on the first planes only
};
std::optional<GroupSchedule> schedule_group(const Model &m, const GroupPlan &plan, int index, const ScheduleOptions &o,
                                            const std::function<const Dependences *()> &dependences, bool ring_first = false);

} // namespace tessera::poly
