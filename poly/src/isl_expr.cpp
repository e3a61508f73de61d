#include "tessera/poly/isl_expr.h"

#include <algorithm>
#include <utility>

#include <isl/ast.h>
#include <isl/aff.h>
#include <isl/ast_build.h>

#include "tessera/poly/isl_util.h"

namespace tessera::poly {
namespace {

// An integer constant of `t` (Int(32) or Int(64)). Loop nests only meet int32 coordinates, so
// an int32 constant outside that range means the pipeline's coordinates leave it.
Expr constant(Type t, long v) {
    if (t == Int(32) && (v < INT32_MIN || v > INT32_MAX))
        user_error("The pipeline's loops reach the coordinate ", v, ", outside the 32-bit range compiled code uses. "
                   "Keep every coordinate (including those of intermediate Funcs) within [-2^31, 2^31).");
    return make_const(t, int64_t(v));
}

Expr binary(Op op, Expr a, Expr b) {
    if (a.type() != b.type()) {
        if (a.type().is_bool() || b.type().is_bool())
            internal_error("isl AST expression mixes bool and integer operands");
    }
    return ir::fold_constants(ir::make_binary(op, std::move(a), std::move(b)));
}

} // namespace

Expr from_ast_expr(const isl::ast_expr &e, const IdResolver &ids, Type index_type) {
    isl_ast_expr *raw = e.get();
    switch (isl_ast_expr_get_type(raw)) {
    case isl_ast_expr_int: {
        isl_val *v = isl_ast_expr_get_val(raw);
        long x = isl_val_get_num_si(v);
        isl_val_free(v);
        return constant(index_type, x);
    }
    case isl_ast_expr_id: {
        isl_id *id = isl_ast_expr_get_id(raw);
        std::string name = isl_id_get_name(id);
        isl_id_free(id);
        Expr x = ids(name);
        return x.type() == index_type ? x : ir::make_cast(index_type, x);
    }
    case isl_ast_expr_op: break;
    default: internal_error("unexpected isl AST expression");
    }
    int n = int(isl_ast_expr_op_get_n_arg(raw));
    std::vector<Expr> a;
    for (int i = 0; i < n; ++i) a.push_back(from_ast_expr(isl::manage(isl_ast_expr_op_get_arg(raw, i)), ids, index_type));
    // isl writes "always" and "never" as the integers 1 and 0, also as an operand of && and ||
    // (a union with a universe part): an integer operand of a logical operation is a truth value.
    auto truth = [&](const Expr &x) { return x.type().is_bool() ? x : binary(Op::NE, x, constant(x.type(), 0)); };
    switch (isl_ast_expr_op_get_type(raw)) {
    case isl_ast_expr_op_and:
    case isl_ast_expr_op_and_then: return binary(Op::And, truth(a[0]), truth(a[1]));
    case isl_ast_expr_op_or:
    case isl_ast_expr_op_or_else: return binary(Op::Or, truth(a[0]), truth(a[1]));
    case isl_ast_expr_op_max: {
        Expr r = a[0];
        for (int i = 1; i < n; ++i) r = binary(Op::Max, r, a[size_t(i)]);
        return r;
    }
    case isl_ast_expr_op_min: {
        Expr r = a[0];
        for (int i = 1; i < n; ++i) r = binary(Op::Min, r, a[size_t(i)]);
        return r;
    }
    case isl_ast_expr_op_minus: return binary(Op::Sub, constant(index_type, 0), a[0]);
    case isl_ast_expr_op_add: return binary(Op::Add, a[0], a[1]);
    case isl_ast_expr_op_sub: return binary(Op::Sub, a[0], a[1]);
    case isl_ast_expr_op_mul: return binary(Op::Mul, a[0], a[1]);
    case isl_ast_expr_op_div:
    case isl_ast_expr_op_fdiv_q:
    case isl_ast_expr_op_pdiv_q: return binary(Op::Div, a[0], a[1]);
    case isl_ast_expr_op_pdiv_r:
    case isl_ast_expr_op_zdiv_r: return binary(Op::Mod, a[0], a[1]);
    case isl_ast_expr_op_cond:
    case isl_ast_expr_op_select: {
        if (auto c = ir::as_const_int(a[0])) return *c ? a[1] : a[2];
        return ir::make_select(a[0], a[1], a[2]);
    }
    case isl_ast_expr_op_eq: return binary(Op::EQ, a[0], a[1]);
    case isl_ast_expr_op_le: return binary(Op::LE, a[0], a[1]);
    case isl_ast_expr_op_lt: return binary(Op::LT, a[0], a[1]);
    case isl_ast_expr_op_ge: return binary(Op::GE, a[0], a[1]);
    case isl_ast_expr_op_gt: return binary(Op::GT, a[0], a[1]);
    default: break;
    }
    internal_error("unsupported isl AST operation ", int(isl_ast_expr_op_get_type(raw)));
}

Expr aff_to_expr(const isl::aff &a, const std::vector<Expr> &dims, const IdResolver &params, Type index_type) {
    auto typed = [&](const Expr &e) { return e.type() == index_type ? e : ir::make_cast(index_type, e); };
    isl_aff *aff = a.get();
    isl_val *den = isl_aff_get_denominator_val(aff);
    long d = isl_val_get_num_si(den);
    // Each coefficient times the common denominator is an integer.
    auto scaled = [&](isl_val *v) {
        v = isl_val_mul(v, isl_val_copy(den));
        long r = isl_val_get_num_si(v);
        isl_val_free(v);
        return r;
    };
    Expr sum = constant(index_type, scaled(isl_aff_get_constant_val(aff)));
    auto add_term = [&](long coef, const Expr &e) {
        if (coef == 0) return;
        Expr term = coef == 1 ? typed(e) : binary(Op::Mul, constant(index_type, coef), typed(e));
        sum = binary(Op::Add, sum, term);
    };
    int n_in = int(isl_aff_dim(aff, isl_dim_in));
    for (int i = 0; i < n_in; ++i) add_term(scaled(isl_aff_get_coefficient_val(aff, isl_dim_in, i)), dims.at(size_t(i)));
    int n_param = int(isl_aff_dim(aff, isl_dim_param));
    for (int i = 0; i < n_param; ++i) {
        long c = scaled(isl_aff_get_coefficient_val(aff, isl_dim_param, i));
        if (!c) continue;
        add_term(c, params(isl_aff_get_dim_name(aff, isl_dim_param, unsigned(i))));
    }
    int n_div = int(isl_aff_dim(aff, isl_dim_div));
    for (int k = 0; k < n_div; ++k) {
        long c = scaled(isl_aff_get_coefficient_val(aff, isl_dim_div, k));
        if (!c) continue;
        add_term(c, aff_to_expr(isl::manage(isl_aff_get_div(aff, k)), dims, params, index_type));
    }
    isl_val_free(den);
    return d == 1 ? sum : binary(Op::Div, sum, constant(index_type, d));
}

// An AST build for expressions over the parameters of `space` (an object with its unused
// parameters dropped): over a model's dozens of parameters, isl's work on each constraint
// scales with all of them, and the projected context simplifies the expressions as much.
namespace {
isl_ast_build *build_over_parameters_of(isl_space *space, const isl::set &context) {
    return isl_ast_build_from_context(context_over_parameters(context, isl_space_params(space)).release());
}
} // namespace

Expr pw_aff_to_expr(const isl::pw_aff &pa, const isl::set &context, const IdResolver &ids) {
    isl_pw_aff *reduced = drop_unused_params(pa.copy());
    isl_ast_build *build = build_over_parameters_of(isl_pw_aff_get_space(reduced), context);
    isl_ast_expr *e = isl_ast_build_expr_from_pw_aff(build, reduced);
    isl_ast_build_free(build);
    if (!e) {
        const char *why = isl_ctx_last_error_msg(pa.ctx().get());
        internal_error("isl could not build an expression for a region bound: ", why ? why : "no message");
    }
    return from_ast_expr(isl::manage(e), ids, Int(64));
}

Expr pw_aff_to_select(const isl::pw_aff &pa, const isl::set &context, const IdResolver &ids) {
    std::vector<std::pair<isl::set, isl::aff>> pieces;
    isl_pw_aff_foreach_piece(
        pa.get(),
        [](isl_set *domain, isl_aff *aff, void *user) {
            static_cast<std::vector<std::pair<isl::set, isl::aff>> *>(user)->emplace_back(isl::manage(domain), isl::manage(aff));
            return isl_stat_ok;
        },
        &pieces);
    if (pieces.empty()) internal_error("an expression of a piecewise bound defined nowhere");
    // The most complex domain (the most disjuncts) is the one left untested.
    std::stable_sort(pieces.begin(), pieces.end(), [](const auto &a, const auto &b) {
        return isl_set_n_basic_set(a.first.get()) < isl_set_n_basic_set(b.first.get());
    });
    Expr value = aff_to_expr(pieces.back().second, {}, ids, Int(64));
    for (size_t i = pieces.size() - 1; i-- > 0;)
        value = ir::make_select(set_to_condition(pieces[i].first, context, ids), aff_to_expr(pieces[i].second, {}, ids, Int(64)), value);
    return value;
}

Expr set_to_condition(const isl::set &params, const isl::set &context, const IdResolver &ids) {
    isl_set *reduced = drop_unused_params(params.copy());
    isl_ast_build *build = build_over_parameters_of(isl_set_get_space(reduced), context);
    isl_ast_expr *e = isl_ast_build_expr_from_set(build, reduced);
    isl_ast_build_free(build);
    if (!e) {
        const char *why = isl_ctx_last_error_msg(params.ctx().get());
        internal_error("isl could not build an expression for a condition on the parameters: ", why ? why : "no message");
    }
    Expr c = from_ast_expr(isl::manage(e), ids, Int(64));
    // isl writes "always" and "never" as the integers 1 and 0.
    return c.type().is_bool() ? c : ir::make_binary(Op::NE, c, make_const(c.type(), int64_t(0)));
}

} // namespace tessera::poly
