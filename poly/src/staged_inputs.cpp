#include "tessera/poly/staged_inputs.h"

#include <algorithm>
#include <map>
#include <optional>

#include <tessera/error.h>
#include <tessera/ir.h>

#include "tessera/poly/schedule_json.h"

namespace tessera::poly {

namespace {

// Whether every argument of `call` is a Var plus or minus a constant or has no Var, and its
// first is f's first pure Var plus a constant: that constant, or nothing.
std::optional<int64_t> first_offset(const ExprNode &call, const FuncContents &f) {
    for (const Expr &a : call.args) {
        if (ir::as_shifted_var(a)) continue;
        if (!ir::free_vars(a).empty() || !ir::rdoms_in(a).empty()) return std::nullopt;
        bool reads = false;
        ir::visit(a, [&](const Expr &n) {
            reads = reads || n->op == Op::FuncCall || n->op == Op::InputCall;
            return !reads;
        });
        if (reads) return std::nullopt;
    }
    std::optional<ir::ShiftedVar> x = call.args.empty() ? std::nullopt : ir::as_shifted_var(call.args[0]);
    if (!x || x->name != f.pure_args[0]) return std::nullopt;
    return x->offset;
}

// The inputs a consumer's value reads at two or more offsets along their first dimension, every
// call of them qualifying (see the header).
std::set<const InputContents *> stencil_inputs(const Expr &value, const FuncContents &f) {
    std::map<const InputContents *, std::set<int64_t>> offsets;
    std::set<const InputContents *> disqualified;
    ir::visit(value, [&](const Expr &n) {
        if (n->op != Op::InputCall) return true;
        std::optional<int64_t> d = first_offset(*n, f);
        if (d) offsets[n->input.get()].insert(*d);
        else disqualified.insert(n->input.get());
        return true;
    });
    std::set<const InputContents *> out;
    for (const auto &[in, ds] : offsets)
        if (ds.size() >= 2 && !disqualified.count(in)) out.insert(in);
    return out;
}

} // namespace

OperandCopies staged_inputs(const PipelineGraph &g, const std::vector<std::string> *only) {
    OperandCopies out;
    if (!only)
        for (const auto &f : g.funcs)
            if (has_schedule_directives(*f)) return out;
    std::set<std::string> taken;
    for (const auto &f : g.funcs) taken.insert(f->name);
    for (const auto &in : g.inputs) taken.insert(in->name);
    std::map<const InputContents *, size_t> copy_of;
    std::set<std::string> staged;
    for (const auto &fp : g.funcs) {
        FuncContents &f = *fp;
        if (g.is_inlined(&f) || !f.updates.empty() || f.pure_args.empty() || !f.defined) continue;
        Expr value = inline_calls(f.pure.value, g.inlined);
        std::set<const InputContents *> inputs = stencil_inputs(value, f);
        for (auto it = inputs.begin(); it != inputs.end();)
            it = only && std::find(only->begin(), only->end(), (*it)->name) == only->end() ? inputs.erase(it) : std::next(it);
        if (inputs.empty()) continue;
        out.values[{&f, 0}] = ir::transform(value, [&](const Expr &n) -> Expr {
            if (n->op != Op::InputCall || !inputs.count(n->input.get())) return n;
            auto c = copy_of.find(n->input.get());
            if (c == copy_of.end()) {
                std::vector<size_t> identity;
                for (size_t j = 0; j < n->args.size(); ++j) identity.push_back(j);
                out.copies.push_back({make_operand_copy(*n, n->input->name + "_shared", identity, taken), {}});
                c = copy_of.emplace(n->input.get(), out.copies.size() - 1).first;
                staged.insert(n->input->name);
            }
            std::vector<FuncContents *> &consumers = out.copies[c->second].consumers;
            if (std::find(consumers.begin(), consumers.end(), &f) == consumers.end()) consumers.push_back(&f);
            return ir::make_func_call(out.copies[c->second].func, n->args);
        });
    }
    if (only)
        for (const std::string &name : *only)
            if (!staged.count(name))
                user_error("The schedule JSON stages input ", name, " in shared memory (pipeline.staged_inputs), but no Func of this "
                           "pipeline reads an input ", name, " at several offsets along its first dimension. Export the schedule of "
                           "this pipeline with Pipeline::schedule_json() and edit that.");
    return out;
}

OperandCopies model_staged_inputs(const PipelineGraph &g, const std::string &imported_schedule, bool gpu) {
    if (imported_schedule.empty()) return gpu ? staged_inputs(g) : OperandCopies{};
    std::vector<std::string> listed = staged_inputs_in_schedule_json(imported_schedule);
    return listed.empty() ? OperandCopies{} : staged_inputs(g, &listed);
}

std::vector<std::string> staged_input_names(const Model &m) {
    std::vector<std::string> names;
    for (const FuncContents *copy : m.staged_copies) names.push_back(copy->pure.value->input->name);
    return names;
}

std::string unstaged_copy(const Program &p) {
    const Model &m = *p.model;
    for (const FuncContents *copy : m.staged_copies) {
        int array = m.array_of(copy);
        int storage = array >= 0 ? p.storage_of_array[size_t(array)] : -1;
        if (storage >= 0 && p.storage[size_t(storage)].kind != Storage::Kind::Scratch)
            return detail::str_cat(copy->name, " is stored whole, not per tile: the Funcs that read it are in different groups");
    }
    return "";
}

} // namespace tessera::poly
