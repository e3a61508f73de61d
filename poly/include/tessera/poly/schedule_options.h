// The options that steer automatic scheduling.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::poly {

enum class Fusion {
    None,   // every Func is its own group
    Smart,  // fuse stencil stages while the recomputation and working set stay within limits
    Max,    // fuse every stencil stage into its consumer's group when overlapped tiling applies
};

struct ScheduleOptions {
    Fusion fusion = Fusion::Smart;
    // Tile sizes per dimension, dimension 0 (innermost, x) first; dimensions not listed get 1
    // for overlapped groups and 32 for affine bands. Empty: chosen by the tile-size model.
    std::vector<int> tile_sizes;
    bool parallel = true;
    // Elements per vector of the widest type in a stage (8 floats for AVX2, 16 for AVX-512).
    int vector_width = 16;
    // isl operation quota for dependence analysis and for each call of the isl scheduler;
    // beyond it Tessera falls back to a simpler legal schedule (docs/schedule-json.md).
    long max_operations = 2000000;
    // Smart fusion: the largest fraction of extra (recomputed) work merging may add to a group.
    double max_recompute = 0.4;
    // The working set one tile of a fused group should fit in (about a core's L2).
    int64_t cache_bytes = 512 * 1024;
    // Fused groups stop growing at this many stages.
    int max_group_stages = 48;
    // Store a Func stepped along a dimension (a time loop) as a ring of its last planes
    // (storage_folding.h).
    bool storage_folding = true;
    // Keep a block of an update's output in vector registers across its reduction loop
    // (register_tiling.h): matmul's point loops (i, k, j) become (j / 2W, k, i unrolled, j % 2W).
    bool register_tiling = true;
    // GPU targets: ask isl for outer parallelism.
    bool outer_coincidence = false;
    // Overlapped groups whose stages read a bounded window of rows share one row loop and
    // keep rings of rows (overlapped_tiling.h, sliding_window). GPU targets turn it off: the
    // stages of a tile then run one after another across the block's threads, with one
    // barrier between them instead of one per row.
    bool sliding_window = true;
    // Map the schedule onto GPU kernels, blocks and threads (gpu_mapping.h).
    bool gpu = false;
    // GPU targets: the threads of a block, which a thread loop spreads a tile's row over (a
    // tile narrower than this leaves threads idle on every row).
    int gpu_block_threads = 256;
    // GPU schedules: an overlapped group whose stages read each other only in their own column
    // (column_window, overlapped_tiling.h) runs each column's rows on one thread, a window of
    // rows in its registers, instead of stage after stage across the block with a barrier.
    bool gpu_column_windows = false;
    // The columns each thread of such a window runs (TargetInfo::window_columns): its tiles are
    // this many times the block's threads wide.
    int gpu_window_columns = 2;
    // GPU schedules: inputs read at several offsets along their first dimension are copied
    // into shared memory per tile (staged_inputs.h); false: read from global memory.
    bool gpu_stage_inputs = false;
    // Check the produced schedule against the dependences with isl (tests and imported
    // schedules always do; compilation can skip it, the scheduler being correct by construction).
    bool verify = false;
    // Threads the groups' ASTs may be generated on (AstQuota::threads), and the model's dead
    // instances found on (build_model). Not part of the schedule, which is the same on any
    // number of threads.
    int ast_threads = 1;
    // The legality check a folded (or verified) schedule gets is left to the caller
    // (Program::deferred_legality), which runs it while it does work of its own that does
    // not touch isl: the runtime generates the machine code meanwhile. Not part of the
    // schedule either.
    bool defer_legality = false;
};

const char *fusion_name(Fusion f);
// Parses "none", "smart" or "max"; throws a UserError naming the option otherwise.
Fusion parse_fusion(const std::string &s);

} // namespace tessera::poly
