// Checks an app compiled for the host against its plain C++ loops (shared by the codegen tests).
#pragma once

#include "../test_util.h"

#include "tessera_apps/app.h"

namespace compiled_app_check {

using namespace tessera;

// Runs the compiled app `c` on random inputs at each problem size (seeds from `seed` on) and
// compares every output with the app's reference loops within its tolerance; `what` says how
// it was compiled.
inline void check_callable(apps::App &app, const Callable &c, const std::vector<std::vector<int>> &sizes, uint32_t seed,
                           const std::string &what) {
    for (const auto &s : sizes) {
        app.prepare(s, seed++);
        std::vector<Buffer<void>> got = app.make_outputs(), want = app.make_outputs();
        c.realize(got);
        app.reference(want);
        for (size_t i = 0; i < got.size(); ++i) {
            apps::Comparison cmp = apps::compare(got[i], want[i], app.tolerance());
            INFO(app.name() << " " << what << " sizes=" << Catch::Detail::stringify(s) << ": " << cmp.first_mismatch);
            CHECK(cmp.ok);
        }
    }
}

// Compiles the app once per thread count (1 and 2) with `o`, runs it on random inputs at each
// problem size and compares every output with the app's reference loops within its tolerance.
inline void check_compiled(const std::string &name, const std::vector<std::vector<int>> &sizes, CompileOptions o = {}) {
    auto app = apps::make_app(name);
    for (int threads : {1, 2}) {
        o.threads = threads;
        Callable c = app->pipeline().compile(Target::host(), o);
        check_callable(*app, c, sizes, 3, "threads=" + std::to_string(threads) + " fusion=" + o.fusion);
    }
}

// The reference interpreter (the oracle) against the app's reference loops at each size: when
// a compiled result differs from the loops but this agrees, the compiler is wrong.
inline void check_interpreted(const std::string &name, const std::vector<std::vector<int>> &sizes) {
    auto app = apps::make_app(name);
    uint32_t seed = 3;
    for (const auto &s : sizes) {
        app->prepare(s, seed++);
        std::vector<Buffer<void>> got = app->make_outputs(), want = app->make_outputs();
        interpret(app->pipeline(), got);
        app->reference(want);
        for (size_t i = 0; i < got.size(); ++i) {
            apps::Comparison cmp = apps::compare(got[i], want[i], app->tolerance());
            INFO(name << " interpreted, sizes=" << Catch::Detail::stringify(s) << ": " << cmp.first_mismatch);
            CHECK(cmp.ok);
        }
    }
}

} // namespace compiled_app_check
