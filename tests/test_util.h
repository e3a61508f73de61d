// Helpers shared by the tests.
#pragma once

#include <catch2/catch.hpp>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <tessera/tessera.h>

// Requires that `expr` throws a tessera::UserError whose message contains every fragment.
#define REQUIRE_USER_ERROR(expr, ...)                                                              \
    do {                                                                                           \
        bool thrown_ = false;                                                                      \
        try {                                                                                      \
            expr;                                                                                  \
        } catch (const tessera::UserError &e_) {                                                   \
            thrown_ = true;                                                                        \
            std::string msg_ = e_.what();                                                          \
            INFO("message: " << msg_);                                                             \
            for (const char *fragment_ : {__VA_ARGS__}) {                                          \
                INFO("expected fragment: " << fragment_);                                          \
                CHECK(msg_.find(fragment_) != std::string::npos);                                  \
            }                                                                                      \
        }                                                                                          \
        INFO("expected a tessera::UserError from " #expr);                                         \
        REQUIRE(thrown_);                                                                          \
    } while (0)

namespace test_util {

// Sets an environment variable (nullptr: unsets it) for one scope; restores it afterwards.
class ScopedEnvironment {
public:
    ScopedEnvironment(const char *name, const char *value) : name_(name) {
        if (const char *old = std::getenv(name)) old_ = old;
        if (value) ::setenv(name, value, 1);
        else ::unsetenv(name);
    }
    ~ScopedEnvironment() {
        if (old_) ::setenv(name_.c_str(), old_->c_str(), 1);
        else ::unsetenv(name_.c_str());
    }
    ScopedEnvironment(const ScopedEnvironment &) = delete;
    ScopedEnvironment &operator=(const ScopedEnvironment &) = delete;

private:
    std::string name_;
    std::optional<std::string> old_;
};

// Runs `f` over [0, sizes) the way the test case is generated for: "realize" (compiled code,
// through the executor) or "interpret" (the reference interpreter). Both must report the same
// user errors.
inline void run_as(const std::string &way, const tessera::Func &f, const std::vector<int> &sizes) {
    if (way == "realize") f.realize(sizes);
    else tessera::interpret(f, sizes);
}

// A two-stage stencil bounded to `width` x `height` (g(x, y) = f(x, y) + f(x + 1, y), f from
// the input), its input set to (width + 1) x `height` integers: at small heights a bounded
// pipeline of one tile along y, whose outer tile loop isl drops.
struct BoundedStencil {
    tessera::InputBuffer<int> in{"in", 2};
    tessera::Func f{"f"}, g{"g"};
    BoundedStencil(int width, int height) {
        tessera::Var x("x"), y("y");
        f(x, y) = in(x, y) * 2 - y;
        g(x, y) = f(x, y) + f(x + 1, y);
        g.bound(x, 0, width).bound(y, 0, height);
        tessera::Buffer<int> data(width + 1, height);
        for (int yy = 0; yy < height; ++yy)
            for (int xx = 0; xx <= width; ++xx) data(xx, yy) = (xx * 7 + yy * 5 + (xx * xx) % 11) % 97;
        in.set(data);
    }
};

// The function definitions of LLVM IR text, each from "define" to the next one (or the end).
inline std::vector<std::string> ir_functions(const std::string &ir) {
    std::vector<std::string> functions;
    for (size_t at = ir.find("\ndefine "); at != std::string::npos;) {
        size_t end = ir.find("\ndefine ", at + 1);
        functions.push_back(ir.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1));
        at = end;
    }
    return functions;
}

} // namespace test_util

// A test case variable naming the way it runs pipelines, for test_util::run_as.
#define RUN_WAYS() GENERATE(as<std::string>{}, "realize", "interpret")
