// The executable of one app (TESSERA_APP_NAME): builds its pipeline, runs it on random inputs
// through Pipeline::realize, and checks the result against the app's plain C++ loops.
//
//   <app> [--size N ...] [--seed S] [--schedule]
//
// --schedule prints the schedule JSON the pipeline runs with and exits.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "tessera_apps/app.h"

using namespace tessera;

int main(int argc, char **argv) {
    try {
        auto app = apps::make_app(TESSERA_APP_NAME);
        std::vector<int> sizes = app->default_sizes();
        uint32_t seed = 1;
        for (int i = 1; i < argc; ++i) {
            if (!std::strcmp(argv[i], "--size")) {
                sizes.clear();
                while (i + 1 < argc && argv[i + 1][0] != '-') sizes.push_back(std::atoi(argv[++i]));
            } else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) {
                seed = uint32_t(std::atoi(argv[++i]));
            } else if (!std::strcmp(argv[i], "--schedule")) {
                std::printf("%s\n", app->pipeline().schedule_json().c_str());
                return 0;
            } else {
                std::fprintf(stderr, "usage: %s [--size N ...] [--seed S] [--schedule]\n", argv[0]);
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
        std::printf("app: %s  (", app->name().c_str());
        for (size_t i = 0; i < sizes.size(); ++i) std::printf("%s%s=%d", i ? ", " : "", names[i].c_str(), sizes[i]);
        std::printf(")\n");

        app->prepare(sizes, seed);
        std::vector<Buffer<void>> outputs = app->make_outputs();
        auto t0 = std::chrono::steady_clock::now();
        app->pipeline().realize(outputs);
        auto t1 = std::chrono::steady_clock::now();
        std::printf("realize: %.1f ms\n", std::chrono::duration<double, std::milli>(t1 - t0).count());

        std::vector<Buffer<void>> expected = app->make_outputs();
        app->reference(expected);
        bool ok = true;
        for (size_t i = 0; i < outputs.size(); ++i) {
            apps::Comparison c = apps::compare(outputs[i], expected[i], app->tolerance());
            std::printf("check against plain C++ loops, output %s: %s (max relative error %g)%s%s\n",
                        app->pipeline().outputs()[i].name().c_str(), c.ok ? "OK" : "MISMATCH", c.max_error,
                        c.ok ? "" : ", first mismatch ", c.first_mismatch.c_str());
            ok &= c.ok;
        }
        return ok ? 0 : 1;
    } catch (const Error &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
