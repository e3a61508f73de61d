// Expressions of isl objects (isl_expr.h): pw_aff_to_select against isl's own values.
#include "../test_util.h"

#include <map>

#include <isl/aff.h>
#include <isl/point.h>
#include <isl/set.h>
#include <isl/val.h>

#include <tessera/poly/isl_expr.h>

using namespace tessera;

namespace {

// `e` with each parameter Var replaced by its value in `at`, folded to an integer.
int64_t value_at(const Expr &e, const std::map<std::string, int64_t> &at) {
    std::map<std::string, Expr> replacements;
    for (const auto &[name, v] : at) replacements[name] = make_const(Int(32), v);
    std::optional<int64_t> v = ir::as_const_int(ir::substitute_and_fold(e, replacements));
    REQUIRE(v.has_value());
    return *v;
}

// isl's value of `pa` (on a zero-dimensional domain) at the parameters `at`, or nothing where
// `pa` is not defined (isl_pw_aff_eval gives NaN there).
std::optional<int64_t> isl_value_at(const isl::pw_aff &pa, const std::map<std::string, int64_t> &at) {
    isl_space *space = isl_pw_aff_get_domain_space(pa.get());
    int n = int(isl_space_dim(space, isl_dim_param));
    isl_point *point = isl_point_zero(space);
    for (int i = 0; i < n; ++i) {
        std::string name = isl_pw_aff_get_dim_name(pa.get(), isl_dim_param, unsigned(i));
        point = isl_point_set_coordinate_val(point, isl_dim_param, i, isl_val_int_from_si(pa.ctx().get(), at.at(name)));
    }
    isl_val *v = isl_pw_aff_eval(pa.copy(), point);
    REQUIRE(v);
    std::optional<int64_t> r;
    if (!isl_val_is_nan(v)) r = isl_val_get_num_si(v);
    isl_val_free(v);
    return r;
}

} // namespace

TEST_CASE("a piecewise bound as selects over its pieces has isl's value wherever it is defined", "[poly][isl]") {
    poly::IslContext owned;
    isl::ctx ctx = owned.ctx();
    // Bounds of the kind region inference meets: pieces on disjunctions (heat-3d's ring
    // planes), a floor division (a downsampled level), more than two pieces (min and max of
    // clamped reads), and a piece defined on part of the parameters only.
    const char *bounds[] = {
        "[N, T] -> { [(0)] : N >= 3 and T > 0; [(2T)] : T <= 0 or N <= 2 }",
        "[N, M] -> { [(floor((N + 1)/2))] : N >= M; [(M - 1)] : N < M }",
        "[N, M] -> { [(min(N, M))] : N > 0 and M > 0; [(max(N, -M))] : N <= 0 or M <= 0 }",
        "[N, M] -> { [(N - M)] : N > 2M and M >= 0; [(N + 5)] : 0 <= N <= 2M }",
    };
    isl::set context(ctx, "[N, M, T] -> { : -20 <= N, M, T <= 20 }");
    poly::IdResolver ids = [](const std::string &id) { return ir::make_var(id, Int(32)); };
    for (const char *text : bounds) {
        isl::pw_aff pa(ctx, text);
        Expr e = poly::pw_aff_to_select(pa, context, ids);
        int checked = 0;
        for (int64_t n = -8; n <= 8; ++n)
            for (int64_t m = -8; m <= 8; ++m)
                for (int64_t t = -2; t <= 2; ++t) {
                    std::map<std::string, int64_t> at{{"N", n}, {"M", m}, {"T", t}};
                    std::optional<int64_t> want = isl_value_at(pa, at);
                    if (!want) continue;
                    INFO(text << " at N = " << n << ", M = " << m << ", T = " << t);
                    CHECK(value_at(e, at) == *want);
                    ++checked;
                }
        CHECK(checked > 100);
    }
}
