// The reference interpreter: evaluates a pipeline exactly, in the declared types, computing
// each Func over exactly the region its consumers need. It is the oracle of every test.
#pragma once

#include <vector>

#include "tessera/buffer.h"
#include "tessera/func.h"
#include "tessera/pipeline.h"

namespace tessera {

// Computes the outputs of `p` into `outputs` (one buffer per output, over its region).
void interpret(const Pipeline &p, const std::vector<Buffer<void>> &outputs);
// Computes the outputs of `p` over [0, sizes[i]).
Realization interpret(const Pipeline &p, const std::vector<int> &sizes);
Buffer<void> interpret(const Func &f, const std::vector<int> &sizes);

} // namespace tessera
