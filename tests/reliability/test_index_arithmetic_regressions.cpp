// Regression tests of indices and RDom predicates whose arithmetic the model once took for
// exact math: narrowing and sign-changing casts in indices, int32 and narrow unsigned wrapping,
// NaN in clamped coordinates, and predicates that narrow the regions both paths require or
// write. Each pins down a wrong answer or an error mismatch between the compiled code and the
// interpreter (most found by the fuzzer), at its root.
#include "regression_util.h"

#include <climits>

using namespace tessera;

TEST_CASE("a narrowing or sign-changing cast in an index is not modeled as the identity", "[reliability]") {
    // From the fuzzer (seed 2688): cast<uint8_t>(r) for r in [-2, 2] is 254, 255, 0, 1, 2, but
    // the model took the cast as r, so clamp(..., 3, 10) was the constant 3. g's region held
    // only element 3 and the compiled code read g(10) outside it: every element was wrong.
    Var x("x");
    Func g("g"), f("f");
    g(x) = x * 10;
    RDom r(-2, 5, "r");
    f(x) = 0;
    f(x) += g(clamp(cast<int>(cast<uint8_t>(r)), 3, 10));
    Buffer<int> got = f.realize({4});
    Buffer<int> want = interpret(f, {4});
    CHECK(same(got, want));
    CHECK(want(0) == 2 * 100 + 3 * 30);
    // int32 to uint32 changes the sign of negative values too.
    Func h("h");
    h(x) = 0;
    h(x) += g(clamp(cast<int>(cast<uint32_t>(r) % 7u), 0, 6));
    CHECK(same(Buffer<int>(h.realize({3})), Buffer<int>(interpret(h, {3}))));
}

TEST_CASE("narrow unsigned arithmetic in an index wraps in the model as it does at run time", "[reliability]") {
    // From the fuzzer (seed 3156): in(r) + uint16(65530) is in(r) - 6 modulo 65536, but the model
    // bounded it by [65530, 131065], so clamp(..., 3, 6) was the constant 6. h's storage held row
    // 6 only and the update wrote row 3 outside it (heap corruption, a crash in free). Under the
    // sanitizer build (scripts/sanitize.sh) the old code fails this test with a heap overflow.
    Var x("x"), y("y");
    Buffer<uint16_t> data(std::vector<int>{4});
    const uint16_t values[4] = {0, 3, 7, 9};  // - 6: 65530, 65533, 1, 3 -> clamped 6, 6, 3, 3
    for (int i = 0; i < 4; ++i) data(i) = values[i];
    InputBuffer<uint16_t> in("in", 1);
    in.set(data);
    RDom r(0, 4, "r");
    Func h("h"), out("out");
    h(x, y) = 0;
    h(x, clamp(cast<int>(in(r) + cast<uint16_t>(Expr(-6))), 3, 6)) += 1;
    out(x) = h(x, 6);
    Buffer<int> got = out.realize({8});
    Buffer<int> want = interpret(out, {8});
    CHECK(same(got, want));
    CHECK(want(0) == 2);
}

TEST_CASE("an RDom predicate or select condition whose int32 arithmetic wraps is not modeled as unbounded math",
          "[reliability]") {
    // r + 2147483647 > 0 holds only for r = 0: for r >= 1 the sum wraps to a negative value (the
    // DSL's int32 arithmetic wraps). Taken as unbounded arithmetic by isl it held for every r,
    // and the compiled update ran for all of them.
    Var x("x");
    RDom r(0, 10, "r");
    Func where_wraps("where_wraps");
    r.where(r + 2147483647 > 0);
    where_wraps(x) = 0;
    where_wraps(r) = 1;
    Buffer<int> want = interpret(where_wraps, {10});
    CHECK(want(0) == 1);
    CHECK(want(1) == 0);
    CHECK(same(Buffer<int>(where_wraps.realize({10})), want));
    // The same condition in a select that the model splits into cases (split_affine_selects).
    RDom s(0, 10, "s");
    Func select_wraps("select_wraps");
    select_wraps(x) = 0;
    select_wraps(s) = select(s * 1073741824 + s > 5, 7, s - 2147483647 - 2147483647 < 0, 8, 9);
    Buffer<int> want_select = interpret(select_wraps, {10});
    CHECK(same(Buffer<int>(select_wraps.realize({10})), want_select));
    // Subtraction and constant division wrap as well (INT32_MIN / -1 is INT32_MIN).
    Func division_wraps("division_wraps");
    RDom t(0, 4, "t");
    t.where((t - 2147483647 - 2) / -1 < 0);
    division_wraps(x) = 0;
    division_wraps(t) = 3;
    CHECK(same(Buffer<int>(division_wraps.realize({4})), Buffer<int>(interpret(division_wraps, {4}))));
    // In an index, the wrapped condition chooses the other element: g's region must hold both
    // (it held only g(0), and the compiled code read g(100) outside its storage).
    Func g("g"), reads_g("reads_g");
    g(x) = x * 3;
    RDom u(0, 6, "u");
    reads_g(x) = 0;
    reads_g(u) = g(select(u + 2147483647 > 0, 0, 100));
    Buffer<int> want_g = interpret(reads_g, {6});
    CHECK(want_g(1) == 300);
    CHECK(same(Buffer<int>(reads_g.realize({6})), want_g));
}

