// The loop nest of a scheduled pipeline, converted from isl's AST. Every expression (bounds,
// conditions, statement arguments) is a DSL Expr over loop iterators ("$c0", "$c1", ...) and
// parameter Vars, so the AST interpreter and the code generators lower them like Func bodies.
// They are int64 (iterators included), so no bound wraps; statement arguments become the int32
// coordinates of the statement's instance when bound to its dimensions.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <tessera/ir.h>

namespace tessera::poly {

struct LoopNode;
using LoopNodePtr = std::shared_ptr<const LoopNode>;

struct LoopNode {
    enum class Kind { For, If, Block, Mark, Call };
    Kind kind = Kind::Block;

    // For: `for (var = min; var <= max; var += step) body`.
    std::string var;
    Expr min, max;
    int64_t step = 1;
    // For: annotations from the marks around the loop's band.
    bool parallel = false;
    bool vectorize = false;
    // For: a loop of a case that runs only at degenerate sizes (build_loop_nest's version where
    // no update of a folded Func runs): compiled plain, neither vectorized nor unrolled, since
    // its speed does not matter and its code would be as much for LLVM as the steady case's.
    bool plain = false;
    // For, parallel: how many perfectly nested loops from this one run on threads as one
    // iteration space ("parallel:2"); the code generator collapses them where the inner loop's
    // bounds do not depend on this one, and runs this one alone on threads otherwise.
    int collapse = 1;

    // If: `if (condition) then_case else else_case` (else_case may be null).
    Expr condition;
    LoopNodePtr then_case, else_case;

    // Block: children in order.
    std::vector<LoopNodePtr> children;

    // Mark: a named region (e.g. "tile_body"); For and Mark: the body.
    std::string mark;
    LoopNodePtr body;

    // Call: one statement instance; args are its coordinates in tuple order.
    int statement = -1;
    std::string statement_name;
    std::vector<Expr> args;
};

// Writes the nest as indented pseudo-C.
void print_loop_nest(std::ostream &s, const LoopNodePtr &n, int indent = 0);
std::string to_string(const LoopNodePtr &n);

} // namespace tessera::poly
