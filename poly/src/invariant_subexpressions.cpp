#include "tessera/poly/invariant_subexpressions.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <tessera/ir.h>

namespace tessera::poly {

namespace {

// A variable of an expression: a pure Var by name, or an RVar by RDom and dimension.
struct Variable {
    const RDomContents *rdom = nullptr;  // null: a pure Var
    int index = 0;
    std::string name;
    bool operator==(const Variable &o) const { return rdom == o.rdom && index == o.index && name == o.name; }
};

std::optional<Variable> variable_of(const Expr &e) {
    if (e->op == Op::Var) return Variable{nullptr, 0, e->name};
    if (e->op == Op::RVar) return Variable{e->rdom.get(), e->index, e->name};
    return std::nullopt;
}

bool arithmetic(Op op) {
    switch (op) {
    case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Min: case Op::Max: case Op::Math:
        return true;
    default:
        return false;
    }
}

class Hoister {
public:
    Hoister(const PipelineGraph &g, OperandCopies &copies) : g_(g), copies_(copies) {
        for (const auto &f : g.funcs) names_.insert(f->name);
        for (const auto &in : g.inputs) names_.insert(in->name);
        for (const OperandCopies::Copy &c : copies.copies) names_.insert(c.func->name);
    }

    void run() {
        for (const auto &f : g_.funcs)
            if (has_schedule_directives(*f)) return;
        for (const auto &fp : g_.funcs) {
            FuncContents &f = *fp;
            for (size_t k = 0; k < f.updates.size(); ++k) {
                const Definition &u = f.updates[k];
                if (!u.rdom || u.args.empty() || u.args[0]->op != Op::Var) continue;
                v_ = u.args[0]->name;
                // A reduction restricted by v (syrk's k.where(j <= i)) is triangular in the vector
                // loop: it gets no register tiles, v stays innermost, and LLVM hoists what does
                // not involve it (syrk LARGE: 26.5 ms either way, 30 ms more compile with a copy).
                bool triangular = false;
                for (const Expr &p : u.rdom->predicates) {
                    std::vector<std::string> vars = ir::free_vars(p);
                    triangular = triangular || std::find(vars.begin(), vars.end(), v_) != vars.end();
                }
                if (triangular) continue;
                f_ = &f;
                rdom_ = u.rdom.get();
                const Expr &before = copies_.value_of(f, int(k) + 1);
                Expr after = rewrite(before);
                if (!after.same_as(before)) copies_.values[{&f, int(k) + 1}] = after;
            }
        }
    }

private:
    // `e` with its qualifying subexpressions (outermost first) reading their copies.
    Expr rewrite(const Expr &e) {
        if (qualifies(e)) return call_to_copy(e);
        if (e->op == Op::FuncCall || e->op == Op::InputCall || e->args.empty()) return e;
        std::vector<Expr> args;
        bool changed = false;
        for (const Expr &a : e->args) {
            args.push_back(rewrite(a));
            changed = changed || !args.back().same_as(a);
        }
        return changed ? ir::rebuild(e, args) : e;
    }

    bool qualifies(const Expr &e) const {
        if (!arithmetic(e->op)) return false;
        bool reads = false, ok = true, reduction = false;
        ir::visit(e, [&](const Expr &n) {
            if (!ok) return false;
            if (n->op == Op::Var && n->name == v_) ok = false;
            if (n->op == Op::RVar && n->rdom.get() == rdom_) reduction = true;
            if (n->op == Op::FuncCall || n->op == Op::InputCall) {
                if (n->op == Op::FuncCall && (!n->func || n->func_ptr == f_)) ok = false;
                std::vector<Variable> seen;
                for (const Expr &a : n->args) {
                    std::optional<Variable> var = variable_of(a);
                    if (!var || a.type() != Int(32) || std::find(seen.begin(), seen.end(), *var) != seen.end()) ok = false;
                    else seen.push_back(*var);
                    if (var && var->rdom == nullptr && var->name == v_) ok = false;
                    if (var && var->rdom == rdom_) reduction = true;
                }
                reads = true;
                return false;  // the arguments are checked; nothing to hoist inside them
            }
            return true;
        });
        return ok && reads && reduction;
    }

    // copy(vars) = e over its variables in order of first appearance; the call reading it.
    Expr call_to_copy(const Expr &e) {
        std::vector<Expr> vars;
        std::vector<Variable> seen;
        ir::visit(e, [&](const Expr &n) {
            if (std::optional<Variable> var = variable_of(n))
                if (std::find(seen.begin(), seen.end(), *var) == seen.end()) {
                    seen.push_back(*var);
                    vars.push_back(n);
                }
            return true;
        });
        std::shared_ptr<FuncContents> c =
            make_copy_func(f_->name + "_invariant", vars.size(), names_, [&](const std::vector<Expr> &own) {
                return ir::transform(e, [&](const Expr &n) -> Expr {
                    if (std::optional<Variable> var = variable_of(n))
                        for (size_t j = 0; j < seen.size(); ++j)
                            if (seen[j] == *var) return own[j];
                    return n;
                });
            });
        copies_.copies.push_back({c, {f_}});
        return ir::make_func_call(c, vars);
    }

    const PipelineGraph &g_;
    OperandCopies &copies_;
    std::set<std::string> names_;
    FuncContents *f_ = nullptr;
    std::string v_;
    const RDomContents *rdom_ = nullptr;
};

} // namespace

void add_invariant_subexpressions(const PipelineGraph &g, OperandCopies &copies) { Hoister(g, copies).run(); }

} // namespace tessera::poly
