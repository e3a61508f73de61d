// Funcs recomputed by the consumers that read a few of their points, chosen per point, while
// their other consumers read them stored: the one case where the model computes a Func inline
// in some consumers only (automatic_inlining.h inlines a Func into all of them or none).
//
// Example: local_laplacian (apps/src/local_laplacian.cpp) remaps its grey image at 8 levels,
//
//     remapped(x, y, k) = gray(x, y) - k / 7 + k / 7 + remap(idx(x, y) - 256 * k)
//     gauss_1_down_x(x, y, k) = (remapped(2x - 1, y, k) + 3 * ... + remapped(2x + 2, y, k)) / 8
//     out_laplace_0(x, y) = (1 - lf) * laplace_0(x, y, li) + lf * laplace_0(x, y, li + 1)
//     laplace_0(x, y, k) = remapped(x, y, k) - gauss_up_0(x, y, k)       (inlined: kind 5)
//
// with li computed from the input at each pixel. Stored, remapped is 8 full-resolution planes
// (126 MB at 2560 x 1536) that two groups far apart read: the pyramid's first level and the
// output. With out_laplace_0 computing the 2 levels it reads,
//
//     out_laplace_0(x, y) = (1 - lf) * (gray(x, y) - li / 7 + ... + remap(idx(x, y) - 256 * li)
//                           - gauss_up_0(x, y, li)) + lf * (...  li + 1 ...)
//
// remapped has one consumer left, and grouping computes it tile by tile into a scratchpad of
// gauss_1's group (local_laplacian 50 -> 39 ms, 2 threads).
//
// A Func f qualifies when:
//   - no Func of the pipeline has schedule directives (a written schedule says itself what is
//     computed where), and the target is the CPU;
//   - f is pure, computed (not inlined), not an output, has dimensions and no bound(), and its
//     value, with inlined Funcs substituted, has at most kMaxRecomputedOperations operations;
//   - every call in f's value reads at f's pure Vars plus or minus constants, at coordinates
//     without Vars, or at coordinates computed from data (which the model bounds by their
//     range): no up- or downsampling read, whose floor divisions would enter the consumer's
//     accesses;
//   - some consumer c (seeing through inlined Funcs) reads f at computed coordinates
//     (ReadOncePattern::AtComputedCoordinates: each point of f once at most, a few points along
//     some coordinates chosen per point of c), and some other consumer does not: f stays
//     stored for it.
// Such consumers' values read f's value at their calls' coordinates instead.
#pragma once

#include <tessera/func_graph.h>

#include "tessera/poly/operand_copies.h"

namespace tessera::poly {

// A Func recomputed by some of its consumers (and stored for the others).
struct RecomputedFunc {
    const FuncContents *func = nullptr;
    std::vector<const FuncContents *> by;  // the consumers that recompute it, in graph order
};

// Rewrites, in `copies`, the value of each consumer that recomputes a qualifying Func (see
// above), and moves the graph's edges of `g` accordingly: the consumer reads what the Func
// reads, and no longer the Func (nor, where none of their consumers still reads it, the inlined
// Funcs between them). Returns the Funcs recomputed, in graph order.
std::vector<RecomputedFunc> recompute_computed_coordinate_reads(PipelineGraph &g, OperandCopies &copies);

} // namespace tessera::poly
