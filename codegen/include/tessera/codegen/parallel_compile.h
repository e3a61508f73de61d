// Optimization and machine code for a module whose functions are compiled on several threads.
//
// A pipeline's module is its entry function plus one outlined body per parallel loop nest
// (OpenMP's microtasks), and the bodies hold nearly all the code: pb_3mm's module has an entry
// and six bodies, camera_pipe's about twenty. LLVM's optimization and machine-code passes work
// on one function at a time once inlining is done, and nothing is inlined across these
// functions (the entry hands each body to the OpenMP runtime by address), so the functions
// can be compiled apart with no change to the code of any one of them:
//
//   module: entry, body.1 (3,000 instructions), body.2 (2,500), body.3 (400)
//     =>  partition 0: entry, body.3, every global variable;  partition 1: body.1 ...
//     (balanced by LLVM's expected work: an instruction inside a loop counts four times)
//     each written as bitcode, read into an LLVMContext of its own on a thread of its own,
//     optimized and compiled to an object: the objects are linked together by the loader.
//
// Functions and variables of local linkage become external (keeping their names, which are
// unique to the pipeline) so that one partition can call or take the address of another's.
// Every partition is optimized at the level the whole module would get (optimization_level_for
// its total size), so splitting never changes which passes run. A small module (below
// kParallelCompileInstructions) or a single thread keeps the one-module path: no bitcode.
//
// LLVM's own splitCodeGen (llvm/CodeGen/ParallelCG.h) splits only machine code generation, after
// optimization, which is the other half of the time; llvm::SplitModule clusters every local
// function with its users, which puts all of a pipeline in the entry's partition.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace tessera::codegen {

// Modules smaller than this are compiled on the calling thread alone: below it the bitcode round
// trip and the threads cost more than they save (blur's module: about 1,100 instructions).
constexpr size_t kParallelCompileInstructions = 1500;

struct MachineCode {
    std::vector<std::string> objects;  // relocatable objects, to be linked together
    int optimization_level = 0;        // as optimize_module returns it
    int partitions = 1;
    double optimization_ms = 0;        // wall time until every partition is optimized
    double machine_code_ms = 0;        // wall time after that, until every partition's machine code is generated
    std::string optimized_ir;          // the partitions' optimized IR, when asked for
    std::string assembly;              // their assembly, when asked for
};

// The number of threads compile_module uses by default: TESSERA_COMPILE_THREADS when set (1
// turns parallel compiling off), else the hardware's threads, at most 8.
int compile_threads();

// Optimizes `module` (prepared for `tm`: triple and data layout set) and generates its machine
// code on up to `threads` threads, as above: partition 0 with `tm` on the calling thread, the
// others with TargetMachines like it from `make_target_machine` (one per thread: a
// TargetMachine is not shared between threads). `keep_text` also fills `optimized_ir` and
// `assembly`. The module is consumed.
MachineCode compile_module(std::unique_ptr<llvm::Module> module, llvm::TargetMachine &tm,
                           const std::function<std::unique_ptr<llvm::TargetMachine>()> &make_target_machine, int threads,
                           bool keep_text);

} // namespace tessera::codegen
