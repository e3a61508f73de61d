// A folded Func's pure definition on the ring's first planes only (ring_initialization.h): which
// instances the analysis leaves out and why it refuses, the schedule that runs the first planes
// before the time loop, its results at awkward sizes, and the legality check's part in it.
#include "poly_test_util.h"

#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/union_set.h>

#include <tessera/poly/ring_initialization.h>
#include <tessera/poly/schedule_json.h>
#include <tessera/poly/storage_folding.h>

using namespace tessera;

namespace {

// jacobi-2d as polybench_stencils.cpp writes it: one plane per half step, plane s starting as
// a or b by its parity; `pure` replaces that initial value, and `border_update` adds an update
// that rewrites column 0 of plane 3.
struct PlaneJacobi2D {
    InputBuffer<float> a{"a", 2}, b{"b", 2};
    Param<int> steps{"steps"};
    Func H{"H"}, out{"out"};
    enum class Pure { Parity, ParityShifted, Constant, EveryFourth, Stepped };
    explicit PlaneJacobi2D(Pure pure = Pure::Parity, bool border_update = false) {
        Var x("x"), y("y"), s("s");
        RDom r(1, a.width() - 2, 1, a.height() - 2, 0, 2 * steps, "r");
        switch (pure) {
        case Pure::Parity: H(x, y, s) = select(s % 2 == 0, a(x, y), b(x, y)); break;
        case Pure::ParityShifted: H(x, y, s) = select((s + 3) % 2 == 0, a(x, y), b(x, y)); break;
        case Pure::Constant: H(x, y, s) = a(x, y); break;
        case Pure::EveryFourth: H(x, y, s) = select(s % 4 == 0, a(x, y), b(x, y)); break;
        case Pure::Stepped: H(x, y, s) = a(x, y) + cast<float>(s); break;
        }
        H(r.x, r.y, r.z + 1) = 0.2f * (H(r.x, r.y, r.z) + H(r.x - 1, r.y, r.z) + H(r.x + 1, r.y, r.z) + H(r.x, r.y - 1, r.z) +
                                       H(r.x, r.y + 1, r.z));
        if (border_update) {
            RDom c(0, a.height(), "c");
            H(0, c, 3) = 0.5f * H(1, c, 3);
        }
        out(x, y) = H(x, y, 2 * steps);
    }
    // Runs `p` through the AST interpreter (parallel loops backwards) and the compiled pipeline,
    // against the reference interpreter, at w x h for `t` steps.
    void run_and_compare(const poly::Program &p, int w, int h, int t) {
        std::mt19937 rng(uint32_t(w * 131 + h * 7 + t));
        Buffer<float> da(w, h), db(w, h);
        apps::fill_random(da, rng, 0.0, 1.0);
        apps::fill_random(db, rng, 0.0, 1.0);
        a.set(da);
        b.set(db);
        steps.set(t);
        Buffer<float> got(w, h), want(w, h), compiled(w, h);
        poly::ExecuteOptions eo;
        eo.reverse_parallel_loops = true;
        poly::execute(p, {got}, eo);
        interpret(Pipeline(out), {want});
        apps::Comparison c = apps::compare(got, want, 0);
        INFO(w << "x" << h << ", " << t << " steps: " << c.first_mismatch << "\n" << p.ast_c);
        CHECK(c.ok);
        Pipeline(out).compile().realize(compiled);
        apps::Comparison cc = apps::compare(compiled, want, 0);
        INFO("compiled: " << cc.first_mismatch);
        CHECK(cc.ok);
    }
};

const std::vector<std::tuple<int, int, int>> kAwkwardSizes = {{3, 3, 1}, {4, 3, 2}, {5, 7, 0}, {2, 9, 3},
                                                              {17, 5, 1}, {33, 31, 7}, {37, 65, 4}};

// The ring of H, as the schedule stores it: 2 planes along s.
poly::StorageFold fold_of_H(const poly::Model &m) {
    return poly::StorageFold{m.array_of(m.statements.front().func), 2, 2};  // (s: dimension 2, Halide order)
}

size_t count(const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

} // namespace

TEST_CASE("a ring's pure planes past the first are left out: overwritten inside, kept in their slots on the border",
          "[poly][fold][ring]") {
    PlaneJacobi2D j;
    std::shared_ptr<const poly::Model> m = poly::build_model(Pipeline(j.out));
    REQUIRE(m->statements.front().name == "S_H_0");
    poly::RingInitialization r = poly::ring_initialization(*m, fold_of_H(*m));
    INFO(r.why_not);
    REQUIRE(r.why_not.empty());
    // The region's planes are opaque parameters; at a region of 8 x 6 x planes 0..8 (4 steps):
    std::string sizes = "[in_a_extent_0, in_a_extent_1, p_steps, rg_F_H_lo_2, rg_F_H_lo_1, rg_F_H_hi_1, rg_F_H_lo_0, rg_F_H_hi_0] -> "
                        "{ : in_a_extent_0 = 8 and in_a_extent_1 = 6 and p_steps = 4 and rg_F_H_lo_2 = 0 and rg_F_H_lo_1 = 0 and "
                        "rg_F_H_hi_1 = 5 and rg_F_H_lo_0 = 0 and rg_F_H_hi_0 = 7 }";
    // Kept: planes 0 and 1, interior and border. Left out: the interior of plane 5 (the update
    // overwrites it before anything reads it) and its border (plane 1 put the same value in
    // its slot), and plane 8, which the output reads.
    CHECK(poly_test::holds_at(r.first_planes, "S_H_0[0, 3, 3]", sizes));
    CHECK(poly_test::holds_at(r.first_planes, "S_H_0[1, 0, 0]", sizes));
    CHECK(poly_test::holds_at(r.first_planes, "S_H_0[1, 3, 3]", sizes));
    CHECK(poly_test::holds_at(r.left_out, "S_H_0[5, 3, 3]", sizes));
    CHECK(poly_test::holds_at(r.left_out, "S_H_0[5, 0, 4]", sizes));
    CHECK(poly_test::holds_at(r.left_out, "S_H_0[8, 5, 7]", sizes));
    CHECK_FALSE(poly_test::holds_at(r.left_out, "S_H_0[1, 0, 4]", sizes));
    CHECK_FALSE(poly_test::holds_at(r.left_out, "S_H_1[3, 3, 3]", sizes));

    // A value that repeats every second plane whatever its phase, or never changes, also works.
    for (auto pure : {PlaneJacobi2D::Pure::ParityShifted, PlaneJacobi2D::Pure::Constant}) {
        PlaneJacobi2D k(pure);
        std::shared_ptr<const poly::Model> mk = poly::build_model(Pipeline(k.out));
        CHECK(poly::ring_initialization(*mk, fold_of_H(*mk)).why_not == "");
    }
}

TEST_CASE("a ring's pure planes all run where later planes would not find their value in the ring", "[poly][fold][ring]") {
    // The value changes from plane to plane (s itself, or a period longer than the ring's): the
    // border of plane 5 is not what plane 1 left in its slot. The schedule still folds the
    // planes, and initializes every one of them in the time loop.
    for (auto pure : {PlaneJacobi2D::Pure::Stepped, PlaneJacobi2D::Pure::EveryFourth}) {
        PlaneJacobi2D j(pure);
        std::shared_ptr<const poly::Model> m = poly::build_model(Pipeline(j.out));
        poly::RingInitialization r = poly::ring_initialization(*m, fold_of_H(*m));
        CHECK(r.why_not.find("changes from plane to plane of the ring") != std::string::npos);
        CHECK(r.left_out.is_empty());
        poly::Program p = poly::schedule_model(m, {});
        INFO(p.groups.front().note);
        CHECK(p.groups.front().note.find("the pure definition of H runs on every plane: the pure definition of H changes from plane to plane") !=
              std::string::npos);
        for (auto [w, h, t] : kAwkwardSizes) j.run_and_compare(p, w, h, t);
    }
    // An update rewrites column 0 of plane 3: plane 5's column 0 shares that slot, and would find
    // the update's value there instead of its own.
    PlaneJacobi2D j(PlaneJacobi2D::Pure::Parity, true);
    std::shared_ptr<const poly::Model> m = poly::build_model(Pipeline(j.out));
    poly::RingInitialization r = poly::ring_initialization(*m, fold_of_H(*m));
    CHECK(r.why_not.find("writes a slot of the ring between its first plane and a later one") != std::string::npos);
}

TEST_CASE("the first planes of a ring run before its time loop, which runs the update alone", "[poly][fold][ring]") {
    PlaneJacobi2D j;
    std::shared_ptr<const poly::Model> m = poly::build_model(Pipeline(j.out));
    poly::ScheduleOptions o;
    o.verify = true;
    poly::Program p = poly::schedule_model(m, o);
    INFO(p.ast_c);
    CHECK(p.groups.front().note.find("the pure definition of H runs on the ring's first planes only, before its updates") !=
          std::string::npos);
    CHECK(p.ast_c.find("fold:F_H:2:2") != std::string::npos);
    // In the steady case: one loop nest of the pure definition, then the time loop, in which
    // the update has no guard and the pure definition does not appear.
    std::string steady = p.ast_c.substr(0, p.ast_c.find("} else {"));
    REQUIRE(count(steady, "S_H_0(") == 1);
    size_t update = steady.find("S_H_1(");
    REQUIRE(update != std::string::npos);
    CHECK(steady.find("S_H_0(") < update);
    CHECK(steady.rfind("if (", update) < steady.find("S_H_0("));
    poly_test::check_legal(p, "jacobi planes, first planes first");
    for (auto [w, h, t] : kAwkwardSizes) j.run_and_compare(p, w, h, t);
    // The same through the schedule JSON, exported and imported.
    Pipeline pipeline(j.out);
    std::string exported = pipeline.schedule_json();
    CHECK(exported.find("runs on the ring's first planes only") != std::string::npos);
    pipeline.set_schedule_json(exported);
    j.steps.set(3);
    Buffer<float> da(13, 11), db(13, 11), got(13, 11), want(13, 11);
    std::mt19937 rng(5);
    apps::fill_random(da, rng, 0.0, 1.0);
    apps::fill_random(db, rng, 0.0, 1.0);
    j.a.set(da);
    j.b.set(db);
    pipeline.compile().realize(got);
    interpret(Pipeline(j.out), {want});
    CHECK(apps::compare(got, want, 0).ok);
}

TEST_CASE("the legality check lets a schedule leave out only ring planes the first planes stand for, and only after them",
          "[poly][fold][ring]") {
    // The first planes moved after the time loop: the reads they serve come first.
    PlaneJacobi2D j;
    std::shared_ptr<const poly::Model> m = poly::build_model(Pipeline(j.out));
    poly::Program p = poly::schedule_model(m, {});
    poly::RingInitialization r = poly::ring_initialization(*m, fold_of_H(*m));
    REQUIRE(r.why_not.empty());
    struct Found {
        isl_schedule_node *sequence = nullptr;
    } found;
    isl_schedule_foreach_schedule_node_top_down(
        p.schedule.get(),
        [](isl_schedule_node *n, void *user) -> isl_bool {
            auto *f = static_cast<Found *>(user);
            if (f->sequence) return isl_bool_false;
            if (isl_schedule_node_get_type(n) == isl_schedule_node_sequence && isl_schedule_node_get_schedule_depth(n) == 0) {
                isl_schedule_node *first = isl_schedule_node_get_child(n, 0);
                isl_union_set *filter = isl_schedule_node_filter_get_filter(first);
                char *printed = isl_union_set_to_str(filter);
                std::string text = printed ? printed : "";
                free(printed);
                isl_union_set_free(filter);
                isl_schedule_node_free(first);
                if (text.find("S_H_1") == std::string::npos && text.find("S_H_0") != std::string::npos) f->sequence = isl_schedule_node_copy(n);
            }
            return isl_bool_true;
        },
        &found);
    REQUIRE(found.sequence);
    isl_schedule_node *swapped = isl_schedule_node_order_after(found.sequence, r.first_planes.copy());
    isl::schedule late = isl::manage(isl_schedule_node_get_schedule(swapped));
    isl_schedule_node_free(swapped);
    poly::Program q = poly::program_from_tree(m, late, p.groups);
    poly::Dependences d = poly::compute_dependences(*m, 100000000);
    poly::Legality l = poly::check_legality(q, d);
    CHECK_FALSE(l.legal);
    CHECK(l.violation.find("S_H_0") != std::string::npos);

    // Planes left out where the analysis refuses (the value changes from plane to plane): the
    // schedule misses instances it must compute.
    PlaneJacobi2D k(PlaneJacobi2D::Pure::Stepped);
    std::shared_ptr<const poly::Model> mk = poly::build_model(Pipeline(k.out));
    poly::Program pk = poly::schedule_model(mk, {});
    isl::union_set domain = isl::manage(isl_schedule_get_domain(pk.schedule.get()));
    isl::union_set later = isl::manage(isl_union_set_read_from_str(mk->ctx().get(), "[rg_F_H_lo_2] -> { S_H_0[s, y, x] : s >= rg_F_H_lo_2 + 2 }"));
    isl::schedule without = isl::manage(isl_schedule_intersect_domain(pk.schedule.copy(), domain.subtract(later).release()));
    poly::Program qk = poly::program_from_tree(mk, without, pk.groups);
    poly::Legality lk = poly::check_legality(qk, poly::compute_dependences(*mk, 100000000));
    CHECK_FALSE(lk.legal);
    CHECK(lk.violation.find("does not compute every instance of S_H_0") != std::string::npos);
}
