#include "tessera/poly/tree_transform.h"

#include "tessera/poly/isl_util.h"

#include <isl/aff.h>
#include <isl/map.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include <optional>
#include <utility>

#include "tessera/error.h"

namespace tessera::poly {

bool is_band(const isl::schedule_node &node) {
    return isl_schedule_node_get_type(node.get()) == isl_schedule_node_band &&
           isl_schedule_node_band_n_member(node.get()) > 0;
}

isl::schedule_node unroll_full_tiles(const isl::schedule_node &node, int member, int extent) {
    isl_schedule_node *band = node.copy();
    // The instances below the band in the space (outer loops, band members).
    isl_union_map *prefix = isl_schedule_node_get_prefix_schedule_union_map(band);
    int outer = int(isl_schedule_node_get_schedule_depth(band));
    isl_union_map *partial = isl_union_map_from_multi_union_pw_aff(isl_schedule_node_band_get_partial_schedule(band));
    isl_union_map *schedule = isl_union_map_flat_range_product(prefix, partial);
    schedule = isl_union_map_intersect_domain(schedule, isl_schedule_node_get_domain(band));
    isl_union_set *range = isl_union_map_range(schedule);
    if (isl_union_set_n_set(range) != 1) {
        isl_union_set_free(range);
        return isl::manage(isl_schedule_node_band_member_set_ast_loop_type(band, member, isl_ast_loop_unroll));
    }
    isl_set *points = isl_set_from_union_set(range);
    unsigned at = unsigned(outer + member);
    // The prefixes (every dimension but the member's) and, for each, all `extent` values.
    isl_set *prefixes = isl_set_project_out(isl_set_copy(points), isl_dim_set, at, 1);
    isl_set *whole = isl_set_insert_dims(isl_set_copy(prefixes), isl_dim_set, at, 1);
    whole = isl_set_upper_bound_si(isl_set_lower_bound_si(whole, isl_dim_set, at, 0), isl_dim_set, at, extent - 1);
    // A prefix is partial where one of its values is not an instance.
    isl_set *partial_prefixes = isl_set_project_out(isl_set_subtract(whole, points), isl_dim_set, at, 1);
    isl_set *full = isl_set_subtract(prefixes, partial_prefixes);
    // isolate[[outer] -> [band]] over the full prefixes, any value of the member.
    full = isl_set_insert_dims(full, isl_dim_set, at, 1);
    isl_map *split = isl_map_move_dims(isl_map_from_range(full), isl_dim_in, 0, isl_dim_out, 0, unsigned(outer));
    isl_set *isolate = isl_set_set_tuple_name(isl_map_wrap(split), "isolate");
    isl_union_set *options = isl_union_set_from_set(isolate);
    isl_ctx *ctx = isl_schedule_node_get_ctx(band);
    std::string unroll = "{ [isolate[] -> unroll[" + std::to_string(member) + "]] }";
    options = isl_union_set_union(options, isl_union_set_read_from_str(ctx, unroll.c_str()));
    band = isl_schedule_node_band_set_ast_build_options(band, options);
    return isl::manage(band);
}

isl::schedule_node split_band(const isl::schedule_node &node, int pos) {
    return isl::manage(isl_schedule_node_band_split(node.copy(), pos));
}

isl::schedule_node tile_band(const isl::schedule_node &node, const std::vector<int> &sizes) {
    isl_ctx *ctx = node.ctx().get();
    isl_space *space = isl_schedule_node_band_get_space(node.get());
    isl_multi_val *mv = isl_multi_val_zero(space);
    for (size_t i = 0; i < sizes.size(); ++i) mv = isl_multi_val_set_val(mv, int(i), isl_val_int_from_si(ctx, sizes[i]));
    isl_options_set_tile_scale_tile_loops(ctx, 0);
    isl_options_set_tile_shift_point_loops(ctx, 1);
    return isl::manage(isl_schedule_node_band_tile(node.copy(), mv));
}

isl::schedule_node jam_rows(const isl::schedule_node &node, int rows) {
    int members = int(isl_schedule_node_band_n_member(node.get()));
    TESSERA_INTERNAL_ASSERT(members >= 1 && rows >= 2, "jam_rows: ", members, " members, ", rows, " rows");
    TESSERA_INTERNAL_ASSERT(isl_schedule_node_n_children(node.get()) == 1 && is_band(node.child(0)) &&
                                isl_schedule_node_band_n_member(node.child(0).get()) == 1,
                            "jam_rows: the band's child is not a one-member band");
    // (outer members) (rows): the rows' band on its own.
    isl::schedule_node rows_band = members > 1 ? split_band(node, members - 1).child(0) : node;
    // (rows / rows) (rows mod rows) (row loop)
    isl::schedule_node point = tile_band(rows_band, {rows}).child(0);
    // (rows / rows) (row loop) (rows mod rows): the point band moved to the leaf below the row
    // loop; isl returns the node now at its position, the row loop.
    isl::schedule_node row_loop = isl::manage(isl_schedule_node_band_sink(point.copy()));
    // Back to the position of `node`: row loop -> strip-mined rows (-> outer members).
    isl::schedule_node top = row_loop.parent();
    return members > 1 ? top.parent() : top;
}

isl::schedule_node permute_band(const isl::schedule_node &node, const std::vector<int> &order) {
    isl_ctx *ctx = node.ctx().get();
    int members = int(isl_schedule_node_band_n_member(node.get()));
    TESSERA_INTERNAL_ASSERT(int(order.size()) == members, "permute_band: ", order.size(), " indices for ", members, " members");
    TESSERA_INTERNAL_ASSERT(isl_schedule_node_band_get_permutable(node.get()) == isl_bool_true,
                            "permute_band: the band is not permutable");
    isl_multi_union_pw_aff *mupa = isl_schedule_node_band_get_partial_schedule(node.get());
    isl_union_pw_aff_list *list = isl_union_pw_aff_list_alloc(ctx, members);
    std::vector<bool> coincident;
    for (int k : order) {
        list = isl_union_pw_aff_list_add(list, isl_multi_union_pw_aff_get_at(mupa, k));
        coincident.push_back(isl_schedule_node_band_member_get_coincident(node.get(), k) == isl_bool_true);
    }
    isl_space *params = isl_space_params(isl_multi_union_pw_aff_get_space(mupa));
    isl_multi_union_pw_aff_free(mupa);
    isl::schedule_node deleted = isl::manage(isl_schedule_node_delete(node.copy()));
    return insert_permutable_band(deleted, params, list, coincident);
}

isl::schedule_node insert_permutable_band(const isl::schedule_node &node, isl_space *params, isl_union_pw_aff_list *members,
                                          const std::vector<bool> &coincident) {
    int n_members = int(coincident.size());
    isl_space *space = isl_space_add_dims(isl_space_set_from_params(params), isl_dim_set, unsigned(n_members));
    isl_schedule_node *n =
        isl_schedule_node_insert_partial_schedule(node.copy(), isl_multi_union_pw_aff_from_union_pw_aff_list(space, members));
    n = isl_schedule_node_band_set_permutable(n, 1);
    for (int k = 0; k < n_members; ++k) n = isl_schedule_node_band_member_set_coincident(n, k, coincident[size_t(k)] ? 1 : 0);
    return isl::manage(n);
}

isl::schedule_node set_band_parallel(const isl::schedule_node &node) {
    isl_schedule_node *n = node.copy();
    int members = int(isl_schedule_node_band_n_member(n));
    n = isl_schedule_node_band_set_permutable(n, 1);
    for (int i = 0; i < members; ++i) n = isl_schedule_node_band_member_set_coincident(n, i, 1);
    return isl::manage(n);
}

isl::schedule_node mark_parallel_and_vector(const isl::schedule_node &node, bool parallel, bool vector) {
    isl::schedule_node n = node;
    int members = int(isl_schedule_node_band_n_member(n.get()));
    bool par = parallel && isl_schedule_node_band_member_get_coincident(n.get(), 0) == isl_bool_true;
    // (A band of one member already below a vector mark keeps that one: a band the affine
    // scheduler moved below the reduction bands under it is met again as the bands are walked.)
    bool marked = false;
    if (members == 1 && isl_schedule_node_has_parent(n.get()) == isl_bool_true) {
        isl_schedule_node *up = isl_schedule_node_parent(n.copy());
        if (isl_schedule_node_get_type(up) == isl_schedule_node_mark) {
            std::optional<Mark> m = mark_of(up);
            marked = m && m->kind == Mark::Kind::Vector;
        }
        isl_schedule_node_free(up);
    }
    bool vec = vector && isl_schedule_node_band_member_get_coincident(n.get(), members - 1) == isl_bool_true &&
               !(par && members == 1) && !marked;
    if (vec) {
        if (members > 1) {
            n = split_band(n, members - 1).child(0);
            n = insert_mark(n, Mark::vector()).parent();
        } else {
            n = insert_mark(n, Mark::vector());
        }
    }
    if (par) {
        // The two outer loops run on threads together when both carry nothing: tiles of a
        // batch and of rows (8 x 512 rows in tiles of 32 x 32: 1 x 16 iterations).
        int left = int(isl_schedule_node_band_n_member(n.get()));
        int collapse = left >= 2 && isl_schedule_node_band_member_get_coincident(n.get(), 1) == isl_bool_true ? 2 : 1;
        if (left > collapse) n = split_band(n, collapse);
        n = insert_mark(n, Mark::parallel(collapse));
    }
    return n;
}

Wavefront wavefront_band(const isl::schedule_node &node) {
    Wavefront w;
    if (!is_band(node) || isl_schedule_node_band_n_member(node.get()) < 2) {
        w.why_not = "the band has fewer than two loops";
        return w;
    }
    if (isl_schedule_node_band_get_permutable(node.get()) != isl_bool_true) {
        w.why_not = "the band is not permutable";
        return w;
    }
    // (T0, T1, ...) -> (T0 + T1, T1, ...): replace the band by the new partial schedule.
    isl_multi_union_pw_aff *mupa = isl_schedule_node_band_get_partial_schedule(node.get());
    isl_union_pw_aff *sum = isl_union_pw_aff_add(isl_multi_union_pw_aff_get_at(mupa, 0), isl_multi_union_pw_aff_get_at(mupa, 1));
    mupa = isl_multi_union_pw_aff_set_at(mupa, 0, sum);
    isl_schedule_node *n = isl_schedule_node_delete(node.copy());
    n = isl_schedule_node_insert_partial_schedule(n, mupa);
    n = isl_schedule_node_band_set_permutable(n, 1);
    isl::schedule_node band = isl::manage(n);
    // The wavefront loop alone, then the parallel loop (and the rest of the band) below it.
    band = split_band(band, 1);
    w.band = insert_mark(band.child(0), Mark::parallel()).parent();
    return w;
}

namespace {
// The pairs of `deps` between instances of `node`'s domain that agree on every loop around the
// band at `node`, and the band's first `members` members; nothing when it has none.
std::optional<std::pair<isl::union_map, isl::multi_union_pw_aff>> pairs_within_outer_loops(const isl::schedule_node &node,
                                                                                           const isl::union_map &deps, int members) {
    // The pairs are compared at the schedule's values as functions of the instances (isl's
    // eq_at), which keeps the instances' coordinates, rather than through the relation of
    // instances with equal outer loops (the prefix composed with its inverse), a relation with
    // the divisions of every tile loop (heat-3d's marks in the legality check: 21 -> 19 ms).
    isl::union_set domain = isl::manage(isl_schedule_node_get_domain(node.get()));
    isl::union_map pairs = deps.intersect_domain(domain).intersect_range(domain);
    isl::multi_union_pw_aff outer = isl::manage(isl_schedule_node_get_prefix_schedule_multi_union_pw_aff(node.get()));
    if (isl_multi_union_pw_aff_size(outer.get()) > 0)
        pairs = isl::manage(isl_union_map_eq_at_multi_union_pw_aff(pairs.release(), outer.release()));
    isl::multi_union_pw_aff band = isl::manage(isl_schedule_node_band_get_partial_schedule(node.get()));
    isl_size size = isl_multi_union_pw_aff_size(band.get());
    int n = std::min(members, int(size));
    if (n <= 0) return std::nullopt;
    isl::multi_union_pw_aff first = isl::manage(isl_multi_union_pw_aff_drop_dims(band.release(), isl_dim_set, unsigned(n), unsigned(size - n)));
    return std::pair{pairs, first};
}
} // namespace

isl::union_map carried_dependences(const isl::schedule_node &node, const isl::union_map &deps, int members) {
    auto within = pairs_within_outer_loops(node, deps, members);
    if (!within) return isl::union_map::empty(deps.ctx());
    auto &[pairs, first] = *within;
    // Pairs that differ at the first n members: those ordered either way there, rather than all
    // pairs less those equal there, a subtraction of relations with the tile loops' divisions
    // (heat-3d's legality check on one thread: 80 -> 73 ms).
    isl::union_map before = isl::manage(isl_union_map_lex_lt_at_multi_union_pw_aff(pairs.copy(), first.copy()));
    isl::union_map after = isl::manage(isl_union_map_lex_gt_at_multi_union_pw_aff(pairs.copy(), first.copy()));
    return before.unite(after);
}

bool carries_dependences(const isl::schedule_node &node, const isl::union_map &deps, int members) {
    auto within = pairs_within_outer_loops(node, deps, members);
    if (!within) return false;
    auto &[pairs, first] = *within;
    // (Source before sink first: where a legal schedule's loops carry a dependence, that way.)
    if (!isl::manage(isl_union_map_lex_lt_at_multi_union_pw_aff(pairs.copy(), first.copy())).is_empty()) return true;
    return !isl::manage(isl_union_map_lex_gt_at_multi_union_pw_aff(pairs.copy(), first.copy())).is_empty();
}

namespace {

// Why `pieces` cannot distribute the band at `node`, or empty.
std::string unusable_pieces(const isl::schedule_node &node, const std::vector<isl::union_set> &pieces) {
    if (!is_band(node)) return "not a band";
    if (pieces.size() < 2 || pieces.size() > 16) return "fewer than two pieces (or more than 16)";
    return "";
}

// A sequence inserted at `node`, one filter per piece (isl_schedule_node_insert_sequence copies
// the subtree under every filter), in an order where every dependence of `deps` between two
// pieces inside the loops around `node` goes forward (Kahn's algorithm; the given position
// breaks ties). None when those dependences form a cycle.
std::optional<isl::schedule_node> sequence_in_dependence_order(const isl::schedule_node &node, const isl::union_map &deps,
                                                               const std::vector<isl::union_set> &pieces) {
    size_t n = pieces.size();
    isl::union_set domain = isl::manage(isl_schedule_node_get_domain(node.get()));
    isl::union_map outer = isl::manage(isl_schedule_node_get_prefix_schedule_union_map(node.get()));
    isl::union_map inside = deps.intersect_domain(domain).intersect_range(domain).intersect(outer.apply_range(outer.reverse()));
    std::vector<int> in_degree(n, 0), order;
    std::vector<std::vector<bool>> edge(n, std::vector<bool>(n, false));
    for (size_t a = 0; a < n; ++a)
        for (size_t b = 0; b < n; ++b)
            if (a != b && !inside.intersect_domain(pieces[a]).intersect_range(pieces[b]).is_empty()) {
                edge[a][b] = true;
                ++in_degree[b];
            }
    std::vector<bool> placed(n, false);
    while (order.size() < n) {
        size_t next = n;
        for (size_t a = 0; a < n && next == n; ++a)
            if (!placed[a] && in_degree[a] == 0) next = a;
        if (next == n) return std::nullopt;
        placed[next] = true;
        order.push_back(int(next));
        for (size_t b = 0; b < n; ++b) in_degree[b] -= edge[next][b] ? 1 : 0;
    }
    isl_union_set_list *filters = isl_union_set_list_alloc(domain.ctx().get(), int(n));
    for (int k : order) filters = isl_union_set_list_add(filters, pieces[size_t(k)].copy());
    return isl::manage(isl_schedule_node_insert_sequence(node.copy(), filters));
}

} // namespace

Distribution distribute_band(const isl::schedule_node &node, const isl::union_map &deps, const std::vector<isl::union_set> &pieces) {
    Distribution d;
    d.why_not = unusable_pieces(node, pieces);
    if (!d.why_not.empty()) return d;
    // Each copy of the band keeps its members' permutability and coincidence: the dependences
    // inside one piece are those the band already had.
    d.node = sequence_in_dependence_order(node, deps, pieces);
    if (!d.node) d.why_not = "the dependences between the pieces form a cycle inside the loops around the band";
    return d;
}

Distribution distribute_innermost_member(const isl::schedule_node &node, const isl::union_map &deps,
                                         const std::vector<isl::union_set> &pieces) {
    Distribution d;
    d.why_not = unusable_pieces(node, pieces);
    if (!d.why_not.empty()) return d;
    int members = int(isl_schedule_node_band_n_member(node.get()));
    isl::union_set domain = isl::manage(isl_schedule_node_get_domain(node.get()));
    // The innermost member as a band of its own: its prefix is every loop around it.
    isl::schedule_node inner = members > 1 ? split_band(node, members - 1).child(0) : node;
    isl::union_map carried = carried_dependences(inner, deps.intersect_domain(domain).intersect_range(domain));
    for (size_t a = 0; a < pieces.size(); ++a)
        if (!carried.intersect_domain(pieces[a]).intersect_range(pieces[a]).is_empty()) {
            d.why_not = "the loop carries a dependence inside piece " + std::to_string(a);
            return d;
        }
    // A sequence above the innermost member; each copy of the member carries nothing now (no
    // piece depends on itself across it).
    std::optional<isl::schedule_node> seq = sequence_in_dependence_order(inner, deps, pieces);
    if (!seq) {
        d.why_not = "the dependences between the pieces form a cycle inside the loop";
        return d;
    }
    for (int k = 0; k < int(pieces.size()); ++k) {
        isl::schedule_node band = seq->child(k).child(0);
        band = isl::manage(isl_schedule_node_band_member_set_coincident(band.release(), 0, 1));
        seq = band.parent().parent();
    }
    d.node = members > 1 ? seq->parent() : *seq;
    return d;
}

isl::schedule_node mark_member(const isl::schedule_node &node, int member, const Mark &mark, int count) {
    isl::schedule_node n = node;
    if (member > 0) n = split_band(n, member).child(0);
    if (int(isl_schedule_node_band_n_member(n.get())) > count) n = split_band(n, count);
    return insert_mark(n, mark);
}

isl::schedule_node unroll_member(const isl::schedule_node &node, int member) {
    return isl::manage(isl_schedule_node_band_member_set_ast_loop_type(node.copy(), member, isl_ast_loop_unroll));
}

isl::schedule in_sequence(const isl::schedule &first, const isl::schedule &second) {
    return first.is_null() ? second : isl::manage(isl_schedule_sequence(first.copy(), second.copy()));
}

namespace {

// The band below a "vector" mark, every member set separated (separate_vector_loops).
isl_schedule_node *separate_vector_loop(isl_schedule_node *node, void *) {
    if (isl_schedule_node_get_type(node) != isl_schedule_node_band || isl_schedule_node_has_parent(node) != isl_bool_true) return node;
    isl_schedule_node *parent = isl_schedule_node_parent(isl_schedule_node_copy(node));
    std::optional<Mark> mark;
    if (isl_schedule_node_get_type(parent) == isl_schedule_node_mark) mark = mark_of(parent);
    isl_schedule_node_free(parent);
    if (!mark || mark->kind != Mark::Kind::Vector) return node;
    isl_size n = isl_schedule_node_band_n_member(node);
    for (isl_size i = 0; i < n; ++i) node = isl_schedule_node_band_member_set_ast_loop_type(node, int(i), isl_ast_loop_separate);
    return node;
}

} // namespace

isl::schedule separate_vector_loops(const isl::schedule &schedule) {
    return isl::manage(isl_schedule_map_schedule_node_bottom_up(schedule.copy(), separate_vector_loop, nullptr));
}

} // namespace tessera::poly
