// Conversion of DSL expressions into isl objects over a statement's instance space.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include <tessera/ir.h>

#include "tessera/poly/isl_util.h"

namespace tessera::poly {

// Where the leaves of an expression live in isl: Vars (by name) are set dimensions of
// `universe`; RDom variables are mapped the same way after lowering (they are Vars by then);
// symbolic sizes and integer Params are isl parameters, found by `param_id` (by Var name).
struct AffineSpace {
    isl::set universe;
    std::map<std::string, int> var_dims;
    std::function<std::optional<isl::id>(const std::string &var)> param_id;
    // false: a select is never an exact pw_aff (its condition may wrap where it is used; see
    // exact_conditions), so affine_bounds bounds it by both of its values.
    bool exact_selects = true;
};

// The exact value of an affine integer expression, or nullopt when it is not affine (products
// of variables, data-dependent values, non-constant divisors...). Integer overflow is assumed
// not to happen in index expressions.
std::optional<isl::pw_aff> to_pw_aff(const Expr &e, const AffineSpace &space);

// The set where an affine condition holds, or nullopt when it is not affine. Like to_pw_aff,
// it takes signed 32- and 64-bit arithmetic not to wrap: use it only where exact_conditions
// holds.
std::optional<isl::set> to_set(const Expr &condition, const AffineSpace &space);

// Where every comparison in `e` (a condition, or the conditions of the selects in an index)
// compares values computed without wrapping: every signed 32- or 64-bit +, -, constant * and
// constant / in its operands stays within its type. There to_set is exact; elsewhere the DSL's
// wrapped values may compare the other way (r + 2147483647 > 0 is false for r >= 1), so a
// condition whose domain is not inside this set is evaluated at run time instead.
isl::set exact_conditions(const Expr &e, const AffineSpace &space);

// The exact set where a condition holds with int32 arithmetic wrapping, or nullopt: every
// comparison in it compares an int32 Var plus or minus a constant with a constant (the form the
// interpreter narrows exactly, wrap included). The wrapped value is the affine one modulo 2^32
// (an existential): `r.x + -2147483645 > 0` holds for r.x > 2147483645 and for r.x < -3 (where
// the sum wraps), and nowhere else. The AST evaluates it in 64 bits, where 2^32 fits.
std::optional<isl::set> to_set_wrapping(const Expr &condition, const AffineSpace &space);

// Lower and upper bounds of an integer expression as affine functions of the instance and the
// parameters: exact for affine expressions, an over-approximation through min/max/clamp/select,
// sums, constant scaling and division, remainders, and the ranges of types for loaded values.
// A missing side means unbounded.
struct AffineBounds {
    std::optional<isl::pw_aff> lo, hi;
    bool exact = false;
};
AffineBounds affine_bounds(const Expr &e, const AffineSpace &space);

} // namespace tessera::poly
