// How Pipeline::realize executes: the pipeline compiled for the host (automatic schedule, or
// the imported JSON one), cached per pipeline until a definition or the imported schedule
// changes. Pipeline::compile and Pipeline::schedule_json go through here too.
#pragma once

#include <memory>
#include <string>

#include <tessera/pipeline.h>
#include <tessera/poly/program.h>

namespace tessera::runtime {

// Makes Pipeline::realize run compiled code, and Pipeline::compile / schedule_json /
// set_schedule_json work. Idempotent.
void install_executor();

// The scheduled program realize() compiles for `p` (cached, so shared with other threads: hold
// its model's isl_mutex while using its isl objects).
std::shared_ptr<const poly::Program> scheduled_program(const Pipeline &p);

// This process's compile events: Pipeline::compile calls, those of a Pipeline compiled before
// (TESSERA_LOG=recompile says why), and the persistent cache's (compile_cache.h).
struct CompileCounters {
    uint64_t compiles = 0, recompiles = 0;
    uint64_t cache_hits = 0, cache_misses = 0, cache_stores = 0, cache_corrupt = 0, cache_evictions = 0, cache_refused = 0;
};
CompileCounters compile_counters();

} // namespace tessera::runtime
