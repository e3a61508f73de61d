// The compiler's stages as text (Callable::compiler_ir) and TESSERA_DUMP.
//
//   TESSERA_DUMP=dumps ./my_app
//
// writes, for every pipeline compiled, dumps/<outputs>-<pid>-<k>/ with one file per stage that
// compile kept, named after the stage and numbered in compile order:
//
//   01-pipeline.txt  02-model.txt  03-dependences.txt  04-schedule.json  05-loop_nest.c
//   06-llvm_unoptimized.ll  07-llvm.ll  08-asm.s  (09-ptx.ptx for GPU targets)
//
// Each file holds exactly what compiler_ir(stage) returns.
#pragma once

#include <string>
#include <vector>

#include <tessera/callable.h>
#include <tessera/pipeline.h>
#include <tessera/poly/model.h>

namespace tessera::runtime {

// Every statement's domain, write and reads, every array's region, and the context, as isl
// prints them.
std::string model_text(const poly::Model &m);
// The flow, anti and output dependences of the model, one map per line.
std::string dependences_text(const poly::Model &m);

// The file a stage is dumped to: "01-pipeline.txt", "04-schedule.json", "08-asm.s", ...
std::string stage_file_name(const std::string &stage);

// Writes every stage `c` (compiled from `p`) kept into a new directory under `dir` named after
// p's outputs, this process and a count (created, with `dir`, as needed); returns the files
// written.
std::vector<std::string> dump_compiler_ir(const Callable &c, const Pipeline &p, const std::string &dir);

// The directory TESSERA_DUMP names, or empty.
std::string dump_directory();

} // namespace tessera::runtime
