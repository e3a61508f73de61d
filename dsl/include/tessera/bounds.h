// Interval bounds of expressions: the range of values an Expr can take when its variables
// range over given intervals. Used by bounds inference of the reference interpreter and as
// the over-approximation of data-dependent accesses.
#pragma once

#include <limits>
#include <map>
#include <string>
#include <utility>

#include "tessera/ir.h"

namespace tessera {

struct Interval {
    double min = -std::numeric_limits<double>::infinity();
    double max = std::numeric_limits<double>::infinity();

    static Interval everything() { return Interval(); }
    static Interval nothing() {
        return Interval{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
    }
    static Interval point(double v) { return Interval{v, v}; }
    bool empty() const { return min > max; }
    bool bounded() const;
    // The smallest interval containing both.
    Interval hull(const Interval &o) const;
};

struct BoundsScope {
    std::map<std::string, Interval> vars;
    std::map<std::pair<const RDomContents *, int>, Interval> rvars;
    // When true, Params and input sizes are unknown (their whole type's range) instead of their
    // current values: bounds that must hold for every run.
    bool symbolic = false;
};

// Bounds of e when its Vars and RVars range over the scope's intervals (a variable missing from
// the scope is unbounded). Params and input sizes take their current values when set. Values
// read from Funcs and buffers range over their whole type.
Interval bounds_of(const Expr &e, const BoundsScope &scope);

// Narrows the scope's RVar intervals to the values for which `condition` (an RDom predicate)
// can hold, as Halide's bounds inference trims a loop variable by the simple conditions around
// it. Only conjuncts that compare an RVar (plus or minus an integer constant, in a signed
// type of at least 32 bits, without overflow) with any expression narrow anything; the
// narrowing repeats while it changes something (at most a few rounds), and it only drops
// values for which the condition is false. Example: with r.x in [-1, 3] and r.y in [1, 4],
// `r.y <= r.x` narrows r.x to [1, 3] (r.x >= min(r.y) = 1) and r.y to [1, 3]. Vars in the
// scope narrow alike (`r.y <= x` keeps x >= 1): an update's instances outside the narrowed range
// run no iteration of its RDom.
void narrow_by_condition(const Expr &condition, BoundsScope &scope);

} // namespace tessera
