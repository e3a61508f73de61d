// How Pipeline::realize executes: the pipeline's schedule (automatic, or the imported JSON one),
// cached per pipeline until a definition changes.
#pragma once

#include <memory>
#include <string>

#include <tessera/pipeline.h>
#include <tessera/poly/program.h>
#include <tessera/poly/schedule_options.h>

namespace tessera::runtime {

// Makes Pipeline::realize run the scheduled program and Pipeline::schedule_json /
// set_schedule_json use the scheduler. Idempotent.
void install_executor();

// The program realize() runs for `p`: its imported schedule if one is set, else the automatic
// schedule with default options. Cached in the pipeline.
std::shared_ptr<const poly::Program> scheduled_program(const Pipeline &p);

} // namespace tessera::runtime
