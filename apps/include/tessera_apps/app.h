// The example pipelines of Tessera, each with an independent plain-C++ reference.
//
// An App owns a Pipeline built with the DSL, knows how to make random inputs for a problem
// size, and computes the same outputs with ordinary loops so that every execution path
// (interpreter, schedules, compiled code) can be checked against code that shares nothing with
// Tessera but the arithmetic order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <tessera/tessera.h>

// Marks the outer loop of a plain-C++ reference loop nest parallel when the apps are compiled
// with OpenMP, as bench/ compiles them for its naive OpenMP baseline (bench_app_naive); a
// plain loop everywhere else (the tests).
#ifdef _OPENMP
#define TESSERA_REFERENCE_PARALLEL_FOR _Pragma("omp parallel for schedule(static)")
#else
#define TESSERA_REFERENCE_PARALLEL_FOR
#endif

namespace tessera::apps {

class App {
public:
    explicit App(std::string name) : name_(std::move(name)) {}
    virtual ~App() = default;

    const std::string &name() const { return name_; }
    const Pipeline &pipeline() const { return pipeline_; }

    // What each problem size means, e.g. {"width", "height"}, and the defaults.
    virtual std::vector<std::string> size_names() const = 0;
    virtual std::vector<int> default_sizes() const = 0;
    // The smallest sizes the app accepts (camera_pipe's raw image needs a border); 1 by default.
    virtual std::vector<int> minimum_sizes() const { return std::vector<int>(default_sizes().size(), 1); }
    // The default sizes, each at most `limit` but not below the minimum: a quick problem.
    std::vector<int> small_sizes(int limit) const {
        std::vector<int> s = default_sizes(), lo = minimum_sizes();
        for (size_t i = 0; i < s.size(); ++i) s[i] = std::max(std::min(s[i], limit), lo[i]);
        return s;
    }
    // Creates random inputs of the given problem size and binds them (and the Params).
    virtual void prepare(const std::vector<int> &sizes, uint32_t seed) = 0;
    // Makes the app's inputs from a photograph (width x height x 3, values in [0, 1]) and binds
    // them; the problem size is the photograph's. False for apps that take no photograph.
    virtual bool prepare_photo(const Buffer<float> &rgb, uint32_t seed) { return false; }
    // Freshly allocated output buffers for the prepared problem, one per pipeline output.
    virtual std::vector<Buffer<void>> make_outputs() const = 0;
    // Computes the outputs with plain C++ loops.
    virtual void reference(const std::vector<Buffer<void>> &outputs) const = 0;
    // Largest relative difference accepted against the reference (0: bit-exact).
    virtual double tolerance() const { return 0.0; }
    // Bytes that must move at least (each input read once, each output written once).
    virtual double minimum_bytes() const { return 0.0; }

protected:
    std::string name_;
    Pipeline pipeline_;
};

// The names of every app, and one app by name (a UserError for an unknown name).
std::vector<std::string> app_names();
std::unique_ptr<App> make_app(const std::string &name);

struct Comparison {
    bool ok = true;
    double max_error = 0;  // largest relative error max(|a - b| / max(1, |b|))
    std::string first_mismatch;
};

// Compares two buffers of the same type and shape element by element.
Comparison compare(const Buffer<void> &got, const Buffer<void> &want, double tolerance);

// Fills a buffer with uniform random values: [lo, hi) for floats, [lo, hi] for integers.
void fill_random(const Buffer<void> &b, std::mt19937 &rng, double lo, double hi);

// Reads a binary PPM (P6, 8 or 16 bits) as a width x height x 3 float image in [0, 1]; a
// UserError naming the file when it cannot.
Buffer<float> read_ppm(const std::string &path);

// Reads element `c` of a buffer as a double, and writes one.
double element(const Buffer<void> &b, const std::vector<int64_t> &c);
void set_element(const Buffer<void> &b, const std::vector<int64_t> &c, double v);

} // namespace tessera::apps
