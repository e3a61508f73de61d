// Storage folding of time-stepped Funcs (storage_folding.h) and the wavefront time tiles that
// go with it: what is folded, what is not, and the rejection of folds a schedule cannot keep.
#include "poly_test_util.h"

#include <array>

#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <nlohmann/json.hpp>

#include <tessera/poly/schedule_json.h>
#include <tessera/poly/storage_folding.h>

using namespace tessera;
using json = nlohmann::json;

namespace {

// The automatic schedule of `pipeline`, checked by the scheduler itself against the dependences.
poly::Program verified_schedule(const Pipeline &pipeline) {
    poly::ScheduleOptions o;
    o.verify = true;
    return poly::schedule_pipeline(pipeline, o);
}

const poly::Storage &storage_of(const poly::Program &p, const std::string &func) {
    for (const poly::Storage &st : p.storage)
        if (st.name == func) return st;
    FAIL("no storage for " << func);
    return p.storage.front();
}

bool has_mark(const std::string &ast, const std::string &mark) { return ast.find("// " + mark) != std::string::npos; }

// Runs `p` (its parallel loops backwards too) into a w x h output of `out` and compares it with
// the interpreter's.
template <typename T>
void check_program(const poly::Program &p, const Func &out, int w, int h, const std::string &what) {
    Buffer<T> got(w, h), want(w, h);
    poly::ExecuteOptions eo;
    eo.reverse_parallel_loops = true;
    poly::execute(p, {got}, eo);
    interpret(Pipeline(out), {want});
    apps::Comparison c = apps::compare(got, want, 0);
    INFO(what << " " << w << "x" << h << ": " << c.first_mismatch << "\n" << p.ast_c);
    CHECK(c.ok);
}

// jacobi over time written the natural way, and a consumer reading plane T (and optionally an
// early plane too).
struct TimeJacobi {
    InputBuffer<float> in{"in", 2};
    Param<int> steps{"steps"};
    Func J{"J"}, out{"out"};
    explicit TimeJacobi(bool also_reads_plane_0) {
        Var x("x"), y("y"), t("t");
        RDom r(1, in.width() - 2, 1, in.height() - 2, 1, steps, "r");
        J(x, y, t) = in(x, y);
        J(r.x, r.y, r.z) = 0.25f * (J(r.x - 1, r.y, r.z - 1) + J(r.x + 1, r.y, r.z - 1) + J(r.x, r.y - 1, r.z - 1) +
                                    J(r.x, r.y + 1, r.z - 1));
        out(x, y) = also_reads_plane_0 ? J(x, y, steps) - J(x, y, 0) : J(x, y, steps);
    }
    void run_and_compare(const poly::Program &p, int w, int h, int s, const std::string &what) {
        Buffer<float> data(w, h);
        std::mt19937 rng(uint32_t(w * 131 + h * 7 + s));
        apps::fill_random(data, rng, 0.0, 1.0);
        in.set(data);
        steps.set(s);
        check_program<float>(p, out, w, h, what + " steps " + std::to_string(s));
    }
};

} // namespace

TEST_CASE("a Func stepped in time keeps a ring of two planes, its initialization fused into the time loop",
          "[poly][fold]") {
    TimeJacobi j(false);
    poly::Program p = verified_schedule(Pipeline(j.out));
    const poly::Storage &st = storage_of(p, "J");
    REQUIRE(st.kind == poly::Storage::Kind::Buffer);
    CHECK(st.fold == std::vector<int64_t>{0, 0, 2});
    CHECK(ir::as_const_int(st.extent[2]) == 2);
    CHECK(p.groups.front().note.find("storage folded: J along dimension 2 to 2 planes") != std::string::npos);
    CHECK(has_mark(p.ast_c, "fold:F_J:2:2"));
    // The AST is versioned: the case where the update never runs (no steps or no interior)
    // leaves the update out rather than discovering in every piece of its loops that it is empty.
    size_t rest = p.ast_c.find("} else {");
    REQUIRE(rest != std::string::npos);
    CHECK(p.ast_c.find("S_J_1(") < rest);
    CHECK(p.ast_c.find("S_J_1(", rest) == std::string::npos);
    CHECK(p.ast_c.find("S_J_0(", rest) != std::string::npos);
    poly_test::check_legal(p, "folded jacobi");
    // Awkward sizes: no interior, one step, an odd and a prime number of steps, around the
    // 32-wide tiles and smaller than them.
    for (auto [w, h, s] : std::vector<std::tuple<int, int, int>>{{3, 3, 1}, {2, 5, 3}, {5, 4, 0}, {11, 7, 2}, {33, 31, 7}, {37, 65, 33}})
        j.run_and_compare(p, w, h, s, "folded jacobi");
}

