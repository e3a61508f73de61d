#include "tessera/poly/substitution_blocks.h"

#include <isl/aff.h>
#include <isl/map.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include "tessera/poly/tree_transform.h"

namespace tessera::poly {

SubstitutionBlocks substitution_row_blocks(const isl::schedule_node &band, const isl::union_map &deps, int block_rows) {
    SubstitutionBlocks r;
    if (!is_band(band) || isl_schedule_node_band_n_member(band.get()) != 2) {
        r.why_not = "not a band of two members";
        return r;
    }
    if (isl_schedule_node_band_get_permutable(band.get()) != isl_bool_true) {
        r.why_not = "the band is not permutable";
        return r;
    }
    isl::ctx ctx = band.ctx();
    const std::string B = std::to_string(block_rows), B1 = std::to_string(block_rows - 1);
    // The band's instances and their points (row, position along the row).
    isl::union_set domain = isl::manage(isl_schedule_node_get_domain(band.get()));
    isl::union_map points = isl::manage(
        isl_union_map_from_multi_union_pw_aff(isl_schedule_node_band_get_partial_schedule(band.get())));
    points = points.intersect_domain(domain);
    // The dependences among them inside one iteration of the loops around the band, between points.
    isl::union_map outer = isl::manage(isl_schedule_node_get_prefix_schedule_union_map(band.get()));
    isl::union_map inner = deps.intersect(outer.apply_range(outer.reverse())).intersect_domain(domain).intersect_range(domain);
    isl::union_map between = inner.apply_domain(points).apply_range(points);
    if (between.is_empty()) {
        r.why_not = "no dependence between the band's instances";
        return r;
    }
    isl::map point_deps = isl::manage(isl_map_from_union_map(between.copy()));
    // The bulk: the points left of their block's first column (the block of rows B b .. B b +
    // B - 1 reads columns below B b only there); the rest: from that column to the diagonal.
    isl::set all = isl::manage(isl_set_from_union_set(points.range().release()));
    isl::set bulk = all.intersect(isl::set(ctx, "{ [p0, p1] : exists (b : " + B + "b <= p0 <= " + B + "b + " + B1 + " and p1 < " + B + "b) }"));
    isl::set rest = all.subtract(bulk);
    if (bulk.is_empty()) {
        r.why_not = "no instance lies left of its block of " + B + " rows";
        return r;
    }
    isl::map same_block(ctx, "{ [p0, p1] -> [q0, q1] : exists (b : " + B + "b <= p0 <= " + B + "b + " + B1 + " and " + B + "b <= q0 <= " +
                                 B + "b + " + B1 + ") }");
    isl::map block_deps = point_deps.intersect(same_block);
    // Rows of the bulk run in parallel: no dependence from another row of the block reaches it.
    isl::map other_row(ctx, "{ [p0, p1] -> [q0, q1] : q0 != p0 }");
    if (!block_deps.intersect(other_row).intersect_range(bulk).is_empty()) {
        r.why_not = "left of its block, an instance depends on another row of the block";
        return r;
    }
    // The bulk runs first in each block: nothing in it may depend on the rest of its block.
    if (!block_deps.intersect_domain(rest).intersect_range(bulk).is_empty()) {
        r.why_not = "the bulk of a block depends on its rest";
        return r;
    }
    isl::union_set bulk_instances = points.intersect_range(isl::union_set(bulk)).domain();
    isl::union_set rest_instances = points.intersect_range(isl::union_set(rest)).domain();

    // Insert the block band above the band: floor(row / B), one member, in order.
    isl_multi_union_pw_aff *mupa = isl_schedule_node_band_get_partial_schedule(band.get());
    isl_union_pw_aff *rows = isl_multi_union_pw_aff_get_at(mupa, 0);
    isl_multi_union_pw_aff_free(mupa);
    rows = isl_union_pw_aff_floor(isl_union_pw_aff_scale_down_val(rows, isl_val_int_from_si(ctx.get(), block_rows)));
    isl_schedule_node *node = isl_schedule_node_insert_partial_schedule(band.copy(), isl_multi_union_pw_aff_from_union_pw_aff(rows));
    node = isl_schedule_node_band_set_permutable(node, 1);
    // Below it, a sequence of the bulk then the rest, each over a copy of the band; the bulk's
    // rows are independent of one another (dependences from other rows come from earlier blocks).
    node = isl_schedule_node_child(node, 0);
    isl_union_set_list *filters = isl_union_set_list_alloc(ctx.get(), 2);
    filters = isl_union_set_list_add(filters, bulk_instances.release());
    filters = isl_union_set_list_add(filters, rest_instances.release());
    node = isl_schedule_node_insert_sequence(node, filters);
    node = isl_schedule_node_child(isl_schedule_node_child(node, 0), 0);
    node = isl_schedule_node_band_member_set_coincident(node, 0, 1);
    node = isl_schedule_node_parent(isl_schedule_node_parent(isl_schedule_node_parent(node)));
    r.band = isl::manage(node);
    return r;
}

} // namespace tessera::poly
