#include "tessera/poly/storage_folding.h"

#include <algorithm>
#include <limits>
#include <optional>

#include <isl/aff.h>
#include <isl/constraint.h>
#include <isl/local_space.h>
#include <isl/map.h>
#include <isl/set.h>
#include <isl/val.h>

#include <tessera/ir.h>

namespace tessera::poly {
namespace {

// isl operations region_covers_accesses may take (else nothing is assumed).
constexpr long kCoveringOperations = 200000;

// The smallest and largest values of tuple dimension `q` of `s` over every value of the
// parameters, each if it is a finite integer. An empty set gives {max, min}.
struct Extremes {
    std::optional<int64_t> lo, hi;
};
Extremes extremes(isl_set *s, unsigned q) {
    unsigned n = unsigned(isl_set_dim(s, isl_dim_set));
    s = isl_set_project_out(s, isl_dim_set, q + 1, n - q - 1);
    s = isl_set_project_out(s, isl_dim_set, 0, q);
    s = isl_set_project_out(s, isl_dim_param, 0, unsigned(isl_set_dim(s, isl_dim_param)));
    if (isl_set_is_empty(s) == isl_bool_true) {
        isl_set_free(s);
        return {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
    }
    isl_aff *v = isl_aff_var_on_domain(isl_local_space_from_space(isl_set_get_space(s)), isl_dim_set, 0);
    isl_val *lo = isl_set_min_val(s, v), *hi = isl_set_max_val(s, v);
    Extremes r;
    if (lo && isl_val_is_int(lo)) r.lo = int64_t(isl_val_get_num_si(lo));
    if (hi && isl_val_is_int(hi)) r.hi = int64_t(isl_val_get_num_si(hi));
    isl_val_free(lo);
    isl_val_free(hi);
    isl_aff_free(v);
    isl_set_free(s);
    return r;
}

// How many planes behind the written one a statement of the Func reads along tuple dimension q:
// [lo, hi] of (written - read) over its instances.
Extremes read_distance(const Statement &s, const Access &read, unsigned q) {
    isl_map *w = isl_map_intersect_domain(s.write.relation.copy(), s.domain.copy());
    isl_map *r = isl_map_intersect_domain(read.relation.copy(), s.domain.copy());
    isl_map *read_to_written = isl_map_apply_range(isl_map_reverse(r), w);  // deltas: written - read
    return extremes(isl_map_deltas(read_to_written), q);
}

// The values tuple dimension q of the elements `access` touches takes, over the statement's
// instances (a 1-D set over the parameters).
isl_set *planes_of(const Statement &s, const Access &access, unsigned q) {
    isl_set *elements = isl_map_range(isl_map_intersect_domain(access.relation.copy(), s.domain.copy()));
    unsigned n = unsigned(isl_set_dim(elements, isl_dim_set));
    elements = isl_set_project_out(elements, isl_dim_set, q + 1, n - q - 1);
    return isl_set_project_out(elements, isl_dim_set, 0, q);
}

// The largest difference b - a of a in `from` and b in `to`, for the same parameters (nullopt:
// unbounded; below any value when there is no pair).
std::optional<int64_t> largest_difference(isl_set *from, isl_set *to) {
    from = isl_set_align_params(from, isl_set_get_space(to));
    to = isl_set_align_params(to, isl_set_get_space(from));
    return extremes(isl_map_deltas(isl_map_from_domain_and_range(from, to)), 0).hi;
}

} // namespace

std::string fold_reader_violation(const Model &m, const StorageFold &fold) {
    const Array &a = m.arrays[size_t(fold.array)];
    unsigned q = unsigned(a.dimensions - 1 - fold.dimension);
    for (const Statement &reader : m.statements) {
        if (reader.func == a.func) continue;
        // Every plane the reader reads, through all of its accesses together: reads of planes
        // 0 and 1 and, elsewhere in the reader, of plane 3 need 4 planes, not 2 and 1 (fuzzer
        // seed 2440428: a ring of 3 planes where 3 overwrote 0 before the reader read it).
        isl_set *read = nullptr;
        for (const Access &r : reader.reads) {
            if (r.array != fold.array) continue;
            isl_set *planes = planes_of(reader, r, q);
            read = read ? isl_set_union(read, planes) : planes;
        }
        if (!read) continue;
        // The planes the reader reads must fit in the ring ...
        auto width = largest_difference(isl_set_copy(read), isl_set_copy(read));
        if (!width || *width >= fold.planes) {
            isl_set_free(read);
            return width ? detail::str_cat(reader.name, " reads more planes of ", a.func->name, " at once than the ring keeps")
                         : detail::str_cat(reader.name, " reads an unbounded range of planes of ", a.func->name);
        }
        // ... and be among the last ones: no statement of the Func may access a plane at or
        // past read + planes, which shares a slot with the read one and, by the fold's
        // dependences, comes after it. The pure definition counts too: it writes the Func's
        // whole region, and a reader of plane 0 where another reader makes the region run to
        // plane 5 finds plane 4 in plane 0's slot (fuzzer seed 2486112). Updates are checked
        // first, as they are the usual culprit and the clearer message.
        for (bool updates : {true, false}) {
            for (const Statement &u : m.statements) {
                if (u.func != a.func || (u.definition > 0) != updates) continue;
                std::vector<const Access *> accesses{&u.write};
                for (const Access &ur : u.reads)
                    if (ur.array == fold.array) accesses.push_back(&ur);
                for (const Access *ua : accesses) {
                    auto ahead = largest_difference(isl_set_copy(read), planes_of(u, *ua, q));
                    if (!ahead || *ahead >= fold.planes) {
                        isl_set_free(read);
                        return detail::str_cat(reader.name, " reads a plane of ", a.func->name, " that ", u.name,
                                               " overwrites in the ring later (it reads an early plane, not the last ones)");
                    }
                }
            }
        }
        isl_set_free(read);
    }
    return "";
}

std::vector<StorageFold> storage_fold_candidates(const Model &m, const std::vector<int> &statements) {
    std::vector<StorageFold> folds;
    for (size_t ai = 0; ai < m.arrays.size(); ++ai) {
        const Array &a = m.arrays[ai];
        if (a.kind != Array::Kind::Func || a.output >= 0 || a.dimensions < 2) continue;
        std::vector<int> own;
        bool all_here = true, has_update = false, exact = true;
        for (size_t si = 0; si < m.statements.size(); ++si) {
            const Statement &s = m.statements[si];
            if (s.func == a.func) {
                own.push_back(int(si));
                all_here = all_here && std::count(statements.begin(), statements.end(), int(si)) > 0;
                has_update = has_update || s.definition > 0;
                exact = exact && s.write.exact;
            }
            for (const Access &r : s.reads)
                if (r.array == int(ai)) exact = exact && r.exact;
        }
        if (!all_here || !has_update || !exact) continue;
        for (unsigned q = 0; q < unsigned(a.dimensions); ++q) {
            int64_t behind = 0;
            bool ok = true;
            for (int si : own) {
                const Statement &s = m.statements[size_t(si)];
                for (const Access &r : s.reads) {
                    if (r.array != int(ai)) continue;
                    Extremes d = read_distance(s, r, q);
                    if (!d.lo || !d.hi || (*d.lo <= *d.hi && *d.lo < 0)) ok = false;
                    else if (*d.lo <= *d.hi) behind = std::max(behind, *d.hi);
                }
            }
            if (!ok || behind < 1) continue;
            int d = a.dimensions - 1 - int(q);
            StorageFold fold{int(ai), d, behind + 1};
            std::optional<int64_t> extent = ir::as_const_int(a.extent[size_t(d)]);
            if ((extent && *extent <= fold.planes) || !fold_reader_violation(m, fold).empty()) continue;
            folds.push_back(fold);
            break;
        }
    }
    return folds;
}

isl::map planes_apart(const Model &m, const StorageFold &fold, int64_t planes, bool at_least) {
    const Array &a = m.arrays[size_t(fold.array)];
    unsigned n = unsigned(a.dimensions), q = n - 1 - unsigned(fold.dimension);
    isl_space *sp = isl_space_set_alloc(m.ctx().get(), 0, n);
    sp = isl_space_set_tuple_name(sp, isl_dim_set, a.name.c_str());
    isl_map *apart = isl_map_universe(isl_space_map_from_set(sp));
    for (unsigned p = 0; p < n; ++p)
        if (p != q) apart = isl_map_equate(apart, isl_dim_in, p, isl_dim_out, p);
    isl_local_space *ls = isl_local_space_from_space(isl_map_get_space(apart));
    isl_constraint *c = at_least ? isl_constraint_alloc_inequality(ls) : isl_constraint_alloc_equality(ls);
    c = isl_constraint_set_coefficient_si(c, isl_dim_out, int(q), 1);
    c = isl_constraint_set_coefficient_si(c, isl_dim_in, int(q), -1);
    c = isl_constraint_set_constant_si(c, -int(planes));
    return isl::manage(isl_map_add_constraint(apart, c));
}

isl::union_map fold_dependences(const Model &m, const std::vector<StorageFold> &folds) {
    std::vector<std::tuple<int, int, int64_t>> key;
    for (const StorageFold &f : folds) key.emplace_back(f.array, f.dimension, f.planes);
    if (auto known = m.fold_dependences.find(key); known != m.fold_dependences.end()) return known->second;
    isl::union_map deps = isl::union_map::empty(m.ctx());
    for (const StorageFold &f : folds) {
        const Array &a = m.arrays[size_t(f.array)];
        isl::map later = planes_apart(m, f, f.planes, true);
        isl::union_map writes = isl::union_map::empty(m.ctx()), accesses = writes;
        for (const Statement &s : m.statements) {
            if (s.func != a.func) continue;
            if (s.write.array == f.array) {
                isl::union_map w(isl::manage(isl_map_intersect_domain(s.write.relation.copy(), s.domain.copy())));
                writes = writes.unite(w);
                accesses = accesses.unite(w);
            }
            for (const Access &r : s.reads)
                if (r.array == f.array)
                    accesses = accesses.unite(isl::union_map(isl::manage(isl_map_intersect_domain(r.relation.copy(), s.domain.copy()))));
        }
        deps = deps.unite(accesses.apply_range(isl::union_map(later)).apply_range(writes.reverse()));
    }
    deps = deps.coalesce();
    m.fold_dependences.emplace(key, deps);
    return deps;
}

namespace {
// Set dimension `q` of `s` alone (a 1-D set over the same parameters).
isl::set dimension_alone(const isl::set &s, unsigned q) {
    unsigned n = unsigned(isl_set_dim(s.get(), isl_dim_set));
    isl_set *one = isl_set_project_out(s.copy(), isl_dim_set, q + 1, n - q - 1);
    return isl::manage(isl_set_project_out(one, isl_dim_set, 0, q));
}

// The 1-D set `s` as the points of the space of `like` whose dimension `q` lies in it.
isl::set along(const isl::set &s, unsigned q, const isl::set &like) {
    unsigned n = unsigned(isl_set_dim(like.get(), isl_dim_set));
    isl_set *wide = isl_set_insert_dims(s.copy(), isl_dim_set, 0, q);
    wide = isl_set_add_dims(wide, isl_dim_set, n - q - 1);
    if (isl_set_has_tuple_id(like.get()) == isl_bool_true) wide = isl_set_set_tuple_id(wide, isl_set_get_tuple_id(like.get()));
    return isl::manage(wide);
}
} // namespace

std::vector<isl::set> touched_elements(const Model &m, int array) {
    std::vector<isl::set> touched;
    for (const Statement &s : m.statements) {
        if (s.write.array == array && s.definition > 0) touched.push_back(s.write.relation.intersect_domain(s.domain).range());
        for (const Access &r : s.reads)
            if (r.array == array) touched.push_back(r.relation.intersect_domain(s.domain).range());
    }
    return touched;
}

isl::set covering_parameters(const isl::set &region, const std::vector<isl::set> &touched) {
    isl::set covers = isl::set::universe(isl::manage(isl_space_params(isl_set_get_space(region.get()))));
    if (region.is_empty()) return covers;
    isl::set result = covers;
    bool done = within_quota(region.ctx(), kCoveringOperations, [&] {
        // A region that is a box (box_hull's, an output's) holds an access exactly where it
        // holds the access's range along each dimension alone: the parameters where an access
        // leaves it are the union, over dimensions, of those where the access's 1-D projection
        // leaves the region's. Projections of the accesses repeat (a stencil's reads differ in
        // one dimension each), and 1-D differences are far cheaper for isl than the 4-D ones
        // (heat-3d: 23 -> 14 ms of its 350 ms schedule).
        unsigned n = unsigned(isl_set_dim(region.get(), isl_dim_set));
        std::vector<isl::set> region_along;
        isl::set box = isl::set::universe(region.space());
        for (unsigned q = 0; q < n; ++q) {
            region_along.push_back(dimension_alone(region, q));
            box = box.intersect(along(region_along.back(), q, region));
        }
        isl::set outside = isl::set::empty(covers.space());
        if (n > 0 && box.is_equal(region)) {
            for (unsigned q = 0; q < n; ++q) {
                std::vector<isl::set> distinct;
                for (const isl::set &t : touched) {
                    isl::set along_q = dimension_alone(t, q);
                    bool seen = false;
                    for (const isl::set &d : distinct) seen = seen || isl_set_plain_is_equal(d.get(), along_q.get()) == isl_bool_true;
                    if (!seen) distinct.push_back(along_q);
                }
                for (const isl::set &d : distinct) outside = outside.unite(d.subtract(region_along[q]).params());
            }
        } else {
            for (const isl::set &t : touched) outside = outside.unite(t.subtract(region).params());
        }
        covers = covers.subtract(outside).coalesce();
    });
    return done ? covers : result;
}

isl::set region_covers_accesses(const Model &m, int array) {
    // (Resolves what build_model's helper found, the covers of the Funcs it analysed among it.)
    m.dead();
    if (auto known = m.region_covers.find(array); known != m.region_covers.end()) return known->second;
    const Array &a = m.arrays[size_t(array)];
    isl::space params = m.set_space("", 0).params();
    // (On a private copy of the region: isl stopped by the quota partway may leave the pieces it
    // worked on broken, and the model's region serves the rest of the compile.)
    isl::set covers = a.region.is_empty() ? isl::set::universe(params)
                                          : isl::manage(isl_set_align_params(covering_parameters(copied_to(m.ctx(), a.region), touched_elements(m, array)).release(),
                                                                            params.release()));
    m.region_covers.emplace(array, covers);
    return covers;
}

isl::union_map ring_slots(const Model &m, const Array &arr, const std::vector<int64_t> &fold, unsigned n_tile) {
    unsigned dims = unsigned(arr.dimensions), total = n_tile + dims;
    isl_space *sp = isl_space_set_alloc(m.ctx().get(), 0, total);
    sp = isl_space_set_tuple_name(sp, isl_dim_set, arr.name.c_str());
    isl_local_space *ls = isl_local_space_from_space(isl_space_copy(sp));
    isl_aff_list *affs = isl_aff_list_alloc(m.ctx().get(), int(total));
    for (unsigned q = 0; q < total; ++q) {
        isl_aff *a = isl_aff_var_on_domain(isl_local_space_copy(ls), isl_dim_set, q);
        if (q >= n_tile) {
            int64_t f = fold[size_t(dims - 1 - (q - n_tile))];
            if (f > 0) a = isl_aff_mod_val(a, isl_val_int_from_si(m.ctx().get(), f));
        }
        affs = isl_aff_list_add(affs, a);
    }
    isl_local_space_free(ls);
    isl_space *msp = isl_space_map_from_set(sp);
    return isl::union_map(isl::manage(isl_map_from_multi_aff(isl_multi_aff_from_aff_list(msp, affs))));
}

Mark fold_mark(const Model &m, const StorageFold &fold) {
    return Mark::fold(m.arrays[size_t(fold.array)].name, fold.dimension, long(fold.planes));
}

} // namespace tessera::poly
