// Subexpressions of an update that do not vary along its vector loop, computed once as Funcs
// of their own: loop-invariant code motion across the tile and register-tile loops that the
// schedule puts around the reduction (where LLVM cannot hoist them).
//
// Example: gemm as PolyBench writes it,
//
//     C(j, i) += alpha * A(k, i) * B(j, k);      // RDom k
//
// runs in register tiles (register_tiling.h): for each block of 16 columns j, the step k
// multiplies 8 rows' alpha * A(k, i) and broadcasts each, then 16 vector multiplies and 16
// additions. The 8 scalar multiplies and register broadcasts are repeated for every block of
// columns, and the multiplies compete with the product's for the two multiply pipes. With
//
//     C_invariant(v0, v1) = alpha * A(v0, v1);   // one pass over A
//     C(j, i) += C_invariant(k, i) * B(j, k);
//
// each row's factor is one broadcast load (dgemm 2048 cubed, 2 threads: 181 -> 157 ms). The
// factor is computed by the same operations on the same values: results are bit-identical.
//
// A subexpression qualifies when it sits in an update definition with an RDom whose first
// argument (the store's contiguous dimension) is a pure Var v, and:
//   - it is arithmetic (+, -, *, /, min, max or a math function; not a bare call, cast or
//     constant) and does not involve v: each of its values is reused along v;
//   - it involves a variable of the RDom (what involves none is invariant along the whole
//     reduction, and LLVM hoists it);
//   - it reads an input or another Func (not the Func being updated), and every call in it has
//     distinct Vars and RVars as its arguments: the copy reads exactly the elements the update
//     read, over the box hull of the same points (no new bounds to check);
//   - no other qualifying subexpression contains it.
// Not on GPU targets (the copy would be a kernel of its own), nor where a Func of the pipeline
// has schedule directives (a written schedule says itself what it computes where).
#pragma once

#include <tessera/func_graph.h>

#include "tessera/poly/operand_copies.h"

namespace tessera::poly {

// Adds to `copies` a Func for each qualifying subexpression of the updates of `g` (see above),
// named `<consumer>_invariant` (numbered where taken), and rewrites the updates that read them,
// starting from the values already in `copies` (transposed_operands.h). add_operand_copies adds
// them to `g`.
void add_invariant_subexpressions(const PipelineGraph &g, OperandCopies &copies);

} // namespace tessera::poly
