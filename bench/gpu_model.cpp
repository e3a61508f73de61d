// The GPU emulator's performance model of one app (docs/gpu.md): compiles it for
// Target::cuda(80).emulated(), runs it once with the emulator's profiling on, checks the output
// against the app's plain loops, and prints one JSON object per kernel and the totals.
//
//   bench_gpu_model [--shared-opt-in] [--staged] [--no-column-windows] <app> [sizes...]
//
// --shared-opt-in: Target::cuda(80).with_shared_memory_opt_in(), blocks of up to 163 KiB of
// shared memory instead of 48 KiB. --staged: stencil inputs staged in shared memory and warps
// aligned a row at a time (CompileOptions::gpu_stage_inputs, gpu_align_warps "rows"), the
// configuration the model favours and a real GPU did not (docs/gpu.md). --no-column-windows:
// CompileOptions::gpu_column_windows false (blur's stages through shared memory).
//
// With TESSERA_PTX_OUT set, the kernels' PTX (sm_80) is written to that file too.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <tessera/runtime/gpu_emulator.h>

#include "tessera_apps/app.h"

using namespace tessera;

int main(int argc, char **argv) {
    try {
        bool opt_in = false, staged = false, column_windows = true;
        int first = 1;
        for (; first < argc && argv[first][0] == '-'; ++first) {
            std::string flag = argv[first];
            if (flag == "--shared-opt-in") opt_in = true;
            else if (flag == "--staged") staged = true;
            else if (flag == "--no-column-windows") column_windows = false;
            else break;
        }
        if (argc <= first || argv[first][0] == '-') {
            std::fprintf(stderr, "usage: %s [--shared-opt-in] [--staged] [--no-column-windows] <app> [sizes...]\n", argv[0]);
            return 2;
        }
        auto app = apps::make_app(argv[first]);
        std::vector<int> sizes;
        for (int i = first + 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
        if (sizes.empty()) sizes = app->default_sizes();
        app->prepare(sizes, 1);
        CompileOptions o;
        o.keep_assembly = true;
        if (staged) {
            o.gpu_stage_inputs = true;
            o.gpu_align_warps = "rows";
        }
        o.gpu_column_windows = column_windows;
        Target target = Target::cuda(80).emulated();
        if (opt_in) target = target.with_shared_memory_opt_in();
        Callable c = app->pipeline().compile(target, o);
        std::vector<Buffer<void>> got = app->make_outputs(), want = app->make_outputs();
        runtime::set_emulator_profiling(true);
        auto t0 = std::chrono::steady_clock::now();
        c.realize(got);
        double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::vector<runtime::GpuKernelProfile> kernels = runtime::take_emulator_profile();
        if (const char *path = std::getenv("TESSERA_PTX_OUT")) std::ofstream(path) << c.report().ptx;
        app->reference(want);
        bool ok = true;
        for (size_t i = 0; i < got.size(); ++i) ok = ok && apps::compare(got[i], want[i], app->tolerance()).ok;
        std::printf("{\"app\": \"%s\", \"shared_opt_in\": %s, \"staged\": %s, \"column_windows\": %s, \"sizes\": [", argv[first],
                    opt_in ? "true" : "false", staged ? "true" : "false", column_windows ? "true" : "false");
        for (size_t i = 0; i < sizes.size(); ++i) std::printf("%s%d", i ? ", " : "", sizes[i]);
        std::printf("], \"correct\": %s, \"emulated_seconds\": %.3f, \"minimum_bytes\": %.0f, \"kernels\": [", ok ? "true" : "false",
                    seconds, app->minimum_bytes());
        for (size_t i = 0; i < kernels.size(); ++i) {
            const runtime::GpuKernelProfile &k = kernels[i];
            std::printf("%s{\"kernel\": %d, \"launches\": %lld, \"blocks\": %lld, \"threads_per_block\": %d, \"shared_bytes\": %lld, "
                        "\"barriers\": %lld, \"global_load_bytes\": %lld, \"global_store_bytes\": %lld, \"requested_bytes\": %lld, "
                        "\"transferred_bytes\": %lld, \"shared_accesses\": %lld, \"bank_conflicts\": %lld}",
                        i ? ", " : "", k.kernel, (long long)k.launches, (long long)k.blocks, k.threads_per_block,
                        (long long)k.shared_bytes, (long long)k.barriers, (long long)k.global_load_bytes,
                        (long long)k.global_store_bytes, (long long)k.requested_bytes, (long long)k.transferred_bytes,
                        (long long)k.shared_accesses, (long long)k.bank_conflicts);
        }
        std::printf("], \"ptx\": %zu}\n", c.report().ptx.size());
        return ok ? 0 : 1;
    } catch (const Error &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
