// Input tiles staged in GPU shared memory with aligned loads, as PPCG copies the data a kernel
// reuses to shared memory: a layout-preserving copy of an input, added to the model as a Func,
// which overlapped tiling then computes per tile into shared memory like any other stage.
//
// Example: blur_x reads its input at five neighbouring columns,
//
//     blur_x(x, y, c) = (input(x, y, c) + 4 * input(x + 1, y, c) + ... + input(x + 4, y, c)) / 16
//
// Mapped onto threads along x, each of the five warp-wide loads is 128 contiguous bytes, but
// four of them start off a 32-byte sector boundary and move five sectors for four sectors'
// worth of data (84% of the sectors loaded used, in the emulator's traffic model). With
//
//     input_shared(v0, v1, v2) = input(v0, v1, v2)
//     blur_x(x, y, c) = (input_shared(x, y, c) + 4 * input_shared(x + 1, y, c) + ...) / 16
//
// the tile's input rows are loaded once, each warp-wide load starting where the tile starts
// (aligned when the tile's width is a multiple of 8 floats), into shared memory, from which the
// five shifted reads cost no global traffic. The values are the same, so results are
// bit-identical; it costs the copy's shared memory and one barrier per tile.
//
// An input qualifies when a pure Func that is computed (not inlined; its value taken with the
// Funcs inlined into it) reads it at two or more offsets along its first (contiguous)
// dimension, at the Func's own first Var plus constants, and every argument of every such call
// is a Var plus or minus a constant or has no Var; and no Func of the pipeline has schedule
// directives (a written schedule says itself what it stages). One copy serves every Func that
// reads the input so. Only GPU schedules stage: on a CPU the caches do the same.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <tessera/func_graph.h>

#include "tessera/poly/operand_copies.h"
#include "tessera/poly/program.h"

namespace tessera::poly {

// The staged copies for the inputs of `g` that qualify (above), named `<input>_shared` (with a
// number where that is taken), and the consumers' pure values reading them (with the Funcs in
// g.inlined inlined). With `only` given, exactly the inputs named there are staged (those of an
// imported schedule; a name that does not qualify is a UserError).
OperandCopies staged_inputs(const PipelineGraph &g, const std::vector<std::string> *only = nullptr);

// The copies a model of `g` stages: those an imported schedule lists
// (staged_inputs_in_schedule_json; none for a schedule without the list), else for a GPU
// schedule (`gpu`) those that qualify, else none.
OperandCopies model_staged_inputs(const PipelineGraph &g, const std::string &imported_schedule, bool gpu);

// The names of the inputs a model stages (Model::staged_copies), in its order.
std::vector<std::string> staged_input_names(const Model &m);

// Why the program's staged copies do not all live in a tile's scratchpad (shared memory): the
// first copy that a full buffer holds instead, because the Funcs reading it landed in different
// groups (two outputs reading one input); "" when all do, or there are none. Such a copy would
// move the input through global memory twice, so the automatic scheduler then schedules the
// pipeline again without staging (runtime::program_for, schedule_pipeline).
std::string unstaged_copy(const Program &p);

} // namespace tessera::poly
