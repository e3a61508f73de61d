// Register tiling (unroll-and-jam) of a point band: a block of the output stays in vector
// registers across the reduction loop instead of being loaded and stored at every step.
//
// Example: matmul's point band (i, k, j) below its tile loops, j the vector loop, the output
// C(j, i) invariant along the reduction k, 8 rows i per tile:
//
//   for i in 0..7:                       for jr in 0..1023/32:
//     for k in 0..31:              =>      // register_tile:8:32
//       for j in 0..1023 (vector)          for k in 0..31:
//         C(j, i) += A(k, i) B(j, k)         for i in 0..7
//                                              // vector
//                                              for jv in 0..31:
//                                                C(32 jr + jv, i) += A(k, i) B(32 jr + jv, k)
//
// The code generator emits the loops below the register_tile mark twice: where the row loop
// and the vector loop run their full 8 and 32 iterations (every tile but the edges), the rows
// are unrolled and each row's block of C gets an alias scope of its own; otherwise as they
// are. In the k loop the 8 x 32 elements of C then have addresses that do not change with k
// and provably do not overlap one another or the operands, so LLVM keeps them in 16 AVX-512
// registers for the whole loop (its scalar promotion); each step loads 2 vectors of B and
// broadcasts 8 elements of A for 16 multiply-adds, where the loops before loaded and stored C
// for every multiply-add.
#pragma once

#include <optional>
#include <string>

#include "tessera/poly/isl_util.h"
#include "tessera/poly/model.h"

namespace tessera::poly {

struct RegisterTiling {
    std::optional<isl::schedule_node> band;  // the outermost band of the edited point loops
    int sunk_members = 0;  // members of the bands below the point band the rows and block went under
    std::string why_not;
};

// Rewrites the permutable point band at `point`, whose innermost member is the (coincident)
// vector loop, as above: member `unroll_member` (coincident, `rows` iterations per tile) moves
// just outside the vector loop; the vector member is split in blocks of `block` elements whose
// block loop goes outermost; the other members keep their order in between, below a
// register_tile mark. Strip-mining and reordering the members of a permutable band is legal.
// Where the point band's subtree is a chain of bands none of whose members is coincident down
// to the statement (conv's window loops kx and ky in bands of their own below the channel
// reduction), the rows and the block go below that chain, so that the block stays in registers
// across all the reduction loops (moving coincident loops inward is legal).
// Fails, with the reason, when the band has no such shape or the statements' accesses do not
// allow the rows their own alias scopes (register_tile_unsound), or when the bounds of the rows
// or of the block depend on another member (a triangular nest: no one full-tile test per block).
// That is decided on `bounds_band`: the point band itself, or the band before tiling (the same
// members in the same order), which is cheaper (no tile loops; matmul: 45 ms less).
RegisterTiling register_tile(const Model &m, const isl::schedule_node &point, int unroll_member, int rows, int block,
                             const isl::schedule_node &bounds_band);

// Why the register_tile mark at `mark` cannot be trusted, or "" when it can: below it, one
// statement whose reads of the array it writes are exactly its write (an update's C(j, i) in
// C(j, i) += ...), and whose written element determines the value of the row loop (the last
// member of the band above the "vector" mark), so that different rows never touch the same
// element. The legality checker asks this of imported schedules.
std::string register_tile_unsound(const Model &m, const isl::schedule_node &mark);

} // namespace tessera::poly
