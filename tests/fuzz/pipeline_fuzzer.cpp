// The differential runner and the shrinker of pipeline_fuzzer.h; the generator is in
// pipeline_generator.cpp.
#include "pipeline_fuzzer.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <typeinfo>

#include <tessera/poly/isl_util.h>

#include "fuzz_internal.h"

namespace tessera::fuzz {
namespace {

using detail::Choices;
using detail::GeneratedPipeline;
using detail::join;
using detail::join_numbers;

// ---- Element access --------------------------------------------------------------------------

template <typename T>
void store_as(void *p, int64_t integer, double real) {
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, float16_t>) *static_cast<T *>(p) = T(real);
    else *static_cast<T *>(p) = T(integer);
}

// Stores `integer` (an integer type, wrapping) or `real` (a float type) at p.
void store(Type t, void *p, int64_t integer, double real) {
    switch (t.code) {
    case TypeCode::Int:
        if (t.bits == 8) return store_as<int8_t>(p, integer, real);
        if (t.bits == 16) return store_as<int16_t>(p, integer, real);
        if (t.bits == 32) return store_as<int32_t>(p, integer, real);
        return store_as<int64_t>(p, integer, real);
    case TypeCode::UInt:
        if (t.bits == 8) return store_as<uint8_t>(p, integer, real);
        if (t.bits == 16) return store_as<uint16_t>(p, integer, real);
        if (t.bits == 32) return store_as<uint32_t>(p, integer, real);
        return store_as<uint64_t>(p, integer, real);
    case TypeCode::Float:
        if (t.bits == 16) return store_as<float16_t>(p, integer, real);
        if (t.bits == 32) return store_as<float>(p, integer, real);
        return store_as<double>(p, integer, real);
    case TypeCode::BFloat: *static_cast<bfloat16_t *>(p) = bfloat16_t(real); return;
    }
}

// The element at p, as text.
std::string element_text(Type t, const void *p) {
    std::ostringstream s;
    s.precision(17);
    switch (t.code) {
    case TypeCode::Int:
        if (t.bits == 8) s << int(*static_cast<const int8_t *>(p));
        else if (t.bits == 16) s << *static_cast<const int16_t *>(p);
        else if (t.bits == 32) s << *static_cast<const int32_t *>(p);
        else s << *static_cast<const int64_t *>(p);
        break;
    case TypeCode::UInt:
        if (t.bits == 8) s << unsigned(*static_cast<const uint8_t *>(p));
        else if (t.bits == 16) s << *static_cast<const uint16_t *>(p);
        else if (t.bits == 32) s << *static_cast<const uint32_t *>(p);
        else s << *static_cast<const uint64_t *>(p);
        break;
    case TypeCode::Float:
        if (t.bits == 16) s << static_cast<const float16_t *>(p)->to_double();
        else if (t.bits == 32) s << *static_cast<const float *>(p);
        else s << *static_cast<const double *>(p);
        break;
    case TypeCode::BFloat: s << static_cast<const bfloat16_t *>(p)->to_double(); break;
    }
    return s.str();
}

bool is_nan(Type t, const void *p) {
    if (!t.is_float()) return false;
    if (t.code == TypeCode::BFloat) return std::isnan(static_cast<const bfloat16_t *>(p)->to_double());
    if (t.bits == 16) return std::isnan(static_cast<const float16_t *>(p)->to_double());
    if (t.bits == 32) return std::isnan(*static_cast<const float *>(p));
    return std::isnan(*static_cast<const double *>(p));
}

uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// ---- Running -----------------------------------------------------------------------------------

// What one way of running a pipeline threw.
struct Thrown {
    enum Kind { Nothing, User, Other } kind = Nothing;
    std::string message;
};

template <typename F>
Thrown attempt(F &&f) {
    try {
        f();
        return {};
    } catch (const UserError &e) {
        return {Thrown::User, std::string("UserError: ") + e.what()};
    } catch (const InternalError &e) {
        return {Thrown::Other, e.what()};
    } catch (const std::exception &e) {
        return {Thrown::Other, std::string("exception ") + typeid(e).name() + ": " + e.what()};
    } catch (...) {
        return {Thrown::Other, "an exception that is not a std::exception"};
    }
}

// Where two buffers of the same shape differ, as text; empty when they agree bit for bit (any NaN
// equals any NaN).
std::string difference(const Buffer<void> &got, const Buffer<void> &want) {
    Type t = got.type();
    size_t bytes = size_t(t.bytes());
    int64_t differing = 0;
    std::string first;
    got.for_each_coordinate([&](const std::vector<int64_t> &c) {
        const void *g = got.address_of(c), *w = want.address_of(c);
        if (std::memcmp(g, w, bytes) == 0 || (is_nan(t, g) && is_nan(t, w))) return;
        if (differing++ == 0) {
            first = "(" + join_numbers(c) + "): compiled " + element_text(t, g) + ", interpreted " + element_text(t, w);
        }
    });
    if (differing == 0) return "";
    return std::to_string(differing) + " of " + std::to_string(got.number_of_elements()) + " elements differ; first at " +
           first;
}

// The same failure, for the shrinker: the outcome and, for exceptions, the message without the
// numbers and names that change from pipeline to pipeline.
std::string failure_signature(const FuzzResult &r) {
    std::string s = outcome_name(r.outcome);
    if (r.outcome != Outcome::Exception) return s;
    std::string message = r.detail.substr(0, 80);
    message.erase(std::remove_if(message.begin(), message.end(), [](char c) { return std::isdigit(c) != 0; }),
                  message.end());
    return s + ": " + message;
}

FuzzResult run(uint64_t seed, Choices &choices, const FuzzSettings &settings) {
    FuzzResult r;
    r.seed = seed;
    // (Back to the quotas as given afterwards: other tests run in this process.)
    struct ScaledQuotas {
        explicit ScaledQuotas(double factor) { poly::OperationQuota::scale_for_testing(factor); }
        ~ScaledQuotas() { poly::OperationQuota::scale_for_testing(1.0); }
    } scaled(settings.quota_scale);
    GeneratedPipeline g;
    Thrown built = attempt([&] { g = detail::generate_pipeline(choices, settings, r.reproduction); });
    if (built.kind != Thrown::Nothing) {
        r.outcome = Outcome::Exception;
        r.detail = "building the pipeline threw " + built.message;
        return r;
    }
    std::vector<Buffer<void>> got, want;
    for (size_t k = 0; k < g.outputs.size(); ++k) {
        got.push_back(g.outputs[k].allocate("out" + std::to_string(k)));
        want.push_back(g.outputs[k].allocate("want" + std::to_string(k)));
        // An element the compiled code never writes then differs from the interpreter's.
        std::memset(got.back().raw_data(), 0xa5, size_t(got.back().number_of_elements() * got.back().type().bytes()));
    }
    Thrown interpreted = attempt([&] { interpret(g.pipeline, want); });
    // Compile time is the process's CPU time (every thread's): a run beside other work (a build,
    // a second fuzzer on a 2-core machine) made wall-clock compile times 3-10 times longer.
    auto cpu_ms = [] {
        timespec t{};
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
    };
    const double start = cpu_ms();
    auto elapsed_ms = [&] { return cpu_ms() - start; };
    bool compiled_once = false;
    std::string phases;  // compile time by phase
    Thrown compiled = attempt([&] {
        Callable callable = g.pipeline.compile(g.target, g.options);
        r.compile_ms = elapsed_ms();
        compiled_once = true;
        for (const auto &[phase, ms] : callable.report().phase_ms)
            phases += (phases.empty() ? "" : ", ") + phase + " " + std::to_string(int64_t(ms)) + " ms";
        callable.realize(got);
    });
    if (!compiled_once) r.compile_ms = elapsed_ms();
    if (interpreted.kind == Thrown::Other || compiled.kind == Thrown::Other) {
        r.outcome = Outcome::Exception;
        if (interpreted.kind == Thrown::Other) r.detail = "the interpreter threw " + interpreted.message;
        else r.detail = std::string(compiled_once ? "running" : "compiling") + " threw " + compiled.message;
        return r;
    }
    // A random directive that would compute a wrong result is rejected when compiling, with the
    // dependence it violates (or, where isl cannot prove it within its quota, as unchecked), and
    // a compute_at or store_at whose Funcs do not qualify is refused: a rejection, as a shared
    // UserError is.
    if (settings.directives && !compiled_once && compiled.kind == Thrown::User && interpreted.kind == Thrown::Nothing &&
        (compiled.message.find("is illegal") != std::string::npos ||
         compiled.message.find("Cannot check the schedule the directives describe") != std::string::npos ||
         compiled.message.find(".compute_at(") != std::string::npos || compiled.message.find(".store_at(") != std::string::npos ||
         compiled.message.find(".compute_inline()") != std::string::npos)) {
        r.user_error = true;
        r.detail = compiled.message;
        return r;
    }
    if (settings.quota_scale < 1 && compiled.kind == Thrown::User && interpreted.kind == Thrown::Nothing &&
        compiled.message.find("within its operation budget") != std::string::npos) {
        r.user_error = true;
        r.detail = compiled.message;
        return r;
    }
    if (interpreted.kind != compiled.kind) {
        r.outcome = Outcome::ErrorMismatch;
        if (interpreted.kind == Thrown::User)
            r.detail = "the interpreter threw " + interpreted.message + "\nbut the compiled code ran";
        else
            r.detail = "the compiled code threw " + compiled.message + "\nbut the interpreter ran";
        return r;
    }
    if (interpreted.kind == Thrown::User) {
        r.user_error = true;
        r.detail = interpreted.message;
    } else {
        for (size_t k = 0; k < got.size(); ++k) {
            std::string d = difference(got[k], want[k]);
            if (d.empty()) continue;
            r.outcome = Outcome::Mismatch;
            r.detail += (r.detail.empty() ? "" : "\n") + std::string("output ") + g.outputs[k].func + ": " + d;
        }
        if (r.outcome != Outcome::Ok) return r;
    }
    if (r.compile_ms > settings.slow_compile_ms) {
        r.outcome = Outcome::Slow;
        r.detail = "compiling took " + std::to_string(int64_t(r.compile_ms)) + " ms of CPU (wall clock: " + phases + ")";
    }
    return r;
}

// Generates a pipeline without running it.
std::string reproduction_of(Choices &choices, const FuzzSettings &settings) {
    std::string reproduction;
    try {
        detail::generate_pipeline(choices, settings, reproduction);
    } catch (const std::exception &e) {
        return reproduction + "// building the pipeline threw: " + e.what() + "\n";
    }
    return reproduction;
}

} // namespace

