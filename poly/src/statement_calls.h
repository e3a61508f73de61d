#pragma once
// The distinct calls of a statement, for the model's access relations.
//
//     out(x, y) = sq(x, y) + sq(x, y)      with sq(x, y) = ix(x, y) * ix(x, y) inlined
//     for_each_distinct_call(s, fn)     => fn(ix(x, y)) once, not four times
//
// Inlining builds one call per use: harris's inlined Sxx, Syy and Sxy read 18 points of Ix and Iy
// through 144 calls, each an isl access relation to build. Calls are told apart structurally
// (dsl/structural_equality.h); each shared subexpression is walked once.
#include <set>
#include <vector>

#include <tessera/ir.h>
#include <tessera/structural_equality.h>

#include "tessera/poly/model.h"

namespace tessera::poly {

// Calls fn(const ExprNode &) once per structurally distinct FuncCall or InputCall in the
// statement's store coordinates, value and guards (a call inside another's coordinates too).
template <typename F>
void for_each_distinct_call(const Statement &s, F &&fn) {
    std::vector<Expr> exprs = s.store;
    exprs.push_back(s.value);
    for (const Expr &g : s.guards) exprs.push_back(g);
    std::set<const ExprNode *> walked;
    ir::ExprSet calls;
    for (const Expr &e : exprs)
        ir::visit(e, [&](const Expr &n) {
            if (!walked.insert(n.get()).second) return false;
            if (n->op == Op::FuncCall || n->op == Op::InputCall) {
                if (!calls.insert(n)) return false;
                fn(*n);
            }
            return true;
        });
}

} // namespace tessera::poly
