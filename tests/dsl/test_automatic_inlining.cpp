// Automatic inlining (dsl/automatic_inlining.h): which Funcs the automatic schedule computes
// inline unasked, and that compiled code (CPU and the GPU emulator) and the interpreter give the
// values of an independent computation with them inlined.
#include "../test_util.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include <nlohmann/json.hpp>
#include <tessera/automatic_inlining.h>
#include <tessera/func_graph.h>

#include "tessera_apps/app.h"

using namespace tessera;

namespace {

std::set<std::string> inlined_names(const Pipeline &p) {
    std::set<std::string> names;
    for (const FuncContents *f : automatic_inlines(build_pipeline_graph(p.outputs()))) names.insert(f->name);
    return names;
}

// `p` (one int output of w x h, its inputs bound) compiled for the host and interpreted: both
// equal want(i, j) at every point.
template <class Want>
void require_compiled_and_interpreted(const Pipeline &p, int w, int h, Want want) {
    Buffer<int> got(std::vector<int>{w, h}), interpreted(std::vector<int>{w, h});
    p.compile(Target::host(), {}).realize(got);
    interpret(p, std::vector<Buffer<void>>{Buffer<void>(interpreted)});
    for (int j = 0; j < h; ++j)
        for (int i = 0; i < w; ++i) {
            INFO(w << " x " << h << " at " << i << ", " << j);
            REQUIRE(got(i, j) == want(i, j));
            REQUIRE(interpreted(i, j) == want(i, j));
        }
}

// `p` (one int output of w x h, its inputs bound) compiled for the host and for the GPU
// emulator, and interpreted: the number of points where each differs from want(i, j) is 0.
template <class Want>
void check_every_way(const Pipeline &p, int w, int h, Want want) {
    for (const char *way : {"cpu", "gpu emulator", "interpreter"}) {
        Buffer<int> got(std::vector<int>{w, h});
        if (std::string(way) == "cpu") p.compile(Target::host(), {}).realize(got);
        else if (std::string(way) == "gpu emulator") p.compile(Target::cuda(80).emulated(), {}).realize(got);
        else interpret(p, std::vector<Buffer<void>>{Buffer<void>(got)});
        int wrong = 0;
        for (int j = 0; j < h; ++j)
            for (int i = 0; i < w; ++i) wrong += got(i, j) != want(i, j);
        INFO(way << " at " << w << " x " << h);
        CHECK(wrong == 0);
    }
}

// Two Funcs of 5 operations each over `in` (kept when read at several points: too many to
// recompute), and their values over the bound input.
struct TwoPlanes {
    Var x{"x"}, y{"y"};
    InputBuffer<int> in{"in", 2};
    Func a{"a"}, b{"b"};
    Buffer<int> data;
    TwoPlanes() {
        a(x, y) = in(x, y) * in(x + 1, y) + 7 * in(x, y + 1) - 3 * in(x + 1, y + 1);
        b(x, y) = in(x, y) * 5 - in(x + 1, y) * in(x, y + 1) + 2 * in(x + 1, y + 1);
    }
    // Binds a random input of (w + 4) x (h + 4), enough for outputs of w x h that read a and b
    // up to 2 points beyond their own.
    void bind_random(int w, int h, std::mt19937 &rng) {
        std::uniform_int_distribution<int> value(-100, 100);
        data = Buffer<int>(std::vector<int>{w + 4, h + 4});
        for (int j = 0; j < h + 4; ++j)
            for (int i = 0; i < w + 4; ++i) data(i, j) = value(rng);
        in.set(data);
    }
    int av(int i, int j) const { return data(i, j) * data(i + 1, j) + 7 * data(i, j + 1) - 3 * data(i + 1, j + 1); }
    int bv(int i, int j) const { return data(i, j) * 5 - data(i + 1, j) * data(i, j + 1) + 2 * data(i + 1, j + 1); }
};

// A pipeline with one Func of each kind:
//   a        read one-to-one by b at (x + 1, y - 1)                            inlined
//   b        read by s at two points; 2 operations and 1 read, recomputed      inlined
//   s        read one-to-one by out                                            inlined
//   shared   read by t and out; t is inlined, so out reads it at one point     inlined
//   twice    read by half and down, both kept; 2 operations of the input alone inlined
//   half     reads the input at x / 2                                          kept
//   down     reads the input at 2 * x                                          kept
//   swapped  read by t at (y, x): one-to-one, transposed                       inlined
//   t        read one-to-one by out                                            inlined
//   heavy    read by out at two points; 5 operations, too many to recompute   kept
//   out      the output                                                        kept
struct Mixed {
    Var x{"x"}, y{"y"};
    InputBuffer<int> in{"in", 2};
    Func a{"a"}, b{"b"}, s{"s"}, shared{"shared"}, twice{"twice"}, half{"half"}, down{"down"}, swapped{"swapped"},
        t{"t"}, heavy{"heavy"}, out{"out"};
    Mixed() {
        a(x, y) = in(x, y) * 2;
        b(x, y) = a(x + 1, y - 1) + 1;
        s(x, y) = b(x, y) + b(x + 1, y) * 3;
        shared(x, y) = in(x, y) + 1;
        twice(x, y) = in(x, y) * 5 - 1;
        half(x, y) = in(x / 2, y) + twice(x, y);
        down(x, y) = in(2 * x, y) - 5 + twice(x, y);
        swapped(x, y) = in(x, y) * 7;
        t(x, y) = shared(x, y) + half(x, y) * 11 + down(x, y) + swapped(y, x);
        heavy(x, y) = ((in(x, y) * 3 + 1) * 2 - 7) + x;
        out(x, y) = s(x, y) + t(x, y) * 13 - shared(x, y) + heavy(x, y) + heavy(x + 1, y);
    }
};

const std::set<std::string> kMixedInlined{"a", "b", "s", "shared", "swapped", "t", "twice"};

// out computed by plain loops over [0, w) x [0, h), `in` read through its own coordinates.
int expected(const Buffer<int> &in, int x, int y) {
    auto A = [&](int i, int j) { return in(i, j) * 2; };
    auto B = [&](int i, int j) { return A(i + 1, j - 1) + 1; };
    auto heavy = [&](int i, int j) { return ((in(i, j) * 3 + 1) * 2 - 7) + i; };
    int s = B(x, y) + B(x + 1, y) * 3;
    int shared = in(x, y) + 1;
    int twice = in(x, y) * 5 - 1;
    int t = shared + (in(x / 2, y) + twice) * 11 + (in(2 * x, y) - 5 + twice) + in(y, x) * 7;
    return s + t * 13 - shared + heavy(x, y) + heavy(x + 1, y);
}

// A random input for outputs of up to w x h, and the number of points of out over [0, w) x
// [0, h) that differ from expected().
Buffer<int> random_input(int w, int h, std::mt19937 &rng) {
    // in is read at x / 2, 2 * x, x + 2 and (y, x), and at y - 1.
    int side = 2 * std::max(w, h) + 3;
    Buffer<int> in(std::vector<int>{side, side + 1});
    in.set_min({0, -1});
    std::uniform_int_distribution<int> value(-1000, 1000);
    for (int j = -1; j < side; ++j)
        for (int i = 0; i < side; ++i) in(i, j) = value(rng);
    return in;
}

int wrong_points(const Buffer<int> &out, const Buffer<int> &in) {
    int wrong = 0;
    for (int y = 0; y < out.height(); ++y)
        for (int x = 0; x < out.width(); ++x) wrong += out(x, y) != expected(in, x, y);
    return wrong;
}

} // namespace

