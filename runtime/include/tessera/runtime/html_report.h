// The HTML page of a compiled pipeline (Callable::write_report, tessera-report): one file with
// no outside resources and no script. It shows
//   - the Func graph as inline SVG: inputs on the left, then one column per fusion group in the
//     order the groups run, each group outlined and labelled with its kind and tiles; an edge per
//     producer-consumer pair;
//   - a table of the groups (Funcs, tiles, why they were grouped so) and one of the storage
//     (full buffers, per-tile scratchpads with their footprints and folds), and the GPU kernels
//     with their grid and block when the target is a GPU;
//   - the loop nest, the pipeline's definitions, compile time by phase and the cache status.
#pragma once

#include <string>

#include <tessera/callable.h>
#include <tessera/poly/program.h>

namespace tessera::runtime {

// The caller holds program.model->isl_mutex.
std::string html_report(const poly::Program &program, const CompileReport &report, const std::string &pipeline_text,
                        const Target &target);

} // namespace tessera::runtime
