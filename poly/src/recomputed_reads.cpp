#include "tessera/poly/recomputed_reads.h"

#include <algorithm>
#include <set>

#include <tessera/automatic_inlining.h>
#include <tessera/ir.h>

namespace tessera::poly {

namespace {

// At most this many operations in a recomputed Func's value (local_laplacian's remapped: 17,
// one of them a lookup in the detail curve). The consumers that recompute it read a few of its
// points each; the loads from its stored planes they no longer make ran from memory.
constexpr uint64_t kMaxRecomputedOperations = 24;

// The computed Funcs that read `f`, seeing through Funcs computed inline, and the inlined Funcs
// passed through on the way.
void consumers_through_inlined(const PipelineGraph &g, const FuncContents *f, std::set<FuncContents *> &computed,
                               std::set<FuncContents *> &inlined_between) {
    auto it = g.consumers.find(f);
    if (it == g.consumers.end()) return;
    for (FuncContents *c : it->second) {
        if (c == f) continue;
        if (g.is_inlined(c)) {
            if (inlined_between.insert(c).second) consumers_through_inlined(g, c, computed, inlined_between);
        } else {
            computed.insert(c);
        }
    }
}

void add_edge(PipelineGraph &g, FuncContents *producer, FuncContents *consumer) {
    auto &callees = g.callees[consumer];
    if (std::find(callees.begin(), callees.end(), producer) == callees.end()) callees.push_back(producer);
    auto &consumers = g.consumers[producer];
    if (std::find(consumers.begin(), consumers.end(), consumer) == consumers.end()) consumers.push_back(consumer);
}

void remove_edge(PipelineGraph &g, FuncContents *producer, FuncContents *consumer) {
    auto &callees = g.callees[consumer];
    callees.erase(std::remove(callees.begin(), callees.end(), producer), callees.end());
    auto &consumers = g.consumers[producer];
    consumers.erase(std::remove(consumers.begin(), consumers.end(), consumer), consumers.end());
}

// The value of a consumer's pure definition as the model computes it: rewritten by operand
// copies where they did, with the Funcs computed inline substituted.
Expr model_value(const PipelineGraph &g, const OperandCopies &copies, const FuncContents &c) {
    return inline_calls(copies.value_of(c, 0), g.inlined);
}

} // namespace

std::vector<RecomputedFunc> recompute_computed_coordinate_reads(PipelineGraph &g, OperandCopies &copies) {
    std::vector<RecomputedFunc> recomputed;
    for (const auto &fp : g.funcs)
        if (has_schedule_directives(*fp)) return recomputed;
    for (const auto &fp : g.funcs) {
        FuncContents *f = fp.get();
        if (g.is_inlined(f) || g.is_output(f) || !f->defined || !f->updates.empty() || f->pure_args.empty() ||
            !f->bounds.empty())
            continue;
        Expr value = inline_calls(copies.value_of(*f, 0), g.inlined);
        if (ir::operation_count(value) > kMaxRecomputedOperations || !reads_at_shifted_points(*f, value, true)) continue;
        std::set<FuncContents *> consumers, inlined_between;
        consumers_through_inlined(g, f, consumers, inlined_between);
        std::vector<FuncContents *> recomputing;
        bool stays_stored = false;
        for (const auto &cp : g.funcs) {
            FuncContents *c = cp.get();
            if (!consumers.count(c)) continue;
            if (c->updates.empty() &&
                read_once_pattern(*f, model_value(g, copies, *c), *c) == ReadOncePattern::AtComputedCoordinates)
                recomputing.push_back(c);
            else
                stays_stored = true;
        }
        if (recomputing.empty() || !stays_stored) continue;
        // Each consumer computes f's value at its calls' coordinates, the Funcs computed inline
        // substituted first (f may be read through them: laplace_0 above).
        std::set<const FuncContents *> just_f{f};
        for (FuncContents *c : recomputing) {
            copies.values[{c, 0}] = inline_calls(model_value(g, copies, *c), just_f);
            remove_edge(g, f, c);
            for (FuncContents *callee : std::vector<FuncContents *>(g.callees[f])) add_edge(g, callee, c);
        }
        // An inlined Func between f and its consumers no longer reads f for them when none of its
        // consumers still reads f (through it or otherwise).
        for (FuncContents *between : inlined_between) {
            std::set<FuncContents *> readers, unused;
            consumers_through_inlined(g, between, readers, unused);
            bool still = std::any_of(readers.begin(), readers.end(), [&](FuncContents *r) {
                if (!r->updates.empty()) return true;
                return ir::contains_call_to(model_value(g, copies, *r), f);
            });
            if (!still) remove_edge(g, f, between);
        }
        recomputed.push_back({f, std::vector<const FuncContents *>(recomputing.begin(), recomputing.end())});
    }
    return recomputed;
}

} // namespace tessera::poly
