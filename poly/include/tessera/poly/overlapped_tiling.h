// Overlapped tiling of a group of pure stencil stages (PolyMage style).
//
// The root (the group's last stage) is tiled with rectangular tiles. Each producer's footprint
// per tile is derived by composing the access relations of its consumers in the group, from the
// root's tile back: F_P(t) = ∪_C A_{C→P}(F_C(t)) ∩ Dom(P). Each stage X becomes the statement
// G<k>_X whose instances are [t, i] with i ∈ F_X(t): a producer instance needed by two tiles is
// computed by both (recomputation instead of synchronization), so every tile is independent and
// the tile loops are parallel. A producer computes the rectangular box of its footprint (its
// fixed box hull, clipped to its domain), which keeps each per-tile domain a single box.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/poly/model.h"

namespace tessera::poly {

// Sliding windows inside the tiles (line buffering). When every stage has the root's rank and
// reads its producers in the group at constant offsets along the row dimension (the root's
// second-innermost one) and at the same coordinates in the dimensions outside it, the stages
// are fused along rows with shifts: producer rows run ahead of their consumers by the largest
// offset the consumers read, so each row is computed just before it is needed. A scratchpad
// then keeps only the rows still to be read, a ring of `fold` rows (a power of two).
struct SlidingWindow {
    int row_dim = -1;          // tuple index of the fused row dimension
    std::vector<long> shift;   // per stage: how many rows ahead of the root it runs
    std::vector<long> fold;    // per stage: rows its scratchpad keeps (0: no folding)
    // column_window(): the tile's column loop runs outside the row loop (see below).
    bool columns_outside = false;
};
std::optional<SlidingWindow> sliding_window(const Model &m, const std::vector<int> &stages);

// A sliding window whose stages also read their producers in the group only in their own
// column (the innermost dimension, offset 0), as blur_y reads blur_x: then the tile's column
// loop can run outside the fused row loop, every column walking down its rows on its own,
//
//   for x (thread)                 a GPU thread owns its columns: the ring of rows of each
//     for y (rows)                 scratchpad is that column's alone (codegen keeps it in the
//       S_blur_x(y + 2, x)         thread's registers, with no shared memory and no barrier)
//       S_blur_y(y, x)
//
// (GPU schedules, ScheduleOptions::gpu_column_windows). nullopt when it does not apply.
std::optional<SlidingWindow> column_window(const Model &m, const std::vector<int> &stages);

struct OverlappedTiling {
    isl::schedule schedule;       // over the G<k>_ copies of the stages
    std::vector<int> tile_sizes;  // per root dimension, tuple order (outermost first)
};

// What one tile of a group computes of each stage, consumers first.
struct Footprints {
    std::vector<std::optional<isl::map>> boxes;  // per stage: [t] -> S[i] (optional: null isl objects cannot be copied)
    std::vector<std::vector<long>> sizes;        // per stage: box size, tuple order (empty for the root)
    // Per stage: the same box for every tile, not clipped to the tiles holding part of the root
    // or to the stage's domain. Producers' boxes are derived from these: the clipped ones carry
    // the domains' floor divisions (pyramid levels), which made isl take up to 0.4 s a stage.
    std::vector<std::optional<isl::map>> spread;
    // Per stage: the offset of its spread box (tile coordinates -> its first element); for the
    // root, whose box is the tile itself, tile_sizes · t.
    std::vector<std::optional<isl::multi_aff>> offsets;
    std::vector<long> tile_sizes;  // the root's box size: its tile

    // Per stage: the tile dimensions its box moves with (bit j: tile coordinate j, outermost
    // first). A stage whose box stays put along a tile dimension is computed again in every
    // tile along it: all of them for a lookup table (no bit), every channel's tile for a
    // demosaic under a colour image's tiles (no channel bit).
    std::vector<uint32_t> moves_with;
};

// What the footprints need of each read by itself, whatever the tiles and the consumer's box
// (the read over the parameters it involves, its coordinates read over a constant range, the
// rest as one affine function): kept by a caller that computes many footprints of one model.
// The grouping derives the same reads' boxes at every probe and candidate merge; these steps
// took a fifth of local_laplacian's footprints in a profile. Valid for one model only.
class ReadShapes {
public:
    ReadShapes();
    ~ReadShapes();
    ReadShapes(const ReadShapes &) = delete;
    ReadShapes &operator=(const ReadShapes &) = delete;
    struct Shapes;  // (overlapped_tiling.cpp)
    Shapes &shapes() { return *shapes_; }

private:
    std::unique_ptr<Shapes> shapes_;
};

// Computes the footprints of `stages` (producers first, root last) for the given tiles. Entries
// already present in `known` (aligned with `stages`, e.g. a consumer group's footprints before a
// merge) are reused; the others are derived from their consumers. Returns nullopt with `why_not`
// when a producer's footprint has no fixed size, or when isl needs more than an operation quota
// to find it (fixed box hulls of reads under parity predicates took isl seconds). `reads`: the
// shapes of the model's reads found by earlier calls, kept and extended here (none: found anew).
std::optional<Footprints> compute_footprints(const Model &m, const std::vector<int> &stages,
                                             const std::vector<int> &tile_sizes, std::string &why_not,
                                             const Footprints *known = nullptr, ReadShapes *reads = nullptr);

// Builds the overlapped tiling of group k; `stages` are model statements of pure definitions in
// producer-first order, the last being the root; `window` is their sliding_window() (rows fused
// inside the tile when set). Returns nullopt with `why_not` set when a producer's footprint per
// tile has no fixed size (a data-dependent or unbounded access). `tile_order`: the root
// dimensions (tuple indices) of the tile loops, outermost first; tile_loop_order(tile_sizes)
// when empty.
std::optional<OverlappedTiling> overlapped_tiling(const Model &m, int k, const std::vector<int> &stages,
                                                  const std::vector<int> &tile_sizes,
                                                  const std::optional<SlidingWindow> &window, bool parallel,
                                                  bool vector, std::string &why_not,
                                                  const std::vector<int> &tile_order = {});


// The order of the tile loops: the outermost dimension whose tile is larger than 1 first (so the
// parallel loop has many iterations), then the others in their order.
std::vector<int> tile_loop_order(const std::vector<int> &tile_sizes);

} // namespace tessera::poly