namespace {
// Every For loop of `n`: {loops, plain ones, vectorized ones, parallel ones}.
std::array<int, 4> count_loops(const poly::LoopNodePtr &n) {
    std::array<int, 4> c{0, 0, 0, 0};
    if (!n) return c;
    auto add = [&](const poly::LoopNodePtr &m) {
        std::array<int, 4> d = count_loops(m);
        for (int i = 0; i < 4; ++i) c[size_t(i)] += d[size_t(i)];
    };
    if (n->kind == poly::LoopNode::Kind::For) c = {1, n->plain ? 1 : 0, n->vectorize ? 1 : 0, n->parallel ? 1 : 0};
    add(n->body);
    add(n->then_case);
    add(n->else_case);
    for (const poly::LoopNodePtr &m : n->children) add(m);
    return c;
}
} // namespace

TEST_CASE("the case where folded updates never run is compiled plain, the steady case vectorized and parallel", "[poly][fold]") {
    // jacobi-1d: without a step or an interior, the planes are their initialization alone. That
    // case's loops are neither vectorized, unrolled nor run on threads (its AST and its code
    // were half of the compile), the steady case's are as before.
    auto app = apps::make_app("pb_jacobi_1d");
    poly::Program p = verified_schedule(app->pipeline());
    REQUIRE(p.nest);
    REQUIRE(p.nest->kind == poly::LoopNode::Kind::If);
    std::array<int, 4> steady = count_loops(p.nest->then_case), rest = count_loops(p.nest->else_case);
    CHECK(steady[0] > 0);
    CHECK(steady[1] == 0);
    CHECK(steady[2] > 0);
    CHECK(steady[3] > 0);
    CHECK(rest[0] > 0);
    CHECK(rest[1] == rest[0]);
    CHECK(rest[2] == 0);
    CHECK(rest[3] == 0);
    size_t rest_text = p.ast_c.find("} else {");
    REQUIRE(rest_text != std::string::npos);
    CHECK(p.ast_c.find("degenerate sizes only", rest_text) != std::string::npos);
    CHECK(p.ast_c.find("degenerate sizes only") > rest_text);
    poly_test::check_legal(p, "jacobi-1d");
    for (const std::vector<int> &s : std::vector<std::vector<int>>{{0, 7}, {3, 2}, {13, 1}, {5, 40}}) {
        app->prepare(s, 3);
        poly_test::check_runs(p, *app, "pb_jacobi_1d");
    }
}

TEST_CASE("the AST where folded updates never run is built without them", "[poly][fold]") {
    isl_ctx *raw = isl_ctx_alloc();
    {
        isl::ctx ctx(raw);
        isl::union_set domain(ctx, "[n] -> { A[i] : 0 <= i < 8; B[i] : 0 <= i < n }");
        isl::schedule s = isl::schedule::from_domain(domain);
        auto statements = [](const isl::schedule &t) {
            std::vector<std::string> names;
            for (const isl::set &st : poly::sets_of(t.get_domain())) names.push_back(isl_set_get_tuple_name(st.get()));
            std::sort(names.begin(), names.end());
            return names;
        };
        CHECK(statements(poly::without_statements_empty_in(s, isl::set(ctx, "[n] -> { : n <= 0 }"))) ==
              std::vector<std::string>{"A"});
        CHECK(statements(poly::without_statements_empty_in(s, isl::set(ctx, "[n] -> { : n <= 1 }"))) ==
              std::vector<std::string>{"A", "B"});
    }
    isl_ctx_free(raw);
}

TEST_CASE("time tiles of a folded stencil run in parallel wavefronts with a vector loop inside", "[poly][fold]") {
    auto app = apps::make_app("pb_jacobi_2d");
    poly::Program p = verified_schedule(app->pipeline());
    CHECK(has_mark(p.ast_c, "parallel"));
    CHECK(has_mark(p.ast_c, "vector"));
    CHECK(p.groups.front().note.find("wavefronts") != std::string::npos);
    poly_test::check_legal(p, "wavefront");
    for (const std::vector<int> &s : std::vector<std::vector<int>>{{1, 3}, {3, 40}, {20, 30}, {9, 33}}) {
        app->prepare(s, 5);
        poly_test::check_runs(p, *app, "wavefront pb_jacobi_2d");
    }
}

