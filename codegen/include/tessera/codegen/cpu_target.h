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

// The machine this process runs on: its CPU name and features as LLVM detects them, tuned by
// tuned_features.
CpuTarget host_cpu();

// `features` (LLVM's, for the CPU `cpu`) with Tessera's tuning added where LLVM 19's own lacks it:
//
//   tuned_features("znver5", "+avx512f,...")         == "+avx512f,...,+prefer-no-gather"
//   tuned_features("skylake-avx512", "+avx512f,...") == "+avx512f,..."
//
// AMD's Zen cores (znver*) gather in microcode, one element after another: LLVM's vectorizers
// took the rows of an interleaved matrix-vector reduction (poly's "reductions interleaved",
// y[i] += A[i][j] x[j] for 8 rows i at once) as one 8-lane vector loaded by a gather per column,
// and gesummv ran 3x slower than with the 8 rows' scalar loads (docs/benchmarks.md). GCC's
// tuning avoids gathers on these cores for the same reason. Explicit gathers (a lookup table's
// vector loads) are split into scalar loads there; the image apps that use them ran unchanged.
std::string tuned_features(const std::string &cpu, std::string features);

// The host's hardware facts: its vector width (from its CPU features), cache sizes (the C
// library's, else sysfs; the defaults of TargetInfo where neither says) and the cores of the
// process's affinity mask, computed once.
const TargetInfo &host_target_info();

// Whether the host permutes bytes across a pair of 512-bit registers (AVX-512 VBMI's vpermi2b):
// what CodegenOptions::byte_table_permutes asks of it. Computed once.
bool host_permutes_bytes();

// What identifies the host's CPU for the compile cache without asking LLVM (whose cpuid
// queries take about 0.2 ms of a new process): the triple, the cpuid leaves glibc read at the
// process's start (vendor, family, model and every feature flag, from which LLVM's CPU name and
// features follow; the kernel's CPU modalias where glibc does not keep them), and the facts
// host_target_info reads from the system (cache sizes, cores). Empty where neither cpuid leaves
// nor a modalias can be read; the caller then identifies the CPU by host_cpu().
const std::string &host_cpu_identity();

// A TargetMachine whose code generation (instruction selection, scheduling, register allocation)
// runs at O3. Throws an InternalError if LLVM lacks the target.
std::unique_ptr<llvm::TargetMachine> make_target_machine(const CpuTarget &t, bool fast_math);

// Turns LLVM's X86 domain reassignment off (it moves integer computations into AVX-512 mask
// registers; on Tessera's code it changes nothing, slowly). Called before each compile, on the
// compiling thread: lld's driver resets LLVM's options whenever it links.
void keep_x86_domain_reassignment_off();

// Sets the module's triple and data layout from the TargetMachine.
void prepare_module(llvm::Module &m, llvm::TargetMachine &tm);

// The instructions of every function of the module.
size_t instruction_count(const llvm::Module &m);

// The LLVM optimization level optimize_module uses for a module of `instructions`: 2 (O2) up to
// kLargeModuleInstructions, 1 (O1) beyond.
// - Not O3: on the 23 PolyBench kernels and the apps, O3 ran no faster than O2 (within 2%; heat-3d
//   5% faster, from O3's non-trivial loop unswitching) and took 1.2-4x as long in LLVM. Its
//   unswitching copies every loop nest on each of isl's loop-invariant guards, and its full
//   unrolling (threshold 300 against 150) unrolls tile loops of up to 8 iterations: trmm spent
//   790 ms compiling at O3 and 440 ms at O2, cholesky 1,090 against 610, covariance 940 against
//   690 (docs/benchmarks.md, "LLVM's O2 pipeline").
// - O1 beyond 20,000 instructions (22,000 to 35,000 in the fuzzer's largest): O2's unrolling and
//   loop strength reduction there took seconds. Code that large is rarely one hot loop, and its
//   compile time is bounded first.
constexpr size_t kLargeModuleInstructions = 20000;
int optimization_level_for(size_t instructions);

// The level optimize_module runs at for `m`: optimization_level_for(its size), or 0 when
// TESSERA_LLVM_PIPELINE chooses the passes.
int optimization_level(const llvm::Module &m);

// Runs LLVM's default pipeline at `level` (optimization_level's meaning) for the TargetMachine
// over the module.
void optimize_module(llvm::Module &m, llvm::TargetMachine &tm, int level);

// The same at optimization_level(m); returns that level.
int optimize_module(llvm::Module &m, llvm::TargetMachine &tm);

// Machine code for the module as assembly text, as a relocatable object file's bytes, or as an
// object file written to `path`.
std::string emit_assembly(llvm::Module &m, llvm::TargetMachine &tm);
std::string emit_object_code(llvm::Module &m, llvm::TargetMachine &tm);
void emit_object(llvm::Module &m, llvm::TargetMachine &tm, const std::string &path);

} // namespace tessera::codegen
