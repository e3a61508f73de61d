// Whether this machine can run Target::cuda pipelines on a GPU: the CUDA driver library is
// opened with dlopen on first use (never linked), so asking is safe everywhere.
//
//   std::string why;
//   if (int sm = runtime::cuda_device_capability(&why)) pipeline.compile(Target::cuda(sm));
//   else std::printf("no GPU: %s\n", why.c_str());   // e.g. "libcuda.so.1 cannot be loaded (...)"
#pragma once

#include <string>

namespace tessera::runtime {

// Device 0's compute capability times 10 (80 for an A100, 90 for an H100), or 0 when there is
// no usable CUDA driver or GPU; then `why`, when given, says what is missing.
int cuda_device_capability(std::string *why = nullptr);

} // namespace tessera::runtime
