// Helpers for the poly tests: schedule an app, check the schedule with isl, run it through the
// AST interpreter (parallel loops backwards) and compare with the reference interpreter.
#pragma once

#include "../test_util.h"

#include <algorithm>
#include <random>

#include <isl/union_set.h>
#include <nlohmann/json.hpp>

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

// The Funcs of the model of `p`, in order (the schedule JSON's "pipeline" "funcs"): the user's
// and those the model adds (operand copies).
inline std::vector<std::string> funcs_of(const Pipeline &p) {
    return nlohmann::json::parse(p.schedule_json())["pipeline"]["funcs"].get<std::vector<std::string>>();
}

inline bool has(const std::vector<std::string> &v, const std::string &s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// Whether the instance `point` (e.g. "S_J_0[3, 5]") is in `set` for the parameters fixed by
// `params` (e.g. "[in_a_extent_0, p_steps] -> { : in_a_extent_0 = 10 and p_steps = 4 }").
inline bool holds_at(const isl::union_set &set, const std::string &point, const std::string &params) {
    size_t arrow = params.find("->");
    std::string text = params.substr(0, arrow) + "-> { " + point + " : " + params.substr(params.find(':', arrow) + 1);
    isl::union_set fixed = isl::manage(isl_union_set_read_from_str(isl_union_set_get_ctx(set.get()), text.c_str()));
    return !set.intersect(fixed).is_empty();  // (isl aligns the parameters)
}

// A buffer of `extents` at `mins` of uniform random values in [-1, 1).
template <typename T>
Buffer<T> random_buffer(std::vector<int> extents, std::vector<int64_t> mins, uint32_t seed) {
    Buffer<T> b(extents);
    b.set_min(mins);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    T *data = b.data();
    size_t n = 1;
    for (int e : extents) n *= size_t(e);
    for (size_t i = 0; i < n; ++i) data[i] = T(u(rng));
    return b;
}

// Realizes `p` into a double buffer of `extents` at `mins` and compares it exactly with the
// reference interpreter.
inline void check_against_interpreter(const Pipeline &p, const std::vector<int> &extents, const std::vector<int64_t> &mins,
                                      const std::string &what) {
    Buffer<double> got(extents), want(extents);
    got.set_min(mins);
    want.set_min(mins);
    p.realize({got});
    interpret(p, {want});
    apps::Comparison c = apps::compare(got, want, 0);
    INFO(what << ": " << c.first_mismatch);
    CHECK(c.ok);
}

} // namespace poly_test
