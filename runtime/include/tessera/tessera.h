// Tessera: a Halide-like DSL for image and tensor pipelines with a polyhedral optimizer.
// Include this one header.
#pragma once

#include "tessera/boundary.h"
#include "tessera/buffer.h"
#include "tessera/callable.h"
#include "tessera/error.h"
#include "tessera/expr.h"
#include "tessera/float16.h"
#include "tessera/func.h"
#include "tessera/interpret.h"
#include "tessera/param.h"
#include "tessera/pipeline.h"
#include "tessera/reduction.h"
#include "tessera/runtime/cuda_device.h"
#include "tessera/runtime/executor.h"
#include "tessera/target_info.h"
#include "tessera/type.h"
#include "tessera/var.h"

namespace tessera::detail {
// Installs the runtime's executor in every program that includes this header, so that
// Pipeline::realize runs scheduled code and Pipeline::schedule_json works.
inline const bool runtime_installed = (runtime::install_executor(), true);
} // namespace tessera::detail
