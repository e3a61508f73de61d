// The order of the members of a permutable band, chosen for locality and vectorization, as
// Pluto and Polly choose it: the innermost member is the coincident one along which the
// accesses are contiguous (stride 1 in the array's innermost dimension) or invariant, and
// not strided.
//
// Example: C(j, i) += A(k, i) * B(j, k) (statement dims i, j, k; isl's scheduler keeps the band
// (i, j, k) with k, the reduction, innermost). Along j, C and B are stride 1 and A invariant;
// along k, A is stride 1, C invariant and B strided by a row; along i, C and A are strided.
// j is coincident and scores best, so the order becomes (i, k, j): the reduction loop moves
// out and j, a pure dimension of the update, becomes the vector loop.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tessera/poly/model.h"

namespace tessera::poly {

struct LoopOrder {
    std::vector<int> members;  // the band's member indices, outermost first; empty: keep the order
    std::string reason;        // why the order stays (when `members` is empty) or what moved
    // Tile sizes per member of the band in its new order (empty when the band was not analyzed),
    // from the strides: the innermost (vector) member gets rows of 4 KiB, so that each tile
    // streams long contiguous runs and the loop overhead is amortized; a reduction member (not
    // coincident, the written array invariant along it) 32; a batch member of a band with a
    // reduction (every access moves along it by more than one element: bmm's b) 1; the others
    // 8, which keeps the tile's working set within L2 (matmul 1024^3 float: 8 x 32 x 1024, 161
    // KiB).
    std::vector<int> tile_sizes;
    // Per member of the band in its new order: whether every statement's written element stays
    // the same along it (a reduction loop, such as matmul's k).
    std::vector<bool> write_invariant;
    // Per member of the band in its new order: whether every statement writes consecutive
    // elements along it (stride one), so that a vector loop over it stores whole vectors.
    std::vector<bool> write_contiguous;
    int element_bytes = 1;  // the widest element the band's statements write
    // No member of the band is parallel, and the innermost member is now a dependent chain
    // whose accesses are contiguous or invariant (a reduction). Only the point loops take the
    // order (the tile loops keep isl's, which the wavefronts of tiles are built on), and the
    // chain's tiles are short (kChainTile): the core overlaps the chains of consecutive
    // elements only where each is a few steps long.
    bool chain_innermost = false;
    // Per member of the band in its new order, for a band of one statement: per read of an array
    // other than the written one (the operands, in the statement's order), whether the element
    // it reads stays the same along the member. A register tile unrolls the member that leaves
    // the fewest loads per reduction step (conv: the output channel, along which the input is
    // invariant, rather than the row). Empty for a band of several statements.
    std::vector<std::vector<bool>> operand_invariant;
};

// The tile size of a dependent chain moved innermost (LoopOrder::chain_innermost). Measured on
// PolyBench cholesky N=2000, 2 threads: tiles of 8 steps 0.72-0.87 s, 32 steps 0.89 s, 128
// steps 1.1 s (isl's order, the columns innermost: 1.6 s).
constexpr int kChainTile = 8;

// A band member that is constant for a statement (covariance's division after the reduction
// sits at one value of the reduction member): the statement's accesses do not move along it.
constexpr int kConstantMember = -3;

// Per statement of the band at `band` (by name), the statement dimension each of its `members`
// members is (its coefficient 1, the only one), kConstantMember, or -1 (any other function,
// as in a skewed band, or several pieces).
std::map<std::string, std::vector<int>> member_dims(const isl::schedule_node &band, int members);

// Chooses an order for the permutable band at `band` (statements of `m`). Fails (an empty
// `members` and no tile sizes, with the reason) when a member is neither a single statement
// dimension nor a constant for some statement (a skewed band, as in time tiling) or the band
// has fewer than two members. (A member constant for a statement, such as covariance's division
// placed after its reduction loop, leaves that statement's accesses in place.) When no coincident member is better innermost than the current one, `members`
// is empty but the tile sizes are given.
LoopOrder stride_one_innermost_order(const Model &m, const isl::schedule_node &band);

} // namespace tessera::poly
