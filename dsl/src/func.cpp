// Func definitions: the checks that make a definition well-formed, and FuncRef.
#include "tessera/func.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <set>

#include "tessera/func_graph.h"
#include "tessera/pipeline.h"
#include "tessera/stage_loops.h"

namespace tessera {

namespace detail {
struct RealizeCache {
    std::mutex mutex;
    std::optional<Pipeline> pipeline;
};
} // namespace detail

Func::Func() : c_(std::make_shared<FuncContents>()), realize_cache_(std::make_shared<detail::RealizeCache>()) {
    c_->name = detail::unique_name("f");
}

Func::Func(const std::string &name)
    : c_(std::make_shared<FuncContents>()), realize_cache_(std::make_shared<detail::RealizeCache>()) {
    if (name.empty()) user_error("Func: the name must not be empty.");
    c_->name = name;
}

Func::Func(std::shared_ptr<FuncContents> contents)
    : c_(std::move(contents)), realize_cache_(std::make_shared<detail::RealizeCache>()) {
    TESSERA_INTERNAL_ASSERT(c_);
}

const std::string &Func::name() const { return c_->name; }
bool Func::defined() const { return c_->defined; }

int Func::dimensions() const {
    if (!c_->defined) user_error("Func ", c_->name, " is undefined: it has no dimensions yet. Define it first.");
    return c_->dimensions();
}

Type Func::type() const {
    if (!c_->defined) user_error("Func ", c_->name, " is undefined: it has no type yet. Define it first.");
    return c_->type;
}

std::vector<Var> Func::args() const {
    std::vector<Var> v;
    for (const auto &a : c_->pure_args) v.emplace_back(a);
    return v;
}

Expr Func::value() const {
    if (!c_->defined) user_error("Func ", c_->name, " is undefined.");
    return c_->pure.value;
}

int Func::num_update_definitions() const { return int(c_->updates.size()); }

Stage Func::pure_stage() const {
    if (!c_->defined) user_error("Func ", c_->name, " has no definition to schedule yet. Define it first.");
    return Stage(c_, 0);
}

Stage Func::update(int k) const {
    if (k < 0 || k >= int(c_->updates.size()))
        user_error("Func ", c_->name, " has ", c_->updates.size(), " update definitions; update(", k, ") does not exist.");
    return Stage(c_, k + 1);
}

Func &Func::split(const VarOrRVar &old, const VarOrRVar &outer, const VarOrRVar &inner, int factor) {
    pure_stage().split(old, outer, inner, factor);
    return *this;
}
Func &Func::fuse(const VarOrRVar &inner, const VarOrRVar &outer, const VarOrRVar &fused) {
    pure_stage().fuse(inner, outer, fused);
    return *this;
}
Func &Func::reorder(const std::vector<VarOrRVar> &innermost_first) {
    pure_stage().reorder(innermost_first);
    return *this;
}
Func &Func::tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &xo, const VarOrRVar &yo, const VarOrRVar &xi,
                 const VarOrRVar &yi, int fx, int fy) {
    pure_stage().tile(x, y, xo, yo, xi, yi, fx, fy);
    return *this;
}
Func &Func::vectorize(const VarOrRVar &v, int factor) {
    pure_stage().vectorize(v, factor);
    return *this;
}
Func &Func::unroll(const VarOrRVar &v, int factor) {
    pure_stage().unroll(v, factor);
    return *this;
}
Func &Func::parallel(const VarOrRVar &v) {
    pure_stage().parallel(v);
    return *this;
}
Func &Func::gpu_blocks(const VarOrRVar &v) {
    pure_stage().gpu_blocks(v);
    return *this;
}
Func &Func::gpu_blocks(const VarOrRVar &outer, const VarOrRVar &inner) {
    pure_stage().gpu_blocks(outer, inner);
    return *this;
}
Func &Func::gpu_threads(const VarOrRVar &v) {
    pure_stage().gpu_threads(v);
    return *this;
}
Func &Func::gpu_tile(const VarOrRVar &x, const VarOrRVar &y, const VarOrRVar &bx, const VarOrRVar &by, const VarOrRVar &tx,
                     const VarOrRVar &ty, int fx, int fy) {
    pure_stage().gpu_tile(x, y, bx, by, tx, ty, fx, fy);
    return *this;
}
Func &Func::gpu_tile(const VarOrRVar &x, const VarOrRVar &bx, const VarOrRVar &tx, int fx) {
    pure_stage().gpu_tile(x, bx, tx, fx);
    return *this;
}

