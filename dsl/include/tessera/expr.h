// Expressions of the DSL.
//
// An Expr is an immutable, reference-counted tree of ExprNodes. Each node has an operator (Op),
// a scalar Type and operands. Arithmetic on Exprs follows Halide's conventions: integer
// division rounds toward negative infinity, the remainder of integer division is never
// negative, integer arithmetic wraps, and mixed types are promoted by match_types() (see
// docs/dsl.md, "Types and promotion").
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/error.h"
#include "tessera/type.h"

namespace tessera {

struct FuncContents;
struct InputContents;
struct ParamContents;
struct RDomContents;

enum class Op : uint8_t {
    IntConst, UIntConst, FloatConst,  // constants (bool is a UIntConst of type bool)
    Var,        // pure variable, by name
    RVar,       // reduction variable: rdom + index
    Param,      // scalar parameter
    BufferDim,  // min (which = 0) or extent (which = 1) of dimension `index` of an input
    Cast,
    Add, Sub, Mul, Div, Mod, Min, Max,
    EQ, NE, LT, LE, GT, GE,
    And, Or, Not,
    BitAnd, BitOr, BitXor, BitNot, Shl, Shr,
    Abs,
    Select,     // args: condition, true value, false value
    Math,       // index: MathFn
    Likely,     // args: value; a hint that the value (a condition) is usually true
    FuncCall,   // value of a Func at args
    InputCall,  // value of an input buffer at args
};

enum class MathFn : uint8_t {
    Sqrt, Exp, Log, Pow, Sin, Cos, Tan, Tanh, Floor, Ceil, Round, Trunc, Fma,
};

const char *op_name(Op op);
const char *math_fn_name(MathFn f);

struct ExprNode;

class Expr {
public:
    Expr() = default;
    explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}

    // C++ scalars become constants of the matching type: int → int32, float → float32,
    // double → float64, bool → bool, uint8_t → uint8, and so on.
    template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
    Expr(T value) : Expr(from_scalar(type_of<T>(), value)) {}
    Expr(float16_t value);
    Expr(bfloat16_t value);

    bool defined() const { return node_ != nullptr; }
    Type type() const;
    const ExprNode *get() const { return node_.get(); }
    const ExprNode *operator->() const { return node_.get(); }
    const ExprNode &operator*() const { return *node_; }
    const std::shared_ptr<const ExprNode> &ptr() const { return node_; }
    bool same_as(const Expr &other) const { return node_ == other.node_; }

    Expr &operator+=(const Expr &e);
    Expr &operator-=(const Expr &e);
    Expr &operator*=(const Expr &e);
    Expr &operator/=(const Expr &e);

private:
    template <typename T>
    static Expr from_scalar(Type t, T value) {
        if constexpr (std::is_floating_point_v<T>) return make_float(t, double(value));
        else if constexpr (std::is_signed_v<T>) return make_int(t, int64_t(value));
        else return make_uint(t, uint64_t(value));
    }
    static Expr make_int(Type t, int64_t v);
    static Expr make_uint(Type t, uint64_t v);
    static Expr make_float(Type t, double v);

    std::shared_ptr<const ExprNode> node_;
};

struct ExprNode {
    Op op = Op::IntConst;
    Type type;
    std::vector<Expr> args;
    int64_t int_value = 0;    // IntConst
    uint64_t uint_value = 0;  // UIntConst
    double float_value = 0;   // FloatConst
    std::string name;         // Var / RVar name; Func, input or Param name for printing
    int index = 0;            // RVar: dimension; BufferDim: dimension; Math: MathFn
    int which = 0;            // BufferDim: 0 = min, 1 = extent
    // FuncCall: the callee. `func` keeps it alive; it is null only for a Func's calls to itself
    // inside its own update definitions, which would otherwise form a reference cycle.
    std::shared_ptr<FuncContents> func;
    FuncContents *func_ptr = nullptr;
    std::shared_ptr<InputContents> input;  // InputCall, BufferDim
    std::shared_ptr<ParamContents> param;  // Param
    std::shared_ptr<RDomContents> rdom;    // RVar

