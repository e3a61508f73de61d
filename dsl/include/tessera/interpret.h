// The reference interpreter: evaluates a pipeline exactly, in the declared types, computing
// each Func over exactly the region its consumers need. It is the oracle of every test.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tessera/buffer.h"
#include "tessera/func.h"
#include "tessera/pipeline.h"

namespace tessera {

// What the interpreter computed: for each Func, the box (min, max per dimension) of its pure
// definition, and the number of points evaluated over all definitions.
struct InterpretReport {
    std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> computed_region;
    int64_t points = 0;
};

// Computes the outputs of `p` into `outputs` (one buffer per output, over its region).
void interpret(const Pipeline &p, const std::vector<Buffer<void>> &outputs, InterpretReport *report = nullptr);
// Computes the outputs of `p` over [0, sizes[i]).
Realization interpret(const Pipeline &p, const std::vector<int> &sizes);
Buffer<void> interpret(const Func &f, const std::vector<int> &sizes);
inline Realization interpret(const Pipeline &p, std::initializer_list<int> sizes) {
    return interpret(p, std::vector<int>(sizes));
}
inline Buffer<void> interpret(const Func &f, std::initializer_list<int> sizes) {
    return interpret(f, std::vector<int>(sizes));
}

} // namespace tessera