TEST_CASE("a Func read one-to-one by its only consumer, reading only at shifted points, is inlined", "[inlining]") {
    Mixed m;
    Pipeline p(m.out);
    CHECK(inlined_names(p) == kMixedInlined);
    // The schedule says so, and the inlined Funcs have no statements.
    nlohmann::json j = nlohmann::json::parse(p.schedule_json());
    std::set<std::string> listed;
    for (const auto &n : j["pipeline"]["inlined"]) listed.insert(n.get<std::string>());
    CHECK(listed == kMixedInlined);
    for (const auto &st : j["statements"]) {
        std::string name = st["name"].get<std::string>();
        INFO(name);
        for (const std::string &f : kMixedInlined) CHECK(name.find("_" + f + "_") == std::string::npos);
    }
}

TEST_CASE("a pipeline with a scheduling directive inlines nothing it was not asked to", "[inlining]") {
    Mixed m;
    m.shared.compute_root();
    CHECK(inlined_names(Pipeline(m.out)).empty());
    Mixed n;
    n.half.compute_inline();  // compute_inline is not a loop directive: the rest is still inlined
    CHECK(inlined_names(Pipeline(n.out)) == kMixedInlined);
}

TEST_CASE("a Func whose consumer is computed inline, or has updates, is not inlined", "[inlining]") {
    Var x("x");
    Func f("f"), g("g"), h("h"), r("r"), u("u");
    f(x) = ((x * 3 + 1) * x - 7) * x + 2;  // too many operations to be recomputed at 3 points
    g(x) = f(x - 2) + 1;  // one-to-one, but g is read at 3 points by h and computed inline
    g.compute_inline();
    h(x) = g(x - 1) + g(x) + g(x + 1);
    u(x) = h(x) * 2;  // h is inlined into u; u is read by r's update, and kept
    RDom k(0, 4, "k");
    r(x) = 0;
    r(x) += u(x + k);
    CHECK(inlined_names(Pipeline(r)) == std::set<std::string>{"h"});
}

