// PolyBench's arrays in the apps (polybench.cpp, polybench_stencils.cpp): C-style arrays for the
// reference loop nests, and random inputs bound to the DSL's input buffers.
#pragma once

#include <cmath>
#include <vector>

#include "tessera_apps/app.h"

namespace tessera::apps::polybench {

// PolyBench's arrays as C-style arrays: m[i][j] is element (j, i) of the buffer.
using Vec = std::vector<double>;
using Mat = std::vector<Vec>;

inline Vec zeros(int n) { return Vec(size_t(n)); }
inline Mat zeros(int rows, int columns) { return Mat(size_t(rows), zeros(columns)); }

inline Vec vec_of(const Buffer<double> &b) {
    Vec v(size_t(b.width()));
    for (int i = 0; i < b.width(); ++i) v[size_t(i)] = b(i);
    return v;
}

inline Mat mat_of(const Buffer<double> &b) {
    Mat m(size_t(b.height()), Vec(size_t(b.width())));
    for (int i = 0; i < b.height(); ++i)
        for (int j = 0; j < b.width(); ++j) m[size_t(i)][size_t(j)] = b(j, i);
    return m;
}

inline void store(const Vec &v, const Buffer<double> &b) {
    for (int i = 0; i < b.width(); ++i) b(i) = v[size_t(i)];
}

inline void store(const Mat &m, const Buffer<double> &b) {
    for (int i = 0; i < b.height(); ++i)
        for (int j = 0; j < b.width(); ++j) b(j, i) = m[size_t(i)][size_t(j)];
}

// A buffer of the given sizes (dimension 0 first) with random values in [-1, 1), bound to `in`.
inline Buffer<double> random_input(const InputBuffer<double> &in, const std::vector<int> &sizes, std::mt19937 &rng) {
    Buffer<double> b(sizes);
    fill_random(b, rng, -1.0, 1.0);
    in.set(b);
    return b;
}

inline double elements(const std::vector<Buffer<double>> &buffers) {
    double n = 0;
    for (const auto &b : buffers) n += double(b.number_of_elements());
    return n;
}

} // namespace tessera::apps::polybench
