// Inline reductions over the RDom whose variables appear in an expression, e.g.
//   f(x, y) = sum(in(x + r.x, y)) / 5;
// Each creates an anonymous Func over the expression's free Vars with a pure definition (the
// identity of the reduction) and one update definition over the RDom (with its predicates).
#pragma once

#include <string>
#include <vector>

#include "tessera/expr.h"

namespace tessera {

// An ordered group of Exprs (the result of argmax and argmin).
class Tuple {
public:
    Tuple() = default;
    explicit Tuple(std::vector<Expr> values) : values_(std::move(values)) {}
    size_t size() const { return values_.size(); }
    const Expr &operator[](size_t i) const;
    const std::vector<Expr> &as_vector() const { return values_; }

private:
    std::vector<Expr> values_;
};

Expr sum(Expr e, const std::string &name = "sum");
Expr product(Expr e, const std::string &name = "product");
Expr maximum(Expr e, const std::string &name = "maximum");
Expr minimum(Expr e, const std::string &name = "minimum");
// The coordinates of the first point (in iteration order, r.x fastest) of the RDom where e is
// largest, followed by that largest value: {r.x coordinate, ..., max value}.
Tuple argmax(Expr e, const std::string &name = "argmax");
// As argmax, for the smallest value.
Tuple argmin(Expr e, const std::string &name = "argmin");

} // namespace tessera