TEST_CASE("harris inlines every stage but Ix and Iy, as Halide's own schedule does", "[inlining]") {
    // Sxx and Syy are read by det and trace, both inlined into harris: harris reads each at one
    // point. Ixx, Iyy and Ixy, recomputed at 9 points each, read Ix and Iy at the 9 points harris
    // reads anyway: 18 loads a point instead of 27 (and 3 stages that store).
    auto app = apps::make_app("harris");
    CHECK(inlined_names(app->pipeline()) ==
          std::set<std::string>{"det", "trace", "Sxx", "Syy", "Sxy", "Ixx", "Iyy", "Ixy"});
}

TEST_CASE("a cheap Func read at several points is recomputed only where that saves loads", "[inlining]") {
    Var x("x");
    InputBuffer<float> a("a", 1), b("b", 1), c("c", 1);
    Func square("square"), product("product"), square_box("square_box"), product_box("product_box"), out("out");
    // Recomputed at 5 points: 5 loads of a, instead of 5 of square and square's own load and store.
    square(x) = a(x) * a(x);
    // Recomputed at 5 points: 10 loads, instead of 5 and product's own 2 loads and store: kept.
    product(x) = b(x) * c(x);
    auto box5 = [&](const Func &f) { return f(x - 2) + f(x - 1) + f(x) + f(x + 1) + f(x + 2); };
    square_box(x) = box5(square);
    product_box(x) = box5(product);
    out(x) = square_box(x) * product_box(x);  // reads both boxes at one point: both inlined
    CHECK(inlined_names(Pipeline(out)) == std::set<std::string>{"square", "square_box", "product_box"});
}

