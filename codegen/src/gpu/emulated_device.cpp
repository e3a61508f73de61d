// The device interface of the GPU emulator: each function reads the tessera_gpu_thread_t the
// emulator passes to the kernel as `device` (abi.h).
#include <cstddef>

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/GVN.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Vectorize/LoadStoreVectorizer.h>

#include "tessera/codegen/abi.h"
#include "tessera/codegen/gpu_target.h"

#include "device_interface.h"

namespace tessera::codegen {

static_assert(sizeof(((tessera_gpu_thread_t *)nullptr)->thread) == 4 && sizeof(((tessera_gpu_thread_t *)nullptr)->threads) == 4 &&
                  sizeof(((tessera_gpu_thread_t *)nullptr)->block) == 8 && sizeof(((tessera_gpu_thread_t *)nullptr)->shared) == 8,
              "tessera_gpu_thread_t: int32 thread and threads, int64 block, pointers");

std::vector<KernelName> kernel_names(const llvm::Module &m) {
    // Kernel k is named <function>_kernel<k>: created in launch order, but the module's
    // function list is not promised to keep it.
    std::vector<KernelName> names;
    for (const llvm::Function &f : m)
        if (f.hasFnAttribute(kKernelAttribute)) {
            std::string name = f.getName().str();
            size_t at = name.rfind("_kernel");
            size_t k = std::stoul(name.substr(at + 7));
            if (names.size() <= k) names.resize(k + 1);
            names[k] = {name, f.getFnAttribute(kKernelAttribute).getValueAsString().str()};
        }
    return names;
}

namespace {

// Whether `address` points into the block's shared memory: derived from tessera_gpu_shared.
bool is_shared(const llvm::Value *address) {
    const llvm::Value *base = llvm::getUnderlyingObject(address, 0);
    const auto *call = llvm::dyn_cast<llvm::CallInst>(base);
    return call && call->getCalledFunction() && call->getCalledFunction()->getName() == kSharedFunction;
}

// The loads and stores a GPU's back end combines, combined in the kernels here too: NVPTX runs
// LLVM's load-store vectorizer, which makes the accesses of a thread's consecutive columns that
// claim their alignment one vector access (column windows' 8-byte loads and stores), so that the
// traffic model counts the accesses the GPU makes. (After the IR is cleaned up as the GPU's O3
// would: the window's slots in registers, common addresses computed once, and a load of an
// element the thread already loaded, another column's, reused.)
void combine_accesses(llvm::Module &m) {
    llvm::PassBuilder pb;
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cam;
    llvm::ModuleAnalysisManager mam;
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cam, mam);
    llvm::FunctionPassManager fpm;
    fpm.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
    fpm.addPass(llvm::EarlyCSEPass());
    fpm.addPass(llvm::InstCombinePass());
    fpm.addPass(llvm::GVNPass());
    fpm.addPass(llvm::LoadStoreVectorizerPass());
    for (llvm::Function &f : m)
        if (f.hasFnAttribute(kKernelAttribute) && !f.isDeclaration()) fpm.run(f, fam);
}

// A call of tessera_gpu_access before every load and store of the kernels.
void instrument_accesses(llvm::Module &m) {
    llvm::LLVMContext &ctx = m.getContext();
    llvm::IRBuilder<> b(ctx);
    llvm::FunctionCallee access = m.getOrInsertFunction(kAccessFunction, b.getVoidTy(), b.getPtrTy(), b.getPtrTy(),
                                                        b.getInt32Ty(), b.getInt32Ty());
    const llvm::DataLayout &dl = m.getDataLayout();
    for (llvm::Function &f : m) {
        if (!f.hasFnAttribute(kKernelAttribute)) continue;
        int32_t site = 0;
        std::vector<llvm::Instruction *> accesses;
        for (llvm::BasicBlock &bb : f)
            for (llvm::Instruction &i : bb)
                if (llvm::isa<llvm::LoadInst>(i) || llvm::isa<llvm::StoreInst>(i)) accesses.push_back(&i);
        for (llvm::Instruction *i : accesses) {
            bool store = llvm::isa<llvm::StoreInst>(i);
            llvm::Value *address = store ? llvm::cast<llvm::StoreInst>(i)->getPointerOperand() : llvm::cast<llvm::LoadInst>(i)->getPointerOperand();
            llvm::Type *t = store ? llvm::cast<llvm::StoreInst>(i)->getValueOperand()->getType() : i->getType();
            // The kernel's own context words are read once per thread: not the pipeline's data.
            if (llvm::getUnderlyingObject(address, 0) == f.getArg(0)) continue;
            // Nor are a thread's own rows of a column window (registers on a GPU, once LLVM
            // promotes them: a call here would keep them in memory).
            if (llvm::isa<llvm::AllocaInst>(llvm::getUnderlyingObject(address, 0))) continue;
            int32_t flags = (is_shared(address) ? 2 : 0) | (store ? 1 : 0);
            // An access that claims more alignment than its size (a thread's columns loaded
            // together, which a GPU would load as one vector, faulting if misaligned) has the
            // claim checked: log2 of it in bits 24-28 of the size.
            uint64_t size = dl.getTypeStoreSize(t);
            uint64_t align = (store ? llvm::cast<llvm::StoreInst>(i)->getAlign() : llvm::cast<llvm::LoadInst>(i)->getAlign()).value();
            uint32_t claimed = align > size ? uint32_t(llvm::Log2_64(align)) << 24 : 0;
            b.SetInsertPoint(i);
            b.CreateCall(access, {f.getArg(1), address, b.getInt32(uint32_t(size) | claimed), b.getInt32(uint32_t(site++ * 4 + flags))});
        }
    }
}

} // namespace

void define_emulated_device(llvm::Module &m) {
    combine_accesses(m);
    instrument_accesses(m);
    llvm::IRBuilder<> b(m.getContext());
    auto field = [&](llvm::Value *device, size_t offset) { return b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), device, offset); };
    // A member of the thread's tessera_gpu_thread_t, returned.
    auto read = [&](const char *name, llvm::Type *type, size_t offset) {
        define_device_function(m, b, name, [&](llvm::Function *f) { b.CreateRet(b.CreateLoad(type, field(f->getArg(0), offset))); });
    };
    // A call of one of its function members with the function's own arguments. (The barrier is
    // not inlined past: the emulator switches to the next thread inside.)
    auto forward = [&](const char *name, size_t offset) {
        define_device_function(m, b, name, [&](llvm::Function *f) {
            llvm::Value *fn = b.CreateLoad(b.getPtrTy(), field(f->getArg(0), offset));
            std::vector<llvm::Value *> args;
            for (llvm::Argument &a : f->args()) args.push_back(&a);
            b.CreateCall(f->getFunctionType(), fn, args);
            b.CreateRetVoid();
        });
    };
    read(kThreadIdFunction, b.getInt32Ty(), offsetof(tessera_gpu_thread_t, thread));
    read(kBlockSizeFunction, b.getInt32Ty(), offsetof(tessera_gpu_thread_t, threads));
    read(kBlockIdFunction, b.getInt64Ty(), offsetof(tessera_gpu_thread_t, block));
    read(kSharedFunction, b.getPtrTy(), offsetof(tessera_gpu_thread_t, shared));
    forward(kAccessFunction, offsetof(tessera_gpu_thread_t, access));
    forward(kStepFunction, offsetof(tessera_gpu_thread_t, step));
    forward(kBarrierFunction, offsetof(tessera_gpu_thread_t, barrier));
}

} // namespace tessera::codegen
