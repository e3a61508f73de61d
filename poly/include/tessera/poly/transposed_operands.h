// Transposed copies of reduction operands, so that an update's vector loop reads them with
// stride one: a layout transformation of the operand, as BLIS packs a transposed panel and as
// Pluto-style data-layout transformations choose, made by adding a Func to the model.
//
// Example: syrk, C = alpha A A^T + beta C on the lower triangle, written as a user would:
//
//     C(j, i) += alpha * A(k, i) * A(k, j);     // RDom k, j <= i
//
// The update stores along j (C's contiguous dimension, the vector loop loop_order.h wants
// innermost), but A(k, j) walks j along A's second dimension, a row apart: with j innermost
// every lane is a separate cache line, and with k innermost (contiguous in A) the reduction
// runs sequentially, one dependent addition per element, and nothing vectorizes. A(k, j) does
// not involve i, so each of its elements is read once per row i: the copy
//
//     A_transposed(j, k) = A(k, j);             // one pass over A
//     C(j, i) += alpha * A(k, i) * A_transposed(j, k);
//
// pays, and makes j stride one in every access: loop_order.h moves k outward and j becomes the
// vector loop (syrk LARGE, 2 threads: 253 ms -> 50 ms). The values read are the same, so the
// results are bit-identical.
//
// A call qualifies when it sits in an update definition with an RDom whose first argument
// (the store's contiguous dimension) is a pure Var v, and:
//   - its first argument involves the RDom's variables and not v (the reduction walks the
//     operand's contiguous dimension);
//   - exactly one other argument involves v, and that argument is v itself;
//   - some other pure Var of the update appears in none of its arguments (the operand is
//     reused along it, so that the copy is amortized; a matrix-vector product's operand is
//     read once and is left alone);
//   - its arguments read no Func or input (no data-dependent index);
//   - it reads an input or another Func (not the Func being updated).
// One copy serves every qualifying call to the same operand with the same dimension moved.
#pragma once

#include <tessera/func_graph.h>

#include "tessera/poly/operand_copies.h"

namespace tessera::poly {

// The transposed copies worth making for the Funcs of `g` (see above), with the updates that
// read them (OperandCopies::values, keyed by update k as definition k + 1); none when no call
// qualifies. Names of the copies are `<operand>_transposed` (with a number where that is taken,
// or where one operand is transposed along two dimensions). add_operand_copies adds them to `g`.
OperandCopies transposed_operands(const PipelineGraph &g);

} // namespace tessera::poly
