// blur_x_blur_y on a CUDA GPU through Tessera (Target::cuda(sm)), timed per call, and checked
// against the app's plain loops. Two variants: buffers resident on the GPU (after the first call
// the input stays there and the output is left there, as a chain of pipelines would use them),
// and each call followed by copy_to_host() of the output (what a host consumer waits for).
// Prints one JSON object per variant. bench/run_gpu_benchmark.py drives it; on a machine
// without a GPU the compile succeeds and the run reports the missing driver.
//
//   bench_gpu_blur <sm> <width> <height> <runs> [<tile x> <tile y> [<unroll rows>]]
//   bench_gpu_blur <sm> <width> <height> <runs> sweep <rounds> <X>x<Y>:<U>[:<flag>...] ...
//
// With tile sizes, the group's tiles are those (CompileOptions::tile_sizes) instead of the
// model's, and the variants' names say so. Tile sizes 0 0 keep the model's. With <unroll rows>,
// each thread loads that many rows before using them (CompileOptions::gpu_unroll_rows; 1: none)
// instead of the target's choice. `sweep` times several such variants in one process (buffers
// resident only), interleaved over <rounds> rounds, each round's order the same, one JSON line
// per variant and round: for sweeping tiles and rows on a real device (0x0:0 is the automatic
// schedule). Flags after the rows: `rows`, `jammed` or `off` (CompileOptions::gpu_align_warps),
// `staged` or `unstaged` (gpu_stage_inputs true or false; false is the default), `optin`
// (Target::with_shared_memory_opt_in()), `inline` (blur_x.compute_inline(): blur_y reads the
// input 25 times, through the GPU's caches, instead of blur_x from shared memory) and `written`
// (the app's directive-written CPU schedule, apps/written_schedules.h: blur_x in a sliding
// window). The last two schedule a fresh copy of the app, prepared alike. `nobarrier`: the
// automatic schedule with its barrier marks removed, unchecked (runtime::compile_program_for_cuda):
// legal for blur only because blur_y reads blur_x in its own column, which the same thread
// computed when warps are not aligned; the check against the loops says whether it held.
// `emulated`: Target::emulated(), to check a variant on a machine without a GPU. `columns` and
// `shared`: column windows (CompileOptions::gpu_column_windows, the default: a thread walks down
// two columns, blur_x's rows in its registers, no shared memory, no barrier) or not (blur_x's
// tile in shared memory, a barrier, blur_y).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <isl/schedule.h>
#include <nlohmann/json.hpp>
#include <tessera/func_graph.h>
#include <tessera/poly/schedule_json.h>
#include <tessera/runtime/compiled_pipeline.h>

#include "tessera_apps/app.h"
#include "tessera_apps/written_schedules.h"

using namespace tessera;