TEST_CASE("a boundary condition of an input is computed inline into every pure consumer, however it is read",
          "[inlining]") {
    // clamped = repeat_edge(in) is read by down at 2x - 1 and 2x + 1 and by shifted at shifted
    // points and at a constant row: inlined into both (each reads the input where it read
    // clamped: no pass over clamped's whole region to store it). shifted, read one-to-one by out,
    // is inlined in turn; down (a downsample) is kept. Read also by an update (counted), clamped
    // is kept: reductions reading clamped inputs multiplied the pieces of the model's accesses.
    // The values: plain loops, at outputs larger than the input.
    Var x("x"), y("y");
    InputBuffer<int> in("in", 2);
    Func clamped = BoundaryConditions::repeat_edge(in);
    Func down("down"), shifted("shifted"), counted("counted"), out("out"), with_update("with_update");
    down(x, y) = clamped(2 * x - 1, y) + clamped(2 * x + 1, y) * 2;
    shifted(x, y) = clamped(x + 1, y - 1) * 3 + clamped(x, 3);
    out(x, y) = down(x, y) + shifted(x, y) * 5;
    RDom r(0, 3, "r");
    counted(x) = 0;
    counted(x) += clamped(x + r, 0) * (r + 1);
    with_update(x, y) = out(x, y) - counted(x);
    Pipeline p(out);
    CHECK(inlined_names(p) == std::set<std::string>{clamped.name(), "shifted"});
    CHECK(inlined_names(Pipeline(with_update)) == std::set<std::string>{"shifted", "out"});
    std::mt19937 rng(29);
    std::uniform_int_distribution<int> value(-1000, 1000);
    for (auto [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {3, 5}, {17, 4}, {37, 41}, {66, 19}}) {
        // The input: about half the output's width, at min (1, 1).
        int iw = std::max(1, w / 2), ih = std::max(1, h - 2);
        Buffer<int> data(std::vector<int>{iw, ih});
        data.set_min({1, 1});
        for (int j = 1; j <= ih; ++j)
            for (int i = 1; i <= iw; ++i) data(i, j) = value(rng);
        in.set(data);
        auto at = [&](int i, int j) { return data(std::clamp(i, 1, iw), std::clamp(j, 1, ih)); };
        check_every_way(p, w, h, [&](int i, int j) {
            return at(2 * i - 1, j) + at(2 * i + 1, j) * 2 + (at(i + 1, j - 1) * 3 + at(i, 3)) * 5;
        });
    }
}

TEST_CASE("an alias of another Func's channel or shift is computed inline into every consumer, unless it transposes",
          "[inlining]") {
    // first(x, y) = planes(x, y, 0) and second(x, y) = planes(x + 1, y, 1) compute nothing (as
    // camera_pipe's g_gr(x, y) = deinterleaved(x, y, 0)): inlined into both their consumers, each
    // reads planes where it read the alias, and the aliases' passes (a copy each) go.
    // transposed(x, y) = planes(y, x, 0) is kept: inlined, each of its consumers' contiguous
    // reads would be strided. left and right (7 operations, read at two points each) are kept,
    // so that the aliases have two consumers and only this rule can inline them. Read by an
    // update too, an alias is kept.
    Var x("x"), y("y"), c("c");
    InputBuffer<int> in("in", 2);
    Func planes("planes"), first("first"), second("second"), transposed("transposed"), left("left"), right("right"),
        out("out");
    planes(x, y, c) = in(x, y) * (c + 2) + in(x + 1, y) * 3 - c;
    first(x, y) = planes(x, y, 0);
    second(x, y) = planes(x + 1, y, 1);
    transposed(x, y) = planes(y, x, 0);
    left(x, y) = first(x, y) * 2 + first(x + 1, y) * 3 + second(x, y) * 5 + transposed(x, y) * 7;
    right(x, y) = first(x, y + 1) * 11 - second(x - 1, y) * 3 + transposed(x + 1, y) * 13 - 1;
    out(x, y) = left(x, y) + left(x + 1, y) * 2 + right(x, y) - right(x, y + 1) * 3;
    Pipeline p(out);
    CHECK(inlined_names(p) == std::set<std::string>{"first", "second"});
    Func with_update("with_update");
    RDom r(0, 2, "r");
    with_update(x, y) = out(x, y);
    with_update(x, y) += first(x + r, y);
    CHECK(inlined_names(Pipeline(with_update)).count("first") == 0);

    std::mt19937 rng(31);
    std::uniform_int_distribution<int> value(-100, 100);
    for (auto [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {2, 7}, {17, 4}, {33, 31}}) {
        int n = std::max(w, h) + 5;
        Buffer<int> data(std::vector<int>{n, n});
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) data(i, j) = value(rng);
        in.set(data);
        auto pl = [&](int i, int j, int k) { return data(i, j) * (k + 2) + data(i + 1, j) * 3 - k; };
        auto l = [&](int i, int j) {
            return pl(i, j, 0) * 2 + pl(i + 1, j, 0) * 3 + pl(i + 1, j, 1) * 5 + pl(j, i, 0) * 7;
        };
        auto rt = [&](int i, int j) { return pl(i, j + 1, 0) * 11 - pl(i, j, 1) * 3 + pl(j, i + 1, 0) * 13 - 1; };
        check_every_way(p, w, h, [&](int i, int j) { return l(i, j) + l(i + 1, j) * 2 + rt(i, j) - rt(i, j + 1) * 3; });
    }
}

