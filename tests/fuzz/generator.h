// Internal to the fuzzer's generator (pipeline_generator.cpp: the pipeline's declarations and
// definitions; expression_generator.cpp: the random expressions in them): Exprs built together
// with their C++ text, what a definition may read, and the Generator.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fuzz_internal.h"

namespace tessera::fuzz::detail {

// ---- Exprs with their source text ------------------------------------------------------------

// An Expr and the C++ text that builds it.
struct Code {
    Expr expr;
    std::string text;
    Type type() const { return expr.type(); }
};

inline std::string cpp_type(Type t) {
    switch (t.code) {
    case TypeCode::Int: return t.bits == 32 ? "int" : "int" + std::to_string(t.bits) + "_t";
    case TypeCode::UInt: return "uint" + std::to_string(t.bits) + "_t";
    case TypeCode::Float: return t.bits == 16 ? "float16_t" : t.bits == 32 ? "float" : "double";
    case TypeCode::BFloat: return "bfloat16_t";
    }
    return "?";
}

// A float value (a multiple of 1/4, or a large power of ten) as a C++ literal without suffix.
inline std::string real_literal(double v) {
    std::ostringstream s;
    s.precision(17);
    s << v;
    std::string text = s.str();
    if (text.find_first_of(".e") == std::string::npos) text += ".0";
    return text;
}

// A constant of type t: `integer` wrapped to t for integer types, `real` for float types.
inline Code constant(Type t, int64_t integer, double real) {
    switch (t.code) {
    case TypeCode::Int:
        if (t.bits == 8) return {Expr(int8_t(integer)), "Expr(int8_t(" + std::to_string(int8_t(integer)) + "))"};
        if (t.bits == 16) return {Expr(int16_t(integer)), "Expr(int16_t(" + std::to_string(int16_t(integer)) + "))"};
        // The literal of the smallest value would not have the type (-2147483648 is a long).
        if (t.bits == 32) {
            int32_t v = int32_t(integer);
            return {Expr(v), v == INT32_MIN ? "Expr(INT32_MIN)" : "Expr(" + std::to_string(v) + ")"};
        }
        return {Expr(integer),
                integer == INT64_MIN ? "Expr(INT64_MIN)" : "Expr(int64_t(" + std::to_string(integer) + "))"};
    case TypeCode::UInt:
        if (t.bits == 8) return {Expr(uint8_t(integer)), "Expr(uint8_t(" + std::to_string(uint8_t(integer)) + "))"};
        if (t.bits == 16) return {Expr(uint16_t(integer)), "Expr(uint16_t(" + std::to_string(uint16_t(integer)) + "))"};
        if (t.bits == 32) return {Expr(uint32_t(integer)), "Expr(uint32_t(" + std::to_string(uint32_t(integer)) + "u))"};
        return {Expr(uint64_t(integer)), "Expr(uint64_t(" + std::to_string(uint64_t(integer)) + "ull))"};
    case TypeCode::Float:
        if (t.bits == 16) return {Expr(float16_t(real)), "Expr(float16_t(" + real_literal(real) + "))"};
        if (t.bits == 32) return {Expr(float(real)), "Expr(" + real_literal(real) + "f)"};
        return {Expr(real), "Expr(" + real_literal(real) + ")"};
    case TypeCode::BFloat: return {Expr(bfloat16_t(real)), "Expr(bfloat16_t(" + real_literal(real) + "))"};
    }
    return {};
}

inline Code int_constant(int v) { return {Expr(v), "Expr(" + std::to_string(v) + ")"}; }

// Converts to t; nothing (in the Expr or the text) when it already has type t.
inline Code cast_to(Type t, const Code &a) {
    if (a.type() == t) return a;
    return {cast(t, a.expr), "cast<" + cpp_type(t) + ">(" + a.text + ")"};
}

inline Code infix(const Code &a, const char *op, const Code &b, Expr e) {
    return {std::move(e), "(" + a.text + " " + op + " " + b.text + ")"};
}

inline Code function(const char *name, const Code &a, Expr e) { return {std::move(e), std::string(name) + "(" + a.text + ")"}; }

inline Code function(const char *name, const Code &a, const Code &b, Expr e) {
    return {std::move(e), std::string(name) + "(" + a.text + ", " + b.text + ")"};
}

enum class Binary { Add, Sub, Mul, Div, Mod, Min, Max, BitAnd, BitOr, BitXor, Shl, Shr, LT, LE, GT, GE, EQ, NE, And, Or };

inline Code binary(Binary op, const Code &a, const Code &b) {
    const Expr &x = a.expr, &y = b.expr;
    switch (op) {
    case Binary::Add: return infix(a, "+", b, x + y);
    case Binary::Sub: return infix(a, "-", b, x - y);
    case Binary::Mul: return infix(a, "*", b, x * y);
    case Binary::Div: return infix(a, "/", b, x / y);
    case Binary::Mod: return infix(a, "%", b, x % y);
    case Binary::Min: return function("min", a, b, min(x, y));
    case Binary::Max: return function("max", a, b, max(x, y));
    case Binary::BitAnd: return infix(a, "&", b, x & y);
    case Binary::BitOr: return infix(a, "|", b, x | y);
    case Binary::BitXor: return infix(a, "^", b, x ^ y);
    case Binary::Shl: return infix(a, "<<", b, x << y);
    case Binary::Shr: return infix(a, ">>", b, x >> y);
    case Binary::LT: return infix(a, "<", b, x < y);
    case Binary::LE: return infix(a, "<=", b, x <= y);
    case Binary::GT: return infix(a, ">", b, x > y);
    case Binary::GE: return infix(a, ">=", b, x >= y);
    case Binary::EQ: return infix(a, "==", b, x == y);
    case Binary::NE: return infix(a, "!=", b, x != y);
    case Binary::And: return infix(a, "&&", b, x && y);
    case Binary::Or: return infix(a, "||", b, x || y);
    }
    return a;
}

inline bool is_integer_constant(const Code &c) { return c.expr->op == Op::IntConst || c.expr->op == Op::UIntConst; }

// An integer constant meeting an integer Expr of another type must fit in that type (docs/dsl.md,
// promotion rule 1); cast it there explicitly instead, so that every generated operation is legal.
inline void reconcile(Code &a, Code &b) {
    if (a.type() == b.type()) return;
    auto integer = [](Type t) { return t.is_int_or_uint() && !t.is_bool(); };
    if (is_integer_constant(b) && !ir::is_const(a.expr) && integer(a.type())) b = cast_to(a.type(), b);
    else if (is_integer_constant(a) && !ir::is_const(b.expr) && integer(b.type())) a = cast_to(b.type(), a);
}

// The Exprs of the arguments `args`, and the text of the call `name(args...)`.
inline std::pair<std::vector<Expr>, std::string> call_parts(const std::string &name, const std::vector<Code> &args) {
    std::vector<Expr> exprs;
    std::vector<std::string> text;
    for (const Code &c : args) {
        exprs.push_back(c.expr);
        text.push_back(c.text);
    }
    return {exprs, name + "(" + join(text) + ")"};
}

// Adds a constant offset: `x`, `(x + 2)` or `(x - 1)`.
inline Code plus(const Code &a, int offset) {
    if (offset == 0) return a;
    if (offset > 0) return {a.expr + offset, "(" + a.text + " + " + std::to_string(offset) + ")"};
    return {a.expr - (-offset), "(" + a.text + " - " + std::to_string(-offset) + ")"};
}

// ---- The generated pipeline ------------------------------------------------------------------

// Something a definition can read: a Func, an InputBuffer or a Buffer.
struct Source {
    std::string name;  // its variable in the reproduction
    int dimensions = 0;
    Type type;
    std::function<Expr(const std::vector<Expr> &)> read;
    int owner = 0;                   // the declaration that defines it (see Generator::emit)
    bool read_only_through_boundary = false;  // a small input: direct reads usually fall outside it
    bool readable = true;            // false for an output that the other output must not read
    int reads = 0;
};

struct FuncInfo {
    Func func;
    std::string name;
    std::vector<Code> vars;
    Type type;
};

struct InputInfo {
    std::string name;
    int dimensions = 0;
    Type type;
    bool small = false;
    bool embedded = false;  // a Buffer inside the definitions rather than an InputBuffer
    InputBuffer<void> input;
    Buffer<void> data;
    std::vector<int> mins, extents;
    int owner = 0;
    size_t source = 0;  // its direct reads in Generator::sources_
};

struct ParamInfo {
    Param<void> param;
    std::string name;
    int owner = 0;
};

// What a definition's expressions may use.
struct Scope {
    std::vector<Code> pure;       // pure Vars bound on the left of the definition
    std::vector<Code> reduction;  // the RVars of its RDom, or of the inline reduction being built
    int reductions_around = 0;    // inline reductions enclosing the expression
    std::vector<Code> bases() const {
        std::vector<Code> all = pure;
        all.insert(all.end(), reduction.begin(), reduction.end());
        return all;
    }
};

struct RDomInfo {
    std::string name;  // its variable in the reproduction
    RDom rdom;
    std::vector<Code> vars;
    std::vector<int> constant_mins;  // the min of each dimension, when a constant
};

inline const std::vector<Type> kTypes = {Int(32), UInt(8), Int(16), Float(32), Float(64),
                                  Int(8),  UInt(16), UInt(32), Int(64),  Float(16)};

enum class Boundary { RepeatEdge, ConstantExterior, MirrorImage, MirrorInterior, RepeatImage };
inline const char *boundary_name(Boundary b) {
    switch (b) {
    case Boundary::RepeatEdge: return "repeat_edge";
    case Boundary::ConstantExterior: return "constant_exterior";
    case Boundary::MirrorImage: return "mirror_image";
    case Boundary::MirrorInterior: return "mirror_interior";
    case Boundary::RepeatImage: return "repeat_image";
    }
    return "?";
}

// Builds one random pipeline from a stream of choices, with its reproduction.
class Generator {
public:
    Generator(Choices &choices, const FuzzSettings &settings) : choices_(choices), settings_(settings) {}

