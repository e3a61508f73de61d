#include "tessera/float16.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace tessera::detail {
namespace {

// Layout of a binary floating-point format narrower than double.
struct FloatFormat {
    int mantissa_bits;  // explicit fraction bits
    int min_exponent;   // exponent of the smallest normal number
    int max_exponent;   // exponent of the largest finite binade
    int exponent_bias;
};

constexpr FloatFormat kFloat16{10, -14, 15, 15};
constexpr FloatFormat kBFloat16{7, -126, 127, 127};

// Rounds a finite value to the format, ties to even. The value is scaled by a power of two so
// that the quantum of its binade is 1, rounded with nearbyint (exact: scaling by powers of two
// is exact in double), and scaled back. Overflow past the largest binade gives infinity.
double round_to_format(double value, const FloatFormat &f) {
    if (std::isnan(value) || std::isinf(value) || value == 0.0) return value;
    double a = std::fabs(value);
    int e = 0;
    std::frexp(a, &e);  // a = m * 2^e with m in [0.5, 1)
    int exponent = e - 1;
    if (exponent < f.min_exponent) exponent = f.min_exponent;
    int quantum_exp = exponent - f.mantissa_bits;
    double r = std::ldexp(std::nearbyint(std::ldexp(a, -quantum_exp)), quantum_exp);
    if (r >= std::ldexp(1.0, f.max_exponent + 1)) r = std::numeric_limits<double>::infinity();
    return std::signbit(value) ? -r : r;
}

uint16_t encode(double value, const FloatFormat &f) {
    uint16_t sign = std::signbit(value) ? uint16_t(1u << 15) : uint16_t(0);
    int exp_field_max = (1 << (15 - f.mantissa_bits)) - 1;
    uint16_t inf_bits = uint16_t(exp_field_max << f.mantissa_bits);
    if (std::isnan(value)) return uint16_t(inf_bits | (1u << (f.mantissa_bits - 1)));
    double r = std::fabs(round_to_format(value, f));
    if (std::isinf(r)) return uint16_t(sign | inf_bits);
    if (r == 0.0) return sign;
    if (r < std::ldexp(1.0, f.min_exponent)) {
        // Subnormal: an integer multiple of the smallest quantum.
        double n = std::ldexp(r, f.mantissa_bits - f.min_exponent);
        return uint16_t(sign | uint16_t(n));
    }
    int e = 0;
    double m = std::frexp(r, &e);  // r = m * 2^e, m in [0.5, 1)
    int exponent = e - 1;
    double frac = std::ldexp(m * 2.0 - 1.0, f.mantissa_bits);
    return uint16_t(sign | uint16_t((exponent + f.exponent_bias) << f.mantissa_bits) |
                    uint16_t(frac));
}

double decode(uint16_t bits, const FloatFormat &f) {
    bool negative = (bits >> 15) & 1;
    int exp_field = (bits >> f.mantissa_bits) & ((1 << (15 - f.mantissa_bits)) - 1);
    int exp_field_max = (1 << (15 - f.mantissa_bits)) - 1;
    uint32_t frac = bits & ((1u << f.mantissa_bits) - 1);
    double r;
    if (exp_field == exp_field_max) {
        r = frac ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    } else if (exp_field == 0) {
        r = std::ldexp(double(frac), f.min_exponent - f.mantissa_bits);
    } else {
        r = std::ldexp(1.0 + std::ldexp(double(frac), -f.mantissa_bits), exp_field - f.exponent_bias);
    }
    return negative ? -r : r;
}

} // namespace

double round_to_float16(double value) { return round_to_format(value, kFloat16); }
double round_to_bfloat16(double value) { return round_to_format(value, kBFloat16); }
uint16_t float16_bits_from_double(double value) { return encode(value, kFloat16); }
uint16_t bfloat16_bits_from_double(double value) { return encode(value, kBFloat16); }
double double_from_float16_bits(uint16_t bits) { return decode(bits, kFloat16); }
double double_from_bfloat16_bits(uint16_t bits) { return decode(bits, kBFloat16); }

} // namespace tessera::detail
