// Limits on isl computations (isl_util.h): operation quotas and CPU-time deadlines.
#include "../test_util.h"

#include <chrono>

#include <isl/set.h>

#include <tessera/poly/isl_util.h>

using namespace tessera;

namespace {

// isl work that ends when isl refuses an operation (an exception), or after 20 s by itself, so
// that a limit that does not work fails the test rather than hangs it.
void endless_isl_work(isl::ctx ctx) {
    isl::set s(ctx, "[n] -> { [i, j, k] : 0 <= i, j, k < n and i + 2j + 3k > n and 5i - 7j + 11k < 2n }");
    auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < std::chrono::seconds(20)) s = s.unite(s.lexmin()).coalesce();
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

TEST_CASE("an isl computation past its CPU time is aborted, and its context serves the fallback", "[poly][isl]") {
    poly::IslContext owned;
    isl::ctx ctx = owned.ctx();
    auto start = std::chrono::steady_clock::now();
    // No operation quota: only the deadline stops it.
    bool finished = poly::within_quota(ctx, 0, 150.0, [&] { endless_isl_work(ctx); });
    CHECK(!finished);
    CHECK(seconds_since(start) < 5.0);  // (150 ms of CPU; generous for a loaded machine)
    // Neither the abort nor its error is left behind: the next computation runs.
    CHECK(isl_ctx_aborted(ctx.get()) == 0);
    CHECK(isl_ctx_last_error(ctx.get()) == isl_error_none);
    isl::set t(ctx, "{ [i] : 0 <= i < 10 }");
    CHECK(t.lexmin().is_equal(isl::set(ctx, "{ [0] }")));
}

TEST_CASE("an isl computation within its CPU time and quota finishes", "[poly][isl]") {
    poly::IslContext owned;
    isl::ctx ctx = owned.ctx();
    isl::set result;
    bool finished = poly::within_quota(ctx, 100000, 10000.0, [&] { result = isl::set(ctx, "{ [i] : 3 <= i < 10 }").lexmin(); });
    CHECK(finished);
    CHECK(result.is_equal(isl::set(ctx, "{ [3] }")));
}

TEST_CASE("the operation quota still ends an isl computation before its CPU time does", "[poly][isl]") {
    poly::IslContext owned;
    isl::ctx ctx = owned.ctx();
    auto start = std::chrono::steady_clock::now();
    bool finished = poly::within_quota(ctx, 2000, 60000.0, [&] { endless_isl_work(ctx); });
    CHECK(!finished);
    CHECK(seconds_since(start) < 30.0);
    CHECK(isl_ctx_last_error(ctx.get()) == isl_error_none);
    CHECK(isl::set(ctx, "{ [1] }").is_equal(isl::set(ctx, "{ [i] : i = 1 }")));
}
