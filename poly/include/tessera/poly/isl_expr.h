// isl AST expressions and parametric affine functions as DSL expressions, so that loop bounds,
// region boxes and statement arguments are lowered by the same code as Func bodies. Loop nests,
// region bounds and scratchpad offsets use int64: a tile that straddles the int32 range, or a
// region reaching past it, is computed exactly (and the region rejected at run time) instead of
// wrapping. Only the coordinates handed to Func bodies are int32.
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
// The result has type `index_type` (Int(32) or Int(64)); identifiers of another type are cast
// to it. A constant that does not fit Int(32) there is a UserError: the pipeline's coordinates
// leave the range compiled code supports.
Expr from_ast_expr(const isl::ast_expr &e, const IdResolver &ids, Type index_type = Int(32));

// An affine function of set dimensions `dims` (Exprs standing for them) and the parameters,
// as an Expr; rational parts become floor divisions, as isl defines them.
// The result has type `index_type`, like from_ast_expr's.
Expr aff_to_expr(const isl::aff &a, const std::vector<Expr> &dims, const IdResolver &params,
                 Type index_type = Int(32));

// A piecewise affine function of the parameters only, as an Int(64) Expr valid under `context`
// (and where `pa` is defined; elsewhere its value is unspecified).
Expr pw_aff_to_expr(const isl::pw_aff &pa, const isl::set &context, const IdResolver &ids);

// The value of `pa` (over the parameters alone) where it is defined, as a chain of selects over
// its pieces: each piece's affine expression under the condition of its domain, but for the
// piece of the most complex domain, last and untested. Where `pa` is not defined the value is
// that piece's: callers test where it is defined themselves. pw_aff_to_expr's isl expression
// simplifies the pieces against each other instead, which took 2-3 ms for a bound of two
// pieces on domains of a few disjuncts (heat-3d's ring planes), 0.2-0.4 ms this way:
//   [N, T] -> { [(0)] : T > 0 and N >= 3; [(2T)] : T <= 0 or N <= 2 }
//   becomes  select(T > 0 && N >= 3, 0, 2 * T)
Expr pw_aff_to_select(const isl::pw_aff &pa, const isl::set &context, const IdResolver &ids);

// A set of parameter values as a boolean Expr (over Int(64) arithmetic) valid under `context`.
Expr set_to_condition(const isl::set &params, const isl::set &context, const IdResolver &ids);

} // namespace tessera::poly
