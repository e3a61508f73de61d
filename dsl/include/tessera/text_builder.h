// A string built with `<<`, like std::ostringstream, without iostreams: text that is made on
// every compile (pipeline_text, the compile cache's key) is made in a new process before its
// first cache hit, and iostreams' first use there (the stream, its locale's facets) took about
// 40 us of that hit's 0.3 ms. Integers print as std::to_chars prints them, bools as 0 and 1,
// Types by Type::to_string: what an ostream prints.
//
//   TextBuilder t;
//   t << "func " << name << "(" << 3 << ") : " << Float(32);   // t.str() == "func f(3) : float32"
#pragma once

#include <charconv>
#include <string>
#include <string_view>
#include <type_traits>

#include "tessera/type.h"

namespace tessera {

class TextBuilder {
public:
    TextBuilder &operator<<(std::string_view s) {
        text_.append(s);
        return *this;
    }
    TextBuilder &operator<<(const char *s) { return *this << std::string_view(s); }
    TextBuilder &operator<<(const std::string &s) { return *this << std::string_view(s); }
    TextBuilder &operator<<(char c) {
        text_.push_back(c);
        return *this;
    }
    TextBuilder &operator<<(bool b) {
        text_.push_back(b ? '1' : '0');
        return *this;
    }
    template <typename T, typename = std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>>>
    TextBuilder &operator<<(T v) {
        char buffer[24];
        auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, v);
        (void)error;  // 24 characters hold any 64-bit integer
        text_.append(buffer, size_t(end - buffer));
        return *this;
    }
    TextBuilder &operator<<(const Type &t) { return *this << t.to_string(); }

    const std::string &str() const { return text_; }
    std::string take() { return std::move(text_); }

private:
    std::string text_;
};

} // namespace tessera
