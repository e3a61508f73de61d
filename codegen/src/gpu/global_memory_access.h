// Private to codegen's NVPTX back end: a kernel's accesses to its buffers in the global address
// space, and the read-only ones through the non-coherent path.
//
// Every pointer a kernel loads from its context array addresses device memory (a buffer's
// allocation or the global scratch), which the kernel lowering cannot say in its target-neutral
// IR. For
//
//   %w = load i64, ptr %context.i
//   %p = inttoptr i64 %w to ptr                      ; the input's base
//   %v = load float, ptr %q, !alias.scope !input     ; %q derived from %p
//
// this casts %p (or, in optimized IR, a pointer loaded from the context as such) to addrspace(1)
// and back, so that InferAddressSpaces (in NVPTX's code generation pipeline, after this) gives its loads and stores ld.global / st.global instead of generic ld / st; and
// marks the load !invariant.load when the kernel stores to no array of that alias scope
// (expr_lowering.cpp gives each input, scratchpad and output array a scope of its own), which
// NVPTX selects as ld.global.nc. A kernel with a store it cannot attribute to a scope (not to
// shared memory or the stack) gets no invariant loads.
#pragma once

#include <llvm/IR/Function.h>

namespace tessera::codegen {

// Returns the number of loads marked invariant.
int place_kernel_accesses_in_global_memory(llvm::Function &kernel);

} // namespace tessera::codegen
