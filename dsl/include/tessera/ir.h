// The IR behind the DSL objects, for the compiler layers (poly, codegen, runtime).
//
// User code does not need this header: Func, Var, RDom, Buffer, InputBuffer and Param are
// handles onto the contents declared here. Compiler layers read the contents and build
// expressions with the make_* functions, which perform no type promotion: their operands must
// already have matching types.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tessera/expr.h"

namespace tessera {

struct BufferImpl;

// A scalar value; which member is meaningful depends on the Type it goes with: Int → i
// (sign-extended), UInt and bool → u (zero-extended), every float type → f (holding a value
// exactly representable in that type).
union Value {
    int64_t i;
    uint64_t u;
    double f;
};

// One definition of a Func: `func(args) = value`. The pure definition has one Var per
// dimension as args; an update definition may have any integer Exprs and iterates over the
// pure Vars among its args (each in its own position) and, innermost, over its RDom.
// One scheduling directive on a definition's loops (Stage::split, Func::parallel, ...), as
// written; stage_loops.h replays them into the definition's loop nest.
struct LoopDirective {
    enum class Kind { Split, Fuse, Reorder, Vectorize, Unroll, Parallel, GpuBlocks, GpuThreads };
    Kind kind = Kind::Split;
    // Split: old, outer, inner. Fuse: inner, outer, fused. Reorder: innermost first.
    // Vectorize, Unroll, Parallel, GpuBlocks, GpuThreads: the loop.
    std::vector<std::string> vars;
    int factor = 0;  // Split: the factor; Vectorize, Unroll: a split first by this factor (0: none)
};

struct Definition {
    std::vector<Expr> args;
    Expr value;
    std::shared_ptr<RDomContents> rdom;  // update definitions only; may be null
    std::vector<LoopDirective> directives;
};

struct FuncContents {
    std::string name;
    std::vector<std::string> pure_args;  // names of the pure definition's Vars
    Type type;
    bool defined = false;
    Definition pure;
    std::vector<Definition> updates;
    // Func::compute_root(): the Func gets a loop nest and a buffer of its own (the directive
    // schedule's default, stated).
    bool compute_root = false;
    // Func::compute_at(consumer, loop) and store_at: a loop of the consumer's pure definition
    // (weak: the consumer holds this Func through its definitions), or none.
    struct LoopLevel {
        std::weak_ptr<FuncContents> func;
        std::string loop;
        bool defined() const { return !loop.empty(); }
    };
    LoopLevel compute_at, store_at;
    // Func::compute_inline(): every call is replaced by the value at its coordinates; the Func
    // has no loops and no storage.
    bool compute_inline = false;
    // Func::bound(v, min, extent) and Func::align_bounds(v, modulus, remainder): the range of a
    // pure dimension over which the Func is computed, in place of (or widening) the range its
    // consumers need. One entry per dimension that has either.
    struct DimensionBound {
        int dim = 0;                     // the pure dimension (Halide order)
        Expr min, extent;                // bound(): Int(32), of constants, Params and input sizes; or undefined
        int modulus = 1, remainder = 0;  // align_bounds(): 0 <= remainder < modulus; modulus 1: none
        // The largest coordinate <= v congruent to the remainder: where a widened range starts
        // (and, plus modulus - 1, where one ending at v ends).
        int64_t align_down(int64_t v) const { return v - (((v - remainder) % modulus) + modulus) % modulus; }
    };
    std::vector<DimensionBound> bounds;

