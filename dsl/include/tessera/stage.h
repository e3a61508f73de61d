// Halide-style scheduling directives on the definitions of a Func.
//
//   Func f; Var x, y, xo, yo, xi, yi;
//   f(x, y) = ...;
//   f.tile(x, y, xo, yo, xi, yi, 64, 32).vectorize(xi).parallel(yo);
//   f.update(0).reorder(x, r.x).unroll(x, 4);   // reorder lists loops innermost first
//
// A Func with a directive (a loop directive on any stage, compute_root, compute_at, store_at) is
// scheduled from its directives: computed at root (a loop nest and a buffer of its own), in
// definition order, each stage's loops in Halide's default order (the last dimension outermost,
// RDom variables innermost) edited by its directives, or inside the tiles of the Func it is
// computed at. The Funcs without directives are still grouped, fused and tiled by the automatic
// scheduler, never together with a Func that has directives; after
// Pipeline::auto_schedule(false) they are computed at root in Halide's default order. The result is checked against the dependences when the pipeline is
// compiled: a directive that would compute a wrong result (reordering or parallelizing a loop
// that carries a dependence) is a UserError naming the Func, the directive and the dependence.
// The loop values each directive produces: stage_loops.h. Splits align to multiples of the
// factor from the loop's constant min (0 when it has none) and compute nothing twice.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/var.h"

namespace tessera {

struct FuncContents;

// A loop of a stage: a pure Var or an RDom variable.
class VarOrRVar {
public:
    VarOrRVar(const Var &v) : name_(v.name()) {}
    VarOrRVar(const RVar &r) : name_(r.name()) {}
    VarOrRVar(const RDom &r);  // a one-dimensional RDom: its variable
    const std::string &name() const { return name_; }

private:
    std::string name_;
};

// One definition of a Func (the pure one, or an update), for scheduling directives.
class Stage {
public:
    Stage(std::shared_ptr<FuncContents> f, int definition) : f_(std::move(f)), definition_(definition) {}

    // Splits loop `old` into `outer` and `inner` (inner runs over [0, factor)); `outer` may
    // reuse old's name.
    Stage &split(const VarOrRVar &old, const VarOrRVar &outer, const VarOrRVar &inner, int factor);
    // Fuses `inner` (whose range must be constant, e.g. the inner loop of a split) and `outer`
    // into one loop `fused`, in outer's place.
    Stage &fuse(const VarOrRVar &inner, const VarOrRVar &outer, const VarOrRVar &fused);
    // Puts the named loops, innermost first, into the positions they hold.
    Stage &reorder(const std::vector<VarOrRVar> &innermost_first);
    template <typename... More>
    Stage &reorder(const VarOrRVar &a, const VarOrRVar &b, const More &...more) {
        return reorder(std::vector<VarOrRVar>{a, b, VarOrRVar(more)...});
    }
    // split(x, xo, xi, fx), split(y, yo, yi, fy), reorder(xi, yi, xo, yo).
    Stage &tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xo, const VarOrRVar &yo, const VarOrRVar &xi,
                const VarOrRVar &yi, int fx, int fy);
    // Runs loop v as SIMD lanes; with a factor, splits it first and vectorizes the inner loop
    // (named "<v>_vi"). The vectorized loop must be the stage's innermost.
    Stage &vectorize(const VarOrRVar &v, int factor = 0);
    // Unrolls loop v (its range must be constant where it is fully unrolled); with a factor,
    // splits it first and unrolls the inner loop (named "<v>_ui").
    Stage &unroll(const VarOrRVar &v, int factor = 0);
    // Runs the iterations of loop v on threads. A stage has one parallel loop, or two adjacent
    // ones, which run as one collapsed loop (OpenMP's collapse(2)).
    Stage &parallel(const VarOrRVar &v);

    // GPU targets (Target::cuda): loop v's iterations are the kernel's blocks (one loop, or two
    // adjacent ones, collapsed into the grid's x dimension), or its threads (the innermost loop,
    // threadIdx.x; each thread steps by the block's size when the loop is longer). Compiling
    // for the host with them is a UserError.
    Stage &gpu_blocks(const VarOrRVar &v);
    Stage &gpu_blocks(const VarOrRVar &outer, const VarOrRVar &inner);
    Stage &gpu_threads(const VarOrRVar &v);
    // split(x, bx, tx, fx).split(y, by, ty, fy).reorder(tx, ty, bx, by), then the two thread
    // loops fused into one, named "<ty>_<tx>" (ty * fx + tx: threadIdx.x runs along x, so
    // neighbouring threads touch neighbouring elements), and gpu_blocks(by, bx),
    // gpu_threads of the fused loop: blocks of fx * fy threads.
    Stage &gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &bx, const VarOrRVar &by, const VarOrRVar &tx,
                    const VarOrRVar &ty, int fx, int fy);
    // split(x, bx, tx, fx), gpu_blocks(bx), gpu_threads(tx).
    Stage &gpu_tile(const VarOrRVar &x, const VarOrRVar &bx, const VarOrRVar &tx, int fx);

    // "f" or "f.update(0)".
    std::string name() const;
    int definition() const { return definition_; }
    const std::shared_ptr<FuncContents> &func() const { return f_; }

private:
    Stage &add(int kind, std::vector<std::string> vars, int factor);
    std::shared_ptr<FuncContents> f_;
    int definition_;  // 0: the pure definition; k: update k - 1
};

} // namespace tessera
