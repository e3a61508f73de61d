// Ahead-of-time compilation: an object file and a C header that a plain C or C++ program links
// without LLVM or Tessera (only the OpenMP runtime, -lomp, and libm).
#pragma once

#include <string>

#include <tessera/callable.h>
#include <tessera/pipeline.h>

namespace tessera::runtime {

struct AotResult {
    std::string object_path, header_path;
    CompileReport report;
};

// Writes `<stem>.o` and `<stem>.h` defining `int32_t <function_name>(void **args,
// tessera_error_t *error)` (abi.h) for the host CPU. The header lists the arguments in order.
AotResult compile_to_files(const Pipeline &p, const std::string &stem, const std::string &function_name,
                           const CompileOptions &options = {});

} // namespace tessera::runtime
