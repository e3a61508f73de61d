#include "tessera/poly/register_tiling.h"

#include <isl/aff.h>
#include <isl/map.h>
#include <isl/schedule_node.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include <vector>

#include "tessera/poly/marks.h"
#include "tessera/poly/tree_transform.h"

namespace tessera::poly {
namespace {

// Whether the instances below `band` form, in the schedule space, a set whose members `a` and
// `b` (of the band) bound each other nowhere: fixing the other loops, every value of one goes
// with every value of the other. A triangular nest (correlation's j > i) does not: there the
// block's bounds change from row to row and the rows could not share one full-tile test.
bool independent_members(const isl::schedule_node &band, int a, int b) {
    isl::union_map prefix = isl::manage(isl_schedule_node_get_prefix_schedule_relation(band.child(0).get()));
    isl_union_set *range = isl_union_map_range(prefix.release());
    if (isl_union_set_n_set(range) != 1) {
        isl_union_set_free(range);
        return false;
    }
    isl_set *r = isl_set_from_union_set(range);
    int outer = int(isl_set_dim(r, isl_dim_set)) - int(isl_schedule_node_band_n_member(band.get()));
    auto without = [&](int member) {
        unsigned d = unsigned(outer + member);
        return isl_set_insert_dims(isl_set_project_out(isl_set_copy(r), isl_dim_set, d, 1), isl_dim_set, d, 1);
    };
    isl_set *product = isl_set_intersect(without(a), without(b));
    isl_bool same = isl_set_is_subset(product, r);
    isl_set_free(product);
    isl_set_free(r);
    return same == isl_bool_true;
}

} // namespace

std::string register_tile_unsound(const Model &m, const isl::schedule_node &mark) {
    // The band above the "vector" mark: its last member is the row loop.
    isl::schedule_node n = mark.child(0);
    std::optional<isl::schedule_node> rows_band;
    while (isl_schedule_node_n_children(n.get()) == 1) {
        std::optional<Mark> below = isl_schedule_node_get_type(n.get()) == isl_schedule_node_band ? mark_of(n.child(0).get())
                                                                                                     : std::nullopt;
        if (below && below->kind == Mark::Kind::Vector) {
            rows_band = n;
            break;
        }
        if (isl_schedule_node_get_type(n.get()) != isl_schedule_node_band) return "a node other than a band below it";
        n = n.child(0);
    }
    if (!rows_band || !is_band(*rows_band)) return "no band of rows above a vector mark below it";
    isl::union_set domain = isl::manage(isl_schedule_node_get_domain(mark.get()));
    if (isl_union_set_n_set(domain.get()) != 1) return "not one statement below it";
    isl::set instances = isl::manage(isl_set_from_union_set(domain.copy()));
    const char *name = isl_set_get_tuple_name(instances.get());
    int si = name ? m.statement_index(name) : -1;
    if (si < 0) return "a statement of its own below it";
    const Statement &s = m.statements[size_t(si)];
    if (s.write.array < 0 || s.write.relation.is_null() || !s.write.exact) return "the statement's write is not exact";
    isl::map write = s.write.relation.intersect_domain(instances);
    for (const Access &r : s.reads) {
        if (r.array != s.write.array) continue;
        if (r.relation.is_null() || !r.exact || !r.relation.intersect_domain(instances).is_equal(write))
            return "the statement reads the array it writes at another element";
    }
    isl_multi_union_pw_aff *mupa = isl_schedule_node_band_get_partial_schedule(rows_band->get());
    int members = int(isl_multi_union_pw_aff_dim(mupa, isl_dim_set));
    isl_union_pw_aff *row = isl_multi_union_pw_aff_get_at(mupa, members - 1);
    isl_multi_union_pw_aff_free(mupa);
    isl::union_map row_of = isl::manage(isl_union_map_from_union_pw_aff(row));
    // The vector loop: the band below the "vector" mark.
    isl::schedule_node vector_band = rows_band->child(0).child(0);
    if (!is_band(vector_band) || isl_schedule_node_band_n_member(vector_band.get()) != 1) return "no vector loop below its rows";
    isl::union_map lane_of =
        isl::manage(isl_union_map_from_multi_union_pw_aff(isl_schedule_node_band_get_partial_schedule(vector_band.get())));
    // element -> (row, vector loop) of the instances that write it: a function when no two
    // rows, and no two vector steps of a row, share an element.
    isl::union_map element_slots = isl::union_map(write).reverse().apply_range(row_of.range_product(lane_of));
    if (!element_slots.is_single_valued()) return "two rows, or two elements of a row's block, write the same element";
    return "";
}

RegisterTiling register_tile(const Model &m, const isl::schedule_node &point, int unroll_member, int rows, int block,
                             const isl::schedule_node &bounds_band) {
    RegisterTiling r;
    if (!is_band(point)) {
        r.why_not = "not a band";
        return r;
    }
    isl_schedule_node *p = point.get();
    int members = int(isl_schedule_node_band_n_member(p));
    int v = members - 1;
    if (members < 3 || unroll_member < 0 || unroll_member >= v) {
        r.why_not = "the band has no member to unroll outside its vector loop and another between";
        return r;
    }
    if (isl_schedule_node_band_get_permutable(p) != isl_bool_true) {
        r.why_not = "the band is not permutable";
        return r;
    }
    auto coincident = [&](int k) { return isl_schedule_node_band_member_get_coincident(p, k) == isl_bool_true; };
    if (!coincident(v) || !coincident(unroll_member)) {
        r.why_not = "the vector or the unrolled member carries a dependence";
        return r;
    }
    if (rows < 1 || block < 2) {
        r.why_not = "a register tile of fewer than 1 row or 2 elements";
        return r;
    }
    // The full-tile test is made once per block (register_tile_lowering.cpp): the rows' and
    // the block's bounds may not change with each other or with the loops between them.
    for (int k = 0; k < v; ++k)
        for (int other : {unroll_member, v})
            if (k != other && !independent_members(bounds_band, k, other)) {
                r.why_not = "the bounds of the rows or the block depend on another loop of the tile (a triangular nest)";
                return r;
            }
    isl_ctx *ctx = point.ctx().get();
    isl_multi_union_pw_aff *mupa = isl_schedule_node_band_get_partial_schedule(p);
    isl_space *params = isl_space_params(isl_multi_union_pw_aff_get_space(mupa));
    isl_union_pw_aff *vec = isl_multi_union_pw_aff_get_at(mupa, v);
    // The block loop floor(j / B) and the loop within the block j mod B.
    isl_union_pw_aff *block_loop =
        isl_union_pw_aff_floor(isl_union_pw_aff_scale_down_val(isl_union_pw_aff_copy(vec), isl_val_int_from_si(ctx, block)));
    isl_union_pw_aff *within = isl_union_pw_aff_mod_val(vec, isl_val_int_from_si(ctx, block));
    isl_union_pw_aff_list *middle = isl_union_pw_aff_list_alloc(ctx, members);
    std::vector<bool> middle_coincident;
    for (int k = 0; k < v; ++k) {
        if (k == unroll_member) continue;
        middle = isl_union_pw_aff_list_add(middle, isl_multi_union_pw_aff_get_at(mupa, k));
        middle_coincident.push_back(coincident(k));
    }
    isl_union_pw_aff *row = isl_multi_union_pw_aff_get_at(mupa, unroll_member);
    isl_multi_union_pw_aff_free(mupa);

    // Replace the band by: block loop -> register_tile mark -> the other members -> rows ->
    // "vector" mark -> the loop within the block (built bottom-up, each insertion above the last).
    isl::schedule_node n = isl::manage(isl_schedule_node_delete(point.copy()));
    // Bands below the point band none of whose members is coincident, down to the statement
    // (conv's window loops, which isl keeps in bands of their own below the channel reduction):
    // the rows and the block go below them too, so that the block stays in registers across
    // every reduction loop. Moving the coincident rows and block inward is legal.
    int sunk = 0, sunk_members = 0;
    for (isl::schedule_node below = n;; below = below.child(0)) {
        if (isl_schedule_node_get_type(below.get()) == isl_schedule_node_leaf) {
            for (int k = 0; k < sunk; ++k) n = n.child(0);
            break;
        }
        bool reduction_band = is_band(below) && isl_schedule_node_n_children(below.get()) == 1;
        int below_members = reduction_band ? int(isl_schedule_node_band_n_member(below.get())) : 0;
        for (int k = 0; reduction_band && k < below_members; ++k)
            if (isl_schedule_node_band_member_get_coincident(below.get(), k) == isl_bool_true) reduction_band = false;
        if (!reduction_band) {
            sunk = sunk_members = 0;
            break;
        }
        ++sunk;
        sunk_members += below_members;
    }
    n = insert_permutable_band(n, isl_space_copy(params), isl_union_pw_aff_list_from_union_pw_aff(within), {true});
    n = insert_mark(n, Mark::vector());
    n = insert_permutable_band(n, isl_space_copy(params), isl_union_pw_aff_list_from_union_pw_aff(row), {true});
    for (int k = 0; k < sunk; ++k) n = n.parent();
    n = insert_permutable_band(n, isl_space_copy(params), middle, middle_coincident);
    isl::schedule_node marked = insert_mark(n, Mark::register_tile(rows, block));
    std::string unsound = register_tile_unsound(m, marked);
    if (!unsound.empty()) {
        isl_space_free(params);
        isl_union_pw_aff_free(block_loop);
        r.why_not = unsound;
        return r;
    }
    r.band = insert_permutable_band(marked, params, isl_union_pw_aff_list_from_union_pw_aff(block_loop), {true});
    r.sunk_members = sunk_members;
    return r;
}

} // namespace tessera::poly
