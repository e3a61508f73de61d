// Per-tile footprints (overlapped_tiling.h): each producer's box, derived from its consumers'
// boxes by interval arithmetic where a read is affine, is the box isl's fixed box hull of the
// composed reads gives (the way every box was found before), on reads of every shape the
// arithmetic takes: stencil taps, strides, a negative coefficient, a Param offset, two dimensions
// mixed, and reads at x / 2, (x + 1) / 2 and (7 - x) / 3 (from the consumer box's corners).
#include "poly_test_util.h"

#include <isl/aff.h>
#include <isl/fixed_box.h>
#include <isl/map.h>

#include <tessera/poly/model.h>
#include <tessera/poly/overlapped_tiling.h>

using namespace tessera;

namespace {

// isl's fixed box hull of the range of `m` (taken): its offset as a map (tuple names dropped)
// and its size.
struct Box {
    isl::map offset;
    std::vector<long> size;
};

Box fixed_box(isl_map *m) {
    isl_fixed_box *box = isl_map_get_range_simple_fixed_box_hull(m);
    isl_map_free(m);
    REQUIRE(isl_fixed_box_is_valid(box) == isl_bool_true);
    Box r{isl::manage(isl_map_reset_tuple_id(isl_map_from_multi_aff(isl_fixed_box_get_offset(box)), isl_dim_out)), {}};
    isl_multi_val *size = isl_fixed_box_get_size(box);
    for (int j = 0; j < int(isl_multi_val_dim(size, isl_dim_set)); ++j) {
        isl_val *v = isl_multi_val_get_at(size, j);
        r.size.push_back(isl_val_get_num_si(v));
        isl_val_free(v);
    }
    isl_multi_val_free(size);
    isl_fixed_box_free(box);
    return r;
}

// isl's hull of what the stages after `si` read of stage si, from their boxes in `r` (the
// way every box was found before the interval arithmetic).
Box isl_box_of_reads(const poly::Model &m, const std::vector<int> &stages, size_t si, const poly::Footprints &r) {
    const poly::Statement &p = m.statements[size_t(stages[si])];
    int parray = m.array_of(p.func);
    isl_map *all = nullptr;
    for (size_t ci = si + 1; ci < stages.size(); ++ci)
        for (const poly::Access &a : m.statements[size_t(stages[ci])].reads) {
            if (a.array != parray) continue;
            const isl::map &relation = a.unrestricted.is_null() ? a.relation : a.unrestricted;
            isl_map *reads = isl_map_apply_range(r.spread[ci]->copy(), relation.copy());
            all = all ? isl_map_union(all, reads) : reads;
        }
    REQUIRE(all);
    return fixed_box(isl_map_set_tuple_name(all, isl_dim_out, p.name.c_str()));
}

void check_boxes_equal_isl_hulls(const Pipeline &pipeline, const std::vector<int> &tile_sizes) {
    std::unique_ptr<poly::Model> m = poly::build_model(pipeline);
    std::vector<int> stages;
    for (size_t i = 0; i < m->statements.size(); ++i) stages.push_back(int(i));
    std::string why_not;
    std::optional<poly::Footprints> r = poly::compute_footprints(*m, stages, tile_sizes, why_not);
    INFO(why_not);
    REQUIRE(r);
    for (size_t si = 0; si + 1 < stages.size(); ++si) {
        Box want = isl_box_of_reads(*m, stages, si, *r);
        Box got = fixed_box(r->spread[si]->copy());  // a box: its hull is itself
        INFO("stage " << m->statements[size_t(stages[si])].name << ": offset " << got.offset << ", isl's " << want.offset);
        CHECK(got.offset.is_equal(want.offset));
        CHECK(got.size == want.size);
        CHECK(r->sizes[si] == want.size);
    }
}

} // namespace

TEST_CASE("a producer's box per tile from affine reads is the box isl's hull of the reads gives", "[poly][footprints]") {
    Var x("x"), y("y");
    InputBuffer<float> in("in", 2);
    Param<int> shift("shift", 3);
    Func f("f"), g("g"), h("h"), k("k"), out("out");
    f(x, y) = in(x, y) * 2.0f;
    // Taps of a downsampling stencil (coefficient 2) and a row below.
    g(x, y) = f(2 * x - 1, y) + f(2 * x + 1, y + 1) + f(2 * x, y);
    // A mirrored read (coefficient -1), a Param offset.
    h(x, y) = g(7 - x, y) + g(6 - x, y - 2);
    k(x, y) = h(x + shift, y) + h(x + shift + 2, y + 1);
    // Two dimensions in one coordinate (skewed reads; a skewed and a plain read of one Func
    // together have no fixed box).
    out(x, y) = k(x + y, y) + k(x + y + 1, y + 3);
    SECTION("tiles 8 x 32") { check_boxes_equal_isl_hulls(Pipeline(out), {8, 32}); }
    SECTION("tiles 1 x 5") { check_boxes_equal_isl_hulls(Pipeline(out), {1, 5}); }
}

