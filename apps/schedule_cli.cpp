// tessera-schedule: prints the automatic schedule of a named app pipeline.
//
//   tessera-schedule <app> [--fusion none|smart|max] [--tile X,Y,...] [--no-parallel]
//                          [--vector-width N] [--gpu SM [--shared-opt-in] [--no-column-windows]] [--loops]
//                          [--dump DIR] [--directives] [--timings]
//
// Prints the schedule JSON (docs/schedule-json.md), or with --loops only the loop nest. --gpu SM:
// the schedule for Target::cuda(SM) (kernels, threads, barriers; docs/gpu.md); --shared-opt-in
// for Target::cuda(SM).with_shared_memory_opt_in(); --no-column-windows with
// CompileOptions::gpu_column_windows false. --dump DIR: compiles the app with those options
// instead (the compile cache off) and writes every stage of the compile into a new directory under
// DIR (runtime/compiler_ir.h: 01-pipeline.txt ... 08-asm.s), printing the files' paths.
// --timings: the scheduler's time by phase, and each group's Funcs and note, instead of the JSON.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>

#include <tessera/poly/schedule_json.h>
#include <tessera/poly/scheduler.h>
#include <tessera/runtime/compiled_pipeline.h>
#include <tessera/runtime/compiler_ir.h>

#include "tessera_apps/app.h"
#include "tessera_apps/written_schedules.h"

using namespace tessera;

int main(int argc, char **argv) {
    try {
        if (argc < 2 || argv[1][0] == '-') {
            std::fprintf(stderr, "usage: %s <app> [--fusion none|smart|max] [--tile X,Y,...] [--no-parallel] "
                                 "[--vector-width N] [--gpu SM [--shared-opt-in] [--no-column-windows]] [--loops] [--dump DIR] [--directives] [--timings]\napps:", argv[0]);
            for (const auto &n : apps::app_names()) std::fprintf(stderr, " %s", n.c_str());
            std::fprintf(stderr, "\n");
            return 2;
        }
        auto app = apps::make_app(argv[1]);
        poly::ScheduleOptions o;
        bool loops = false, shared_opt_in = false, column_windows = true, directives = false, timings = false;
        std::string dump, fusion = "smart";
        bool vector_width_given = false;
        int gpu_sm = 0;
        for (int i = 2; i < argc; ++i) {
            std::string a = argv[i];
            if (a == "--fusion" && i + 1 < argc) o.fusion = poly::parse_fusion(fusion = argv[++i]);
            else if (a == "--tile" && i + 1 < argc) {
                std::stringstream s(argv[++i]);
                std::string t;
                o.tile_sizes.clear();
                while (std::getline(s, t, ',')) o.tile_sizes.push_back(std::stoi(t));
            } else if (a == "--no-parallel") o.parallel = false;
            else if (a == "--vector-width" && i + 1 < argc) o.vector_width = std::stoi(argv[++i]), vector_width_given = true;
            else if (a == "--gpu" && i + 1 < argc) gpu_sm = std::stoi(argv[++i]);
            else if (a == "--shared-opt-in") shared_opt_in = true;
            else if (a == "--no-column-windows") column_windows = false;
            else if (a == "--loops") loops = true;
            else if (a == "--dump" && i + 1 < argc) dump = argv[++i];
            else if (a == "--directives") directives = true;
            else if (a == "--timings") timings = true;
            else user_error("tessera-schedule: unknown option '", a, "'.");
        }
        if ((shared_opt_in || !column_windows) && !gpu_sm) user_error("tessera-schedule: --shared-opt-in and --no-column-windows need --gpu SM.");
        CompileOptions gpu_options;
        gpu_options.gpu_column_windows = column_windows;
        if (gpu_sm) {
            poly::ScheduleOptions g = runtime::gpu_schedule_options(gpu_options, TargetInfo::nvidia_gpu(gpu_sm, shared_opt_in));
            g.fusion = o.fusion;
            g.tile_sizes = o.tile_sizes;
            g.parallel = o.parallel;
            o = g;
        }
        if (!dump.empty()) {
            if (vector_width_given || loops)
                user_error("tessera-schedule: --vector-width and --loops apply to printing a schedule, not to --dump.");
            CompileOptions co;
            co.fusion = fusion;
            co.tile_sizes = o.tile_sizes;
            co.parallel = o.parallel;
            co.keep_assembly = true;
            co.cache = false;
            co.gpu_column_windows = column_windows;
            Target t = gpu_sm ? Target::cuda(gpu_sm).emulated() : Target::host();
            if (shared_opt_in) t = t.with_shared_memory_opt_in();
            Callable c = app->pipeline().compile(t, co);
            for (const std::string &f : runtime::dump_compiler_ir(c, app->pipeline(), dump)) std::cout << f << "\n";
            return 0;
        }
        if (directives) {
            // The app's directive-written schedule (written_schedules.h), as realize() runs it.
            if (!apps::apply_written_schedule(*app))
                user_error("tessera-schedule: ", argv[1], " has no directive-written schedule.");
            if (loops) std::cout << app->pipeline().compile(Target::host(), {}).compiler_ir("loop_nest");
            else std::cout << app->pipeline().schedule_json() << "\n";
            return 0;
        }
        poly::Program p = poly::schedule_pipeline(app->pipeline(), o);
        if (timings) {
            double total = 0;
            for (const auto &[phase, ms] : p.timings) {
                std::printf("%-18s %9.1f ms\n", phase.c_str(), ms);
                total += ms;
            }
            std::printf("%-18s %9.1f ms\n", "total", total);
            for (const poly::Group &g : p.groups) {
                std::printf("%s:", g.name.c_str());
                for (const FuncContents *f : g.funcs) std::printf(" %s", f->name.c_str());
                std::printf("\n    %s\n", g.note.c_str());
            }
        } else if (loops) std::cout << poly::to_string(p.nest);
        else std::cout << poly::schedule_to_json(p, &o) << "\n";
        return 0;
    } catch (const Error &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
