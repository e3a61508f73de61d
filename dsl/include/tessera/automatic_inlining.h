// Which Funcs the automatic schedule computes inline although no compute_inline() asks for it.
#pragma once

#include <set>

#include "tessera/ir.h"

namespace tessera {

struct PipelineGraph;

// The Funcs read one-to-one by their only consumer: inlining one recomputes nothing (each of its
// points is read once, by one point of the consumer), and saves its store, its load and its
// storage (a scratchpad or ring per tile, and a stage in its group). In harris (apps/src/harris.cpp)
//
//   Sxy(x, y) = Ixy(x - 1, y - 1) + ... + Ixy(x + 1, y + 1)         (9 points)
//   det(x, y) = Sxx(x, y) * Syy(x, y) - Sxy(x, y) * Sxy(x, y)
//   trace(x, y) = Sxx(x, y) + Syy(x, y)
//   harris(x, y) = det(x + 2, y + 2) - 0.04f * trace(x + 2, y + 2) * trace(x + 2, y + 2)
//
// det and trace are read only by harris, each at one point per point of harris, and Sxy only by
// det, at det's point: the three are inlined, and harris's statement reads Sxx and Syy at one
// point and Ixy at 9. Sxx is not (det and trace both read it), nor Ixy (Sxy reads 9 of its
// points for each of its own: inlined, each would be computed 9 times).
//
// A Func f is inlined when all of these hold:
// - no Func of the pipeline has schedule directives (has_schedule_directives): a written
//   schedule says itself what is inlined;
// - f is pure (no updates), not an output, has dimensions and no bound() or align_bounds();
// - exactly one Func c reads f; c is pure, computed (not compute_inline: inlined into c's own
//   consumers, f would be computed once per read of c), and every call of f in c's value has the
//   same arguments, each one of c's pure Vars plus or minus a constant, each Var once, as many
//   as f has dimensions (a bijection between f's points and c's);
// - every Func or input f reads, it reads at f's pure Vars plus or minus constants, or at
//   coordinates without Vars. So its consumer's accesses stay shifts of its own points: an
//   upsampling Func read at x / 2, inlined, put floor divisions into every access of its
//   consumer, and isl's AST generator ran past its quota on local_laplacian;
// - inlining it keeps c's value within a few thousand nodes written out as a tree.
//
// The reference interpreter and the model inline the same Funcs (PipelineGraph::inlined), so that
// both require the same regions of everything else.
std::set<const FuncContents *> automatic_inlines(const PipelineGraph &g);

} // namespace tessera
