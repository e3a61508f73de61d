// isl AST expressions and parametric affine functions as DSL expressions (int32), so that loop
// bounds, region boxes and statement arguments are lowered by the same code as Func bodies.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <tessera/ir.h>

#include "tessera/poly/isl_util.h"

namespace tessera::poly {

using IdResolver = std::function<Expr(const std::string &id)>;

// Converts an isl AST expression; identifiers (iterators, parameters) are resolved by `ids`.
// Floor divisions and remainders map to the DSL's Euclidean / and %, which agree with isl's for
// the positive divisors isl emits.
Expr from_ast_expr(const isl::ast_expr &e, const IdResolver &ids);

// An affine function of set dimensions `dims` (Exprs standing for them) and the parameters,
// as an Expr; rational parts become floor divisions, as isl defines them.
Expr aff_to_expr(const isl::aff &a, const std::vector<Expr> &dims, const IdResolver &params);

// A piecewise affine function of the parameters only, as an Expr valid under `context`.
Expr pw_aff_to_expr(const isl::pw_aff &pa, const isl::set &context, const IdResolver &ids);

} // namespace tessera::poly