TEST_CASE("a 1-D stencil's time tiles cover pieces of the row too, in parallel wavefronts", "[poly][fold]") {
    // jacobi-1d: with whole rows, a wavefront held one tile and the steps ran in order on one
    // thread. Tiles of 128 planes (64 steps) by 1024 points: sizes around both, and smaller.
    auto app = apps::make_app("pb_jacobi_1d");
    poly::Program p = verified_schedule(app->pipeline());
    INFO(p.groups.front().note);
    CHECK(p.groups.front().note.find("time tiles of 128 steps by 1024 points of the row") != std::string::npos);
    CHECK(p.groups.front().note.find("tiles run in parallel wavefronts") != std::string::npos);
    CHECK(has_mark(p.ast_c, "parallel"));
    CHECK(has_mark(p.ast_c, "vector"));
    poly_test::check_legal(p, "1-D wavefront");
    for (const std::vector<int> &s : std::vector<std::vector<int>>{{1, 3}, {2, 4}, {64, 1023}, {64, 1024}, {65, 1025}, {130, 2049}, {7, 3001}}) {
        app->prepare(s, 9);
        poly_test::check_runs(p, *app, "1-D wavefront pb_jacobi_1d");
    }
}

TEST_CASE("where a folded Func's region holds every access is found one dimension at a time, as in the whole space",
          "[poly][fold]") {
    for (bool reads_plane_0 : {false, true}) {
        TimeJacobi j(reads_plane_0);
        std::shared_ptr<const poly::Model> m = poly::build_model(Pipeline(j.out));
        int array = m->array_of(j.J.contents().get());
        const poly::Array &a = m->arrays[size_t(array)];
        // Independently: the parameters where some access's range, in all its dimensions at
        // once, leaves the region.
        isl::set expected = isl::set::universe(a.region.space().params());
        for (const poly::Statement &s : m->statements) {
            std::vector<isl::map> accesses;
            if (s.write.array == array && s.definition > 0) accesses.push_back(s.write.relation);
            for (const poly::Access &r : s.reads)
                if (r.array == array) accesses.push_back(r.relation);
            for (const isl::map &x : accesses) expected = expected.subtract(x.intersect_domain(s.domain).range().subtract(a.region).params());
        }
        isl::set covers = poly::region_covers_accesses(*m, array);
        CHECK(covers.is_equal(expected));
        // Not trivially true: a region parameter can be set so that the region misses the updates.
        CHECK(!covers.is_equal(isl::set::universe(covers.space())));
    }
}

TEST_CASE("a folded Func's slot order is computed once for the scheduler and the legality check", "[poly][fold]") {
    TimeJacobi j(false);
    std::shared_ptr<const poly::Model> m = poly::build_model(Pipeline(j.out));
    std::vector<poly::StorageFold> folds{{m->array_of(j.J.contents().get()), 2, 2}};
    CHECK(m->fold_dependences.empty());
    isl::union_map first = poly::fold_dependences(*m, folds);
    REQUIRE(m->fold_dependences.size() == 1);
    CHECK(!first.is_empty());
    CHECK(poly::fold_dependences(*m, folds).get() == first.get());  // the very object, not recomputed
    // Another ring size is another order.
    isl::union_map three = poly::fold_dependences(*m, {{folds[0].array, 2, 3}});
    CHECK(m->fold_dependences.size() == 2);
    CHECK(!three.is_equal(first));
}

TEST_CASE("a Func a consumer reads at an early plane is not folded", "[poly][fold]") {
    TimeJacobi j(true);
    poly::ScheduleOptions o;
    o.verify = true;
    std::shared_ptr<const poly::Model> m = poly::build_model(Pipeline(j.out));
    int array = m->array_of(j.J.contents().get());
    std::string why = poly::fold_reader_violation(*m, poly::StorageFold{array, 2, 2});
    // Planes 0 and `steps` together: as far apart as the steps go (each alone would fit, but
    // the update overwrites plane 0's slot later).
    CHECK(why.find("S_out_0 reads an unbounded range of planes of J") != std::string::npos);
    poly::Program p = poly::schedule_model(m, o);
    CHECK(std::all_of(storage_of(p, "J").fold.begin(), storage_of(p, "J").fold.end(), [](int64_t f) { return f == 0; }));
    j.run_and_compare(p, 13, 9, 4, "unfolded");

    // A reader of plane 0 alone: one plane fits the ring, but the updates overwrite its slot.
    Var x("x"), y("y");
    Func early("early");
    early(x, y) = j.J(x, y, 0);
    std::shared_ptr<const poly::Model> e = poly::build_model(Pipeline(early));
    std::string why_early = poly::fold_reader_violation(*e, poly::StorageFold{e->array_of(j.J.contents().get()), 2, 2});
    CHECK(why_early.find("S_early_0 reads a plane of J that S_J_1 overwrites in the ring later") != std::string::npos);
}

