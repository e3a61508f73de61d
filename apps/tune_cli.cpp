// tessera-tune: searches the automatic scheduler's knobs (fusion, its thresholds and tile sizes)
// for a named app, times each variant, writes the fastest schedule as JSON (loadable with
// Pipeline::set_schedule_json), says how far the automatic schedule is from it, and lists every
// variant's time.
//
//   tessera-tune <app> [--size N ...] [--budget SECONDS] [--runs R] [--threads T] [--no-tiles] [--output FILE]
//
// --no-tiles: fusion and its thresholds only, every variant with the tile-size model's tiles.
// Every variant's outputs are checked against the app's plain C++ loops; a variant that does not
// match is an error (the tool exits 1), never a candidate. The search stops when the time budget
// is spent (default 120 s), with the best variant so far.
#include <tessera/tessera.h>

#include "tessera_apps/app.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

using namespace tessera;

namespace {

struct Variant {
    std::string fusion;
    std::vector<int> tiles;  // dimension 0 first; empty: the tile-size model's
    // Smart fusion's thresholds (CompileOptions::max_recompute, cache_bytes): unset, the
    // defaults; the cache as a multiple of the default's (the host's L2 cache).
    std::optional<double> max_recompute;
    std::optional<double> cache_scale;
    std::string describe() const {
        std::string s = "fusion=" + fusion + " tiles=";
        if (tiles.empty()) s += "automatic";
        for (size_t i = 0; i < tiles.size(); ++i) s += (i ? "x" : "") + std::to_string(tiles[i]);
        char text[64];
        if (max_recompute) {
            std::snprintf(text, sizeof text, " max_recompute=%g", *max_recompute);
            s += text;
        }
        if (cache_scale) {
            std::snprintf(text, sizeof text, " cache_bytes=%gx", *cache_scale);
            s += text;
        }
        return s;
    }
};

// The integer after "key": in a schedule's JSON (its first occurrence); 0 when there is none.
int64_t json_integer(const std::string &json, const std::string &key) {
    size_t at = json.find("\"" + key + "\":");
    return at == std::string::npos ? 0 : std::atoll(json.c_str() + at + key.size() + 3);
}

// The automatic schedule first, then fusion max with automatic tiles, then smart fusion's
// thresholds one at a time (the recomputation allowed halved and doubled, the cache halved,
// doubled and quadrupled), then tile shapes for both fusions. Overlapped groups of 2-D and 3-D
// outputs take (width, height[, 1]); 1-D ones a width; affine bands (reductions) square tiles.
std::vector<Variant> search_space(const apps::App &app) {
    std::vector<Variant> v{{"smart", {}, {}, {}}, {"max", {}, {}, {}}};
    for (double r : {0.2, 0.8}) v.push_back({"smart", {}, r, {}});
    for (double c : {0.5, 2.0, 4.0}) v.push_back({"smart", {}, {}, c});
    int dims = app.pipeline().outputs().front().dimensions();
    std::vector<std::vector<int>> shapes;
    bool affine = false;
    for (const Func &f : app.pipeline().outputs()) affine = affine || !f.contents()->updates.empty();
    if (affine) {
        for (int t : {16, 32, 64, 128}) shapes.push_back(std::vector<int>(size_t(std::max(dims, 1)), t));
    } else if (dims <= 1) {
        for (int w : {1024, 4096, 16384}) shapes.push_back({w});
    } else {
        for (int w : {256, 512, 1024, 2048, 4096})
            for (int h : {8, 32, 128}) {
                std::vector<int> t{w, h};
                if (dims >= 3) t.push_back(1);
                shapes.push_back(t);
            }
    }
    for (const char *fusion : {"smart", "max"})
        for (const auto &t : shapes) v.push_back({fusion, t, {}, {}});
    return v;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// "[#######.....] 7/32 ... ETA 41 s" on one line of stderr, rewritten in place.
void progress(size_t done, size_t total, double elapsed, double budget, const std::string &what) {
    const int width = 24;
    int filled = total ? int(width * done / total) : width;
    double eta = done ? elapsed / double(done) * double(total - done) : 0;
    eta = std::min(eta, std::max(0.0, budget - elapsed));
    std::fprintf(stderr, "\r[%s%s] %zu/%zu  %-44s ETA %4.0f s", std::string(size_t(filled), '#').c_str(),
                 std::string(size_t(width - filled), '.').c_str(), done, total, what.c_str(), eta);
    std::fflush(stderr);
}

} // namespace

int main(int argc, char **argv) {
    try {
        if (argc < 2) {
            std::fprintf(stderr, "usage: tessera-tune <app> [--size N ...] [--budget SECONDS] [--runs R] [--threads T] [--no-tiles] [--output FILE]\n");
            return 2;
        }
        auto app = apps::make_app(argv[1]);
        std::vector<int> sizes = app->default_sizes();
        double budget = 120;
        int runs = 7, threads = 0;
        std::string output = app->name() + ".tuned.json";
        bool sized = false, no_tiles = false;
        for (int i = 2; i < argc; ++i) {
            if (!std::strcmp(argv[i], "--size")) {
                if (!sized) sizes.clear();
                sized = true;
                while (i + 1 < argc && argv[i + 1][0] != '-') sizes.push_back(std::atoi(argv[++i]));
            } else if (!std::strcmp(argv[i], "--budget") && i + 1 < argc) {
                budget = std::atof(argv[++i]);
            } else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) {
                runs = std::max(1, std::atoi(argv[++i]));
            } else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
                threads = std::atoi(argv[++i]);
            } else if (!std::strcmp(argv[i], "--no-tiles")) {
                no_tiles = true;
            } else if (!std::strcmp(argv[i], "--output") && i + 1 < argc) {
                output = argv[++i];
            } else {
                std::fprintf(stderr, "tessera-tune: unknown option %s\n", argv[i]);
                return 2;
            }
        }
        if (sizes.size() != app->size_names().size())
            user_error(app->name(), " takes ", app->size_names().size(), " sizes (--size); got ", sizes.size(), ".");
        app->prepare(sizes, 1);
        std::vector<Buffer<void>> expected = app->make_outputs();
        app->reference(expected);

