// Private to poly's model builder: the cases of a value that selects on affine conditions of
// its instance (index-set splitting).
//
//   domain { S[i, k] : 0 <= i, k < n },  value select(i == k, a(i) / p(i), a(i) - b(i, k))
//     -> { S[i, k] : i == k } with a(i) / p(i),  { S[i, k] : i != k } with a(i) - b(i, k)
//
// A select splits only where its condition is affine over `space` and exact on the domain
// (exact_conditions: no wrapping); nested selects split further; cases that never run are
// dropped.
#pragma once

#include <utility>
#include <vector>

#include "tessera/poly/affine.h"

namespace tessera::poly {

// The (domain, value) cases of `value` over `domain`, in the select's order (true before false).
// More than `max_cases` cases, or none split: more than `max_cases` entries or the one case of
// the unchanged value, which the caller keeps whole.
std::vector<std::pair<isl::set, Expr>> affine_select_cases(const isl::set &domain, const Expr &value, const AffineSpace &space,
                                                           size_t max_cases);

} // namespace tessera::poly
