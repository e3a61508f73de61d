// The host CPU target: a TargetMachine for the host's CPU name and features, LLVM's O3 pipeline
// (new pass manager), and assembly / object emission.
#pragma once

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

// Runs LLVM's default O3 pipeline for the TargetMachine over the module.
void optimize_module(llvm::Module &m, llvm::TargetMachine &tm);

// Machine code for the module as assembly text, or as an object file written to `path`.
std::string emit_assembly(llvm::Module &m, llvm::TargetMachine &tm);
void emit_object(llvm::Module &m, llvm::TargetMachine &tm, const std::string &path);

} // namespace tessera::codegen
