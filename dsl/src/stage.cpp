// Scheduling directives: recorded on the definition after replaying them (stage_loops.h) so
// that one that does not apply fails where it is written.
#include "tessera/stage.h"

#include "tessera/error.h"
#include "tessera/func.h"
#include "tessera/ir.h"
#include "tessera/pipeline.h"
#include "tessera/stage_loops.h"

namespace tessera {

VarOrRVar::VarOrRVar(const RDom &r) {
    if (!r.defined() || r.dimensions() != 1)
        user_error("An RDom used as a loop of a scheduling directive must have one dimension; name its variable (r.x, r.y, ...).");
    name_ = r.x.name();
}

std::string Stage::name() const {
    return definition_ == 0 ? f_->name : f_->name + ".update(" + std::to_string(definition_ - 1) + ")";
}

Stage &Stage::add(int kind, std::vector<std::string> vars, int factor) {
    if (!f_->defined) user_error("Func ", f_->name, " has no definition to schedule yet. Define it first.");
    if (f_->compute_inline && definition_ == 0)
        user_error("Func ", f_->name, " is computed inline, so it has no loops to schedule.");
    Definition &d = definition_ == 0 ? f_->pure : f_->updates.at(size_t(definition_ - 1));
    LoopDirective directive;
    directive.kind = LoopDirective::Kind(kind);
    directive.vars = std::move(vars);
    directive.factor = factor;
    std::vector<LoopDirective> all = d.directives;
    all.push_back(directive);
    stage_loops(*f_, definition_, all);  // throws, naming the directive, if it does not apply
    d.directives = std::move(all);
    detail::bump_definitions_epoch();
    return *this;
}

Stage &Stage::split(const VarOrRVar &old, const VarOrRVar &outer, const VarOrRVar &inner, int factor) {
    return add(int(LoopDirective::Kind::Split), {old.name(), outer.name(), inner.name()}, factor);
}

Stage &Stage::fuse(const VarOrRVar &inner, const VarOrRVar &outer, const VarOrRVar &fused) {
    return add(int(LoopDirective::Kind::Fuse), {inner.name(), outer.name(), fused.name()}, 0);
}

Stage &Stage::reorder(const std::vector<VarOrRVar> &innermost_first) {
    std::vector<std::string> names;
    for (const VarOrRVar &v : innermost_first) names.push_back(v.name());
    return add(int(LoopDirective::Kind::Reorder), std::move(names), 0);
}

Stage &Stage::tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xo, const VarOrRVar &yo, const VarOrRVar &xi,
                   const VarOrRVar &yi, int fx, int fy) {
    split(x, xo, xi, fx);
    split(y, yo, yi, fy);
    return reorder({xi, yi, xo, yo});
}

Stage &Stage::vectorize(const VarOrRVar &v, int factor) {
    if (factor < 0) user_error("Func ", name(), ".vectorize(", v.name(), ", ", factor, "): the factor must be positive.");
    return add(int(LoopDirective::Kind::Vectorize), {v.name()}, factor);
}

Stage &Stage::unroll(const VarOrRVar &v, int factor) {
    if (factor < 0) user_error("Func ", name(), ".unroll(", v.name(), ", ", factor, "): the factor must be positive.");
    return add(int(LoopDirective::Kind::Unroll), {v.name()}, factor);
}

Stage &Stage::parallel(const VarOrRVar &v) { return add(int(LoopDirective::Kind::Parallel), {v.name()}, 0); }

Stage &Stage::gpu_blocks(const VarOrRVar &v) { return add(int(LoopDirective::Kind::GpuBlocks), {v.name()}, 0); }

Stage &Stage::gpu_blocks(const VarOrRVar &outer, const VarOrRVar &inner) {
    gpu_blocks(outer);
    return gpu_blocks(inner);
}

Stage &Stage::gpu_threads(const VarOrRVar &v) { return add(int(LoopDirective::Kind::GpuThreads), {v.name()}, 0); }

Stage &Stage::gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &bx, const VarOrRVar &by, const VarOrRVar &tx,
                       const VarOrRVar &ty, int fx, int fy) {
    tile(x, y, bx, by, tx, ty, fx, fy);
    Var threads(ty.name() + "_" + tx.name());
    fuse(tx, ty, threads);
    gpu_blocks(by, bx);
    return gpu_threads(threads);
}

Stage &Stage::gpu_tile(const VarOrRVar &x, const VarOrRVar &bx, const VarOrRVar &tx, int fx) {
    split(x, bx, tx, fx);
    gpu_blocks(bx);
    return gpu_threads(tx);
}

} // namespace tessera