    GeneratedPipeline generate();

    // The reproduction: every statement that the outputs depend on, then the realization and the
    // comparison. Before generate() finishes (it threw), every statement written so far.
    std::string reproduction() const;

private:
    // ---- the reproduction's statements
    static constexpr int kAlways = -1;  // the owner of statements every reproduction prints
    int new_owner() {
        uses_.emplace_back();
        return int(uses_.size()) - 1;
    }
    void emit(int owner, const std::string &statement) { statements_.emplace_back(owner, statement); }
    // The owner of the declaration of the Func or input named `name` (kAlways if none).
    int owner_of(const std::string &name) const {
        for (const Source &src : sources_)
            if (src.name == name) return src.owner;
        return kAlways;
    }
    void use(int owner) {
        if (current_owner_ >= 0) uses_[size_t(current_owner_)].push_back(owner);
    }

    // ---- declarations
    void make_inputs();
    void make_params();
    void make_options(int dimensions);
    void make_outputs(const std::vector<FuncInfo> &funcs);
    // Random scheduling directives on every stage of `funcs` (FuzzSettings::directives); one the
    // DSL refuses where it is written is left out.
    void add_directives(const std::vector<FuncInfo> &funcs);
    // Its parts: loop directives on every stage; some pure Funcs inlined (refused when compiling
    // for an output); a producer computed in a later Func's tiles. `fresh` numbers new Vars.
    void add_loop_directives(const std::vector<FuncInfo> &funcs, int &fresh);
    void add_compute_inline(const std::vector<FuncInfo> &funcs);
    void add_compute_at(const std::vector<FuncInfo> &funcs, int &fresh);
    void add_bounds(const std::vector<FuncInfo> &funcs);
    void add_boundary(const InputInfo &in, Boundary kind);
    void add_boundary(const FuncInfo &f);
    FuncInfo define_func(int index, int dimensions, bool is_output);
    // A value that computes nothing from what it reads (automatic_inlining.h): a read, or a
    // choice between two reads by a condition on f's Vars, of Funcs or inputs of one type (f's
    // type becomes theirs) at f's own Vars in their places, shifted or halved, constants beyond.
    Code routing_value(FuncInfo &f, const Scope &s);
    void add_update(FuncInfo &f, bool is_output);
    // An RDom with `dimensions` dimensions and, unless `without_predicate`, possibly a predicate
    // over its variables and `pure`. With `force_empty` it has no points: an extent is 0 or the
    // predicate never holds.
    RDomInfo make_rdom(int dimensions, const std::vector<Code> &pure, bool force_empty = false,
                       bool without_predicate = false);
    void assign(const FuncInfo &f, const std::vector<Code> &args, const Code &value);

