// Scalar types of the DSL.
//
// A Type is a code (signed int, unsigned int, IEEE float, bfloat) and a bit width. bool is
// UInt(1), as in Halide. Promotion rules for mixed-type arithmetic are implemented by
// match_types() in expr.cpp and documented in docs/dsl.md.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "tessera/float16.h"

namespace tessera {

enum class TypeCode : uint8_t { Int, UInt, Float, BFloat };

struct Type {
    TypeCode code = TypeCode::Int;
    int bits = 32;

    constexpr Type() = default;
    constexpr Type(TypeCode c, int b) : code(c), bits(b) {}

    bool is_int() const { return code == TypeCode::Int; }
    bool is_uint() const { return code == TypeCode::UInt; }
    bool is_bool() const { return code == TypeCode::UInt && bits == 1; }
    // Signed or unsigned integer, bool included.
    bool is_int_or_uint() const { return code == TypeCode::Int || code == TypeCode::UInt; }
    // IEEE float of any width, or bfloat16.
    bool is_float() const { return code == TypeCode::Float || code == TypeCode::BFloat; }
    int bytes() const { return bits == 1 ? 1 : bits / 8; }

    // Largest and smallest values, as doubles (exact for every integer type up to 53 bits).
    double max_value() const;
    double min_value() const;
    // Whether the integer `v` is exactly representable in this type.
    bool can_represent(int64_t v) const;
    bool can_represent_double(double v) const;

    bool operator==(const Type &o) const { return code == o.code && bits == o.bits; }
    bool operator!=(const Type &o) const { return !(*this == o); }

    // "int32", "uint8", "bool", "float32", "float16", "bfloat16"...
    std::string to_string() const;
};

constexpr Type Int(int bits) { return Type(TypeCode::Int, bits); }
constexpr Type UInt(int bits) { return Type(TypeCode::UInt, bits); }
constexpr Type Float(int bits) { return Type(TypeCode::Float, bits); }
constexpr Type BFloat(int bits) { return Type(TypeCode::BFloat, bits); }
constexpr Type Bool() { return Type(TypeCode::UInt, 1); }

// The DSL type of a C++ scalar type.
template <typename T>
constexpr Type type_of() {
    if constexpr (std::is_same_v<T, bool>) return Bool();
    else if constexpr (std::is_same_v<T, float16_t>) return Float(16);
    else if constexpr (std::is_same_v<T, bfloat16_t>) return BFloat(16);
    else if constexpr (std::is_floating_point_v<T>) return Float(int(sizeof(T) * 8));
    else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) return Int(int(sizeof(T) * 8));
    else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) return UInt(int(sizeof(T) * 8));
    else {
        static_assert(!sizeof(T), "type_of<T>: T is not a scalar type Tessera supports");
        return Type();
    }
}

std::ostream &operator<<(std::ostream &s, const Type &t);

} // namespace tessera