Func &Func::compute_root() {
    pure_stage();
    if (c_->compute_at.defined() || c_->compute_inline)
        user_error("Func ", c_->name, ": compute_root() after compute_at(). A Func is computed at one place.");
    c_->compute_root = true;
    detail::bump_definitions_epoch();
    return *this;
}

namespace {
FuncContents::LoopLevel loop_level(const FuncContents &self, const Func &consumer, const VarOrRVar &loop, const char *what) {
    if (!self.defined) user_error("Func ", self.name, " has no definition to schedule yet. Define it first.");
    if (!consumer.defined())
        user_error("Func ", self.name, ".", what, "(", consumer.name(), ", ", loop.name(), "): Func ", consumer.name(),
                   " has no definition.");
    if (consumer.contents().get() == &self)
        user_error("Func ", self.name, ".", what, "(", consumer.name(), ", ", loop.name(),
                   "): a Func is computed at a loop of another Func (its consumer), not of itself.");
    FuncContents::LoopLevel l;
    l.func = consumer.contents();
    l.loop = loop.name();
    return l;
}
} // namespace

Func &Func::compute_inline() {
    pure_stage();
    if (c_->compute_root || c_->compute_at.defined() || c_->store_at.defined())
        user_error("Func ", c_->name, ": compute_inline() after compute_root(), compute_at() or store_at(). A Func is "
                   "computed at one place.");
    if (!c_->pure.directives.empty())
        user_error("Func ", c_->name, ": compute_inline(), but it has loop directives; an inlined Func has no loops.");
    if (!c_->bounds.empty())
        user_error("Func ", c_->name, ": compute_inline(), but it has bound() or align_bounds(); an inlined Func has no "
                   "region of its own.");
    c_->compute_inline = true;
    detail::bump_definitions_epoch();
    return *this;
}

std::optional<std::pair<int64_t, int64_t>> constant_bound(const FuncContents &f, int dim) {
    const FuncContents::DimensionBound *b = f.bound_of(dim);
    if (!b || !b->min.defined()) return std::nullopt;
    std::optional<int64_t> mn = ir::as_const_int(b->min), ext = ir::as_const_int(b->extent);
    if (!mn || !ext) return std::nullopt;
    if (*ext <= 0 || b->modulus == 1) return std::pair{*mn, *ext};
    // Widened as the model does it: the min down, the end up, to the next aligned coordinate.
    int64_t lo = b->align_down(*mn), hi = b->align_down(*mn + *ext - 1) + b->modulus - 1;
    return std::pair{lo, hi - lo + 1};
}

namespace {
// The bound of dimension `v` of `f`, created if needed; a UserError naming `what` if v is not
// one of f's pure Vars.
FuncContents::DimensionBound &dimension_bound(FuncContents &f, const Var &v, const std::string &what) {
    if (!f.defined) user_error("Func ", f.name, ".", what, ": the Func has no definition yet. Define it first.");
    if (f.compute_inline)
        user_error("Func ", f.name, ".", what, ": the Func is computed inline, so it has no region of its own to bound.");
    auto it = std::find(f.pure_args.begin(), f.pure_args.end(), v.name());
    if (it == f.pure_args.end()) {
        std::string have;
        for (const std::string &a : f.pure_args) have += (have.empty() ? "" : ", ") + a;
        user_error("Func ", f.name, ".", what, ": ", v.name(), " is not one of its pure Vars (", have.empty() ? "none" : have,
                   ").");
    }
    int dim = int(it - f.pure_args.begin());
    for (FuncContents::DimensionBound &b : f.bounds)
        if (b.dim == dim) return b;
    f.bounds.push_back(FuncContents::DimensionBound{});
    f.bounds.back().dim = dim;
    return f.bounds.back();
}

// Replays every definition's loop directives, which a new bound may invalidate (a complete
// unroll of a loop whose range is no longer constant); restores `saved` if one fails.
void recheck_loops(FuncContents &f, const std::vector<FuncContents::DimensionBound> &saved) {
    try {
        for (int k = 0; k <= int(f.updates.size()); ++k) stage_loops(f, k);
    } catch (...) {
        f.bounds = saved;
        throw;
    }
}
} // namespace

