// Schedules written with directives (docs/dsl.md, "Scheduling") for apps whose automatic
// schedule they reproduce tile for tile, as a Halide user would write them: the benchmark
// (bench/run_directives_benchmark.py) compares the two, and the tests check that they compute
// the apps' results.
//
//   blur_x_blur_y   blur_y: 256 x 4096 tiles (rows, columns) per channel, parallel over tiles of
//                   rows and channels, columns vectorized; blur_x stored per tile, its rows
//                   sliding (store_at the tile, compute_at the row loop)
//   matmul, gemm    the update: tiles of 32 rows x 128 k x 4096 columns, inside them 8 x 32
//                   register blocks across 32 steps of k (unrolled rows, vectorized columns),
//                   parallel over tiles of rows; the pure definition in 8 x 1024 tiles, parallel over
//                   both tile loops (collapsed)
#pragma once

#include "tessera_apps/app.h"

namespace tessera::apps {

// Writes the app's directive schedule onto its Funcs; false for an app that has none.
bool apply_written_schedule(App &app);

// The apps that have one.
std::vector<std::string> apps_with_written_schedules();

} // namespace tessera::apps
