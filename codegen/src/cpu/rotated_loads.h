// Stencil loads of a vector loop carried from one vector step to the next (register rotation).
//
// A vector loop over x that reads one row of an array at x - 1, x and x + 1 (jacobi-1d's
// `J(x - 1, t) + J(x, t) + J(x + 1, t)`) loads three overlapping vectors per step. The lanes
// of the two lower ones are, but for one element each, the highest one's lanes of the step
// before: the step loads only the highest vector and shuffles the others out of it and the
// previous step's (what LLVM's loop vectorizer does with clang's scalar loop, as first-order
// recurrences). One load where there were three: jacobi-1d's loop was bound by its loads.
//
// A group is the loads of one array whose coordinates are equal but for a constant offset k in
// dimension 0, which advances by one per lane; the other coordinates do not change along the
// loop. The group is rotated when its offsets span at most one vector (kmax - kmin <= W) and no
// statement of the loop stores into a row the group reads: each store to the same array must
// differ from the group's row by a nonzero constant in some coordinate other than dimension 0
// (modulo the ring's planes for a folded dimension: planes t and t + 1 of a ring of two).
// Otherwise the previous step's vector could hold values this step overwrites.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../function_lowering.h"

namespace tessera::codegen {

struct RotatedLoad {
    int call = 0;                        // index in the loop's calls
    const ExprNode *node = nullptr;      // the FuncCall or InputCall
    int64_t offset = 0;                  // k: lane l reads x + k + l in dimension 0
};

struct RotatedLoadGroup {
    std::vector<RotatedLoad> loads;
    int64_t lowest = 0, highest = 0;     // kmin, kmax
    size_t lowest_load = 0, highest_load = 0;  // indices in `loads` of a load at each
};

// The coefficient of `var` in an integer expression that is linear in it (sums, differences,
// constant multiples and integer casts of variables and of subexpressions without `var`);
// nothing when it is not linear in `var`.
std::optional<int64_t> linear_coefficient(const Expr &e, const std::string &var);

// The groups of the vector loop over `var` (whose body is `calls`) that can be rotated with
// `lanes` lanes per step.
std::vector<RotatedLoadGroup> rotated_load_groups(const FunctionLowering &f, const std::vector<const poly::LoopNode *> &calls,
                                                  const std::string &var, int lanes);

// Which calls of a vector step store nothing anyone reads: a later call of the step stores the
// same element, and no call from the first one's next to the later one (its value included)
// reads the row. jacobi-2d's initialization of a plane, where its update overwrites it in the
// same step (vector_guard_splitting.cpp's middle piece): left in, it loaded the input, twice
// (a select of two inputs is two vector loads).
std::vector<bool> overwritten_calls(const FunctionLowering &f, const std::vector<const poly::LoopNode *> &calls,
                                    const std::string &var);

} // namespace tessera::codegen
