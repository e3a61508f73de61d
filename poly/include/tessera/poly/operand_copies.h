// Funcs the model adds to a pipeline's graph: copies of an operand (a Func or an input) that
// some of its consumers read instead of the operand itself. Two passes make them:
// transposed_operands.h (a reduction operand transposed so that the vector loop reads it with
// stride one) and staged_inputs.h (a GPU stencil's input tile copied into shared memory with
// aligned loads). Both only choose the copies and rewrite the consumers' values; this adds them
// to the graph, so that regions, grouping and scheduling treat a copy as any other Func.
//
// Example: with syrk's `C(j, i) += alpha * A(k, i) * A(k, j)` reading the copy
// `A_transposed(j, k) = A(k, j)` instead, the graph gains A_transposed just before C, with the
// edges A -> A_transposed -> C; C keeps its edge to A, which it still reads at A(k, i).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <tessera/func_graph.h>

namespace tessera::poly {

struct OperandCopies {
    // The copies, each a Func with a pure definition only, with the consumers that read it.
    struct Copy {
        std::shared_ptr<FuncContents> func;
        std::vector<FuncContents *> consumers;
    };
    std::vector<Copy> copies;
    // The value of definition k of a consumer (0: the pure one, k > 0: update k - 1) with its
    // calls reading the copies. Definitions not listed read what they were written to read.
    std::map<std::pair<const FuncContents *, int>, Expr> values;

    // The value definition k of `f` computes: the rewritten one when there is one.
    const Expr &value_of(const FuncContents &f, int k) const;
    // Appends `other`'s copies and rewritten values (its consumers' definitions must not be
    // rewritten here already).
    void append(OperandCopies other);
};

// A Func of `dimensions` pure Vars v0, v1, ... (Int(32)) whose value is `value(vars)`, named
// `base` or, where a name in `taken` has it, `base_2`, `base_3`...; the name is added to `taken`.
std::shared_ptr<FuncContents> make_copy_func(const std::string &base, size_t dimensions, std::set<std::string> &taken,
                                             const std::function<Expr(const std::vector<Expr> &vars)> &value);

// A copy of the operand `call` reads (a FuncCall or an InputCall), named `base` or, where a
// name in `taken` has it, `base_2`, `base_3`...; the name is added to `taken`. Its Vars are
// v0, v1, ...; operand dimension j reads v[var_of_dimension[j]]. With var_of_dimension {1, 0}
// it is the transpose `c(v0, v1) = operand(v1, v0)`; with {0, 1} the operand as it is.
std::shared_ptr<FuncContents> make_operand_copy(const ExprNode &call, const std::string &base, const std::vector<size_t> &var_of_dimension,
                                                std::set<std::string> &taken);

// Adds the copies to `g`, each just before the first Func that reads it, with its callee and
// consumer edges; the consumers' edges to an operand they no longer read are removed.
void add_operand_copies(PipelineGraph &g, const OperandCopies &c);

} // namespace tessera::poly