TEST_CASE("a Func that chooses among reads by its coordinates is inlined where its consumers' coordinates decide",
          "[inlining]") {
    // chosen(x, y, c) = select(c == 0, a(x, y), c == 1, b(x, y + 1), a(x + 1, y)) computes
    // nothing (camera_pipe's demosaiced, a choice of colour plane by channel). at_constants reads
    // it at channels 0, 1 and 2: inlined, each call is one read of a or b (the choice made), and
    // chosen's pass goes. per_channel reads it at its own c, the same in a whole vector step,
    // which branches on it: inlined too. by_column reads it at channel x % 3, a choice within
    // each vector step: inlined, every step would load all three, so there it is kept. a and b
    // (5 operations, read at several points) are kept.
    TwoPlanes t;
    Var x = t.x, y = t.y, c("c");
    Func a = t.a, b = t.b, chosen("chosen"), at_constants("at_constants"), per_channel("per_channel"),
         by_column("by_column");
    chosen(x, y, c) = select(c == 0, a(x, y), c == 1, b(x, y + 1), a(x + 1, y));
    at_constants(x, y) = chosen(x, y, 0) * 3 + chosen(x, y, 1) * 5 + chosen(x + 1, y, 2) - chosen(x, y + 1, 1);
    per_channel(x, y, c) = chosen(x, y, c) * 2 + chosen(x + 1, y, c);
    Pipeline p(at_constants);
    CHECK(inlined_names(p) == std::set<std::string>{"chosen"});
    by_column(x, y) = chosen(x, y, x % 3) * 2 + chosen(x + 1, y, 1);
    CHECK(inlined_names(Pipeline(per_channel)).count("chosen") == 1);
    CHECK(inlined_names(Pipeline(by_column)).count("chosen") == 0);

    std::mt19937 rng(37);
    for (auto [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {3, 2}, {16, 5}, {35, 33}}) {
        t.bind_random(w, h, rng);
        auto ch = [&](int i, int j, int k) { return k == 0 ? t.av(i, j) : k == 1 ? t.bv(i, j + 1) : t.av(i + 1, j); };
        check_every_way(p, w, h, [&](int i, int j) {
            return ch(i, j, 0) * 3 + ch(i, j, 1) * 5 + ch(i + 1, j, 2) - ch(i, j + 1, 1);
        });
        // per_channel, its choice inlined, and by_column, kept.
        Buffer<int> channels(std::vector<int>{w, h, 3}), columns(std::vector<int>{w, h});
        Pipeline(per_channel).compile(Target::host(), {}).realize(channels);
        Pipeline(by_column).compile(Target::host(), {}).realize(columns);
        int wrong = 0;
        for (int k = 0; k < 3; ++k)
            for (int j = 0; j < h; ++j)
                for (int i = 0; i < w; ++i) {
                    wrong += channels(i, j, k) != ch(i, j, k) * 2 + ch(i + 1, j, k);
                    if (k == 0) wrong += columns(i, j) != ch(i, j, i % 3) * 2 + ch(i + 1, j, 1);
                }
        INFO("per_channel and by_column at " << w << " x " << h);
        CHECK(wrong == 0);
    }
}

