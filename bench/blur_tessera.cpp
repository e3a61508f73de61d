// Tessera's side of the blur_x_blur_y benchmark, in its own process: cold compile (the first in
// the process) and warm compile, by phase, then run times of the compiled callable, and
// Pipeline::realize's first call (compiles into its cache) and warm re-run (cache hit); the
// output is checked against the app's plain C++ loops. Prints one JSON object.
//
//   blur_tessera <width> <height> <runs>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <tessera/runtime/executor.h>

#include "tessera_apps/app.h"

using namespace tessera;

namespace {

double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void print_report(const char *name, const CompileReport &r) {
    std::printf("  \"%s\": {\"total_ms\": %.3f", name, r.total_ms);
    for (const auto &[phase, ms] : r.phase_ms) std::printf(", \"%s\": %.3f", phase.c_str(), ms);
    std::printf("},\n");
}

} // namespace

int main(int argc, char **argv) {
    // Compile times here are those of compiling: the persistent cache is off (bench/run_cache_benchmark.py
    // measures it).
    setenv("TESSERA_CACHE", "0", 1);
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s <width> <height> <runs>\n", argv[0]);
        return 2;
    }
    int W = std::atoi(argv[1]), H = std::atoi(argv[2]), runs = std::atoi(argv[3]);
    auto app = apps::make_app("blur_x_blur_y");
    double t0 = now_ms();
    Callable cold = app->pipeline().compile();
    double cold_wall = now_ms() - t0;
    auto again = apps::make_app("blur_x_blur_y");
    Callable warm = again->pipeline().compile();

    app->prepare({W, H}, 7);
    std::vector<Buffer<void>> out = app->make_outputs();
    std::vector<double> times;
    for (int r = 0; r < runs; ++r) {
        double s = now_ms();
        cold.realize(out);
        times.push_back(now_ms() - s);
    }
    // realize(): the first call compiles into the pipeline's cache, later ones reuse it.
    double s0 = now_ms();
    app->pipeline().realize(out);
    double first_realize = now_ms() - s0;
    std::vector<double> rerun;
    for (int r = 0; r < 3; ++r) {
        double s = now_ms();
        app->pipeline().realize(out);
        rerun.push_back(now_ms() - s);
    }
    std::sort(rerun.begin(), rerun.end());
    std::vector<Buffer<void>> want = app->make_outputs();
    app->reference(want);
    bool ok = apps::compare(out[0], want[0], 0).ok;
    const poly::Program &prog = *runtime::scheduled_program(app->pipeline());
    std::printf("{\n  \"check\": \"%s\",\n  \"cold_compile_wall_ms\": %.3f,\n", ok ? "ok" : "MISMATCH", cold_wall);
    print_report("cold_compile", cold.report());
    print_report("warm_compile", warm.report());
    std::printf("  \"realize_first_ms\": %.3f,\n  \"realize_warm_rerun_ms\": %.3f,\n", first_realize, rerun[1]);
    std::printf("  \"schedule\": \"");
    for (const poly::Group &g : prog.groups) std::printf("%s", g.note.c_str());
    std::printf("\",\n  \"run_ms\": [");
    for (size_t i = 0; i < times.size(); ++i) std::printf("%s%.4f", i ? ", " : "", times[i]);
    std::printf("]\n}\n");
    return ok ? 0 : 1;
}
