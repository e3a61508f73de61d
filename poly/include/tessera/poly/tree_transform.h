// Small named edits of isl schedule trees (after Polly's ScheduleTreeTransform): each takes a
// node and returns the node at the corresponding position of the edited tree.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessera/poly/isl_util.h"
#include "tessera/poly/marks.h"

namespace tessera::poly {

// Splits the band at `node` after its first `pos` members; returns the outer band.
isl::schedule_node split_band(const isl::schedule_node &node, int pos);

// Tiles the band at `node` with one size per member; returns the tile band, whose child is
// the point band. isl scales tile loops to tile indices (tile_scale_tile_loops off).
isl::schedule_node tile_band(const isl::schedule_node &node, const std::vector<int> &sizes);

// Unrolls member `member` of the band at `node` (whose values, in each tile, are 0 .. extent - 1:
// a point loop) where the tile is full, and leaves it a loop elsewhere, after Polly's
// isolateFullPartialTiles. isl's plain unroll guards each copy of the body with its bounds
// in every iteration of the loops below (gesummv's 8 rows: 8 tests per element of the
// reduction); here the prefixes for which every value of the member is an instance get the
// isl `isolate` option with an unrolled member and no guards; the rest (the last partial tile)
// is one loop. Returns the band, or the band unchanged (with plain unrolling) where its
// instances do not form one set.
//
// Example: rows i0 mod 8 under tiles t0 = floor(i0 / 8) of the rows lo..hi: the tiles t0 with
// 8 t0 >= lo and 8 t0 + 7 <= hi run 8 unguarded copies; the others a loop over their rows.
isl::schedule_node unroll_full_tiles(const isl::schedule_node &node, int member, int extent);

// Unroll-and-jam of the last member of the band at `node` (the rows) into the one-member band
// below it (the loop along each row), `rows` rows at a time: the rows member is strip-mined by
// `rows`, and its point loop moves below the row loop, as a band of its own for the caller to
// unroll (unroll_full_tiles, once the loops above it are final: its isolate option names their
// values). Legal where the rows member and the row loop are permutable
// with each other (one permutable band split in two: the jam is a rectangular tile of rows by
// the whole row, its points in the order (row loop, rows)).
//
// Example: seidel-2d's skewed point loops (t, i) above the row loop j' = j + i + t, where each
// element depends on its left neighbour (A(j - 1, i), new) through six additions and a
// division. Row i + 1's element at j' depends on row i's at j', not on later ones:
//
//   for t:                        for t:
//     for i:                        for i2 = i / 2:
//       for j':               =>      for j':
//         S(t, i, j')                   for i mod 2:
//                                         S(t, i, j')
//
// Two rows' chains are then in flight at once instead of one. Returns the node at `node`'s
// position (the band's members but the last, or the strip-mined rows when it had one member).
isl::schedule_node jam_rows(const isl::schedule_node &node, int rows);

// Reorders the members of the permutable band at `node`: member k of the result is member
// order[k] of the band. Coincidence flags move with their members and the band stays
// permutable (all its dependences are non-negative on every member, so every order is legal).
// Returns the new band.
isl::schedule_node permute_band(const isl::schedule_node &node, const std::vector<int> &order);

// Inserts above `node` a permutable band whose members are `members` (one union_pw_aff each,
// over the parameters of `params`), with these coincidence flags; returns the band. Takes
// `params` and `members`.
isl::schedule_node insert_permutable_band(const isl::schedule_node &node, isl_space *params, isl_union_pw_aff_list *members,
                                          const std::vector<bool> &coincident);

// Marks every member of the band at `node` coincident (parallel) and the band permutable;
// the caller guarantees it (e.g. the tile loops of an overlapped group).
isl::schedule_node set_band_parallel(const isl::schedule_node &node);

// Inserts a "parallel" mark above the band at `node` if its first member is coincident, and
// a "vector" mark above its innermost member if that one is coincident (splitting the band so
// each mark stands directly above its loop). Returns the topmost node of the edited band.
isl::schedule_node mark_parallel_and_vector(const isl::schedule_node &node, bool parallel, bool vector);

// Wavefront of a permutable band whose first member carries dependences (the tile loops of a
// time-tiled stencil): members (T0, T1, ...) become (T0 + T1, T1, ...), split after the first.
// Tiles with the same T0 + T1 differ in neither T0 nor T1 along any dependence (all distances
// are non-negative in a permutable band), so the new second loop runs in parallel; a
// "parallel" mark is inserted above it. Returns the outer (wavefront) band, or failure with a
// reason when the band has fewer than two members or is not permutable.
struct Wavefront {
    std::optional<isl::schedule_node> band;
    std::string why_not;
};
Wavefront wavefront_band(const isl::schedule_node &node);

// The dependences of `deps` (statement instance pairs) that the first `members` members of the
// band at `node` carry together: dependent instances that agree on every loop around them but
// differ on one of them. Loops that carry none may run their iterations in parallel (collapsed
// into one iteration space when there are several), or one loop as vector lanes.
isl::union_map carried_dependences(const isl::schedule_node &node, const isl::union_map &deps, int members = 1);
// Whether carried_dependences would not be empty, found with less of isl's work where it is not
// (the pairs the loops order forward are looked at first).
bool carries_dependences(const isl::schedule_node &node, const isl::union_map &deps, int members = 1);

// Loop distribution of the innermost member of the band at `node` over `pieces`, sets of
// statement instances that partition the band's domain (a piece may hold several statements,
// or part of one). When that loop carries no dependence inside any one piece, and the pieces
// can be ordered so that every dependence between them inside the loops around it goes
// forward, the loop is split into one loop per piece, in that order: a sequence node above
// the innermost member, which becomes a band of its own (the other members stay above), each
// copy of it marked coincident. Example: Floyd-Warshall's step k, p(j, i) = min(p(j, i), p(k,
// i) + p(j, k)), in row i: one j loop carries the dependences through p(k, i) from the
// instances j < k to j == k, and from there to j > k; the pieces {j < k}, {j == k}, {j > k}
// in that order carry none and vectorize. Returns the node at `node`'s position (the outer
// band, or the sequence when the band had one member); the failure says why not.
struct Distribution {
    std::optional<isl::schedule_node> node;
    std::string why_not;
};
Distribution distribute_innermost_member(const isl::schedule_node &node, const isl::union_map &deps,
                                         const std::vector<isl::union_set> &pieces);

// Loop distribution of the whole band at `node` over `pieces`, sets of statement instances
// that partition its domain: when the pieces can be ordered so that every dependence between
// them inside the loops around the band goes forward, a sequence replaces the band, one child
// per piece in that order, each over a copy of the band restricted to it. Example:
// covariance's division cov(j, i) /= N - 1 runs after the reduction cov(j, i) += ... and isl
// fuses it into the reduction's band (i, j, k) at the constant k = N: its own band after the
// reduction's keeps the AST of the tiled band free of the cases where a tile holds the last k
// (covariance's AST: 408 ms -> 96 ms). Returns the sequence; the failure says why not.
Distribution distribute_band(const isl::schedule_node &node, const isl::union_map &deps, const std::vector<isl::union_set> &pieces);

// Puts members `member` .. `member + count - 1` of the band at `node` into a band of their own
// (splitting the band above and below them) and inserts `mark` directly above that band; returns
// the mark node. The mark applies to the band's loops: "parallel" runs its one loop on threads
// ("parallel:2" its two, collapsed), "vector" its loop as SIMD lanes.
isl::schedule_node mark_member(const isl::schedule_node &node, int member, const Mark &mark, int count = 1);

// Sets member `member` of the band at `node` to be unrolled completely by isl's AST generator
// (a copy of the body per value; the loop's range must be bounded by constants); returns the
// band.
isl::schedule_node unroll_member(const isl::schedule_node &node, int member);

// `schedule` with the loop below every "vector" mark generated separated by isl's AST generator:
// the loop's range split into pieces wherever its statements' bounds differ, each piece a loop of
// its own without guards, instead of one loop with a guard per statement. Example: a plane of a
// time loop whose pure definition runs only at the plane's two ends (its interior instances dead,
// dead_instances.h) becomes three loops, the update's in the middle unguarded.
isl::schedule separate_vector_loops(const isl::schedule &schedule);

// `first` then `second` (`second` alone when `first` is null): the schedules of two groups of
// statements, one after the other.
isl::schedule in_sequence(const isl::schedule &first, const isl::schedule &second);

// Whether a node is a band with at least one member.
bool is_band(const isl::schedule_node &node);

} // namespace tessera::poly