TEST_CASE("a Func that chooses between two Funcs' rows at half the rate is inlined, one choosing between columns is not",
          "[inlining]") {
    // rows(x, y) = select(y % 2 == 0, a(x, y / 2), b(x, y / 2)) (camera_pipe's red, green and
    // blue interleave rows of two half-height planes): inlined, each row of its consumer reads one
    // of them, the vector loop branching on the row's parity, and rows' copy pass goes.
    // columns(x, y) chooses by x % 2, within each vector step: inlined, every step would read both
    // planes, so it is kept. a and b (5 operations, read at several points) are kept.
    TwoPlanes t;
    Var x = t.x, y = t.y;
    Func a = t.a, b = t.b, rows("rows"), columns("columns"), out("out");
    rows(x, y) = select(y % 2 == 0, a(x, y / 2), b(x, y / 2));
    columns(x, y) = select(x % 2 == 0, a(x / 2, y), b(x / 2, y));
    out(x, y) = rows(x, y) * 3 + rows(x + 1, y + 1) - columns(x, y) * 2 + columns(x + 1, y);
    Pipeline p(out);
    CHECK(inlined_names(p) == std::set<std::string>{"rows"});

    std::mt19937 rng(41);
    for (auto [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {2, 3}, {17, 6}, {40, 33}}) {
        t.bind_random(w, h, rng);
        auto rv = [&](int i, int j) { return j % 2 == 0 ? t.av(i, j / 2) : t.bv(i, j / 2); };
        auto cv = [&](int i, int j) { return i % 2 == 0 ? t.av(i / 2, j) : t.bv(i / 2, j); };
        check_every_way(p, w, h, [&](int i, int j) {
            return rv(i, j) * 3 + rv(i + 1, j + 1) - cv(i, j) * 2 + cv(i + 1, j);
        });
    }
}

TEST_CASE("a cheap Func of inputs alone is inlined into all its consumers where each then reads less", "[inlining]") {
    // premultiplied (interpolate's first stage: 2 operations, reads of the input alone) is read
    // at 2x - 1, 2x and 2x + 1 by down and at two points by composite: stored, each of its
    // points costs 2 loads and a store, 2 of them per point of down; inlined, down reads the input
    // at 6 points and composite at 2. Inlined into both. heavy (5 operations) is kept, and so are
    // upsampled_source (read at x / 2) and counted_source (read by an update).
    Var x("x"), y("y"), c("c");
    InputBuffer<float> in("in", 3);
    Func premultiplied("premultiplied"), down("down"), composite("composite"), heavy("heavy"), upsampled_source("upsampled_source"),
        up("up"), counted_source("counted_source"), counted("counted"), out("out");
    premultiplied(x, y, c) = select(c < 3, in(x, y, c) * in(x, y, 3), in(x, y, 3));
    down(x, y, c) = premultiplied(2 * x - 1, y, c) + premultiplied(2 * x, y, c) * 2.0f + premultiplied(2 * x + 1, y, c);
    composite(x, y, c) = premultiplied(x, y, c) + (1.0f - premultiplied(x, y, 3)) * down(x, y, c);
    heavy(x, y, c) = ((in(x, y, c) * 3.0f + 1.0f) * 2.0f - 7.0f) * in(x, y, 3);
    upsampled_source(x, y, c) = in(x, y, c) * 0.5f;
    up(x, y, c) = upsampled_source(x / 2, y, c) + heavy(x, y, c) + heavy(x + 1, y, c);
    counted_source(x, y, c) = in(x, y, c) + 1.0f;
    RDom r(0, 2, "r");
    counted(x, y, c) = 0.0f;
    counted(x, y, c) += counted_source(x + r, y, c);
    out(x, y, c) = composite(x, y, c) + up(x, y, c) - counted(x, y, c);
    Pipeline p(out);
    CHECK(inlined_names(p) == std::set<std::string>{"premultiplied", "composite"});
    std::mt19937 rng(31);
    std::uniform_real_distribution<float> value(0.0f, 1.0f);
    for (auto [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {5, 3}, {19, 7}, {64, 9}}) {
        Buffer<float> data(std::vector<int>{2 * w + 2, h, 4});
        data.set_min({-1, 0, 0});
        for (int k = 0; k < 4; ++k)
            for (int j = 0; j < h; ++j)
                for (int i = -1; i <= 2 * w; ++i) data(i, j, k) = value(rng);
        in.set(data);
        Buffer<float> want(std::vector<int>{w, h, 3});
        interpret(p, std::vector<Buffer<void>>{Buffer<void>(want)});
        for (int k = 0; k < 3; ++k)
            for (int j = 0; j < h; ++j)
                for (int i = 0; i < w; ++i) {
                    auto pm = [&](int a, int cc) { return cc < 3 ? data(a, j, cc) * data(a, j, 3) : data(a, j, 3); };
                    auto hv = [&](int a) { return ((data(a, j, k) * 3.0f + 1.0f) * 2.0f - 7.0f) * data(a, j, 3); };
                    float dn = pm(2 * i - 1, k) + pm(2 * i, k) * 2.0f + pm(2 * i + 1, k);
                    float expect = (pm(i, k) + (1.0f - pm(i, 3)) * dn) + (data(i / 2, j, k) * 0.5f + hv(i) + hv(i + 1)) -
                                   ((0.0f + (data(i, j, k) + 1.0f)) + (data(i + 1, j, k) + 1.0f));
                    INFO(i << ", " << j << ", " << k << " at " << w << " x " << h);
                    REQUIRE(std::abs(want(i, j, k) - expect) <= 1e-5f * (1.0f + std::abs(expect)));
                }
        Buffer<float> got(std::vector<int>{w, h, 3});
        p.compile(Target::host(), {}).realize(got);
        for (int k = 0; k < 3; ++k)
            for (int j = 0; j < h; ++j)
                for (int i = 0; i < w; ++i) REQUIRE(std::abs(got(i, j, k) - want(i, j, k)) <= 1e-5f * (1.0f + std::abs(want(i, j, k))));
    }
}

