// Func::bound and Func::align_bounds in the polyhedral model (region_bounds.h).
#include "region_bounds.h"

#include <optional>

#include "tessera/poly/affine.h"
#include "tessera/poly/isl_expr.h"

namespace tessera::poly {

isl::set restrict_dimension(const isl::set &box, unsigned j, const isl::pw_aff &lo, const isl::pw_aff &hi) {
    isl::space sp = box.space();
    isl::pw_aff var = isl::manage(isl_pw_aff_var_on_domain(isl_local_space_from_space(sp.copy()), isl_dim_set, j));
    auto on = [&](const isl::pw_aff &pa) {
        isl_space *params = isl_space_params(sp.copy());
        return isl::manage(isl_pw_aff_insert_domain(isl_pw_aff_align_params(pa.copy(), params), sp.copy()));
    };
    return box.intersect(on(lo).le_set(var)).intersect(var.le_set(on(hi)));
}

namespace {
// `box` with its dimension j ranging over [lo, hi] instead of its own range.
isl::set with_range(const isl::set &box, unsigned j, const isl::pw_aff &lo, const isl::pw_aff &hi) {
    std::string tuple = isl_set_get_tuple_name(box.get());
    isl_set *rest = isl_set_insert_dims(isl_set_project_out(box.copy(), isl_dim_set, j, 1), isl_dim_set, j, 1);
    return restrict_dimension(isl::manage(isl_set_set_tuple_name(rest, tuple.c_str())), j, lo, hi).coalesce();
}
} // namespace

isl::pw_aff RegionBounds::bound_aff(const FuncContents &f, const FuncContents::DimensionBound &b, const Expr &e,
                                    const char *which) {
    AffineSpace params;
    params.universe = isl::set::universe(m_.set_space("", 0).params());
    params.param_id = [this](const std::string &v) { return m_.param_id(v); };
    std::optional<isl::pw_aff> pa = to_pw_aff(hooks_.lower(e), params);
    if (!pa)
        user_error("Func ", f.name, ".bound(", f.pure_args[size_t(b.dim)], ", ", b.min, ", ", b.extent, "): the ", which,
                   " is not an affine function of integer Params and input sizes, which a bound must be.");
    return *pa;
}

isl::pw_aff RegionBounds::constant_aff(int64_t v) const {
    isl::set params = isl::set::universe(m_.set_space("", 0).params());
    return isl::manage(isl_pw_aff_val_on_domain(params.release(), isl_val_int_from_si(m_.ctx().get(), long(v))));
}

isl::set RegionBounds::apply(const FuncContents &f, int array, isl::set required) {
    const Array &arr = m_.arrays[size_t(array)];
    ranges_.clear();
    IdResolver ids = [this](const std::string &id) { return m_.param_var(id); };
    for (const FuncContents::DimensionBound &b : f.bounds) {
        unsigned j = unsigned(arr.dimensions - 1 - b.dim);
        isl::pw_aff lo = b.min.defined() ? bound_aff(f, b, b.min, "min") : isl::manage(isl_set_dim_min(required.copy(), int(j)));
        isl::pw_aff hi = b.min.defined() ? bound_aff(f, b, b.min + b.extent - 1, "extent")
                                         : isl::manage(isl_set_dim_max(required.copy(), int(j)));
        if (b.modulus > 1) {
            Expr lo_e = pw_aff_to_expr(lo, m_.context, ids), hi_e = pw_aff_to_expr(hi, m_.context, ids);
            // Rounded down to the next coordinate congruent to the remainder (Euclidean /).
            const Expr modulus = make_const(Int(64), int64_t(b.modulus)), remainder = make_const(Int(64), int64_t(b.remainder));
            auto align_down = [&](const Expr &v) {
                Expr steps = ir::make_binary(Op::Div, ir::make_binary(Op::Sub, v, remainder), modulus);
                return ir::make_binary(Op::Add, ir::make_binary(Op::Mul, steps, modulus), remainder);
            };
            Expr new_lo = ir::fold_constants(align_down(lo_e));
            Expr new_hi = ir::fold_constants(ir::make_binary(Op::Add, align_down(hi_e), make_const(Int(64), int64_t(b.modulus - 1))));
            std::optional<int64_t> clo = ir::as_const_int(new_lo), chi = ir::as_const_int(new_hi);
            if (clo && chi) {
                lo = constant_aff(*clo);
                hi = constant_aff(*chi);
            } else {
                isl::pw_aff exact_lo = lo, exact_hi = hi;
                lo = hooks_.region_parameter(new_lo, arr.name, b.dim, false);
                hi = hooks_.region_parameter(new_hi, arr.name, b.dim, true);
                // rg_lo <= lo and hi <= rg_hi wherever the exact bounds exist.
                auto holds = [&](const isl::set &where, const isl::set &domain) {
                    return where.unite(isl::set::universe(domain.space()).subtract(domain));
                };
                m_.context = m_.context.intersect(holds(lo.le_set(exact_lo), exact_lo.domain()))
                                 .intersect(holds(exact_hi.le_set(hi), exact_hi.domain()));
            }
        }
        required = with_range(required, j, lo, hi);
        if (b.min.defined()) ranges_.push_back(BoundRange{b.dim, lo, hi});
    }
    if (required.is_empty())
        user_error("Func ", f.name, ": its bound() leaves nothing to compute for any size; give it a positive extent.");
    return required;
}

isl::set RegionBounds::check(int array, const isl::set &need, isl::set realized) {
    const Array &arr = m_.arrays[size_t(array)];
    IdResolver ids = [this](const std::string &id) { return m_.param_var(id); };
    for (const BoundRange &r : ranges_) {
        int j = arr.dimensions - 1 - r.dim;
        isl::set bounded = with_range(isl::set::universe(need.space()), unsigned(j), r.lo, r.hi);
        if (!need.intersect_params(m_.context).is_subset(bounded)) {
            // Expressions valid under the context so far, and so under the final one (which only
            // adds facts).
            BoundCheck c;
            c.array = array;
            c.dim = r.dim;
            c.need_min = pw_aff_to_expr(isl::manage(isl_set_dim_min(need.copy(), j)), m_.context, ids);
            c.need_max = pw_aff_to_expr(isl::manage(isl_set_dim_max(need.copy(), j)), m_.context, ids);
            isl::set present = need.params();
            if (!m_.context.is_subset(present))
                c.need_max = ir::make_select(set_to_condition(present, m_.context, ids), c.need_max,
                                             ir::make_binary(Op::Sub, c.need_min, make_const(Int(64), int64_t(1))));
            c.bound_min = pw_aff_to_expr(r.lo, m_.context, ids);
            c.bound_max = pw_aff_to_expr(r.hi, m_.context, ids);
            m_.bound_checks.push_back(c);
        }
        realized = with_range(realized, unsigned(j), r.lo, r.hi);
    }
    return realized;
}

} // namespace tessera::poly
