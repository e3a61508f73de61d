// Grouping of stages for fusion (after PolyMage's greedy grouping and the Jangda–Bondhugula
// fusion / tile-size model).
//
// Every Func starts as its own group. A group of pure stencil stages merges into its consumer
// group when that group is the only one reading it, holds only pure stages, and overlapped
// tiling still applies (each producer's footprint per tile has a fixed size). With Fusion::Smart
// the merge must also keep the recomputed work within `max_recompute` of the group's useful work
// and the tile's working set within `cache_bytes`; with Fusion::Max every applicable merge is
// made; with Fusion::None none. Tile sizes are then chosen per group: the innermost dimension
// wide for vectors and prefetching, the next one as large as the working set allows.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "tessera/poly/model.h"
#include "tessera/poly/overlapped_tiling.h"
#include "tessera/poly/schedule_options.h"

namespace tessera::poly {

struct GroupPlan {
    std::vector<FuncContents *> funcs;  // producers first; the last one is the group's root
    std::vector<int> statements;        // their model statements, in order
    bool overlapped = false;            // pure stages scheduled by overlapped tiling
    std::vector<int> tile_sizes;        // overlapped: per root dimension, tuple order
    std::optional<SlidingWindow> window;  // overlapped: the stages' sliding window, if any
    std::string note;
    // Why the group was not merged into the group that reads it (empty when nothing reads it,
    // or it was merged): a limitation that split the pipeline here, for the schedule's note.
    std::string not_merged;
};

// `alone`: Funcs that stay in a group of their own, merged with no other (those scheduled by
// directives, directive_schedule.h).
std::vector<GroupPlan> plan_groups(const Model &m, const ScheduleOptions &o, const std::set<const FuncContents *> &alone = {});

} // namespace tessera::poly
