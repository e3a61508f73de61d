#include "tessera/poly/transposed_operands.h"

#include <algorithm>
#include <set>
#include <string>

#include <tessera/ir.h>

namespace tessera::poly {

namespace {

bool involves(const Expr &e, const std::string &var) {
    std::vector<std::string> vars = ir::free_vars(e);
    return std::find(vars.begin(), vars.end(), var) != vars.end();
}

bool reads_memory(const Expr &e) {
    bool reads = false;
    ir::visit(e, [&](const Expr &n) {
        if (n->op == Op::FuncCall || n->op == Op::InputCall) reads = true;
        return !reads;
    });
    return reads;
}

// The dimension d >= 1 of `call` to move first, or -1 when the call does not qualify (see the
// header) in an update of `f` storing along `v` with pure Vars `pure`.
int dimension_to_move_first(const ExprNode &call, const FuncContents &f, const std::string &v,
                            const std::vector<std::string> &pure) {
    if (call.op == Op::FuncCall && (call.func_ptr == &f || !call.func)) return -1;
    if (call.op != Op::FuncCall && call.op != Op::InputCall) return -1;
    const std::vector<Expr> &args = call.args;
    if (args.size() < 2) return -1;
    for (const Expr &a : args)
        if (reads_memory(a)) return -1;
    if (involves(args[0], v) || ir::rdoms_in(args[0]).empty()) return -1;
    int moved = -1;
    for (size_t d = 1; d < args.size(); ++d) {
        if (!involves(args[d], v)) continue;
        if (moved >= 0 || args[d]->op != Op::Var || args[d]->name != v) return -1;
        moved = int(d);
    }
    if (moved < 0) return -1;
    bool reused = std::any_of(pure.begin(), pure.end(), [&](const std::string &p) {
        return p != v && std::none_of(args.begin(), args.end(), [&](const Expr &a) { return involves(a, p); });
    });
    return reused ? moved : -1;
}

class Transposer {
public:
    explicit Transposer(const PipelineGraph &g) : g_(g) {
        for (const auto &f : g.funcs) names_.insert(f->name);
        for (const auto &in : g.inputs) names_.insert(in->name);
    }

    OperandCopies run() {
        for (const auto &fp : g_.funcs) {
            FuncContents &f = *fp;
            for (size_t k = 0; k < f.updates.size(); ++k) {
                const Definition &u = f.updates[k];
                if (!u.rdom || u.args.empty() || u.args[0]->op != Op::Var) continue;
                std::string v = u.args[0]->name;
                std::vector<std::string> pure;
                for (const Expr &a : u.args)
                    if (a->op == Op::Var) pure.push_back(a->name);
                if (pure.size() < 2) continue;
                bool changed = false;
                Expr value = ir::transform(u.value, [&](const Expr &n) -> Expr {
                    int d = dimension_to_move_first(*n, f, v, pure);
                    if (d < 0) return n;
                    changed = true;
                    return call_to_copy(*n, d, &f);
                });
                if (changed) out_.values[{&f, int(k) + 1}] = value;
            }
        }
        return std::move(out_);
    }

private:
    // `call` with its argument d moved first, reading the copy of its operand transposed so.
    Expr call_to_copy(const ExprNode &call, int d, FuncContents *consumer) {
        const void *operand = call.op == Op::FuncCall ? static_cast<const void *>(call.func_ptr) : call.input.get();
        auto key = std::make_pair(operand, d);
        auto it = copy_of_.find(key);
        if (it == copy_of_.end()) it = copy_of_.emplace(key, make_copy(call, d)).first;
        OperandCopies::Copy &copy = out_.copies[it->second];
        if (std::find(copy.consumers.begin(), copy.consumers.end(), consumer) == copy.consumers.end())
            copy.consumers.push_back(consumer);
        std::vector<Expr> args{call.args[size_t(d)]};
        for (size_t j = 0; j < call.args.size(); ++j)
            if (int(j) != d) args.push_back(call.args[j]);
        return ir::make_func_call(copy.func, args);
    }

    // copy(v0, v1, ...) = operand(v1, ..., vd, v0, v(d+1), ...): the operand's dimension d first.
    size_t make_copy(const ExprNode &call, int d) {
        std::vector<size_t> var_of_dimension;
        for (size_t j = 0; j < call.args.size(); ++j) var_of_dimension.push_back(int(j) == d ? 0 : int(j) < d ? j + 1 : j);
        std::shared_ptr<FuncContents> c = make_operand_copy(call, call.name + "_transposed", var_of_dimension, names_);
        out_.copies.push_back({c, {}});
        return out_.copies.size() - 1;
    }

    const PipelineGraph &g_;
    std::set<std::string> names_;
    std::map<std::pair<const void *, int>, size_t> copy_of_;
    OperandCopies out_;
};

} // namespace

OperandCopies transposed_operands(const PipelineGraph &g) { return Transposer(g).run(); }

} // namespace tessera::poly