namespace {

// tiles "X Y" (0 0: the model's) and rows per thread step (0: the target's choice).
CompileOptions variant_options(int tx, int ty, int rows, std::string &name) {
    CompileOptions options;
    if (tx > 0 && ty > 0) {
        options.tile_sizes = {tx, ty};
        name += ", tiles " + std::to_string(tx) + " x " + std::to_string(ty);
    }
    if (rows > 0) {
        options.gpu_unroll_rows = rows;
        name += ", " + std::to_string(rows) + " rows per thread step";
    }
    return options;
}

// Median of `runs` calls after one untimed call (which loads the module and copies the input).
double median_ms(Callable &c, std::vector<Buffer<void>> &got, int runs, bool copy_back) {
    std::vector<double> ms;
    for (int k = 0; k < runs + 1; ++k) {
        auto t0 = std::chrono::steady_clock::now();
        c.realize(got);
        if (copy_back) got[0].copy_to_host();
        double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (k > 0) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

int sweep(apps::App &app, const std::vector<int> &sizes, int sm, int runs, int rounds, int argc, char **argv) {
    struct Variant {
        std::string name;
        Callable callable;
        std::shared_ptr<apps::App> own;  // the variant's own copy of the app, with directives
    };
    // A fresh copy of the app with the same input, for directives (which change its Funcs).
    auto own_copy = [&](std::shared_ptr<apps::App> &own) -> apps::App & {
        if (!own) {
            own = apps::make_app("blur_x_blur_y");
            own->prepare(sizes, 1);
        }
        return *own;
    };
    std::vector<Variant> variants;
    for (int i = 0; i < argc; ++i) {
        int tx = 0, ty = 0, rows = 0, used = 0;
        if (std::sscanf(argv[i], "%dx%d:%d%n", &tx, &ty, &rows, &used) != 3) {
            std::fprintf(stderr, "sweep variant '%s' is not <X>x<Y>:<rows>[:<flag>...]\n", argv[i]);
            return 2;
        }
        std::string name = "Tessera (Target::cuda(" + std::to_string(sm) + "), buffers resident on the GPU";
        CompileOptions o = variant_options(tx, ty, rows, name);
        Target target = Target::cuda(sm);
        std::shared_ptr<apps::App> own;
        bool no_barrier = false;
        for (const char *flag = argv[i] + used; *flag == ':';) {
            const char *end = std::strchr(flag + 1, ':');
            std::string f(flag + 1, end ? end : flag + std::strlen(flag));
            if (f == "rows" || f == "jammed" || f == "off") o.gpu_align_warps = f;
            else if (f == "staged" || f == "unstaged") o.gpu_stage_inputs = f == "staged";
            else if (f == "optin") target = target.with_shared_memory_opt_in();
            else if (f == "inline") {
                for (const auto &func : build_pipeline_graph(own_copy(own).pipeline().outputs()).funcs)
                    if (func->name == "blur_x") Func(func).compute_inline();
            } else if (f == "written") apps::apply_written_schedule(own_copy(own));
            else if (f == "nobarrier") no_barrier = true;
            else if (f == "emulated") target = target.emulated();
            else if (f == "columns" || f == "shared") o.gpu_column_windows = f == "columns";
            else {
                std::fprintf(stderr, "sweep variant '%s': unknown flag '%s' (rows, jammed, off, staged, unstaged, optin, inline, written, nobarrier, emulated, columns, shared)\n",
                             argv[i], f.c_str());
                return 2;
            }
            name += ", " + f;
            flag = end ? end : flag + std::strlen(flag);
        }
        const Pipeline &pipeline = (own ? *own : app).pipeline();
        if (no_barrier) {
            CompileReport report;
            auto program = runtime::program_for(
                pipeline, runtime::gpu_schedule_options(o, TargetInfo::nvidia_gpu(sm, target.shared_memory_opt_in)), report);
            std::string tree = nlohmann::json::parse(poly::schedule_to_json(*program))["schedule_tree"].get<std::string>();
            for (size_t at; (at = tree.find("mark: \"barrier\"")) != std::string::npos;) tree.replace(at, std::strlen("mark: \"barrier\""), "mark: \"removed\"");
            std::shared_ptr<const poly::Model> model = program->model;
            auto unchecked = [&] {
                std::lock_guard<std::mutex> lock(model->isl_mutex);
                return std::make_shared<const poly::Program>(poly::program_from_tree(
                    model, isl::manage(isl_schedule_read_from_str(model->ctx().get(), tree.c_str())), program->groups));
            }();
            variants.push_back({name + ")", Callable(runtime::compile_program_for_cuda(pipeline, unchecked, target, o)), own});
        } else {
            variants.push_back({name + ")", pipeline.compile(target, o), own});
        }
    }
    std::vector<Buffer<void>> want = app.make_outputs();
    app.reference(want);
    bool all_ok = true;
    std::vector<Buffer<void>> got = app.make_outputs();
    // One line per variant and round, as it is measured (a run cut short keeps what it has);
    // the check against the loops in the first round only (seconds of host time at 4096²).
    for (int r = 0; r < rounds; ++r)
        for (Variant &v : variants) {
            double ms = median_ms(v.callable, got, runs, false);
            bool ok = true;
            if (r == 0) {
                ok = apps::compare(got[0], want[0], app.tolerance()).ok;
                all_ok = all_ok && ok;
            }
            std::printf("{\"variant\": \"%s\", \"round\": %d, \"median_ms\": %.4f, \"correct\": %s, \"minimum_bytes\": %.0f, "
                        "\"compile_ms\": %.1f}\n",
                        v.name.c_str(), r, ms, r > 0 ? "null" : ok ? "true" : "false", app.minimum_bytes(), v.callable.report().total_ms);
            std::fflush(stdout);
        }
    return all_ok ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
    try {
        bool sweeping = argc >= 7 && !std::strcmp(argv[5], "sweep");
        if (argc != 5 && argc != 7 && argc != 8 && !sweeping) {
            std::fprintf(stderr,
                         "usage: %s <sm> <width> <height> <runs> [<tile x> <tile y> [<unroll rows>]]\n"
                         "       %s <sm> <width> <height> <runs> sweep <rounds> <X>x<Y>:<rows> ...\n",
                         argv[0], argv[0]);
            return 2;
        }
        int sm = std::atoi(argv[1]), runs = std::max(1, std::atoi(argv[4]));
        auto app = apps::make_app("blur_x_blur_y");
        app->prepare({std::atoi(argv[2]), std::atoi(argv[3])}, 1);
        if (sweeping) return sweep(*app, {std::atoi(argv[2]), std::atoi(argv[3])}, sm, runs, std::max(1, std::atoi(argv[6])), argc - 7, argv + 7);
        std::string tiles;
        CompileOptions options = variant_options(argc >= 7 ? std::atoi(argv[5]) : 0, argc >= 7 ? std::atoi(argv[6]) : 0,
                                                 argc == 8 ? std::atoi(argv[7]) : 0, tiles);
        Callable c = app->pipeline().compile(Target::cuda(sm), options);
        std::vector<Buffer<void>> got = app->make_outputs(), want = app->make_outputs();
        double resident = median_ms(c, got, runs, false), copied = median_ms(c, got, runs, true);
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
