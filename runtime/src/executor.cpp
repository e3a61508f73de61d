#include "tessera/runtime/executor.h"

#include <atomic>
#include <map>

#include <tessera/pipeline_text.h>
#include <tessera/poly/schedule_json.h>
#include <tessera/poly/scheduler.h>

#include "tessera/runtime/compile_cache.h"
#include "tessera/runtime/compiled_pipeline.h"
#include "tessera/runtime/log.h"

namespace tessera::runtime {
namespace {

// What a pipeline caches: valid for one definitions epoch and one imported schedule. `mutex`
// guards `program` and `compiled`, so pipelines compile independently of each other.
struct ExecutorState {
    uint64_t epoch = 0;
    std::string override_json;
    std::mutex mutex;
    std::shared_ptr<const poly::Program> program;
    std::shared_ptr<const CallableImpl> compiled;

    // The scheduled program; the caller holds `mutex`.
    const std::shared_ptr<const poly::Program> &program_of(const Pipeline &p) {
        if (!program) {
            CompileReport ignored;
            program = program_for(p, CompileOptions{}, ignored);
        }
        return program;
    }
};

std::shared_ptr<ExecutorState> state_of(const Pipeline &p) {
    PipelineContents &c = *p.contents();
    std::lock_guard<std::mutex> lock(c.mutex);
    auto s = std::static_pointer_cast<ExecutorState>(c.executor_state);
    uint64_t epoch = detail::definitions_epoch();
    if (!s || s->epoch != epoch || s->override_json != c.schedule_override) {
        s = std::make_shared<ExecutorState>();
        s->epoch = epoch;
        s->override_json = c.schedule_override;
        c.executor_state = s;
    }
    return s;
}

// The code realize() runs, compiled once with the default options: the program schedule_json()
// shows when that was asked for first, else through the persistent compile cache (a hit skips
// scheduling; a miss schedules the same program, the scheduler being deterministic, and
// schedule_json() schedules it again only if asked).
std::shared_ptr<const CallableImpl> compiled(const Pipeline &p) {
    auto s = state_of(p);
    std::lock_guard<std::mutex> lock(s->mutex);
    if (!s->compiled)
        s->compiled = s->program ? compile_program_for_host(p, s->program, CompileOptions{})
                                 : compile_for_host(p, Target::host(), CompileOptions{});
    return s->compiled;
}

void realize_compiled(const Pipeline &p, const std::vector<Buffer<void>> &outputs) { compiled(p)->run(nullptr, outputs); }

std::string to_json(const Pipeline &p) {
    std::shared_ptr<const poly::Program> program = scheduled_program(p);
    // The program is the pipeline's cached one, which other threads print too. Its options
    // are those it was scheduled with (the host's cache size among them), not the defaults.
    std::lock_guard<std::mutex> lock(program->model->isl_mutex);
    return poly::schedule_to_json(*program);
}

void check(const Pipeline &p, const std::string &json) { poly::schedule_from_json(poly::build_model(p, json), json); }

// What a Pipeline was last compiled with, to say why it is compiled again (TESSERA_LOG=recompile).
struct LastCompile {
    std::weak_ptr<PipelineContents> pipeline;
    std::string text;  // pipeline_text: the definitions and an imported schedule
    Target target;
    CompileOptions options;
};

std::mutex g_last_mutex;
std::map<const PipelineContents *, LastCompile> g_last;
std::atomic<uint64_t> g_compiles{0}, g_recompiles{0};

std::string target_text(const Target &t) {
    if (t.arch == Target::Arch::Host) return "host";
    return "cuda sm_" + std::to_string(t.sm) + (t.emulate ? " emulated" : "") + (t.shared_memory_opt_in ? " shared-memory opt-in" : "");
}

// "64x48"; `none` for no sizes.
std::string sizes_text(const std::vector<int> &x, const char *none) {
    std::string s;
    for (int e : x) s += (s.empty() ? "" : "x") + std::to_string(e);
    return s.empty() ? std::string(none) : s;
}

// The options that differ, by name.
std::vector<std::string> changed_options(const CompileOptions &a, const CompileOptions &b) {
    std::vector<std::string> v;
    auto sizes = [](const std::vector<int> &x) { return sizes_text(x, "any"); };
    if (a.threads != b.threads) v.push_back("threads " + std::to_string(a.threads) + " -> " + std::to_string(b.threads));
    if (a.fast_math != b.fast_math) v.push_back(std::string("fast_math ") + (b.fast_math ? "on" : "off"));
    if (a.fusion != b.fusion) v.push_back("fusion " + a.fusion + " -> " + b.fusion);
    if (a.tile_sizes != b.tile_sizes) v.push_back("tile_sizes " + sizes(a.tile_sizes) + " -> " + sizes(b.tile_sizes));
    auto value = [](const auto &x) { return x ? std::to_string(*x) : std::string("default"); };
    if (a.max_recompute != b.max_recompute) v.push_back("max_recompute " + value(a.max_recompute) + " -> " + value(b.max_recompute));
    if (a.cache_bytes != b.cache_bytes) v.push_back("cache_bytes " + value(a.cache_bytes) + " -> " + value(b.cache_bytes));
    if (a.parallel != b.parallel) v.push_back(std::string("parallel ") + (b.parallel ? "on" : "off"));
    if (a.vectorize != b.vectorize) v.push_back(std::string("vectorize ") + (b.vectorize ? "on" : "off"));
    if (a.keep_assembly != b.keep_assembly) v.push_back(std::string("keep_assembly ") + (b.keep_assembly ? "on" : "off"));
    if (a.cache != b.cache) v.push_back(std::string("cache ") + (b.cache ? "on" : "off"));
    if (a.gpu_unroll_rows != b.gpu_unroll_rows)
        v.push_back("gpu_unroll_rows " + std::to_string(a.gpu_unroll_rows) + " -> " + std::to_string(b.gpu_unroll_rows));
    if (a.gpu_align_warps != b.gpu_align_warps) v.push_back("gpu_align_warps " + a.gpu_align_warps + " -> " + b.gpu_align_warps);
    if (a.gpu_stage_inputs != b.gpu_stage_inputs) v.push_back(std::string("gpu_stage_inputs ") + (b.gpu_stage_inputs ? "on" : "off"));
    if (a.gpu_column_windows != b.gpu_column_windows) v.push_back(std::string("gpu_column_windows ") + (b.gpu_column_windows ? "on" : "off"));
    if (a.compile_threads != b.compile_threads)
        v.push_back("compile_threads " + std::to_string(a.compile_threads) + " -> " + std::to_string(b.compile_threads));
    return v;
}

// Counts the compile and, when `p` was compiled before, logs why it is compiled again. `text`
// is p's pipeline_text.
void note_compile(const Pipeline &p, const std::string &text, const Target &t, const CompileOptions &o) {
    g_compiles++;
    std::lock_guard<std::mutex> lock(g_last_mutex);
    auto it = g_last.find(p.contents().get());
    if (it != g_last.end() && !it->second.pipeline.expired()) {
        const LastCompile &last = it->second;
        g_recompiles++;
        std::vector<std::string> why;
        auto definitions = [](const std::string &x) { return x.substr(0, x.find("schedule (imported)")); };
        if (definitions(last.text) != definitions(text)) why.push_back("new definitions");
        else if (last.text != text) why.push_back("new schedule (set_schedule_json)");
        if (target_text(last.target) != target_text(t)) why.push_back("new target (" + target_text(last.target) + " -> " + target_text(t) + ")");
        if (last.options.specialize_sizes != o.specialize_sizes) {
            auto sizes = [](const std::vector<int> &x) { return sizes_text(x, "any size"); };
            why.push_back("new shape (specialize_sizes " + sizes(last.options.specialize_sizes) + " -> " + sizes(o.specialize_sizes) + ")");
        }
        std::vector<std::string> opts = changed_options(last.options, o);
        if (!opts.empty()) {
            std::string s = "new options (";
            for (size_t i = 0; i < opts.size(); ++i) s += (i ? ", " : "") + opts[i];
            why.push_back(s + ")");
        }
        std::string names;
        for (const Func &f : p.outputs()) names += (names.empty() ? "" : ", ") + f.name();
        std::string reasons;
        for (const auto &w : why) reasons += (reasons.empty() ? "" : "; ") + w;
        log_line(LogTopic::Recompile, names + " compiled again: " +
                                          (why.empty() ? "nothing changed (keep the Callable to run it again without compiling)" : reasons));
    }
    // Forget pipelines that are gone, so the map stays as small as the live ones.
    for (auto g = g_last.begin(); g != g_last.end();) g = g->second.pipeline.expired() ? g_last.erase(g) : std::next(g);
    g_last[p.contents().get()] = LastCompile{p.contents(), text, t, o};
}

std::shared_ptr<const CallableImpl> compile_hook(const Pipeline &p, const Target &t, const CompileOptions &o) {
    // One pipeline_text for the recompile log and the compile cache's key.
    std::string text = pipeline_text(p);
    note_compile(p, text, t, o);
    return compile_for_host(p, t, o, &text);
}

} // namespace

CompileCounters compile_counters() {
    CompileCounters c;
    c.compiles = g_compiles;
    c.recompiles = g_recompiles;
    CacheCounters k = compile_cache_counters();
    c.cache_hits = k.hits;
    c.cache_misses = k.misses;
    c.cache_stores = k.stores;
    c.cache_corrupt = k.corrupt;
    c.cache_evictions = k.evictions;
    c.cache_refused = k.refused;
    return c;
}

std::shared_ptr<const poly::Program> scheduled_program(const Pipeline &p) {
    auto s = state_of(p);
    std::lock_guard<std::mutex> lock(s->mutex);
    return s->program_of(p);
}

void install_executor() {
    detail::set_realize_hook(realize_compiled);
    detail::set_compile_hook(compile_hook);
    detail::ScheduleHooks h;
    h.to_json = to_json;
    h.check = check;
    detail::set_schedule_hooks(h);
}

} // namespace tessera::runtime
