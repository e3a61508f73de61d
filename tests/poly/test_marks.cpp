// Typed schedule-tree marks: their text round-trips, their payload rides on the isl id, and a
// tree read back from text (the schedule JSON) gives the same marks.
#include "../test_util.h"

#include <isl/schedule.h>
#include <isl/schedule_node.h>

#include <tessera/poly/isl_util.h>
#include <tessera/poly/marks.h>
#include <tessera/poly/tree_transform.h>

using namespace tessera;
using poly::Mark;

TEST_CASE("every mark's text parses back to the same mark", "[poly][marks]") {
    for (const Mark &m : {Mark::parallel(), Mark::parallel(2), Mark::vector(), Mark::tile_body(), Mark::fold("F_J", 2, 3),
                         Mark::register_tile(8, 32)}) {
        std::optional<Mark> back = poly::parse_mark(m.text());
        REQUIRE(back);
        CHECK(back->kind == m.kind);
        CHECK(back->collapse == m.collapse);
        CHECK(back->text() == m.text());
    }
    CHECK(Mark::parallel(2).text() == "parallel:2");
    CHECK(Mark::parallel().text() == "parallel");
    CHECK_THROWS_AS(poly::parse_mark("parallel:0"), UserError);
    CHECK_THROWS_AS(poly::parse_mark("parallel:two"), UserError);
    CHECK(Mark::fold("F_J", 2, 3).text() == "fold:F_J:2:3");
    CHECK_FALSE(poly::parse_mark("my_own_mark"));
    CHECK_THROWS_AS(poly::parse_mark("fold:F_J:two:3"), UserError);
    CHECK_THROWS_AS(poly::parse_mark("fold:F_J:2:0"), UserError);
    CHECK_THROWS_AS(poly::parse_mark("fold:F_J:2:3:4"), UserError);
    CHECK(Mark::register_tile(8, 32).text() == "register_tile:8:32");
    CHECK(poly::parse_mark("register_tile:8:32")->block == 32);
    CHECK_THROWS_AS(poly::parse_mark("register_tile:8"), UserError);
    CHECK_THROWS_AS(poly::parse_mark("register_tile:0:32"), UserError);
}

TEST_CASE("a mark inserted in a tree carries its payload, and a tree read from text parses it", "[poly][marks]") {
    poly::IslContext isl;
    isl::schedule s = isl::manage(isl_schedule_from_domain(isl_union_set_read_from_str(isl.get(), "{ S[i] : 0 <= i < 8 }")));
    isl::schedule_node band = s.root().child(0).insert_partial_schedule(
        isl::manage(isl_multi_union_pw_aff_read_from_str(isl.get(), "[{ S[i] -> [(i)] }]")));
    isl::schedule_node mark = poly::insert_mark(band, Mark::fold("F_S", 0, 2));
    std::optional<Mark> m = poly::mark_of(mark.get());
    REQUIRE(m);
    CHECK(m->kind == Mark::Kind::Fold);
    CHECK(m->array == "F_S");
    CHECK(m->rows == 2);
    CHECK_FALSE(poly::mark_of(mark.child(0).get()));  // a band is no mark

    // Printed and read back, the id has no payload: the name is parsed.
    char *text = isl_schedule_to_str(mark.schedule().get());
    isl::schedule read = isl::manage(isl_schedule_read_from_str(isl.get(), text));
    free(text);
    std::optional<Mark> parsed = poly::mark_of(read.root().child(0).get());
    REQUIRE(parsed);
    CHECK(parsed->text() == "fold:F_S:0:2");
}

TEST_CASE("two loops collapsed for threads carry what either of them carries", "[poly][marks]") {
    // S[i, j] reads S[i, j - 1]: the band (i, j) carries it on j. The i loop alone runs in
    // parallel; i and j collapsed ("parallel:2") do not.
    poly::IslContext isl;
    isl::schedule s = isl::manage(isl_schedule_from_domain(isl_union_set_read_from_str(isl.get(), "{ S[i, j] : 0 <= i, j < 8 }")));
    isl::schedule_node band = s.root().child(0).insert_partial_schedule(
        isl::manage(isl_multi_union_pw_aff_read_from_str(isl.get(), "[{ S[i, j] -> [(i)] }, { S[i, j] -> [(j)] }]")));
    isl::union_map deps = isl::manage(isl_union_map_read_from_str(isl.get(), "{ S[i, j] -> S[i, j2] : j2 = j + 1 and 0 <= i < 8 and 0 <= j < 7 }"));
    CHECK(poly::carried_dependences(band, deps).is_empty());
    CHECK(poly::carried_dependences(band, deps, 1).is_empty());
    CHECK_FALSE(poly::carried_dependences(band, deps, 2).is_empty());
    // Dependences along i only: the i loop carries them, collapsed or not.
    isl::union_map rows = isl::manage(isl_union_map_read_from_str(isl.get(), "{ S[i, j] -> S[i2, j] : i2 = i + 1 and 0 <= i < 7 and 0 <= j < 8 }"));
    CHECK_FALSE(poly::carried_dependences(band, rows, 1).is_empty());
    CHECK_FALSE(poly::carried_dependences(band, rows, 2).is_empty());
}
