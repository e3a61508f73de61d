// Buffers in the global address space, read-only ones through ld.global.nc (global_memory_access.h).
#include "global_memory_access.h"

#include <set>

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>

namespace tessera::codegen {

namespace {

constexpr unsigned kGlobalAddressSpace = 1, kSharedAddressSpace = 3;

// Whether `v` is a value the kernel loaded from its context array (argument 0).
bool loaded_from_context(const llvm::Function &kernel, const llvm::Value *v) {
    const auto *load = llvm::dyn_cast<llvm::LoadInst>(v);
    return load && kernel.arg_size() > 0 && llvm::getUnderlyingObject(load->getPointerOperand()) == kernel.getArg(0);
}

// Whether a write through `pointer` cannot touch a buffer: it goes to the block's shared memory or
// to the thread's stack.
bool local_to_the_block(const llvm::Value *pointer) {
    const llvm::Value *object = llvm::getUnderlyingObject(pointer->stripPointerCasts());
    if (llvm::isa<llvm::AllocaInst>(object)) return true;
    if (const auto *g = llvm::dyn_cast<llvm::GlobalVariable>(object)) return g->getAddressSpace() == kSharedAddressSpace;
    if (const auto *call = llvm::dyn_cast<llvm::CallInst>(object))  // the device interface's shared memory
        return call->getCalledFunction() && call->getCalledFunction()->getName() == "tessera_gpu_shared";
    return false;
}

} // namespace

int place_kernel_accesses_in_global_memory(llvm::Function &kernel) {
    // Buffer pointers: a word of the context (inttoptr of it, or, once optimized, loaded as a
    // pointer), cast to global and back.
    std::vector<llvm::Instruction *> buffers;
    for (llvm::BasicBlock &bb : kernel)
        for (llvm::Instruction &i : bb) {
            bool pointer = i.getType()->isPointerTy() && i.getType()->getPointerAddressSpace() == 0;
            if (auto *cast = llvm::dyn_cast<llvm::IntToPtrInst>(&i); cast && pointer && loaded_from_context(kernel, cast->getOperand(0)))
                buffers.push_back(cast);
            else if (pointer && loaded_from_context(kernel, &i))
                buffers.push_back(&i);
        }
    for (llvm::Instruction *p : buffers) {
        llvm::IRBuilder<> b(p->getNextNode());
        llvm::Value *global = b.CreateAddrSpaceCast(p, llvm::PointerType::get(kernel.getContext(), kGlobalAddressSpace));
        llvm::Value *generic = b.CreateAddrSpaceCast(global, p->getType());
        p->replaceUsesWithIf(generic, [&](llvm::Use &u) { return u.getUser() != global; });
    }

    // The alias scopes the kernel writes; any write it cannot place makes every array written.
    std::set<const llvm::Metadata *> written;
    bool unplaced_write = false;
    for (llvm::BasicBlock &bb : kernel)
        for (llvm::Instruction &i : bb) {
            if (!i.mayWriteToMemory()) continue;
            const llvm::Value *pointer = nullptr;
            if (auto *s = llvm::dyn_cast<llvm::StoreInst>(&i)) pointer = s->getPointerOperand();
            else if (auto *a = llvm::dyn_cast<llvm::AtomicRMWInst>(&i)) pointer = a->getPointerOperand();
            else if (auto *c = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(&i)) pointer = c->getPointerOperand();
            else if (auto *m = llvm::dyn_cast<llvm::AnyMemIntrinsic>(&i)) pointer = m->getRawDest();
            else if (auto *call = llvm::dyn_cast<llvm::CallBase>(&i)) {
                const llvm::Function *callee = call->getCalledFunction();
                // Barriers, the device interface (thread indices) and libdevice's math write no buffer.
                if (callee && (callee->getName().starts_with("llvm.nvvm.barrier") || callee->getName().starts_with("tessera_gpu_") ||
                               callee->getName().starts_with("__nv_") || callee->onlyReadsMemory()))
                    continue;
                unplaced_write = true;
                continue;
            } else {
                unplaced_write = true;
                continue;
            }
            if (llvm::MDNode *scopes = i.getMetadata(llvm::LLVMContext::MD_alias_scope)) {
                for (const llvm::MDOperand &o : scopes->operands()) written.insert(o.get());
            } else if (!local_to_the_block(pointer)) {
                unplaced_write = true;
            }
        }
    if (unplaced_write) return 0;

    // Loads of arrays no store of this kernel writes: the same value wherever they run in it.
    int invariant = 0;
    for (llvm::BasicBlock &bb : kernel)
        for (llvm::Instruction &i : bb) {
            auto *load = llvm::dyn_cast<llvm::LoadInst>(&i);
            llvm::MDNode *scopes = load ? load->getMetadata(llvm::LLVMContext::MD_alias_scope) : nullptr;
            if (!scopes || load->isVolatile() || load->isAtomic()) continue;
            bool read_only = true;
            for (const llvm::MDOperand &o : scopes->operands()) read_only = read_only && !written.count(o.get());
            if (!read_only) continue;
            load->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(kernel.getContext(), {}));
            ++invariant;
        }
    return invariant;
}

} // namespace tessera::codegen