const char *outcome_name(Outcome outcome) {
    switch (outcome) {
    case Outcome::Ok: return "ok";
    case Outcome::Mismatch: return "mismatch";
    case Outcome::ErrorMismatch: return "error mismatch";
    case Outcome::Exception: return "exception";
    case Outcome::Slow: return "slow compile";
    case Outcome::Crash: return "crash";
    case Outcome::Hang: return "hang";
    }
    return "?";
}

FuzzResult run_one(uint64_t seed, const FuzzSettings &settings) {
    Choices choices(seed);
    return run(seed, choices, settings);
}

std::string describe(uint64_t seed, const FuzzSettings &settings) {
    Choices choices(seed);
    return reproduction_of(choices, settings);
}

std::string describe_draws(const std::vector<uint64_t> &draws, const FuzzSettings &settings) {
    Choices choices(draws);
    return reproduction_of(choices, settings);
}

std::vector<uint64_t> draws_of(uint64_t seed, const FuzzSettings &settings) {
    Choices choices(seed);
    std::string reproduction;
    try {
        detail::generate_pipeline(choices, settings, reproduction);
    } catch (const std::exception &) {
        // The draws up to the failing definition are still the pipeline's.
    }
    return choices.record();
}

FuzzResult replay(uint64_t seed, const std::vector<uint64_t> &draws, const FuzzSettings &settings,
                  std::vector<uint64_t> &made) {
    Choices choices(draws);
    FuzzResult r = run(seed, choices, settings);
    made = choices.record();
    return r;
}

