// The marks Tessera puts in schedule trees, typed (after Polly's BandAttr marks): a mark node's
// isl id carries its Mark as the id's user payload, and its name is the mark's text, which the
// schedule JSON shows and parse_mark reads back (an imported tree's ids have no payload).
//
//   parallel                 the band below runs its outer loop on threads
//   parallel:2               ... its two outer loops, collapsed into one (both carry nothing)
//   vector                   the band below is the vector loop
//   tile_body                the body of an overlapped group's tile (scratchpads live here)
//   fold:F_J:2:2             store array F_J's dimension 2 (Halide order) as a ring of 2 rows
//   register_tile:8:32       the loops below keep a block of 8 rows x 32 elements of the
//                            written array in registers (register_tiling.h)
//   kernel                   GPU targets (gpu_mapping.h): the subtree below is one kernel whose
//                            blocks are the iterations of the band's outer loop
//   kernel:3, kernel:0       ... of its three outer loops (collapsed); of no loop (one block)
//   thread                   the band below's loop runs across the threads of a block
//                            (threadIdx.x; each thread strides by the block's size)
//   barrier                  the threads of a block synchronize before the subtree below runs
#pragma once

#include <optional>
#include <string>

#include <isl/cpp.h>

namespace tessera::poly {

struct Mark {
    enum class Kind { Parallel, Vector, TileBody, Fold, RegisterTile, Kernel, Thread, Barrier };
    Kind kind = Kind::Parallel;
    // Kind::Fold: the array (isl name), its dimension in Halide order, and the rows kept.
    std::string array;
    int dimension = -1;
    long rows = 0;
    // Set on the copy of the tree the AST is built from (build_loop_nest): the schedule depth
    // of the band below a parallel or vector mark, whose loop the AST names c<depth>.
    int loop_depth = -1;
    // Kind::Parallel: how many outer loops of the band below run on threads, collapsed into one
    // iteration space (OpenMP's collapse): a band whose outer loop has fewer iterations than
    // threads (a batch of 8 in tiles of 32) still runs on every thread.
    // Kind::Kernel: how many outer loops of the band below (0 to 3) are the kernel's blocks,
    // collapsed into one grid dimension (0: none; the kernel is one block).
    int collapse = 1;
    // Kind::RegisterTile: the rows (`rows`, the unrolled loop's iterations) and the elements
    // of each row's vector block.
    int block = 0;

    static Mark parallel(int collapse = 1) { return Mark{Kind::Parallel, {}, -1, 0, -1, collapse}; }
    static Mark vector() { return Mark{Kind::Vector, {}, -1, 0, -1, 1}; }
    static Mark tile_body() { return Mark{Kind::TileBody, {}, -1, 0, -1, 1}; }
    static Mark fold(const std::string &array, int dimension, long rows) { return Mark{Kind::Fold, array, dimension, rows, -1, 1}; }
    static Mark register_tile(long rows, int block) { return Mark{Kind::RegisterTile, {}, -1, rows, -1, 1, block}; }
    static Mark kernel(int block_loops) { return Mark{Kind::Kernel, {}, -1, 0, -1, block_loops}; }
    static Mark thread() { return Mark{Kind::Thread, {}, -1, 0, -1, 1}; }
    static Mark barrier() { return Mark{Kind::Barrier, {}, -1, 0, -1, 1}; }
    // Marks whose band's outer loop(s) the AST names (Mark::loop_depth): parallel, vector,
    // kernel with block loops (not kernel:0) and thread.
    bool marks_loop() const {
        return kind == Kind::Parallel || kind == Kind::Vector || (kind == Kind::Kernel && collapse > 0) || kind == Kind::Thread;
    }

    // The mark's text: "parallel", "parallel:<collapse>" (collapse > 1), "vector", "tile_body",
    // "fold:<array>:<dimension>:<rows>", "register_tile:<rows>:<block>", "kernel",
    // "kernel:<block loops>" (other than 1), "thread" or "barrier".
    std::string text() const;
};

// The mark a text denotes; nothing for a name that is none of Tessera's marks. A "fold:",
// "parallel:" or "register_tile:" text that is malformed is a UserError that quotes it.
std::optional<Mark> parse_mark(const std::string &text);

// Inserts a mark node above `node` whose id is named by the mark's text and carries it as its
// payload; returns the mark node.
isl::schedule_node insert_mark(const isl::schedule_node &node, const Mark &mark);

// The Mark of a mark node (nothing for another node): its id's payload, or its name parsed
// (trees read from JSON).
std::optional<Mark> mark_of(isl_schedule_node *mark_node);
// The Mark an id of a mark carries (isl's AST keeps the ids of the tree's marks).
std::optional<Mark> mark_of_id(isl_id *id);

} // namespace tessera::poly