        std::vector<Variant> variants = search_space(*app);
        if (no_tiles)  // fusion and its thresholds only, tiles the tile-size model's
            variants.erase(std::remove_if(variants.begin(), variants.end(), [](const Variant &v) { return !v.tiles.empty(); }), variants.end());
        auto t0 = std::chrono::steady_clock::now();
        double auto_ms = 0, best_ms = 0;
        size_t best = 0, tried = 0;
        std::vector<std::pair<double, size_t>> timed;  // (ms, variant), every variant run
        std::string best_json;
        int64_t default_cache = 0;  // the automatic schedule's cache_bytes
        for (size_t k = 0; k < variants.size(); ++k) {
            if (k > 0 && seconds_since(t0) > budget) break;
            if (variants[k].cache_scale && default_cache <= 0) continue;  // (no default to scale)
            progress(k, variants.size(), seconds_since(t0), budget, variants[k].describe());
            CompileOptions o;
            o.threads = threads;
            o.fusion = variants[k].fusion;
            o.tile_sizes = variants[k].tiles;
            o.max_recompute = variants[k].max_recompute;
            if (variants[k].cache_scale) o.cache_bytes = int64_t(*variants[k].cache_scale * double(default_cache));
            Callable c = app->pipeline().compile(Target::host(), o);
            std::vector<Buffer<void>> out = app->make_outputs();
            c.realize(out);  // (warm-up, and the outputs checked below)
            for (size_t i = 0; i < out.size(); ++i) {
                apps::Comparison cmp = apps::compare(out[i], expected[i], app->tolerance());
                if (!cmp.ok) {
                    std::fprintf(stderr, "\ntessera-tune: %s with %s does not match its plain C++ loops: %s\n", app->name().c_str(),
                                 variants[k].describe().c_str(), cmp.first_mismatch.c_str());
                    return 1;
                }
            }
            std::vector<double> times;
            for (int r = 0; r < runs; ++r) {
                auto s = std::chrono::steady_clock::now();
                c.realize(out);
                times.push_back(seconds_since(s) * 1e3);
            }
            std::sort(times.begin(), times.end());
            double ms = times[times.size() / 2];
            if (k == 0) {
                auto_ms = ms;
                default_cache = json_integer(c.compiler_ir("schedule"), "cache_bytes");
            }
            timed.push_back({ms, k});
            if (k == 0 || ms < best_ms) {
                best_ms = ms;
                best = k;
                best_json = c.compiler_ir("schedule");
            }
            ++tried;
        }
        progress(tried, variants.size(), seconds_since(t0), budget, "done");
        std::fprintf(stderr, "\n");

        // The written schedule must load and give the same results.
        {
            std::ofstream f(output);
            f << best_json;
            if (!f) user_error("tessera-tune: cannot write ", output, ".");
        }
        app->pipeline().set_schedule_json(best_json);
        Callable loaded = app->pipeline().compile(Target::host());
        std::vector<Buffer<void>> out = app->make_outputs();
        loaded.realize(out);
        app->pipeline().clear_schedule_json();
        for (size_t i = 0; i < out.size(); ++i)
            if (!apps::compare(out[i], expected[i], app->tolerance()).ok) {
                std::fprintf(stderr, "tessera-tune: the schedule written to %s does not reproduce the results\n", output.c_str());
                return 1;
            }

        std::printf("app: %s, %zu of %zu variants in %.1f s (budget %.0f s), median of %d runs each\n", app->name().c_str(), tried,
                    variants.size(), seconds_since(t0), budget, runs);
        std::printf("automatic: %.3f ms\n", auto_ms);
        std::printf("tuned:     %.3f ms (%s)\n", best_ms, variants[best].describe().c_str());
        double gap = auto_ms / best_ms - 1;
        std::printf("the automatic schedule is %.1f%% slower than the tuned one%s\n", gap * 100,
                    gap <= 0.10 ? " (within 10%)" : " (more than 10%: the cost model misses this app)");
        std::printf("wrote %s (load it with Pipeline::set_schedule_json)\n", output.c_str());
        std::sort(timed.begin(), timed.end());
        std::printf("every variant, fastest first:\n");
        for (const auto &[ms, k] : timed) std::printf("  %9.3f ms  %s\n", ms, variants[k].describe().c_str());
        return 0;
    } catch (const Error &e) {
        std::fprintf(stderr, "\nerror: %s\n", e.what());
        return 1;
    }
}
