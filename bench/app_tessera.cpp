// Tessera's side of the kernel benchmarks, in its own process: one app (apps/src/) compiled with
// default options (the automatic schedule), compile time by phase, run times, and the output
// checked against the app's plain C++ loops. Prints one JSON object.
//
//   app_tessera <app> <runs> <check|nocheck> [--fast-math] [--directives] <size>...
//
// --directives schedules the app with its directive-written schedule (written_schedules.h)
// instead of the automatic one.
// --fast-math compiles with CompileOptions::fast_math (reassociation and fused multiply-add, as
// OpenBLAS's kernels use) and checks within a relative error of 1e-4 instead of exactly.
// e.g. `app_tessera matmul 5 check 2048 2048 2048` (M N K), `app_tessera conv2d 5 nocheck 56 56
// 64 64`. The check runs the app's plain loops (a minute at matmul 2048^3), so the drivers ask
// for it in the first process of each kernel only.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tessera_apps/app.h"
#include "tessera_apps/written_schedules.h"

using namespace tessera;

namespace {
double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
} // namespace

int main(int argc, char **argv) {
    // Compile times here are those of compiling: the persistent cache is off (bench/run_cache_benchmark.py
    // measures it).
    setenv("TESSERA_CACHE", "0", 1);
    if (argc < 5 || (std::string(argv[3]) != "check" && std::string(argv[3]) != "nocheck")) {
        std::fprintf(stderr, "usage: %s <app> <runs> <check|nocheck> [--fast-math] [--directives] <size>...\n", argv[0]);
        return 2;
    }
    std::string name = argv[1];
    int runs = std::atoi(argv[2]);
    bool check = std::string(argv[3]) == "check";
    CompileOptions options;
    int first_size = 4;
    bool written = false;
    for (; first_size < argc && argv[first_size][0] == '-'; ++first_size) {
        if (std::string(argv[first_size]) == "--fast-math") options.fast_math = true;
        else if (std::string(argv[first_size]) == "--directives") written = true;
        else {
            std::fprintf(stderr, "unknown flag %s\n", argv[first_size]);
            return 2;
        }
    }
    std::vector<int> sizes;
    for (int i = first_size; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
    auto app = apps::make_app(name);
    if (written && !apps::apply_written_schedule(*app)) {
        std::fprintf(stderr, "%s has no directive-written schedule (apps/include/tessera_apps/written_schedules.h)\n", name.c_str());
        return 2;
    }
    app->prepare(sizes, 7);
    // The compile time reported is a cold compile's: the persistent cache would answer every
    // process after the first with a hit (issue 11), which bench/run_cache_benchmark.py times.
    options.cache = false;
    Callable c = app->pipeline().compile(Target::host(), options);
    std::vector<Buffer<void>> out = app->make_outputs();
    std::vector<double> times;
    for (int r = 0; r < runs; ++r) {
        double s = now_ms();
        c.realize(out);
        times.push_back(now_ms() - s);
    }
    bool ok = true;
    if (check) {
        std::vector<Buffer<void>> want = app->make_outputs();
        app->reference(want);
        double tolerance = options.fast_math ? std::max(1e-4, app->tolerance()) : app->tolerance();
        for (size_t i = 0; i < out.size(); ++i) ok = ok && apps::compare(out[i], want[i], tolerance).ok;
    }
    std::printf("{\n  \"check\": \"%s\",\n  \"compile\": {\"total_ms\": %.3f", !check ? "skipped" : ok ? "ok" : "MISMATCH", c.report().total_ms);
    for (const auto &[phase, ms] : c.report().phase_ms) std::printf(", \"%s\": %.3f", phase.c_str(), ms);
    std::printf("},\n  \"run_ms\": [");
    for (size_t i = 0; i < times.size(); ++i) std::printf("%s%.4f", i ? ", " : "", times[i]);
    std::printf("]\n}\n");
    return ok ? 0 : 1;
}