    // ---- expressions
    Type random_type() { return kTypes[size_t(choices_.weighted({6, 4, 3, 4, 3, 1, 1, 1, 1, 1}))]; }
    int small_int() {  // 0, 1, -1, 2, -2, ..., 8, -8
        int k = choices_.below(17);
        return (k + 1) / 2 * (k % 2 ? 1 : -1);
    }
    Code small_constant(Type t);
    Code value(Type t, const Scope &s, int depth);
    Code leaf(Type t, const Scope &s, int depth);
    Code read(const Scope &s, int depth, const Code *forced = nullptr);
    Code read_source(Source &src, const std::vector<Code> &args);
    Code index(const Scope &s, int position, int depth);
    const Code &near_output(const Scope &s, int position);
    Code condition(const Scope &s, int depth);
    // v + a constant near an end of int32, as int32: the sum wraps for some values of v.
    Code wrapping_sum(const Code &v);
    Code predicate(const RDomInfo &r, const std::vector<Code> &pure);
    Code inline_reduction(Type t, const Scope &s, int depth);

    Choices &choices_;
    const FuzzSettings &settings_;
    std::vector<std::pair<int, std::string>> statements_;  // owner, C++ statement
    std::vector<std::vector<int>> uses_;                   // per owner, the owners it reads
    int current_owner_ = kAlways;
    std::vector<int> output_owners_;
    std::string realization_;  // the statements that realize and compare the outputs
    bool complete_ = false;    // generate() finished

    std::vector<Code> vars_;
    std::vector<InputInfo> inputs_;
    std::vector<ParamInfo> params_;
    std::vector<Source> sources_;
    std::set<std::string> boundary_funcs_;  // names already used by boundary conditions
    int rdoms_ = 0;
    // The outputs lie at one end of int32, where coordinate arithmetic can wrap. Every Func is then
    // read only near the output coordinates (pure Vars plus small offsets): a constant, clamped or
    // RDom coordinate would stretch the box a Func is computed over (the union of what is read) to
    // billions of points.
    bool far_ = false;
    GeneratedPipeline result_;
};

} // namespace tessera::fuzz::detail
