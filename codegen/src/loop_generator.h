// Private to codegen: how loops marked parallel run (after Polly's LoopGenerators.h). One
// interface, one back end per target: the CPU's outlines the loop body and runs it on OpenMP
// threads (cpu/openmp_loops.cpp); a GPU target maps such loops onto blocks and threads.
#pragma once

#include <memory>

#include "function_lowering.h"

namespace tessera::codegen {

class ParallelLoopGenerator {
public:
    virtual ~ParallelLoopGenerator() = default;
    // Emits the parallel loop `loop` (outside any other parallel loop) at f's insertion point,
    // its body lowered through f with the scope `s`.
    virtual void emit(FunctionLowering &f, const poly::LoopNode &loop, Scope &s) = 0;
};

// OpenMP (libomp's __kmpc_fork_call, guided worksharing; a loop of one iteration serialized on
// the calling thread), the way Polly's LoopGeneratorsKMP does.
std::unique_ptr<ParallelLoopGenerator> make_openmp_loop_generator();

} // namespace tessera::codegen
