// The reference expression evaluator: compiles an Expr once into a flat tree whose leaves are
// resolved (variables to slots, calls to strided arrays, Params and input sizes to values),
// then evaluates it at many points with the DSL's exact scalar semantics (ir::eval_*).
// The reference interpreter and the AST interpreter of poly/ both execute statements with it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessera/buffer.h"
#include "tessera/ir.h"

namespace tessera {

// A strided array of one scalar type: element (c_0, ..., c_{d-1}) lives at
// base + sum_i (c_i - min_i) * stride_i elements. Every access is checked against
// [min_i, min_i + extent_i); leaving it is an internal error, never an out-of-bounds access.
struct Accessor {
    std::string name;
    Type type;
    uint8_t *base = nullptr;
    int dims = 0;
    int64_t min[kMaxDimensions] = {};
    int64_t extent[kMaxDimensions] = {};
    int64_t stride[kMaxDimensions] = {};

    Value load(const int64_t *coords) const;
    void store(const int64_t *coords, Value v) const;
    uint8_t *address(const int64_t *coords) const;
};

// Loads and stores one scalar of type t from memory.
Value load_scalar(Type t, const uint8_t *p);
void store_scalar(Type t, uint8_t *p, Value v);

// How the leaves of an expression are resolved when it is compiled.
struct EvalBindings {
    std::function<int(const std::string &var)> var_slot;               // Var → slot
    std::function<int(const RDomContents *, int index)> rvar_slot;      // RVar → slot
    std::function<const Accessor *(const ExprNode &call)> accessor;     // FuncCall / InputCall
    std::function<Value(const ParamContents &)> param;                  // defaults: bound value
    std::function<int64_t(const InputContents &, int dim, int which)> buffer_dim;
};

class CompiledExpr {
public:
    CompiledExpr() = default;
    CompiledExpr(const Expr &e, const EvalBindings &bindings);
    bool defined() const { return root_ >= 0; }
    Type type() const { return type_; }
    Value eval(const Value *slots) const { return eval_node(root_, slots); }

private:
    struct Node {
        Op op;
        MathFn fn = MathFn::Sqrt;
        Type type, arg_type;
        int first = 0, count = 0;  // operands: args_[first .. first + count)
        int slot = -1;
        Value imm{};
        const Accessor *acc = nullptr;
    };
    int compile(const Expr &e, const EvalBindings &b);
    Value eval_node(int i, const Value *slots) const;

    std::vector<Node> nodes_;
    std::vector<int> args_;
    int root_ = -1;
    Type type_;
};

} // namespace tessera
