// Storage folding of Funcs stepped along a dimension (time loops), after Halide's StorageFolding
// and PolyMage's scratchpads: a Func whose updates read only the last few planes along one
// dimension keeps only those planes, in a ring indexed modulo their number.
//
// Example: jacobi over time, written the natural way,
//
//     J(x, y, t) = in(x, y);                                  // S_J_0: every plane starts as in
//     J(r.x, r.y, r.z) = 0.2f * (J(r.x, r.y, r.z - 1) + ...); // S_J_1 reads plane t - 1 only
//     out(x, y) = J(x, y, T);
//
// The update writes plane t and reads plane t - 1 (distance 1 along t), so two planes suffice:
// J is stored as J[x][y][t mod 2]. That is legal only if plane t is initialized (S_J_0) after the
// last read of plane t - 2, which the sequential order (all of S_J_0 first) breaks: the group is
// scheduled with the extra order the ring needs (fold_dependences), so isl's scheduler fuses
// S_J_0 into the time loop. The "fold:F_J:2:2" mark above the group's band tells
// program_from_tree to store J folded, and check_legality verifies every read of the ring by a
// flow analysis over its slots; if that fails the pipeline is rescheduled without folding.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/poly/marks.h"
#include "tessera/poly/model.h"

namespace tessera::poly {

struct StorageFold {
    int array = -1;
    int dimension = -1;  // Halide order (0: innermost)
    int64_t planes = 0;  // planes the ring keeps
};

// The folds worth making for the Funcs defined among `statements` (all of a Func's definitions
// there, at least one update): a dimension along which every update of the Func reads elements
// 0 to D planes behind the one it writes (D constant, at least one update reading behind), and
// from which every other statement can read (fold_reader_violation). The ring keeps D + 1
// planes. At most one fold per Func (its outermost such dimension); none when the Func's extent
// along it is a constant no larger than the ring.
std::vector<StorageFold> storage_fold_candidates(const Model &m, const std::vector<int> &statements);

// The order a folded array needs among its Func's own definitions, beyond the dependences of
// its values: every access (read or write) of an element precedes every write of an element
// that lies at least `planes` planes later along the folded dimension, other coordinates equal.
// Statement instance → statement instance. (A superset of the exact slot conflicts, elements a
// multiple of `planes` apart: it is what a stepping schedule gives anyway, and it keeps the
// relations free of divisions.) Other statements that read the Func are checked by
// fold_reader_violation and must run after all of its definitions. Computed once per list of
// folds (Model::fold_dependences).
isl::union_map fold_dependences(const Model &m, const std::vector<StorageFold> &folds);

// { A[e] -> A[e'] : e'_q = e_q + planes (at_least: >=), e'_p = e_p otherwise } on the elements
// of `fold`'s array, q its folded dimension.
isl::map planes_apart(const Model &m, const StorageFold &fold, int64_t planes, bool at_least);

// Why the statements other than the Func's definitions cannot read it from the ring, or "":
// each reader instance must read fewer planes than the ring keeps, and planes no update of the
// Func passes by a full ring (then, once the Func is computed, the ring holds every plane they
// read: its region ends at the last plane consumers read or updates access).
std::string fold_reader_violation(const Model &m, const StorageFold &fold);

// The parameter values for which every access of the array lies in its region. That always
// holds at run time (a Region parameter bounds the box hull of the accesses), but isl cannot see
// it through the opaque parameter: ASTs over the region (a folded Func's pure definition fused
// with its updates) split into cases for regions that miss the updates' iterations, which made
// a folded jacobi's AST a hundred loops and seconds of isl. The AST of a folded group assumes
// it. (Not part of the model's context: computing it for every array cost seconds on deep
// pipelines, and its disjunctions slow every AST.) The universe when isl runs out of a quota.
// Computed once per array (Model::region_covers), unless build_model's helper thread found it
// with the dead instances (DeadInstances::covers).
isl::set region_covers_accesses(const Model &m, int array);

// What region_covers_accesses computes, in any isl context: the parameter values for which
// `region` (a box, or any set of an array's elements) holds every set of `touched` (the
// elements of one access each, as touched_elements gives them).
isl::set covering_parameters(const isl::set &region, const std::vector<isl::set> &touched);

// The elements of array `array` each of its updates writes and each statement reads, one set
// per access, over the statements' domains.
std::vector<isl::set> touched_elements(const Model &m, int array);

// Where each element of `arr` lives when it is folded by `fold` (its planes kept along each
// dimension, Halide order; 0: not folded): element [t, j] (t: `n_tile` tile coordinates in front)
// lives in slot [t, j'] with j'_d = j_d mod fold_d.
isl::union_map ring_slots(const Model &m, const Array &arr, const std::vector<int64_t> &fold, unsigned n_tile = 0);

// The schedule-tree mark that requests a fold ("fold:<array>:<dimension>:<planes>").
Mark fold_mark(const Model &m, const StorageFold &fold);

} // namespace tessera::poly
