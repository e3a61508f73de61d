// The compile cache's latency figures (bench/run_cache_benchmark.py drives it, one process per
// measurement):
//
//   cache_latency hit <app>      compile() of the app's pipeline with the cache on: the wall time of
//                                the first compile in this process (a new process: it includes
//                                its first touches of the loader) and of a second, new Pipeline of the same app (the
//                                loader warm), each with the report's phases and cache status
//   cache_latency cold <app>     compile() with the cache off, by phase
//   cache_latency setup <app>    the same hit after the process's one-time set-up, timed step by step:
//                                LLVM's host CPU query, the host's cache sizes, the JIT's TargetMachine (which compiles make; a hit makes none)
//   cache_latency run_overhead   run() of a one-element pipeline from C++: the median over batches
//                                of calls, in microseconds (the kernel itself is a few
//                                instructions)
//   cache_latency hit_marked <app>  one compile() with the cache on, between two getppid() system
//                                calls that mark it for scripts/hit_path_order.py's tracer
//
// Prints one JSON object.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <unistd.h>

#include <llvm/Target/TargetMachine.h>
#include <tessera/codegen/cpu_target.h>
#include <tessera/runtime/jit.h>

#include "tessera_apps/app.h"

using namespace tessera;

namespace {

double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string report_json(const CompileReport &r, double wall_ms) {
    std::string s = "{\"wall_ms\": " + std::to_string(wall_ms) + ", \"total_ms\": " + std::to_string(r.total_ms) +
                    ", \"cache\": \"" + r.cache + "\", \"phases\": {";
    for (size_t i = 0; i < r.phase_ms.size(); ++i)
        s += (i ? ", \"" : "\"") + r.phase_ms[i].first + "\": " + std::to_string(r.phase_ms[i].second);
    return s + "}}";
}

int run(int argc, char **argv) {
    std::string mode = argc > 1 ? argv[1] : "";
    if ((mode == "hit" || mode == "cold") && argc == 3) {
        CompileOptions o;
        o.cache = mode == "hit";
        auto app = apps::make_app(argv[2]);
        double t0 = now_ms();
        Callable first = app->pipeline().compile(Target::host(), o);
        double first_ms = now_ms() - t0;
        auto again = apps::make_app(argv[2]);
        t0 = now_ms();
        Callable second = again->pipeline().compile(Target::host(), o);
        double second_ms = now_ms() - t0;
        std::printf("{\"first\": %s, \"second\": %s}\n", report_json(first.report(), first_ms).c_str(),
                    report_json(second.report(), second_ms).c_str());
        return 0;
    }
    if (mode == "hit_marked" && argc == 3) {
        auto app = apps::make_app(argv[2]);
        getppid();  // the marks: the tracer follows every instruction from here to the next one
        Callable c = app->pipeline().compile();
        getppid();
        std::printf("{\"cache\": \"%s\"}\n", c.report().cache.c_str());
        return 0;
    }
    if (mode == "setup" && argc == 3) {
        double t0 = now_ms();
        codegen::CpuTarget cpu = codegen::host_cpu();
        double host_cpu_ms = now_ms() - t0;
        t0 = now_ms();
        const TargetInfo &info = codegen::host_target_info();
        double target_info_ms = now_ms() - t0;
        t0 = now_ms();
        runtime::jit_target_machine();
        double jit_ms = now_ms() - t0;
        auto app = apps::make_app(argv[2]);
        t0 = now_ms();
        Callable c = app->pipeline().compile();
        double hit_ms = now_ms() - t0;
        std::printf("{\"host_cpu_ms\": %.4f, \"target_info_ms\": %.4f, \"jit_ms\": %.4f, \"compile\": %s, \"cpu\": \"%s\", \"l2\": %lld}\n",
                    host_cpu_ms, target_info_ms, jit_ms, report_json(c.report(), hit_ms).c_str(), cpu.cpu.c_str(),
                    static_cast<long long>(info.l2_bytes));
        return 0;
    }
    if (mode == "run_overhead" && argc == 2) {
        Var x("x");
        InputBuffer<float> in("in", 1);
        Func f("f");
        f(x) = in(x) + 1.0f;
        CompileOptions o;
        o.cache = false;
        Callable c = Pipeline(f).compile(Target::host(), o);
        Buffer<float> input(1), output(1);
        input(0) = 1.0f;
        Bindings b;
        b.set(in, input);
        constexpr int kCalls = 20000;
        std::vector<double> per_call_us;
        for (int batch = 0; batch < 15; ++batch) {
            double t0 = now_ms();
            for (int i = 0; i < kCalls; ++i) c.run(b, {output});
            per_call_us.push_back((now_ms() - t0) * 1000.0 / kCalls);
        }
        if (output(0) != 2.0f) {
            std::fprintf(stderr, "cache_latency: wrong result %g\n", double(output(0)));
            return 1;
        }
        std::sort(per_call_us.begin(), per_call_us.end());
        std::printf("{\"run_us\": %.4f, \"min_us\": %.4f}\n", per_call_us[per_call_us.size() / 2], per_call_us[0]);
        return 0;
    }
    std::fprintf(stderr, "usage: cache_latency hit <app> | cold <app> | setup <app> | run_overhead | hit_marked <app>\n");
    return 2;
}

} // namespace

int main(int argc, char **argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception &e) {  // an unknown app, a compile error: said, not a crash
        std::fprintf(stderr, "cache_latency: %s\n", e.what());
        return 1;
    }
}
