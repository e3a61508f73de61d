// Random chains of 30+ stencil stages (each reading the one or two before it at random offsets),
// scheduled with each fusion mode, checked with isl and against the reference interpreter.
#include "poly_test_util.h"

#include <random>

using namespace tessera;

namespace {

// A chain of `n` stages over a repeat_edge input; returns the last stage.
Func random_chain(int n, uint32_t seed, const InputBuffer<int> &input) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> offset(-2, 2), weight(-2, 3), taps(2, 3);
    Var x("x"), y("y");
    Func clamped = BoundaryConditions::repeat_edge(input);
    std::vector<Func> stages;
    for (int k = 0; k < n; ++k) {
        Func f("s" + std::to_string(k));
        const Func &prev = k == 0 ? clamped : stages.back();
        Expr e = 0;
        for (int t = taps(rng); t > 0; --t) e = e + weight(rng) * prev(x + offset(rng), y + offset(rng));
        if (k >= 2 && rng() % 3 == 0) e = e + stages[size_t(k - 2)](x + offset(rng), y + offset(rng));
        f(x, y) = e / 2;
        stages.push_back(f);
    }
    return stages.back();
}

} // namespace

TEST_CASE("random chains of 32 stencil stages schedule legally and compute the same values", "[poly][chain]") {
    for (uint32_t seed : {1u, 2u}) {
        InputBuffer<int> in("in", 2);
        Func out = random_chain(32, seed, in);
        Pipeline p(out);
        std::shared_ptr<const poly::Model> m = poly::build_model(p);
        poly::Dependences d = poly::compute_dependences(*m, 100000000);
        for (auto f : {poly::Fusion::Smart, poly::Fusion::Max}) {
            poly::ScheduleOptions o;
            o.fusion = f;
            poly::Program prog = poly::schedule_model(m, o);
            poly::Legality l = poly::check_legality(prog, d);
            INFO("seed " << seed << " fusion " << poly::fusion_name(f) << ": " << l.violation);
            REQUIRE(l.legal);
            if (f == poly::Fusion::Max) CHECK(prog.groups.size() == 1);
            for (auto [w, h] : std::vector<std::pair<int, int>>{{5, 5}, {37, 29}, {263, 3}}) {
                Buffer<int> b(w, h);
                std::mt19937 rng(seed + uint32_t(w));
                for (int yy = 0; yy < h; ++yy)
                    for (int xx = 0; xx < w; ++xx) b(xx, yy) = int(rng() % 200) - 100;
                in.set(b);
                Buffer<int> got(w, h), want(w, h);
                poly::ExecuteOptions eo;
                eo.reverse_parallel_loops = true;
                poly::execute(prog, {got}, eo);
                interpret(p, {want});
                INFO("size " << w << "x" << h << " groups " << prog.groups.size());
                CHECK(apps::compare(got, want, 0).ok);
            }
        }
    }
}