Func &Func::bound(const Var &v, const Expr &min, const Expr &extent) {
    std::string what = detail::str_cat("bound(", v.name(), ", ", min, ", ", extent, ")");
    for (auto [name, e] : {std::pair{"min", &min}, std::pair{"extent", &extent}}) {
        if (!e->defined()) user_error("Func ", c_->name, ".", what, ": the ", name, " is undefined.");
        if (!(*e).type().is_int_or_uint())
            user_error("Func ", c_->name, ".", what, ": the ", name, " has type ", (*e).type(), "; it must be an integer.");
        ir::visit(*e, [&](const Expr &n) {
            bool allowed = n->op != Op::Var && n->op != Op::RVar && n->op != Op::FuncCall && n->op != Op::InputCall;
            if (!allowed)
                user_error("Func ", c_->name, ".", what, ": the ", name, " uses ", n->name,
                           "; a bound is made of constants, Params and input sizes (InputBuffer::dim(d).extent()).");
            return true;
        });
    }
    if (std::optional<int64_t> ext = ir::as_const_int(extent); ext && *ext <= 0)
        user_error("Func ", c_->name, ".", what, ": the extent must be positive.");
    std::vector<FuncContents::DimensionBound> saved = c_->bounds;
    FuncContents::DimensionBound &b = dimension_bound(*c_, v, what);
    b.min = cast(Int(32), min);
    b.extent = cast(Int(32), extent);
    recheck_loops(*c_, saved);
    detail::bump_definitions_epoch();
    return *this;
}

Func &Func::align_bounds(const Var &v, int modulus, int remainder) {
    std::string what = detail::str_cat("align_bounds(", v.name(), ", ", modulus, ", ", remainder, ")");
    if (modulus < 1) user_error("Func ", c_->name, ".", what, ": the modulus must be positive.");
    std::vector<FuncContents::DimensionBound> saved = c_->bounds;
    FuncContents::DimensionBound &b = dimension_bound(*c_, v, what);
    b.modulus = modulus;
    b.remainder = ((remainder % modulus) + modulus) % modulus;
    recheck_loops(*c_, saved);
    detail::bump_definitions_epoch();
    return *this;
}

Func &Func::compute_at(const Func &consumer, const VarOrRVar &loop) {
    if (c_->compute_inline) user_error("Func ", c_->name, ": compute_at() after compute_inline(). A Func is computed at one place.");
    if (c_->compute_root)
        user_error("Func ", c_->name, ": compute_at() after compute_root(). A Func is computed at one place.");
    c_->compute_at = loop_level(*c_, consumer, loop, "compute_at");
    detail::bump_definitions_epoch();
    return *this;
}

Func &Func::store_at(const Func &consumer, const VarOrRVar &loop) {
    c_->store_at = loop_level(*c_, consumer, loop, "store_at");
    detail::bump_definitions_epoch();
    return *this;
}

