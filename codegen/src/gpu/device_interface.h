// Private to codegen: how a GPU target defines the device interface its kernels call
// (gpu_target.h), shared by the NVPTX back end and the emulator.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

namespace tessera::codegen {

// Defines the device-interface function `name` of `m` if the kernels declare it: internal and
// always inlined; `body(f)` emits its code at b's insertion point, the start of its entry block.
template <typename Body>
void define_device_function(llvm::Module &m, llvm::IRBuilder<> &b, const char *name, Body &&body) {
    llvm::Function *f = m.getFunction(name);
    if (!f || !f->isDeclaration()) return;
    f->setLinkage(llvm::GlobalValue::InternalLinkage);
    f->addFnAttr(llvm::Attribute::AlwaysInline);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    b.SetInsertPoint(llvm::BasicBlock::Create(m.getContext(), "entry", f));
    body(f);
}

} // namespace tessera::codegen
