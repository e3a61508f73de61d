// Func::bound and Func::align_bounds in the polyhedral model (poly-internal; model.cpp uses it
// while it infers regions, consumers first).
//
//   g.bound(x, -10, 60): g's box [c, y, x] over what its consumers need has x replaced by
//   [-10, 49]; the run-time check "what is needed of g in x lies in [-10, 49]" is recorded where
//   isl cannot prove it (a consumer over the output's parametric size).
//   g.align_bounds(x, 8) with x needed over [-3, 10]: x ranges over [-8, 15]; where the needed
//   range is parametric, over two Region parameters rounding it at run time, so that every
//   region stays a box without divisions.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tessera/poly/model.h"

namespace tessera::poly {

// `box` with its dimension j (isl order) restricted to [lo, hi] (pw_affs of the parameters).
isl::set restrict_dimension(const isl::set &box, unsigned j, const isl::pw_aff &lo, const isl::pw_aff &hi);

class RegionBounds {
public:
    // What the model builder provides: a DSL Expr over the parameters' Vars (Params and input
    // sizes lowered), and a new Region parameter standing for `value` (the bound of dimension
    // `dim`, Halide order, of array `tuple`).
    struct Hooks {
        std::function<Expr(const Expr &)> lower;
        std::function<isl::pw_aff(const Expr &value, const std::string &tuple, int dim, bool upper)> region_parameter;
    };

    RegionBounds(Model &m, Hooks hooks) : m_(m), hooks_(std::move(hooks)) {}

    // Replaces the bounded dimensions of `required` (the box array `array` of Func `f` is needed
    // over) by their bound, then widens the aligned ones; remembers the bounds for check().
    // A UserError for a bound that is not affine in the parameters or leaves nothing to compute.
    isl::set apply(const FuncContents &f, int array, isl::set required);

    // Adds to the model's bound_checks that `need` (what is needed of the array apply() saw last:
    // its consumers' reads, its output buffer, its own updates' accesses) lies in the bound,
    // where isl cannot prove it; returns `realized` with the bounded dimensions exactly the bound
    // (the checks make them so).
    isl::set check(int array, const isl::set &need, isl::set realized);

private:
    isl::pw_aff bound_aff(const FuncContents &f, const FuncContents::DimensionBound &b, const Expr &e, const char *which);
    isl::pw_aff constant_aff(int64_t v) const;

    // A bounded dimension of the Func apply() saw last: [lo, hi] over the parameters, widened by
    // align_bounds.
    struct BoundRange {
        int dim;
        isl::pw_aff lo, hi;
    };

    Model &m_;
    Hooks hooks_;
    std::vector<BoundRange> ranges_;
};

} // namespace tessera::poly
