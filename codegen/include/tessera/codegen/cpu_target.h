// The host CPU target: a TargetMachine for the host's CPU name and features, LLVM's O3 pipeline
// (new pass manager), and assembly / object emission.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include <tessera/target_info.h>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace tessera::codegen {

struct CpuTarget {
    std::string triple;
    std::string cpu;       // e.g. "znver3", "skylake-avx512"
    std::string features;  // e.g. "+avx2,+fma,..."
};

// The machine this process runs on.
CpuTarget host_cpu();

// The host's hardware facts: its vector width (from its CPU features) and cache sizes (from
// sysfs; the defaults of TargetInfo where it says nothing), computed once.
const TargetInfo &host_target_info();

// A TargetMachine at optimization level O3. Throws an InternalError if LLVM lacks the target.
std::unique_ptr<llvm::TargetMachine> make_target_machine(const CpuTarget &t, bool fast_math);

// Sets the module's triple and data layout from the TargetMachine.
void prepare_module(llvm::Module &m, llvm::TargetMachine &tm);

// The instructions of every function of the module.
size_t instruction_count(const llvm::Module &m);

// The LLVM optimization level optimize_module uses for a module of `instructions`: 3 (O3) up to
// kO3ModuleInstructions, 2 (O2) up to kLargeModuleInstructions, 1 (O1) beyond. The apps' modules
// have at most 7,700 instructions. In the fuzzer's largest, O3 and the code generation of its
// output took seconds: its unrolling threshold (300 against O2's 150) left loops nested ten
// deep with so many addresses that LLVM's loop strength reduction took 2.2 s (seed 2431208,
// 19,500 instructions; 0.4 s after O2), and beyond 20,000 instructions (22,000 to 35,000) O3's
// unswitching and unrolling doubled the time of optimization and code generation, which O1
// halves again. Code that large is rarely one hot loop, and its compile time is bounded first.
constexpr size_t kO3ModuleInstructions = 10000;
constexpr size_t kLargeModuleInstructions = 20000;
int optimization_level_for(size_t instructions);

// Runs LLVM's default pipeline at optimization_level_for(the module's size) for the
// TargetMachine over the module; returns that level (0: TESSERA_LLVM_PIPELINE chose the passes).
int optimize_module(llvm::Module &m, llvm::TargetMachine &tm);

// Machine code for the module as assembly text, or as an object file written to `path`.
std::string emit_assembly(llvm::Module &m, llvm::TargetMachine &tm);
void emit_object(llvm::Module &m, llvm::TargetMachine &tm, const std::string &path);

} // namespace tessera::codegen