namespace {

// Checks one coordinate of a call or definition and converts it to int32.
Expr checked_coordinate(const std::string &func, size_t i, Expr e) {
    if (!e.defined()) user_error("Func ", func, ": argument ", i, " is an undefined Expr.");
    if (!e.type().is_int_or_uint() || e.type().is_bool())
        user_error("Func ", func, ": argument ", i, " (", e, ") has type ", e.type(),
                   "; coordinates must be integers, not a float-typed index. Cast it, e.g. cast<int>(floor(e)).");
    return e.type() == Int(32) ? e : cast(Int(32), e);
}

std::string signature(const std::string &func, const std::vector<std::string> &args) {
    std::string s = func + "(";
    for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
    return s + ")";
}

// Replaces the Func's calls to itself by calls that do not own it (see ExprNode::func).
Expr without_self_ownership(const Expr &e, const FuncContents *f) {
    return ir::transform(e, [&](const Expr &n) {
        if (n->op == Op::FuncCall && n->func_ptr == f && n->func) {
            auto copy = std::make_shared<ExprNode>(*n.get());
            copy->func.reset();
            return Expr(std::move(copy));
        }
        return n;
    });
}

void define_pure(FuncContents &f, const std::vector<Expr> &args, const Expr &value) {
    detail::check_dimension_count("Func " + f.name, int(args.size()));
    std::vector<std::string> names;
    for (size_t i = 0; i < args.size(); ++i) {
        const Expr &a = args[i];
        if (a->op == Op::RVar)
            user_error("The pure definition of Func ", f.name, " has the RDom variable ", a->name, " on the left (argument ",
                       i, "). RDom variables on the left of a pure definition are not allowed: define ", f.name,
                       " over Vars first (e.g. ", f.name, "(x) = 0), then add an update definition ", f.name, "(",
                       a->name, ") = ....");
        if (a->op != Op::Var)
            user_error("The pure definition of Func ", f.name, " must have Vars as arguments, but argument ", i, " is ", a,
                       ". Define ", f.name, " over Vars first; an update definition may then use expressions.");
        if (std::find(names.begin(), names.end(), a->name) != names.end())
            user_error("The pure definition of Func ", f.name, " uses the Var ", a->name,
                       " more than once on the left. Each pure argument must be a distinct Var.");
        names.push_back(a->name);
    }
    for (const auto &r : ir::rdoms_in(value))
        user_error("The pure definition of Func ", f.name, ", ", signature(f.name, names), " = ", value,
                   ", uses the RDom variable(s) of ",
                   r->name, " on the right. Use an update definition or an inline reduction (sum, maximum, ...).");
    for (const auto &v : ir::free_vars(value))
        if (std::find(names.begin(), names.end(), v) == names.end())
            user_error("In the definition ", signature(f.name, names), " = ", value, ", the free variable ", v,
                       " on the right is not bound on the left. Add ", v, " to the arguments of ", f.name,
                       " or replace it by an expression of the arguments.");
    if (ir::contains_call_to(value, &f))
        user_error("The pure definition of Func ", f.name, " calls ", f.name,
                   " itself: a recursive pure definition is not allowed. Give ", f.name,
                   " a pure definition first and express the recursion as an update definition.");
    detail::bump_definitions_epoch();
    f.pure_args = names;
    f.type = value.type();
    f.pure.args = args;
    f.pure.value = value;
    f.defined = true;
}

// The Funcs through which `from` calls `to` (both included), or empty when it does not.
std::vector<const FuncContents *> call_path(const FuncContents *from, const FuncContents *to,
                                            std::set<const FuncContents *> &seen) {
    if (from == to) return {to};
    if (!seen.insert(from).second) return {};
    std::vector<const FuncContents *> path;
    for (const Definition *d : definitions_of(*from))
        for (const Expr &e : definition_exprs(*d))
            ir::visit(e, [&](const Expr &n) {
                if (!path.empty()) return false;
                if (n->op == Op::FuncCall && n->func_ptr != from) path = call_path(n->func_ptr, to, seen);
                return path.empty();
            });
    if (!path.empty()) path.insert(path.begin(), from);
    return path;
}

// Throws a UserError when an update of `f` reading `e` would make Funcs call each other in a
// cycle (f reads g, which reads f): no order of the definitions could compute them. Checked
// here, where the cycle is written, so the Funcs never hold each other.
void check_no_call_cycle(const FuncContents &f, const Expr &e) {
    std::set<const FuncContents *> seen;
    ir::visit(e, [&](const Expr &n) {
        if (n->op != Op::FuncCall || n->func_ptr == &f) return true;
        std::vector<const FuncContents *> path = call_path(n->func_ptr, &f, seen);
        if (path.empty()) return true;
        std::string cycle = f.name;
        for (const FuncContents *g : path) cycle += " -> " + g->name;
        user_error("This update definition of Func ", f.name, " reads ", n->func_ptr->name,
                   ", which reads ", f.name, ": the Funcs would call each other in a cycle (", cycle,
                   "). A Func may read itself only in its own update definitions; compute the value from Funcs "
                   "that do not depend on ", f.name, ".");
    });
}

void define_update(FuncContents &f, std::vector<Expr> args, Expr value) {
    if (args.size() != f.pure_args.size())
        user_error("Func ", f.name, " has ", f.pure_args.size(), " dimensions (", signature(f.name, f.pure_args),
                   ") but this update definition gives it ", args.size(), " arguments.");
    std::vector<std::string> bound;
    for (size_t i = 0; i < args.size(); ++i) {
        args[i] = checked_coordinate(f.name, i, args[i]);
        const Expr &a = args[i];
        if (a->op == Op::Var) {
            if (a->name != f.pure_args[i])
                user_error("In an update definition of Func ", f.name, ", argument ", i, " is the Var ", a->name,
                           ", but the pure definition ", signature(f.name, f.pure_args), " has ", f.pure_args[i],
                           " there. A pure Var may appear on the left of an update only in its own position.");
            bound.push_back(a->name);
            continue;
        }
    }
    // A pure Var may also appear inside another argument (histogram(x, y, zi(x, y), c)), as long
    // as it stands bare in its own position: each value of it still writes its own slice.
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i]->op == Op::Var) continue;
        for (const auto &v : ir::free_vars(args[i]))
            if (std::find(bound.begin(), bound.end(), v) == bound.end())
                user_error("In an update definition of Func ", f.name, ", argument ", i, " (", args[i], ") uses the Var ", v,
                           ", which does not appear by itself in its own position on the left. Put ", v,
                           " on the left in the position it has in the pure definition, or use an RDom.");
    }
    if (!value.defined()) user_error("Func ", f.name, ": the update definition's value is undefined.");
    if (value.type() != f.type) {
        if (ir::is_const(value) && (f.type.is_float() || value->op != Op::FloatConst)) {
            value = cast(f.type, value);
        } else {
            user_error("Type mismatch between definitions of Func ", f.name, ": it was defined with type ", f.type,
                       ", but this update definition has type ", value.type(), " (", value,
                       "). Cast the value to ", f.type, ".");
        }
    }
    std::vector<std::shared_ptr<RDomContents>> rdoms;
    auto add_rdoms = [&](const Expr &e) {
        for (const auto &r : ir::rdoms_in(e))
            if (std::find(rdoms.begin(), rdoms.end(), r) == rdoms.end()) rdoms.push_back(r);
    };
    for (const Expr &a : args) add_rdoms(a);
    add_rdoms(value);
    if (rdoms.size() > 1)
        user_error("An update definition of Func ", f.name, " uses variables of ", rdoms.size(), " RDoms (", rdoms[0]->name,
                   ", ", rdoms[1]->name, "). Use a single RDom with several dimensions.");
    std::vector<Expr> checked_exprs = {value};
    if (!rdoms.empty())
        for (const Expr &p : rdoms[0]->predicates) checked_exprs.push_back(p);
    for (const Expr &a : args) check_no_call_cycle(f, a);
    for (const Expr &e : checked_exprs) check_no_call_cycle(f, e);
    for (const Expr &e : checked_exprs)
        for (const auto &v : ir::free_vars(e))
            if (std::find(bound.begin(), bound.end(), v) == bound.end())
                user_error("In an update definition of Func ", f.name, ", the free variable ", v, " (in ", e,
                           ") is not bound on the left. Put ", v, " on the left in its own position, or use an RDom.");
    Definition d;
    for (Expr &a : args) a = without_self_ownership(a, &f);
    d.args = std::move(args);
    d.value = without_self_ownership(value, &f);
    d.rdom = rdoms.empty() ? nullptr : rdoms[0];
    detail::bump_definitions_epoch();
    f.updates.push_back(std::move(d));
}

} // namespace