    ExprNode() = default;
    ExprNode(const ExprNode &) = default;
    ExprNode &operator=(const ExprNode &) = default;
    // Frees the operands without recursing, so that dropping a very deep chain cannot overflow
    // the stack (see detail::kMaxExprDepth).
    ~ExprNode();
};

inline Type Expr::type() const {
    TESSERA_INTERNAL_ASSERT(node_, "type() of an undefined Expr");
    return node_->type;
}

// Writes the expression in a C-like syntax, e.g. `(f(x + -1, y)*float32(3))`.
std::ostream &operator<<(std::ostream &s, const Expr &e);
std::string to_string(const Expr &e);

// ---- Operators -------------------------------------------------------------------------------
// Two Exprs are brought to a common type by match_types() (docs/dsl.md). A C++ constant takes
// the type of the Expr it meets when it fits (an int constant that does not fit is an error); a
// float constant met with an integer Expr makes the result float32.

namespace detail {
// The most nodes an Expr given to a definition, an inline reduction or an RDom predicate may
// have written out as a tree (ir::expanded_size). Tessera's passes walk expressions as trees:
// an Expr reused at every step of a loop in C++ doubles at each step, and would take them
// exponential time.
constexpr uint64_t kMaxExpandedNodes = 100000;
// The deepest such an Expr may be nested (ir::expression_depth). Tessera's passes recurse
// through operands, a few hundred bytes of stack per level: a chain like `e = e + in(x + i)`
// repeated 30,000 times in C++ would overflow an 8 MiB stack. 4,096 levels stay under 2 MiB,
// so a compile also fits the smaller stacks of worker threads.
constexpr uint64_t kMaxExprDepth = 4096;
// Throws a UserError naming `what` (e.g. "the definition of Func f") when `e` has more nodes
// or levels than the limits above. It does not recurse, so it is safe on any Expr.
void check_expression_size(const std::string &what, const Expr &e);

Expr binary_op(Op op, Expr a, Expr b, const char *what);
Expr binary_with_double(Op op, Expr a, double b, bool constant_on_left, const char *what);
Expr binary_with_int(Op op, Expr a, int64_t b, bool constant_on_left, const char *what);
Expr binary_with_uint(Op op, Expr a, uint64_t b, bool constant_on_left, const char *what);

template <typename T>
Expr binary_with_scalar(Op op, Expr a, T b, bool constant_on_left, const char *what) {
    if constexpr (std::is_same_v<T, bool>) return binary_op(op, a, Expr(b), what);
    else if constexpr (std::is_floating_point_v<T>)
        return binary_with_double(op, std::move(a), double(b), constant_on_left, what);
    else if constexpr (std::is_signed_v<T>)
        return binary_with_int(op, std::move(a), int64_t(b), constant_on_left, what);
    else return binary_with_uint(op, std::move(a), uint64_t(b), constant_on_left, what);
}
} // namespace detail

