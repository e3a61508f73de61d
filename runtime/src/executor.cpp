#include "tessera/runtime/executor.h"

#include <tessera/poly/schedule_json.h>
#include <tessera/poly/scheduler.h>

#include "tessera/runtime/compiled_pipeline.h"

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

// The code realize() runs, compiled once from the same scheduled program schedule_json() shows.
std::shared_ptr<const CallableImpl> compiled(const Pipeline &p) {
    auto s = state_of(p);
    std::lock_guard<std::mutex> lock(s->mutex);
    if (!s->compiled) s->compiled = compile_program_for_host(p, s->program_of(p), CompileOptions{});
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

void check(const Pipeline &p, const std::string &json) { poly::schedule_from_json(poly::build_model(p), json); }

std::shared_ptr<const CallableImpl> compile_hook(const Pipeline &p, const Target &t, const CompileOptions &o) {
    return compile_for_host(p, t, o);
}

} // namespace

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
