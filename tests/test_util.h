// Helpers shared by the tests.
#pragma once

#include <catch2/catch.hpp>
#include <string>

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
