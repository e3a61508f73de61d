// The schedule as JSON: what it shows, the round trip, and the rejection of illegal edits.
#include "poly_test_util.h"

#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <nlohmann/json.hpp>

#include <tessera/poly/schedule_json.h>

using namespace tessera;
using json = nlohmann::json;

namespace {

// A JSON schedule holding only a tree, as a user could write it.
std::string tree_only(const std::string &tree) {
    return json{{"schema_version", poly::kScheduleSchemaVersion}, {"schedule_tree", tree}}.dump();
}

// The model's statements, each under an identity band, in the given order.
std::string sequence_tree(const poly::Model &m, const std::vector<std::string> &order) {
    isl::schedule_node node = isl::schedule::from_domain(m.domains()).root().child(0);
    isl::union_set_list filters(m.ctx(), int(order.size()));
    for (const std::string &name : order) filters = filters.add(isl::union_set(m.statements[size_t(m.statement_index(name))].domain));
    node = node.insert_sequence(filters);
    char *s = isl_schedule_to_str(node.schedule().get());
    std::string r = s;
    free(s);
    return r;
}

} // namespace

TEST_CASE("the schedule JSON shows groups, tree, storage, footprints and the loop nest", "[poly][json]") {
    auto app = apps::make_app("blur_x_blur_y");
    json j = json::parse(app->pipeline().schedule_json());
    CHECK(j["schema_version"] == poly::kScheduleSchemaVersion);
    REQUIRE(j["groups"].size() == 1);
    CHECK(j["groups"][0]["kind"] == "overlapped_tiles");
    CHECK(j["groups"][0]["stages"] == json({"blur_x", "blur_y"}));
    CHECK(j["groups"][0]["tile_sizes"].size() == 3);
    bool scratch = false;
    for (const json &s : j["storage"])
        if (s["func"] == "blur_x") {
            scratch = s["kind"] == "scratch";
            CHECK(s["bytes_per_tile"].get<int64_t>() > 0);
        }
    CHECK(scratch);
    REQUIRE(j["footprints"].size() == 1);
    CHECK(j["footprints"][0]["func"] == "blur_x");
    CHECK(j["tree"].contains("domain"));
    CHECK(j["tree"]["child"].contains("mark"));  // the parallel mark above the tile band
    CHECK(j["loop_nest"].get<std::string>().find("for (") != std::string::npos);
    CHECK(j["parameters"].size() >= 6);
}

TEST_CASE("exporting and importing a schedule gives the identical AST", "[poly][json]") {
    // (pb_floyd_warshall: a tree whose filters split one statement's instances; pb_jacobi_1d: a tree
    // without the dead instances, its vector loops separated.)
    for (const std::string &name : {std::string("blur_x_blur_y"), std::string("harris"), std::string("matmul"),
                                    std::string("seidel_2d"), std::string("histogram"),
                                    std::string("pb_floyd_warshall"), std::string("pb_jacobi_1d"), std::string("pyramid_blend")}) {
        auto app = apps::make_app(name);
        std::shared_ptr<const poly::Model> m = poly::build_model(app->pipeline());
        poly::Program p = poly::schedule_model(m, poly::ScheduleOptions{});
        std::string text = poly::schedule_to_json(p);
        poly::Program q = poly::schedule_from_json(m, text);
        INFO(name);
        CHECK(q.ast_c == p.ast_c);
        CHECK(q.storage.size() == p.storage.size());
        for (size_t i = 0; i < q.storage.size(); ++i) CHECK(q.storage[i].kind == p.storage[i].kind);
    }
}

TEST_CASE("an imported schedule overrides the automatic one and realize runs it", "[poly][json]") {
    auto app = apps::make_app("blur_x_blur_y");
    std::shared_ptr<const poly::Model> m = poly::build_model(app->pipeline());
    poly::ScheduleOptions none;
    none.fusion = poly::Fusion::None;
    std::string unfused = poly::schedule_to_json(poly::schedule_model(m, none));
    app->pipeline().set_schedule_json(unfused);
    CHECK(json::parse(app->pipeline().schedule_json())["groups"].size() == 2);
    app->prepare({19, 23}, 4);
    std::vector<Buffer<void>> got = app->make_outputs(), want = app->make_outputs();
    app->pipeline().realize(got);
    app->reference(want);
    CHECK(apps::compare(got[0], want[0], 0).ok);
    app->pipeline().clear_schedule_json();
    CHECK(json::parse(app->pipeline().schedule_json())["groups"].size() == 1);
}

