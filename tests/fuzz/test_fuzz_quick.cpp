// A quick bounded run of the random-pipeline differential fuzzer (tests/fuzz/pipeline_fuzzer.h).
// Longer runs: build/tests/tessera-fuzz --count 2000 --progress --isolate.
#include "../test_util.h"

#include "pipeline_fuzzer.h"

namespace {

// Runs seeds first .. first + count - 1 with small pipelines (on the emulated GPU when `gpu`);
// the number of failures, each described in `failures` with its reproduction.
int run_quick(uint64_t first, uint64_t count, bool gpu, std::string &failures, bool directives = false,
              double quota_scale = 1.0) {
    tessera::fuzz::FuzzSettings settings;
    settings.quota_scale = quota_scale;
    settings.max_funcs = 3;
    settings.max_output_points = 256;
    settings.max_dimensions = 2;
    settings.gpu = gpu;
    // Compile times are CPU time of all threads, and ctest runs two tests at once on CI's two
    // cores: seed 130 compiles in 3.1 s alone and took 5.1 s so (2026-12-01), over the 5 s that
    // tessera-fuzz flags. The bursts run with --slow-ms 12000; here 10 s, so that only a
    // compile-time pathology, not a loaded machine, fails the test.
    settings.slow_compile_ms = 10000;
    settings.directives = directives;
    int failed = 0;
    for (uint64_t seed = first; seed < first + count; ++seed) {
        tessera::fuzz::FuzzResult r = tessera::fuzz::run_one(seed, settings);
        if (!r.failed()) continue;
        ++failed;
        failures += "\n==== seed " + std::to_string(seed) + ": " + tessera::fuzz::outcome_name(r.outcome) + "\n" +
                    r.detail + "\n" + r.reproduction;
    }
    return failed;
}

} // namespace

TEST_CASE("random pipelines compute what the interpreter computes and reject what it rejects", "[fuzz]") {
    // Smaller pipelines than tessera-fuzz's defaults. Compiling dominates (50 to 500 ms a
    // pipeline): 200 pipelines take about half a minute on two cores.
    const uint64_t count = 200;
    std::string failures;
    int failed = run_quick(1, count, false, failures);
    INFO(failed << " of " << count
                << " pipelines failed (replay one with tessera-fuzz --max-funcs 3 --max-points 256 --max-dims 2 "
                   "--seed S --count 1 --verbose):"
                << failures);
    REQUIRE(failed == 0);
}

TEST_CASE("random pipelines compiled for the emulated GPU compute what the interpreter computes", "[fuzz][gpu]") {
    // The GPU mapping (kernels, threads, barriers, shared scratchpads) on random pipelines, run
    // in the emulator: 60 pipelines, other seeds than the host's.
    const uint64_t count = 60;
    std::string failures;
    int failed = run_quick(1001, count, true, failures);
    INFO(failed << " of " << count
                << " pipelines failed (replay one with tessera-fuzz --gpu --max-funcs 3 --max-points 256 --max-dims 2 "
                   "--seed S --count 1 --verbose):"
                << failures);
    REQUIRE(failed == 0);
}

TEST_CASE("random pipelines scheduled by random directives compute what the interpreter computes, or are rejected as illegal",
          "[fuzz][directives]") {
    // Splits, reorders, fuses, parallel, vector and unrolled loops on every stage: what compiles
    // must match the interpreter bit for bit; an illegal directive is rejected with its dependence.
    const uint64_t count = 80;
    std::string failures;
    int failed = run_quick(5001, count, false, failures, true);
    INFO(failed << " of " << count
                << " pipelines failed (replay one with tessera-fuzz --directives --max-funcs 3 --max-points 256 "
                   "--max-dims 2 --seed S --count 1 --verbose):"
                << failures);
    REQUIRE(failed == 0);
}

TEST_CASE("random pipelines whose isl analyses all run out of their quotas still compute what the interpreter computes",
          "[fuzz][quota]") {
    // Every isl operation quota at 1% (OperationQuota::scale_for_testing): the dependences, the
    // region bounds, the footprints, isl's scheduler and the AST take their fallbacks, isl stopped
    // partway in each. Nothing may crash or compute another result; a region given up on within
    // its budget is a rejection. (isl stopped partway once left sets shared with the model
    // broken: poly/src/model.cpp.)
    const uint64_t count = 40;
    std::string failures;
    int failed = run_quick(7001, count, false, failures, false, 0.01);
    INFO(failed << " of " << count
                << " pipelines failed (replay one with tessera-fuzz --quota-scale 0.01 --max-funcs 3 --max-points 256 "
                   "--max-dims 2 --seed S --count 1 --verbose):"
                << failures);
    REQUIRE(failed == 0);
}
