// Boundary conditions against hand-written index formulas, and inline reductions against loops.
#include "../test_util.h"

#include <algorithm>
#include <random>

using namespace tessera;

namespace {

int clamp_index(int x, int n) { return std::clamp(x, 0, n - 1); }
int mirror_image_index(int x, int n) {
    int t = ((x % (2 * n)) + 2 * n) % (2 * n);
    return t < n ? t : 2 * n - 1 - t;
}
int mirror_interior_index(int x, int n) {
    if (n == 1) return 0;
    int p = 2 * n - 2;
    int t = ((x % p) + p) % p;
    return t < n ? t : p - t;
}
int repeat_index(int x, int n) { return ((x % n) + n) % n; }

// Realizes f over [-8, w + 8) x [-7, h + 7) and checks f(x, y) == src(ix(x), iy(y)) (or the
// exterior value where ix returns -1).
void check_boundary(const Func &f, const Buffer<int> &src, const std::function<int(int, int)> &index, int exterior_value,
                    bool exterior) {
    int w = src.width(), h = src.height();
    Buffer<int> out(w + 16, h + 14);
    out.set_min({-8, -7});
    interpret(Pipeline(f), {out});
    for (int y = -7; y < h + 7; ++y)
        for (int x = -8; x < w + 8; ++x) {
            INFO("at (" << x << ", " << y << ") of a " << w << " x " << h << " source");
            bool inside = x >= 0 && x < w && y >= 0 && y < h;
            if (exterior && !inside) CHECK(out(x, y) == exterior_value);
            else CHECK(out(x, y) == src(index(x, w), index(y, h)));
        }
}

} // namespace

TEST_CASE("boundary conditions read the source at the documented coordinates", "[dsl][boundary]") {
    for (auto [w, h] : std::vector<std::pair<int, int>>{{5, 4}, {1, 3}, {2, 1}, {7, 7}}) {
        Buffer<int> src(w, h);
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) src(x, y) = 100 * y + x;
        InputBuffer<int> in("in", 2);
        in.set(src);
        check_boundary(BoundaryConditions::repeat_edge(in), src, clamp_index, 0, false);
        check_boundary(BoundaryConditions::repeat_edge(src), src, clamp_index, 0, false);
        check_boundary(BoundaryConditions::mirror_image(in), src, mirror_image_index, 0, false);
        check_boundary(BoundaryConditions::mirror_interior(in), src, mirror_interior_index, 0, false);
        check_boundary(BoundaryConditions::repeat_image(in), src, repeat_index, 0, false);
        check_boundary(BoundaryConditions::constant_exterior(in, -5), src, clamp_index, -5, true);
        check_boundary(BoundaryConditions::constant_exterior(src, 9), src, clamp_index, 9, true);
    }
}

TEST_CASE("boundary conditions on a Func use the given bounds and leave undefined ones open", "[dsl][boundary]") {
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = x + 10 * y;
    Func g = BoundaryConditions::repeat_edge(f, {{2, 3}, {}});
    Buffer<int> out(9, 3);
    out.set_min({0, -1});
    interpret(Pipeline(g), {out});
    for (int yy = -1; yy < 2; ++yy)
        for (int xx = 0; xx < 9; ++xx) CHECK(out(xx, yy) == std::clamp(xx, 2, 4) + 10 * yy);
}

TEST_CASE("a blur with a boundary condition reads only inside its input", "[dsl][boundary]") {
    InputBuffer<float> in("in", 1);
    Buffer<float> b(6);
    for (int i = 0; i < 6; ++i) b(i) = float(i * i);
    in.set(b);
    Func clamped = BoundaryConditions::repeat_edge(in);
    Var x("x");
    Func blur("blur");
    blur(x) = (clamped(x - 1) + clamped(x) + clamped(x + 1)) / 3.f;
    Buffer<float> out = blur.realize({6});
    CHECK(out(0) == (0.f + 0.f + 1.f) / 3.f);
    CHECK(out(5) == (16.f + 25.f + 25.f) / 3.f);
}

TEST_CASE("inline reductions match loops, with and without predicates", "[dsl][reduction]") {
    std::mt19937 rng(3);
    std::uniform_int_distribution<int> dist(-50, 50);
    const int W = 13, H = 7;
    Buffer<int> b(W, H);
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) b(x, y) = dist(rng);
    InputBuffer<int> in("in", 2);
    in.set(b);
    Var y("y");
    RDom r(0, W, "r");
    Func s("s"), p("p"), mx("mx"), mn("mn"), ax("ax"), an("an"), cond("cond");
    s(y) = sum(in(r, y));
    p(y) = product(cast<int64_t>(in(r, y) % 3 + 2));
    mx(y) = maximum(in(r, y));
    mn(y) = minimum(in(r, y));
    Tuple amax = argmax(in(r, y));
    Tuple amin = argmin(in(r, y));
    ax(y) = amax[0] * 1000 + amax[1];
    an(y) = amin[0] * 1000 + amin[1];
    RDom q(0, W, "q");
    q.where(q.x % 2 == 1 && q.x < y + 3);
    cond(y) = sum(in(q, y));
    Realization res = interpret(Pipeline({s, p, mx, mn, ax, an, cond}), {H});
    for (int yy = 0; yy < H; ++yy) {
        int sum_ = 0, max_ = -1000, min_ = 1000, amax_ = -1, amin_ = -1, cond_ = 0;
        int64_t prod_ = 1;
        for (int x = 0; x < W; ++x) {
            int v = b(x, yy);
            sum_ += v;
            prod_ *= ((v % 3 + 3) % 3) + 2;
            if (v > max_) max_ = v, amax_ = x;
            if (v < min_) min_ = v, amin_ = x;
            if (x % 2 == 1 && x < yy + 3) cond_ += v;
        }
        CHECK(Buffer<int>(res[0])(yy) == sum_);
        CHECK(Buffer<int64_t>(res[1])(yy) == prod_);
        CHECK(Buffer<int>(res[2])(yy) == max_);
        CHECK(Buffer<int>(res[3])(yy) == min_);
        CHECK(Buffer<int>(res[4])(yy) == amax_ * 1000 + max_);
        CHECK(Buffer<int>(res[5])(yy) == amin_ * 1000 + min_);
        CHECK(Buffer<int>(res[6])(yy) == cond_);
    }
}

TEST_CASE("argmax over a two-dimensional RDom returns the first maximum in iteration order", "[dsl][reduction]") {
    Buffer<float> b(4, 3);
    for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 4; ++x) b(x, y) = 0.f;
    b(2, 1) = 5.f;
    b(1, 2) = 5.f;  // later in iteration order (r.x fastest)
    RDom r(0, 4, 0, 3, "r");
    Func f("f");
    Var i("i");
    Tuple t = argmax(b(r.x, r.y));
    f(i) = select(i == 0, cast<float>(t[0]), i == 1, cast<float>(t[1]), t[2]);
    Buffer<float> out = f.realize({3});
    CHECK(out(0) == 2.f);
    CHECK(out(1) == 1.f);
    CHECK(out(2) == 5.f);
}

TEST_CASE("an RDom over an InputBuffer covers its run-time shape", "[dsl][reduction]") {
    InputBuffer<int> in("in", 2);
    Buffer<int> b(5, 3);
    b.fill(2);
    b.set_min({-2, 1});
    in.set(b);
    RDom r(in);
    Func total("total");
    total() = sum(in(r.x, r.y));
    Buffer<int> out = total.realize(std::vector<int>{});
    CHECK(out() == 30);
}
