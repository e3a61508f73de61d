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

TEST_CASE("compiled pyramid_blend matches plain loops exactly", "[codegen][apps][image_suite]") {
    // Smaller than every level's filter, odd and prime sizes, and wider than a tile.
    check_compiled("pyramid_blend", {{1, 1}, {5, 3}, {37, 23}, {131, 67}, {4103, 9}});
    check_interpreted("pyramid_blend", {{5, 3}, {37, 23}});
}

TEST_CASE("compiled interpolate matches plain loops exactly", "[codegen][apps][image_suite]") {
    check_compiled("interpolate", {{1, 1}, {5, 3}, {37, 23}, {131, 67}});
    check_interpreted("interpolate", {{5, 3}});
}

TEST_CASE("compiled local_laplacian matches plain loops exactly", "[codegen][apps][image_suite]") {
    check_compiled("local_laplacian", {{1, 1}, {5, 3}, {37, 23}, {131, 67}});
    check_interpreted("local_laplacian", {{5, 3}});
}