TEST_CASE("an illegal order is rejected with the violated dependence", "[poly][json]") {
    auto app = apps::make_app("blur_x_blur_y");
    std::shared_ptr<const poly::Model> m = poly::build_model(app->pipeline());
    std::string legal = tree_only(sequence_tree(*m, {"S_blur_x_0", "S_blur_y_0"}));
    CHECK_NOTHROW(poly::schedule_from_json(m, legal));
    std::string swapped = tree_only(sequence_tree(*m, {"S_blur_y_0", "S_blur_x_0"}));
    REQUIRE_USER_ERROR(poly::schedule_from_json(m, swapped), "illegal", "flow (read-after-write) dependence",
                       "from S_blur_x_0 to S_blur_y_0", "distance", "must run before");
    REQUIRE_USER_ERROR(app->pipeline().set_schedule_json(swapped), "S_blur_x_0", "S_blur_y_0");
}

TEST_CASE("a parallel mark on a loop that carries a dependence is rejected", "[poly][json]") {
    auto app = apps::make_app("prefix_sum");
    std::shared_ptr<const poly::Model> m = poly::build_model(app->pipeline());
    isl::schedule_node node = m->original.root();
    // Mark the update's loop (the second sequence child's band) parallel.
    node = node.child(0).child(1).child(0);
    node = node.insert_mark(isl::id(m->ctx(), "parallel"));
    char *s = isl_schedule_to_str(node.schedule().get());
    std::string tree = s;
    free(s);
    REQUIRE_USER_ERROR(poly::schedule_from_json(m, tree_only(tree)), "marked parallel", "carries a dependence",
                       "S_prefix_sum_1");
}

TEST_CASE("malformed schedule JSON gets clear errors", "[poly][json]") {
    auto app = apps::make_app("blur_x_blur_y");
    std::shared_ptr<const poly::Model> m = poly::build_model(app->pipeline());
    REQUIRE_USER_ERROR(poly::schedule_from_json(m, "{ not json"), "does not parse");
    REQUIRE_USER_ERROR(poly::schedule_from_json(m, "{}"), "schema_version");
    REQUIRE_USER_ERROR(poly::schedule_from_json(m, json{{"schema_version", 99}}.dump()), "schema_version 99");
    REQUIRE_USER_ERROR(poly::schedule_from_json(m, tree_only("{ domain: \"{ S_nope[i] : 0 <= i < 4 }\" }")),
                       "S_nope", "does not have");
    // A tree that forgets a statement computes too little.
    std::string partial = tree_only(sequence_tree(*m, {"S_blur_x_0"}));
    CHECK_THROWS_AS(poly::schedule_from_json(m, partial), UserError);
}

TEST_CASE("an edited fold keeping too few rows of a sliding window is rejected", "[poly][json]") {
    auto app = apps::make_app("blur_x_blur_y");
    std::shared_ptr<const poly::Model> m = poly::build_model(app->pipeline());
    poly::ScheduleOptions o;
    o.tile_sizes = {64, 32};
    json j = json::parse(poly::schedule_to_json(poly::schedule_model(m, o)));
    std::string tree = j["schedule_tree"];
    size_t at = tree.find("fold:F_blur_x:1:8");
    REQUIRE(at != std::string::npos);
    // blur_y reads 5 consecutive rows of blur_x: a ring of 4 rows loses one, a ring of 5 is enough.
    std::string four = tree, five = tree;
    four.replace(at, 17, "fold:F_blur_x:1:4");
    five.replace(at, 17, "fold:F_blur_x:1:5");
    REQUIRE_USER_ERROR(poly::schedule_from_json(m, tree_only(four)), "illegal", "overwrites a row of blur_x", "fold");
    poly::Program p = poly::schedule_from_json(m, tree_only(five));
    app->prepare({77, 53}, 3);
    poly_test::check_program(p, *app, "fold of 5 rows");
}
