// The pipeline generator of pipeline_fuzzer.h.
//
// The generator builds each Expr together with the C++ text that builds the same Expr (the same
// calls, in the same order), so the reproduction of a failure is exactly the pipeline that ran.
#include "fuzz_internal.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <typeinfo>

namespace tessera::fuzz::detail {
namespace {

// ---- Exprs with their source text ------------------------------------------------------------

// An Expr and the C++ text that builds it.
struct Code {
    Expr expr;
    std::string text;
    Type type() const { return expr.type(); }
};

std::string cpp_type(Type t) {
    switch (t.code) {
    case TypeCode::Int: return t.bits == 32 ? "int" : "int" + std::to_string(t.bits) + "_t";
    case TypeCode::UInt: return "uint" + std::to_string(t.bits) + "_t";
    case TypeCode::Float: return t.bits == 16 ? "float16_t" : t.bits == 32 ? "float" : "double";
    case TypeCode::BFloat: return "bfloat16_t";
    }
    return "?";
}

// A float value (a multiple of 1/4, or a large power of ten) as a C++ literal without suffix.
std::string real_literal(double v) {
    std::ostringstream s;
    s.precision(17);
    s << v;
    std::string text = s.str();
    if (text.find_first_of(".e") == std::string::npos) text += ".0";
    return text;
}

// A constant of type t: `integer` wrapped to t for integer types, `real` for float types.
Code constant(Type t, int64_t integer, double real) {
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

Code int_constant(int v) { return {Expr(v), "Expr(" + std::to_string(v) + ")"}; }

// Converts to t; nothing (in the Expr or the text) when it already has type t.
Code cast_to(Type t, const Code &a) {
    if (a.type() == t) return a;
    return {cast(t, a.expr), "cast<" + cpp_type(t) + ">(" + a.text + ")"};
}

Code infix(const Code &a, const char *op, const Code &b, Expr e) {
    return {std::move(e), "(" + a.text + " " + op + " " + b.text + ")"};
}

Code function(const char *name, const Code &a, Expr e) { return {std::move(e), std::string(name) + "(" + a.text + ")"}; }

Code function(const char *name, const Code &a, const Code &b, Expr e) {
    return {std::move(e), std::string(name) + "(" + a.text + ", " + b.text + ")"};
}

enum class Binary { Add, Sub, Mul, Div, Mod, Min, Max, BitAnd, BitOr, BitXor, Shl, Shr, LT, LE, GT, GE, EQ, NE, And, Or };

Code binary(Binary op, const Code &a, const Code &b) {
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

bool is_integer_constant(const Code &c) { return c.expr->op == Op::IntConst || c.expr->op == Op::UIntConst; }

// An integer constant meeting an integer Expr of another type must fit in that type (docs/dsl.md,
// promotion rule 1); cast it there explicitly instead, so that every generated operation is legal.
void reconcile(Code &a, Code &b) {
    if (a.type() == b.type()) return;
    auto integer = [](Type t) { return t.is_int_or_uint() && !t.is_bool(); };
    if (is_integer_constant(b) && !ir::is_const(a.expr) && integer(a.type())) b = cast_to(a.type(), b);
    else if (is_integer_constant(a) && !ir::is_const(b.expr) && integer(b.type())) a = cast_to(b.type(), a);
}

// The Exprs of the arguments `args`, and the text of the call `name(args...)`.
std::pair<std::vector<Expr>, std::string> call_parts(const std::string &name, const std::vector<Code> &args) {
    std::vector<Expr> exprs;
    std::vector<std::string> text;
    for (const Code &c : args) {
        exprs.push_back(c.expr);
        text.push_back(c.text);
    }
    return {exprs, name + "(" + join(text) + ")"};
}

// Adds a constant offset: `x`, `(x + 2)` or `(x - 1)`.
Code plus(const Code &a, int offset) {
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

const std::vector<Type> kTypes = {Int(32), UInt(8), Int(16), Float(32), Float(64),
                                  Int(8),  UInt(16), UInt(32), Int(64),  Float(16)};

enum class Boundary { RepeatEdge, ConstantExterior, MirrorImage, MirrorInterior, RepeatImage };
const char *boundary_name(Boundary b) {
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
    void use(int owner) {
        if (current_owner_ >= 0) uses_[size_t(current_owner_)].push_back(owner);
    }

    // ---- declarations
    void make_inputs();
    void make_params();
    void make_options(int dimensions);
    void make_outputs(const std::vector<FuncInfo> &funcs);
    void add_boundary(const InputInfo &in, Boundary kind);
    void add_boundary(const FuncInfo &f);
    FuncInfo define_func(int index, int dimensions, bool is_output);
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

std::string Generator::reproduction() const {
    std::vector<bool> needed(uses_.size(), !complete_);
    std::vector<int> stack = output_owners_;
    while (!stack.empty()) {
        int o = stack.back();
        stack.pop_back();
        if (needed[size_t(o)]) continue;
        needed[size_t(o)] = true;
        for (int u : uses_[size_t(o)]) stack.push_back(u);
    }
    std::string s = "// Needs <cstring>, <tessera/tessera.h>, \"fuzz/pipeline_fuzzer.h\" (for fuzz::fill_buffer) and using "
                    "namespace tessera.\n{\n";
    for (const auto &[owner, statement] : statements_)
        if (owner == kAlways || needed[size_t(owner)]) s += "    " + statement + "\n";
    s += realization_;
    return s + "}\n";
}

GeneratedPipeline Generator::generate() {
    vars_ = {{Var("x"), "x"}, {Var("y"), "y"}, {Var("z"), "z"}};
    emit(kAlways, "Var x(\"x\"), y(\"y\"), z(\"z\");");
    int dimensions = std::min(1 + choices_.weighted({30, 50, 20}), settings_.max_dimensions);
    make_inputs();
    make_params();
    make_options(dimensions);
    int count = choices_.range(1, settings_.max_funcs);
    int outputs = count >= 2 && choices_.percent(25) ? 2 : 1;
    std::vector<FuncInfo> funcs;
    for (int i = 0; i < count; ++i) {
        bool is_output = i >= count - outputs;
        int dims = is_output || choices_.percent(50) ? dimensions : choices_.range(1, settings_.max_dimensions);
        funcs.push_back(define_func(i, dims, is_output));
        // Neither output reads the other: an output read by another Func must cover what that Func
        // reads, which random regions rarely do.
        if (is_output) sources_.back().readable = false;
    }
    make_outputs(std::vector<FuncInfo>(funcs.end() - outputs, funcs.end()));
    complete_ = true;
    return result_;
}

void Generator::make_inputs() {
    int count = choices_.range(1, 3);
    for (int k = 0; k < count; ++k) {
        InputInfo in;
        in.type = random_type();
        in.dimensions = choices_.range(1, settings_.max_dimensions);
        in.embedded = choices_.percent(20);
        in.small = choices_.percent(55);
        in.name = (in.embedded ? "b" : "in") + std::to_string(k);
        // A large input covers what direct reads at small offsets need around any output region
        // the generator picks; a small one is read through boundary conditions.
        static const int large_min[] = {-40, -24, -12}, large_extent[] = {160, 96, 48};
        for (int d = 0; d < in.dimensions; ++d) {
            if (in.small) {
                in.extents.push_back(choices_.one_of<int>({5, 1, 2, 3, 7, 8, 13}));
                in.mins.push_back(choices_.one_of<int>({0, -1, 2, -3}));
            } else {
                in.extents.push_back(large_extent[in.dimensions - 1] + choices_.below(4));
                in.mins.push_back(large_min[in.dimensions - 1] - choices_.below(4));
            }
        }
        uint64_t salt = uint64_t(choices_.below(1 << 30));
        in.owner = new_owner();
        std::string element = cpp_type(in.type), data = in.embedded ? in.name : in.name + "_data";
        in.data = Buffer<void>(in.type, in.extents, data);
        emit(in.owner, "Buffer<" + element + "> " + data + "(std::vector<int>{" + join_numbers(in.extents) + "}, \"" +
                           data + "\");");
        if (std::any_of(in.mins.begin(), in.mins.end(), [](int m) { return m != 0; })) {
            in.data.set_min(std::vector<int64_t>(in.mins.begin(), in.mins.end()));
            emit(in.owner, data + ".set_min({" + join_numbers(in.mins) + "});");
        }
        fill_buffer(in.data, salt);
        emit(in.owner, "fuzz::fill_buffer(" + data + ", " + std::to_string(salt) + ");");
        if (!in.embedded) {
            in.input = InputBuffer<void>(in.type, in.dimensions, in.name);
            in.input.set(in.data);
            emit(in.owner, "InputBuffer<" + element + "> " + in.name + "(\"" + in.name + "\", " +
                               std::to_string(in.dimensions) + ");");
            emit(in.owner, in.name + ".set(" + data + ");");
        }
        Source src;
        src.name = in.name;
        src.dimensions = in.dimensions;
        src.type = in.type;
        if (in.embedded) src.read = [b = in.data](const std::vector<Expr> &a) { return b(a); };
        else src.read = [i = in.input](const std::vector<Expr> &a) { return i(a); };
        src.owner = in.owner;
        src.read_only_through_boundary = in.small;
        in.source = sources_.size();
        sources_.push_back(src);
        inputs_.push_back(in);
        if (in.small || choices_.percent(20)) {
            int kinds = 1 + choices_.below(2);
            for (int i = 0; i < kinds; ++i) add_boundary(in, Boundary(choices_.below(5)));
        }
    }
}

void Generator::add_boundary(const InputInfo &in, Boundary kind) {
    std::string name = in.name + "_" + boundary_name(kind);
    if (!boundary_funcs_.insert(name).second) return;  // the same Func name twice would be ambiguous
    int owner = new_owner();
    uses_[size_t(owner)].push_back(in.owner);
    Func f;
    std::string call = std::string("BoundaryConditions::") + boundary_name(kind) + "(" + in.name;
    if (kind == Boundary::ConstantExterior) {
        Code exterior = small_constant(in.type);
        f = in.embedded ? BoundaryConditions::constant_exterior(in.data, exterior.expr)
                        : BoundaryConditions::constant_exterior(in.input, exterior.expr);
        call += ", " + exterior.text;
    } else {
        using Make = Func (*)(const Buffer<void> &);
        using MakeFromInput = Func (*)(const InputBuffer<void> &);
        static const Make from_buffer[] = {BoundaryConditions::repeat_edge, nullptr, BoundaryConditions::mirror_image,
                                           BoundaryConditions::mirror_interior, BoundaryConditions::repeat_image};
        static const MakeFromInput from_input[] = {BoundaryConditions::repeat_edge, nullptr,
                                                   BoundaryConditions::mirror_image, BoundaryConditions::mirror_interior,
                                                   BoundaryConditions::repeat_image};
        f = in.embedded ? from_buffer[int(kind)](in.data) : from_input[int(kind)](in.input);
    }
    emit(owner, "Func " + name + " = " + call + ");");
    Source src;
    src.name = name;
    src.dimensions = in.dimensions;
    src.type = in.type;
    src.read = [f](const std::vector<Expr> &a) { return Expr(f(a)); };
    src.owner = owner;
    sources_.push_back(src);
}

void Generator::add_boundary(const FuncInfo &fi) {
    Boundary kind = Boundary(choices_.below(5));
    std::string name = fi.name + "_" + boundary_name(kind);
    if (!boundary_funcs_.insert(name).second) return;
    int owner = new_owner();
    uses_[size_t(owner)].push_back(sources_.back().owner);
    BoundaryConditions::Region region;
    std::vector<std::string> region_text;
    for (size_t d = 0; d < fi.vars.size(); ++d) {
        if (choices_.percent(25)) {  // unbounded
            region.emplace_back();
            region_text.push_back("{}");
            continue;
        }
        int min = choices_.range(-2, 2), extent = choices_.range(1, 8);
        region.emplace_back(Expr(min), Expr(extent));
        region_text.push_back("{" + std::to_string(min) + ", " + std::to_string(extent) + "}");
    }
    std::string bounds = "{" + join(region_text) + "}";
    Func f;
    std::string call = std::string("BoundaryConditions::") + boundary_name(kind) + "(" + fi.name;
    switch (kind) {
    case Boundary::RepeatEdge: f = BoundaryConditions::repeat_edge(fi.func, region); break;
    case Boundary::ConstantExterior: {
        Code exterior = small_constant(fi.type);
        f = BoundaryConditions::constant_exterior(fi.func, exterior.expr, region);
        call += ", " + exterior.text;
        break;
    }
    case Boundary::MirrorImage: f = BoundaryConditions::mirror_image(fi.func, region); break;
    case Boundary::MirrorInterior: f = BoundaryConditions::mirror_interior(fi.func, region); break;
    case Boundary::RepeatImage: f = BoundaryConditions::repeat_image(fi.func, region); break;
    }
    emit(owner, "Func " + name + " = " + call + ", " + bounds + ");");
    Source src;
    src.name = name;
    src.dimensions = int(fi.vars.size());
    src.type = fi.type;
    src.read = [f](const std::vector<Expr> &a) { return Expr(f(a)); };
    src.owner = owner;
    sources_.push_back(src);
}

void Generator::make_params() {
    int count = choices_.weighted({60, 30, 10});
    for (int k = 0; k < count; ++k) {
        ParamInfo p;
        p.name = "p" + std::to_string(k);
        p.owner = new_owner();
        if (choices_.percent(30)) {
            double v = small_int() / 4.0;
            Param<float> param(p.name, float(v));
            p.param = param;
            emit(p.owner, "Param<float> " + p.name + "(\"" + p.name + "\", " + real_literal(v) + "f);");
        } else {
            int v = choices_.range(0, 6);
            Param<int> param(p.name, v);
            p.param = param;
            emit(p.owner, "Param<int> " + p.name + "(\"" + p.name + "\", " + std::to_string(v) + ");");
        }
        params_.push_back(p);
    }
}

void Generator::make_options(int dimensions) {
    CompileOptions &o = result_.options;
    o.fusion = choices_.one_of<std::string>({"smart", "none", "max"});
    if (choices_.percent(40))
        for (int d = 0; d < dimensions; ++d) o.tile_sizes.push_back(choices_.one_of<int>({8, 4, 16, 1, 2, 3, 5, 32}));
    o.vectorize = !choices_.percent(30);
    o.parallel = !choices_.percent(20);
    o.threads = choices_.one_of<int>({1, 2});
    // The extents of every output: around tile boundaries, primes and 1.
    std::vector<int> extents;
    for (int d = 0; d < dimensions; ++d) {
        int tile = d < int(o.tile_sizes.size()) ? o.tile_sizes[size_t(d)] : 0;
        if (tile > 0) extents.push_back(choices_.one_of<int>({tile, tile - 1, tile + 1, 2 * tile + 1, 1, 7, 13}));
        else extents.push_back(choices_.one_of<int>({8, 1, 2, 3, 5, 7, 9, 13, 16, 17, 31, 32, 33}));
        extents.back() = std::max(extents.back(), 1);
    }
    auto points = [&] {
        int64_t n = 1;
        for (int e : extents) n *= e;
        return n;
    };
    while (points() > settings_.max_output_points) {
        auto largest = std::max_element(extents.begin(), extents.end());
        *largest = (*largest + 1) / 2;
    }
    // Per output: the same region, or its own; or both at one end of int32 (see far_).
    far_ = choices_.percent(4);
    bool far_high = choices_.percent(50);
    for (int k = 0; k < 2; ++k) {
        OutputShape shape;
        shape.extents = extents;
        for (int d = 0; d < dimensions; ++d) {
            int64_t e = extents[size_t(d)];
            const int64_t int32_max = std::numeric_limits<int32_t>::max(), int32_min = std::numeric_limits<int32_t>::min();
            if (far_ && far_high) shape.mins.push_back(int32_max - e + 1 - choices_.below(3));
            else if (far_) shape.mins.push_back(int32_min + choices_.below(3));
            else shape.mins.push_back(choices_.percent(30) ? small_int() : 0);
        }
        if (k == 1 && (far_ || choices_.percent(60))) shape.mins = result_.outputs[0].mins;
        result_.outputs.push_back(shape);
    }
}

FuncInfo Generator::define_func(int index, int dimensions, bool is_output) {
    FuncInfo f;
    f.name = "f" + std::to_string(index);
    f.func = Func(f.name);
    f.type = random_type();
    f.vars.assign(vars_.begin(), vars_.begin() + dimensions);
    current_owner_ = new_owner();
    int owner = current_owner_;
    emit(owner, "Func " + f.name + "(\"" + f.name + "\");");
    Scope scope;
    scope.pure = f.vars;
    Code v = value(f.type, scope, 1 + choices_.below(3));
    auto [args, lhs] = call_parts(f.name, f.vars);
    f.func(args) = v.expr;
    emit(owner, lhs + " = " + v.text + ";");
    int updates = choices_.weighted({65, 25, 10});
    for (int u = 0; u < updates; ++u) add_update(f, is_output);
    current_owner_ = kAlways;
    Source src;
    src.name = f.name;
    src.dimensions = dimensions;
    src.type = f.type;
    src.read = [func = f.func](const std::vector<Expr> &a) { return Expr(func(a)); };
    src.owner = owner;
    sources_.push_back(src);
    if (is_output) output_owners_.push_back(owner);
    else if (!far_ && choices_.percent(10)) add_boundary(f);  // its bounds lie near 0
    return f;
}

// f(args) = value, or value combined with f's current value there.
void Generator::assign(const FuncInfo &f, const std::vector<Code> &args, const Code &value) {
    auto [a, lhs] = call_parts(f.name, args);
    Code self{Expr(f.func(a)), lhs};
    switch (choices_.weighted({15, 40, 10, 8, 12, 10, 5})) {
    case 0:
        f.func(a) = value.expr;
        emit(current_owner_, lhs + " = " + value.text + ";");
        break;
    case 1:
        f.func(a) += value.expr;
        emit(current_owner_, lhs + " += " + value.text + ";");
        break;
    case 2:
        f.func(a) -= value.expr;
        emit(current_owner_, lhs + " -= " + value.text + ";");
        break;
    case 3:
        f.func(a) *= value.expr;
        emit(current_owner_, lhs + " *= " + value.text + ";");
        break;
    case 4: {
        Code m = binary(Binary::Max, self, value);
        f.func(a) = m.expr;
        emit(current_owner_, lhs + " = " + m.text + ";");
        break;
    }
    case 5: {
        Code m = binary(Binary::Min, self, value);
        f.func(a) = m.expr;
        emit(current_owner_, lhs + " = " + m.text + ";");
        break;
    }
    default: {
        Scope scope;
        scope.pure = args;
        Code c = condition(scope, 0);
        Code s{select(c.expr, value.expr, self.expr), "select(" + c.text + ", " + value.text + ", " + self.text + ")"};
        f.func(a) = s.expr;
        emit(current_owner_, lhs + " = " + s.text + ";");
        break;
    }
    }
}

void Generator::add_update(FuncInfo &f, bool is_output) {
    enum { Accumulate, Coordinates, Scan, Histogram, Empty };
    int kind = choices_.weighted({40, 25, 15, 15, 5});
    // An output's update that writes outside the output's region is a UserError on both paths;
    // keep that to a fraction of the outputs.
    if (is_output && kind != Accumulate && kind != Empty && !choices_.percent(20)) kind = Accumulate;
    if (far_ && kind != Empty) kind = Accumulate;  // the others write at RDom coordinates
    int dims = int(f.vars.size());
    if (kind == Accumulate || kind == Empty) {
        // f(x, y) op= value over an RDom that only reduces: a convolution-like update.
        RDomInfo r = make_rdom(choices_.range(1, 2), f.vars, kind == Empty);
        Scope scope{f.vars, r.vars, 0};
        Code v = cast_to(f.type, read(scope, 1, &r.vars[size_t(choices_.below(int(r.vars.size())))]));
        if (choices_.percent(50)) v = binary(Binary::Add, v, value(f.type, scope, 1));
        assign(f, f.vars, v);
        return;
    }
    if (kind == Histogram) {
        // f(..., clamp(data, lo, hi), ...) += weight over an RDom, possibly one covering an input.
        RDomInfo r;
        Code data;
        std::vector<const InputInfo *> large;
        for (const InputInfo &in : inputs_)
            if (!in.small) large.push_back(&in);
        if (!large.empty() && choices_.percent(40)) {
            const InputInfo &in = *large[size_t(choices_.below(int(large.size())))];
            r.name = "r" + std::to_string(rdoms_++);
            r.rdom = in.embedded ? RDom(in.data) : RDom(in.input);
            emit(current_owner_, "RDom " + r.name + "(" + in.name + ");");
            use(in.owner);
            static const char *fields[] = {".x", ".y", ".z"};
            for (int d = 0; d < in.dimensions; ++d) r.vars.push_back({Expr(r.rdom[d]), r.name + fields[d]});
            data = read_source(sources_[in.source], r.vars);
        } else {
            r = make_rdom(choices_.range(1, 2), {});
            Scope scope{{}, r.vars, 0};
            data = read(scope, 1, &r.vars[0]);
        }
        int bin = choices_.below(dims);
        std::vector<Code> kept, args = f.vars;
        for (int d = 0; d < dims; ++d)
            if (d != bin) kept.push_back(f.vars[size_t(d)]);
        Scope scope{kept, r.vars, 0};
        if (choices_.percent(40)) {
            Code other = value(data.type(), scope, 1);
            reconcile(data, other);
            data = binary(Binary::Add, data, other);
        }
        int lo = choices_.one_of<int>({0, -2, 1, 3}), bins = choices_.one_of<int>({8, 4, 1, 16, 3});
        Code low = int_constant(lo), high = int_constant(lo + bins - 1);
        Code as_int = cast_to(Int(32), data);
        args[size_t(bin)] = {clamp(as_int.expr, low.expr, high.expr),
                             "clamp(" + as_int.text + ", " + low.text + ", " + high.text + ")"};
        Code weight = choices_.percent(60) ? value(f.type, scope, 1) : constant(f.type, 1, 1.0);
        auto [a, lhs] = call_parts(f.name, args);
        f.func(a) += weight.expr;
        emit(current_owner_, lhs + " += " + weight.text + ";");
        return;
    }
    // Coordinates and scans: some arguments are RVars (plus an offset), the others pure Vars.
    RDomInfo r = make_rdom(choices_.range(1, settings_.max_dimensions), {}, false, true);
    std::vector<Code> args = f.vars, kept;
    std::vector<int> reduction_positions;
    for (int d = 0; d < dims; ++d) {
        if (choices_.percent(50)) {
            args[size_t(d)] = plus(r.vars[size_t(choices_.below(int(r.vars.size())))], choices_.range(-1, 1));
            reduction_positions.push_back(d);
        } else {
            kept.push_back(f.vars[size_t(d)]);
        }
    }
    if (reduction_positions.empty()) {
        int d = choices_.below(dims);
        args[size_t(d)] = r.vars[0];
        reduction_positions.push_back(d);
        kept.erase(std::find_if(kept.begin(), kept.end(), [&](const Code &c) { return c.text == f.vars[size_t(d)].text; }));
    }
    // The predicates of the RDom may use the kept Vars, now that they are known.
    if (choices_.percent(30)) {
        Code p = predicate(r, kept);
        r.rdom.where(p.expr);
        emit(current_owner_, r.name + ".where(" + p.text + ");");
    }
    Scope scope{kept, r.vars, 0};
    Code v = value(f.type, scope, 1 + choices_.below(2));
    if (kind == Coordinates) {
        assign(f, args, v);
        return;
    }
    // A scan: f(r) = f(r - k) op value, each point reading one computed before it.
    std::vector<Code> previous = args;
    int p = reduction_positions[size_t(choices_.below(int(reduction_positions.size())))];
    previous[size_t(p)] = plus(args[size_t(p)], -choices_.range(1, 2));
    auto [a, lhs] = call_parts(f.name, args);
    auto [b, earlier_text] = call_parts(f.name, previous);
    Code earlier{Expr(f.func(b)), earlier_text};
    if (choices_.percent(30)) v = {Expr(f.func(a)), lhs};  // a running total of f's own values
    static const std::vector<Binary> combine = {Binary::Add, Binary::Max, Binary::Sub, Binary::Mul};
    Code scan = binary(choices_.one_of(combine), earlier, v);
    f.func(a) = scan.expr;
    emit(current_owner_, lhs + " = " + scan.text + ";");
}

RDomInfo Generator::make_rdom(int dimensions, const std::vector<Code> &pure, bool force_empty,
                                bool without_predicate) {
    RDomInfo r;
    r.name = "r" + std::to_string(rdoms_++);
    const std::string &name = r.name;
    std::vector<Expr> bounds;
    std::vector<std::string> text;
    bool never_true = force_empty && choices_.percent(50);
    int empty_dimension = force_empty && !never_true ? choices_.below(dimensions) : -1;
    for (int d = 0; d < dimensions; ++d) {
        std::vector<const InputInfo *> small;
        for (const InputInfo &in : inputs_)
            if (in.small && !in.embedded) small.push_back(&in);
        int kind = choices_.weighted({85, 10, 5});
        if (kind == 1 && !small.empty() && d != empty_dimension) {
            // The whole extent of a small input's dimension, known only at run time.
            const InputInfo &in = *small[size_t(choices_.below(int(small.size())))];
            int k = choices_.below(in.dimensions);
            bounds.push_back(in.input.dim(k).min());
            bounds.push_back(in.input.dim(k).extent());
            std::string dim = in.name + ".dim(" + std::to_string(k) + ")";
            text.push_back(dim + ".min()");
            text.push_back(dim + ".extent()");
            r.constant_mins.push_back(in.mins[size_t(k)]);
            use(in.owner);
            continue;
        }
        int min = choices_.one_of<int>({0, -1, 1, 2, -2});
        r.constant_mins.push_back(min);
        bounds.push_back(Expr(min));
        text.push_back(std::to_string(min));
        std::vector<const ParamInfo *> ints;
        for (const ParamInfo &p : params_)
            if (p.param.type() == Int(32)) ints.push_back(&p);
        if (kind == 2 && !ints.empty() && d != empty_dimension) {
            const ParamInfo &p = *ints[size_t(choices_.below(int(ints.size())))];
            bounds.push_back(p.param);
            text.push_back(p.name);
            use(p.owner);
            continue;
        }
        int extent = d == empty_dimension ? 0 : std::vector<int>{3, 2, 1, 4, 5, 7, 8, 9, 0}[size_t(
                                                   choices_.weighted({20, 15, 10, 12, 12, 10, 8, 5, 5}))];
        bounds.push_back(Expr(extent));
        text.push_back(std::to_string(extent));
    }
    switch (dimensions) {
    case 1: r.rdom = RDom(bounds[0], bounds[1], name); break;
    case 2: r.rdom = RDom(bounds[0], bounds[1], bounds[2], bounds[3], name); break;
    default: r.rdom = RDom(bounds[0], bounds[1], bounds[2], bounds[3], bounds[4], bounds[5], name); break;
    }
    emit(current_owner_, "RDom " + name + "(" + join(text) + ", \"" + name + "\");");
    static const char *fields[] = {".x", ".y", ".z"};
    for (int d = 0; d < dimensions; ++d) r.vars.push_back({Expr(r.rdom[d]), name + fields[d]});
    Code p;
    if (never_true) {
        size_t k = size_t(choices_.below(dimensions));
        p = binary(Binary::LT, r.vars[k], int_constant(r.constant_mins[k] - 1 - choices_.below(3)));
    } else if (!without_predicate && choices_.percent(30)) {
        p = predicate(r, pure);
    }
    if (p.expr.defined()) {
        r.rdom.where(p.expr);
        emit(current_owner_, name + ".where(" + p.text + ");");
    }
    return r;
}

Code Generator::predicate(const RDomInfo &r, const std::vector<Code> &pure) {
    size_t k = size_t(choices_.below(int(r.vars.size())));
    const Code &v = r.vars[k];
    switch (choices_.weighted({30, 20, 15, 15, 8, 7, 5})) {
    case 0: {
        static const std::vector<Binary> ops = {Binary::LT, Binary::LE, Binary::GT, Binary::GE, Binary::NE, Binary::EQ};
        return binary(choices_.one_of(ops), v, int_constant(choices_.range(-2, 6)));
    }
    case 1:  // triangular
        if (r.vars.size() >= 2) return binary(Binary::LE, r.vars[1], r.vars[0]);
        return binary(Binary::LE, v, int_constant(choices_.range(0, 4)));
    case 2: {  // every other point
        std::vector<Code> others = pure;
        others.insert(others.end(), r.vars.begin(), r.vars.end());
        Code sum = binary(Binary::Add, v, choices_.one_of(others));
        return binary(Binary::EQ, binary(Binary::Mod, sum, int_constant(2)), int_constant(0));
    }
    case 3:  // bounded by a pure Var of the definition
        if (!pure.empty()) return binary(choices_.percent(50) ? Binary::LE : Binary::NE, v, choices_.one_of(pure));
        return binary(Binary::NE, v, int_constant(1));
    case 4:  // below the RDom's min: never true
        return binary(Binary::LT, v, int_constant(r.constant_mins[k] - 1 - choices_.below(3)));
    case 5: {  // depends on data
        Scope scope{pure, r.vars, 0};
        Code data = read(scope, 0, &v);
        return binary(Binary::GT, data, small_constant(data.type()));
    }
    default:
        return binary(choices_.percent(50) ? Binary::And : Binary::Or, predicate(r, pure), predicate(r, pure));
    }
}

Code Generator::small_constant(Type t) {
    if (t.is_float()) {
        if (choices_.percent(3)) return constant(t, 0, choices_.percent(50) ? 1e4 : -1e4);
        return constant(t, 0, small_int() / 4.0);
    }
    if (choices_.percent(3)) {  // an extreme of the type
        if (choices_.percent(50)) return constant(t, t.is_int() ? int64_t(t.min_value()) : 0, 0);
        // The largest value; -1 wraps to the largest uint64.
        int64_t largest = t.bits < 64 ? int64_t(t.max_value()) : t.is_int() ? std::numeric_limits<int64_t>::max() : -1;
        return constant(t, largest, 0);
    }
    int v = small_int();
    return constant(t, t.is_uint() ? std::abs(v) : v, 0);
}

Code Generator::value(Type t, const Scope &s, int depth) {
    if (depth <= 0) return leaf(t, s, 0);
    bool integer = !t.is_float();
    enum { Leaf, Arithmetic, Division, Bitwise, Select, Cast, Unary, Math, Clamp, Reduction };
    int kind = choices_.weighted({24, 22, 6, 6, 9, 8, 5, 4, 4, 8});
    if (kind == Bitwise && !integer) kind = Arithmetic;
    if (kind == Reduction && s.reductions_around >= 2) kind = Leaf;
    switch (kind) {
    case Leaf: return leaf(t, s, depth - 1);
    case Arithmetic: {
        static const std::vector<Binary> ops = {Binary::Add, Binary::Sub, Binary::Mul, Binary::Min, Binary::Max};
        Binary op = choices_.one_of(ops);
        Code a = value(t, s, depth - 1);
        // Sometimes an operand of another type, promoted by the DSL's rules, then cast back.
        Code b = value(choices_.percent(15) ? random_type() : t, s, depth - 1);
        reconcile(a, b);
        return cast_to(t, binary(op, a, b));
    }
    case Division: {
        Code a = value(t, s, depth - 1);
        Code b = choices_.percent(50) ? value(t, s, depth - 1)
                                      : constant(t, choices_.one_of<int>({2, 3, 4, -1, 0, 7, -3, 8}),
                                                 choices_.one_of<double>({2, 0.5, -4, 0, 3}));
        return binary(choices_.percent(50) ? Binary::Mod : Binary::Div, a, b);
    }
    case Bitwise: {
        static const std::vector<Binary> ops = {Binary::BitAnd, Binary::BitOr, Binary::BitXor, Binary::Shl, Binary::Shr};
        Binary op = choices_.one_of(ops);
        Code a = value(t, s, depth - 1);
        bool shift = op == Binary::Shl || op == Binary::Shr;
        Code b = shift && choices_.percent(60)
                     ? constant(t, choices_.one_of<int>({1, 2, 3, -1, t.bits, t.bits + 1, 0}), 0)
                     : value(t, s, depth - 1);
        return binary(op, a, b);
    }
    case Select: {
        Code c = condition(s, depth - 1);
        Code a = value(t, s, depth - 1), b = value(t, s, depth - 1);
        return {select(c.expr, a.expr, b.expr), "select(" + c.text + ", " + a.text + ", " + b.text + ")"};
    }
    case Cast: return cast_to(t, value(random_type(), s, depth - 1));
    case Unary: {
        Code a = value(t, s, depth - 1);
        switch (choices_.below(integer ? 3 : 2)) {
        case 0: return {-a.expr, "(-" + a.text + ")"};
        case 1: return cast_to(t, function("abs", a, abs(a.expr)));  // abs of a signed integer is unsigned
        default: return {~a.expr, "(~" + a.text + ")"};
        }
    }
    case Math: {
        Type real = integer ? (choices_.percent(50) ? Float(32) : Float(64)) : t;
        Code a = value(real, s, depth - 1);
        Code m;
        switch (choices_.weighted({20, 20, 20, 20, 10, 4, 3, 3})) {
        case 0: m = function("floor", a, floor(a.expr)); break;
        case 1: m = function("ceil", a, ceil(a.expr)); break;
        case 2: m = function("round", a, round(a.expr)); break;
        case 3: m = function("trunc", a, trunc(a.expr)); break;
        case 4: m = function("sqrt", a, sqrt(a.expr)); break;
        case 5: m = function("exp", a, exp(a.expr)); break;
        case 6: m = function("log", a, log(a.expr)); break;
        default: m = function("sin", a, sin(a.expr)); break;
        }
        return cast_to(t, m);
    }
    case Clamp: {
        Code a = value(t, s, depth - 1);
        int lo = small_int();
        if (t.is_uint()) lo = std::abs(lo);
        int hi = lo + choices_.below(8);
        Code l = constant(t, lo, lo / 2.0), h = constant(t, hi, hi / 2.0);
        return {clamp(a.expr, l.expr, h.expr), "clamp(" + a.text + ", " + l.text + ", " + h.text + ")"};
    }
    default: return inline_reduction(t, s, depth);
    }
}

Code Generator::leaf(Type t, const Scope &s, int depth) {
    switch (choices_.weighted({20, 55, 15, 10})) {
    case 1: return cast_to(t, read(s, depth));
    case 2: {
        std::vector<Code> bases = s.bases();
        if (bases.empty()) break;
        return cast_to(t, choices_.one_of(bases));
    }
    case 3: {
        if (params_.empty()) break;
        const ParamInfo &p = params_[size_t(choices_.below(int(params_.size())))];
        use(p.owner);
        return cast_to(t, Code{p.param, p.name});
    }
    default: break;
    }
    return small_constant(t);
}

Code Generator::read_source(Source &src, const std::vector<Code> &args) {
    auto [exprs, text] = call_parts(src.name, args);
    ++src.reads;
    use(src.owner);
    return {src.read(exprs), text};
}

// A read of some Func or input; with `forced`, one of its coordinates is `forced` plus an offset.
Code Generator::read(const Scope &s, int depth, const Code *forced) {
    // Reading a small input directly usually reads outside it: a UserError for both paths.
    bool outside_allowed = choices_.percent(2);
    std::vector<size_t> candidates, unread;
    for (size_t i = 0; i < sources_.size(); ++i) {
        const Source &src = sources_[i];
        if (!src.readable || (src.read_only_through_boundary && !outside_allowed)) continue;
        candidates.push_back(i);
        if (src.reads == 0) unread.push_back(i);
    }
    // Prefer what nothing reads yet, so that most Funcs reach the outputs.
    const std::vector<size_t> &pool = !unread.empty() && choices_.percent(40) ? unread : candidates;
    Source &src = sources_[pool[size_t(choices_.below(int(pool.size())))]];
    int forced_position = forced ? choices_.below(src.dimensions) : -1;
    std::vector<Code> args;
    for (int d = 0; d < src.dimensions; ++d) {
        if (d != forced_position) args.push_back(index(s, d, depth));
        else if (far_) args.push_back(binary(Binary::Add, near_output(s, d), *forced));
        else args.push_back(plus(*forced, choices_.range(-1, 1)));
    }
    return read_source(src, args);
}

// A pure Var for coordinate `position` of a read: the one in that position, else any.
const Code &Generator::near_output(const Scope &s, int position) {
    if (position < int(s.pure.size())) return s.pure[size_t(position)];
    return s.pure.empty() ? choices_.one_of(s.reduction) : choices_.one_of(s.pure);
}

Code Generator::index(const Scope &s, int position, int depth) {
    std::vector<Code> bases = s.bases();
    if (bases.empty()) return int_constant(choices_.range(-2, 5));
    const Code &natural = position < int(s.pure.size()) ? s.pure[size_t(position)] : choices_.one_of(bases);
    auto offset = [&] { return choices_.one_of<int>({0, 1, -1, 2, -2, 3, -3}); };
    if (far_) return plus(near_output(s, position), offset());
    switch (choices_.weighted({55, 12, 6, 4, 4, 3, 10, 6})) {
    case 1: return plus(choices_.one_of(bases), offset());
    case 2: return int_constant(choices_.range(-2, 5));
    case 3: {
        const Code &b = choices_.one_of(bases);
        return plus({b.expr * 2, "(" + b.text + " * 2)"}, offset());
    }
    case 4: {
        const Code &b = choices_.one_of(bases);
        return plus({b.expr / 2, "(" + b.text + " / 2)"}, offset());
    }
    case 5: {
        const Code &b = choices_.one_of(bases);
        int c = choices_.range(-2, 4);
        return {c - b.expr, "(" + std::to_string(c) + " - " + b.text + ")"};
    }
    case 6: {
        if (depth <= 0) break;
        // A data-dependent coordinate, bounded by a clamp.
        Code v = cast_to(Int(32), value(random_type(), s, depth - 1));
        int lo = choices_.one_of<int>({0, -2, 1, 3}), hi = lo + choices_.one_of<int>({7, 3, 0, 15});
        Code l = int_constant(lo), h = int_constant(hi);
        return {clamp(v.expr, l.expr, h.expr), "clamp(" + v.text + ", " + l.text + ", " + h.text + ")"};
    }
    case 7: {
        const Code &b = choices_.one_of(bases);
        Code c = int_constant(choices_.range(-1, 6));
        switch (choices_.below(3)) {
        case 0: return binary(Binary::Min, b, c);
        case 1: return binary(Binary::Max, b, c);
        default: return binary(Binary::Mod, b, int_constant(choices_.one_of<int>({3, 5, 8})));
        }
    }
    default: break;
    }
    return plus(natural, offset());
}

Code Generator::condition(const Scope &s, int depth) {
    static const std::vector<Binary> comparisons = {Binary::LT, Binary::LE, Binary::GT,
                                                    Binary::GE, Binary::EQ, Binary::NE};
    Type t = random_type();
    Code a = value(t, s, depth), b = value(t, s, depth);
    reconcile(a, b);
    Code c = binary(choices_.one_of(comparisons), a, b);
    if (choices_.percent(15)) c = binary(choices_.percent(50) ? Binary::And : Binary::Or, c, condition(s, 0));
    if (choices_.percent(10)) c = {!c.expr, "(!" + c.text + ")"};
    return c;
}

Code Generator::inline_reduction(Type t, const Scope &s, int depth) {
    int kind = choices_.weighted({40, 20, 20, 8, 6, 6});
    RDomInfo r = make_rdom(choices_.range(1, 2), s.pure);
    Scope inner{s.pure, r.vars, s.reductions_around + 1};
    Type body_type = choices_.percent(70) ? t : random_type();
    Code body = cast_to(body_type, read(inner, depth - 1, &r.vars[size_t(choices_.below(int(r.vars.size())))]));
    if (choices_.percent(50)) {
        static const std::vector<Binary> ops = {Binary::Add, Binary::Sub, Binary::Mul, Binary::Max};
        body = binary(choices_.one_of(ops), body, value(body_type, inner, depth - 1));
    }
    switch (kind) {
    case 0: return cast_to(t, function("sum", body, sum(body.expr)));
    case 1: return cast_to(t, function("maximum", body, maximum(body.expr)));
    case 2: return cast_to(t, function("minimum", body, minimum(body.expr)));
    case 3: return cast_to(t, function("product", body, product(body.expr)));
    default: {
        bool largest = kind == 4;
        Tuple tuple = largest ? argmax(body.expr) : argmin(body.expr);
        int element = choices_.below(int(tuple.size()));
        std::string text = std::string(largest ? "argmax(" : "argmin(") + body.text + ")[" + std::to_string(element) + "]";
        return cast_to(t, Code{tuple[size_t(element)], text});
    }
    }
}

void Generator::make_outputs(const std::vector<FuncInfo> &funcs) {
    std::vector<Func> outputs;
    std::vector<std::string> names;
    for (const FuncInfo &f : funcs) {
        outputs.push_back(f.func);
        names.push_back(f.name);
    }
    result_.outputs.resize(funcs.size());
    result_.pipeline = Pipeline(outputs);
    const CompileOptions &o = result_.options;
    std::string s;
    auto line = [&](const std::string &statement) { s += "    " + statement + "\n"; };
    line(funcs.size() == 1 ? "Pipeline pipeline(" + names[0] + ");" : "Pipeline pipeline({" + join(names) + "});");
    line("CompileOptions options;");
    line("options.fusion = \"" + o.fusion + "\";");
    if (!o.tile_sizes.empty()) line("options.tile_sizes = {" + join_numbers(o.tile_sizes) + "};");
    if (!o.vectorize) line("options.vectorize = false;");
    if (!o.parallel) line("options.parallel = false;");
    line("options.threads = " + std::to_string(o.threads) + ";");
    std::vector<std::string> got, want;
    for (size_t k = 0; k < funcs.size(); ++k) {
        OutputShape &shape = result_.outputs[k];
        shape.type = funcs[k].type;
        shape.func = funcs[k].name;
        for (const char *prefix : {"out", "want"}) {
            std::string name = prefix + std::to_string(k);
            line("Buffer<" + cpp_type(shape.type) + "> " + name + "(std::vector<int>{" + join_numbers(shape.extents) +
                 "}, \"" + name + "\");");
            if (std::any_of(shape.mins.begin(), shape.mins.end(), [](int64_t m) { return m != 0; }))
                line(name + ".set_min({" + join_numbers(shape.mins) + "});");
            (prefix[0] == 'o' ? got : want).push_back(name);
        }
        line("std::memset(out" + std::to_string(k) + ".raw_data(), 0xa5, out" + std::to_string(k) +
             ".number_of_elements() * sizeof(" + cpp_type(shape.type) + "));  // unwritten elements then differ");
    }
    line("pipeline.compile(Target::host(), options).realize(std::vector<Buffer<void>>{" + join(got) + "});");
    line("interpret(pipeline, std::vector<Buffer<void>>{" + join(want) + "});");
    line("// Compare " + join(got) + " with " + join(want) + " bit for bit (NaN equals NaN).");
    realization_ = s;
}

} // namespace

GeneratedPipeline generate_pipeline(Choices &choices, const FuzzSettings &settings, std::string &reproduction) {
    Generator generator(choices, settings);
    try {
        GeneratedPipeline g = generator.generate();
        reproduction = generator.reproduction();
        return g;
    } catch (...) {
        reproduction = generator.reproduction();
        throw;
    }
}

} // namespace tessera::fuzz::detail
