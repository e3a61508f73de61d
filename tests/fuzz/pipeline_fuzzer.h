// A differential fuzzer for whole pipelines: random DAGs of Funcs over several types (with
// casts between them), boundary conditions, inline reductions, RDom updates with where clauses
// (empty and triangular ones included), scans, histograms and two-output pipelines, realized over
// random output regions (sizes around tile boundaries, shifted mins, a few at the ends of int32)
// with random CompileOptions.
// The compiled code must compute exactly what the reference interpreter computes (floats bit for
// bit, NaN equal to NaN), and reject a pipeline with a UserError exactly when the interpreter does.
//
// Every pipeline is a pure function of its seed and FuzzSettings; a failure comes with C++ source
// that rebuilds and checks that pipeline (it uses fill_buffer below for the inputs' values).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <tessera/tessera.h>

namespace tessera::fuzz {

enum class Outcome {
    Ok,             // the same values, or a UserError on both paths
    Mismatch,       // the compiled values differ from the interpreter's
    ErrorMismatch,  // one path threw a UserError and the other did not
    Exception,      // an InternalError or another exception, while building, compiling or running
    Slow,           // the values agree, but compiling took longer than FuzzSettings::slow_compile_ms
    // Reported only by a runner that isolates pipelines in child processes (tessera-fuzz --isolate):
    Crash,          // the process died (a signal, e.g. SIGSEGV)
    Hang,           // no result within the runner's time limit
};

const char *outcome_name(Outcome outcome);

struct FuzzSettings {
    double slow_compile_ms = 5000;  // a compilation taking more CPU time than this is a failure
    int max_funcs = 6;              // named Funcs per pipeline (inline reductions and boundary conditions add more)
    int max_output_points = 2048;   // elements per output buffer
    int max_dimensions = 3;         // of inputs, Funcs and RDoms (1 to 3)
    bool gpu = false;               // compile for the emulated GPU (Target::cuda(80).emulated(), 30% of seeds with the shared-memory opt-in), not the host
    // With gpu: run on the real GPU of this compute capability (Target::cuda(device_sm), through
    // the CUDA driver) instead of the emulator; exp, log and sin are then replaced by sqrt, since
    // libdevice's may differ from the host's in the last bit.
    int device_sm = 0;
    // Give each stage random scheduling directives (stage.h): the pipeline is then scheduled from
    // them, and a compile that rejects one as illegal counts as a rejection, not a failure.
    bool directives = false;
    // Every isl operation quota times this (OperationQuota::scale_for_testing; 1: as given):
    // below 1, analyses take their fallbacks, isl stopped partway. A compile that then gives up
    // on a region "within its operation budget" counts as a rejection, not a failure.
    double quota_scale = 1.0;
};

struct FuzzResult {
    uint64_t seed = 0;
    Outcome outcome = Outcome::Ok;
    bool user_error = false;   // both paths rejected the pipeline with a UserError (an Ok outcome)
    std::string detail;        // what went wrong; for a shared UserError, its message
    std::string reproduction;  // C++ source that rebuilds the pipeline, realizes it both ways and compares
    double compile_ms = 0;     // CPU time of the process while compiling (every thread's)
    bool failed() const { return outcome != Outcome::Ok; }
};

// Generates the pipeline of `seed`, compiles and interprets it, and compares the two.
FuzzResult run_one(uint64_t seed, const FuzzSettings &settings = {});

// The reproduction of the pipeline of `seed`, without running it.
std::string describe(uint64_t seed, const FuzzSettings &settings = {});

// ---- Replaying and shrinking
// Every random decision of the generator is one draw: an integer below the number of
// alternatives, where 0 always picks the simplest one. A pipeline can be generated again from a
// list of draws: a draw past its end is 0, and each is taken modulo its number of alternatives.

// The draws that generate the pipeline of `seed`.
std::vector<uint64_t> draws_of(uint64_t seed, const FuzzSettings &settings = {});

// Runs the pipeline that `draws` generate and stores the draws actually made in `made`. `seed`
// only labels the result.
FuzzResult replay(uint64_t seed, const std::vector<uint64_t> &draws, const FuzzSettings &settings,
                  std::vector<uint64_t> &made);

// The reproduction of the pipeline that `draws` generate, without running it.
std::string describe_draws(const std::vector<uint64_t> &draws, const FuzzSettings &settings = {});

// How the shrinker runs a candidate: as replay() does, in this process or in another one.
using Runner = std::function<FuzzResult(const std::vector<uint64_t> &draws, std::vector<uint64_t> &made)>;

// Looks for a smaller pipeline that fails like `failure`, the result of `seed` (the same outcome
// and, for exceptions, the same message up to names and numbers), by replacing draws with simpler
// ones and deleting runs of draws; runs at most `max_attempts` candidates with `run` (replay() in
// this process when empty). Returns the smallest failure found, `failure` when none is.
// `on_attempt`, when given, is called after each attempt with the number of attempts so far.
FuzzResult shrink(uint64_t seed, const FuzzResult &failure, const FuzzSettings &settings, int max_attempts,
                  const Runner &run = {}, const std::function<void(int)> &on_attempt = {});

// Fills `buffer` with small values determined by `salt` and the coordinates: integers in
// [-16, 16] ([0, 32] when unsigned) with an occasional extreme value of the type, floats in
// multiples of 1/4 within [-8, 8].
void fill_buffer(const Buffer<void> &buffer, uint64_t salt);

} // namespace tessera::fuzz
