// Dead-instance elimination (dead_instances.h): which instances are dead, that schedules leave
// them out only where the loops stay simple, and that the results do not change.
#include "poly_test_util.h"

#include <isl/union_set.h>

#include <tessera/poly/dead_instances.h>
#include <tessera/poly/storage_folding.h>

using namespace tessera;

namespace {

// jacobi-1d as polybench_stencils.cpp writes it: one plane per half step, each plane starting as
// the array it stands for; the update overwrites a plane's interior before anything reads it.
// `update_reads_own_plane`: the update also reads the plane it writes, before writing it.
struct PlaneJacobi1D {
    InputBuffer<float> a{"a", 1}, b{"b", 1};
    Param<int> steps{"steps"};
    Func J{"J"}, out{"out"};
    explicit PlaneJacobi1D(bool update_reads_own_plane = false) {
        Var i("i"), s("s");
        RDom r(1, a.width() - 2, 0, 2 * steps, "r");
        J(i, s) = select(s % 2 == 0, a(i), b(i));
        Expr smooth = 0.33333f * (J(r.x - 1, r.y) + J(r.x, r.y) + J(r.x + 1, r.y));
        J(r.x, r.y + 1) = update_reads_own_plane ? smooth + J(r.x, r.y + 1) : smooth;
        out(i) = J(i, 2 * steps);
    }
    void run_and_compare(const poly::Program &p, int n, int t) {
        std::mt19937 rng(uint32_t(n * 31 + t));
        Buffer<float> da(n), db(n);
        apps::fill_random(da, rng, 0.0, 1.0);
        apps::fill_random(db, rng, 0.0, 1.0);
        a.set(da);
        b.set(db);
        steps.set(t);
        Buffer<float> got(n), want(n);
        poly::ExecuteOptions eo;
        eo.reverse_parallel_loops = true;
        poly::execute(p, {got}, eo);
        interpret(Pipeline(out), {want});
        apps::Comparison c = apps::compare(got, want, 0);
        INFO("n " << n << " steps " << t << ": " << c.first_mismatch << "\n" << p.ast_c);
        CHECK(c.ok);
        Callable compiled = Pipeline(out).compile();
        Buffer<float> got_compiled(n);
        compiled.realize(got_compiled);
        apps::Comparison cc = apps::compare(got_compiled, want, 0);
        INFO("compiled: " << cc.first_mismatch);
        CHECK(cc.ok);
    }
};

// Whether two union sets of different isl contexts are equal (one read into the other's).
bool equal_across_contexts(const isl::union_set &a, const isl::union_set &b) {
    char *text = isl_union_set_to_str(a.get());
    isl::union_set a_in_b(b.ctx(), text);
    free(text);
    return a_in_b.is_equal(b);
}

bool dead_at(const poly::Model &m, const std::string &point, const std::string &params) {
    return poly_test::holds_at(m.dead(), point, params);
}

} // namespace

TEST_CASE("the pure planes of a time loop lose the instances the update overwrites before any read", "[poly][dead]") {
    PlaneJacobi1D j;
    std::shared_ptr<const poly::Model> m = poly::build_model(Pipeline(j.out));
    REQUIRE_FALSE(m->dead().is_empty());
    // Dead: an interior point of a plane after the first. Alive: plane 0, a plane's two ends (the
    // update never writes them) and every instance of the update.
    std::string sizes = "[in_a_extent_0, p_steps] -> { : in_a_extent_0 = 10 and p_steps = 4 }";
    CHECK(dead_at(*m, "S_J_0[3, 5]", sizes));
    CHECK(dead_at(*m, "S_J_0[8, 1]", sizes));
    CHECK_FALSE(dead_at(*m, "S_J_0[0, 5]", sizes));
    CHECK_FALSE(dead_at(*m, "S_J_0[3, 0]", sizes));
    CHECK_FALSE(dead_at(*m, "S_J_0[3, 9]", sizes));
    CHECK_FALSE(dead_at(*m, "S_J_1[3, 5]", sizes));

    // The schedule leaves them out: a plane's loop runs the update alone, unguarded, between the
    // two ends, and the planes stay folded into a ring of two (the legality check accepts a
    // program without the dead instances).
    poly::Program p = poly::schedule_model(m, {});
    INFO(p.ast_c);
    CHECK(p.ast_c.find("fold:F_J") != std::string::npos);
    bool update_alone = false;
    std::istringstream lines(p.ast_c);
    std::string line, previous;
    while (std::getline(lines, line)) {
        if (line.find("S_J_1(") != std::string::npos && previous.find("for (") != std::string::npos) update_alone = true;
        previous = line;
    }
    CHECK(update_alone);
    poly_test::check_legal(p, "jacobi-1d planes");
    for (int n : {1, 2, 3, 4, 7, 31, 64, 65})
        for (int t : {0, 1, 2, 5, 9}) j.run_and_compare(p, n, t);
}