    int dimensions() const { return int(pure_args.size()); }
    // The bound of pure dimension `dim`, or null.
    const DimensionBound *bound_of(int dim) const {
        for (const DimensionBound &b : bounds)
            if (b.dim == dim) return &b;
        return nullptr;
    }
};

// [min, min + extent) of pure dimension `dim` of `f` when bound() makes it constant, widened by
// align_bounds(): the range of the loops over that dimension.
std::optional<std::pair<int64_t, int64_t>> constant_bound(const FuncContents &f, int dim);

struct RVarDef {
    std::string name;  // e.g. "r.x"
    Expr min, extent;
};

struct RDomContents {
    std::string name;
    std::vector<RVarDef> dims;
    std::vector<Expr> predicates;  // all must hold for a point to be visited
};

// An input: a concrete Buffer used in a definition, or an InputBuffer whose buffer is bound
// at run time.
struct InputContents {
    std::string name;
    Type type;
    int dimensions = 0;
    bool is_parameter = false;           // true for InputBuffer
    std::shared_ptr<BufferImpl> bound;   // the buffer it reads from, when bound
};

struct ParamContents {
    std::string name;
    Type type;
    bool is_set = false;
    Value value{};
};

namespace ir {

// ---- Builders (no promotion; operand types must match) ---------------------------------------
Expr make_var(const std::string &name, Type t = Int(32));
Expr make_rvar(const std::shared_ptr<RDomContents> &rdom, int index);
Expr make_param(const std::shared_ptr<ParamContents> &param);
Expr make_buffer_dim(const std::shared_ptr<InputContents> &input, int dim, int which);
Expr make_func_call(const std::shared_ptr<FuncContents> &func, std::vector<Expr> args);
Expr make_input_call(const std::shared_ptr<InputContents> &input, std::vector<Expr> args);
Expr make_cast(Type t, Expr e);
Expr make_binary(Op op, Expr a, Expr b);
Expr make_unary(Op op, Expr a);
Expr make_select(Expr cond, Expr a, Expr b);
Expr make_math(MathFn fn, std::vector<Expr> args);
// A node like `like` with other operands (same op, type and references).
Expr rebuild(const Expr &like, std::vector<Expr> args);

// ---- Queries --------------------------------------------------------------------------------
bool is_const(const Expr &e);
std::optional<int64_t> as_const_int(const Expr &e);  // integer constants only
// A Var plus or minus an integer constant (`x`, `x + 2`, `3 + x`, `x - 1`): its name and the
// constant; nothing for any other Expr.
struct ShiftedVar {
    std::string name;
    int64_t offset = 0;
};
std::optional<ShiftedVar> as_shifted_var(const Expr &e);
// The operands of a chain of logical ands (`a && (b && c)` gives a, b, c); e itself otherwise.
std::vector<Expr> conjuncts(const Expr &e);
Value const_value(const Expr &e);                    // the value of a constant
Expr const_of_value(Type t, Value v);                // a constant of type t holding v, already normalized to t
bool is_comparison(Op op);
bool is_arithmetic(Op op);

// The number of nodes of e written out as a tree, saturating at `cap`: an Expr used as the
// operand of several nodes counts once per use (`e = select(c, e * 3, e - 1)` ten times: about
// 2^10 * 6), although e shares it. Linear in the distinct nodes.
uint64_t expanded_size(const Expr &e, uint64_t cap);
// The distinct operations of e outside its calls' coordinates, a shared operand once: what
// computing e costs besides its loads (`a(x) * a(x) + 1`: 2).
uint64_t operation_count(const Expr &e);
// The distinct points of Funcs and inputs e reads, the same point read twice once: its loads
// once compiled (`a(x) * a(x) + a(x + 1)`: 2).
uint64_t distinct_reads(const Expr &e);
// The number of nodes on the longest path from e to a leaf (a constant or a Var has depth 1).
// Neither function recurses: both are safe on an Expr of any depth.
uint64_t expression_depth(const Expr &e);

// Calls fn on e and, while fn returns true, on its operands (pre-order).
void visit(const Expr &e, const std::function<bool(const Expr &)> &fn);
// Rewrites bottom-up: fn receives each node with its operands already rewritten and returns
// the replacement (or the node itself).
Expr transform(const Expr &e, const std::function<Expr(const Expr &)> &fn);
// Replaces Vars by name.
Expr substitute(const Expr &e, const std::map<std::string, Expr> &replacements);
// The same, each rebuilt node folded (fold_constants) as the operators fold what they build:
// (i / 8) * 8 + i % 8 with i substituted is i again.
Expr substitute_and_fold(const Expr &e, const std::map<std::string, Expr> &replacements);

// Names of the pure Vars in e, in order of first appearance.
std::vector<std::string> free_vars(const Expr &e);
// The RDoms whose variables appear in e.
std::vector<std::shared_ptr<RDomContents>> rdoms_in(const Expr &e);
bool contains_call_to(const Expr &e, const FuncContents *f);
// Whether e reads a Func or an input anywhere (a lookup's index computed from data does).
bool reads_data(const Expr &e);

// Constant folding of integer and float constants, using the evaluator's exact semantics.
Expr fold_constants(const Expr &e);

// Evaluates an operation on scalar values, with the DSL's semantics in the given result
// (for comparisons: operand) type. Shared by the interpreter and constant folding.
Value eval_binary(Op op, Type operand_type, Value a, Value b);
Value eval_unary(Op op, Type operand_type, Value a);
Value eval_cast(Type to, Type from, Value v);
Value eval_math(MathFn fn, Type t, const Value *args);
// Rounds/wraps a raw value into type t (ints wrap, floats round to the type's precision).
Value normalize(Type t, Value v);
double value_as_double(Type t, Value v);
Value value_from_double(Type t, double v);  // as cast<t>() of a float64 (saturating)
std::string value_to_string(Type t, Value v);

} // namespace ir
} // namespace tessera
