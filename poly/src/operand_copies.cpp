#include "tessera/poly/operand_copies.h"

#include <algorithm>

#include <tessera/error.h>
#include <tessera/ir.h>

namespace tessera::poly {

const Expr &OperandCopies::value_of(const FuncContents &f, int k) const {
    auto it = values.find({&f, k});
    if (it != values.end()) return it->second;
    return k == 0 ? f.pure.value : f.updates[size_t(k - 1)].value;
}

void OperandCopies::append(OperandCopies other) {
    for (Copy &c : other.copies) copies.push_back(std::move(c));
    for (auto &[definition, value] : other.values) {
        TESSERA_INTERNAL_ASSERT(!values.count(definition), "a definition rewritten by two operand copies");
        values.emplace(definition, std::move(value));
    }
}

std::shared_ptr<FuncContents> make_copy_func(const std::string &base, size_t dimensions, std::set<std::string> &taken,
                                             const std::function<Expr(const std::vector<Expr> &vars)> &value) {
    auto c = std::make_shared<FuncContents>();
    c->name = base;
    for (int n = 2; taken.count(c->name); ++n) c->name = base + "_" + std::to_string(n);
    taken.insert(c->name);
    std::vector<Expr> vars;
    for (size_t j = 0; j < dimensions; ++j) {
        c->pure_args.push_back("v" + std::to_string(j));
        vars.push_back(ir::make_var(c->pure_args.back()));
    }
    c->pure.args = vars;
    c->pure.value = value(vars);
    c->type = c->pure.value.type();
    c->defined = true;
    return c;
}

std::shared_ptr<FuncContents> make_operand_copy(const ExprNode &call, const std::string &base, const std::vector<size_t> &var_of_dimension,
                                                std::set<std::string> &taken) {
    return make_copy_func(base, var_of_dimension.size(), taken, [&](const std::vector<Expr> &vars) {
        std::vector<Expr> operand_args;
        for (size_t v : var_of_dimension) operand_args.push_back(vars[v]);
        return call.op == Op::FuncCall ? ir::make_func_call(call.func, operand_args) : ir::make_input_call(call.input, operand_args);
    });
}

namespace {

// The Funcs a copy's value reads (a copy of an operand reads it; a hoisted subexpression may
// read several).
std::vector<FuncContents *> funcs_read(const OperandCopies::Copy &copy) {
    std::vector<FuncContents *> funcs;
    ir::visit(copy.func->pure.value, [&](const Expr &n) {
        if (n->op == Op::FuncCall && std::find(funcs.begin(), funcs.end(), n->func_ptr) == funcs.end()) funcs.push_back(n->func_ptr);
        return true;
    });
    return funcs;
}

} // namespace

void add_operand_copies(PipelineGraph &g, const OperandCopies &t) {
    auto add = [](std::vector<FuncContents *> &list, FuncContents *f) {
        if (std::find(list.begin(), list.end(), f) == list.end()) list.push_back(f);
    };
    for (const OperandCopies::Copy &copy : t.copies) {
        size_t first = g.funcs.size();
        for (FuncContents *c : copy.consumers)
            for (size_t i = 0; i < g.funcs.size(); ++i)
                if (g.funcs[i].get() == c) first = std::min(first, i);
        g.funcs.insert(g.funcs.begin() + long(first), copy.func);
        FuncContents *cf = copy.func.get();
        g.consumers[cf] = copy.consumers;
        for (FuncContents *c : copy.consumers) add(g.callees[c], cf);
        for (FuncContents *operand : funcs_read(copy)) {
            add(g.callees[cf], operand);
            add(g.consumers[operand], cf);
        }
    }
    // A consumer that reads an operand only through its copies no longer calls it.
    for (const OperandCopies::Copy &copy : t.copies) {
        for (FuncContents *operand : funcs_read(copy)) {
            for (FuncContents *c : copy.consumers) {
                bool calls = ir::contains_call_to(t.value_of(*c, 0), operand);
                for (size_t k = 0; k < c->updates.size() && !calls; ++k) {
                    calls = ir::contains_call_to(t.value_of(*c, int(k) + 1), operand);
                    for (const Expr &e : definition_exprs(c->updates[k]))
                        if (!e.same_as(c->updates[k].value) && ir::contains_call_to(e, operand)) calls = true;
                }
                if (calls) continue;
                auto &callees = g.callees[c];
                callees.erase(std::remove(callees.begin(), callees.end(), operand), callees.end());
                auto &consumers = g.consumers[operand];
                consumers.erase(std::remove(consumers.begin(), consumers.end(), c), consumers.end());
            }
        }
    }
}

} // namespace tessera::poly
