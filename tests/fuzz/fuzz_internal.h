// Internal to the fuzzer (pipeline_generator.cpp and pipeline_fuzzer.cpp): the stream of
// random choices, the generated pipeline, and small text helpers.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "pipeline_fuzzer.h"

namespace tessera::fuzz::detail {

// Every decision of the generator is one draw. A fresh run draws from a mt19937_64 seeded with
// the seed and records the draws; the shrinker replays an edited record, in which a draw past the
// end is 0. Draw 0 always picks the simplest alternative (no optional feature, the first kind,
// the smallest count), so that replacing draws by 0 simplifies the pipeline.
class Choices {
public:
    explicit Choices(uint64_t seed) : rng_(seed) {}
    explicit Choices(std::vector<uint64_t> replay) : replay_(std::move(replay)), replaying_(true) {}

    // A value in [0, n).
    int below(int n) {
        uint64_t v = 0;
        if (!replaying_) v = rng_() % uint64_t(n);
        else if (record_.size() < replay_.size()) v = replay_[record_.size()] % uint64_t(n);
        record_.push_back(v);
        return int(v);
    }
    // A value in [lo, hi]; draw 0 gives lo.
    int range(int lo, int hi) { return lo + below(hi - lo + 1); }
    // True with probability percent/100; draw 0 gives false.
    bool percent(int percent) { return below(100) >= 100 - percent; }
    // An index into `weights`, with probability proportional to its weight.
    int weighted(std::initializer_list<int> weights) {
        int total = 0;
        for (int w : weights) total += w;
        int v = below(total), i = 0;
        for (int w : weights) {
            if (v < w) return i;
            v -= w;
            ++i;
        }
        return i - 1;
    }
    template <typename T>
    const T &one_of(const std::vector<T> &options) {
        return options[size_t(below(int(options.size())))];
    }
    const std::vector<uint64_t> &record() const { return record_; }

private:
    std::mt19937_64 rng_;
    std::vector<uint64_t> replay_;
    bool replaying_ = false;
    std::vector<uint64_t> record_;
};

// ---- Text ----------------------------------------------------------------------------------------

inline std::string join(const std::vector<std::string> &parts, const std::string &separator = ", ") {
    std::string s;
    for (size_t i = 0; i < parts.size(); ++i) s += (i ? separator : "") + parts[i];
    return s;
}

template <typename T>
inline std::string join_numbers(const std::vector<T> &numbers) {
    std::vector<std::string> parts;
    for (T n : numbers) parts.push_back(std::to_string(n));
    return join(parts);
}

// ---- The generated pipeline ------------------------------------------------------------------------

struct OutputShape {
    Type type;
    std::string func;
    std::vector<int> extents;
    std::vector<int64_t> mins;

    Buffer<void> allocate(const std::string &name) const {
        Buffer<void> b(type, extents, name);
        b.set_min(mins);
        return b;
    }
};

struct GeneratedPipeline {
    Pipeline pipeline;
    std::vector<OutputShape> outputs;
    CompileOptions options;
    Target target;  // the host, or with --gpu the emulated GPU (with or without the shared-memory opt-in)
};

// Generates the pipeline that `choices` draw. `reproduction` receives the C++ source that rebuilds
// it, even when generating throws (then the statements written so far); the exception propagates.
GeneratedPipeline generate_pipeline(Choices &choices, const FuzzSettings &settings, std::string &reproduction);

} // namespace tessera::fuzz::detail
