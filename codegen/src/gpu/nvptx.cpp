// The NVPTX back end: a GPU program's kernels as PTX text.
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "tessera/codegen/cpu_target.h"
#include "tessera/codegen/gpu_target.h"
#include "tessera/error.h"

#include "device_interface.h"
#include "global_memory_access.h"

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
    llvm::IRBuilder<> b(m.getContext());
    auto define = [&](const char *name, auto &&body) { define_device_function(m, b, name, [&](llvm::Function *) { body(); }); };
    auto sreg = [&](llvm::Intrinsic::ID id) { return b.CreateCall(llvm::Intrinsic::getDeclaration(&m, id)); };
    define(kThreadIdFunction, [&] { b.CreateRet(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x)); });
    define(kBlockSizeFunction, [&] { b.CreateRet(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x)); });
    define(kBlockIdFunction, [&] { b.CreateRet(b.CreateZExt(sreg(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x), b.getInt64Ty())); });
    define(kBarrierFunction, [&] {
        sreg(llvm::Intrinsic::nvvm_barrier0);
        b.CreateRetVoid();
    });
    define(kStepFunction, [&] { b.CreateRetVoid(); });
    define(kSharedFunction, [&] {
        // Dynamic shared memory: its size is given at launch.
        auto *shared = new llvm::GlobalVariable(m, llvm::ArrayType::get(b.getInt8Ty(), 0), false,
                                                llvm::GlobalValue::ExternalLinkage, nullptr, "tessera_shared", nullptr,
                                                llvm::GlobalValue::NotThreadLocal, 3);
        shared->setAlignment(llvm::Align(64));
        b.CreateRet(b.CreateAddrSpaceCast(shared, b.getPtrTy()));
    });
}

// CUDA's libdevice: $CUDA_HOME/nvvm/libdevice/libdevice.10.bc, else the toolkit's default
// location; "" when there is none.
std::string libdevice_path() {
    std::vector<std::string> homes;
    if (const char *home = std::getenv("CUDA_HOME")) homes.push_back(home);
    if (const char *home = std::getenv("CUDA_PATH")) homes.push_back(home);
    homes.push_back("/usr/local/cuda");
    homes.push_back("/usr/lib/cuda");
    for (const std::string &h : homes) {
        std::string p = h + "/nvvm/libdevice/libdevice.10.bc";
        if (std::filesystem::exists(p)) return p;
    }
    return "";
}

// The math intrinsics NVPTX cannot select, and libdevice's functions for them (float, double).
struct LibdeviceMath {
    llvm::Intrinsic::ID id;
    const char *f32, *f64;
};
constexpr LibdeviceMath kLibdeviceMath[] = {
    {llvm::Intrinsic::exp, "__nv_expf", "__nv_exp"}, {llvm::Intrinsic::log, "__nv_logf", "__nv_log"},
    {llvm::Intrinsic::pow, "__nv_powf", "__nv_pow"}, {llvm::Intrinsic::sin, "__nv_sinf", "__nv_sin"},
    {llvm::Intrinsic::cos, "__nv_cosf", "__nv_cos"},
};

