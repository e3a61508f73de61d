// blur_x_blur_y on a CUDA GPU through Tessera (Target::cuda(sm)), timed per call, and checked
// against the app's plain loops. Two variants: buffers resident on the GPU (after the first call
// the input stays there and the output is left there, as a chain of pipelines would use them),
// and each call followed by copy_to_host() of the output (what a host consumer waits for).
// Prints one JSON object per variant. bench/run_gpu_benchmark.py drives it; on a machine
// without a GPU the compile succeeds and the run reports the missing driver.
//
//   bench_gpu_blur <sm> <width> <height> <runs> [<tile x> <tile y>]
//
// With tile sizes, the group's tiles are those (CompileOptions::tile_sizes) instead of the
// model's, and the variants' names say so: for sweeping the GPU tile choice on a real device.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "tessera_apps/app.h"

using namespace tessera;

int main(int argc, char **argv) {
    try {
        if (argc != 5 && argc != 7) {
            std::fprintf(stderr, "usage: %s <sm> <width> <height> <runs> [<tile x> <tile y>]\n", argv[0]);
            return 2;
        }
        int sm = std::atoi(argv[1]), runs = std::max(1, std::atoi(argv[4]));
        auto app = apps::make_app("blur_x_blur_y");
        app->prepare({std::atoi(argv[2]), std::atoi(argv[3])}, 1);
        CompileOptions options;
        std::string tiles;
        if (argc == 7) {
            options.tile_sizes = {std::atoi(argv[5]), std::atoi(argv[6])};
            tiles = std::string(", tiles ") + argv[5] + " x " + argv[6];
        }
        Callable c = app->pipeline().compile(Target::cuda(sm), options);
        std::vector<Buffer<void>> got = app->make_outputs(), want = app->make_outputs();
        auto time = [&](bool copy_back) {
            std::vector<double> ms;
            for (int k = 0; k < runs + 1; ++k) {  // the first call loads the module and copies the input
                auto t0 = std::chrono::steady_clock::now();
                c.realize(got);
                if (copy_back) got[0].copy_to_host();
                double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
                if (k > 0) ms.push_back(t);
            }
            std::sort(ms.begin(), ms.end());
            return ms[ms.size() / 2];
        };
        double resident = time(false), copied = time(true);
        app->reference(want);
        bool ok = apps::compare(got[0], want[0], app->tolerance()).ok;
        const char *variants[] = {"buffers resident on the GPU", "output copied to the host"};
        double medians[] = {resident, copied};
        for (int v = 0; v < 2; ++v)
            std::printf("{\"variant\": \"Tessera (Target::cuda(%d), %s%s)\", \"median_ms\": %.4f, \"correct\": %s, "
                        "\"minimum_bytes\": %.0f, \"compile_ms\": %.1f}\n",
                        sm, variants[v], tiles.c_str(), medians[v], ok ? "true" : "false", app->minimum_bytes(),
                        c.report().total_ms);
        return ok ? 0 : 1;
    } catch (const Error &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
