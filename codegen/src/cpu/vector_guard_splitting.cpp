// A vector loop whose body guards statements by conditions affine in the loop's variable,
// split into consecutive loops without the guards (index-set splitting at the last moment).
//
// jacobi-2d's time-tiled loop over a row runs the planes' initialization everywhere and the
// update on the interior only:
//
//     vectorized for (x = lo; x <= hi; x += 1) {
//       S_init(t, y, x);
//       if (x >= t + 1 && x <= t + n - 2) S_update(t, y, x);
//     }
//
// Left to LLVM, that loop is vectorized with masked loads and stores. Split at the guard's
// bounds, A = max(lo, t + 1) and B = min(hi, t + n - 2), it is three loops with no guard, each
// lowered by vector_for (explicit vectors, rotated loads):
//
//     for (x = lo; x <= A - 1; x += 1) S_init(t, y, x);
//     for (x = A; x <= B; x += 1) { S_init(t, y, x); S_update(t, y, x); }
//     for (x = B + 1; x <= hi; x += 1) S_init(t, y, x);
//
// The iterations run in their order, each with the statements it ran before. A condition is a
// conjunction of comparisons whose sides are linear in x with coefficient -1, 0 or 1 (isl's
// AST writes them so); with several guards, each piece is split again at the next one.
#include <tessera/ir.h>

#include "../function_lowering.h"
#include "rotated_loads.h"

namespace tessera::codegen {

using llvm::Value;

namespace {

// The children of a loop's body, in order.
std::vector<poly::LoopNodePtr> children_of(const poly::LoopNode &n) {
    if (!n.body) return {};
    if (n.body->kind == poly::LoopNode::Kind::Block) return n.body->children;
    return {n.body};
}

Expr without_likely(Expr e) {
    while (e->op == Op::Likely) e = e->args[0];
    return e;
}

// Whether `cond` bounds `var` to one interval that split_vector_guards can compute.
bool affine_guard(const Expr &cond, const std::string &var) {
    for (const Expr &c0 : ir::conjuncts(without_likely(cond))) {
        Expr c = without_likely(c0);
        if (c->op != Op::GE && c->op != Op::GT && c->op != Op::LE && c->op != Op::LT && c->op != Op::EQ) return false;
        if (!c->args[0].type().is_int_or_uint() || c->args[0].type().is_bool()) return false;
        auto a = linear_coefficient(c->args[0], var), b = linear_coefficient(c->args[1], var);
        if (!a || !b || std::abs(*a - *b) > 1) return false;
    }
    return true;
}

// A guard split_vector_guards takes apart: an If without else around statement instances.
bool splittable_guard(const poly::LoopNode &c, const std::string &var) {
    std::vector<const poly::LoopNode *> calls;
    return c.kind == poly::LoopNode::Kind::If && !c.else_case && body_calls(c.then_case, calls) &&
           affine_guard(c.condition, var);
}

// `n` with its body's children `children`.
poly::LoopNode with_children(const poly::LoopNode &n, std::vector<poly::LoopNodePtr> children) {
    poly::LoopNode r = n;
    auto block = std::make_shared<poly::LoopNode>();
    block->kind = poly::LoopNode::Kind::Block;
    block->children = std::move(children);
    r.body = block;
    return r;
}

} // namespace

bool FunctionLowering::split_vector_guards(const poly::LoopNode &n, Scope &s, Value *lo, Value *hi) {
    std::vector<poly::LoopNodePtr> children = children_of(n);
    // Every child is statement instances or a guard of them, and at least one is a guard.
    std::vector<poly::LoopNodePtr> unguarded;
    int guard = -1;
    for (size_t i = 0; i < children.size(); ++i) {
        std::vector<const poly::LoopNode *> calls;
        if (body_calls(children[i], calls)) {
            unguarded.push_back(children[i]);
        } else if (splittable_guard(*children[i], n.var)) {
            if (guard < 0) guard = int(i);
            unguarded.push_back(children[i]->then_case);
        } else {
            return false;
        }
    }
    if (guard < 0 || n.step != 1 || vector_lanes(with_children(n, unguarded)) == 0) return false;

    // The guard's interval [first, last] of the loop's variable: each comparison as
    // c * x + e >= 0 with e its value at x = 0.
    const poly::LoopNode &g = *children[size_t(guard)];
    Scope at_zero = s;
    at_zero.vars[n.var] = i64(0);
    auto wide = [&](const Expr &e) { return b.CreateSExtOrTrunc(expr(e, at_zero), b.getInt64Ty()); };
    Value *first = lo, *last = hi;
    auto bound = [&](int64_t c, Value *e) {
        if (c == 1) first = b.CreateSelect(b.CreateICmpSGT(b.CreateNeg(e), first), b.CreateNeg(e), first);  // x >= -e
        else if (c == -1) last = b.CreateSelect(b.CreateICmpSLT(e, last), e, last);                        // x <= e
        else last = b.CreateSelect(b.CreateICmpSGE(e, i64(0)), last, b.CreateSub(lo, i64(1)));             // all or none
    };
    for (const Expr &c0 : ir::conjuncts(without_likely(g.condition))) {
        Expr c = without_likely(c0);
        int64_t coefficient = *linear_coefficient(c->args[0], n.var) - *linear_coefficient(c->args[1], n.var);
        Value *d = b.CreateSub(wide(c->args[0]), wide(c->args[1]));  // left - right at x = 0
        switch (c->op) {
        case Op::GE: bound(coefficient, d); break;
        case Op::GT: bound(coefficient, b.CreateSub(d, i64(1))); break;
        case Op::LE: bound(-coefficient, b.CreateNeg(d)); break;
        case Op::LT: bound(-coefficient, b.CreateSub(b.CreateNeg(d), i64(1))); break;
        default:  // EQ
            bound(coefficient, d);
            bound(-coefficient, b.CreateNeg(d));
            break;
        }
    }
    // Consecutive pieces [lo, first - 1], [first, last], [last + 1, hi], none reversed by more
    // than one (empty).
    auto max = [&](Value *a, Value *c) { return b.CreateSelect(b.CreateICmpSGT(a, c), a, c); };
    auto min = [&](Value *a, Value *c) { return b.CreateSelect(b.CreateICmpSLT(a, c), a, c); };
    Value *end = max(hi, b.CreateSub(lo, i64(1)));
    first = min(max(first, lo), b.CreateAdd(end, i64(1)));
    last = min(max(last, b.CreateSub(first, i64(1))), end);

    std::vector<poly::LoopNodePtr> outside, inside;
    for (size_t i = 0; i < children.size(); ++i) {
        if (int(i) == guard) {
            inside.push_back(children[i]->then_case);
        } else {
            outside.push_back(children[i]);
            inside.push_back(children[i]);
        }
    }
    auto piece = [&](const poly::LoopNode &p, Value *from, Value *to) {
        if (!vector_for(p, s, from, to)) serial_for(p, s, from, to, true);
    };
    poly::LoopNode out = with_children(n, outside), in = with_children(n, inside);
    if (!outside.empty()) piece(out, lo, b.CreateSub(first, i64(1)));
    piece(in, first, last);
    if (!outside.empty()) piece(out, b.CreateAdd(last, i64(1)), end);
    return true;
}

} // namespace tessera::codegen
