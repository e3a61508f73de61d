// A call to an input (a Buffer or an InputBuffer) with its coordinates checked: as many as the
// input has dimensions, defined, integer (converted to int32). Throws a UserError naming it.
#pragma once

#include <memory>
#include <vector>

#include "tessera/ir.h"

namespace tessera::detail {

Expr checked_input_call(const std::shared_ptr<InputContents> &in, std::vector<Expr> args);

} // namespace tessera::detail
