// Row blocks of a substitution: the rows of a triangular solve, whose every row reads the
// results of all the rows before it, split into blocks whose bulk runs in parallel.
#pragma once

#include <optional>
#include <string>

#include "tessera/poly/isl_util.h"

namespace tessera::poly {

// Rewrites the permutable two-member band at `band` (rows, then the loop along each row, in
// the same units: row i's instance j reads what row j wrote), neither of whose members is
// coincident because row i reads what earlier rows wrote, as a loop over blocks of
// `block_rows` rows with two parts in each block:
//   - the bulk: the instances left of the block's first column (j < B b for the rows B b ..
//     B b + B - 1). They must depend on no other row of the block, so that the block's rows
//     are independent there (member 0 of its band coincident: parallel rows, or rows
//     interleaved in one thread);
//   - the rest, from that column to the diagonal, in the band's order.
// Each row still runs its own instances in order (reductions keep their order: bit-exact).
//
// Example: trisolv, x(i) = (b(i) - sum_{j < i} L(j, i) x(j)) / L(i, i) as an update over
// (i, j), j <= i. Row i's instance j reads x(j), final after row j's division; with blocks of
// B rows:
//
//   for i:                        for I = floor(i / B):
//     for j in 0..i:         =>     for i in block I:              // coincident: parallel
//       S(i, j)                       for j in 0 .. B I - 1:  S(i, j)
//                                   for i in block I:
//                                     for j in B I .. i:      S(i, j)
//
// The parallel part holds all but B / 2 of each row's instances on average, where the band
// before ran as wavefronts of tiles (at most N / tile width tiles each) or in order, one
// chain of dependent additions at a time.
// Fails, with the reason, when the band has another shape (not two members, not permutable),
// when no dependence links its instances, when no instance lies left of its block, or when one
// that does depends on another row of its block (a recurrence on the row before: nothing would
// run in parallel) or on the rest of its block.
struct SubstitutionBlocks {
    std::optional<isl::schedule_node> band;  // the block band, above a sequence (bulk, rest)
    std::string why_not;
};
SubstitutionBlocks substitution_row_blocks(const isl::schedule_node &band, const isl::union_map &deps, int block_rows);

} // namespace tessera::poly