// Calls of exp, log, pow, sin and cos become calls of libdevice's functions, linked in and
// internalized (NVVMReflect, in the NVPTX pass pipeline, then resolves libdevice's
// __nvvm_reflect queries: no flush-to-zero, as on the host). False when the module needs
// libdevice and the toolkit has none.
bool link_libdevice(llvm::Module &m) {
    std::vector<llvm::Function *> math;
    std::vector<std::pair<llvm::Function *, const char *>> libm;  // the host's libm calls (tan, tanh)
    for (llvm::Function &f : m) {
        for (const LibdeviceMath &l : kLibdeviceMath)
            if (f.isIntrinsic() && f.getIntrinsicID() == l.id) math.push_back(&f);
        for (const char *name : {"tanf", "tan", "tanhf", "tanh"})
            if (f.isDeclaration() && f.getName() == name) libm.emplace_back(&f, name);
    }
    if (math.empty() && libm.empty()) return true;
    std::string path = libdevice_path();
    if (path.empty()) return false;
    for (llvm::Function *f : math) {
        const LibdeviceMath *l = nullptr;
        for (const LibdeviceMath &c : kLibdeviceMath)
            if (c.id == f->getIntrinsicID()) l = &c;
        llvm::Type *t = f->getReturnType();
        if (!t->isFloatTy() && !t->isDoubleTy())
            user_error("The GPU kernel uses ", f->getName().str(), " on ", t->isVectorTy() ? "vectors" : "a type libdevice lacks",
                       "; compile it for the host.");
        llvm::FunctionCallee callee = m.getOrInsertFunction(t->isFloatTy() ? l->f32 : l->f64, f->getFunctionType());
        f->replaceAllUsesWith(callee.getCallee());
        f->eraseFromParent();
    }
    for (auto &[f, name] : libm) {
        llvm::FunctionCallee callee = m.getOrInsertFunction(std::string("__nv_") + name, f->getFunctionType());
        f->replaceAllUsesWith(callee.getCallee());
        f->eraseFromParent();
    }
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer) internal_error("cannot read ", path, ": ", buffer.getError().message());
    auto lib = llvm::parseBitcodeFile((*buffer)->getMemBufferRef(), m.getContext());
    if (!lib) internal_error("cannot parse ", path, ": ", llvm::toString(lib.takeError()));
    (*lib)->setTargetTriple(m.getTargetTriple());
    (*lib)->setDataLayout(m.getDataLayout());
    if (llvm::Linker::linkModules(m, std::move(*lib), llvm::Linker::Flags::LinkOnlyNeeded))
        internal_error("linking libdevice into the GPU kernels failed");
    for (llvm::Function &f : m)
        if (!f.isDeclaration() && !f.hasFnAttribute(kKernelAttribute)) f.setLinkage(llvm::GlobalValue::InternalLinkage);
    m.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t(0));
    return true;
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
    std::unique_ptr<llvm::TargetMachine> tm = nvptx_machine(sm);
    m->setTargetTriple(kTriple);
    m->setDataLayout(tm->createDataLayout());
    define_nvptx_device(*m);
    llvm::NamedMDNode *annotations = m->getOrInsertNamedMetadata("nvvm.annotations");
    for (llvm::Function &f : *m) {
        if (!f.hasFnAttribute(kKernelAttribute)) continue;
        f.setCallingConv(llvm::CallingConv::PTX_Kernel);
        llvm::LLVMContext &ctx = m->getContext();
        // A small context is the kernel's parameter by value (.param .b8 [8 * words]): read with
        // ld.param, no device memory per launch (CudaProgram::launch passes the host's words).
        long words = std::stol(f.getFnAttribute(kContextWordsAttribute).getValueAsString().str());
        if (context_by_value(words)) {
            f.getArg(0)->addAttr(llvm::Attribute::getWithByValType(ctx, llvm::ArrayType::get(llvm::Type::getInt64Ty(ctx), uint64_t(words))));
            f.getArg(0)->addAttr(llvm::Attribute::getWithAlignment(ctx, llvm::Align(8)));
        }
        annotations->addOperand(llvm::MDNode::get(
            ctx, {llvm::ValueAsMetadata::get(&f), llvm::MDString::get(ctx, "kernel"),
                  llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), 1))}));
    }
    // Intrinsics NVPTX cannot select (exp, log, pow, sin, cos) come from CUDA's libdevice.
    if (!link_libdevice(*m))
        user_error("The GPU kernels use exp, log, pow, sin or cos, which NVPTX compiles with CUDA's libdevice "
                   "(nvvm/libdevice/libdevice.10.bc), and no CUDA toolkit was found ($CUDA_HOME, /usr/local/cuda). "
                   "Install the toolkit or set CUDA_HOME.");
    for (llvm::Function &f : *m) {
        if (!f.isDeclaration() || f.isIntrinsic() || f.use_empty()) continue;
        std::string name = f.getName().str();
        if (name.rfind("tessera_gpu_", 0) == 0 || name == "__nvvm_reflect") continue;  // (NVVMReflect resolves it)
        internal_error("the GPU kernel calls ", name, ", which has no definition on the GPU");
    }
    std::string err;
    llvm::raw_string_ostream os(err);
    if (llvm::verifyModule(*m, &os)) internal_error("the NVPTX module is invalid: ", os.str());
    optimize_module(*m, *tm);
    // Buffers in the global address space; inputs a kernel only reads through ld.global.nc. After
    // the optimization, which would fold the casts away before code generation's
    // InferAddressSpaces sees them.
    for (llvm::Function &f : *m)
        if (f.hasFnAttribute(kKernelAttribute)) place_kernel_accesses_in_global_memory(f);
    return emit_assembly(*m, *tm);
}

} // namespace tessera::codegen
