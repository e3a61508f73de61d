// The pipeline the compile-cache tests and their worker processes compile: a 3x3 blur of an
// InputBuffer, its divisor a parameter of the C++ that builds it (a different divisor is a
// different pipeline, so a different cache key).
#pragma once

#include <tessera/tessera.h>

namespace cache_test {

struct Blur {
    tessera::InputBuffer<float> input{"input", 2};
    tessera::Func blur_x{"blur_x"}, blur_y{"blur_y"};
    tessera::Pipeline pipeline;

    explicit Blur(float divisor = 3.0f) {
        tessera::Var x("x"), y("y");
        blur_x(x, y) = (input(x - 1, y) + input(x, y) + input(x + 1, y)) / divisor;
        blur_y(x, y) = (blur_x(x, y - 1) + blur_x(x, y) + blur_x(x, y + 1)) / divisor;
        pipeline = tessera::Pipeline(blur_y);
    }
};

// An input of w x h over [-1, w+1) x [-1, h+1) with values from `seed`.
inline tessera::Buffer<float> random_input(int w, int h, unsigned seed) {
    tessera::Buffer<float> in(w + 2, h + 2);
    in.set_min({-1, -1});
    unsigned s = seed;
    for (int y = -1; y <= h; ++y)
        for (int x = -1; x <= w; ++x) {
            s = s * 1664525u + 1013904223u;
            in(x, y) = float(s >> 8) / float(1 << 24);
        }
    return in;
}

// The largest difference between `out` and the blur computed by plain loops.
inline double max_error(const tessera::Buffer<float> &in, const tessera::Buffer<float> &out, float divisor) {
    double worst = 0;
    for (int y = 0; y < out.extent(1); ++y)
        for (int x = 0; x < out.extent(0); ++x) {
            float column[3];
            for (int k = 0; k < 3; ++k) column[k] = (in(x - 1, y + k - 1) + in(x, y + k - 1) + in(x + 1, y + k - 1)) / divisor;
            float ref = (column[0] + column[1] + column[2]) / divisor;
            worst = std::max(worst, double(std::abs(out(x, y) - ref)));
        }
    return worst;
}

} // namespace cache_test
