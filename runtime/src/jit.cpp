#include "tessera/runtime/jit.h"

#include <mutex>

#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/Module.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/TargetParser/SubtargetFeature.h>
#include <llvm/Target/TargetMachine.h>

#include <tessera/codegen/cpu_target.h>
#include <tessera/codegen/llvm_lowering.h>
#include <tessera/error.h>

#include "tessera/runtime/buffer_pool.h"

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

    std::unique_ptr<JitCode> load(std::string_view object, const std::string &symbol);

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
        // Code comes in as objects (jit_load_object): the IR compiler LLJIT insists on is a
        // ConcurrentIRCompiler, which makes its TargetMachine only when asked to compile, not
        // the default one that makes it now (a quarter of a millisecond of every process's
        // first cache hit).
        auto jit = llvm::orc::LLJITBuilder()
                       .setJITTargetMachineBuilder(jtmb_)
                       .setCompileFunctionCreator([](llvm::orc::JITTargetMachineBuilder jtmb)
                                                      -> llvm::Expected<std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler>> {
                           return std::make_unique<llvm::orc::ConcurrentIRCompiler>(std::move(jtmb));
                       })
                       .create();
        if (!jit) internal_error("could not create the LLVM JIT: ", message(jit.takeError()));
        jit_ = std::move(*jit);
        auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(jit_->getDataLayout().getGlobalPrefix());
        if (!gen) internal_error("could not search the process for symbols: ", message(gen.takeError()));
        llvm::orc::JITDylib &main = jit_->getMainJITDylib();
        main.addGenerator(std::move(*gen));
        // The buffer pool, by the names codegen calls it (CodegenOptions::pooled_buffers).
        llvm::orc::SymbolMap pool;
        pool[jit_->mangleAndIntern(codegen::kBufferPoolAllocSymbol)] = {
            llvm::orc::ExecutorAddr::fromPtr(&buffer_pool_alloc), llvm::JITSymbolFlags::Exported};
        pool[jit_->mangleAndIntern(codegen::kBufferPoolFreeSymbol)] = {
            llvm::orc::ExecutorAddr::fromPtr(&buffer_pool_free), llvm::JITSymbolFlags::Exported};
        if (auto e = main.define(llvm::orc::absoluteSymbols(std::move(pool))))
            internal_error("could not define the buffer pool's symbols: ", message(std::move(e)));
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
    uint64_t dylibs_ = 0;  // under mutex_
};

class OrcCode : public JitCode {
public:
    OrcCode(llvm::orc::LLJIT &jit, llvm::orc::JITDylib &dylib) : jit_(jit), dylib_(&dylib) {}
    ~OrcCode() override { llvm::consumeError(jit_.getExecutionSession().removeJITDylib(*dylib_)); }
    void *address() const override { return address_; }
    void *lookup(const std::string &symbol) const override {
        auto addr = jit_.lookup(*dylib_, symbol);
        if (!addr) internal_error("the JIT has no symbol ", symbol, ": ", message(addr.takeError()));
        return addr->toPtr<void *>();
    }
    void *address_ = nullptr;

private:
    llvm::orc::LLJIT &jit_;
    llvm::orc::JITDylib *dylib_;
};

std::unique_ptr<JitCode> Jit::load(std::string_view object, const std::string &symbol) {
    std::lock_guard<std::mutex> lock(mutex_);
    llvm::orc::ExecutionSession &session = jit_->getExecutionSession();
    // Its own JITDylib, which links against itself first and then the main one (the process's
    // symbols and the buffer pool). `code` removes it again if linking fails.
    llvm::orc::JITDylib &dylib = session.createBareJITDylib("tessera_code_" + std::to_string(dylibs_++));
    dylib.setLinkOrder({{&jit_->getMainJITDylib(), llvm::orc::JITDylibLookupFlags::MatchExportedSymbolsOnly}});
    auto code = std::make_unique<OrcCode>(*jit_, dylib);
    if (auto e = jit_->addObjectFile(dylib, llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(object.data(), object.size()), symbol)))
        internal_error("the JIT rejected the object of ", symbol, ": ", message(std::move(e)));
    auto addr = jit_->lookup(dylib, symbol);
    if (!addr) internal_error("the JIT could not link ", symbol, ": ", message(addr.takeError()));
    code->address_ = addr->toPtr<void *>();
    return code;
}

} // namespace

std::unique_ptr<llvm::TargetMachine> jit_target_machine() {
    auto tm = Jit::instance().builder().createTargetMachine();
    if (!tm) internal_error("could not create the JIT's TargetMachine: ", message(tm.takeError()));
    return std::move(*tm);
}

std::unique_ptr<JitCode> jit_load_object(std::string_view object, const std::string &symbol) {
    return Jit::instance().load(object, symbol);
}

} // namespace tessera::runtime
