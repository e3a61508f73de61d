#include "tessera/runtime/executor.h"

#include <tessera/poly/ast_interpreter.h>
#include <tessera/poly/schedule_json.h>
#include <tessera/poly/scheduler.h>

namespace tessera::runtime {
namespace {

struct CachedProgram {
    uint64_t epoch = 0;
    std::string override_json;
    std::shared_ptr<const poly::Program> program;
};

std::shared_ptr<const poly::Program> build(const Pipeline &p, const std::string &override_json) {
    std::shared_ptr<const poly::Model> model = poly::build_model(p);
    if (!override_json.empty())
        return std::make_shared<const poly::Program>(poly::schedule_from_json(model, override_json));
    return std::make_shared<const poly::Program>(poly::schedule_model(model, poly::ScheduleOptions{}));
}

void realize_scheduled(const Pipeline &p, const std::vector<Buffer<void>> &outputs) {
    poly::execute(*scheduled_program(p), outputs);
}

std::string to_json(const Pipeline &p) {
    poly::ScheduleOptions defaults;
    return poly::schedule_to_json(*scheduled_program(p), &defaults);
}

void check(const Pipeline &p, const std::string &json) { build(p, json); }

} // namespace

std::shared_ptr<const poly::Program> scheduled_program(const Pipeline &p) {
    PipelineContents &c = *p.contents();
    std::lock_guard<std::mutex> lock(c.mutex);
    auto cached = std::static_pointer_cast<CachedProgram>(c.executor_state);
    uint64_t epoch = detail::definitions_epoch();
    if (!cached || cached->epoch != epoch || cached->override_json != c.schedule_override) {
        auto fresh = std::make_shared<CachedProgram>();
        fresh->epoch = epoch;
        fresh->override_json = c.schedule_override;
        fresh->program = build(p, c.schedule_override);
        c.executor_state = fresh;
        cached = fresh;
    }
    return cached->program;
}

void install_executor() {
    detail::set_realize_hook(realize_scheduled);
    detail::ScheduleHooks h;
    h.to_json = to_json;
    h.check = check;
    detail::set_schedule_hooks(h);
}

} // namespace tessera::runtime
