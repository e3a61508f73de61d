// Dependences between statement instances of a model, under its original (sequential) order:
// read-after-write (flow), write-after-read (anti) and write-after-write (output), including
// the loop-carried dependences of update definitions.
#pragma once

#include "tessera/poly/model.h"

namespace tessera::poly {

struct Dependences {
    isl::union_map flow;    // RAW (memory-based): write instance → later read of the element
    isl::union_map anti;    // WAR: read instance → later write of the same element
    isl::union_map output;  // WAW: write instance → later write of the same element
    bool computed = false;  // false when the analysis ran out of its quota
    // Every dependence, simplified to the statement domains.
    isl::union_map all() const { return flow.unite(anti).unite(output); }
};

// Computes the (memory-based) dependences, array by array. Over `max_operations` isl
// operations it returns {computed = false}; callers then keep the original order (see schedule.h).
Dependences compute_dependences(const Model &m, long max_operations);

} // namespace tessera::poly
