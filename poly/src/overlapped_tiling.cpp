#include "tessera/poly/overlapped_tiling.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

#include <isl/aff.h>
#include <isl/constraint.h>
#include <isl/fixed_box.h>
#include <isl/ilp.h>
#include <isl/local_space.h>
#include <isl/map.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_map.h>

#include "tessera/poly/affine.h"
#include "tessera/poly/isl_util.h"
#include "tessera/poly/tree_transform.h"

namespace tessera::poly {
namespace {

// { S[i] -> [t] : t_j = floor(i_j / T_j) } for the root statement.
isl::map tile_map(const Model &m, const Statement &root, const std::vector<int> &sizes) {
    AffineSpace sp = m.instance_space(root.name, root.dims);
    isl_map *r = nullptr;
    for (size_t j = 0; j < root.dims.size(); ++j) {
        Expr t = ir::make_var(root.dims[j]) / sizes[j];
        isl_map *dim = isl_map_from_pw_aff(to_pw_aff(t, sp)->release());
        r = r ? isl_map_flat_range_product(r, dim) : dim;
    }
    if (!r) r = isl_map_from_domain(root.domain.copy());
    r = isl_map_reset_tuple_id(r, isl_dim_out);
    return isl::manage(r);
}

// The flat set of [t, i] pairs of a footprint relation [t] -> S[i], named `name`.
isl::set expanded_domain(const isl::map &footprint, const std::string &name) {
    isl_set *s = isl_set_flatten(isl_map_wrap(footprint.copy()));
    return isl::manage(isl_set_set_tuple_name(s, name.c_str()));
}

// { D[t, i] -> [t_order[0], t_order[1], ...] }: the tile band, over all of D's space: the domain
// node already restricts it, and band schedules without the domain's constraints keep AST
// generation cheap.
isl::union_map tile_projection(const isl::set &d, unsigned n_tile, const std::vector<int> &order) {
    unsigned n = unsigned(isl_set_dim(d.get(), isl_dim_set));
    isl_map *id = isl_map_identity(isl_space_map_from_set(isl_set_get_space(d.get())));
    id = isl_map_project_out(id, isl_dim_out, n_tile, n - n_tile);
    id = isl_map_reset_tuple_id(id, isl_dim_out);
    std::string perm = "{ [";
    for (unsigned j = 0; j < n_tile; ++j) perm += (j ? ", t" : "t") + std::to_string(j);
    perm += "] -> [";
    for (size_t q = 0; q < order.size(); ++q) perm += (q ? ", t" : "t") + std::to_string(order[q]);
    perm += "] }";
    id = isl_map_apply_range(id, isl_map_read_from_str(isl_set_get_ctx(d.get()), perm.c_str()));
    return isl::union_map(isl::manage(id));
}

// { D[t, i] -> [i_0, ..., i_row - shift] }: the fused row band of a sliding group.
isl::union_map shifted_prefix(const isl::set &d, unsigned n_tile, int row, long shift) {
    isl_space *sp = isl_set_get_space(d.get());
    isl_local_space *ls = isl_local_space_from_space(isl_space_copy(sp));
    isl_aff_list *affs = isl_aff_list_alloc(isl_set_get_ctx(d.get()), row + 1);
    for (int q = 0; q <= row; ++q) {
        isl_aff *a = isl_aff_var_on_domain(isl_local_space_copy(ls), isl_dim_set, n_tile + unsigned(q));
        if (q == row) a = isl_aff_add_constant_si(a, int(-shift));
        affs = isl_aff_list_add(affs, a);
    }
    isl_local_space_free(ls);
    isl_space *range = isl_space_add_dims(isl_space_set_from_params(isl_space_params(isl_space_copy(sp))), isl_dim_set,
                                          unsigned(row + 1));
    isl_space *map_space = isl_space_map_from_domain_and_range(sp, range);
    isl_multi_aff *ma = isl_multi_aff_from_aff_list(map_space, affs);
    return isl::union_map(isl::manage(isl_map_from_multi_aff(ma)));
}

// { D[t, i] -> [i_first, ...] }: the point dimensions from `first` on (tuple index in D).
isl::union_map suffix_projection(const isl::set &d, unsigned first) {
    isl_map *id = isl_map_identity(isl_space_map_from_set(isl_set_get_space(d.get())));
    id = isl_map_project_out(id, isl_dim_out, 0, first);
    id = isl_map_reset_tuple_id(id, isl_dim_out);
    return isl::union_map(isl::manage(id));
}

isl::multi_union_pw_aff to_mupa(const isl::union_map &u) {
    return isl::manage(isl_multi_union_pw_aff_from_union_map(u.copy()));
}

isl::schedule_node up_to(isl::schedule_node n, isl_schedule_node_type type) {
    while (isl_schedule_node_get_type(n.get()) != type) n = n.parent();
    return n;
}

} // namespace

std::vector<int> tile_loop_order(const std::vector<int> &tile_sizes) {
    std::vector<int> order;
    int first = -1;
    for (size_t j = 0; j < tile_sizes.size(); ++j)
        if (tile_sizes[j] > 1) {
            first = int(j);
            break;
        }
    if (first >= 0) order.push_back(first);
    for (size_t j = 0; j < tile_sizes.size(); ++j)
        if (int(j) != first) order.push_back(int(j));
    return order;
}

namespace {

// { [t] -> S[i] : off(t) <= i < off(t) + size } for a fixed box: the graph of the offset,
// composed with one relation { [o] -> [v] : o <= v <= o + size - 1 } built from constraints.
// (Built dimension by dimension from parsed strings, each composed and joined in turn, it took
// about a third of local_laplacian's grouping in a profile, mostly parsing and aligning the
// parameters of each piece with the offset's.)
isl_map *box_map(isl_multi_aff *off, isl_multi_val *size, const std::string &tuple) {
    isl_ctx *ctx = isl_multi_aff_get_ctx(off);
    unsigned n = unsigned(isl_multi_aff_dim(off, isl_dim_out));
    isl_local_space *ls = isl_local_space_from_space(isl_space_alloc(ctx, 0, n, n));
    isl_basic_map *spread = isl_basic_map_universe(isl_local_space_get_space(ls));
    for (unsigned j = 0; j < n; ++j) {
        isl_val *v = isl_multi_val_get_at(size, int(j));
        long sz = isl_val_get_num_si(v);
        isl_val_free(v);
        // v_j - o_j >= 0
        isl_constraint *low = isl_constraint_alloc_inequality(isl_local_space_copy(ls));
        low = isl_constraint_set_coefficient_si(low, isl_dim_out, int(j), 1);
        low = isl_constraint_set_coefficient_si(low, isl_dim_in, int(j), -1);
        spread = isl_basic_map_add_constraint(spread, low);
        // o_j + size_j - 1 - v_j >= 0
        isl_constraint *high = isl_constraint_alloc_inequality(isl_local_space_copy(ls));
        high = isl_constraint_set_coefficient_si(high, isl_dim_in, int(j), 1);
        high = isl_constraint_set_coefficient_si(high, isl_dim_out, int(j), -1);
        high = isl_constraint_set_constant_si(high, int(sz - 1));
        spread = isl_basic_map_add_constraint(spread, high);
    }
    isl_local_space_free(ls);
    isl_map *graph = isl_map_from_multi_aff(isl_multi_aff_reset_tuple_id(isl_multi_aff_copy(off), isl_dim_out));
    isl_map *r = isl_map_apply_range(graph, isl_map_from_basic_map(spread));
    return isl_map_set_tuple_name(r, isl_dim_out, tuple.c_str());
}

} // namespace

// Footprints of every stage per tile, consumers first, each producer widened to its fixed box
// hull (PolyMage's rectangular footprints), which keeps its per-tile domain a single box.
namespace {

// A fixed box per tile: an affine offset (of the tile coordinates) and a constant size per
// dimension, as isl_fixed_box holds them.
struct FixedBox {
    isl::multi_aff offset;
    std::vector<long> size;
};

// isl's simple fixed box hull of the range of `piece` (tiles -> elements).
std::optional<FixedBox> hull_of(const isl::map &piece) {
    isl_fixed_box *box = isl_map_get_range_simple_fixed_box_hull(piece.get());
    std::optional<FixedBox> r;
    if (isl_fixed_box_is_valid(box) == isl_bool_true) {
        r = FixedBox{isl::manage(isl_fixed_box_get_offset(box)), {}};
        isl_multi_val *size = isl_fixed_box_get_size(box);
        for (int j = 0; j < int(isl_multi_val_dim(size, isl_dim_set)); ++j) {
            isl_val *v = isl_multi_val_get_at(size, j);
            r->size.push_back(isl_val_get_num_si(v));
            isl_val_free(v);
        }
        isl_multi_val_free(size);
    }
    isl_fixed_box_free(box);
    return r;
}

// a - b where it is an integer constant (takes both; they may name different parameters).
std::optional<long> constant_difference(isl_aff *a, isl_aff *b) {
    a = isl_aff_align_params(a, isl_aff_get_space(b));
    b = isl_aff_align_params(b, isl_aff_get_space(a));
    isl_aff *d = isl_aff_sub(a, b);
    isl_val *v = isl_aff_is_cst(d) == isl_bool_true ? isl_aff_get_constant_val(d) : nullptr;
    std::optional<long> r;
    if (v && isl_val_is_int(v) == isl_bool_true) r = isl_val_get_num_si(v);
    isl_val_free(v);
    isl_aff_free(d);
    return r;
}

// `aj` (of the consumer's coordinates) at the consumer box's corner `corner` (bit k: the high end
// of dimension k), as a function of the tile coordinates.
isl_aff *at_corner(const isl_aff *aj, const FixedBox &consumer, unsigned corner) {
    isl_multi_aff *at = isl_multi_aff_copy(consumer.offset.get());
    for (size_t k = 0; k < consumer.size.size(); ++k)
        if (corner & (1u << k))
            at = isl_multi_aff_set_at(at, int(k), isl_aff_add_constant_si(isl_multi_aff_get_at(at, int(k)), int(consumer.size[k] - 1)));
    // (The read and the consumer's box may name different parameters.)
    isl_aff *a = isl_aff_copy(const_cast<isl_aff *>(aj));
    at = isl_multi_aff_align_params(at, isl_aff_get_space(a));
    a = isl_aff_align_params(a, isl_multi_aff_get_space(at));
    return isl_aff_pullback_multi_aff(a, at);
}

// The range of a read coordinate c ± floor(e / d), e affine in the consumer's coordinates (an
// upsampling read, f(x / 2) or f((x + 1) / 2)), over the consumer's box. It is monotone along
// each coordinate, so its extremes lie at corners of the box: the offset is the lowest corner's
// value and the size the highest's minus it plus one, where every corner's value differs from
// the others by a constant and the lowest has no floor (a consumer box of 32 rows at 32 t read at
// (y + 1) / 2: [16 t, 16 t + 16]). Otherwise none, and isl's hull decides.
std::optional<std::pair<isl::aff, long>> floor_image(const isl::aff &aj, const FixedBox &consumer) {
    isl_aff *a = aj.get();
    if (isl_aff_dim(a, isl_dim_div) != 1 || consumer.size.size() > 6) return std::nullopt;
    // (Coefficients outside the floor: isl_aff_involves_dims also looks inside it.)
    auto coefficient_is = [&](isl_dim_type type, int pos, long value) {
        isl_val *v = isl_aff_get_coefficient_val(a, type, pos);
        bool is = isl_val_cmp_si(v, value) == 0;
        isl_val_free(v);
        return is;
    };
    for (isl_dim_type type : {isl_dim_in, isl_dim_param})
        for (int pos = 0; pos < int(isl_aff_dim(a, type)); ++pos)
            if (!coefficient_is(type, pos, 0)) return std::nullopt;
    isl_val *den = isl_aff_get_denominator_val(a);
    bool single_floor = isl_val_is_one(den) == isl_bool_true && (coefficient_is(isl_dim_div, 0, 1) || coefficient_is(isl_dim_div, 0, -1));
    isl_val_free(den);
    if (!single_floor) return std::nullopt;
    isl::aff first = isl::manage(at_corner(a, consumer, 0));
    long lowest = 0, highest = 0;
    for (unsigned corner = 1; corner < (1u << consumer.size.size()); ++corner) {
        std::optional<long> d = constant_difference(at_corner(a, consumer, corner), first.copy());
        if (!d) return std::nullopt;
        lowest = std::min(lowest, *d);
        highest = std::max(highest, *d);
    }
    isl::aff offset = isl::manage(isl_aff_add_constant_si(first.release(), int(lowest)));
    if (isl_aff_dim(offset.get(), isl_dim_div) != 0) return std::nullopt;
    return std::make_pair(offset, highest - lowest + 1);
}

// The box of what `read` (consumer element -> producer element, the same on every instance)
// takes from a consumer's box, without isl's hull when the read is affine with integer
// coefficients: producer coordinate j = sum_k a_k c_k + b ranges from sum_k a_k (o_k + (a_k < 0 ?
// s_k - 1 : 0)) + b over sum_k |a_k| (s_k - 1) + 1 elements. With blur_y's read of blur_x at
// (x, y + 1) and blur_y's box [32 t1, 32 t1 + 31] in y: [32 t1 + 1, 32 t1 + 32]. (isl's hull of
// the composed map gives the same box; it cost a quarter of local_laplacian's compile time.)
// A coordinate read through one floor (upsampling: f(x / 2)) takes floor_image's box.
//
// `ma` is the read as one affine function defined everywhere (one_affine_function); other reads
// have no such box.
std::optional<FixedBox> single_valued_image(const isl::multi_aff &ma, const FixedBox &consumer) {
    // A consumer offset with floor divisions (below a downsampling read) is left to isl, whose
    // hull writes it in the form the later boxes of the group are derived from.
    for (int k = 0; k < int(isl_multi_aff_dim(consumer.offset.get(), isl_dim_out)); ++k) {
        isl_aff *o = isl_multi_aff_get_at(consumer.offset.get(), k);
        bool divs = isl_aff_dim(o, isl_dim_div) > 0;
        isl_aff_free(o);
        if (divs) return std::nullopt;
    }
    std::optional<FixedBox> r;
    {
        int n = int(isl_multi_aff_dim(ma.get(), isl_dim_out)), nc = int(consumer.size.size());
        if (int(isl_multi_aff_dim(ma.get(), isl_dim_in)) == nc && nc < 32) {  // (corners as bits)
            bool ok = true;
            std::vector<long> sizes;
            isl_multi_aff *offset = nullptr;
            for (int j = 0; j < n && ok; ++j) {
                isl_aff *aj = isl_multi_aff_get_at(ma.get(), j);
                isl_val *den = isl_aff_get_denominator_val(aj);
                ok = isl_aff_dim(aj, isl_dim_div) == 0 && isl_val_is_one(den) == isl_bool_true;
                isl_val_free(den);
                if (!ok) {
                    std::optional<std::pair<isl::aff, long>> floor = floor_image(isl::manage(aj), consumer);
                    ok = floor.has_value();
                    if (!ok) break;
                    isl_multi_aff *oj = isl_multi_aff_from_aff(floor->first.release());
                    offset = offset ? isl_multi_aff_flat_range_product(offset, oj) : oj;
                    sizes.push_back(floor->second);
                    continue;
                }
                // The consumer coordinate each a_k multiplies: its box's low end, or its high end
                // where a_k < 0 (the corner where the producer coordinate is lowest).
                unsigned lowest = 0;
                long size = 1;
                for (int k = 0; k < nc; ++k) {
                    isl_val *c = isl_aff_get_coefficient_val(aj, isl_dim_in, k);
                    long ck = isl_val_get_num_si(c);
                    isl_val_free(c);
                    size += std::labs(ck) * (consumer.size[size_t(k)] - 1);
                    if (ck < 0) lowest |= 1u << k;
                }
                isl_multi_aff *oj = isl_multi_aff_from_aff(at_corner(aj, consumer, lowest));
                isl_aff_free(aj);
                offset = offset ? isl_multi_aff_flat_range_product(offset, oj) : oj;
                sizes.push_back(size);
            }
            if (ok && offset) r = FixedBox{isl::manage(offset), sizes};
            else isl_multi_aff_free(offset);
        }
    }
    return r;
}

// `read` (single-valued) as one affine function defined everywhere, if it is one; `failed` where
// isl did not answer (out of its quota).
std::optional<isl::multi_aff> one_affine_function(const isl::map &read, bool &failed) {
    isl_pw_multi_aff *pma = isl_pw_multi_aff_from_map(read.copy());
    failed = failed || !pma;
    std::optional<isl::multi_aff> r;
    if (pma && isl_pw_multi_aff_n_piece(pma) == 1 && isl_pw_multi_aff_isa_multi_aff(pma) == isl_bool_true) {
        isl_set *domain = isl_pw_multi_aff_domain(isl_pw_multi_aff_copy(pma));
        isl_bool everywhere = isl_set_plain_is_universe(domain);
        isl_set_free(domain);
        failed = failed || everywhere == isl_bool_error;
        if (everywhere == isl_bool_true) r = isl::manage(isl_pw_multi_aff_as_multi_aff(isl_pw_multi_aff_copy(pma)));
        failed = failed || (r && r->is_null());
    }
    isl_pw_multi_aff_free(pma);
    return r;
}

// The constant value of `pa` where it is one affine constant everywhere.
std::optional<long> constant_of(isl_pw_aff *pa) {
    std::optional<long> r;
    if (pa && isl_pw_aff_n_piece(pa) == 1 && isl_pw_aff_isa_aff(pa) == isl_bool_true) {
        isl_set *domain = isl_pw_aff_domain(isl_pw_aff_copy(pa));
        bool everywhere = isl_set_plain_is_universe(domain) == isl_bool_true;
        isl_set_free(domain);
        isl_aff *a = isl_pw_aff_as_aff(isl_pw_aff_copy(pa));
        if (everywhere && isl_aff_is_cst(a) == isl_bool_true) {
            isl_val *v = isl_aff_get_constant_val(a);
            if (isl_val_is_int(v) == isl_bool_true) r = isl_val_get_num_si(v);
            isl_val_free(v);
        }
        isl_aff_free(a);
    }
    isl_pw_aff_free(pa);
    return r;
}

} // namespace

// What affine_image needs of one read, whatever the consumer's box.
struct ReadShape {
    // Whether affine_image can give a box at all: the read is one basic map, and single-valued
    // once its coordinates read over constant ranges are set apart.
    bool usable = false;
    bool single_valued = false;  // as a whole (no coordinate set apart)
    // Per producer coordinate: the constant range it is read over whatever the element (not
    // single-valued reads only).
    std::vector<std::optional<std::pair<long, long>>> ranges;
    // The read without those coordinates as one affine function defined everywhere; none where
    // no coordinate is left, or where it is not such a function.
    std::optional<isl::multi_aff> rest;
};

struct ReadShapes::Shapes {
    // By the access relation's isl object, which the model keeps alive.
    std::map<const isl_map *, ReadShape> of;
};

ReadShapes::ReadShapes() : shapes_(std::make_unique<Shapes>()) {}
ReadShapes::~ReadShapes() = default;

namespace {

// The shape of `access`; `failed` where isl did not answer (out of its quota: not to be kept).
ReadShape read_shape(const isl::map &access, bool &failed) {
    ReadShape r;
    // Over the parameters the read involves (usually none): each is a column of every step
    // below, and aligning the model's dozens of them with the consumer's box at every corner of
    // every read took over a quarter of local_laplacian's grouping in a profile.
    isl::map read = isl::manage(drop_unused_params(access.copy()));
    isl_size pieces = isl_map_n_basic_map(read.get());
    failed = pieces < 0;
    if (pieces != 1) return r;
    isl_bool single_valued = isl_map_is_single_valued(read.get());
    failed = failed || single_valued == isl_bool_error;
    if (single_valued == isl_bool_true) {
        r.single_valued = true;
        r.rest = one_affine_function(read, failed);
        r.usable = r.rest.has_value();
        return r;
    }
    int n = int(isl_map_dim(read.get(), isl_dim_out));
    r.ranges.resize(static_cast<size_t>(n));
    isl::map rest = read;
    for (int j = n - 1; j >= 0; --j) {
        std::optional<long> lo = constant_of(isl_map_dim_min(read.copy(), j));
        std::optional<long> hi = lo ? constant_of(isl_map_dim_max(read.copy(), j)) : std::nullopt;
        if (!hi) continue;
        r.ranges[size_t(j)] = std::make_pair(*lo, *hi);
        rest = isl::manage(isl_map_project_out(rest.release(), isl_dim_out, unsigned(j), 1));
    }
    failed = failed || rest.is_null();
    if (failed) return r;
    int n_rest = int(isl_map_dim(rest.get(), isl_dim_out));
    isl_bool rest_single_valued = isl_map_is_single_valued(rest.get());
    failed = failed || rest_single_valued == isl_bool_error;
    if (n_rest == n || rest_single_valued != isl_bool_true) return r;
    if (n_rest > 0 && !(r.rest = one_affine_function(rest, failed))) return r;
    r.usable = true;
    return r;
}

// The box of what `read` takes from a consumer's box (single_valued_image), also where some
// coordinates are read over a constant range whatever the element (local_laplacian reads its
// pyramids at levels 0 to 6 and 1 to 7 of a data-dependent level): those take the range, the
// others the box of the read without them. None where isl's hull has to decide. `reads`: the
// shapes of reads seen before, or none.
std::optional<FixedBox> affine_image(const isl::map &access, const FixedBox &consumer, ReadShapes *reads) {
    ReadShape computed;
    const ReadShape *shape = nullptr;
    if (reads) {
        auto it = reads->shapes().of.find(access.get());
        if (it != reads->shapes().of.end()) shape = &it->second;
    }
    if (!shape) {
        bool failed = false;
        computed = read_shape(access, failed);
        if (reads && !failed) shape = &reads->shapes().of.emplace(access.get(), std::move(computed)).first->second;
        else shape = &computed;
    }
    if (!shape->usable) return std::nullopt;
    if (shape->single_valued) return single_valued_image(*shape->rest, consumer);
    std::optional<FixedBox> inner;
    if (shape->rest && !(inner = single_valued_image(*shape->rest, consumer))) return std::nullopt;
    isl_space *tiles = isl_multi_aff_get_domain_space(consumer.offset.get());
    isl_multi_aff *offset = nullptr;
    std::vector<long> sizes;
    for (size_t j = 0, k = 0; j < shape->ranges.size(); ++j) {
        isl_aff *aj;
        if (shape->ranges[j]) {
            auto [lo, hi] = *shape->ranges[j];
            aj = isl_aff_val_on_domain(isl_local_space_from_space(isl_space_copy(tiles)), isl_val_int_from_si(isl_space_get_ctx(tiles), lo));
            sizes.push_back(hi - lo + 1);
        } else {
            aj = isl_multi_aff_get_at(inner->offset.get(), int(k));
            sizes.push_back(inner->size[k++]);
        }
        isl_multi_aff *oj = isl_multi_aff_from_aff(aj);
        offset = offset ? isl_multi_aff_flat_range_product(offset, oj) : oj;
    }
    isl_space_free(tiles);
    return FixedBox{isl::manage(offset), sizes};
}

// One box holding `boxes`, where their offsets differ by constants (a stencil's taps, x - 1
// and x + 1): from the lowest offset to the highest end, as isl's hull of their union.
std::optional<FixedBox> bounding_box(const std::vector<FixedBox> &boxes) {
    FixedBox r = boxes[0];
    size_t n = r.size.size();
    std::vector<long> lo(n, 0), hi(r.size);  // relative to boxes[0]'s offset
    for (size_t i = 1; i < boxes.size(); ++i) {
        if (boxes[i].size.size() != n) return std::nullopt;
        for (size_t j = 0; j < n; ++j) {
            std::optional<long> cj =
                constant_difference(isl_multi_aff_get_at(boxes[i].offset.get(), int(j)), isl_multi_aff_get_at(r.offset.get(), int(j)));
            if (!cj) return std::nullopt;
            lo[j] = std::min(lo[j], *cj);
            hi[j] = std::max(hi[j], *cj + boxes[i].size[j]);
        }
    }
    isl_multi_aff *offset = r.offset.release();
    for (size_t j = 0; j < n; ++j) {
        offset = isl_multi_aff_set_at(offset, int(j), isl_aff_add_constant_si(isl_multi_aff_get_at(offset, int(j)), int(lo[j])));
        r.size[j] = hi[j] - lo[j];
    }
    r.offset = isl::manage(offset);
    return r;
}

// The box of stage `si` from those of its consumers in the group (later in `stages`); false
// with `why_not` when it has none of a fixed, reasonable size.
bool footprint_of_stage(const Model &m, const std::vector<int> &stages, int si, const isl::set &root_tiles, Footprints &r,
                        std::string &why_not, ReadShapes *shapes) {
    const Statement &p = m.statements[size_t(stages[size_t(si)])];
    int parray = m.array_of(p.func);
    // Each read's box (affine_image, else isl's hull of the read's map), then one box around
    // them; where they do not combine, isl's hull of the union of the reads' maps. A read's map
    // (its consumer's box composed with the read) is built only where isl needs it.
    std::vector<std::pair<size_t, const Access *>> reads;  // (consumer stage, read)
    for (size_t ci = size_t(si) + 1; ci < stages.size(); ++ci)
        for (const Access &a : m.statements[size_t(stages[ci])].reads)
            if (a.array == parray) reads.emplace_back(ci, &a);
    if (reads.empty()) {
        why_not = "stage " + p.func->name + " is not read by the rest of the group";
        return false;
    }
    auto map_of = [&](const std::pair<size_t, const Access *> &read) {
        const Access &a = *read.second;
        const isl::map &relation = a.unrestricted.is_null() ? a.relation : a.unrestricted;
        return isl::manage(isl_map_set_tuple_name(isl_map_apply_range(r.spread[read.first]->copy(), relation.copy()),
                                                  isl_dim_out, p.name.c_str()));
    };
    std::vector<FixedBox> read_boxes;
    for (const auto &read : reads) {
        size_t ci = read.first;
        const Access &a = *read.second;
        std::optional<FixedBox> box;
        const std::vector<long> &consumer_size = ci + 1 == stages.size() ? r.tile_sizes : r.sizes[ci];
        if (r.offsets[ci] && !consumer_size.empty() && !a.unrestricted.is_null())
            box = affine_image(a.unrestricted, FixedBox{*r.offsets[ci], consumer_size}, shapes);
        if (!box) box = hull_of(map_of(read));
        if (!box) break;
        read_boxes.push_back(*box);
    }
    std::optional<FixedBox> box = read_boxes.size() == reads.size() ? bounding_box(read_boxes) : std::nullopt;
    if (!box) {
        isl::map all = map_of(reads[0]);
        for (size_t i = 1; i < reads.size(); ++i) all = all.unite(map_of(reads[i]));
        box = hull_of(all);
    }
    if (!box) {
        why_not = "the part of " + p.func->name + " one tile needs has no fixed size (a data-dependent or unbounded access)";
        return false;
    }
    // (Named as the statement, whose reads' relations start from it.)
    isl_multi_aff *off = isl_multi_aff_set_tuple_name(box->offset.copy(), isl_dim_out, p.name.c_str());
    r.offsets[size_t(si)] = isl::manage(isl_multi_aff_copy(off));
    isl_multi_val *size = isl_multi_val_zero(isl_space_range(isl_multi_aff_get_space(off)));
    for (size_t j = 0; j < box->size.size(); ++j)
        size = isl_multi_val_set_at(size, int(j), isl_val_int_from_si(isl_multi_aff_get_ctx(off), box->size[j]));
    uint32_t moves = 0;
    for (int j = 0; j < int(isl_multi_aff_dim(off, isl_dim_out)); ++j) {
        isl_aff *a = isl_multi_aff_get_at(off, j);
        for (int t = 0; t < int(isl_aff_dim(a, isl_dim_in)) && t < 32; ++t)
            if (isl_aff_involves_dims(a, isl_dim_in, unsigned(t), 1) == isl_bool_true) moves |= 1u << t;
        isl_aff_free(a);
    }
    r.moves_with[size_t(si)] = moves;
    double elements = 1;
    r.sizes[size_t(si)].clear();
    for (int j = 0; j < int(isl_multi_val_dim(size, isl_dim_set)); ++j) {
        isl_val *v = isl_multi_val_get_at(size, j);
        r.sizes[size_t(si)].push_back(isl_val_get_num_si(v));
        elements *= double(r.sizes[size_t(si)].back());
        isl_val_free(v);
    }
    // A box hull of a skewed footprint (say a diagonal read f(x, x)) can be far larger than
    // what the tile reads: beyond this many bytes per tile, fuse less instead.
    constexpr double kMaxScratchBytes = 64.0 * 1024 * 1024;
    if (elements * p.func->type.bytes() > kMaxScratchBytes) {
        isl_multi_val_free(size);
        isl_multi_aff_free(off);
        why_not = "the box of " + p.func->name + " one tile needs would take " +
                  std::to_string(int64_t(elements * p.func->type.bytes() / (1024 * 1024))) +
                  " MiB per tile (a skewed footprint)";
        return false;
    }
    // Only tiles that hold part of the root compute anything.
    isl_map *b = box_map(off, size, p.name);
    r.spread[size_t(si)] = isl::manage(isl_map_copy(b));
    b = isl_map_intersect_domain(b, root_tiles.copy());
    r.boxes[size_t(si)] = isl::manage(isl_map_intersect_range(b, p.domain.copy()));
    isl_multi_val_free(size);
    isl_multi_aff_free(off);
    return true;
}

// The root's offset `offset` (t -> tile_sizes · t) with each tile coordinate that takes a single
// value over `root_tiles`, whatever the parameters, replaced by that value: a channel bounded to
// [0, 3) under tiles of 4 channels is at offset 0 in every tile. The boxes derived from it then
// stay put along that dimension, and reads at a constant coordinate (interpolate's alpha channel,
// read at c and at 3) combine with those at the tile's own in one box of fixed size.
isl::multi_aff fixed_where_single_tile(const isl::multi_aff &offset, const isl::set &root_tiles) {
    isl_set *tiles = isl_set_copy(root_tiles.get());
    tiles = isl_set_project_out(tiles, isl_dim_param, 0, unsigned(isl_set_dim(tiles, isl_dim_param)));
    isl_multi_aff *r = isl_multi_aff_copy(offset.get());
    for (int j = 0; j < int(isl_set_dim(tiles, isl_dim_set)) && j < int(isl_multi_aff_dim(r, isl_dim_out)); ++j) {
        isl_val *lo = isl_set_dim_min_val(isl_set_copy(tiles), j), *hi = isl_set_dim_max_val(isl_set_copy(tiles), j);
        if (isl_val_is_int(lo) == isl_bool_true && isl_val_eq(lo, hi) == isl_bool_true) {
            isl_aff *at = isl_multi_aff_get_at(r, j);
            isl_aff *fixed = isl_aff_val_on_domain(isl_local_space_from_space(isl_aff_get_domain_space(at)),
                                                   isl_val_mul(isl_val_copy(lo), isl_aff_get_coefficient_val(at, isl_dim_in, j)));
            isl_aff_free(at);
            r = isl_multi_aff_set_at(r, j, fixed);
        }
        isl_val_free(lo);
        isl_val_free(hi);
    }
    isl_set_free(tiles);
    return isl::manage(r);
}

// Each stage's box under its own operation quota: a group's footprints take isl work in
// proportion to its stages (a 42-stage pyramid ran out of one quota for all of them).
std::optional<Footprints> footprints_by_stage(const Model &m, const std::vector<int> &stages,
                                              const std::vector<int> &tile_sizes, long quota, std::string &why_not,
                                              const Footprints *known, ReadShapes *reads) {
    const Statement &root_statement = m.statements[size_t(stages.back())];
    TESSERA_INTERNAL_ASSERT(tile_sizes.size() == root_statement.dims.size(), "tile sizes for ", root_statement.name);
    Footprints r;
    if (known) r = *known;
    r.boxes.resize(stages.size());
    r.sizes.resize(stages.size());
    r.spread.resize(stages.size());
    r.offsets.resize(stages.size());
    r.moves_with.resize(stages.size(), ~0u);
    isl::set root_tiles;
    auto root = [&] {
        if (!r.spread.back()) r.spread.back() = tile_map(m, root_statement, tile_sizes).reverse();
        if (!r.offsets.back()) {
            // t -> tile_sizes · t, the first element of tile t (tile_map's floor(x / size)). Over
            // no parameters: the boxes derived from it then carry only those their reads involve,
            // not the model's dozens, which every step on them would align.
            isl_space *space = isl_space_drop_all_params(isl_map_get_space(r.spread.back()->get()));
            isl_local_space *tiles = isl_local_space_from_space(isl_space_domain(isl_space_copy(space)));
            isl_multi_aff *offset = isl_multi_aff_zero(space);
            for (size_t j = 0; j < tile_sizes.size(); ++j) {
                isl_aff *tj = isl_aff_var_on_domain(isl_local_space_copy(tiles), isl_dim_set, unsigned(j));
                offset = isl_multi_aff_set_at(offset, int(j), isl_aff_scale_val(tj, isl_val_int_from_si(m.ctx().get(), tile_sizes[j])));
            }
            isl_local_space_free(tiles);
            r.offsets.back() = isl::manage(offset);
        }
        r.tile_sizes.assign(tile_sizes.begin(), tile_sizes.end());
        if (!r.boxes.back()) r.boxes.back() = r.spread.back()->intersect_range(root_statement.domain);
        root_tiles = r.boxes.back()->domain();
        if (!known || !known->offsets.back()) r.offsets.back() = fixed_where_single_tile(*r.offsets.back(), root_tiles);
    };
    const std::string over_quota = "isl exceeded its operation quota finding the part of each stage one tile needs";
    if (!within_quota(m.ctx(), quota, root) || root_tiles.is_null()) {
        why_not = over_quota;
        return std::nullopt;
    }
    for (int si = int(stages.size()) - 2; si >= 0; --si) {
        if (r.boxes[size_t(si)] && r.spread[size_t(si)]) continue;
        bool found = false;
        if (!within_quota(m.ctx(), quota, [&] { found = footprint_of_stage(m, stages, si, root_tiles, r, why_not, reads); })) {
            why_not = over_quota;
            return std::nullopt;
        }
        if (!found) return std::nullopt;
    }
    return r;
}

} // namespace

std::optional<Footprints> compute_footprints(const Model &m, const std::vector<int> &stages,
                                             const std::vector<int> &tile_sizes, std::string &why_not,
                                             const Footprints *known, ReadShapes *reads) {
    // The footprints are an optimization: over the quota, the group is not fused or tiled this way.
    // The apps' stages take a few milliseconds each (their boxes derive from unclipped boxes and
    // access relations, with no floor divisions of the domains); a box hull over reads through
    // mirror_interior's modulos took 1.5 s (10^6 operations) for two stages of fuzzer seed
    // 2427576, and is computed once in planning and once more in scheduling: about 0.2 s each
    // now, after which they are not fused.
    constexpr long kFootprintOperations = 200000;  // per stage
    std::optional<Footprints> r = footprints_by_stage(m, stages, tile_sizes, kFootprintOperations, why_not, known, reads);
    // A C call that ran out of the quota returns null without throwing: never hand on such a box.
    auto null_box = [](const std::optional<isl::map> &b) { return !b || b->is_null(); };
    if (r && (std::any_of(r->boxes.begin(), r->boxes.end(), null_box) || std::any_of(r->spread.begin(), r->spread.end(), null_box))) {
        isl_ctx_reset_error(m.ctx().get());
        why_not = "isl exceeded its operation quota finding the part of each stage one tile needs";
        return std::nullopt;
    }
    return r;
}

namespace {

// sliding_window(), and column_window() with `same_column`: a consumer's reads of its
// producers may then not move along the innermost dimension either.
std::optional<SlidingWindow> window_of(const Model &m, const std::vector<int> &stages, bool same_column) {
    const Statement &root = m.statements[size_t(stages.back())];
    int n = int(root.dims.size());
    if (stages.size() < 2 || n < 2) return std::nullopt;
    int row = n - 2;
    for (int st : stages)
        if (int(m.statements[size_t(st)].dims.size()) != n) return std::nullopt;
    SlidingWindow w;
    w.row_dim = row;
    w.shift.assign(stages.size(), 0);
    w.fold.assign(stages.size(), 0);
    // Row offsets [lo, hi] at which consumer ci reads producer si, when constant.
    std::vector<std::vector<std::pair<long, long>>> range(stages.size(), std::vector<std::pair<long, long>>(stages.size(), {1, 0}));
    auto constant = [](isl_val *v, long &out) {
        bool ok = v && isl_val_is_int(v) == isl_bool_true;
        if (ok) out = isl_val_get_num_si(v);
        isl_val_free(v);
        return ok;
    };
    for (int si = int(stages.size()) - 2; si >= 0; --si) {
        const Statement &p = m.statements[size_t(stages[size_t(si)])];
        int parray = m.array_of(p.func);
        bool read = false;
        long shift = 0;
        for (size_t ci = size_t(si) + 1; ci < stages.size(); ++ci) {
            const Statement &c = m.statements[size_t(stages[ci])];
            for (const Access &a : c.reads) {
                if (a.array != parray) continue;
                if (!a.exact) return std::nullopt;
                isl_map *rel = isl_map_reset_tuple_id(isl_map_reset_tuple_id(a.relation.copy(), isl_dim_in), isl_dim_out);
                isl_set *deltas = isl_map_deltas(rel);
                long lo = 0, hi = 0;
                for (int q = 0; q <= (same_column ? n - 1 : row); ++q) {
                    long mn, mx;
                    if (!constant(isl_set_dim_min_val(isl_set_copy(deltas), q), mn) ||
                        !constant(isl_set_dim_max_val(isl_set_copy(deltas), q), mx) || (q != row && (mn != 0 || mx != 0))) {
                        isl_set_free(deltas);
                        return std::nullopt;
                    }
                    if (q == row) {
                        lo = mn;
                        hi = mx;
                    }
                }
                isl_set_free(deltas);
                auto &rg = range[ci][size_t(si)];
                if (rg.first > rg.second) rg = {lo, hi};
                else rg = {std::min(rg.first, lo), std::max(rg.second, hi)};
                shift = read ? std::max(shift, w.shift[ci] + hi) : w.shift[ci] + hi;
                read = true;
            }
        }
        if (!read) return std::nullopt;
        w.shift[size_t(si)] = shift;
        // A row may be overwritten once every consumer row that reads it has run.
        long keep = 1;
        for (size_t ci = size_t(si) + 1; ci < stages.size(); ++ci) {
            const auto &rg = range[ci][size_t(si)];
            if (rg.first <= rg.second) keep = std::max(keep, shift - w.shift[ci] - rg.first + 1);
        }
        long fold = 1;
        while (fold < keep) fold *= 2;
        w.fold[size_t(si)] = fold;
    }
    w.columns_outside = same_column;
    return w;
}

} // namespace

std::optional<SlidingWindow> sliding_window(const Model &m, const std::vector<int> &stages) { return window_of(m, stages, false); }

std::optional<SlidingWindow> column_window(const Model &m, const std::vector<int> &stages) { return window_of(m, stages, true); }

std::optional<OverlappedTiling> overlapped_tiling(const Model &m, int k, const std::vector<int> &stages,
                                                  const std::vector<int> &tile_sizes,
                                                  const std::optional<SlidingWindow> &window, bool parallel,
                                                  bool vector, std::string &why_not, const std::vector<int> &tile_order_in) {
    const Statement &root = m.statements[size_t(stages.back())];
    auto fp = compute_footprints(m, stages, tile_sizes, why_not);
    if (!fp) return std::nullopt;
    OverlappedTiling r;
    r.tile_sizes = tile_sizes;
    std::vector<int> tile_order = tile_order_in.empty() ? tile_loop_order(tile_sizes) : tile_order_in;
    unsigned n_tile = unsigned(root.dims.size());

    // The tree: tile band (parallel), a "tile_body" mark, then each stage over its footprint.
    std::vector<isl::set> domains;
    isl::union_set all = isl::union_set::empty(m.ctx());
    isl::union_map tile_schedule = isl::union_map::empty(m.ctx());
    for (size_t si = 0; si < stages.size(); ++si) {
        std::string name = "G" + std::to_string(k) + "_" + m.statements[size_t(stages[si])].name;
        isl::set d = expanded_domain(*fp->boxes[si], name);
        domains.push_back(d);
        all = all.unite(isl::union_set(d));
        tile_schedule = tile_schedule.unite(tile_projection(d, n_tile, tile_order));
    }
    isl::schedule_node node = isl::schedule::from_domain(all).root().child(0);
    node = node.insert_partial_schedule(to_mupa(tile_schedule));
    node = set_band_parallel(node);
    node = insert_mark(node.child(0), Mark::tile_body()).child(0);
    unsigned first_point = n_tile;  // first point dimension the per-stage bands schedule
    if (window) {
        // Stages slide along rows: one band over the rows (and the dimensions outside them),
        // producers shifted ahead; then, per row, each stage's inner loops.
        const SlidingWindow &w = *window;
        if (w.columns_outside) {
            // The column loop first, over every stage's innermost dimension, marked vector (a
            // GPU's thread loop): the stages read their producers only in their own column.
            isl::union_map columns = isl::union_map::empty(m.ctx());
            for (const isl::set &d : domains) columns = columns.unite(suffix_projection(d, n_tile + unsigned(w.row_dim) + 1));
            node = node.insert_partial_schedule(to_mupa(columns));
            node = set_band_parallel(node);
            node = mark_parallel_and_vector(node, false, true);
            while (!is_band(node)) node = node.child(0);
            node = node.child(0);
        }
        isl::union_map fused = isl::union_map::empty(m.ctx());
        for (size_t si = 0; si < stages.size(); ++si)
            fused = fused.unite(shifted_prefix(domains[si], n_tile, w.row_dim, w.shift[si]));
        node = node.insert_partial_schedule(to_mupa(fused)).child(0);
        for (size_t si = 0; si + 1 < stages.size(); ++si) {
            const Statement &st = m.statements[size_t(stages[si])];
            int d = int(st.dims.size()) - 1 - w.row_dim;  // Halide order
            Mark fold = Mark::fold(m.arrays[size_t(m.array_of(st.func))].name, d, long(w.fold[si]));
            node = insert_mark(node, fold).child(0);
        }
        first_point = n_tile + unsigned(w.row_dim) + (w.columns_outside ? 2 : 1);
    }
    if (stages.size() > 1) {
        isl::union_set_list filters(m.ctx(), int(stages.size()));
        for (const isl::set &d : domains) filters = filters.add(isl::union_set(d));
        node = node.insert_sequence(filters);
    }
    for (size_t si = 0; si < stages.size(); ++si) {
        if (m.statements[size_t(stages[si])].dims.size() + n_tile <= first_point) continue;
        isl::schedule_node leaf = stages.size() > 1 ? node.child(int(si)).child(0) : node;
        leaf = leaf.insert_partial_schedule(to_mupa(suffix_projection(domains[si], first_point)));
        leaf = set_band_parallel(leaf);
        leaf = mark_parallel_and_vector(leaf, false, vector);
        node = stages.size() > 1 ? up_to(leaf, isl_schedule_node_sequence) : leaf;
    }
    node = node.root().child(0);  // the tile band
    node = mark_parallel_and_vector(node, parallel, false);
    r.schedule = node.schedule();
    return r;
}

} // namespace tessera::poly
