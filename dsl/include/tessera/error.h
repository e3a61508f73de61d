// Errors raised by Tessera.
//
// Every misuse of the library by its user throws tessera::UserError; a broken invariant inside
// Tessera throws tessera::InternalError. Both derive from tessera::Error, so `catch (const
// tessera::Error &)` catches everything Tessera throws. Messages name the Func, Var, buffer or
// option involved and say what to do about it.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace tessera {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string &message) : std::runtime_error(message) {}
};

// The user asked for something that cannot be done; the message says how to fix it.
class UserError : public Error {
public:
    explicit UserError(const std::string &message) : Error(message) {}
};

// Tessera itself is wrong. Please report it.
class InternalError : public Error {
public:
    explicit InternalError(const std::string &message)
        : Error("Internal error (please report this as a Tessera bug): " + message) {}
};

namespace detail {

// Concatenates its arguments with operator<< into one string.
template <typename... Args>
std::string str_cat(const Args &...args) {
    std::ostringstream s;
    (s << ... << args);
    return s.str();
}

} // namespace detail

// Throws a UserError whose message is the concatenation of the arguments.
template <typename... Args>
[[noreturn]] void user_error(const Args &...args) {
    throw UserError(detail::str_cat(args...));
}

// Throws an InternalError whose message is the concatenation of the arguments.
template <typename... Args>
[[noreturn]] void internal_error(const Args &...args) {
    throw InternalError(detail::str_cat(args...));
}

// Throws an InternalError when an invariant of Tessera does not hold.
#define TESSERA_INTERNAL_ASSERT(cond, ...)                                                         \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ::tessera::internal_error(__FILE__, ":", __LINE__, ": ", #cond, " ", ##__VA_ARGS__); \
    } while (0)

} // namespace tessera
