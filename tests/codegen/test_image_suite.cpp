// The PolyMage/Halide image-pipeline suite (camera_pipe, pyramid_blend, interpolate,
// local_laplacian): compiled for the host with 1 and 2 threads, and interpreted, against each
// app's plain C++ loops at odd, prime and smallest sizes. Integer outputs must match exactly.
#include "compiled_app_check.h"

using namespace tessera;
using compiled_app_check::check_compiled;
using compiled_app_check::check_interpreted;

TEST_CASE("compiled camera_pipe matches plain loops exactly", "[codegen][apps][image_suite]") {
    // The smallest raw image (a 1 x 1 output), odd and prime sizes, and one wider than a tile.
    check_compiled("camera_pipe", {{33, 25}, {34, 26}, {61, 45}, {101, 67}, {4200, 27}});
    CompileOptions none;
    none.fusion = "none";
    check_compiled("camera_pipe", {{47, 31}}, none);
    check_interpreted("camera_pipe", {{33, 25}, {61, 45}});
}