FuncRef Func::operator()(std::vector<Expr> args) const {
    if (c_->defined && int(args.size()) != c_->dimensions())
        user_error("Func ", c_->name, " has ", c_->dimensions(), " dimensions (", signature(c_->name, c_->pure_args),
                   ") but is used with ", args.size(), " arguments (wrong arity).");
    for (size_t i = 0; i < args.size(); ++i) {
        if (!args[i].defined()) user_error("Func ", c_->name, ": argument ", i, " is an undefined Expr.");
        // Pure-definition arguments must stay Vars; calls and updates convert to int32 below.
        if (args[i]->op != Op::Var && args[i]->op != Op::RVar) args[i] = checked_coordinate(c_->name, i, args[i]);
    }
    return FuncRef(*this, std::move(args));
}

FuncRef::operator Expr() const {
    const auto &c = func_.contents();
    if (!c->defined)
        user_error("Func ", c->name, " is called before it has a definition (undefined Func). Define ", c->name,
                   " before using it. A Func also cannot appear in its own first definition (a recursive pure "
                   "definition): give it a pure definition first, then express the recursion as an update.");
    return ir::make_func_call(c, args_);
}

FuncRef &FuncRef::operator=(const Expr &value) {
    auto &c = *func_.contents();
    if (!value.defined()) user_error("Func ", c.name, " is being defined with an undefined Expr.");
    // First: every other check walks the expressions.
    detail::check_expression_size("The definition of Func " + c.name, value);
    for (const Expr &a : args_) detail::check_expression_size("The definition of Func " + c.name, a);
    if (!c.defined) define_pure(c, args_, value);
    else define_update(c, args_, value);
    return *this;
}

