#include "tessera/func_graph.h"

#include <algorithm>
#include <set>

namespace tessera {

bool PipelineGraph::is_output(const FuncContents *f) const {
    return std::find(outputs.begin(), outputs.end(), f) != outputs.end();
}

std::vector<Expr> definition_exprs(const Definition &d) {
    std::vector<Expr> v = d.args;
    v.push_back(d.value);
    if (d.rdom) {
        for (const RVarDef &r : d.rdom->dims) {
            v.push_back(r.min);
            v.push_back(r.extent);
        }
        for (const Expr &p : d.rdom->predicates) v.push_back(p);
    }
    return v;
}

Expr inline_calls(const Expr &e, const std::set<const FuncContents *> &also) {
    return ir::transform(e, [&](const Expr &n) -> Expr {
        if (n->op != Op::FuncCall || !(n->func_ptr->compute_inline || also.count(n->func_ptr)) || !n->func_ptr->updates.empty())
            return n;
        // The coordinates are rewritten already; the value is rewritten once substituted (its
        // own inlined calls included: pure definitions are not recursive).
        const FuncContents &f = *n->func_ptr;
        std::map<std::string, Expr> at;
        for (size_t i = 0; i < f.pure_args.size(); ++i) at[f.pure_args[i]] = n->args[i];
        return inline_calls(ir::substitute_and_fold(f.pure.value, at), also);
    });
}

std::vector<const Definition *> definitions_of(const FuncContents &f) {
    std::vector<const Definition *> v{&f.pure};
    for (const Definition &u : f.updates) v.push_back(&u);
    return v;
}

bool has_schedule_directives(const FuncContents &f) {
    if (f.compute_root || f.compute_at.defined() || f.store_at.defined()) return true;
    for (const Definition *d : definitions_of(f))
        if (!d->directives.empty()) return true;
    return false;
}

namespace {

struct GraphBuilder {
    PipelineGraph &g;
    std::vector<const FuncContents *> visiting;  // the call path from an output to the Func visited
    std::set<const FuncContents *> done;
    std::set<const InputContents *> inputs_seen;
    std::set<const ParamContents *> params_seen;

    void add_leaves(const Expr &e, const FuncContents *self, std::vector<std::shared_ptr<FuncContents>> &callees) {
        ir::visit(e, [&](const Expr &n) {
            switch (n->op) {
            case Op::FuncCall:
                if (n->func_ptr != self) {
                    TESSERA_INTERNAL_ASSERT(n->func, "call to ", n->name, " without ownership");
                    if (std::find(callees.begin(), callees.end(), n->func) == callees.end()) callees.push_back(n->func);
                }
                break;
            case Op::InputCall:
            case Op::BufferDim:
                if (inputs_seen.insert(n->input.get()).second) g.inputs.push_back(n->input);
                break;
            case Op::Param:
                if (params_seen.insert(n->param.get()).second) g.params.push_back(n->param);
                break;
            default: break;
            }
            return true;
        });
    }

    void visit(const std::shared_ptr<FuncContents> &f) {
        if (done.count(f.get())) return;
        if (!f->defined)
            user_error("Func ", f->name, " is used by the pipeline but is undefined. Give it a definition.");
        auto on_path = std::find(visiting.begin(), visiting.end(), f.get());
        if (on_path != visiting.end()) {
            std::string cycle;
            for (auto it = on_path; it != visiting.end(); ++it) cycle += (*it)->name + " -> ";
            user_error("Funcs call each other in a cycle: ", cycle, f->name,
                       ". A Func may read itself only in its own update definitions; give one of these Funcs a "
                       "definition that does not depend on the others.");
        }
        visiting.push_back(f.get());
        std::vector<std::shared_ptr<FuncContents>> callees;
        for (const Definition *d : definitions_of(*f))
            for (const Expr &e : definition_exprs(*d)) add_leaves(e, f.get(), callees);
        for (const FuncContents::DimensionBound &b : f->bounds)
            if (b.min.defined()) {
                add_leaves(b.min, f.get(), callees);
                add_leaves(b.extent, f.get(), callees);
            }
        for (const auto &c : callees) {
            visit(c);
            g.callees[f.get()].push_back(c.get());
            g.consumers[c.get()].push_back(f.get());
        }
        visiting.pop_back();
        done.insert(f.get());
        g.funcs.push_back(f);
    }
};

} // namespace

PipelineGraph build_pipeline_graph(const std::vector<Func> &outputs) {
    PipelineGraph g;
    GraphBuilder b{g, {}, {}, {}, {}};
    for (const Func &f : outputs) {
        if (!f.defined()) user_error("The output Func ", f.name(), " is undefined. Give it a definition first.");
        b.visit(f.contents());
        if (!g.is_output(f.contents().get())) g.outputs.push_back(f.contents().get());
    }
    return g;
}

void check_compute_inline(const PipelineGraph &g) {
    for (const auto &f : g.funcs) {
        if (!f->compute_inline) continue;
        if (!f->updates.empty())
            user_error("Func ", f->name, ".compute_inline(): ", f->name,
                       " has update definitions, and only a pure Func is computed inline. Compute it at root.");
        if (g.is_output(f.get()))
            user_error("Func ", f->name, ".compute_inline(): ", f->name,
                       " is an output of the pipeline, which is stored in its buffer, not inlined.");
    }
}

void check_bindings(const PipelineGraph &g) {
    for (const auto &in : g.inputs)
        if (in->is_parameter && !in->bound)
            user_error("InputBuffer ", in->name, " is not bound to a buffer. Call ", in->name,
                       ".set(buffer) before realizing the pipeline.");
    for (const auto &p : g.params)
        if (!p->is_set)
            user_error("Param ", p->name, " has no value. Call ", p->name, ".set(value) before realizing the pipeline.");
}

} // namespace tessera
