// The process-wide JIT (LLVM ORC LLJIT): compiled pipelines are added to it and looked up by
// name. It resolves libm and the OpenMP runtime (libomp, loaded on first use) from the process.
#pragma once

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace tessera::runtime {

// Code added to the JIT; removed from it when destroyed.
class JitCode {
public:
    virtual ~JitCode() = default;
    virtual void *address() const = 0;
};

// A TargetMachine matching the JIT's (host CPU and features, machine-code level Default).
std::unique_ptr<llvm::TargetMachine> jit_target_machine();

// Compiles `module` to machine code and returns the address of `symbol`.
std::unique_ptr<JitCode> jit_add(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context,
                                 const std::string &symbol);

} // namespace tessera::runtime
