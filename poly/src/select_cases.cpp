// The cases of a value that selects on affine conditions (select_cases.h).
#include "select_cases.h"

#include <functional>

namespace tessera::poly {

std::vector<std::pair<isl::set, Expr>> affine_select_cases(const isl::set &domain, const Expr &value, const AffineSpace &space,
                                                           size_t max_cases) {
    std::vector<std::pair<isl::set, Expr>> cases;
    std::function<void(const isl::set &, const Expr &)> split = [&](const isl::set &dom, const Expr &v) {
        if (v->op == Op::Select && cases.size() < max_cases) {
            auto c = to_set(v->args[0], space);
            if (c && dom.is_subset(exact_conditions(v->args[0], space))) {
                isl::set taken = dom.intersect(*c).coalesce(), other = dom.subtract(*c).coalesce();
                if (!taken.is_empty()) split(taken, v->args[1]);
                if (!other.is_empty()) split(other, v->args[2]);
                return;
            }
        }
        cases.emplace_back(dom, v);
    };
    split(domain, value);
    return cases;
}

} // namespace tessera::poly
