// Executes a scheduled program on the host: walks its loop nest and evaluates each statement
// instance with the reference evaluator (exact DSL semantics, every access bounds-checked). It
// proves a schedule correct before any code is generated.
#pragma once

#include <vector>

#include <tessera/buffer.h>

#include "tessera/poly/program.h"

namespace tessera::poly {

struct ExecuteOptions {
    // Runs loops marked parallel from their last iteration to their first. A loop marked
    // parallel that carries a dependence then computes something else, which tests detect.
    bool reverse_parallel_loops = false;
};

// Computes the pipeline's outputs into `outputs` (one per output, over its region). Inputs and
// Params are read from their bindings; inputs are checked against the region the program reads.
void execute(const Program &p, const std::vector<Buffer<void>> &outputs, const ExecuteOptions &options = {});

} // namespace tessera::poly
