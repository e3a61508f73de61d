// The Funcs, inputs and Params a pipeline depends on, in dependency order.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <vector>

#include "tessera/func.h"
#include "tessera/ir.h"

namespace tessera {

struct PipelineGraph {
    // Every Func the outputs depend on, producers before consumers.
    std::vector<std::shared_ptr<FuncContents>> funcs;
    std::vector<FuncContents *> outputs;
    std::vector<std::shared_ptr<InputContents>> inputs;
    std::vector<std::shared_ptr<ParamContents>> params;
    // The Funcs each Func calls (itself excluded), and the Funcs that call it.
    std::map<const FuncContents *, std::vector<FuncContents *>> callees, consumers;
    // The Funcs computed inline without compute_inline(): those automatic_inlines chooses
    // (automatic_inlining.h). Empty as built; the interpreter and the model fill it, and both
    // inline them. The cache key and auto_scheduled() need not.
    std::set<const FuncContents *> inlined;

    bool is_output(const FuncContents *f) const;
    // Computed inline: by compute_inline() or as one of `inlined`.
    bool is_inlined(const FuncContents *f) const { return f->compute_inline || inlined.count(f) > 0; }
};

// Collects the graph of the given outputs; throws a UserError if an output is undefined.
PipelineGraph build_pipeline_graph(const std::vector<Func> &outputs);

// Every Expr of a definition: its arguments, its value, and for an update its RDom's bounds and
// predicates.
std::vector<Expr> definition_exprs(const Definition &d);

// Replaces every call of a pure Func computed inline (Func::compute_inline, or one of `also`:
// PipelineGraph::inlined) by its value at the call's coordinates, recursively. With g(x) = f(x) +
// 1 inlined, `g(x + 2) * 2` becomes `(f(x + 2) + 1) * 2`: no region of g is read, so none needs
// bounding. Each substituted node is folded (ir::substitute_and_fold): with g(x) = f(x - 2),
// `g(x + 3)` reads f(x + 1), not f((x + 3) + -2), whose intermediate x + 3 the interpreter's
// bounds would see wrap near the top of int32 where the sum does not. A Func with updates is
// never inlined (the model rejects compute_inline on one).
Expr inline_calls(const Expr &e, const std::set<const FuncContents *> &also = {});

// All definitions of a Func: the pure one, then the updates in order.
std::vector<const Definition *> definitions_of(const FuncContents &f);

// Whether a Func is scheduled by directives (stage.h): loop directives on any definition, or
// compute_root, compute_at or store_at. bound, align_bounds and compute_inline do not count.
bool has_schedule_directives(const FuncContents &f);

// Throws a UserError naming the first Func whose compute_inline() cannot be honoured: one with
// update definitions, or an output of the pipeline.
void check_compute_inline(const PipelineGraph &g);

// Throws a UserError naming the first InputBuffer that is not bound or Param that is not set.
void check_bindings(const PipelineGraph &g);

} // namespace tessera
