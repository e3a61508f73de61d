// The schedule of a pipeline as JSON (format: docs/schedule-json.md).
//
// Export describes everything the schedule decides: groups and their stages, the schedule tree
// (bands with their members, coincidence and permutability, marks), storage with scratchpad
// sizes, per-tile footprints, the parameters, and the loop nest as pseudo-C. Import reads back
// the authoritative part, "schedule_tree" (isl's text of the tree, editable), re-derives storage
// and the loop nest from it, and checks it against the dependences: an illegal edit is rejected
// with a UserError naming the violated dependence.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tessera/poly/program.h"
#include "tessera/poly/schedule_options.h"

namespace tessera::poly {

constexpr int kScheduleSchemaVersion = 1;

std::string schedule_to_json(const Program &p, const ScheduleOptions *options = nullptr, int indent = 2);

// The Funcs a JSON schedule says are computed inline besides those marked compute_inline (its
// "pipeline"."inlined"; none where it has no such list): the model of an imported schedule
// inlines these instead of automatic_inlines' choice, so that a schedule exported with a
// different set (from the same pipeline with directives, or an edited list) finds the statements
// it names. A listed name that is not a pure, non-output Func of the graph is a UserError.
std::set<const FuncContents *> inlined_in_schedule_json(const PipelineGraph &g, const std::string &json);

// The inputs a JSON schedule stages in GPU shared memory (its "pipeline"."staged_inputs";
// staged_inputs.h): the model of an imported schedule stages exactly these. None where it has
// no such list (a CPU schedule).
std::vector<std::string> staged_inputs_in_schedule_json(const std::string &json);

// Builds the program an (edited) JSON schedule describes, for the model of the same pipeline.
Program schedule_from_json(std::shared_ptr<const Model> model, const std::string &json, long max_operations = 2000000);

} // namespace tessera::poly