TEST_CASE("a Func whose only consumer reads each of its points once, at constants in the coordinates it lacks, is inlined",
          "[inlining]") {
    // slice reads the input at x / 2 (so it is no one-to-one Func), and out reads its channels 0
    // and 1 at its own point: each point of slice is read once, and inlined, both channels' reads
    // share their addresses (bilateral_grid's slice: 15.1 -> 13.1 ms). Kept: matrix, read at
    // constants alone (by every point of out: recomputed at each); shifted, read at two different
    // shifts; twice, read twice at one point. (Each kept one reads at x / 2 or has more than 4
    // operations, out of the other kinds' reach.)
    Var x("x"), y("y"), c("c");
    InputBuffer<int> in("in", 3);
    Func slice("slice"), matrix("matrix"), shifted("shifted"), twice("twice"), out("out");
    slice(x, y, c) = in(x / 2, y, c) * (c + 2);
    matrix(x, y) = ((x * 3 + y) * 7 - x) * (y + 2) + 1;
    shifted(x, y, c) = in(x / 2, y, c) - c;
    twice(x, y, c) = in(x / 2, y, c) * 5 + c;
    out(x, y) = slice(x, y, 0) - slice(x, y, 1) * 3 + matrix(1, 0) * in(x, y, 0) + shifted(x, y, 1) * shifted(x + 1, y, 1) +
                twice(x, y, 0) * twice(x, y, 0);
    Pipeline p(out);
    CHECK(inlined_names(p) == std::set<std::string>{"slice"});
    std::mt19937 rng(3);
    std::uniform_int_distribution<int> value(-100, 100);
    for (auto [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {7, 3}, {37, 11}}) {
        Buffer<int> data(std::vector<int>{w + 1, h, 2});
        for (int k = 0; k < 2; ++k)
            for (int j = 0; j < h; ++j)
                for (int i = 0; i <= w; ++i) data(i, j, k) = value(rng);
        in.set(data);
        require_compiled_and_interpreted(p, w, h, [&](int i, int j) {
            int twice = data(i / 2, j, 0) * 5;
            return data(i / 2, j, 0) * 2 - data(i / 2, j, 1) * 3 * 3 + 41 * data(i, j, 0) +
                   (data(i / 2, j, 1) - 1) * (data((i + 1) / 2, j, 1) - 1) + twice * twice;
        });
    }
}

