// A process of the compile cache's race test (test_compile_cache.cpp): waits until the wall-clock
// time given (nanoseconds since the epoch), so that every worker compiles at the same moment,
// compiles the test blur through the cache, checks its result against plain loops, and prints
// the report's cache status. Exit status 0: the result was right.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "cache_test_pipeline.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: cache_race_worker <start time, ns since the epoch>\n");
        return 2;
    }
    long long start = std::atoll(argv[1]);
    while (std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count() < start)
        std::this_thread::yield();
    try {
        cache_test::Blur blur;
        tessera::Callable c = blur.pipeline.compile();
        tessera::Buffer<float> in = cache_test::random_input(61, 37, 7);
        tessera::Buffer<float> out(61, 37);
        c.run(tessera::Bindings().set(blur.input, in), {out});
        double err = cache_test::max_error(in, out, 3.0f);
        std::printf("%s %g\n", c.report().cache.c_str(), err);
        return err < 1e-5 ? 0 : 1;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "cache_race_worker: %s\n", e.what());
        return 1;
    }
}
