// Compilation of a pipeline to host machine code through the JIT, and the resulting callable.
#pragma once

#include <memory>
#include <string>

#include <tessera/callable.h>
#include <tessera/codegen/llvm_lowering.h>
#include <tessera/pipeline.h>
#include <tessera/poly/isl_util.h>
#include <tessera/poly/program.h>
#include <tessera/poly/schedule_options.h>
#include <tessera/target_info.h>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace tessera::runtime {

// The scheduling options that CompileOptions asks for.
poly::ScheduleOptions schedule_options(const CompileOptions &o);
// The UserErrors of options no pipeline accepts (a tile size below 1, negative threads, ...),
// without reading the host's facts: what a cache hit checks before making its key.
void check_compile_options(const Pipeline &p, const CompileOptions &o);
// The code generation options CompileOptions asks for (size specializations checked against the
// pipeline's outputs).
codegen::CodegenOptions codegen_options(const Pipeline &p, const CompileOptions &o, const std::string &function_name);

// The program to compile: the pipeline's imported schedule if it has one, else the automatic
// schedule for `o`. Appends the phase timings to `report`.
std::shared_ptr<const poly::Program> program_for(const Pipeline &p, const CompileOptions &o, CompileReport &report);
// The same with the scheduling options given (GPU targets: gpu_schedule_options).
std::shared_ptr<const poly::Program> program_for(const Pipeline &p, const poly::ScheduleOptions &so, CompileReport &report);

// The scheduling options of a GPU target: mapped onto kernels (poly/gpu_mapping.h), tiles
// whose scratchpads fit the device's shared memory, no CPU-only transformations.
poly::ScheduleOptions gpu_schedule_options(const CompileOptions &o, const TargetInfo &device);
// Compiles for Target::cuda: the kernels as PTX (in the report with keep_assembly), and the host
// code, which runs them in the emulator (Target::emulated) or reports that no GPU runtime exists.
// `text`: p's pipeline_text when the caller has it already (the compile cache's key needs it).
std::shared_ptr<const CallableImpl> compile_for_cuda(const Pipeline &p, const Target &t, const CompileOptions &o,
                                                     const std::string *text = nullptr);
// The same for a program already scheduled, taken as it is: tests use it to run programs that
// legality rejects (a GPU schedule without its barrier) in the emulator.
std::shared_ptr<const CallableImpl> compile_program_for_cuda(const Pipeline &p, std::shared_ptr<const poly::Program> program,
                                                             const Target &t, const CompileOptions &o, CompileReport report = {});

// Lowers `program` into `module` (prepared for `tm`), appending the "LLVM IR" phase to `report`
// (and its instruction count), timed by `phase` (started by the caller when its setup began).
// `unoptimized_ir`: when given, receives the module's text before optimization.
void lower_to_llvm(const poly::Program &program, const codegen::CodegenOptions &options, llvm::Module &module,
                   llvm::TargetMachine &tm, CompileReport &report, poly::Stopwatch &phase, std::string *unoptimized_ir = nullptr);

// lower_to_llvm, then the optimization pipeline over the module in this thread, appending the
// "LLVM optimization" phase: what the AOT path does before machine code (the JIT compiles its
// module's functions on several threads, codegen/parallel_compile.h).
void lower_and_optimize(const poly::Program &program, const codegen::CodegenOptions &options, llvm::Module &module,
                        llvm::TargetMachine &tm, CompileReport &report, poly::Stopwatch &phase,
                        std::string *unoptimized_ir = nullptr);

// Compiles for the host CPU through the JIT.
std::shared_ptr<const CallableImpl> compile_for_host(const Pipeline &p, const Target &t, const CompileOptions &o,
                                                     const std::string *text = nullptr);
// The same for a program already scheduled (by program_for with the same options).
std::shared_ptr<const CallableImpl> compile_program_for_host(const Pipeline &p, std::shared_ptr<const poly::Program> program,
                                                             const CompileOptions &o, CompileReport report = {});

// How many pipelines this process has compiled to machine code: a cache hit adds nothing.
int compilation_count();

} // namespace tessera::runtime
