// Tessera's side of the matmul benchmark, in its own process: the matmul or gemm app
// (apps/src/matmul.cpp) or PolyBench's double gemm (pb_gemm, apps/src/polybench_blas.cpp),
// compiled with default options (the automatic schedule), compile time by phase, run times,
// and the output checked against the app's plain C++ loops. Prints one JSON object.
//
//   matmul_tessera <matmul|gemm|pb_gemm> <M> <N> <K> <runs> [check|nocheck]
//
// The check runs the app's plain loops (i, j, k order: a minute at 2048^3), so the driver asks for
// it in the first process of each kernel only.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tessera_apps/app.h"

using namespace tessera;

namespace {
double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
} // namespace

int main(int argc, char **argv) {
    if (argc != 6 && argc != 7) {
        std::fprintf(stderr, "usage: %s <matmul|gemm|pb_gemm> <M> <N> <K> <runs> [check|nocheck]\n", argv[0]);
        return 2;
    }
    std::string name = argv[1];
    int M = std::atoi(argv[2]), N = std::atoi(argv[3]), K = std::atoi(argv[4]), runs = std::atoi(argv[5]);
    auto app = apps::make_app(name);
    app->prepare({M, N, K}, 7);
    Callable c = app->pipeline().compile();
    std::vector<Buffer<void>> out = app->make_outputs();
    std::vector<double> times;
    for (int r = 0; r < runs; ++r) {
        double s = now_ms();
        c.realize(out);
        times.push_back(now_ms() - s);
    }
    bool check = argc == 6 || std::string(argv[6]) == "check";
    bool ok = true;
    if (check) {
        std::vector<Buffer<void>> want = app->make_outputs();
        app->reference(want);
        // The schedule reorders nothing within a sum: the result is exact.
        ok = apps::compare(out[0], want[0], 0).ok;
    }
    std::printf("{\n  \"check\": \"%s\",\n  \"compile\": {\"total_ms\": %.3f", !check ? "skipped" : ok ? "ok" : "MISMATCH", c.report().total_ms);
    for (const auto &[phase, ms] : c.report().phase_ms) std::printf(", \"%s\": %.3f", phase.c_str(), ms);
    std::printf("},\n  \"run_ms\": [");
    for (size_t i = 0; i < times.size(); ++i) std::printf("%s%.4f", i ? ", " : "", times[i]);
    std::printf("]\n}\n");
    return ok ? 0 : 1;
}
