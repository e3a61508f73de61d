// A pipeline written out as text: every Func, input and Param it depends on, with every
// definition, in dependency order. The text is exact (float constants to the last bit) and
// unambiguous (two Funcs, inputs, Params or RDoms that share a name are told apart by `#k`),
// so it identifies the pipeline: the compile cache digests it into its key. For blur:
//
//   input in : uint16, 2 dimensions
//   func blur_x(x, y) : uint16
//     blur_x(x, y) = (((in(x + -1, y) + in(x, y)) + in(x + 1, y))/(uint16)3)
//   func blur_y(x, y) : uint16
//     blur_y(x, y) = (((blur_x(x, y + -1) + blur_x(x, y)) + blur_x(x, y + 1))/(uint16)3)
//   output blur_y
//
// A buffer's elements are not part of it (compiled code reads them when it runs); a concrete
// Buffer's region is, as is an imported schedule.
#pragma once

#include <string>

namespace tessera {

class Pipeline;

std::string pipeline_text(const Pipeline &p);

} // namespace tessera