FuncRef &FuncRef::operator=(const FuncRef &value) {
    const auto &c = func_.contents();
    if (!c->defined && value.func_.contents() == c)
        user_error("The pure definition of Func ", c->name, " calls ", c->name,
                   " itself: a recursive pure definition is not allowed. Give ", c->name,
                   " a pure definition first and express the recursion as an update definition.");
    return *this = Expr(value);
}

void FuncRef::update_with(Op op, const Expr &value, const char *what) {
    auto &c = *func_.contents();
    if (!value.defined()) user_error("Func ", c.name, ": ", what, " was given an undefined Expr.");
    detail::check_expression_size("The definition of Func " + c.name, value);
    for (const Expr &a : args_) detail::check_expression_size("The definition of Func " + c.name, a);
    if (!c.defined) {
        std::vector<Expr> vars;
        for (size_t i = 0; i < args_.size(); ++i) vars.push_back(Var(detail::unique_name(c.name + "_" + std::to_string(i))));
        Expr identity = (op == Op::Add || op == Op::Sub) ? make_zero(value.type()) : make_one(value.type());
        define_pure(c, vars, identity);
    }
    const std::vector<Expr> &args = args_;
    if (args.size() != size_t(c.dimensions()))
        user_error("Func ", c.name, " has ", c.dimensions(), " dimensions but ", what, " gives it ", args.size(),
                   " arguments (wrong arity).");
    Expr current = ir::make_func_call(func_.contents(), args);
    Expr v = value;
    if (v.type() != c.type && ir::is_const(v)) v = cast(c.type, v);
    define_update(c, args, detail::binary_op(op, current, v, what));
}

FuncRef &FuncRef::operator+=(const Expr &value) {
    update_with(Op::Add, value, "operator+=");
    return *this;
}
FuncRef &FuncRef::operator-=(const Expr &value) {
    update_with(Op::Sub, value, "operator-=");
    return *this;
}
FuncRef &FuncRef::operator*=(const Expr &value) {
    update_with(Op::Mul, value, "operator*=");
    return *this;
}
FuncRef &FuncRef::operator/=(const Expr &value) {
    update_with(Op::Div, value, "operator/=");
    return *this;
}

Pipeline Func::realize_pipeline() const {
    std::lock_guard<std::mutex> lock(realize_cache_->mutex);
    // The Pipeline holds handles of its own onto the outputs, not this one: no cycle.
    if (!realize_cache_->pipeline) realize_cache_->pipeline.emplace(*this);
    return *realize_cache_->pipeline;
}

Buffer<void> Func::realize(const std::vector<int> &sizes) const {
    Realization r = realize_pipeline().realize(sizes);
    return r[0];
}

void Func::realize(const Buffer<void> &output) const { realize_pipeline().realize(output); }

} // namespace tessera