TEST_CASE("a producer read at x / 2 gets the box isl's hull gives, and the boxes below it match", "[poly][footprints]") {
    Var x("x"), y("y");
    InputBuffer<float> in("in", 2);
    Func a("a"), up("up"), b("b");
    a(x, y) = in(x, y) + 1.0f;
    up(x, y) = a(x / 2, y) + a(x / 2 + 1, y);
    b(x, y) = up(x - 1, y) + up(x + 1, y + 1);
    check_boxes_equal_isl_hulls(Pipeline(b), {16, 8});
}

// Upsampling reads (a floor of an affine expression; floor_image in overlapped_tiling.cpp): the
// box from the consumer box's corners where the tile's offset is a multiple of the divisor, and
// isl's hull where it is not (odd tiles, whose boxes start at floor(5 t / 2)).
TEST_CASE("a producer read at (x + 1) / 2, (x - 1) / 2 or (7 - x) / 3 gets the box isl's hull gives, on even and odd tiles",
          "[poly][footprints]") {
    Var x("x"), y("y");
    InputBuffer<float> in("in", 2);
    Func a("a"), up("up"), b("b"), c("c"), mirrored("mirrored"), d("d");
    a(x, y) = in(x, y) + 1.0f;
    up(x, y) = a((x + 1) / 2, (y + 1) / 2) + a((x - 1) / 2, (y - 1) / 2);
    b(x, y) = up(x - 1, y) + up(x + 1, y + 1);
    c(x, y) = in(x, y) * 3.0f;
    mirrored(x, y) = c((7 - x) / 3, y) * 0.5f;
    d(x, y) = mirrored(x - 1, y) + mirrored(x + 1, y + 1);
    for (const std::vector<int> &tiles : std::vector<std::vector<int>>{{12, 8}, {5, 3}, {1, 1}, {64, 32}}) {
        INFO("tiles " << tiles[0] << " x " << tiles[1]);
        check_boxes_equal_isl_hulls(Pipeline(b), tiles);
        check_boxes_equal_isl_hulls(Pipeline(d), tiles);
    }
}

// A data-dependent level clamped to a constant range (local_laplacian's pyramid lookups): the
// box spans the range along that coordinate, whatever the element (affine_image).
TEST_CASE("a producer read at a clamped data-dependent level gets the box isl's hull gives", "[poly][footprints]") {
    Var x("x"), y("y"), k("k");
    InputBuffer<float> in("in", 2);
    Func levels("levels"), out("out");
    levels(x, y, k) = in(x, y) * cast<float>(k);
    Expr level = cast<int>(in(x, y) * 4.0f);
    out(x, y) = levels(x, y, clamp(level, 0, 6)) + levels(x + 1, y - 1, clamp(level + 1, 1, 7));
    for (const std::vector<int> &tiles : std::vector<std::vector<int>>{{32, 8}, {5, 3}}) {
        INFO("tiles " << tiles[0] << " x " << tiles[1]);
        check_boxes_equal_isl_hulls(Pipeline(out), tiles);
    }
}

// The grouping keeps what it found of each read (ReadShapes) across the footprints of every
// probe and merge: boxes from kept shapes, found at other tiles, are those found anew.
TEST_CASE("footprints from read shapes kept across tile sizes equal those found anew", "[poly][footprints]") {
    Var x("x"), y("y"), k("k");
    InputBuffer<float> in("in", 2);
    Func levels("levels"), f("f"), g("g"), h("h"), up("up"), out("out");
    levels(x, y, k) = in(x, y) * cast<float>(k);
    f(x, y) = in(x, y) * 2.0f;
    g(x, y) = f(2 * x - 1, y) + f(2 * x + 1, y + 1);
    h(x, y) = g(7 - x, y) + g(6 - x, y - 2);
    up(x, y) = h((x + 1) / 2, y) + h((x - 1) / 2, y - 2);
    Expr level = cast<int>(in(x, y) * 4.0f);
    out(x, y) = up(x + y, y) + levels(x, y, clamp(level, 0, 6)) + levels(x + 1, y - 1, clamp(level + 1, 1, 7));
    std::unique_ptr<poly::Model> m = poly::build_model(Pipeline(out));
    std::vector<int> stages;
    for (size_t i = 0; i < m->statements.size(); ++i) stages.push_back(int(i));
    poly::ReadShapes kept;
    std::string why_not;
    bool found = poly::compute_footprints(*m, stages, {16, 8}, why_not, nullptr, &kept).has_value();
    INFO(why_not);
    REQUIRE(found);
    for (const std::vector<int> &tiles : std::vector<std::vector<int>>{{16, 8}, {5, 3}, {64, 1}}) {
        INFO("tiles " << tiles[0] << " x " << tiles[1]);
        std::optional<poly::Footprints> anew = poly::compute_footprints(*m, stages, tiles, why_not);
        std::optional<poly::Footprints> from_kept = poly::compute_footprints(*m, stages, tiles, why_not, nullptr, &kept);
        REQUIRE(anew);
        REQUIRE(from_kept);
        for (size_t si = 0; si < stages.size(); ++si) {
            INFO("stage " << m->statements[size_t(stages[si])].name);
            CHECK(anew->spread[si]->is_equal(*from_kept->spread[si]));
            CHECK(anew->boxes[si]->is_equal(*from_kept->boxes[si]));
            CHECK(anew->sizes[si] == from_kept->sizes[si]);
        }
    }
}
