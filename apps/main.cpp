// The executable of one app (TESSERA_APP_NAME): compiles its pipeline for the host, runs it on
// random inputs, reports compile time, run time and bandwidth, and checks the result against
// the app's plain C++ loops.
//
//   <app> [--size N ...] [--photo FILE.ppm] [--seed S] [--runs R] [--threads T] [--tile X,Y,...]
//         [--fast-math] [--schedule] [--load-schedule FILE.json] [--gpu]
//
// --fast-math compiles with CompileOptions::fast_math (multiplies and adds contracted into fused
// multiply-adds, as the PyTorch frontend compiles by default); a fused multiply-add rounds once
// where a multiply and an add round twice, so the check then allows a relative error of 1e-5
// (kFastMathTolerance) where the app's own tolerance is tighter.
// --photo: the inputs are made from a photograph (binary PPM; scripts/photo_input.py writes one
// from scikit-image's bundled photographs) instead of random values, for the apps that take one;
// the problem size is the photograph's.
// --schedule prints the schedule JSON the pipeline runs with and exits. --load-schedule runs the
// pipeline with a schedule JSON instead of the automatic one (one that `--schedule`,
// `tessera-schedule` or `tessera-tune` wrote, edited or not; it is checked for legality first). --gpu compiles for
// Target::cuda(80) instead and runs the kernels in the GPU emulator (docs/gpu.md): it prints the
// kernels, their blocks, threads, shared memory and barriers, the emulator's traffic model, and
// the check against the plain loops (sizes default to at most 512: emulation is slow); then, on
// a machine with a CUDA GPU, the same on device 0 (Target::cuda(its sm)), timed and checked.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include <tessera/runtime/compiled_pipeline.h>
#include <tessera/runtime/cuda_device.h>
#include <tessera/runtime/gpu_emulator.h>

#include "tessera_apps/app.h"

using namespace tessera;

