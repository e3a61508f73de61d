// Which Funcs the automatic schedule computes inline although no compute_inline() asks for it.
#pragma once

#include <set>

#include "tessera/ir.h"

namespace tessera {

struct PipelineGraph;

// Five kinds of Func are inlined, to a fixed point (each inline can make another Func's consumer
// unique). "The consumer" of f is the one Func that reads it once Funcs computed inline are seen
// through: with trace(x, y) = Sxx(x, y) + Syy(x, y) inlined into harris, harris reads Sxx.
//
// 1. Funcs read one-to-one by their consumer: inlining one recomputes nothing (each of its points
//    is read once, by one point of the consumer), and saves its store, its load and its storage
//    (a scratchpad or ring per tile, and a stage in its group).
// 2. Cheap Funcs (at most 4 operations) read at several points, shifted, by their consumer, where
//    recomputing them saves memory accesses: stored, a Func costs its own reads and a store, and
//    its consumer reads its points; inlined, its consumer reads what it reads at each of them.
//    The candidates of one consumer are weighed together, as they may read the same points.
// 3. Boundary conditions of inputs (BoundaryConditions::repeat_edge(in): one read of an input at
//    its own points, clamped or not), into every consumer however many and however they read it:
//    each consumer's point reads the input where it read the Func, and the Func's own pass over
//    its whole region (a copy of the input, margins included) goes. In interpolate the copy and
//    its rereading took about a quarter of the time. Not into consumers with updates (their
//    clamped reads at reduction coordinates made the model's accesses costly). So are Funcs that
//    compute nothing from what they read: an alias, one read of another Func with the Func's own
//    Vars in their places plus constants (camera_pipe's g_gr(x, y) = deinterleaved(x, y, 0)),
//    or rows at a fraction of the rate (y / 2), or a choice among such reads by a condition on
//    coordinates (its demosaiced(x, y, c) = select(c == 0, red(x, y), c == 1, green(x, y),
//    blue(x, y)), and red(x, y) = select(y % 2 == 0, red_even_rows(x, y / 2), red_odd_rows(x,
//    y / 2))), the choice only into consumers that read no more points so: whose coordinates
//    decide it (its colour correction reads channels 0, 1 and 2), or whose vector steps branch
//    on it (a condition without the consumer's innermost Var). Each is a copy pass saved
//    (camera_pipe: 4.0 -> 3.7 ms for demosaiced's three, 3.8-3.9 -> 3.6-3.9 for red's, green's
//    and blue's).
// 4. Cheap Funcs of inputs alone (at most 4 operations, no Func read), into all their pure
//    consumers, where each consumer then reads less: stored, the Func costs its reads and a store
//    per point, times the points of it one consumer point stands for (2 for a read at 2x + k);
//    inlined, the consumer reads the inputs at each point it read the Func. interpolate's
//    premultiplied(x, y, c) = in(x, y, c) * in(x, y, 3), read at 2x - 1, 2x, 2x + 1 by the first
//    downsample and at 2 points by the finest composite, is inlined into both.
// 5. Funcs whose only consumer reads each of their points once, at its own point in some
//    coordinates and, in the others, at one expression plus distinct constants
//    (read_once_pattern): bilateral_grid's out(x, y) = interpolated(x, y, 0) /
//    interpolated(x, y, 1), local_laplacian's out_laplace_0(x, y) = (1 - lf) * laplace_0(x, y,
//    li) + lf * laplace_0(x, y, li + 1) with li computed from the input. Inlining recomputes
//    nothing, and computes only the points read (2 of laplace_0's 8 levels per pixel); the
//    calls at one consumer point share their work (the slice's two channels look up the same
//    grid cells). Read at constants, such a Func may read at any coordinates; read at computed
//    coordinates, only as kinds 1 and 2 may (below). Not when every coordinate is a Var (a
//    one-to-one Func: kind 1 and its conditions) or when some Var of the consumer is missing
//    (several of its points would read the same point: a colour matrix read at constants).
//
// In harris (apps/src/harris.cpp)
//
//   Ixx(x, y) = Ix(x, y) * Ix(x, y)        (and Iyy, Ixy = Ix * Iy alike)
//   Sxx(x, y) = Ixx(x - 1, y - 1) + ... + Ixx(x + 1, y + 1)         (9 points; Syy, Sxy alike)
//   det(x, y) = Sxx(x, y) * Syy(x, y) - Sxy(x, y) * Sxy(x, y)
//   trace(x, y) = Sxx(x, y) + Syy(x, y)
//   harris(x, y) = det(x + 2, y + 2) - 0.04f * trace(x + 2, y + 2) * trace(x + 2, y + 2)
//
// det, trace, then Sxy, Sxx and Syy are read one-to-one by harris (1). Stored, Ixx, Iyy and Ixy
// cost harris 27 loads a point and themselves 3 stores and 4 loads; inlined, harris reads Ix and
// Iy at its 9 points: 18 loads (2). So harris is computed from Ix and Iy alone, as Halide's own
// schedule computes it. Ix and Iy are kept: harris reads each at 9 points, and each costs 11
// operations.
//
// A Func f of kinds 1 and 2 is inlined only when all of these hold (kind 5: the first two, and
// the size):
// - no Func of the pipeline has schedule directives (has_schedule_directives): a written
//   schedule says itself what is inlined;
// - f is pure (no updates), not an output, has dimensions and no bound() or align_bounds();
// - exactly one Func c reads f (through inlined Funcs), c is pure and computed, and every call of
//   f in c's value (inlined Funcs substituted) has as arguments distinct pure Vars of c plus or
//   minus constants, one per dimension of f;
// - every Func or input f reads, it reads at f's pure Vars plus or minus constants, or at
//   coordinates without Vars (an input also at such Vars clamped between bounds without Vars). So its consumer's accesses stay shifts of its own points: an
//   upsampling Func read at x / 2, inlined, put floor divisions into every access of its
//   consumer, and isl's AST generator ran past its quota on local_laplacian;
// - inlining it keeps c's value within a few thousand nodes written out as a tree.
//
// The reference interpreter and the model inline the same Funcs (PipelineGraph::inlined), so that
// both require the same regions of everything else.
std::set<const FuncContents *> automatic_inlines(const PipelineGraph &g);

// How consumer `c`'s value `value` (Funcs computed inline substituted) reads `f`, when every call
// reads each point of f at most once, at c's own point: each Var of c, plus or minus a constant,
// in one coordinate of every call (the same in all calls), and in the others one expression
// common to all calls plus constants distinct between calls.
// - OneToOne: no other coordinate (then a single call);
// - AtConstants: the others are constants alone (interpolated(x, y, 0), interpolated(x, y, 1));
// - AtComputedCoordinates: an expression that varies, possibly read from data (laplace_0(x, y,
//   li), laplace_0(x, y, li + 1)): a few points along those coordinates, chosen per point of c;
// - None: some call reads otherwise, or none reads f.
// Whether every call in `value` (f's value, possibly with inlined Funcs substituted) reads at
// f's pure Vars plus or minus constants, or at coordinates without Vars (an input also at such
// Vars clamped between bounds without Vars: a boundary condition), and with `data_coordinates`
// also at coordinates computed from data (a lookup's index). Substituted into a consumer, such
// a value brings no floor division of the consumer's Vars into the consumer's accesses.
bool reads_at_shifted_points(const FuncContents &f, const Expr &value, bool data_coordinates);

enum class ReadOncePattern { None, OneToOne, AtConstants, AtComputedCoordinates };
ReadOncePattern read_once_pattern(const FuncContents &f, const Expr &value, const FuncContents &c);

} // namespace tessera