TEST_CASE("storage folding can be turned off", "[poly][fold]") {
    TimeJacobi j(false);
    poly::ScheduleOptions o;
    o.storage_folding = false;
    poly::Program p = poly::schedule_pipeline(Pipeline(j.out), o);
    const std::vector<int64_t> &fold = storage_of(p, "J").fold;
    CHECK(std::all_of(fold.begin(), fold.end(), [](int64_t f) { return f == 0; }));
    CHECK(json::parse(poly::schedule_to_json(p, &o))["options"]["storage_folding"] == false);
    j.run_and_compare(p, 13, 9, 4, "not folded");
}

TEST_CASE("an imported fold the schedule cannot keep is rejected with the dependence it breaks", "[poly][fold][json]") {
    TimeJacobi j(false);
    std::shared_ptr<const poly::Model> m = poly::build_model(Pipeline(j.out));
    auto tree_only = [](const std::string &tree) {
        return json{{"schema_version", poly::kScheduleSchemaVersion}, {"schedule_tree", tree}}.dump();
    };
    // The unfolded schedule initializes every plane before the time loop: folding it would
    // overwrite plane t - 2's slot before the steps read it.
    poly::ScheduleOptions unfolded;
    unfolded.storage_folding = false;
    poly::Program p = poly::schedule_model(m, unfolded);
    isl::schedule_node top = p.schedule.root().child(0);
    top = top.insert_mark(isl::manage(isl_id_alloc(m->ctx().get(), "fold:F_J:2:2", nullptr)));
    char *s = isl_schedule_to_str(top.schedule().get());
    std::string tree = s;
    free(s);
    REQUIRE_USER_ERROR(poly::schedule_from_json(m, tree_only(tree)), "illegal", "folded storage", "S_J_0", "S_J_1");
    // The folded schedule with one plane instead of two: a step overwrites values its
    // neighbours still read.
    poly::Program folded = poly::schedule_model(m, poly::ScheduleOptions{});
    std::string t2 = json::parse(poly::schedule_to_json(folded))["schedule_tree"];
    size_t at = t2.find("fold:F_J:2:2");
    REQUIRE(at != std::string::npos);
    t2.replace(at, 12, "fold:F_J:2:1");
    REQUIRE_USER_ERROR(poly::schedule_from_json(m, tree_only(t2)), "illegal", "folded storage");
    // The folded schedule itself round-trips.
    poly::Program back = poly::schedule_from_json(m, poly::schedule_to_json(folded));
    j.run_and_compare(back, 17, 10, 5, "round trip");
}

TEST_CASE("a column scan whose consumer reads only its last row keeps two rows, and one read whole keeps them all",
          "[poly][fold]") {
    for (bool whole : {false, true}) {
        InputBuffer<int> in("in", 2);
        Var x("x"), y("y");
        Func S("S"), out("out");
        RDom r(1, in.height() - 1, "r");
        S(x, y) = in(x, y);
        S(x, r) = S(x, r - 1) * 3 + in(x, r);  // wraps in int32 like the interpreter
        if (whole) out(x, y) = S(x, y) + 1;
        else out(x, y) = S(x, in.height() - 1) + y;
        poly::Program p = verified_schedule(Pipeline(out));
        const std::vector<int64_t> &fold = storage_of(p, "S").fold;
        bool folded = std::any_of(fold.begin(), fold.end(), [](int64_t f) { return f > 0; });
        CHECK(folded == !whole);
        if (!whole) CHECK(fold == std::vector<int64_t>{0, 2});
        for (auto [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {5, 2}, {7, 13}, {33, 37}}) {
            Buffer<int> data(w, h);
            std::mt19937 rng(uint32_t(w * 31 + h));
            apps::fill_random(data, rng, -100, 100);
            in.set(data);
            Buffer<int> got(w, std::min(h, 3)), want(w, std::min(h, 3));
            poly::ExecuteOptions eo;
            eo.reverse_parallel_loops = true;
            poly::execute(p, {got}, eo);
            interpret(Pipeline(out), {want});
            apps::Comparison c = apps::compare(got, want, 0);
            INFO((whole ? "whole " : "last row ") << w << "x" << h << ": " << c.first_mismatch << "\n" << p.ast_c);
            CHECK(c.ok);
        }
    }
}

