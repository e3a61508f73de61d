// The loops of one definition of a Func, after its scheduling directives (stage.h).
//
// A definition's loops start in Halide's default order: its pure Vars, the last dimension
// outermost, then its RDom's variables, the last outermost (r.x innermost). Each directive
// edits that list, and every loop keeps its value as an affine Expr of the definition's
// variables, so the polyhedral layer can build the schedule band from it:
//
//   f(x, y) = ...;  f.split(x, xo, xi, 8).reorder(xi, y, xo).parallel(xo)
//   loops, outermost first: xo = x / 8 (parallel), y = y, xi = x % 8
//
// split(v, outer, inner, k) puts outer = (v - m) / k and inner = (v - m) % k in v's place (m:
// v's constant min, else 0; / and % round towards negative infinity). fuse(inner, outer, f)
// puts f = outer * E + (inner - m) in outer's place, where inner runs over the constant range
// [m, m + E). reorder(a, b, c) (innermost first) puts the named loops, in that order, into the
// positions they held. vectorize / unroll with a factor split the loop by it first (the inner
// loop is named "<v>_vi" / "<v>_ui") and then mark the inner loop. gpu_blocks marks a loop
// parallel and gpu_threads marks one vector, both for a GPU target (gpu set).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/ir.h"

namespace tessera {

struct StageLoop {
    std::string name;
    Expr value;  // Int(32), over Vars named like the definition's pure Vars and RVars ("r.x")
    std::optional<int64_t> min, extent;  // when the loop's range is constant
    bool parallel = false, vector = false, unroll = false;
    // gpu_blocks / gpu_threads: on a GPU target, parallel loops become the kernel's blocks and
    // the vector loop its threads; these say so explicitly (and need a GPU target).
    bool gpu = false;
    bool from_rdom = false;  // the loop iterates (in part) over RDom variables
};

// The loops of definition `definition` (0: the pure one, k: update k - 1) of `f` after its
// directives, outermost first. A directive that does not apply (an unknown loop, a name in
// use, a non-positive factor, a fuse whose inner loop has no constant range) is a UserError
// naming the Func, the stage and the directive.
std::vector<StageLoop> stage_loops(const FuncContents &f, int definition);

// The loops of `definition` after `directives` instead of its own (the checks above).
std::vector<StageLoop> stage_loops(const FuncContents &f, int definition, const std::vector<LoopDirective> &directives);

// "f.update(0).split(x, xo, xi, 8)": a directive as written, for messages.
std::string directive_text(const FuncContents &f, int definition, const LoopDirective &d);

} // namespace tessera