TEST_CASE("a Func whose only consumer reads two of its levels chosen per point from data is inlined, if it reads at shifts",
          "[inlining]") {
    // pick reads levels at (x, y, li) and (x, y, li + 1), li computed from the input at its own
    // point: each point of levels is read once at most, and only 2 of its 5 levels per pixel
    // (local_laplacian's laplace_j in out_laplace_j). Kept: coarse, read the same way but reading
    // the input at x / 2 (its floor division would enter pick's data-dependent access); apart,
    // read at li and at a second computed level lj (both may be one point).
    Var x("x"), y("y"), k("k");
    InputBuffer<int> in("in", 2);
    Func levels("levels"), coarse("coarse"), apart("apart"), pick("pick");
    levels(x, y, k) = in(x, y) * (k + 3) - k * k;
    coarse(x, y, k) = in(x / 2, y) * 5 + k;
    apart(x, y, k) = in(x, y) * 7 + k;
    Expr li = clamp(in(x, y) % 4, 0, 3), lj = clamp(in(x, y) / 16, 0, 4);
    pick(x, y) = levels(x, y, li) * 2 + levels(x, y, li + 1) + coarse(x, y, li) - coarse(x, y, li + 1) * 3 +
                 apart(x, y, li) * apart(x, y, lj);
    Pipeline p(pick);
    CHECK(inlined_names(p) == std::set<std::string>{"levels"});
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> value(0, 80);
    for (auto [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {7, 3}, {37, 11}}) {
        Buffer<int> data(std::vector<int>{w, h});
        for (int j = 0; j < h; ++j)
            for (int i = 0; i < w; ++i) data(i, j) = value(rng);
        in.set(data);
        require_compiled_and_interpreted(p, w, h, [&](int i, int j) {
            int v = data(i, j), l = std::clamp(v % 4, 0, 3), m = std::clamp(v / 16, 0, 4), c = data(i / 2, j);
            auto lv = [&](int kk) { return v * (kk + 3) - kk * kk; };
            return lv(l) * 2 + lv(l + 1) + (c * 5 + l) - (c * 5 + l + 1) * 3 + (v * 7 + l) * (v * 7 + m);
        });
    }
}

TEST_CASE("inlined Funcs give the values of plain loops, compiled for the CPU and the GPU emulator and interpreted",
          "[inlining]") {
    std::mt19937 rng(17);
    for (auto [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {2, 3}, {7, 5}, {37, 41}, {65, 17}}) {
        Mixed m;
        Buffer<int> in = random_input(w, h, rng);
        m.in.set(in);
        Pipeline p(m.out);
        for (const char *way : {"cpu", "gpu emulator", "interpreter"}) {
            Buffer<int> out(std::vector<int>{w, h});
            if (std::string(way) == "cpu") p.compile(Target::host(), {}).realize(out);
            else if (std::string(way) == "gpu emulator") p.compile(Target::cuda(80).emulated(), {}).realize(out);
            else interpret(p, std::vector<Buffer<void>>{Buffer<void>(out)});
            INFO(way << " at " << w << " x " << h);
            CHECK(wrong_points(out, in) == 0);
        }
    }
}

TEST_CASE("an imported schedule inlines the Funcs it lists, and a list naming no pure intermediate Func is rejected",
          "[inlining]") {
    std::mt19937 rng(5);
    Buffer<int> in = random_input(23, 19, rng);
    // The schedule of the pipeline with a directive inlines nothing; imported into the same
    // pipeline without it, the model inlines nothing either, and finds the statements it names.
    Mixed written;
    written.shared.compute_root();
    std::string json = Pipeline(written.out).schedule_json();
    Mixed m;
    m.in.set(in);
    Pipeline p(m.out);
    std::string automatic = p.schedule_json();
    p.set_schedule_json(json);
    CHECK(nlohmann::json::parse(p.schedule_json())["pipeline"]["inlined"].empty());
    Buffer<int> out(std::vector<int>{23, 19});
    p.compile(Target::host(), {}).realize(out);
    CHECK(wrong_points(out, in) == 0);
    // And back to the automatic schedule's own list.
    p.set_schedule_json(automatic);
    CHECK(nlohmann::json::parse(p.schedule_json())["pipeline"]["inlined"].size() == kMixedInlined.size());
    Buffer<int> again(std::vector<int>{23, 19});
    p.compile(Target::host(), {}).realize(again);
    CHECK(wrong_points(again, in) == 0);
    nlohmann::json edited = nlohmann::json::parse(automatic);
    edited["pipeline"]["inlined"].push_back("no_such_func");
    REQUIRE_USER_ERROR(p.set_schedule_json(edited.dump()), "no_such_func", "pipeline.inlined");
    edited = nlohmann::json::parse(automatic);
    edited["pipeline"]["inlined"].push_back("out");
    REQUIRE_USER_ERROR(p.set_schedule_json(edited.dump()), "lists out in pipeline.inlined", "output");
}