TEST_CASE("an RDom predicate's exact conjuncts bound the region even when another conjunct wraps", "[reliability]") {
    // Fuzzer seed 2006728: r.x + 2147483647 < 2 wraps (a run-time guard), but r.x == 1 is exact:
    // the update reads f(r.x - 1, y) at r.x = 1 only, inside the output. Treating the whole
    // predicate as a guard made the compiled code demand f over x = -1 and reject the output.
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = x + 10 * y;
    RDom r(0, 3);
    r.where(r.x + 2147483647 < 2 && r.x == 1);
    f(r.x, y) = f(r.x - 1, y) * 3;
    Pipeline p(f);
    Buffer<int> got({7, 5}), want({7, 5});
    realize_both(p, got, want);
    CHECK(same(got, want));
    CHECK(got(1, 2) == 3 * 20);
}

TEST_CASE("an RDom predicate on a pure Var narrows the instances whose reads the interpreter requires", "[reliability]") {
    // Fuzzer seed 2100642: sum over r with r.y <= x reads in(x - 3, ...) only where x >= 2 (r.y
    // >= 2); the interpreter required the input over every x of the region, the model (exact)
    // only over x >= 2, so the interpreter rejected an input the compiled code accepted.
    Var x("x");
    Buffer<int> data({40, 3});
    data.set_min({-1, 0});
    for (int j = 0; j < 3; ++j)
        for (int i = -1; i < 39; ++i) data(i, j) = i * 7 + j;
    InputBuffer<int> in("in", 2);
    in.set(data);
    RDom r(0, 3, 2, 3);
    r.where(r.y <= x);
    Func f("f");
    f(x) = sum(in(x - 3, r.x));
    Pipeline p(f);
    Buffer<int> got({12}), want({12});
    got.set_min({-8});
    want.set_min({-8});
    realize_both(p, got, want);
    CHECK(same(got, want));
    CHECK(got(-1) == 0);
}

TEST_CASE("an RDom predicate whose int32 sum wraps runs exactly where the wrapped sum holds", "[reliability]") {
    // r.x + -2147483645 > 0 wraps for r.x < -3 (and holds there), and holds nowhere else in the
    // RDom: the model gives the update exactly those instances, so the regions it needs are
    // theirs; as a guard alone it needed the whole RDom's (fuzzer seed 1700140: an error where
    // the interpreter ran).
    Var x("x");
    RDom r(-10, 20, "r");
    r.where(r.x + Expr(-2147483645) > 0);
    Func g("g"), f("f");
    g(x) = x * 3;
    f(x) = 0;
    f(r.x + 10) += g(r.x) + 1;
    Pipeline p(f);
    Buffer<int> got({7}), want({7});  // writes 0..6; r.x in [-10, -4]
    realize_both(p, got, want);
    CHECK(same(got, want));
    CHECK(got(0) == -29);
    CHECK(got(6) == -11);

    Func h("h");
    RDom q(-1, 3, 0, 4, "q");
    q.where(q.y + Expr(-2147483645) > 0);  // never, for q.y in [0, 3]
    h(x) = 5;
    h(q.x + 10) += 1;  // would need h over [9, 11], outside the output
    Pipeline ph(h);
    Buffer<int> hgot({4}), hwant({4});
    realize_both(ph, hgot, hwant);
    CHECK(same(hgot, hwant));
    CHECK(hgot(3) == 5);
}

TEST_CASE("a narrowing cast of a coordinate keeps its bounds where they fit the type", "[reliability]") {
    // int8(x) for x in [-1, 15] is x: clamp(int32(int8(x)), 1, 16) reads [1, 15], which the input
    // covers. The model took any narrowing cast to the whole type's range and needed [1, 16]
    // (fuzzer seed 1806989: an error where the interpreter ran).
    Var x("x");
    InputBuffer<int> in("in", 1);
    Buffer<int> data({15});
    data.set_min({1});
    for (int i = 1; i <= 15; ++i) data(i) = i * 7;
    in.set(data);
    Func f("f");
    f(x) = in(clamp(cast<int>(cast<int8_t>(x)), 1, 16));
    Pipeline p(f);
    Buffer<int> got({17}), want({17});
    got.set_min({-1});
    want.set_min({-1});
    realize_both(p, got, want);
    CHECK(same(got, want));
    CHECK(got(15) == 105);
    // Past int8's range the cast wraps: x = 200 reads in(clamp(-56, 1, 16)) = in(1), and the
    // region is the clamp's whole [1, 16] again, on both paths.
    Buffer<int> wide({256}), wide_want({256});
    CHECK_THROWS_AS(p.compile(Target::host(), {}).realize(wide), UserError);
    CHECK_THROWS_AS(interpret(p, std::vector<Buffer<void>>{wide_want}), UserError);
}