FuzzResult shrink(uint64_t seed, const FuzzResult &failure, const FuzzSettings &settings, int max_attempts,
                  const Runner &run, const std::function<void(int)> &on_attempt) {
    FuzzResult best = failure;
    if (!failure.failed()) return best;
    std::vector<uint64_t> draws = draws_of(seed, settings);
    const std::string signature = failure_signature(failure);
    int attempts = 0;
    // Runs `candidate`; keeps it (as the draws it made) when it still fails the same way.
    auto keeps_failing = [&](const std::vector<uint64_t> &candidate) {
        if (attempts >= max_attempts) return false;
        ++attempts;
        std::vector<uint64_t> made;
        FuzzResult r = run ? run(candidate, made) : replay(seed, candidate, settings, made);
        if (on_attempt) on_attempt(attempts);
        if (!r.failed() || failure_signature(r) != signature) return false;
        best = r;
        draws = made;
        return true;
    };
    bool progress = true;
    while (progress && attempts < max_attempts) {
        progress = false;
        // Simplest first: each draw replaced by 0 (the simplest alternative), else halved.
        for (size_t i = 0; i < draws.size() && attempts < max_attempts; ++i) {
            if (draws[i] == 0) continue;
            std::vector<uint64_t> candidate = draws;
            candidate[i] = 0;
            if (keeps_failing(candidate)) {
                progress = true;
                continue;
            }
            if (draws[i] > 1) {
                candidate[i] = draws[i] / 2;
                progress |= keeps_failing(candidate);
            }
        }
        // Then runs of draws deleted, which drops whole parts of the pipeline.
        for (size_t chunk : {32, 8, 2})
            for (size_t i = 0; i + chunk <= draws.size() && attempts < max_attempts;) {
                std::vector<uint64_t> candidate = draws;
                candidate.erase(candidate.begin() + std::ptrdiff_t(i), candidate.begin() + std::ptrdiff_t(i + chunk));
                if (keeps_failing(candidate)) progress = true;
                else i += chunk;
            }
    }
    return best;
}

void fill_buffer(const Buffer<void> &buffer, uint64_t salt) {
    Type t = buffer.type();
    uint64_t i = 0;
    buffer.for_each_coordinate([&](const std::vector<int64_t> &c) {
        uint64_t h = splitmix64(salt * 0x2545f4914f6cdd1dull + i++);
        int64_t integer = t.is_uint() ? int64_t(h % 33) : int64_t(h % 33) - 16;
        if ((h >> 40) % 32 == 0 && !t.is_float()) {
            // An extreme of the type, for wrap-around in arithmetic and clamped coordinates. -1
            // wraps to the largest unsigned value.
            bool high = (h >> 50) % 2;
            int64_t largest_signed = std::numeric_limits<int64_t>::max() >> (64 - t.bits);
            if (t.is_uint()) integer = high ? -1 : 0;
            else integer = high ? largest_signed : -largest_signed - 1;
        }
        double real = double(int64_t(h % 65) - 32) / 4.0;
        store(t, buffer.address_of(c), integer, real);
    });
}

} // namespace tessera::fuzz
