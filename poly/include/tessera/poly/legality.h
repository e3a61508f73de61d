// Legality of a program's schedule against the model's dependences, checked with isl.
//
//  1. Every dependence (flow, anti, output) between two statement instances is respected by
//     every copy that executes them, except between copies inside one overlapped group, where
//     instances are recomputed per tile instead of ordered.
//  2. In each overlapped group, every read finds its value computed earlier in the same tile
//     (scratchpads are private to a tile) or in a full buffer: a flow analysis of the
//     transformed program in which no read of a Func is left without a source.
//  3. Every statement instance of the model is executed, and the ones that write full buffers
//     or outputs are executed exactly once.
//  4. No loop marked "parallel" or "vector" carries a dependence: two dependent instances that
//     share the loops around it share its iteration too.
#pragma once

#include <string>

#include "tessera/poly/dependences.h"
#include "tessera/poly/program.h"

namespace tessera::poly {

struct Legality {
    bool legal = true;
    std::string violation;  // names the dependence: the two statements and the distance
};

// `gpu_mapping`: also check a GPU schedule's kernels and barriers (gpu_mapping_violation); the
// automatic scheduler's mapping is correct by construction and skips it.
Legality check_legality(const Program &p, const Dependences &d, bool gpu_mapping = true);

} // namespace tessera::poly
