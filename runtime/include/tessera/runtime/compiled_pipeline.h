// Compilation of a pipeline to host machine code through the JIT, and the resulting callable.
#pragma once

#include <memory>
#include <string>

#include <tessera/callable.h>
#include <tessera/codegen/llvm_lowering.h>
#include <tessera/pipeline.h>
#include <tessera/poly/program.h>
#include <tessera/poly/schedule_options.h>

namespace tessera::runtime {

// The scheduling options that CompileOptions asks for.
poly::ScheduleOptions schedule_options(const CompileOptions &o);
codegen::CodegenOptions codegen_options(const CompileOptions &o, const std::string &function_name);

// The program to compile: the pipeline's imported schedule if it has one, else the automatic
// schedule for `o`. Appends the phase timings to `report`.
std::shared_ptr<const poly::Program> program_for(const Pipeline &p, const CompileOptions &o, CompileReport &report);

// Compiles for the host CPU through the JIT.
std::shared_ptr<const CallableImpl> compile_for_host(const Pipeline &p, const Target &t, const CompileOptions &o);

} // namespace tessera::runtime
