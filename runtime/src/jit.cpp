#include "tessera/runtime/jit.h"

#include <mutex>

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/TargetParser/SubtargetFeature.h>
#include <llvm/Target/TargetMachine.h>

#include <tessera/codegen/cpu_target.h>
#include <tessera/error.h>

namespace tessera::runtime {
namespace {

std::string message(llvm::Error e) {
    std::string s;
    llvm::handleAllErrors(std::move(e), [&](const llvm::ErrorInfoBase &info) { s = info.message(); });
    return s;
}

class Jit {
public:
    static Jit &instance() {
        static Jit jit;
        return jit;
    }

    llvm::orc::JITTargetMachineBuilder builder() const { return jtmb_; }

    std::unique_ptr<JitCode> add(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context,
                                 const std::string &symbol);

private:
    Jit() : jtmb_(detect()) {
        // The OpenMP runtime that parallel loops call, made visible to the process-symbol search.
        std::string err;
        const char *names[] = {"libomp.so.5", "libomp.so", "/usr/lib/llvm-19/lib/libomp.so.5"};
        bool loaded = false;
        for (const char *n : names)
            if (!llvm::sys::DynamicLibrary::LoadLibraryPermanently(n, &err)) {
                loaded = true;
                break;
            }
        if (!loaded)
            user_error("The OpenMP runtime libomp.so.5 could not be loaded (", err,
                       "). Install libomp-19-dev (./scripts/setup.sh does).");
        auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb_).create();
        if (!jit) internal_error("could not create the LLVM JIT: ", message(jit.takeError()));
        jit_ = std::move(*jit);
        auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(jit_->getDataLayout().getGlobalPrefix());
        if (!gen) internal_error("could not search the process for symbols: ", message(gen.takeError()));
        jit_->getMainJITDylib().addGenerator(std::move(*gen));
    }

    // The host CPU as codegen sees it (codegen::host_cpu also initializes LLVM's native target).
    // Machine code at level Default (AOT objects use Aggressive): JIT compile time counts.
    static llvm::orc::JITTargetMachineBuilder detect() {
        codegen::CpuTarget host = codegen::host_cpu();
        llvm::orc::JITTargetMachineBuilder b{llvm::Triple(host.triple)};
        b.setCPU(host.cpu);
        llvm::SubtargetFeatures features(host.features);
        b.addFeatures(features.getFeatures());
        b.setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
        b.getOptions().AllowFPOpFusion = llvm::FPOpFusion::Standard;
        return b;
    }

    llvm::orc::JITTargetMachineBuilder jtmb_;
    std::unique_ptr<llvm::orc::LLJIT> jit_;
    std::mutex mutex_;
};

class OrcCode : public JitCode {
public:
    OrcCode(void *address, llvm::orc::ResourceTrackerSP tracker) : address_(address), tracker_(std::move(tracker)) {}
    ~OrcCode() override {
        if (tracker_) llvm::consumeError(tracker_->remove());
    }
    void *address() const override { return address_; }

private:
    void *address_;
    llvm::orc::ResourceTrackerSP tracker_;
};

std::unique_ptr<JitCode> Jit::add(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context,
                                  const std::string &symbol) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto tracker = jit_->getMainJITDylib().createResourceTracker();
    if (auto e = jit_->addIRModule(tracker, llvm::orc::ThreadSafeModule(std::move(module), std::move(context))))
        internal_error("the JIT rejected the module: ", message(std::move(e)));
    auto addr = jit_->lookup(symbol);
    if (!addr) internal_error("the JIT could not compile ", symbol, ": ", message(addr.takeError()));
    return std::make_unique<OrcCode>(addr->toPtr<void *>(), tracker);
}

} // namespace

std::unique_ptr<llvm::TargetMachine> jit_target_machine() {
    auto tm = Jit::instance().builder().createTargetMachine();
    if (!tm) internal_error("could not create the JIT's TargetMachine: ", message(tm.takeError()));
    return std::move(*tm);
}

std::unique_ptr<JitCode> jit_add(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context,
                                 const std::string &symbol) {
    return Jit::instance().add(std::move(module), std::move(context), symbol);
}

} // namespace tessera::runtime
