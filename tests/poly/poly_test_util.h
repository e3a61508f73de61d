// Helpers for the poly tests: schedule an app, check the schedule with isl, run it through the
// AST interpreter (parallel loops backwards) and compare with the reference interpreter.
#pragma once

#include "../test_util.h"

#include <tessera/poly/ast_interpreter.h>
#include <tessera/poly/dependences.h>
#include <tessera/poly/legality.h>
#include <tessera/poly/scheduler.h>

#include "tessera_apps/app.h"

namespace poly_test {

using namespace tessera;

// Checks `p` (a parametric program: legal for every size or for none) against the dependences.
inline void check_legal(const poly::Program &p, const std::string &what) {
    poly::Dependences d = poly::compute_dependences(*p.model, 100000000);
    REQUIRE(d.computed);
    poly::Legality l = poly::check_legality(p, d);
    INFO(what << ": " << l.violation << "\n" << p.ast_c);
    REQUIRE(l.legal);
}

// Runs `p` on the app's prepared inputs and compares with the reference interpreter, exactly.
inline void check_runs(const poly::Program &p, const apps::App &app, const std::string &what) {
    std::vector<Buffer<void>> got = app.make_outputs(), want = app.make_outputs();
    poly::ExecuteOptions eo;
    eo.reverse_parallel_loops = true;
    poly::execute(p, got, eo);
    interpret(app.pipeline(), want);
    for (size_t i = 0; i < got.size(); ++i) {
        apps::Comparison c = apps::compare(got[i], want[i], 0);
        INFO(what << ": " << c.first_mismatch << "\n" << p.ast_c);
        CHECK(c.ok);
    }
}

// Both of the above.
inline void check_program(const poly::Program &p, const apps::App &app, const std::string &what) {
    check_legal(p, what);
    check_runs(p, app, what);
}

// Schedules the app once with `o` and checks it at each problem size.
inline void check_app(const std::string &name, const std::vector<std::vector<int>> &sizes, poly::ScheduleOptions o = {}) {
    auto app = apps::make_app(name);
    std::shared_ptr<const poly::Model> m = poly::build_model(app->pipeline());
    poly::Program p = poly::schedule_model(m, o);
    check_legal(p, name + " fusion=" + poly::fusion_name(o.fusion));
    uint32_t seed = 17;
    for (const auto &s : sizes) {
        app->prepare(s, seed++);
        check_runs(p, *app, name + " fusion=" + poly::fusion_name(o.fusion) + " sizes=" + Catch::Detail::stringify(s));
    }
}

} // namespace poly_test
