// The argument list of a compiled pipeline: every input (InputBuffers and the concrete Buffers
// its definitions read), then every scalar Param, then every output, in a fixed order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <tessera/poly/model.h>

namespace tessera::codegen {

struct Argument {
    enum class Kind { Input, Param, Output };
    Kind kind;
    std::string name;
    Type type;
    int dimensions = 0;
    std::shared_ptr<InputContents> input;  // Input
    std::shared_ptr<ParamContents> param;  // Param
    int output = -1;                       // Output: index in the pipeline's outputs
};

std::vector<Argument> pipeline_arguments(const PipelineGraph &g, const Pipeline &p);
inline std::vector<Argument> pipeline_arguments(const poly::Model &m) { return pipeline_arguments(m.graph, m.pipeline); }

} // namespace tessera::codegen
