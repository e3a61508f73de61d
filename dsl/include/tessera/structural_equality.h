#pragma once
// Structural equality of expressions: the same operations on the same operands, whichever nodes
// hold them. Two calls `Ix(x - 1, y)` built separately (as inlining builds them, once per use)
// are equal; `Ix(x - 1, y)` and a call of another Func also named Ix are not, nor is a Var x
// and a Param x.
//
//     ExprSet calls;
//     calls.insert(a(x + 1));  // true: new
//     calls.insert(a(x + 1));  // false: an equal call is already there
#include <cstddef>
#include <unordered_map>
#include <vector>

#include "tessera/expr.h"

namespace tessera::ir {

// Whether a and b compute the same thing: equal operations, types, constants (floats bit for
// bit), names, and the same callee, input, Param and RDom objects, operand by operand.
bool structurally_equal(const Expr &a, const Expr &b);

// A set of Exprs up to structural equality. Hashes are memoized per node, so a DAG whose
// subexpressions are shared is hashed in time linear in its distinct nodes.
class ExprSet {
public:
    // Adds e unless an equal Expr is present; returns whether it was added.
    bool insert(const Expr &e);

private:
    size_t hash(const Expr &e);
    std::unordered_map<const ExprNode *, size_t> hashes_;
    std::unordered_map<size_t, std::vector<Expr>> buckets_;
};

} // namespace tessera::ir
