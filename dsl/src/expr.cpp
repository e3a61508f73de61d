// Expr construction: IR builders, user-facing operators with type promotion, and printing.
#include "tessera/expr.h"

#include <cmath>
#include <sstream>

#include "tessera/ir.h"

namespace tessera {

const char *op_name(Op op) {
    switch (op) {
    case Op::IntConst: return "IntConst";
    case Op::UIntConst: return "UIntConst";
    case Op::FloatConst: return "FloatConst";
    case Op::Var: return "Var";
    case Op::RVar: return "RVar";
    case Op::Param: return "Param";
    case Op::BufferDim: return "BufferDim";
    case Op::Cast: return "cast";
    case Op::Add: return "+";
    case Op::Sub: return "-";
    case Op::Mul: return "*";
    case Op::Div: return "/";
    case Op::Mod: return "%";
    case Op::Min: return "min";
    case Op::Max: return "max";
    case Op::EQ: return "==";
    case Op::NE: return "!=";
    case Op::LT: return "<";
    case Op::LE: return "<=";
    case Op::GT: return ">";
    case Op::GE: return ">=";
    case Op::And: return "&&";
    case Op::Or: return "||";
    case Op::Not: return "!";
    case Op::BitAnd: return "&";
    case Op::BitOr: return "|";
    case Op::BitXor: return "^";
    case Op::BitNot: return "~";
    case Op::Shl: return "<<";
    case Op::Shr: return ">>";
    case Op::Abs: return "abs";
    case Op::Select: return "select";
    case Op::Math: return "math";
    case Op::Likely: return "likely";
    case Op::FuncCall: return "FuncCall";
    case Op::InputCall: return "InputCall";
    }
    return "?";
}

const char *math_fn_name(MathFn f) {
    switch (f) {
    case MathFn::Sqrt: return "sqrt";
    case MathFn::Exp: return "exp";
    case MathFn::Log: return "log";
    case MathFn::Pow: return "pow";
    case MathFn::Sin: return "sin";
    case MathFn::Cos: return "cos";
    case MathFn::Tan: return "tan";
    case MathFn::Tanh: return "tanh";
    case MathFn::Floor: return "floor";
    case MathFn::Ceil: return "ceil";
    case MathFn::Round: return "round";
    case MathFn::Trunc: return "trunc";
    case MathFn::Fma: return "fma";
    }
    return "?";
}

// ---- Nodes ----------------------------------------------------------------------------------

ExprNode::~ExprNode() {
    // The default destructor would release the operands recursively, one stack frame per level
    // of a chain. Instead, operands that this node alone keeps alive are moved to a work list and
    // released there once their own operands have been taken from them.
    std::vector<Expr> pending;
    for (Expr &a : args)
        if (a.ptr().use_count() == 1) pending.push_back(std::move(a));
    while (!pending.empty()) {
        Expr e = std::move(pending.back());
        pending.pop_back();
        // `e` holds the only reference, so nobody else can observe its operands being taken.
        auto &operands = const_cast<std::vector<Expr> &>(e->args);
        for (Expr &a : operands)
            if (a.ptr().use_count() == 1) pending.push_back(std::move(a));
        operands.clear();
    }  // `e` is released here with no operands left to recurse into
}

// ---- Constants ------------------------------------------------------------------------------

namespace {

std::shared_ptr<ExprNode> new_node(Op op, Type t) {
    auto n = std::make_shared<ExprNode>();
    n->op = op;
    n->type = t;
    return n;
}

} // namespace

Expr Expr::make_int(Type t, int64_t v) {
    Value val;
    val.i = v;
    if (t.is_uint()) val.u = uint64_t(v);
    return ir::const_of_value(t, ir::normalize(t, val));
}

Expr Expr::make_uint(Type t, uint64_t v) {
    Value val;
    val.u = v;
    return ir::const_of_value(t, ir::normalize(t, val));
}

Expr Expr::make_float(Type t, double v) {
    Value val;
    val.f = v;
    return ir::const_of_value(t, ir::normalize(t, val));
}

Expr::Expr(float16_t value) : Expr(make_float(Float(16), value.to_double())) {}
Expr::Expr(bfloat16_t value) : Expr(make_float(BFloat(16), value.to_double())) {}

Expr make_const(Type t, int64_t v) {
    Value val;
    if (t.is_float()) val.f = double(v);
    else val.i = v;
    return ir::const_of_value(t, ir::normalize(t, val));
}

Expr make_const(Type t, double v) {
    if (t.is_float()) {
        Value val;
        val.f = v;
        return ir::const_of_value(t, ir::normalize(t, val));
    }
    return ir::const_of_value(t, ir::value_from_double(t, v));
}

Expr make_zero(Type t) { return make_const(t, int64_t(0)); }
Expr make_one(Type t) { return make_const(t, int64_t(1)); }
Expr make_bool(bool v) { return make_const(Bool(), int64_t(v ? 1 : 0)); }

// ---- IR builders ----------------------------------------------------------------------------

namespace ir {

Expr const_of_value(Type t, Value v) {
    if (t.is_float()) {
        auto n = new_node(Op::FloatConst, t);
        n->float_value = v.f;
        return Expr(std::move(n));
    }
    if (t.is_int()) {
        auto n = new_node(Op::IntConst, t);
        n->int_value = v.i;
        return Expr(std::move(n));
    }
    auto n = new_node(Op::UIntConst, t);
    n->uint_value = v.u;
    return Expr(std::move(n));
}

Value const_value(const Expr &e) {
    Value v;
    switch (e->op) {
    case Op::IntConst: v.i = e->int_value; break;
    case Op::UIntConst: v.u = e->uint_value; break;
    default: v.f = e->float_value; break;
    }
    return v;
}


Expr make_var(const std::string &name, Type t) {
    auto n = new_node(Op::Var, t);
    n->name = name;
    return Expr(std::move(n));
}

Expr make_rvar(const std::shared_ptr<RDomContents> &rdom, int index) {
    auto n = new_node(Op::RVar, Int(32));
    n->rdom = rdom;
    n->index = index;
    n->name = rdom->dims[size_t(index)].name;
    return Expr(std::move(n));
}

Expr make_param(const std::shared_ptr<ParamContents> &param) {
    auto n = new_node(Op::Param, param->type);
    n->param = param;
    n->name = param->name;
    return Expr(std::move(n));
}

Expr make_buffer_dim(const std::shared_ptr<InputContents> &input, int dim, int which) {
    auto n = new_node(Op::BufferDim, Int(32));
    n->input = input;
    n->index = dim;
    n->which = which;
    n->name = input->name;
    return Expr(std::move(n));
}

Expr make_func_call(const std::shared_ptr<FuncContents> &func, std::vector<Expr> args) {
    auto n = new_node(Op::FuncCall, func->type);
    n->func = func;
    n->func_ptr = func.get();
    n->name = func->name;
    n->args = std::move(args);
    return Expr(std::move(n));
}

Expr make_input_call(const std::shared_ptr<InputContents> &input, std::vector<Expr> args) {
    auto n = new_node(Op::InputCall, input->type);
    n->input = input;
    n->name = input->name;
    n->args = std::move(args);
    return Expr(std::move(n));
}

Expr make_cast(Type t, Expr e) {
    TESSERA_INTERNAL_ASSERT(e.defined());
    if (e.type() == t) return e;
    if (is_const(e)) return ir::const_of_value(t, eval_cast(t, e.type(), ir::const_value(e)));
    auto n = new_node(Op::Cast, t);
    n->args = {std::move(e)};
    return Expr(std::move(n));
}

Expr make_binary(Op op, Expr a, Expr b) {
    TESSERA_INTERNAL_ASSERT(a.defined() && b.defined());
    TESSERA_INTERNAL_ASSERT(a.type() == b.type(), "make_binary ", op_name(op), ": ", a.type(), " vs ", b.type());
    Type t = (is_comparison(op) || op == Op::And || op == Op::Or) ? Bool() : a.type();
    auto n = new_node(op, t);
    n->args = {std::move(a), std::move(b)};
    return Expr(std::move(n));
}

Expr make_unary(Op op, Expr a) {
    TESSERA_INTERNAL_ASSERT(a.defined());
    Type t = a.type();
    if (op == Op::Not) t = Bool();
    if (op == Op::Abs && t.is_int()) t = UInt(t.bits);
    auto n = new_node(op, t);
    n->args = {std::move(a)};
    return Expr(std::move(n));
}

Expr make_select(Expr cond, Expr a, Expr b) {
    TESSERA_INTERNAL_ASSERT(cond.type().is_bool() && a.type() == b.type());
    auto n = new_node(Op::Select, a.type());
    n->args = {std::move(cond), std::move(a), std::move(b)};
    return Expr(std::move(n));
}

Expr make_math(MathFn fn, std::vector<Expr> args) {
    TESSERA_INTERNAL_ASSERT(!args.empty() && args[0].type().is_float());
    auto n = new_node(Op::Math, args[0].type());
    n->index = int(fn);
    n->args = std::move(args);
    return Expr(std::move(n));
}

Expr rebuild(const Expr &like, std::vector<Expr> args) {
    auto n = std::make_shared<ExprNode>(*like.get());
    n->args = std::move(args);
    return Expr(std::move(n));
}

bool is_const(const Expr &e) {
    return e.defined() && (e->op == Op::IntConst || e->op == Op::UIntConst || e->op == Op::FloatConst);
}

std::optional<int64_t> as_const_int(const Expr &e) {
    if (!e.defined()) return std::nullopt;
    if (e->op == Op::IntConst) return e->int_value;
    if (e->op == Op::UIntConst && e->uint_value <= uint64_t(INT64_MAX)) return int64_t(e->uint_value);
    return std::nullopt;
}

std::optional<ShiftedVar> as_shifted_var(const Expr &e) {
    if (e->op == Op::Var) return ShiftedVar{e->name, 0};
    if (e->op != Op::Add && e->op != Op::Sub) return std::nullopt;
    const Expr &a = e->args[0], &b = e->args[1];
    std::optional<int64_t> cb = as_const_int(b), ca = as_const_int(a);
    if (a->op == Op::Var && cb && *cb != INT64_MIN) return ShiftedVar{a->name, e->op == Op::Add ? *cb : -*cb};
    if (e->op == Op::Add && b->op == Op::Var && ca) return ShiftedVar{b->name, *ca};
    return std::nullopt;
}

std::vector<Expr> conjuncts(const Expr &e) {
    if (e->op != Op::And) return {e};
    std::vector<Expr> out = conjuncts(e->args[0]), right = conjuncts(e->args[1]);
    out.insert(out.end(), right.begin(), right.end());
    return out;
}

bool is_comparison(Op op) {
    return op == Op::EQ || op == Op::NE || op == Op::LT || op == Op::LE || op == Op::GT || op == Op::GE;
}

bool is_arithmetic(Op op) {
    return op == Op::Add || op == Op::Sub || op == Op::Mul || op == Op::Div || op == Op::Mod;
}

} // namespace ir

// ---- Type promotion -------------------------------------------------------------------------

namespace {

std::string describe(const Expr &e) {
    std::string s = to_string(e);
    if (s.size() > 80) s = s.substr(0, 77) + "...";
    return s;
}

// The constant c converted to type t.
Expr make_const_like(const Expr &c, Type t) {
    if (c->op == Op::FloatConst) return make_const(t, c->float_value);
    if (c->op == Op::IntConst) return make_const(t, c->int_value);
    if (t.is_float()) return make_const(t, double(c->uint_value));
    return make_const(t, int64_t(c->uint_value));
}

// Whether the constant c is representable in type t.
bool constant_fits(const Expr &c, Type t) {
    if (c->op == Op::FloatConst) return t.is_float();
    if (t.is_float()) return true;
    if (c->op == Op::IntConst) return t.can_represent(c->int_value);
    return c->uint_value <= uint64_t(INT64_MAX) && t.can_represent(int64_t(c->uint_value));
}

// Brings a and b to a common type, following Halide's rules (docs/dsl.md):
//  1. equal types: nothing to do;
//  2. a constant meets a non-constant: the constant takes the other type if it fits there;
//  3. one float, one not: the non-float becomes that float type;
//  4. both float: the narrower is widened (float16 with bfloat16 gives float32);
//  5. both integer: same signedness widens the narrower; mixed signedness gives the signed type
//     of the larger width. bool meets an integer: the bool becomes that integer type.
void match_types(Expr &a, Expr &b, const char *what) {
    Type ta = a.type(), tb = b.type();
    if (ta == tb) return;
    bool ca = ir::is_const(a), cb = ir::is_const(b);
    if (ca && !cb && constant_fits(a, tb)) {
        a = make_const_like(a, tb);
        return;
    }
    if (cb && !ca && constant_fits(b, ta)) {
        b = make_const_like(b, ta);
        return;
    }
    if (ca && !cb && a->op == Op::IntConst && tb.is_int_or_uint() && !tb.is_bool()) {
        user_error(what, ": the constant ", describe(a), " does not fit in ", tb, ", the type of ",
                   describe(b), ". Use a constant in range or cast the expression to a wider type.");
    }
    if (cb && !ca && b->op == Op::IntConst && ta.is_int_or_uint() && !ta.is_bool()) {
        user_error(what, ": the constant ", describe(b), " does not fit in ", ta, ", the type of ",
                   describe(a), ". Use a constant in range or cast the expression to a wider type.");
    }
    Type t;
    if (ta.is_float() && !tb.is_float()) t = ta;
    else if (tb.is_float() && !ta.is_float()) t = tb;
    else if (ta.is_float() && tb.is_float()) {
        if (ta.bits == tb.bits) t = Float(32);  // float16 with bfloat16
        else t = ta.bits > tb.bits ? ta : tb;
    } else if (ta.is_bool()) t = tb;
    else if (tb.is_bool()) t = ta;
    else if (ta.code == tb.code) t = ta.bits > tb.bits ? ta : tb;
    else t = Int(std::max(ta.bits, tb.bits));
    a = ir::make_cast(t, a);
    b = ir::make_cast(t, b);
}

} // namespace

namespace detail {

Expr binary_op(Op op, Expr a, Expr b, const char *what) {
    if (!a.defined() || !b.defined())
        user_error(what, ": an operand is an undefined Expr. Give every Expr a value before using it.");
    if (op == Op::And || op == Op::Or) {
        if (!a.type().is_bool() || !b.type().is_bool())
            user_error(what, " needs bool operands, but got ", a.type(), " (", describe(a), ") and ",
                       b.type(), " (", describe(b), "). Compare with a value (e != 0) to make a bool.");
        return ir::fold_constants(ir::make_binary(op, std::move(a), std::move(b)));
    }
    match_types(a, b, what);
    Type t = a.type();
    if (ir::is_arithmetic(op) && t.is_bool())
        user_error(what, " is not defined on bool operands (", describe(a), ", ", describe(b),
                   "). Cast them to an integer type first.");
    if ((op == Op::BitAnd || op == Op::BitOr || op == Op::BitXor || op == Op::Shl || op == Op::Shr) &&
        t.is_float())
        user_error(what, " needs integer operands, but got ", t, " (", describe(a), ", ", describe(b),
                   "). Cast to an integer type, or reinterpret the bits explicitly.");
    if ((op == Op::LT || op == Op::LE || op == Op::GT || op == Op::GE) && t.is_bool())
        user_error(what, " compares bool operands (", describe(a), ", ", describe(b),
                   "); cast them to an integer type to order them.");
    return ir::fold_constants(ir::make_binary(op, std::move(a), std::move(b)));
}

Expr binary_with_double(Op op, Expr a, double b, bool constant_on_left, const char *what) {
    if (!a.defined()) user_error(what, ": an operand is an undefined Expr.");
    Expr c;
    if (a.type().is_float()) {
        c = make_const(a.type(), b);
    } else {
        // An integer Expr meeting a float constant computes in float32, as in Halide.
        a = ir::make_cast(Float(32), a);
        c = make_const(Float(32), b);
    }
    return constant_on_left ? binary_op(op, c, a, what) : binary_op(op, a, c, what);
}

Expr binary_with_int(Op op, Expr a, int64_t b, bool constant_on_left, const char *what) {
    if (!a.defined()) user_error(what, ": an operand is an undefined Expr.");
    Type t = a.type();
    Expr c;
    if (t.is_float()) {
        c = make_const(t, double(b));
    } else if (t.is_bool()) {
        c = make_const(Int(32), b);  // the bool is promoted to int32 by match_types
    } else {
        if (!t.can_represent(b))
            user_error(what, ": the constant ", b, " does not fit in ", t, ", the type of ", describe(a),
                       ". Use a constant in range or cast the expression to a wider type.");
        c = make_const(t, b);
    }
    return constant_on_left ? binary_op(op, c, a, what) : binary_op(op, a, c, what);
}

Expr binary_with_uint(Op op, Expr a, uint64_t b, bool constant_on_left, const char *what) {
    if (b <= uint64_t(INT64_MAX)) return binary_with_int(op, std::move(a), int64_t(b), constant_on_left, what);
    Expr c = Expr(b);
    return constant_on_left ? binary_op(op, c, a, what) : binary_op(op, a, c, what);
}

} // namespace detail

Expr &Expr::operator+=(const Expr &e) { return *this = *this + e; }
Expr &Expr::operator-=(const Expr &e) { return *this = *this - e; }
Expr &Expr::operator*=(const Expr &e) { return *this = *this * e; }
Expr &Expr::operator/=(const Expr &e) { return *this = *this / e; }

Expr operator-(Expr a) {
    if (!a.defined()) user_error("unary operator-: the operand is an undefined Expr.");
    if (a.type().is_bool()) user_error("unary operator- is not defined on bool (", describe(a), ").");
    Expr zero = make_zero(a.type());
    return ir::fold_constants(ir::make_binary(Op::Sub, zero, a));
}

Expr operator!(Expr a) {
    if (!a.defined()) user_error("operator!: the operand is an undefined Expr.");
    if (!a.type().is_bool())
        user_error("operator! needs a bool operand, but got ", a.type(), " (", describe(a), ").");
    return ir::fold_constants(ir::make_unary(Op::Not, std::move(a)));
}

Expr operator~(Expr a) {
    if (!a.defined()) user_error("operator~: the operand is an undefined Expr.");
    if (a.type().is_float())
        user_error("operator~ needs an integer operand, but got ", a.type(), " (", describe(a), ").");
    return ir::fold_constants(ir::make_unary(Op::BitNot, std::move(a)));
}

// ---- Functions ------------------------------------------------------------------------------

Expr cast(Type t, Expr e) {
    if (!e.defined()) user_error("cast<", t, ">: the operand is an undefined Expr.");
    return ir::make_cast(t, std::move(e));
}

Expr select(Expr cond, Expr a, Expr b) {
    if (!cond.defined() || !a.defined() || !b.defined())
        user_error("select: an operand is an undefined Expr.");
    if (!cond.type().is_bool())
        user_error("select: the condition ", describe(cond), " has type ", cond.type(),
                   ", but must be bool. Compare it with a value (e != 0) to make a bool.");
    match_types(a, b, "select");
    if (auto c = ir::as_const_int(cond)) return *c ? a : b;
    return ir::make_select(std::move(cond), std::move(a), std::move(b));
}

Expr min(Expr a, Expr b) { return detail::binary_op(Op::Min, std::move(a), std::move(b), "min"); }
Expr max(Expr a, Expr b) { return detail::binary_op(Op::Max, std::move(a), std::move(b), "max"); }

Expr clamp(Expr e, Expr lo, Expr hi) {
    if (!e.defined() || !lo.defined() || !hi.defined()) user_error("clamp: an operand is an undefined Expr.");
    Type t = e.type();
    if (ir::is_const(lo) && constant_fits(lo, t)) lo = make_const_like(lo, t);
    if (ir::is_const(hi) && constant_fits(hi, t)) hi = make_const_like(hi, t);
    if (lo.type() != t) lo = ir::make_cast(t, lo);
    if (hi.type() != t) hi = ir::make_cast(t, hi);
    return min(max(std::move(e), std::move(lo)), std::move(hi));
}

Expr abs(Expr e) {
    if (!e.defined()) user_error("abs: the operand is an undefined Expr.");
    if (e.type().is_bool()) user_error("abs is not defined on bool (", describe(e), ").");
    if (e.type().is_uint()) return e;
    return ir::fold_constants(ir::make_unary(Op::Abs, std::move(e)));
}

Expr lerp(Expr a, Expr b, Expr w) {
    if (!a.defined() || !b.defined() || !w.defined()) user_error("lerp: an operand is an undefined Expr.");
    match_types(a, b, "lerp");
    Type t = a.type();
    if (t.is_bool()) user_error("lerp is not defined on bool values.");
    if (t.is_float()) {
        if (w.type() != t) {
            if (w.type().is_float() || ir::is_const(w)) w = ir::make_cast(t, w);
            else user_error("lerp: the weight ", describe(w), " of type ", w.type(),
                            " must be a float when the values are ", t, ".");
        }
        return a * (make_one(t) - w) + b * w;
    }
    Expr wf;
    if (w.type().is_float()) {
        wf = ir::make_cast(Float(32), w);
    } else if (w.type().is_uint()) {
        wf = ir::make_cast(Float(32), w) / make_const(Float(32), w.type().max_value());
    } else {
        user_error("lerp: the weight ", describe(w), " has type ", w.type(),
                   "; use a float weight in [0, 1] or an unsigned integer weight.");
    }
    Expr af = ir::make_cast(Float(32), a), bf = ir::make_cast(Float(32), b);
    return cast(t, round(af * (make_one(Float(32)) - wf) + bf * wf));
}

Expr likely(Expr e) {
    if (!e.defined()) user_error("likely: the operand is an undefined Expr.");
    return ir::make_unary(Op::Likely, std::move(e));
}

namespace {

Expr as_float(Expr e, const char *what) {
    if (!e.defined()) user_error(what, ": the operand is an undefined Expr.");
    if (e.type().is_bool()) user_error(what, " is not defined on bool (", describe(e), ").");
    if (!e.type().is_float()) e = ir::make_cast(Float(32), e);
    return e;
}

Expr math1(MathFn fn, Expr e) {
    e = as_float(std::move(e), math_fn_name(fn));
    return ir::fold_constants(ir::make_math(fn, {std::move(e)}));
}

} // namespace

Expr sqrt(Expr e) { return math1(MathFn::Sqrt, std::move(e)); }
Expr exp(Expr e) { return math1(MathFn::Exp, std::move(e)); }
Expr log(Expr e) { return math1(MathFn::Log, std::move(e)); }
Expr sin(Expr e) { return math1(MathFn::Sin, std::move(e)); }
Expr cos(Expr e) { return math1(MathFn::Cos, std::move(e)); }
Expr tan(Expr e) { return math1(MathFn::Tan, std::move(e)); }
Expr tanh(Expr e) { return math1(MathFn::Tanh, std::move(e)); }
Expr floor(Expr e) { return math1(MathFn::Floor, std::move(e)); }
Expr ceil(Expr e) { return math1(MathFn::Ceil, std::move(e)); }
Expr round(Expr e) { return math1(MathFn::Round, std::move(e)); }
Expr trunc(Expr e) { return math1(MathFn::Trunc, std::move(e)); }

Expr pow(Expr base, Expr exponent) {
    base = as_float(std::move(base), "pow");
    exponent = as_float(std::move(exponent), "pow");
    match_types(base, exponent, "pow");
    return ir::fold_constants(ir::make_math(MathFn::Pow, {std::move(base), std::move(exponent)}));
}

Expr fma(Expr a, Expr b, Expr c) {
    a = as_float(std::move(a), "fma");
    b = as_float(std::move(b), "fma");
    c = as_float(std::move(c), "fma");
    match_types(a, b, "fma");
    match_types(a, c, "fma");
    match_types(b, c, "fma");
    return ir::fold_constants(ir::make_math(MathFn::Fma, {std::move(a), std::move(b), std::move(c)}));
}

// ---- Printing -------------------------------------------------------------------------------

namespace {

void print(std::ostream &s, const Expr &e) {
    if (!e.defined()) {
        s << "<undefined>";
        return;
    }
    const ExprNode &n = *e;
    auto args = [&](size_t from) {
        for (size_t i = from; i < n.args.size(); ++i) {
            if (i > from) s << ", ";
            print(s, n.args[i]);
        }
    };
    switch (n.op) {
    case Op::IntConst:
        if (n.type == Int(32)) s << n.int_value;
        else s << "(" << n.type << ")" << n.int_value;
        return;
    case Op::UIntConst:
        if (n.type.is_bool()) s << (n.uint_value ? "true" : "false");
        else s << "(" << n.type << ")" << n.uint_value;
        return;
    case Op::FloatConst:
        s << ir::value_to_string(n.type, Value{.f = n.float_value});
        if (n.type == Float(32)) s << "f";
        else if (n.type != Float(64)) s << "(" << n.type << ")";
        return;
    case Op::Var:
    case Op::RVar:
    case Op::Param: s << n.name; return;
    case Op::BufferDim: s << n.name << (n.which == 0 ? ".min." : ".extent.") << n.index; return;
    case Op::Cast: s << n.type << "("; print(s, n.args[0]); s << ")"; return;
    case Op::Min:
    case Op::Max:
    case Op::Abs:
    case Op::Select:
    case Op::Likely: s << op_name(n.op) << "("; args(0); s << ")"; return;
    case Op::Math: s << math_fn_name(MathFn(n.index)) << "("; args(0); s << ")"; return;
    case Op::Not:
    case Op::BitNot: s << op_name(n.op); print(s, n.args[0]); return;
    case Op::FuncCall:
    case Op::InputCall: s << n.name << "("; args(0); s << ")"; return;
    default:
        s << "(";
        print(s, n.args[0]);
        s << " " << op_name(n.op) << " ";
        print(s, n.args[1]);
        s << ")";
        return;
    }
}

} // namespace

std::ostream &operator<<(std::ostream &s, const Expr &e) {
    print(s, e);
    return s;
}

std::string to_string(const Expr &e) {
    std::ostringstream s;
    print(s, e);
    return s.str();
}

} // namespace tessera
