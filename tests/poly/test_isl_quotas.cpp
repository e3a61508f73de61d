// Limits on isl computations (isl_util.h): operation quotas and CPU-time deadlines.
#include "../test_util.h"

#include <algorithm>
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

TEST_CASE("a region whose exact bound runs out of its quota is bounded part by part, without crashing isl",
          "[poly][isl]") {
    // The region of `in` read at repeat_edge's clamp(2x - 1): the exact bound of the union of its
    // parts runs out of its quota, and isl stopped partway once left the basic sets it shares
    // with the parts broken (a null basic map in isl_basic_map_compute_divs, a crash when the
    // parts were bounded next). The attempts now bound private copies.
    for (int shift : {-1, 1}) {
        InputBuffer<float> in("in", 2);
        Var x("x"), y("y");
        Func clamped = BoundaryConditions::repeat_edge(in);
        Func out("downsampled");
        out(x, y) = clamped(2 * x + shift, y) * 2.f + 1.f;
        Callable c = Pipeline(out).compile(Target::host());
        for (int w : {1, 2, 7, 33}) {
            Buffer<float> data(w, 3);
            for (int yy = 0; yy < 3; ++yy)
                for (int xx = 0; xx < w; ++xx) data(xx, yy) = float(xx * 3 + yy * 5 % 7);
            in.set(data);
            Buffer<float> got(w, 3), want(w, 3);
            c.realize(got);
            interpret(Pipeline(out), {want});
            for (int yy = 0; yy < 3; ++yy)
                for (int xx = 0; xx < w; ++xx) {
                    INFO("shift " << shift << ", width " << w << ", at " << xx << ", " << yy);
                    REQUIRE(got(xx, yy) == want(xx, yy));
                    REQUIRE(got(xx, yy) == data(std::clamp(2 * xx + shift, 0, w - 1), yy) * 2.f + 1.f);
                }
        }
    }
}
