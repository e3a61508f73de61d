// 16-bit floating point storage types: IEEE binary16 (float16_t) and bfloat16 (bfloat16_t).
//
// Conversions from float and double round to nearest, ties to even, directly from the source
// value (never through an intermediate float), handle subnormals, and overflow to infinity.
// Arithmetic on these types is done in float and rounded back, which gives the correctly
// rounded result for + - * / and sqrt because float has more than twice the precision.
#pragma once

#include <cstdint>

namespace tessera {

namespace detail {
// Rounds a double to the nearest binary16 value (ties to even); the result is exactly
// representable in binary16 (or is ±inf / NaN).
double round_to_float16(double value);
// Rounds a double to the nearest bfloat16 value (ties to even).
double round_to_bfloat16(double value);
uint16_t float16_bits_from_double(double value);
uint16_t bfloat16_bits_from_double(double value);
double double_from_float16_bits(uint16_t bits);
double double_from_bfloat16_bits(uint16_t bits);
} // namespace detail

struct float16_t {
    uint16_t bits = 0;

    float16_t() = default;
    explicit float16_t(double v) : bits(detail::float16_bits_from_double(v)) {}
    explicit float16_t(float v) : bits(detail::float16_bits_from_double(v)) {}
    explicit float16_t(int v) : bits(detail::float16_bits_from_double(v)) {}
    static float16_t from_bits(uint16_t b) {
        float16_t h;
        h.bits = b;
        return h;
    }
    double to_double() const { return detail::double_from_float16_bits(bits); }
    explicit operator double() const { return to_double(); }
    operator float() const { return static_cast<float>(to_double()); }
};

struct bfloat16_t {
    uint16_t bits = 0;

    bfloat16_t() = default;
    explicit bfloat16_t(double v) : bits(detail::bfloat16_bits_from_double(v)) {}
    explicit bfloat16_t(float v) : bits(detail::bfloat16_bits_from_double(v)) {}
    explicit bfloat16_t(int v) : bits(detail::bfloat16_bits_from_double(v)) {}
    static bfloat16_t from_bits(uint16_t b) {
        bfloat16_t h;
        h.bits = b;
        return h;
    }
    double to_double() const { return detail::double_from_bfloat16_bits(bits); }
    explicit operator double() const { return to_double(); }
    operator float() const { return static_cast<float>(to_double()); }
};

inline bool operator==(float16_t a, float16_t b) { return a.to_double() == b.to_double(); }
inline bool operator!=(float16_t a, float16_t b) { return !(a == b); }
inline bool operator==(bfloat16_t a, bfloat16_t b) { return a.to_double() == b.to_double(); }
inline bool operator!=(bfloat16_t a, bfloat16_t b) { return !(a == b); }

} // namespace tessera
