// The Funcs, inputs and Params a pipeline depends on, in dependency order.
#pragma once

#include <map>
#include <memory>
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

    bool is_output(const FuncContents *f) const;
};

// Collects the graph of the given outputs; throws a UserError if an output is undefined.
PipelineGraph build_pipeline_graph(const std::vector<Func> &outputs);

// Every Expr of a definition: its arguments, its value, and for an update its RDom's bounds and
// predicates.
std::vector<Expr> definition_exprs(const Definition &d);

// All definitions of a Func: the pure one, then the updates in order.
std::vector<const Definition *> definitions_of(const FuncContents &f);

// Throws a UserError naming the first InputBuffer that is not bound or Param that is not set.
void check_bindings(const PipelineGraph &g);

} // namespace tessera
