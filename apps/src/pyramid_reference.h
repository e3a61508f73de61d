// What the multi-scale apps (pyramid_blend, interpolate, local_laplacian) share: the
// coordinates of a pyramid level's Func, and plain-C++ pyramid levels for their references.
//
// A DSL Func is defined everywhere, and a pyramid of Funcs is computed over whatever region its
// consumers read, which grows by a few pixels per level on the way down. The references do not
// infer those regions: each level is an Image over the level's extent plus a margin that is
// larger than anything read (margin(l) in each app), and a read outside an Image is clamped to
// its edge. Clamped reads happen only in the outermost pixels of a margin, and no output pixel
// depends on them, so the references compute exactly what the Funcs define.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "tessera_apps/app.h"

namespace tessera::apps {

// The Vars of a pyramid level's Func: x, y and, for a 3-D level, `third` (a channel, an
// intensity level).
inline std::vector<Var> level_vars(int dimensions, const std::string &third) {
    std::vector<Var> v{Var("x"), Var("y")};
    if (dimensions == 3) v.push_back(Var(third));
    return v;
}

// The coordinates a level's Func is called with: x and y changed, the rest as is.
inline std::vector<Expr> at(const std::vector<Var> &vars, Expr x, Expr y) {
    std::vector<Expr> args{std::move(x), std::move(y)};
    for (size_t i = 2; i < vars.size(); ++i) args.push_back(vars[i]);
    return args;
}

template <typename T>
struct Image {
    int x0 = 0, y0 = 0, w = 0, h = 0, channels = 1;
    std::vector<T> v;

    Image() = default;
    Image(int x0_, int y0_, int w_, int h_, int channels_ = 1)
        : x0(x0_), y0(y0_), w(w_), h(h_), channels(channels_), v(size_t(w_) * size_t(h_) * size_t(channels_)) {}
    // The image of a level of `extent_x` x `extent_y` pixels with `margin` pixels on every side.
    static Image with_margin(int extent_x, int extent_y, int margin, int channels_ = 1) {
        return Image(-margin, -margin, extent_x + 2 * margin, extent_y + 2 * margin, channels_);
    }

    size_t index(int x, int y, int c) const {
        return (size_t(c) * size_t(h) + size_t(y - y0)) * size_t(w) + size_t(x - x0);
    }
    T &at(int x, int y, int c = 0) { return v[index(x, y, c)]; }
    T operator()(int x, int y, int c = 0) const {
        return v[index(std::clamp(x, x0, x0 + w - 1), std::clamp(y, y0, y0 + h - 1), c)];
    }
    // Sets every pixel of every channel to f(x, y, c).
    template <typename F>
    void fill(F &&f) {
        for (int c = 0; c < channels; ++c) {
            TESSERA_REFERENCE_PARALLEL_FOR
            for (int y = y0; y < y0 + h; ++y)
                for (int x = x0; x < x0 + w; ++x) at(x, y, c) = f(x, y, c);
        }
    }
};

// Floor division and a non-negative remainder (the DSL's, for a positive divisor).
inline int floor_div(int a, int b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
inline int floor_mod(int a, int b) { return a - floor_div(a, b) * b; }

// Pixels of level l of a pyramid over `extent` pixels at level 0: ceil(extent / 2^l).
inline int level_extent(int extent, int l) { return (extent + (1 << l) - 1) >> l; }

} // namespace tessera::apps
