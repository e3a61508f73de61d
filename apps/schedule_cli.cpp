// tessera-schedule: prints the automatic schedule of a named app pipeline.
//
//   tessera-schedule <app> [--fusion none|smart|max] [--tile X,Y,...] [--no-parallel]
//                          [--vector-width N] [--gpu SM [--shared-opt-in]] [--loops]
//
// Prints the schedule JSON (docs/schedule-json.md), or with --loops only the loop nest. --gpu SM:
// the schedule for Target::cuda(SM) (kernels, threads, barriers; docs/gpu.md); --shared-opt-in
// for Target::cuda(SM).with_shared_memory_opt_in().
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>

#include <tessera/poly/schedule_json.h>
#include <tessera/poly/scheduler.h>
#include <tessera/runtime/compiled_pipeline.h>

#include "tessera_apps/app.h"

using namespace tessera;

int main(int argc, char **argv) {
    try {
        if (argc < 2 || argv[1][0] == '-') {
            std::fprintf(stderr, "usage: %s <app> [--fusion none|smart|max] [--tile X,Y,...] [--no-parallel] "
                                 "[--vector-width N] [--gpu SM [--shared-opt-in]] [--loops]\napps:", argv[0]);
            for (const auto &n : apps::app_names()) std::fprintf(stderr, " %s", n.c_str());
            std::fprintf(stderr, "\n");
            return 2;
        }
        auto app = apps::make_app(argv[1]);
        poly::ScheduleOptions o;
        bool loops = false, shared_opt_in = false;
        int gpu_sm = 0;
        for (int i = 2; i < argc; ++i) {
            std::string a = argv[i];
            if (a == "--fusion" && i + 1 < argc) o.fusion = poly::parse_fusion(argv[++i]);
            else if (a == "--tile" && i + 1 < argc) {
                std::stringstream s(argv[++i]);
                std::string t;
                o.tile_sizes.clear();
                while (std::getline(s, t, ',')) o.tile_sizes.push_back(std::stoi(t));
            } else if (a == "--no-parallel") o.parallel = false;
            else if (a == "--vector-width" && i + 1 < argc) o.vector_width = std::stoi(argv[++i]);
            else if (a == "--gpu" && i + 1 < argc) gpu_sm = std::stoi(argv[++i]);
            else if (a == "--shared-opt-in") shared_opt_in = true;
            else if (a == "--loops") loops = true;
            else user_error("tessera-schedule: unknown option '", a, "'.");
        }
        if (shared_opt_in && !gpu_sm) user_error("tessera-schedule: --shared-opt-in needs --gpu SM.");
        if (gpu_sm) {
            poly::ScheduleOptions g = runtime::gpu_schedule_options({}, TargetInfo::nvidia_gpu(gpu_sm, shared_opt_in));
            g.fusion = o.fusion;
            g.tile_sizes = o.tile_sizes;
            g.parallel = o.parallel;
            o = g;
        }
        poly::Program p = poly::schedule_pipeline(app->pipeline(), o);
        if (loops) std::cout << poly::to_string(p.nest);
        else std::cout << poly::schedule_to_json(p, &o) << "\n";
        return 0;
    } catch (const Error &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
