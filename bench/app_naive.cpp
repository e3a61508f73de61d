// The naive C++ baseline of the image-pipeline benchmark, in its own process: an app's plain
// C++ reference loops (every stage a loop nest over its whole region, in order, nothing fused
// or tiled), compiled at -O3 -march=native with OpenMP on the outer loop of each nest
// (TESSERA_REFERENCE_PARALLEL_FOR), timed on the same random inputs as bench_app_tessera.
// Prints one JSON object.
//
//   app_naive <app> <runs> <size>...
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tessera_apps/app.h"

using namespace tessera;

int main(int argc, char **argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s <app> <runs> <size>...\n", argv[0]);
        return 2;
    }
    auto app = apps::make_app(argv[1]);
    int runs = std::atoi(argv[2]);
    std::vector<int> sizes;
    for (int i = 3; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
    app->prepare(sizes, 7);
    std::vector<Buffer<void>> out = app->make_outputs();
    std::printf("{\n  \"run_ms\": [");
    for (int r = 0; r < runs; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        app->reference(out);
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        std::printf("%s%.4f", r ? ", " : "", ms);
    }
    std::printf("]\n}\n");
    return 0;
}