TEST_CASE("a Func one consumer reads at an early plane and another at a late one is not folded", "[poly][fold]") {
    // From the fuzzer (seed 2486112): F's update steps along x over planes 0 and 1, reading one
    // plane back, so a ring of two x-planes would do for it; `early` reads plane 0 and `late`
    // plane 5, each one plane, and no update touches a plane past 1. But F's region then runs
    // to plane 5, its pure definition writes plane 4 after the update is done with plane 0, and
    // `early` found plane 4 in plane 0's slot.
    InputBuffer<int> in("in", 2);
    Var x("x"), y("y");
    Func F("F"), early("early"), late("late"), out("out");
    RDom r(0, 2, "r");
    F(x, y) = in(x + 1, y);
    F(r, y) = F(r - 1, y) * 3 + 1;
    // early and late have 5 operations: too many to be recomputed at out's two points
    // (automatic_inlining.h).
    late(x, y) = ((F(5, y) * x + 1) * 5 - 2) * x;
    early(x, y) = ((F(0, y) + x) * 3 - 1) * 2 + x;
    out(x, y) = early(x, y) + early(x + 1, y) + late(x, y) - late(x + 1, y);
    std::shared_ptr<const poly::Model> m = poly::build_model(Pipeline(out));
    int array = m->array_of(F.contents().get());
    std::string why = poly::fold_reader_violation(*m, poly::StorageFold{array, 0, 2});
    INFO(why);
    CHECK(why.find("S_early_0 reads a plane of F that S_F_0 overwrites in the ring later") != std::string::npos);
    poly::ScheduleOptions o;
    o.verify = true;
    poly::Program p = poly::schedule_model(m, o);
    const std::vector<int64_t> &fold = storage_of(p, "F").fold;
    CHECK(std::all_of(fold.begin(), fold.end(), [](int64_t f) { return f == 0; }));
    for (auto [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {7, 3}, {13, 11}}) {
        Buffer<int> data(w + 8, h);
        std::mt19937 rng(uint32_t(w * 31 + h));
        apps::fill_random(data, rng, -100, 100);
        in.set(data);
        check_program<int>(p, out, w, h, "executed");
        Buffer<int> compiled(w, h), want(w, h);
        Pipeline(out).realize(compiled);
        interpret(Pipeline(out), {want});
        CHECK(apps::compare(compiled, want, 0).ok);
    }
}

TEST_CASE("a folded schedule's deferred legality check passes it, and replaces one it finds illegal", "[poly][fold]") {
    TimeJacobi j(false);
    poly::ScheduleOptions o;
    o.defer_legality = true;
    poly::Program p = poly::schedule_pipeline(Pipeline(j.out), o);
    REQUIRE(p.deferred_legality);
    CHECK(p.deferred_legality(p) == nullptr);
    // The same program as the one checked before it is returned.
    CHECK(p.ast_c == poly::schedule_pipeline(Pipeline(j.out), poly::ScheduleOptions{}).ast_c);
    CHECK_FALSE(poly::schedule_pipeline(Pipeline(j.out), poly::ScheduleOptions{}).deferred_legality);
    // A ring of one plane cannot hold step t - 1 while step t is written: the check finds the
    // program illegal, and the one it returns instead (scheduled again, checked) is legal and
    // computes the same values.
    poly::Program broken = p;
    for (poly::Storage &st : broken.storage)
        if (st.name == "J") st.fold[2] = 1;
    std::shared_ptr<const poly::Program> instead = p.deferred_legality(broken);
    REQUIRE(instead);
    CHECK_FALSE(instead->deferred_legality);
    CHECK(instead->groups.front().note.find("would not be legal") != std::string::npos);
    poly_test::check_legal(*instead, "the replacement of an illegal fold");
    j.run_and_compare(*instead, 33, 31, 7, "the replacement of an illegal fold");
}

TEST_CASE("a folded pipeline's legality check runs while its machine code is made", "[poly][fold][codegen]") {
    TimeJacobi j(false);
    Pipeline p(j.out);
    CompileOptions o;
    o.cache = false;
    Callable c = p.compile(Target::host(), o);
    std::vector<std::string> phases;
    for (const auto &ph : c.report().phase_ms) phases.push_back(ph.first);
    CHECK(std::find(phases.begin(), phases.end(), "legality check (concurrent)") != phases.end());
    for (auto [w, h, s] : std::vector<std::tuple<int, int, int>>{{3, 3, 1}, {37, 65, 33}}) {
        Buffer<float> data(w, h), got(w, h), want(w, h);
        std::mt19937 rng(uint32_t(w + h + s));
        apps::fill_random(data, rng, 0.0, 1.0);
        j.in.set(data);
        j.steps.set(s);
        c.realize({got});
        interpret(p, {want});
        apps::Comparison cmp = apps::compare(got, want, 0);
        INFO(w << "x" << h << " steps " << s << ": " << cmp.first_mismatch);
        CHECK(cmp.ok);
    }
}
