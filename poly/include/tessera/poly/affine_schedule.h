// Scheduling of general affine loop nests (update definitions, loop-carried dependences) with
// isl's scheduler.
#pragma once

#include <string>
#include <vector>

#include "tessera/poly/dependences.h"
#include "tessera/poly/schedule_options.h"

namespace tessera::poly {

struct AffineGroupSchedule {
    isl::schedule schedule;
    std::vector<std::vector<int>> tile_sizes;  // per tiled band, per member
    std::string note;
    bool scheduled = false;  // false: isl's scheduler gave up and the original order was kept
};

// Schedules the given model statements with isl's scheduler: validity, coincidence and
// proximity from the dependences among them (so legal, parallel where possible, and with
// producer-consumer locality). Then each permutable band of two or more members is tiled (twice
// when it has three or more, for the cache levels), the outermost band whose first member is
// coincident gets a "parallel" mark and each innermost coincident member a "vector" mark.
// If isl exceeds the operation quota, the statements keep their original order (sequential and
// legal by construction) and `note` says so.
// `extra_order` (statement instance pairs) joins the dependences as validity and coincidence
// constraints: the order folded storage needs (storage_folding.h).
AffineGroupSchedule affine_group_schedule(const Model &m, const std::vector<int> &statements, const Dependences &d,
                                          const ScheduleOptions &o, const isl::union_map *extra_order = nullptr);

} // namespace tessera::poly
