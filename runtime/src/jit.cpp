#include "tessera/runtime/jit.h"

#include <dlfcn.h>

#include <set>

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/RuntimeDyld.h>
#include <llvm/ExecutionEngine/SectionMemoryManager.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/SubtargetFeature.h>

#include <tessera/codegen/cpu_target.h>
#include <tessera/codegen/llvm_lowering.h>
#include <tessera/error.h>

#include "tessera/runtime/buffer_pool.h"

// The OpenMP runtime's entry points that generated parallel loops call (codegen/src/cpu), from
// libomp, which the runtime links (their signatures as libomp defines them; only their
// addresses are taken here).
extern "C" {
void __kmpc_fork_call(void *location, int32_t argc, void *microtask, ...);
int32_t __kmpc_global_thread_num(void *location);
void __kmpc_push_num_threads(void *location, int32_t thread, int32_t threads);
void __kmpc_dispatch_init_8(void *location, int32_t thread, int32_t schedule, int64_t lower, int64_t upper, int64_t stride,
                            int64_t chunk);
int32_t __kmpc_dispatch_next_8(void *location, int32_t thread, int32_t *last, int64_t *lower, int64_t *upper, int64_t *stride);
void __kmpc_serialized_parallel(void *location, int32_t thread);
void __kmpc_end_serialized_parallel(void *location, int32_t thread);
}

namespace tessera::runtime {
namespace {

std::string message(llvm::Error e) {
    std::string s;
    llvm::handleAllErrors(std::move(e), [&](const llvm::ErrorInfoBase &info) { s = info.message(); });
    return s;
}

// The symbols generated code calls: the buffer pool's two functions (by the names codegen
// calls them, CodegenOptions::pooled_buffers) and the OpenMP runtime's entry points, by the
// addresses this library was linked with (so that a Python module loaded RTLD_LOCAL, whose
// libomp the process does not see, serves them too); then anything the process has (libc,
// libm).
class ProcessSymbols : public llvm::LegacyJITSymbolResolver {
public:
    llvm::JITSymbol findSymbolInLogicalDylib(const std::string &) override { return nullptr; }

    llvm::JITSymbol findSymbol(const std::string &name) override {
        static const std::pair<const char *, void *> linked[] = {
            {codegen::kBufferPoolAllocSymbol, reinterpret_cast<void *>(&buffer_pool_alloc)},
            {codegen::kBufferPoolFreeSymbol, reinterpret_cast<void *>(&buffer_pool_free)},
            {"__kmpc_fork_call", reinterpret_cast<void *>(&__kmpc_fork_call)},
            {"__kmpc_global_thread_num", reinterpret_cast<void *>(&__kmpc_global_thread_num)},
            {"__kmpc_push_num_threads", reinterpret_cast<void *>(&__kmpc_push_num_threads)},
            {"__kmpc_dispatch_init_8", reinterpret_cast<void *>(&__kmpc_dispatch_init_8)},
            {"__kmpc_dispatch_next_8", reinterpret_cast<void *>(&__kmpc_dispatch_next_8)},
            {"__kmpc_serialized_parallel", reinterpret_cast<void *>(&__kmpc_serialized_parallel)},
            {"__kmpc_end_serialized_parallel", reinterpret_cast<void *>(&__kmpc_end_serialized_parallel)},
        };
        for (const auto &[n, p] : linked)
            if (name == n) return exported(p);
        if (void *p = ::dlsym(RTLD_DEFAULT, name.c_str())) return exported(p);
        return nullptr;  // unresolved: LinkedObject::link asks before linking
    }

private:
    static llvm::JITSymbol exported(void *p) {
        return llvm::JITSymbol(llvm::JITTargetAddress(reinterpret_cast<uintptr_t>(p)), llvm::JITSymbolFlags::Exported);
    }
};

ProcessSymbols &process_symbols() {
    static ProcessSymbols symbols;
    return symbols;
}

// An object linked into the process by LLVM's RuntimeDyld, in memory of its own (freed, with its
// unwind tables deregistered, when the code is destroyed).
class LinkedObject : public JitCode {
public:
    LinkedObject() : dyld_(memory_, process_symbols()) {}
    ~LinkedObject() override { memory_.deregisterEHFrames(); }

