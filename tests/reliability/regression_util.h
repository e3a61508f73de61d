// Helpers shared by the reliability regression tests.
#pragma once

#include "../test_util.h"

#include "tessera_apps/app.h"

namespace tessera {

// Bit-for-bit equality of two buffers (NaN equals NaN).
template <typename T>
bool same(const Buffer<T> &a, const Buffer<T> &b) {
    return apps::compare(Buffer<void>(a), Buffer<void>(b), 0).ok;
}

// Realizes `got` with the pipeline compiled for the host and `want` with the reference
// interpreter; the caller compares them.
template <typename T>
void realize_both(const Pipeline &p, const Buffer<T> &got, const Buffer<T> &want) {
    p.compile(Target::host(), {}).realize(got);
    interpret(p, std::vector<Buffer<void>>{Buffer<void>(want)});
}

} // namespace tessera
