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

} // namespace tessera