namespace {

std::string schedule_summary(const poly::Program &p) {
    std::ostringstream s;
    for (const poly::Group &g : p.groups) {
        s << "  " << g.name << " ("
          << (g.kind == poly::Group::Kind::OverlappedTiles ? "overlapped tiles" : g.kind == poly::Group::Kind::Affine ? "isl schedule" : "sequential")
          << "): ";
        for (size_t i = 0; i < g.funcs.size(); ++i) s << (i ? ", " : "") << g.funcs[i]->name;
        if (!g.tile_sizes.empty()) {
            s << "; tiles";
            for (size_t i = 0; i < g.tile_sizes.size(); ++i) s << (i ? " x " : " ") << g.tile_sizes[i];
        }
        s << "\n";
    }
    for (const poly::Storage &st : p.storage)
        if (st.kind == poly::Storage::Kind::Scratch) {
            s << "  " << st.name << " lives in a per-tile scratchpad of";
            for (size_t i = 0; i < st.extent.size(); ++i) s << (i ? " x " : " ") << st.extent[i];
            s << " " << st.type << "\n";
        }
    return s.str();
}

// The check's relative tolerance under --fast-math: conv2d's 576-term sums differ from the plain
// loops' by up to 4e-6 once contracted.
constexpr double kFastMathTolerance = 1e-5;

// Computes the app's plain C++ loops into `expected`, compares each output with them and prints
// one line per output, starting with `label` ("check against plain C++ loops, output ...: OK").
// `fast_math`: the outputs were compiled with CompileOptions::fast_math.
bool check_outputs(apps::App &app, const std::vector<Buffer<void>> &outputs, std::vector<Buffer<void>> &expected,
                   const char *label, bool fast_math) {
    app.reference(expected);
    const double tolerance = fast_math ? std::max(app.tolerance(), kFastMathTolerance) : app.tolerance();
    bool ok = true;
    for (size_t i = 0; i < outputs.size(); ++i) {
        apps::Comparison cmp = apps::compare(outputs[i], expected[i], tolerance);
        std::printf("%s against plain C++ loops, output %s: %s (max relative error %g)%s%s\n", label,
                    app.pipeline().outputs()[i].name().c_str(), cmp.ok ? "OK" : "MISMATCH", cmp.max_error,
                    cmp.ok ? "" : ", first mismatch ", cmp.first_mismatch.c_str());
        ok &= cmp.ok;
    }
    return ok;
}

// Compiles the app for the emulated GPU, runs it once on the inputs `prepare` makes, prints the kernels and the
// traffic model, and checks the outputs.
bool run_on_emulated_gpu(apps::App &app, const std::function<void()> &prepare, const CompileOptions &options) {
    Callable c = app.pipeline().compile(Target::cuda(80).emulated(), options);
    const CompileReport &r = c.report();
    std::printf("GPU (Target::cuda(80), run by the emulator): %d kernel%s; compile %.1f ms (", r.kernels, r.kernels == 1 ? "" : "s",
                r.total_ms);
    for (size_t i = 0; i < r.phase_ms.size(); ++i) std::printf("%s%s %.1f", i ? ", " : "", r.phase_ms[i].first.c_str(), r.phase_ms[i].second);
    std::printf(")\n");
    prepare();
    std::vector<Buffer<void>> outputs = app.make_outputs(), expected = app.make_outputs();
    runtime::set_emulator_profiling(true);
    auto t0 = std::chrono::steady_clock::now();
    c.realize(outputs);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    runtime::set_emulator_profiling(false);
    double moved = 0;
    for (const runtime::GpuKernelProfile &k : runtime::take_emulator_profile()) {
        std::printf("  kernel %d: %lld block%s of %d thread%s, %.1f KiB of shared memory and %.1f barriers per block; "
                    "coalescing %.1f%%, %lld bank conflicts\n",
                    k.kernel, (long long)k.blocks, k.blocks == 1 ? "" : "s", k.threads_per_block, k.threads_per_block == 1 ? "" : "s",
                    double(k.shared_bytes) / 1024, double(k.barriers) / double(std::max<int64_t>(1, k.blocks)),
                    100 * k.coalescing(), (long long)k.bank_conflicts);
        moved += double(k.global_load_bytes + k.global_store_bytes);
    }
    if (app.minimum_bytes() > 0)
        std::printf("  global memory traffic: %.2f MB, %.3f times the %.2f MB that must move; emulated in %.1f s\n", moved / 1e6,
                    moved / app.minimum_bytes(), app.minimum_bytes() / 1e6, seconds);
    return check_outputs(app, outputs, expected, "check of the emulated GPU", options.fast_math);
}

// When this machine has a CUDA GPU, compiles the app for it, runs it `runs` times (its buffers
// stay on the GPU between calls) and checks the outputs; otherwise says why not.
bool run_on_cuda_gpu_if_present(apps::App &app, const std::function<void()> &prepare, int runs, const CompileOptions &options) {
    std::string why;
    int sm = runtime::cuda_device_capability(&why);
    if (sm == 0) {
        std::printf("no CUDA GPU to run on (%s): the emulator's run above stands in for it\n", why.c_str());
        return true;
    }
    Callable c = app.pipeline().compile(Target::cuda(sm), options);
    prepare();
    std::vector<Buffer<void>> outputs = app.make_outputs(), expected = app.make_outputs();
    std::vector<double> times;
    for (int k = 0; k < runs + 1; ++k) {  // the first call loads the module and copies the inputs
        auto t0 = std::chrono::steady_clock::now();
        c.realize(outputs);
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (k > 0) times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    std::printf("GPU (Target::cuda(%d), device 0): median %.3f ms over %d runs, buffers resident on the GPU\n", sm,
                times[times.size() / 2], runs);
    return check_outputs(app, outputs, expected, "check of the GPU", options.fast_math);
}

} // namespace

int main(int argc, char **argv) {
    try {
        auto app = apps::make_app(TESSERA_APP_NAME);
        std::vector<int> sizes = app->default_sizes();
        uint32_t seed = 1;
        int runs = 7;
        CompileOptions options;
        bool gpu = false, sized = false;
        std::string photo, schedule_file;
        for (int i = 1; i < argc; ++i) {
            if (!std::strcmp(argv[i], "--size")) {
                sizes.clear();
                sized = true;
                while (i + 1 < argc && argv[i + 1][0] != '-') sizes.push_back(std::atoi(argv[++i]));
            } else if (!std::strcmp(argv[i], "--photo") && i + 1 < argc) {
                photo = argv[++i];
            } else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) {
                seed = uint32_t(std::atoi(argv[++i]));
            } else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) {
                runs = std::max(1, std::atoi(argv[++i]));
            } else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
                options.threads = std::atoi(argv[++i]);
            } else if (!std::strcmp(argv[i], "--tile") && i + 1 < argc) {
                // Tile sizes, dimension 0 (innermost) first: "256,32,16".
                options.tile_sizes.clear();
                for (const char *p = argv[++i]; *p;) {
                    options.tile_sizes.push_back(std::atoi(p));
                    while (*p && *p != ',') ++p;
                    if (*p == ',') ++p;
                }
            } else if (!std::strcmp(argv[i], "--gpu")) {
                gpu = true;
            } else if (!std::strcmp(argv[i], "--fast-math")) {
                options.fast_math = true;
            } else if (!std::strcmp(argv[i], "--load-schedule") && i + 1 < argc) {
                schedule_file = argv[++i];
            } else if (!std::strcmp(argv[i], "--schedule")) {
                std::printf("%s\n", app->pipeline().schedule_json().c_str());
                return 0;
            } else {
                std::fprintf(stderr, "usage: %s [--size N ...] [--photo FILE.ppm] [--seed S] [--runs R] [--threads T] [--tile X,Y,...] [--fast-math] [--schedule] [--load-schedule FILE.json] [--gpu]\n", argv[0]);
                return 2;
            }
        }
        std::vector<std::string> names = app->size_names();
        if (sizes.size() != names.size()) {
            std::fprintf(stderr, "%s takes %zu sizes:", app->name().c_str(), names.size());
            for (const auto &n : names) std::fprintf(stderr, " %s", n.c_str());
            std::fprintf(stderr, "\n");
            return 2;
        }
        if (gpu && !sized)
            for (int &s : sizes) s = std::min(s, 512);
        Buffer<float> photograph;
        if (!photo.empty()) {
            photograph = apps::read_ppm(photo);
            if (!app->prepare_photo(photograph, seed)) user_error(app->name(), " takes no photograph (--photo).");
            sizes = {photograph.width(), photograph.height()};
            names = {"photograph width", "photograph height"};
        }
        auto prepare = [&] {
            if (photo.empty()) app->prepare(sizes, seed);
            else app->prepare_photo(photograph, seed);
        };
        std::printf("app: %s  (", app->name().c_str());
        for (size_t i = 0; i < sizes.size(); ++i) std::printf("%s%s=%d", i ? ", " : "", names[i].c_str(), sizes[i]);
        std::printf(")\n");

        if (!schedule_file.empty()) {
            std::ifstream in(schedule_file);
            if (!in) user_error("--load-schedule: cannot read ", schedule_file, ".");
            std::stringstream json;
            json << in.rdbuf();
            app->pipeline().set_schedule_json(json.str());
        }
        if (gpu) {
            bool ok = run_on_emulated_gpu(*app, prepare, options);
            ok = run_on_cuda_gpu_if_present(*app, prepare, runs, options) && ok;
            return ok ? 0 : 1;
        }

        Callable compiled = app->pipeline().compile(Target::host(), options);
        const CompileReport &r = compiled.report();
        std::printf("compile: %.1f ms (", r.total_ms);
        for (size_t i = 0; i < r.phase_ms.size(); ++i)
            std::printf("%s%s %.1f", i ? ", " : "", r.phase_ms[i].first.c_str(), r.phase_ms[i].second);
        // The schedule of these options (--tile among them), not realize()'s default one.
        CompileReport summary_report;
        std::printf(")\nschedule:\n%s", schedule_summary(*runtime::program_for(app->pipeline(), options, summary_report)).c_str());

        prepare();
        std::vector<Buffer<void>> outputs = app->make_outputs();
        std::vector<double> times;
        for (int k = 0; k < runs; ++k) {
            auto t0 = std::chrono::steady_clock::now();
            compiled.realize(outputs);
            auto t1 = std::chrono::steady_clock::now();
            times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        }
        std::sort(times.begin(), times.end());
        double median = times[times.size() / 2];
        double bytes = app->minimum_bytes();
        std::printf(median < 10 ? "run: median %.3f ms over %d runs" : "run: median %.2f ms over %d runs", median, runs);
        if (bytes > 0) std::printf(" (%.1f GB/s over the %.1f MB that must move)", bytes / median / 1e6, bytes / 1e6);
        std::printf("\n");

        std::vector<Buffer<void>> expected = app->make_outputs();
        return check_outputs(*app, outputs, expected, "check", options.fast_math) ? 0 : 1;
    } catch (const Error &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