    void *address() const override { return address_; }
    void *lookup(const std::string &symbol) const override {
        llvm::JITEvaluatedSymbol s = dyld_.getSymbol(symbol);
        if (!s) internal_error("the loaded object has no symbol ", symbol);
        return reinterpret_cast<void *>(uintptr_t(s.getAddress()));
    }

    // Links the objects of one compile together (a symbol one defines resolves another's
    // reference to it) and into the process.
    void link(const std::vector<std::string_view> &objects, const std::string &symbol) {
        std::vector<std::unique_ptr<llvm::MemoryBuffer>> buffers;  // the files refer to them
        std::vector<std::unique_ptr<llvm::object::ObjectFile>> files;
        std::set<std::string> defined;
        for (std::string_view object : objects) {
            auto buffer = llvm::MemoryBuffer::getMemBuffer(llvm::StringRef(object.data(), object.size()), symbol, false);
            auto file = llvm::object::ObjectFile::createObjectFile(buffer->getMemBufferRef());
            if (!file) internal_error("an object of ", symbol, " is not an object file: ", message(file.takeError()));
            for (const llvm::object::SymbolRef &s : (*file)->symbols()) {
                auto flags = s.getFlags();
                auto name = s.getName();
                if (flags && name && !(*flags & llvm::object::SymbolRef::SF_Undefined) && (*flags & llvm::object::SymbolRef::SF_Global))
                    defined.insert(name->str());
                if (!flags) llvm::consumeError(flags.takeError());
                if (!name) llvm::consumeError(name.takeError());
            }
            files.push_back(std::move(*file));
            buffers.push_back(std::move(buffer));
        }
        // RuntimeDyld aborts the process on a symbol it cannot resolve: ask first.
        for (const auto &file : files)
            for (const llvm::object::SymbolRef &s : file->symbols()) {
                auto flags = s.getFlags();
                auto name = s.getName();
                if (!flags || !name || !(*flags & llvm::object::SymbolRef::SF_Undefined) || name->empty() ||
                    defined.count(name->str())) {
                    if (!flags) llvm::consumeError(flags.takeError());
                    if (!name) llvm::consumeError(name.takeError());
                    continue;
                }
                if (!process_symbols().findSymbol(name->str()))
                    internal_error("the object of ", symbol, " calls ", name->str(), ", which the process does not have");
            }
        for (const auto &file : files) dyld_.loadObject(*file);
        dyld_.resolveRelocations();
        if (dyld_.hasError()) internal_error("the object of ", symbol, " could not be linked: ", dyld_.getErrorString().str());
        dyld_.registerEHFrames();
        std::string err;
        if (memory_.finalizeMemory(&err)) internal_error("the code of ", symbol, " could not be made executable: ", err);
        address_ = lookup(symbol);
    }

private:
    llvm::SectionMemoryManager memory_;
    mutable llvm::RuntimeDyld dyld_;
    void *address_ = nullptr;
};

// The host CPU as codegen sees it (codegen::host_cpu also initializes LLVM's native target).
// Machine code at level Default (AOT objects use Aggressive): JIT compile time counts. The
// large code model, since loaded code may lie anywhere relative to the libraries it calls.
llvm::orc::JITTargetMachineBuilder jit_machine_builder() {
    codegen::CpuTarget host = codegen::host_cpu();
    llvm::orc::JITTargetMachineBuilder b{llvm::Triple(host.triple)};
    b.setCPU(host.cpu);
    llvm::SubtargetFeatures features(host.features);
    b.addFeatures(features.getFeatures());
    b.setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
    b.setCodeModel(llvm::CodeModel::Large);
    b.getOptions().AllowFPOpFusion = llvm::FPOpFusion::Standard;
    return b;
}

} // namespace

std::unique_ptr<llvm::TargetMachine> jit_target_machine() {
    static const llvm::orc::JITTargetMachineBuilder builder = jit_machine_builder();
    auto tm = llvm::orc::JITTargetMachineBuilder(builder).createTargetMachine();
    if (!tm) internal_error("could not create the JIT's TargetMachine: ", message(tm.takeError()));
    return std::move(*tm);
}

std::unique_ptr<JitCode> jit_load_objects(const std::vector<std::string_view> &objects, const std::string &symbol) {
    auto code = std::make_unique<LinkedObject>();
    code->link(objects, symbol);
    return code;
}

} // namespace tessera::runtime
