// Func: a function over integer coordinates, defined by a pure definition and any number of
// update definitions, as in Halide.
//
//   Func blur_x("blur_x");
//   blur_x(x, y, c) = (in(x, y, c) + 4 * in(x + 1, y, c) + ...) / 16;   // pure definition
//   hist(clamp(img(r.x, r.y), 0, 255)) += 1;                           // update definition
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "tessera/buffer.h"
#include "tessera/expr.h"
#include "tessera/ir.h"
#include "tessera/stage.h"
#include "tessera/var.h"

namespace tessera {

class FuncRef;
class Pipeline;
namespace detail {
struct RealizeCache;
}

class Func {
public:
    // A Func with a fresh unique name.
    Func();
    explicit Func(const std::string &name);
    explicit Func(std::shared_ptr<FuncContents> contents);

    const std::string &name() const;
    bool defined() const;
    // Number of dimensions (of the pure definition). Throws if the Func is undefined.
    int dimensions() const;
    // Type of the values. Throws if the Func is undefined.
    Type type() const;
    // The Vars of the pure definition and its value.
    std::vector<Var> args() const;
    Expr value() const;
    int num_update_definitions() const;

    // A reference to the Func at the given coordinates: an Expr on the right of a definition,
    // a definition when assigned to.
    FuncRef operator()(std::vector<Expr> args) const;
    template <typename... Args>
    FuncRef operator()(Args &&...args) const;

    // Computes the Func over [0, sizes[i]) in each dimension, on the host. The first call
    // compiles; later calls through this handle (and its copies) reuse the code, as Halide's
    // Func::realize does, until a definition changes.
    Buffer<void> realize(const std::vector<int> &sizes) const;
    Buffer<void> realize(std::initializer_list<int> sizes) const { return realize(std::vector<int>(sizes)); }
    // Computes the Func over the region of `output` (its mins and extents), into it.
    void realize(const Buffer<void> &output) const;

    // Scheduling directives (stage.h) on the pure definition; update(k) schedules update k.
    Stage update(int k = 0) const;
    Func &split(const VarOrRVar &old, const VarOrRVar &outer, const VarOrRVar &inner, int factor);
    Func &fuse(const VarOrRVar &inner, const VarOrRVar &outer, const VarOrRVar &fused);
    Func &reorder(const std::vector<VarOrRVar> &innermost_first);
    template <typename... More>
    Func &reorder(const VarOrRVar &a, const VarOrRVar &b, const More &...more) {
        return reorder(std::vector<VarOrRVar>{a, b, VarOrRVar(more)...});
    }
    Func &tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xo, const VarOrRVar &yo, const VarOrRVar &xi,
               const VarOrRVar &yi, int fx, int fy);
    Func &vectorize(const VarOrRVar &v, int factor = 0);
    Func &unroll(const VarOrRVar &v, int factor = 0);
    Func &parallel(const VarOrRVar &v);
    Func &gpu_blocks(const VarOrRVar &v);
    Func &gpu_blocks(const VarOrRVar &outer, const VarOrRVar &inner);
    Func &gpu_threads(const VarOrRVar &v);
    Func &gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &bx, const VarOrRVar &by, const VarOrRVar &tx,
                   const VarOrRVar &ty, int fx, int fy);
    Func &gpu_tile(const VarOrRVar &x, const VarOrRVar &bx, const VarOrRVar &tx, int fx);
    // Computes the Func in a loop nest of its own into a buffer over its whole region, in Halide's
    // default loop order unless its loop directives say otherwise (stage.h): the automatic
    // scheduler then neither fuses it with another Func nor chooses its loops.
    Func &compute_root();
    // Computes the region of this Func that each iteration of `consumer`'s loop `loop` (of its
    // pure definition) needs inside that iteration, into a scratchpad of the iteration
    // (overlapped tiles: what two iterations both need is computed by both). The loops of
    // `consumer` down to `loop` must tile it: each of its dimensions a loop there, or the outer
    // loop of a split whose inner loop comes later (tile(...) then compute_at(f, xo)).
    Func &compute_at(const Func &consumer, const VarOrRVar &loop);
    // With compute_at at a row loop inside the tile: the scratchpad lives for the whole tile
    // iteration at `loop`, and rows slide (each computed once per tile, just before it is
    // read), as the automatic scheduler's line buffers do.
    Func &store_at(const Func &consumer, const VarOrRVar &loop);
    // Computes the Func where it is used: each call is replaced by the Func's value at the
    // call's coordinates (a pure Func only; not an output). Unlike the other directives, this
    // one applies under the automatic scheduler too, and leaves the pipeline scheduled by it.
    Func &compute_inline();
    // Computes the Func over exactly [min, min + extent) in pure dimension v, whatever its
    // consumers need (Halide's bound). min and extent are integer expressions of constants,
    // Params and input sizes. A constant bound gives v's loops a constant range, so that they
    // can be unrolled completely (f.bound(c, 0, 3).unroll(c)). Running the pipeline fails,
    // naming the Func, if it needs the Func outside the bound: read by a consumer, by one of
    // its own update definitions, or (for an output) in its output buffer, which must cover
    // exactly the bound. Like compute_inline, it applies under the automatic schedule too.
    Func &bound(const Var &v, const Expr &min, const Expr &extent);
    // Widens the range of pure dimension v that the Func is computed over so that it starts at
    // a coordinate congruent to `remainder` modulo `modulus` and its extent is a multiple of
    // `modulus` (Halide's align_bounds): vector loops without a remainder, or tiles that line
    // up. What consumers read is unchanged; an output's buffer must cover the widened range.
    // With bound(), the bound is widened.
    Func &align_bounds(const Var &v, int modulus, int remainder = 0);

    const std::shared_ptr<FuncContents> &contents() const { return c_; }

private:
    Stage pure_stage() const;
    // The single-output Pipeline realize() runs, created on first use. Shared by copies of the
    // handle; not by the FuncContents, which the Pipeline holds (that would be a cycle), nor by
    // the Pipeline's own handles onto its outputs.
    Pipeline realize_pipeline() const;
    std::shared_ptr<FuncContents> c_;
    std::shared_ptr<detail::RealizeCache> realize_cache_;
};

class FuncRef {
public:
    FuncRef(Func f, std::vector<Expr> args) : func_(std::move(f)), args_(std::move(args)) {}

    // The value of the Func at these coordinates.
    operator Expr() const;

    // Defines the Func: a pure definition if it has none yet, otherwise an update definition.
    FuncRef &operator=(const Expr &value);
    FuncRef &operator=(const FuncRef &value);
    // Update definitions f(args) = f(args) op value. If the Func has no definition yet, a pure
    // definition is added first: 0 for += and -=, 1 for *= and /=.
    FuncRef &operator+=(const Expr &value);
    FuncRef &operator-=(const Expr &value);
    FuncRef &operator*=(const Expr &value);
    FuncRef &operator/=(const Expr &value);

    const Func &function() const { return func_; }
    const std::vector<Expr> &args() const { return args_; }

private:
    void update_with(Op op, const Expr &value, const char *what);
    Func func_;
    std::vector<Expr> args_;
};

template <typename... Args>
FuncRef Func::operator()(Args &&...args) const {
    return (*this)(std::vector<Expr>{Expr(args)...});
}

} // namespace tessera