#define TESSERA_BINARY_OPERATOR(OPERATOR, OP)                                                  \
    inline Expr operator OPERATOR(Expr a, Expr b) {                                           \
        return detail::binary_op(OP, std::move(a), std::move(b), "operator" #OPERATOR);        \
    }                                                                                          \
    template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>                  \
    Expr operator OPERATOR(Expr a, T b) {                                                      \
        return detail::binary_with_scalar(OP, std::move(a), b, false, "operator" #OPERATOR);   \
    }                                                                                          \
    template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>                  \
    Expr operator OPERATOR(T a, Expr b) {                                                      \
        return detail::binary_with_scalar(OP, std::move(b), a, true, "operator" #OPERATOR);    \
    }

TESSERA_BINARY_OPERATOR(+, Op::Add)
TESSERA_BINARY_OPERATOR(-, Op::Sub)
TESSERA_BINARY_OPERATOR(*, Op::Mul)
TESSERA_BINARY_OPERATOR(/, Op::Div)
TESSERA_BINARY_OPERATOR(%, Op::Mod)
TESSERA_BINARY_OPERATOR(==, Op::EQ)
TESSERA_BINARY_OPERATOR(!=, Op::NE)
TESSERA_BINARY_OPERATOR(<, Op::LT)
TESSERA_BINARY_OPERATOR(<=, Op::LE)
TESSERA_BINARY_OPERATOR(>, Op::GT)
TESSERA_BINARY_OPERATOR(>=, Op::GE)
TESSERA_BINARY_OPERATOR(&&, Op::And)
TESSERA_BINARY_OPERATOR(||, Op::Or)
TESSERA_BINARY_OPERATOR(&, Op::BitAnd)
TESSERA_BINARY_OPERATOR(|, Op::BitOr)
TESSERA_BINARY_OPERATOR(^, Op::BitXor)
TESSERA_BINARY_OPERATOR(<<, Op::Shl)
TESSERA_BINARY_OPERATOR(>>, Op::Shr)
#undef TESSERA_BINARY_OPERATOR

Expr operator-(Expr a);
Expr operator!(Expr a);
Expr operator~(Expr a);

// ---- Functions -------------------------------------------------------------------------------

// Converts to type t: float → int truncates toward zero and saturates (NaN gives 0); int → int
// wraps; → float16/bfloat16 rounds to nearest even.
Expr cast(Type t, Expr e);
template <typename T>
Expr cast(Expr e) {
    return cast(type_of<T>(), std::move(e));
}
// `cond ? a : b`, element-wise; a and b are brought to a common type.
Expr select(Expr cond, Expr a, Expr b);
// select(c0, v0, c1, v1, ..., default)
template <typename... Rest>
Expr select(Expr c0, Expr v0, Expr c1, Expr v1, Rest &&...rest) {
    return select(std::move(c0), std::move(v0), select(std::move(c1), std::move(v1), std::forward<Rest>(rest)...));
}
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
template <typename A, typename B, typename... Rest>
Expr min(A a, B b, Rest... rest) {
    if constexpr (sizeof...(rest) == 0) return min(Expr(a), Expr(b));
    else return min(min(Expr(a), Expr(b)), rest...);
}
template <typename A, typename B, typename... Rest>
Expr max(A a, B b, Rest... rest) {
    if constexpr (sizeof...(rest) == 0) return max(Expr(a), Expr(b));
    else return max(max(Expr(a), Expr(b)), rest...);
}
// min(max(e, lo), hi), with lo and hi converted to the type of e.
Expr clamp(Expr e, Expr lo, Expr hi);
// Absolute value. As in Halide, abs of a signed integer is the unsigned type of the same width
// (so abs(INT_MIN) is representable).
Expr abs(Expr e);
// Linear interpolation a*(1 - w) + b*w. For float a and b the weight is a float of the same
// type. For integer a and b, a float weight is used as is and an unsigned integer weight is
// normalized by its type's maximum; the result is rounded to nearest.
Expr lerp(Expr a, Expr b, Expr w);
// Marks a condition as usually true; the value is unchanged.
Expr likely(Expr e);

// Math on float types (integer arguments are converted to float32). The result has the
// argument's type; float16/bfloat16 are computed in float and rounded once.
Expr sqrt(Expr e);
Expr exp(Expr e);
Expr log(Expr e);
Expr pow(Expr base, Expr exponent);
Expr sin(Expr e);
Expr cos(Expr e);
Expr tan(Expr e);
Expr tanh(Expr e);
Expr floor(Expr e);
Expr ceil(Expr e);
// Rounds to nearest, ties to even.
Expr round(Expr e);
Expr trunc(Expr e);
// a*b + c with a single rounding.
Expr fma(Expr a, Expr b, Expr c);

// Constants of a given type.
Expr make_const(Type t, int64_t v);
Expr make_const(Type t, double v);
Expr make_zero(Type t);
Expr make_one(Type t);
Expr make_bool(bool v);

} // namespace tessera
