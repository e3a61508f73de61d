// Traversal, substitution, queries and constant folding over Exprs.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "tessera/error.h"
#include "tessera/ir.h"
#include "tessera/structural_equality.h"

namespace tessera::ir {

namespace {
// Calls on_node(n) once for each distinct node reachable from e, after its operands, with an
// explicit stack instead of recursion (the expressions checked here may be arbitrarily deep).
template <typename OnNode>
void for_each_node_post_order(const Expr &e, OnNode on_node) {
    if (!e.defined()) return;
    std::unordered_set<const ExprNode *> seen{e.get()};
    std::vector<std::pair<const ExprNode *, size_t>> stack{{e.get(), 0}};  // node, next operand
    while (!stack.empty()) {
        auto &[node, next] = stack.back();
        if (next < node->args.size()) {
            const ExprNode *a = node->args[next++].get();
            if (a && seen.insert(a).second) stack.emplace_back(a, 0);
            continue;
        }
        on_node(node);
        stack.pop_back();
    }
}
} // namespace

uint64_t expanded_size(const Expr &e, uint64_t cap) {
    std::unordered_map<const ExprNode *, uint64_t> size;
    for_each_node_post_order(e, [&](const ExprNode *n) {
        uint64_t total = 1;
        for (const Expr &a : n->args) {
            uint64_t m = a.defined() ? size.at(a.get()) : 0;
            total = m >= cap - total ? cap : total + m;  // saturating, without overflow
        }
        size.emplace(n, total);
    });
    return e.defined() ? size.at(e.get()) : 0;
}

namespace {
// Calls on_node(n) once for each distinct node of e, without entering the coordinates of calls
// (a call is visited, its arguments are not).
template <typename OnNode>
void for_each_node_outside_calls(const Expr &e, OnNode on_node) {
    if (!e.defined()) return;
    std::unordered_set<const ExprNode *> seen{e.get()};
    std::vector<const Expr *> stack{&e};
    while (!stack.empty()) {
        const Expr &n = *stack.back();
        stack.pop_back();
        on_node(n);
        if (n->op == Op::FuncCall || n->op == Op::InputCall) continue;
        for (const Expr &a : n->args)
            if (a.defined() && seen.insert(a.get()).second) stack.push_back(&a);
    }
}
} // namespace

uint64_t operation_count(const Expr &e) {
    uint64_t ops = 0;
    for_each_node_outside_calls(e, [&](const Expr &n) {
        ops += !n->args.empty() && n->op != Op::FuncCall && n->op != Op::InputCall;
    });
    return ops;
}

uint64_t distinct_reads(const Expr &e) {
    ExprSet reads;
    uint64_t distinct = 0;
    for_each_node_outside_calls(e, [&](const Expr &n) {
        if ((n->op == Op::FuncCall || n->op == Op::InputCall) && reads.insert(n)) ++distinct;
    });
    return distinct;
}

uint64_t expression_depth(const Expr &e) {
    std::unordered_map<const ExprNode *, uint64_t> depth;
    for_each_node_post_order(e, [&](const ExprNode *n) {
        uint64_t deepest = 0;
        for (const Expr &a : n->args)
            if (a.defined()) deepest = std::max(deepest, depth.at(a.get()));
        depth.emplace(n, deepest + 1);
    });
    return e.defined() ? depth.at(e.get()) : 0;
}

void visit(const Expr &e, const std::function<bool(const Expr &)> &fn) {
    if (!e.defined()) return;
    if (!fn(e)) return;
    for (const Expr &a : e->args) visit(a, fn);
}

Expr transform(const Expr &e, const std::function<Expr(const Expr &)> &fn) {
    if (!e.defined()) return e;
    if (e->args.empty()) return fn(e);
    std::vector<Expr> args;
    args.reserve(e->args.size());
    bool changed = false;
    for (const Expr &a : e->args) {
        args.push_back(transform(a, fn));
        changed |= !args.back().same_as(a);
    }
    return fn(changed ? rebuild(e, std::move(args)) : e);
}

namespace {

Expr substitute_folding(const Expr &e, const std::map<std::string, Expr> &replacements, bool fold) {
    return transform(e, [&](const Expr &n) {
        if (n->op == Op::Var) {
            auto it = replacements.find(n->name);
            return it != replacements.end() ? it->second : n;
        }
        return fold ? fold_constants(n) : n;
    });
}

} // namespace

Expr substitute(const Expr &e, const std::map<std::string, Expr> &replacements) {
    return substitute_folding(e, replacements, false);
}

Expr substitute_and_fold(const Expr &e, const std::map<std::string, Expr> &replacements) {
    return substitute_folding(e, replacements, true);
}

std::vector<std::string> free_vars(const Expr &e) {
    std::vector<std::string> names;
    visit(e, [&](const Expr &n) {
        if (n->op == Op::Var && std::find(names.begin(), names.end(), n->name) == names.end())
            names.push_back(n->name);
        return true;
    });
    return names;
}

std::vector<std::shared_ptr<RDomContents>> rdoms_in(const Expr &e) {
    std::vector<std::shared_ptr<RDomContents>> r;
    visit(e, [&](const Expr &n) {
        if (n->op == Op::RVar && std::find(r.begin(), r.end(), n->rdom) == r.end()) r.push_back(n->rdom);
        return true;
    });
    return r;
}

bool reads_data(const Expr &e) {
    bool found = false;
    visit(e, [&](const Expr &n) {
        found = found || n->op == Op::FuncCall || n->op == Op::InputCall;
        return !found;
    });
    return found;
}

bool contains_call_to(const Expr &e, const FuncContents *f) {
    bool found = false;
    visit(e, [&](const Expr &n) {
        if (n->op == Op::FuncCall && n->func_ptr == f) found = true;
        return !found;
    });
    return found;
}

namespace {

bool is_int_const(const Expr &e, int64_t v) {
    auto c = as_const_int(e);
    return c && *c == v && e.type().is_int_or_uint() && !e.type().is_bool();
}

// Whether p + q is (x / c) * c + x % c for a non-zero constant c: x itself, by the definition of
// Euclidean division (exact in wrapping arithmetic too). Reshapes write it where one splits an
// axis that another merged: [8, 128] -> [1024] -> [8, 128] reads (i / 128) * 128 + i % 128.
bool is_quotient_and_remainder(const Expr &p, const Expr &q) {
    if (p->op != Op::Mul || q->op != Op::Mod || p->args[0]->op != Op::Div) return false;
    const Expr &c = q->args[1];
    auto value = as_const_int(c);
    if (!value || *value == 0) return false;
    const Expr &quotient = p->args[0];
    return as_const_int(p->args[1]) == value && as_const_int(quotient->args[1]) == value &&
           structurally_equal(quotient->args[0], q->args[0]);
}

} // namespace

Expr fold_constants(const Expr &e) {
    if (!e.defined() || e->args.empty()) return e;
    const ExprNode &n = *e;
    bool all_const = std::all_of(n.args.begin(), n.args.end(), [](const Expr &a) { return is_const(a); });
    if (all_const) {
        std::vector<Value> v;
        for (const Expr &a : n.args) v.push_back(const_value(a));
        Type at = n.args[0].type();
        switch (n.op) {
        case Op::Cast: return const_of_value(n.type, eval_cast(n.type, at, v[0]));
        case Op::Not:
        case Op::BitNot:
        case Op::Abs: return const_of_value(n.type, eval_unary(n.op, at, v[0]));
        case Op::Math: return const_of_value(n.type, eval_math(MathFn(n.index), n.type, v.data()));
        case Op::Select: return v[0].u ? n.args[1] : n.args[2];
        case Op::Likely:
        case Op::FuncCall:
        case Op::InputCall: return e;
        default:
            if (n.args.size() == 2) return const_of_value(n.type, eval_binary(n.op, at, v[0], v[1]));
            return e;
        }
    }
    // Integer identities; wrapping integer arithmetic makes them exact.
    if (n.type.is_int_or_uint() && !n.type.is_bool() && n.args.size() == 2) {
        const Expr &a = n.args[0], &b = n.args[1];
        switch (n.op) {
        case Op::Add:
            if (is_int_const(b, 0)) return a;
            if (is_int_const(a, 0)) return b;
            if (is_quotient_and_remainder(a, b)) return b->args[0];
            if (is_quotient_and_remainder(b, a)) return a->args[0];
            // (x + c1) + c2 → x + (c1 + c2)
            if (is_const(b) && a->op == Op::Add && is_const(a->args[1]))
                return fold_constants(make_binary(Op::Add, a->args[0], fold_constants(make_binary(Op::Add, a->args[1], b))));
            break;
        case Op::Sub:
            if (is_int_const(b, 0)) return a;
            if (is_const(b) && b->op == Op::IntConst && b->int_value != INT64_MIN && n.type.is_int())
                return fold_constants(make_binary(Op::Add, a, make_const(n.type, -b->int_value)));
            break;
        case Op::Mul:
            if (is_int_const(b, 1)) return a;
            if (is_int_const(a, 1)) return b;
            break;
        case Op::Div:
            if (is_int_const(b, 1)) return a;
            break;
        default: break;
        }
    }
    return e;
}

} // namespace tessera::ir

namespace tessera::detail {

void check_expression_size(const std::string &what, const Expr &e) {
    uint64_t depth = ir::expression_depth(e);
    if (depth > kMaxExprDepth)
        user_error(what, " has an expression nested ", depth, " levels deep; at most ", kMaxExprDepth,
                   " are supported (the compiler recurses through operands, and deeper chains would overflow the "
                   "stack). A chain such as e = e + in(x + i) built in a C++ loop grows one level per step: write "
                   "it as a reduction (sum(in(x + r)) over an RDom r, or an update definition), add its terms as a "
                   "balanced tree, or split it across Funcs.");
    uint64_t n = ir::expanded_size(e, kMaxExpandedNodes + 1);
    if (n > kMaxExpandedNodes)
        user_error(what, " has an expression of more than ", kMaxExpandedNodes,
                   " nodes once each use of a shared sub-expression is counted (an Expr reused at every step of a C++ "
                   "loop, such as e = select(c, e * 3, e - 1), doubles at each step). Tessera walks expressions as "
                   "trees, so it would take exponential time. Compute the shared value in a Func of its own (e.g. "
                   "g(x) = ...; then use g(x) where it is needed): a Func is computed once per point, however often "
                   "it is called.");
}

} // namespace tessera::detail