TEST_CASE("a NaN constant in a clamped coordinate leaves the clamp's bounds to both paths", "[reliability]") {
    // min(max(int32(in(r.x) + nan), -2), 1) is in [-2, 1] whatever in holds; the interpreter's
    // interval arithmetic let the NaN poison the bound and rejected the update (seed 2200747).
    Var x("x");
    InputBuffer<float> in("in", 1);
    Buffer<float> data({7});
    for (int i = 0; i < 7; ++i) data(i) = float(i) - 3.5f;
    in.set(data);
    RDom r(in);
    Func f("f");
    f(x) = 0;
    f(clamp(cast<int>(in(r.x) + sqrt(Expr(-2.0f))), -2, 1)) += 1;
    Pipeline p(f);
    Buffer<int> got({6}), want({6});
    got.set_min({-3});
    want.set_min({-3});
    realize_both(p, got, want);
    CHECK(same(got, want));
}

TEST_CASE("an RDom predicate excluding an end of its range narrows the region an update writes, on both paths", "[reliability]") {
    // f(r, r) with r in [-1, 2] where r != -1 writes (0, 0) .. (2, 2): an output over [0, 4]
    // holds it. The interpreter bounded the writes without the predicate and asked for -1,
    // while the compiled code (the polyhedral model sees the predicate) ran (seed 2422218).
    Var x("x"), y("y");
    for (int excluded : {-1, 2}) {
        Func f("f");
        f(x, y) = 0.5;
        RDom r(-1, 4, "r");
        r.where(r.x != excluded);
        f(r.x + 1 - 1, r.x) = cast<double>(r.x) + 10.0;
        Pipeline p(f);
        Buffer<double> got({5, 5}), want({5, 5});
        if (excluded == 2) {
            got.set_min({-1, -1});
            want.set_min({-1, -1});
        }
        realize_both(p, got, want);
        CHECK(same(got, want));
        CHECK(got(0, 0) == 10.0);
        CHECK(got(1, 1) == 11.0);
    }
    // Excluding a value inside the range leaves the range whole: both paths ask for it.
    Func g("g");
    g(x, y) = 0.5;
    RDom r(-1, 4, "r");
    r.where(r.x != 0);
    g(r.x, r.x) = 1.0;
    Pipeline q(g);
    REQUIRE_USER_ERROR(q.compile(Target::host(), {}).realize({5, 5}), "Func g is an output", "[-1, 4]");
    REQUIRE_USER_ERROR(interpret(q, std::vector<Buffer<void>>{Buffer<double>({5, 5})}), "Func g is an output", "[-1, 4]");
}

TEST_CASE("constants of an inlined Func's coordinates fold with its reader's, so that no wrap appears between them",
          "[reliability]") {
    // From the fuzzer (seed 2504762 of the generator of dc14d74): shifted reads the input at
    // y - 2, and out reads shifted at y + 3, near the top of int32. shifted is inlined, and the
    // read was at (y + 3) + -2: the interpreter bounded y + 3, which wraps, and rejected the
    // pipeline ("may take any value") while the compiled code ran, taking the sum as y + 1
    // (wrapping addition is associative: the two agree at every point). Substituted with its
    // constants folded (inline_calls), the coordinate is y + 1 on both paths, which does not
    // wrap; both run, and read clamped's last row (the input's, repeated) there.
    Var x("x"), y("y");
    Buffer<int> data(std::vector<int>{3, 4});
    for (int j = 0; j < 4; ++j)
        for (int i = 0; i < 3; ++i) data(i, j) = 10 * j + i;
    InputBuffer<int> in("in", 2);
    in.set(data);
    Func clamped = BoundaryConditions::repeat_edge(in);
    Func shifted("shifted"), summed("summed"), out("out");
    shifted(x, y) = clamped(x, y - 2) * 3;
    // Read by an update too, clamped is kept (automatic_inlining.h): a Func read at the
    // coordinate that wrapped.
    RDom r(0, 2, "r");
    summed(x, y) = 0;
    summed(x, y) += clamped(x, y + r);
    out(x, y) = shifted(x, y + 3) + summed(x, y);
    Buffer<int> got(std::vector<int>{3, 6}), want(std::vector<int>{3, 6});
    got.set_min({0, INT_MAX - 6});
    want.set_min({0, INT_MAX - 6});
    Pipeline(out).compile(Target::host(), {}).realize(got);
    interpret(Pipeline(out), std::vector<Buffer<void>>{Buffer<void>(want)});
    CHECK(same(got, want));
    CHECK(want(2, INT_MAX - 1) == 32 * 3 + 32 + 32);
}