TEST_CASE("a value read before it is overwritten is not dead", "[poly][dead]") {
    // The update reads the plane it writes, before writing it: the pure planes stay whole.
    PlaneJacobi1D j(true);
    std::shared_ptr<const poly::Model> m = poly::build_model(Pipeline(j.out));
    CHECK(m->dead().is_empty());
    poly::Program p = poly::schedule_model(m, {});
    for (int n : {3, 8, 17})
        for (int t : {1, 3}) j.run_and_compare(p, n, t);

    // matmul: the zero of every sum is read by its first step.
    Func c("c");
    InputBuffer<float> x("x", 2), y("y", 2);
    Var i("i"), k("k");
    RDom r(0, x.width(), "r");
    c(i, k) = 0.0f;
    c(i, k) += x(r, k) * y(i, r);
    CHECK(poly::build_model(Pipeline(c))->dead().is_empty());
}

TEST_CASE("an output Func keeps every instance, since its final values are observed", "[poly][dead]") {
    InputBuffer<float> a("a", 1);
    Var i("i");
    RDom r(1, a.width() - 2, "r");
    Func f("f"), g("g");
    f(i) = a(i);
    f(r) = 2.0f * a(r);  // overwrites f's interior before anything reads it
    g(i) = f(i) + 1.0f;
    // As an intermediate Func, f's overwritten interior is dead; as an output, it is not.
    CHECK_FALSE(poly::build_model(Pipeline(g))->dead().is_empty());
    CHECK(poly::build_model(Pipeline(f))->dead().is_empty());
    // (f and g both outputs: f's values are observed.)
    CHECK(poly::build_model(Pipeline({f, g}))->dead().is_empty());
}

TEST_CASE("the dead instances found on a thread of their own are those found in the model's context", "[poly][dead]") {
    // The helper thread reads the accesses as isl's text into a context of its own; what it
    // finds comes back the same way. Compared with the analysis in place, for a Func with dead
    // instances, one without, and a model without candidates (no thread at all).
    PlaneJacobi1D with_dead, without_dead(true);
    InputBuffer<float> a("a", 1);
    Var i("i");
    Func plain("plain");
    plain(i) = a(i) * 2.0f;
    for (const Func &out : {with_dead.out, without_dead.out, plain}) {
        std::unique_ptr<poly::Model> m = poly::build_model(Pipeline(out));
        poly::DeadInstances in_place = poly::dead_instances(*m);
        poly::DeadInstances on_thread = poly::start_dead_instances(*m)();
        INFO(out.name());
        CHECK(on_thread.dead.is_equal(in_place.dead));
        CHECK(on_thread.overwritten.is_equal(in_place.overwritten));
        CHECK(on_thread.dead.is_equal(m->dead()));
        // The helper also finds the analysed Funcs' region_covers_accesses (storage_folding.h).
        CHECK(in_place.covers.empty());
        for (const auto &[array, covers] : on_thread.covers) {
            isl::set known = poly::region_covers_accesses(*m, array);
            CHECK(isl::manage(isl_set_align_params(covers.copy(), known.space().release())).is_equal(known));
        }
        // (build_model with threads to spare starts the helper itself.)
        std::unique_ptr<poly::Model> threaded = poly::build_model(Pipeline(out), "", false, 2);
        CHECK(equal_across_contexts(threaded->dead(), m->dead()));
        CHECK(equal_across_contexts(threaded->overwritten(), m->overwritten()));
    }
    std::unique_ptr<poly::Model> m = poly::build_model(Pipeline(with_dead.out));
    CHECK_FALSE(poly::dead_instances(*m).overwritten.is_empty());
    CHECK(poly::start_dead_instances(*m)().covers.size() == 1);
}
