// The NVPTX back end: a GPU program's kernels as PTX text.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <mutex>

#include "tessera/codegen/cpu_target.h"
#include "tessera/codegen/gpu_target.h"
#include "tessera/error.h"

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

namespace tessera::codegen {

namespace {

constexpr const char *kTriple = "nvptx64-nvidia-cuda";

std::unique_ptr<llvm::TargetMachine> nvptx_machine(int sm) {
    static std::once_flag once;
    std::call_once(once, [] {
        LLVMInitializeNVPTXTargetInfo();
        LLVMInitializeNVPTXTarget();
        LLVMInitializeNVPTXTargetMC();
        LLVMInitializeNVPTXAsmPrinter();
    });
    std::string err;
    const llvm::Target *t = llvm::TargetRegistry::lookupTarget(kTriple, err);
    if (!t) internal_error("LLVM has no NVPTX target: ", err);
    // PTX ISA 7.8 covers sm_90 and everything before it (CUDA 12.0).
    std::string cpu = "sm_" + std::to_string(sm);
    llvm::TargetOptions options;
    return std::unique_ptr<llvm::TargetMachine>(
        t->createTargetMachine(kTriple, cpu, "+ptx78", options, std::nullopt, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
}

// The device interface with NVPTX's special registers, barrier and shared address space.
void define_nvptx_device(llvm::Module &m) {
    llvm::LLVMContext &ctx = m.getContext();
    llvm::IRBuilder<> b(ctx);
    auto define = [&](const char *name, auto &&body) {
        llvm::Function *f = m.getFunction(name);
        if (!f || !f->isDeclaration()) return;
        f->setLinkage(llvm::GlobalValue::InternalLinkage);
        f->addFnAttr(llvm::Attribute::AlwaysInline);
        f->addFnAttr(llvm::Attribute::NoUnwind);
        b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", f));
        body();
    };
    auto sreg = [&](llvm::Intrinsic::ID id) { return b.CreateCall(llvm::Intrinsic::getDeclaration(&m, id)); };
    define(kThreadIdFunction, [&] { b.CreateRet(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x)); });
    define(kBlockSizeFunction, [&] { b.CreateRet(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x)); });
    define(kBlockIdFunction, [&] { b.CreateRet(b.CreateZExt(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), b.getInt64Ty())); });
    define(kBarrierFunction, [&] {
        sreg(llvm::Intrinsic::nvvm_barrier0);
        b.CreateRetVoid();
    });
    define(kSharedFunction, [&] {
        // Dynamic shared memory: its size is given at launch.
        auto *shared = new llvm::GlobalVariable(m, llvm::ArrayType::get(b.getInt8Ty(), 0), false,
                                                llvm::GlobalValue::ExternalLinkage, nullptr, "tessera_shared", nullptr,
                                                llvm::GlobalValue::NotThreadLocal, 3);
        shared->setAlignment(llvm::Align(64));
        b.CreateRet(b.CreateAddrSpaceCast(shared, b.getPtrTy()));
    });
}

} // namespace

std::string emit_ptx(const llvm::Module &host, int sm) {
    if (sm < 50 || sm > 120) user_error("Target::cuda(", sm, "): the compute capability must be 50 to 120 (80 for sm_80).");
    llvm::ValueToValueMapTy map;
    std::unique_ptr<llvm::Module> m = llvm::CloneModule(host, map, [](const llvm::GlobalValue *gv) {
        if (llvm::isa<llvm::GlobalVariable>(gv)) return true;  // constant tables the kernels may read
        const auto *f = llvm::dyn_cast<llvm::Function>(gv);
        return f && f->hasFnAttribute(kKernelAttribute);
    });
    // Only the kernels and what they call stay.
    std::vector<llvm::GlobalValue *> unused;
    for (llvm::Function &f : *m)
        if (f.isDeclaration() && f.use_empty()) unused.push_back(&f);
    for (llvm::GlobalVariable &g : m->globals())
        if (g.use_empty()) unused.push_back(&g);
    for (llvm::GlobalValue *g : unused) {
        g->replaceAllUsesWith(llvm::PoisonValue::get(g->getType()));
        g->eraseFromParent();
    }
    for (llvm::Function &f : *m) {
        if (!f.isDeclaration() || f.isIntrinsic()) continue;
        std::string name = f.getName().str();
        if (name.rfind("tessera_gpu_", 0) == 0) continue;
        user_error("The GPU kernel calls ", name, ", which NVPTX cannot compile without CUDA's libdevice (not linked yet). "
                   "Compile for the host, or avoid that math in the pipeline.");
    }
    std::unique_ptr<llvm::TargetMachine> tm = nvptx_machine(sm);
    m->setTargetTriple(kTriple);
    m->setDataLayout(tm->createDataLayout());
    define_nvptx_device(*m);
    llvm::NamedMDNode *annotations = m->getOrInsertNamedMetadata("nvvm.annotations");
    for (llvm::Function &f : *m) {
        if (!f.hasFnAttribute(kKernelAttribute)) continue;
        f.setCallingConv(llvm::CallingConv::PTX_Kernel);
        llvm::LLVMContext &ctx = m->getContext();
        annotations->addOperand(llvm::MDNode::get(
            ctx, {llvm::ValueAsMetadata::get(&f), llvm::MDString::get(ctx, "kernel"),
                  llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), 1))}));
    }
    // Intrinsics NVPTX cannot select (exp, log, pow, sin, cos need libdevice).
    for (llvm::Function &f : *m) {
        if (!f.isIntrinsic()) continue;
        llvm::Intrinsic::ID id = f.getIntrinsicID();
        if (id == llvm::Intrinsic::exp || id == llvm::Intrinsic::log || id == llvm::Intrinsic::pow ||
            id == llvm::Intrinsic::sin || id == llvm::Intrinsic::cos)
            user_error("The GPU kernel uses ", f.getName().str(),
                       ", which NVPTX compiles only with CUDA's libdevice (not linked yet). Compile for the host, or run "
                       "the pipeline under the emulator (Target::cuda(sm).emulated()).");
    }
    std::string err;
    llvm::raw_string_ostream os(err);
    if (llvm::verifyModule(*m, &os)) internal_error("the NVPTX module is invalid: ", os.str());
    optimize_module(*m, *tm);
    return emit_assembly(*m, *tm);
}

} // namespace tessera::codegen
