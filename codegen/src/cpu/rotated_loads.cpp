#include "rotated_loads.h"

#include <map>
#include <optional>
#include <sstream>

#include <tessera/ir.h>

namespace tessera::codegen {
namespace {

// An integer coordinate as a sum of coefficient × term plus a constant. Terms are the loop
// nest's variables (the loop's own among them) and, whole, loop-invariant subexpressions
// without statement variables (parameters, buffer extents, `c0 / 16`).
struct Linear {
    std::map<std::string, int64_t> terms;
    int64_t constant = 0;
    void add(const Linear &o, int64_t scale) {
        for (const auto &[t, c] : o.terms)
            if ((terms[t] += c * scale) == 0) terms.erase(t);
        constant += o.constant * scale;
    }
};

// A statement's variables, each as the loop nest's expression its call binds it to.
using Bindings = std::map<std::string, Linear>;

bool integer(const Type &t) { return t.is_int_or_uint() && !t.is_bool(); }

std::optional<Linear> linear(const Expr &e, const Bindings &bound, const std::string &var) {
    const ExprNode &n = *e;
    switch (n.op) {
    case Op::IntConst:
    case Op::UIntConst:
        if (auto c = ir::as_const_int(e)) return Linear{{}, *c};
        return std::nullopt;
    case Op::Var: {
        auto it = bound.find(n.name);
        if (it != bound.end()) return it->second;
        return Linear{{{n.name, 1}}, 0};
    }
    case Op::Add:
    case Op::Sub: {
        auto a = linear(n.args[0], bound, var), b = linear(n.args[1], bound, var);
        if (!a || !b) return std::nullopt;
        a->add(*b, n.op == Op::Add ? 1 : -1);
        return a;
    }
    case Op::Mul: {
        auto ca = ir::as_const_int(n.args[0]), cb = ir::as_const_int(n.args[1]);
        if (ca || cb) {
            auto other = linear(ca ? n.args[1] : n.args[0], bound, var);
            if (!other) return std::nullopt;
            Linear r;
            r.add(*other, ca ? *ca : *cb);
            return r;
        }
        break;
    }
    case Op::Cast:
        // Coordinates fit their types (the entry checks the regions): a cast between integer
        // types keeps the value.
        if (integer(n.type) && integer(n.args[0].type())) return linear(n.args[0], bound, var);
        return std::nullopt;
    default: break;
    }
    // Anything else is one term when it cannot change along the loop and means the same in
    // every statement: no statement variable, not the loop's variable, no reduction variable.
    bool invariant = true;
    ir::visit(e, [&](const Expr &x) {
        if (x->op == Op::RVar || (x->op == Op::Var && (bound.count(x->name) || x->name == var))) invariant = false;
        return invariant;
    });
    if (!invariant || !integer(n.type)) return std::nullopt;
    return Linear{{{"(" + to_string(e) + ")", 1}}, 0};
}

// A coordinate: its linear form, and the modulus around it (a ring's planes, a scratchpad's
// wrapped rows) or 0.
struct Coordinate {
    Linear index;
    int64_t modulus = 0;
};

std::optional<Coordinate> coordinate(Expr e, const Bindings &bound, const std::string &var) {
    while (e->op == Op::Cast && integer(e.type()) && integer(e->args[0].type())) e = e->args[0];
    if (e->op == Op::Mod) {
        auto p = ir::as_const_int(e->args[1]);
        if (!p || *p <= 0) return std::nullopt;
        auto inner = linear(e->args[0], bound, var);
        if (!inner) return std::nullopt;
        return Coordinate{*inner, *p};
    }
    auto l = linear(e, bound, var);
    if (!l) return std::nullopt;
    return Coordinate{*l, 0};
}

std::string key_of(const Linear &l) {
    std::ostringstream s;
    for (const auto &[t, c] : l.terms) s << t << "*" << c << " ";
    return s.str();
}

// Whether two coordinates never take the same value in one execution of the loop: they
// differ by a constant that is not a multiple of their common modulus.
bool never_equal(const Coordinate &a, const Coordinate &b) {
    if (a.modulus != b.modulus || a.index.terms != b.index.terms) return false;
    int64_t d = a.index.constant - b.index.constant;
    return a.modulus == 0 ? d != 0 : d % a.modulus != 0;
}

// What the analyses need of each call of the loop, computed once: its statement variables'
// bindings (nothing when a call coordinate is not linear), the array it stores into, and its
// store's coordinates in the loop's terms (each nothing when it is not linear; none without
// bindings).
struct CallForms {
    std::optional<Bindings> bound;
    const void *target = nullptr;
    std::vector<std::optional<Coordinate>> store;
    // The store's coordinates when every one is linear.
    std::optional<std::vector<Coordinate>> whole_store() const {
        if (!bound) return std::nullopt;
        std::vector<Coordinate> r;
        for (const auto &c : store) {
            if (!c) return std::nullopt;
            r.push_back(*c);
        }
        return r;
    }
};

std::vector<CallForms> forms_of(const FunctionLowering &f, const std::vector<const poly::LoopNode *> &calls,
                                const std::string &var) {
    std::vector<CallForms> r;
    for (const poly::LoopNode *call : calls) {
        const poly::ExecStatement &e = f.p.statements[size_t(call->statement)];
        CallForms c;
        c.target = &f.view_of(f.m.statements[size_t(e.statement)].func);
        Bindings b;
        bool ok = true;
        for (size_t i = 0; i < e.dims.size() && i < call->args.size() && ok; ++i) {
            auto l = linear(call->args[i], {}, var);
            if (l) b[e.dims[i]] = *l;
            ok = l.has_value();
        }
        if (ok) {
            c.bound = b;
            for (const Expr &x : e.store) c.store.push_back(coordinate(x, b, var));
        }
        r.push_back(std::move(c));
    }
    return r;
}

struct Candidate {
    const void *view = nullptr;
    std::vector<Coordinate> rest;  // dimensions 1 ..
    RotatedLoadGroup group;
};

} // namespace

std::optional<int64_t> linear_coefficient(const Expr &e, const std::string &var) {
    auto l = linear(e, {}, var);
    if (!l) return std::nullopt;
    auto it = l->terms.find(var);
    return it == l->terms.end() ? 0 : it->second;
}

std::vector<RotatedLoadGroup> rotated_load_groups(const FunctionLowering &f, const std::vector<const poly::LoopNode *> &calls,
                                                  const std::string &var, int lanes) {
    std::vector<CallForms> forms = forms_of(f, calls, var);
    std::map<std::string, Candidate> candidates;
    for (size_t ci = 0; ci < calls.size(); ++ci) {
        if (!forms[ci].bound) continue;
        const Bindings &bound = *forms[ci].bound;
        const poly::ExecStatement &e = f.p.statements[size_t(calls[ci]->statement)];
        ir::visit(e.value, [&](const Expr &x) {
            if ((x->op != Op::FuncCall && x->op != Op::InputCall) || x->args.empty()) return true;
            const void *view = x->op == Op::InputCall ? static_cast<const void *>(&f.inputs.at(x->input.get()))
                                                      : static_cast<const void *>(&f.view_of(x->func_ptr));
            std::vector<Coordinate> coords;
            for (const Expr &a : x->args) {
                auto c = coordinate(a, bound, var);
                if (!c) return true;
                coords.push_back(*c);
            }
            // Dimension 0 advances by one per lane; the others stay.
            auto step = coords[0].index.terms.find(var);
            if (coords[0].modulus != 0 || step == coords[0].index.terms.end() || step->second != 1) return true;
            for (size_t d = 1; d < coords.size(); ++d)
                if (coords[d].index.terms.count(var)) return true;
            std::ostringstream key;
            key << view << "|" << key_of(coords[0].index);
            for (size_t d = 1; d < coords.size(); ++d)
                key << "|" << key_of(coords[d].index) << coords[d].index.constant << "%" << coords[d].modulus;
            Candidate &c = candidates[key.str()];
            c.view = view;
            c.rest.assign(coords.begin() + 1, coords.end());
            c.group.loads.push_back(RotatedLoad{int(ci), x.get(), coords[0].index.constant});
            return true;
        });
    }
    std::vector<RotatedLoadGroup> groups;
    for (auto &[key, c] : candidates) {
        RotatedLoadGroup &g = c.group;
        g.lowest = g.highest = g.loads[0].offset;
        for (size_t i = 0; i < g.loads.size(); ++i) {
            if (g.loads[i].offset < g.lowest) g.lowest = g.loads[i].offset, g.lowest_load = i;
            if (g.loads[i].offset > g.highest) g.highest = g.loads[i].offset, g.highest_load = i;
        }
        if (g.lowest == g.highest || g.highest - g.lowest > lanes) continue;
        // Every store to the array must be to another row than the group's.
        bool safe = true;
        for (size_t cj = 0; cj < calls.size() && safe; ++cj) {
            if (forms[cj].target != c.view) continue;
            const std::vector<std::optional<Coordinate>> &store = forms[cj].store;
            bool apart = false;
            for (size_t d = 1; d < store.size() && d - 1 < c.rest.size() && !apart; ++d)
                apart = store[d] && never_equal(*store[d], c.rest[d - 1]);
            safe = apart;
        }
        if (safe) groups.push_back(std::move(g));
    }
    return groups;
}

std::vector<bool> overwritten_calls(const FunctionLowering &f, const std::vector<const poly::LoopNode *> &calls,
                                    const std::string &var) {
    std::vector<bool> dead(calls.size(), false);
    std::vector<CallForms> forms = forms_of(f, calls, var);
    auto same = [](const Coordinate &a, const Coordinate &b) {
        return a.modulus == b.modulus && a.index.terms == b.index.terms && a.index.constant == b.index.constant;
    };
    for (size_t a = 0; a < calls.size(); ++a) {
        const std::optional<std::vector<Coordinate>> sa = forms[a].whole_store();
        if (!sa || sa->empty()) continue;
        const void *view = forms[a].target;
        for (size_t later = a + 1; later < calls.size() && !dead[a]; ++later) {
            // Every call after a up to `later` must read other rows of the array than a's.
            bool reads_row = !forms[later].bound;
            const Bindings bound = forms[later].bound.value_or(Bindings{});
            ir::visit(f.p.statements[size_t(calls[later]->statement)].value, [&](const Expr &x) {
                if (reads_row || x->op != Op::FuncCall || static_cast<const void *>(&f.view_of(x->func_ptr)) != view) return !reads_row;
                bool apart = false;
                for (size_t d = 1; d < x->args.size() && d < sa->size() && !apart; ++d) {
                    auto c = coordinate(x->args[d], bound, var);
                    apart = c && never_equal(*c, (*sa)[d]);
                }
                reads_row = !apart;
                return !reads_row;
            });
            if (reads_row) break;
            if (forms[later].target != view) continue;
            auto sb = forms[later].whole_store();
            if (!sb || sb->size() != sa->size()) continue;
            bool overwrites = true;
            for (size_t d = 0; d < sa->size(); ++d) overwrites = overwrites && same((*sa)[d], (*sb)[d]);
            dead[a] = overwrites;
        }
    }
    return dead;
}

} // namespace tessera::codegen
