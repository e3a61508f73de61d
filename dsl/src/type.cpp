#include "tessera/type.h"

#include <cmath>
#include <limits>
#include <ostream>

namespace tessera {

double Type::max_value() const {
    switch (code) {
    case TypeCode::Int: return std::ldexp(1.0, bits - 1) - 1;
    case TypeCode::UInt: return std::ldexp(1.0, bits) - 1;
    case TypeCode::Float:
        if (bits == 16) return 65504.0;
        if (bits == 32) return std::numeric_limits<float>::max();
        return std::numeric_limits<double>::max();
    case TypeCode::BFloat: return std::ldexp(255.0, 120);  // (2 - 2^-7) * 2^127
    }
    return 0;
}

double Type::min_value() const {
    switch (code) {
    case TypeCode::Int: return -std::ldexp(1.0, bits - 1);
    case TypeCode::UInt: return 0;
    case TypeCode::Float:
    case TypeCode::BFloat: return -max_value();
    }
    return 0;
}

bool Type::can_represent(int64_t v) const {
    switch (code) {
    case TypeCode::Int:
        if (bits == 64) return true;
        return v >= -(int64_t(1) << (bits - 1)) && v < (int64_t(1) << (bits - 1));
    case TypeCode::UInt:
        if (v < 0) return false;
        if (bits == 64) return true;
        return uint64_t(v) < (uint64_t(1) << bits);
    case TypeCode::Float:
    case TypeCode::BFloat: return can_represent_double(double(v)) && int64_t(double(v)) == v;
    }
    return false;
}

bool Type::can_represent_double(double v) const {
    if (is_int_or_uint()) {
        if (v != std::floor(v)) return false;
        return v >= min_value() && v <= max_value();
    }
    if (std::isnan(v) || std::isinf(v)) return true;
    if (code == TypeCode::Float && bits == 64) return true;
    if (code == TypeCode::Float && bits == 32) return double(float(v)) == v;
    if (code == TypeCode::Float && bits == 16) return detail::round_to_float16(v) == v;
    return detail::round_to_bfloat16(v) == v;
}

std::string Type::to_string() const {
    if (is_bool()) return "bool";
    switch (code) {
    case TypeCode::Int: return "int" + std::to_string(bits);
    case TypeCode::UInt: return "uint" + std::to_string(bits);
    case TypeCode::Float: return "float" + std::to_string(bits);
    case TypeCode::BFloat: return "bfloat" + std::to_string(bits);
    }
    return "?";
}

std::ostream &operator<<(std::ostream &s, const Type &t) { return s << t.to_string(); }

} // namespace tessera
