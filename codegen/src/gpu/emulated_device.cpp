// The device interface of the GPU emulator: each function reads the tessera_gpu_thread_t the
// emulator passes to the kernel as `device` (abi.h).
#include <cstddef>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "tessera/codegen/abi.h"
#include "tessera/codegen/gpu_target.h"

namespace tessera::codegen {

static_assert(sizeof(((tessera_gpu_thread_t *)nullptr)->thread) == 4 && sizeof(((tessera_gpu_thread_t *)nullptr)->threads) == 4 &&
                  sizeof(((tessera_gpu_thread_t *)nullptr)->block) == 8 && sizeof(((tessera_gpu_thread_t *)nullptr)->shared) == 8,
              "tessera_gpu_thread_t: int32 thread and threads, int64 block, pointers");

std::vector<std::string> kernel_names(const llvm::Module &m) {
    std::vector<std::string> names;
    for (const llvm::Function &f : m)
        if (f.hasFnAttribute(kKernelAttribute)) names.push_back(f.getName().str());
    return names;
}

void define_emulated_device(llvm::Module &m) {
    llvm::LLVMContext &ctx = m.getContext();
    llvm::IRBuilder<> b(ctx);
    auto define = [&](const char *name, auto &&body) {
        llvm::Function *f = m.getFunction(name);
        if (!f || !f->isDeclaration()) return;
        f->setLinkage(llvm::GlobalValue::InternalLinkage);
        f->addFnAttr(llvm::Attribute::AlwaysInline);
        f->addFnAttr(llvm::Attribute::NoUnwind);
        b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", f));
        body(f->getArg(0));
    };
    auto field = [&](llvm::Value *device, size_t offset) { return b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), device, offset); };
    define(kThreadIdFunction, [&](llvm::Value *d) {
        b.CreateRet(b.CreateLoad(b.getInt32Ty(), field(d, offsetof(tessera_gpu_thread_t, thread))));
    });
    define(kBlockSizeFunction, [&](llvm::Value *d) {
        b.CreateRet(b.CreateLoad(b.getInt32Ty(), field(d, offsetof(tessera_gpu_thread_t, threads))));
    });
    define(kBlockIdFunction, [&](llvm::Value *d) {
        b.CreateRet(b.CreateLoad(b.getInt64Ty(), field(d, offsetof(tessera_gpu_thread_t, block))));
    });
    define(kSharedFunction, [&](llvm::Value *d) {
        b.CreateRet(b.CreateLoad(b.getPtrTy(), field(d, offsetof(tessera_gpu_thread_t, shared))));
    });
    define(kBarrierFunction, [&](llvm::Value *d) {
        // Not inlined past: the emulator switches to the next thread inside.
        llvm::Value *fn = b.CreateLoad(b.getPtrTy(), field(d, offsetof(tessera_gpu_thread_t, barrier)));
        b.CreateCall(llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy()}, false), fn, {d});
        b.CreateRetVoid();
    });
}

} // namespace tessera::codegen
