// GPU mapping (after PPCG's gpu.c and gpu_tree.c): turns a CPU-shaped schedule tree into one
// of GPU kernels, blocks, threads and barriers, by small tree edits:
//
//   parallel:2 ─ band (T0, T1) ─ tile_body ─ sequence ─ stage A (vector ─ band x)
//                                                    └ stage B (vector ─ band x)
// becomes
//   kernel:2 ─ band (T0, T1) ─ tile_body ─ sequence ─ stage A (thread ─ band x)
//                                                    └ stage B (barrier ─ thread ─ band x)
//
// - The outermost `parallel` mark of a subtree becomes a `kernel` mark: the band's leading
//   coincident loops (up to 3) are the kernel's blocks, collapsed into one grid dimension;
//   whatever lies below runs inside the kernel. Parallel marks inside a kernel are dropped.
// - A subtree with no parallel loop anywhere (a sequential group, a scan) becomes a kernel of
//   one block (`kernel:0`); loops above kernels (a time loop around a wavefront) run on the host
//   and launch their kernels in order, each launch a grid-wide barrier.
// - Inside a kernel, `vector` marks become `thread` marks: the loop's iterations are spread
//   over the block's threads (it carries no dependence: the vector mark was legal). Statements
//   under no thread loop run on one thread of the block.
// - `barrier` marks go exactly where threads of a block could otherwise race: before a child of
//   a sequence that touches an array an earlier child (since the last barrier) wrote, or writes
//   one it read; and at the start of each iteration of a loop inside the kernel that carries
//   such a conflict between its iterations (a reduction loop around a thread loop). Each is
//   justified by a pair of accesses to one element, at least one a write.
// - `register_tile` marks are dropped (a CPU register blocking; the loops stay).
#pragma once

#include <set>
#include <string>
#include <vector>

#include <isl/cpp.h>

#include "tessera/poly/model.h"

namespace tessera::poly {

// The schedule mapped onto GPU kernels as described above. `schedule` is over `m`'s
// statements or over the copies overlapped groups compute in their tiles ("G0_S_f_0").
isl::schedule map_to_gpu(const Model &m, const isl::schedule &schedule);

// Why a schedule with kernel marks is not a valid GPU mapping ("" when it is, or when it has
// no kernel marks): a statement outside every kernel, a kernel inside another, or a place
// where threads of a block would race for lack of a barrier (the rule above: conservative,
// by arrays for the stages of an overlapped group).
std::string gpu_mapping_violation(const Model &m, const isl::schedule &schedule);

// The kernel marks of a schedule tree: how many kernels a program launches (outside loops).
int count_kernels(const isl::schedule &schedule);

// One kernel of a GPU schedule, in launch order: its block loops (Mark::collapse), the
// statements (tuple names) it runs, and its barrier and thread marks.
struct KernelSummary {
    int block_loops = 0;
    std::vector<std::string> statements;
    int barriers = 0, thread_loops = 0;
};
std::vector<KernelSummary> kernels_of(const isl::schedule &schedule);

// The statements (tuple names) that run in kernels of one block (`kernel:0`): nothing around
// them is parallel.
std::set<std::string> single_block_statements(const isl::schedule &schedule);

} // namespace tessera::poly
