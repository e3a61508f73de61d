// What the GPU kernel lowering's files share (kernel_lowering.cpp, column_windows.cpp).
#pragma once

#include <string>
#include <vector>

#include "../function_lowering.h"
#include "tessera/codegen/gpu_target.h"

namespace tessera::codegen {

// max(0, (hi - lo) / step + 1): the iterations of `for (v = lo; v <= hi; v += step)`.
llvm::Value *trip_count(FunctionLowering &f, llvm::Value *lo, llvm::Value *hi, int64_t step);

// The scope of the statement instance a call node runs in scope `s`: its instance Vars bound to
// the call's coordinates (int32, as FunctionLowering::call binds them).
Scope instance_scope(FunctionLowering &f, const poly::LoopNode &call, const Scope &s);

// Whether `e` reads the loop variable `var`.
bool reads_var(const Expr &e, const std::string &var);

// The loop that spreads `count` iterations k over the block's threads: thread t runs k = t,
// t + blockDim, ... (the emulator's traffic model told each step). Emits its head and leaves the
// insertion point in its body, k its variable; finish() closes it after the body.
struct ThreadSteps {
    ThreadSteps(FunctionLowering &f, const std::string &name, llvm::Value *count) : f(f) {
        step = f.module.getOrInsertFunction(kStepFunction, f.b.getVoidTy(), f.b.getPtrTy(), f.b.getInt64Ty());
        f.b.CreateCall(step, {f.kernel->device, f.i64(-1)});
        llvm::BasicBlock *pre = f.b.GetInsertBlock();
        head = llvm::BasicBlock::Create(f.ctx, name + ".threads", f.function);
        llvm::BasicBlock *body = llvm::BasicBlock::Create(f.ctx, name + ".thread", f.function);
        exit = llvm::BasicBlock::Create(f.ctx, name + ".threads.exit", f.function);
        f.b.CreateBr(head);
        f.b.SetInsertPoint(head);
        k = f.b.CreatePHI(f.b.getInt64Ty(), 2);
        k->addIncoming(f.kernel->thread, pre);
        f.b.CreateCondBr(f.b.CreateICmpSLT(k, count), body, exit);
        f.b.SetInsertPoint(body);
        f.b.CreateCall(step, {f.kernel->device, f.b.CreateSDiv(k, f.kernel->threads)});
    }
    void finish() {
        k->addIncoming(f.b.CreateAdd(k, f.kernel->threads), f.b.GetInsertBlock());
        f.b.CreateBr(head);
        f.b.SetInsertPoint(exit);
    }
    FunctionLowering &f;
    llvm::FunctionCallee step;
    llvm::BasicBlock *head, *exit;
    llvm::PHINode *k;
};


// The column windows below the thread loop `threads` (column_windows.cpp): the storage of each
// Func a statement below it writes that poly keeps in threads' column windows.
std::vector<size_t> windows_below(const FunctionLowering &f, const poly::LoopNode &threads);

// The thread loop `threads` over the columns of the column windows `windows` (windows_below):
// each thread its columns, their rows in its registers (column_windows.cpp).
void column_window_for(FunctionLowering &f, const poly::LoopNode &threads, const std::vector<size_t> &windows, Scope &s);

} // namespace tessera::codegen
