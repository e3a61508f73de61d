// Inline reductions: each becomes an anonymous Func with an update over the expression's RDom.
#include "tessera/reduction.h"

#include <algorithm>
#include <limits>

#include "tessera/func.h"
#include "tessera/ir.h"
#include "tessera/var.h"

namespace tessera {

const Expr &Tuple::operator[](size_t i) const {
    if (i >= values_.size()) user_error("Tuple: element ", i, " does not exist (the Tuple has ", values_.size(), ").");
    return values_[i];
}

namespace {

std::shared_ptr<RDomContents> the_rdom(const Expr &e, const std::string &what) {
    if (!e.defined()) user_error(what, ": the expression is undefined.");
    detail::check_expression_size("The expression given to " + what, e);  // first: the rest walks it
    auto rdoms = ir::rdoms_in(e);
    if (rdoms.empty())
        user_error(what, "(", e, "): the expression uses no RDom variable, so there is nothing to reduce over. "
                   "Use an RDom variable in it, e.g. ", what, "(f(r.x)).");
    if (rdoms.size() > 1)
        user_error(what, "(", e, "): the expression uses variables of several RDoms (", rdoms[0]->name, ", ",
                   rdoms[1]->name, "). Use a single RDom with several dimensions.");
    return rdoms[0];
}

// The Vars the reduction's result depends on: those of the expression and of the predicates.
std::vector<Expr> reduction_vars(const Expr &e, const RDomContents &r) {
    std::vector<std::string> names = ir::free_vars(e);
    for (const Expr &p : r.predicates)
        for (const auto &v : ir::free_vars(p))
            if (std::find(names.begin(), names.end(), v) == names.end()) names.push_back(v);
    std::vector<Expr> vars;
    for (const auto &n : names) vars.push_back(ir::make_var(n));
    return vars;
}

Expr inline_reduction(Expr e, Expr identity, Op combine, const std::string &name) {
    auto rdom = the_rdom(e, name);
    std::vector<Expr> vars = reduction_vars(e, *rdom);
    Func f(detail::unique_name(name));
    f(vars) = identity;
    Expr current = f(vars);
    Expr combined;
    switch (combine) {
    case Op::Min: combined = min(current, e); break;
    case Op::Max: combined = max(current, e); break;
    default: combined = detail::binary_op(combine, current, e, name.c_str()); break;
    }
    f(vars) = combined;
    return f(vars);
}

Expr lowest(Type t) {
    if (t.is_float()) return make_const(t, -std::numeric_limits<double>::infinity());
    if (t.is_int()) return make_const(t, int64_t(t.min_value()));
    return make_zero(t);
}

Expr highest(Type t) {
    if (t.is_float()) return make_const(t, std::numeric_limits<double>::infinity());
    if (t.is_int()) return make_const(t, t.bits == 64 ? INT64_MAX : int64_t(t.max_value()));
    Expr e = make_zero(t);
    return ~e;  // all ones
}

Tuple arg_extremum(Expr e, bool largest, const std::string &name) {
    auto rdom = the_rdom(e, name);
    Expr best = largest ? maximum(e, name + "_value") : minimum(e, name + "_value");
    // The linear index of a point in iteration order (r.x fastest), and the smallest such index
    // among the points that reach the extreme value: the first one visited.
    Expr linear = make_zero(Int(32));
    Expr stride = make_one(Int(32));
    for (size_t i = 0; i < rdom->dims.size(); ++i) {
        Expr rv = ir::make_rvar(rdom, int(i));
        linear = linear + (rv - rdom->dims[i].min) * stride;
        stride = stride * rdom->dims[i].extent;
    }
    Expr none = make_const(Int(32), int64_t(std::numeric_limits<int32_t>::max()));
    Expr index = minimum(select(e == best, linear, none), name + "_index");
    std::vector<Expr> values;
    stride = make_one(Int(32));
    for (size_t i = 0; i < rdom->dims.size(); ++i) {
        const RVarDef &d = rdom->dims[i];
        values.push_back(d.min + (index / stride) % d.extent);
        stride = stride * d.extent;
    }
    values.push_back(best);
    return Tuple(std::move(values));
}

} // namespace

Expr sum(Expr e, const std::string &name) {
    Type t = e.defined() ? e.type() : Int(32);
    return inline_reduction(std::move(e), make_zero(t), Op::Add, name);
}

Expr product(Expr e, const std::string &name) {
    Type t = e.defined() ? e.type() : Int(32);
    return inline_reduction(std::move(e), make_one(t), Op::Mul, name);
}

Expr maximum(Expr e, const std::string &name) {
    Type t = e.defined() ? e.type() : Int(32);
    return inline_reduction(std::move(e), lowest(t), Op::Max, name);
}

Expr minimum(Expr e, const std::string &name) {
    Type t = e.defined() ? e.type() : Int(32);
    return inline_reduction(std::move(e), highest(t), Op::Min, name);
}

Tuple argmax(Expr e, const std::string &name) { return arg_extremum(std::move(e), true, name); }
Tuple argmin(Expr e, const std::string &name) { return arg_extremum(std::move(e), false, name); }

} // namespace tessera
