// Halide-style scheduling directives (dsl stage.h, poly directive_schedule.h): each changes the
// loop nest as documented, the results match the reference interpreter, and an illegal one is
// rejected with the dependence it violates.
#include "../test_util.h"

#include <tessera/pipeline_text.h>

#include <nlohmann/json.hpp>

#include "../reliability/regression_util.h"
#include "tessera_apps/written_schedules.h"

using namespace tessera;

namespace {

Buffer<float> random_image(int w, int h, uint32_t seed) {
    Buffer<float> b(std::vector<int>{w, h});
    uint32_t s = seed;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            s = s * 1664525u + 1013904223u;
            b(x, y) = float(s >> 8) / float(1 << 24);
        }
    return b;
}

std::string loop_nest(const Pipeline &p) { return p.compile(Target::host(), {}).compiler_ir("loop_nest"); }

// Compiled with directives and interpreted over a region with odd extents and negative mins.
void check_against_interpreter(const Pipeline &p, int w, int h) {
    for (auto [mx, my] : {std::pair{0, 0}, std::pair{-3, 5}}) {
        Buffer<float> got(std::vector<int>{w, h}), want(std::vector<int>{w, h});
        got.set_min({mx, my});
        want.set_min({mx, my});
        p.compile(Target::host(), {}).realize(got);
        interpret(p, std::vector<Buffer<void>>{Buffer<void>(want)});
        INFO("region " << w << " x " << h << " at (" << mx << ", " << my << ")");
        CHECK(same(got, want));
    }
}

// Indentation of the loop whose line contains `what` in a loop nest dump, or -1.
int depth_of(const std::string &nest, const std::string &what) {
    size_t at = nest.find(what);
    if (at == std::string::npos) return -1;
    size_t line = nest.rfind('\n', at);
    line = line == std::string::npos ? 0 : line + 1;
    int spaces = 0;
    while (nest[line + size_t(spaces)] == ' ') ++spaces;
    return spaces / 2;
}

Func scaled(const Buffer<float> &in, const std::string &name) {
    Var x("x"), y("y");
    Func f(name);
    f(x, y) = in(x, y) * 2.0f + in(x, y) * in(x, y);
    return f;
}

} // namespace

TEST_CASE("split, parallel and vectorize give the documented loops and the reference's results", "[directives]") {
    Var x("x"), y("y"), xo("xo"), xi("xi");
    Buffer<float> in = random_image(64, 64, 1);
    in.set_min({-8, -8});
    Func f = scaled(in, "f");
    f.split(x, xo, xi, 8).parallel(y).vectorize(xi);
    Pipeline p(f);
    CHECK_FALSE(p.auto_scheduled());
    std::string nest = loop_nest(p);
    INFO(nest);
    // y, then x / 8, then x % 8 as the vector loop.
    CHECK(nest.find("parallel for") != std::string::npos);
    CHECK(nest.find("vectorized for") != std::string::npos);
    CHECK(depth_of(nest, "parallel for") == 0);
    CHECK(depth_of(nest, "vectorized for") == 2);
    CHECK(nest.find("(int64)8") != std::string::npos);
    nlohmann::json j = nlohmann::json::parse(p.schedule_json());
    CHECK(j["groups"][0]["note"].get<std::string>().find("y (parallel), xo, xi (vector)") != std::string::npos);
    for (auto [w, h] : {std::pair{1, 1}, std::pair{7, 3}, std::pair{8, 8}, std::pair{9, 17}, std::pair{37, 23}})
        check_against_interpreter(p, w, h);
}

TEST_CASE("reorder and tile put the loops in the order written, innermost first", "[directives]") {
    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    Buffer<float> in = random_image(64, 64, 2);
    in.set_min({-8, -8});
    SECTION("reorder(y, x): x outermost, y innermost") {
        Func f = scaled(in, "f");
        f.reorder(y, x);
        Pipeline p(f);
        nlohmann::json j = nlohmann::json::parse(p.schedule_json());
        CHECK(j["groups"][0]["note"].get<std::string>().find("loops (outermost first): x, y;") != std::string::npos);
        // The band's outer member is the x coordinate (i1 of S_f_0[y, x]).
        std::string tree = j["schedule_tree"];
        CHECK(tree.find("S_f_0[i0, i1] -> [(i1)]") < tree.find("S_f_0[i0, i1] -> [(i0)]"));
        check_against_interpreter(p, 13, 5);
    }
    SECTION("tile(x, y, xo, yo, xi, yi, 8, 4): yo, xo, yi, xi") {
        Func f = scaled(in, "f");
        f.tile(x, y, xo, yo, xi, yi, 8, 4).parallel(yo);
        Pipeline p(f);
        nlohmann::json j = nlohmann::json::parse(p.schedule_json());
        CHECK(j["groups"][0]["note"].get<std::string>().find("yo (parallel), xo, yi, xi;") != std::string::npos);
        std::string nest = loop_nest(p);
        INFO(nest);
        CHECK(depth_of(nest, "parallel for") == 0);
        for (auto [w, h] : {std::pair{3, 2}, std::pair{8, 4}, std::pair{9, 5}, std::pair{31, 29}}) check_against_interpreter(p, w, h);
    }
    SECTION("two adjacent parallel loops run as one collapsed loop") {
        Func f = scaled(in, "f");
        f.tile(x, y, xo, yo, xi, yi, 8, 4).parallel(yo).parallel(xo);
        Pipeline p(f);
        std::string nest = loop_nest(p);
        INFO(nest);
        CHECK(nest.find("parallel for collapse(2)") != std::string::npos);
        check_against_interpreter(p, 19, 11);
    }
    SECTION("fuse(xi, y, t) after a split: one loop over y and the block's columns") {
        Func f = scaled(in, "f");
        Var t("t");
        f.split(x, xo, xi, 4).fuse(xi, y, t).parallel(t);
        Pipeline p(f);
        nlohmann::json j = nlohmann::json::parse(p.schedule_json());
        CHECK(j["groups"][0]["note"].get<std::string>().find("t (parallel), xo;") != std::string::npos);
        std::string tree = j["schedule_tree"];
        CHECK(tree.find("4i0") != std::string::npos);
        for (auto [w, h] : {std::pair{1, 1}, std::pair{5, 3}, std::pair{16, 7}}) check_against_interpreter(p, w, h);
    }
    SECTION("unroll(x, 4): the inner loop of 4 is unrolled") {
        Func f = scaled(in, "f");
        f.unroll(x, 4);
        Pipeline p(f);
        std::string nest = loop_nest(p);
        INFO(nest);
        // Four copies of the statement, no loop over the 4 columns.
        size_t copies = 0;
        for (size_t at = nest.find("S_f_0("); at != std::string::npos; at = nest.find("S_f_0(", at + 1)) ++copies;
        CHECK(copies >= 4);
        for (auto [w, h] : {std::pair{1, 1}, std::pair{6, 3}, std::pair{12, 5}}) check_against_interpreter(p, w, h);
    }
}

namespace {

// C(j, i) = sum_k A(k, i) * B(j, k), Halide order: i, j outer, k innermost.
struct Matmul {
    Var x{"x"}, y{"y"};
    RDom k{0, 19, "k"};
    Buffer<float> a = random_image(19, 13, 3), b = random_image(11, 19, 4);
    Func c{"c"};
    Matmul() {
        c(x, y) = 0.0f;
        c(x, y) += a(k.x, y) * b(x, k.x);
    }
};

} // namespace

TEST_CASE("a legal reorder of a reduction (matmul's k loop outward) is accepted and exact", "[directives]") {
    Matmul m;
    m.c.update(0).reorder(m.x, m.k.x, m.y).vectorize(m.x);
    Pipeline p(m.c);
    nlohmann::json j = nlohmann::json::parse(p.schedule_json());
    CHECK(j["groups"][0]["note"].get<std::string>().find("update 0 loops (outermost first): y, k.x, x (vector);") !=
          std::string::npos);
    Buffer<float> got(std::vector<int>{11, 13}), want(std::vector<int>{11, 13});
    realize_both(p, got, want);
    CHECK(same(got, want));  // the same order of k per element: bit for bit
}

TEST_CASE("illegal directives are rejected with the Func, the directive and the dependence", "[directives]") {
    Var x("x"), y("y");
    Buffer<float> in = random_image(16, 16, 5);
    SECTION("parallelizing a prefix sum's RDom loop") {
        Func f("prefix");
        RDom r(1, 15, "r");
        f(x) = in(x, 0);
        f(r.x) = f(r.x - 1) + f(r.x);
        f.update(0).parallel(r.x);
        Pipeline p(f);
        REQUIRE_USER_ERROR(p.compile(Target::host(), {}), "Func prefix", "prefix.update(0).parallel(r.x) is illegal",
                           "dependence from S_prefix_1 to S_prefix_1", "distance [1]");
    }
    SECTION("reordering a prefix sum's RDom loops against its carried dependence") {
        // f(r.x, r.y) reads f(r.x + 1, r.y - 1): written one r.y earlier (distance (1, -1) in
        // (r.y, r.x)); with r.x outermost the read would come first.
        Func f("wave");
        RDom r(0, 15, 1, 15, "r");
        f(x, y) = in(x, y);
        f(r.x, r.y) = f(r.x + 1, r.y - 1) + f(r.x, r.y);
        f.update(0).reorder(r.y, r.x);
        Pipeline p(f);
        REQUIRE_USER_ERROR(p.compile(Target::host(), {}), "Func wave", "wave.update(0).reorder(r.y, r.x) is illegal",
                           "flow (read-after-write) dependence from S_wave_1 to S_wave_1", "distance [1, -1]");
    }
    SECTION("vectorizing a reduction loop") {
        Matmul m;
        m.c.update(0).vectorize(m.k.x);
        Pipeline p(m.c);
        REQUIRE_USER_ERROR(p.compile(Target::host(), {}), "Func c", "c.update(0).vectorize(k.x) is illegal", "S_c_1");
    }
}

TEST_CASE("a directive that does not apply fails where it is written, naming the Func and the loop", "[directives]") {
    Var x("x"), y("y"), xo("xo"), xi("xi"), z("z");
    Buffer<float> in = random_image(16, 16, 6);
    Func f = scaled(in, "f");
    REQUIRE_USER_ERROR(f.split(z, xo, xi, 4), "Func f: f.split(z, xo, xi, 4)", "no loop z", "y, x");
    REQUIRE_USER_ERROR(f.split(x, xo, xi, 0), "factor must be positive");
    REQUIRE_USER_ERROR(f.split(x, y, xi, 4), "already has a loop named y");
    REQUIRE_USER_ERROR(f.vectorize(y), "f.vectorize(y)", "not the innermost loop");
    REQUIRE_USER_ERROR(f.fuse(x, y, z), "f.fuse(x, y, z)", "no constant range");
    REQUIRE_USER_ERROR(f.update(0), "Func f has 0 update definitions");
    REQUIRE_USER_ERROR(f.unroll(x), "f.unroll(x)", "no constant range to unroll");
    f.parallel(y);
    REQUIRE_USER_ERROR(f.vectorize(y), "already parallel");
    Var xo2("xo2"), xi2("xi2");
    Func g = scaled(in, "g");
    g.split(x, xo2, xi2, 4).parallel(y);
    REQUIRE_USER_ERROR(g.parallel(xi2), "g.parallel(xi2)", "not adjacent");
    // The failed directives were not recorded: the pipeline compiles with parallel(y) alone.
    nlohmann::json j = nlohmann::json::parse(Pipeline(f).schedule_json());
    CHECK(j["groups"][0]["note"].get<std::string>().find("pure loops (outermost first): y (parallel), x;") != std::string::npos);
    Func undefined("undefined");
    REQUIRE_USER_ERROR(undefined.parallel(x), "Func undefined has no definition");
}

TEST_CASE("a directive-written schedule round-trips through its JSON", "[directives][json]") {
    Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    Buffer<float> in = random_image(40, 40, 7);
    Func g("g"), f("f");
    g(x, y) = in(x, y) + 1.0f;
    f(x, y) = g(x, y) * g(x + 1, y);
    f.tile(x, y, xo, yo, xi, yi, 8, 4).parallel(yo).vectorize(xi);
    g.compute_root().parallel(y);
    Pipeline p(f);
    std::string json = p.schedule_json();
    // The same algorithm without directives, given the JSON: the same loop nest and results.
    Func g2("g"), f2("f");
    g2(x, y) = in(x, y) + 1.0f;
    f2(x, y) = g2(x, y) * g2(x + 1, y);
    Pipeline q(f2);
    CHECK(q.auto_scheduled());
    q.set_schedule_json(json);
    CHECK(loop_nest(q) == loop_nest(p));
    Buffer<float> a(std::vector<int>{29, 31}), b(std::vector<int>{29, 31}), want(std::vector<int>{29, 31});
    p.compile(Target::host(), {}).realize(a);
    q.compile(Target::host(), {}).realize(b);
    interpret(p, std::vector<Buffer<void>>{Buffer<void>(want)});
    CHECK(same(a, want));
    CHECK(same(b, want));
}

TEST_CASE("auto_schedule(false) computes every Func at root in Halide's default order", "[directives]") {
    Var x("x"), y("y");
    Buffer<float> in = random_image(40, 40, 8);
    in.set_min({-8, -8});
    Func g("g"), f("f");
    // 5 operations: too many to be recomputed at f's two points (automatic_inlining.h).
    g(x, y) = ((in(x, y) + 1.0f) * in(x, y) - 2.0f) * 0.5f + 3.0f;
    f(x, y) = g(x, y) * g(x + 1, y);
    Pipeline p(f);
    p.auto_schedule(false);
    CHECK_FALSE(p.auto_scheduled());
    nlohmann::json j = nlohmann::json::parse(p.schedule_json());
    REQUIRE(j["groups"].size() == 2);
    CHECK(j["groups"][0]["name"] == "g");
    CHECK(j["groups"][1]["note"].get<std::string>().find("pure loops (outermost first): y, x;") != std::string::npos);
    check_against_interpreter(p, 17, 9);
    // Directives are part of the pipeline's text, so the compile cache tells the schedules apart.
    std::string before = pipeline_text(p);
    f.parallel(y);
    CHECK(pipeline_text(p) != before);
    CHECK(pipeline_text(p).find("schedule f.parallel(y)") != std::string::npos);
    p.auto_schedule(true);
    CHECK_FALSE(p.auto_scheduled());  // f's directive still applies
}

TEST_CASE("a directive-written schedule runs on the emulated GPU with the same results", "[directives][gpu]") {
    Var x("x"), y("y"), xo("xo"), xi("xi");
    Buffer<float> in = random_image(48, 48, 9);
    Func f = scaled(in, "f");
    f.split(x, xo, xi, 8).parallel(y).vectorize(xi);
    Pipeline p(f);
    Buffer<float> got(std::vector<int>{37, 23}), want(std::vector<int>{37, 23});
    p.compile(Target::cuda(80).emulated(), {}).realize(got);
    interpret(p, std::vector<Buffer<void>>{Buffer<void>(want)});
    CHECK(same(got, want));
}

namespace {

// blur_x -> blur_y over a 3 x 3 box, the input read with a margin.
struct Blur {
    Var x{"x"}, y{"y"}, xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"};
    Buffer<float> in = random_image(80, 80, 11);
    Func bx{"blur_x"}, by{"blur_y"};
    Blur() {
        in.set_min({-8, -8});
        bx(x, y) = (in(x - 1, y) + in(x, y) + in(x + 1, y)) / 3.0f;
        by(x, y) = (bx(x, y - 1) + bx(x, y) + bx(x, y + 1)) / 3.0f;
    }
};

} // namespace

TEST_CASE("compute_at a tile loop computes the producer per tile, as the automatic overlapped tiles do", "[directives]") {
    Blur b;
    b.by.tile(b.x, b.y, b.xo, b.yo, b.xi, b.yi, 16, 8).parallel(b.yo).vectorize(b.xi);
    b.bx.compute_at(b.by, b.xo);
    Pipeline p(b.by);
    nlohmann::json j = nlohmann::json::parse(p.schedule_json());
    REQUIRE(j["groups"].size() == 1);
    CHECK(j["groups"][0]["kind"] == "overlapped_tiles");
    CHECK(j["groups"][0]["tile_sizes"] == nlohmann::json::array({8, 16}));
    CHECK(j["groups"][0]["note"].get<std::string>().find("blur_x computed at blur_y.xo") != std::string::npos);
    // blur_x lives in a scratchpad of the tile: its footprint, 10 rows of 16 columns.
    bool scratch = false;
    for (const auto &s : j["storage"])
        if (s["func"] == "blur_x") scratch = s["kind"] == "scratch";
    CHECK(scratch);
    for (auto [w, h] : {std::pair{1, 1}, std::pair{15, 7}, std::pair{16, 8}, std::pair{17, 9}, std::pair{37, 29}})
        check_against_interpreter(p, w, h);
    // The automatic scheduler with the same tiles makes the same loop nest.
    Blur a;
    CompileOptions o;
    o.tile_sizes = {8, 16};
    o.fusion = "max";
    std::string automatic = Pipeline(a.by).compile(Target::host(), o).compiler_ir("loop_nest");
    INFO(automatic);
    CHECK(automatic.find("blur_x") != std::string::npos);
}

TEST_CASE("store_at a tile loop with compute_at its row loop slides rows through a ring", "[directives]") {
    Blur b;
    b.by.tile(b.x, b.y, b.xo, b.yo, b.xi, b.yi, 32, 16).parallel(b.yo).vectorize(b.xi);
    b.bx.store_at(b.by, b.xo).compute_at(b.by, b.yi);
    Pipeline p(b.by);
    nlohmann::json j = nlohmann::json::parse(p.schedule_json());
    CHECK(j["groups"][0]["note"].get<std::string>().find("rows slide") != std::string::npos);
    CHECK(j["schedule_tree"].get<std::string>().find("fold:") != std::string::npos);
    for (auto [w, h] : {std::pair{1, 1}, std::pair{31, 15}, std::pair{33, 17}, std::pair{50, 41}}) check_against_interpreter(p, w, h);
}

TEST_CASE("compute_at and store_at that cannot apply are errors naming the directive", "[directives]") {
    SECTION("a consumer loop that does not tile it") {
        Blur b;
        b.bx.compute_at(b.by, b.y);
        REQUIRE_USER_ERROR(Pipeline(b.by).compile(Target::host(), {}), "blur_x.compute_at(blur_y, y)",
                           "leave its dimension x whole");
    }
    SECTION("a loop the consumer does not have") {
        Blur b;
        b.bx.compute_at(b.by, b.xo);
        REQUIRE_USER_ERROR(Pipeline(b.by).compile(Target::host(), {}), "blur_y has no loop xo");
    }
    SECTION("a producer that another Func reads outside the tiles") {
        Blur b;
        Func other("other");
        other(b.x, b.y) = b.bx(b.x, b.y) + b.by(b.x, b.y);
        b.by.tile(b.x, b.y, b.xo, b.yo, b.xi, b.yi, 16, 8);
        b.bx.compute_at(b.by, b.xo);
        REQUIRE_USER_ERROR(Pipeline(other).compile(Target::host(), {}), "Func other also reads blur_x");
    }
    SECTION("store_at without compute_at") {
        Blur b;
        b.by.tile(b.x, b.y, b.xo, b.yo, b.xi, b.yi, 16, 8);
        b.bx.store_at(b.by, b.xo);
        REQUIRE_USER_ERROR(Pipeline(b.by).compile(Target::host(), {}), "needs a compute_at");
    }
    SECTION("compute_at itself") {
        Blur b;
        REQUIRE_USER_ERROR(b.by.compute_at(b.by, b.x), "not of itself");
    }
}

TEST_CASE("a producer computed at a consumer's tiles is computed where they read it, even off its box", "[directives]") {
    // Fuzzer seed 20256 with --directives: f3(x) = f1(2x + 2, x - 1) reads f1 along a diagonal,
    // so f1's box has points no tile reads. Each tile computes f1's footprint only (the legality
    // check verifies every read of the scratchpad finds its element computed in the tile); the
    // points no tile reads are never computed. (This was refused before as "does not apply".)
    Var x("x"), y("y"), xo("xo"), xi("xi");
    Buffer<float> in = random_image(80, 80, 15);
    Func f1("f1"), f3("f3");
    f1(x, y) = in(x, y) + 1.0f;
    f3(x) = f1(2 * x + 2, x - 1);
    f3.split(x, xo, xi, 8);
    f1.compute_at(f3, xo);
    Pipeline p(f3);
    Callable c = p.compile(Target::host(), {});
    for (auto [mn, extent] : {std::pair{1, 37}, std::pair{3, 5}, std::pair{9, 8}, std::pair{2, 17}}) {
        Buffer<float> got(std::vector<int>{extent}), want(std::vector<int>{extent});
        got.set_min({mn});
        want.set_min({mn});
        c.realize(got);
        interpret(p, std::vector<Buffer<void>>{Buffer<void>(want)});
        INFO("f3 over [" << mn << ", " << mn + extent - 1 << "]");
        CHECK(same(got, want));
    }
}

TEST_CASE("unrolled rows and a vector block inside a reduction loop become a register tile", "[directives]") {
    // Halide's register blocking of matmul: ..., k, yi (unrolled, 4), xi (vector, 8).
    Matmul m;
    Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
    m.c.update(0).split(m.y, yo, yi, 4).split(m.x, xo, xi, 8).reorder(xi, yi, m.k.x, xo, yo).unroll(yi).vectorize(xi).parallel(yo);
    Pipeline p(m.c);
    nlohmann::json j = nlohmann::json::parse(p.schedule_json());
    INFO(j["loop_nest"].get<std::string>());
    CHECK(j["schedule_tree"].get<std::string>().find("register_tile:4:8") != std::string::npos);
    for (auto [w, h] : {std::pair{11, 13}, std::pair{8, 4}, std::pair{9, 12}, std::pair{3, 2}}) {
        Buffer<float> got(std::vector<int>{w, h}), want(std::vector<int>{w, h});
        realize_both(p, got, want);
        INFO(w << " x " << h);
        CHECK(same(got, want));  // each element sums its k in order: bit for bit
    }
}

TEST_CASE("the apps' directive-written schedules compute the apps' results", "[directives]") {
    for (const std::string &name : apps::apps_with_written_schedules()) {
        auto app = apps::make_app(name);
        REQUIRE(apps::apply_written_schedule(*app));
        CHECK_FALSE(app->pipeline().auto_scheduled());
        std::vector<int> sizes = name == "blur_x_blur_y" ? std::vector<int>{77, 45} : std::vector<int>{45, 77, 37};
        app->prepare(sizes, 3);
        std::vector<Buffer<void>> got = app->make_outputs(), want = app->make_outputs();
        app->pipeline().compile(Target::host(), {}).realize(got);
        app->reference(want);
        INFO(name);
        for (size_t i = 0; i < got.size(); ++i) CHECK(apps::compare(got[i], want[i], app->tolerance()).ok);
    }
    // blur's written schedule is the automatic one, tile for tile.
    auto automatic = apps::make_app("blur_x_blur_y"), written = apps::make_app("blur_x_blur_y");
    apps::apply_written_schedule(*written);
    CHECK(loop_nest(written->pipeline()) == loop_nest(automatic->pipeline()));
}

TEST_CASE("gpu_tile maps tiles to blocks and their points to threads on a GPU target, and is refused for the host",
          "[directives][gpu]") {
    Var x("x"), y("y"), bx("bx"), by("by"), tx("tx"), ty("ty");
    Buffer<float> in = random_image(64, 64, 12);
    in.set_min({-8, -8});
    Func f = scaled(in, "f");
    f.gpu_tile(x, y, bx, by, tx, ty, 16, 4);
    Pipeline p(f);
    REQUIRE_USER_ERROR(p.compile(Target::host(), {}), "f.gpu_blocks(by)", "compiled for the host CPU");
    Callable c = p.compile(Target::cuda(80).emulated(), {});
    std::string schedule = c.compiler_ir("schedule");
    INFO(schedule);
    CHECK(schedule.find("kernel") != std::string::npos);
    CHECK(schedule.find("thread") != std::string::npos);
    // Threads along x: the fused thread loop is ty * 16 + tx.
    CHECK(schedule.find("ty_tx") != std::string::npos);
    for (auto [w, h] : {std::pair{1, 1}, std::pair{15, 3}, std::pair{16, 4}, std::pair{33, 9}}) {
        Buffer<float> got(std::vector<int>{w, h}), want(std::vector<int>{w, h});
        got.set_min({-3, 2});
        want.set_min({-3, 2});
        c.realize(got);
        interpret(p, std::vector<Buffer<void>>{Buffer<void>(want)});
        INFO(w << " x " << h);
        CHECK(same(got, want));
    }
}

TEST_CASE("every app scheduled with auto_schedule(false) computes its results", "[directives]") {
    // Each Func at root in Halide's default loop order: the baseline every directive edits.
    for (const std::string &name : apps::app_names()) {
        auto app = apps::make_app(name);
        app->pipeline().auto_schedule(false);
        std::vector<int> sizes = app->small_sizes(23);
        INFO(name);
        app->prepare(sizes, 5);
        std::vector<Buffer<void>> got = app->make_outputs(), want = app->make_outputs();
        app->pipeline().compile(Target::host(), {}).realize(got);
        app->reference(want);
        for (size_t i = 0; i < got.size(); ++i) CHECK(apps::compare(got[i], want[i], app->tolerance()).ok);
    }
}

TEST_CASE("compute_inline replaces every call by the value, under the automatic schedule and under directives",
          "[directives]") {
    for (bool directives : {false, true}) {
        Var x("x"), y("y");
        Buffer<float> in = random_image(48, 48, 13);
        in.set_min({-8, -8});
        Func g("g"), h("h"), f("f");
        g(x, y) = in(x, y) * 3.0f;
        h(x, y) = g(x, y) + g(x + 1, y);  // inlined into f, and g into h's value
        f(x, y) = h(x, y - 1) * h(x, y + 1);
        g.compute_inline();
        h.compute_inline();
        if (directives) f.parallel(y).vectorize(x);
        Pipeline p(f);
        CHECK(p.auto_scheduled() == !directives);
        nlohmann::json j = nlohmann::json::parse(p.schedule_json());
        INFO("directives " << directives << "\n" << j["loop_nest"].get<std::string>());
        REQUIRE(j["statements"].size() == 1);
        CHECK(j["statements"][0]["func"] == "f");
        CHECK(pipeline_text(p).find("compute_inline") != std::string::npos);
        for (auto [w, hh] : {std::pair{1, 1}, std::pair{17, 9}, std::pair{31, 30}}) check_against_interpreter(p, w, hh);
    }
    Var x("x");
    Buffer<float> in = random_image(8, 8, 14);
    Func u("u"), v("v");
    RDom r(0, 3, "r");
    u(x) = in(x, 0);
    u(r.x) += 1.0f;
    v(x) = u(x) * 2.0f;
    u.compute_inline();
    REQUIRE_USER_ERROR(Pipeline(v).compile(Target::host(), {}), "u.compute_inline()", "update definitions");
    Func w("w");
    w(x) = in(x, 1);
    w.compute_inline();
    REQUIRE_USER_ERROR(Pipeline(w).compile(Target::host(), {}), "w.compute_inline()", "is an output");
    REQUIRE_USER_ERROR(w.parallel(x), "computed inline");
}

namespace {

// in -> blur_x -> blur_y -> out, out pointwise: the automatic scheduler makes blur_x and blur_y
// one overlapped-tiled group.
struct BlurThenScale : Blur {
    Func out{"out"};
    BlurThenScale() { out(x, y) = by(x, y) * 2.0f + 1.0f; }
};

const nlohmann::json *group_of(const nlohmann::json &j, const std::string &func) {
    for (const auto &g : j["groups"])
        for (const auto &f : g["stages"])
            if (f == func) return &g;
    return nullptr;
}

} // namespace

TEST_CASE("Funcs without directives are grouped and tiled automatically around a Func with directives", "[directives]") {
    BlurThenScale b;
    b.out.split(b.x, b.xo, b.xi, 8).vectorize(b.xi).parallel(b.y);
    Pipeline p(b.out);
    CHECK_FALSE(p.auto_scheduled());
    nlohmann::json j = nlohmann::json::parse(p.schedule_json());
    INFO(j["loop_nest"].get<std::string>());
    REQUIRE(j["groups"].size() == 2);
    // blur_x and blur_y: the automatic scheduler's overlapped tiles, as without any directive.
    const nlohmann::json *blur = group_of(j, "blur_x");
    REQUIRE(blur);
    CHECK(blur == group_of(j, "blur_y"));
    CHECK((*blur)["kind"] == "overlapped_tiles");
    CHECK((*blur)["note"].get<std::string>().rfind("automatic (no directives)", 0) == 0);
    BlurThenScale a;
    nlohmann::json automatic = nlohmann::json::parse(Pipeline(a.out).schedule_json());
    const nlohmann::json *auto_blur = group_of(automatic, "blur_x");
    REQUIRE(auto_blur);
    CHECK((*blur)["tile_sizes"] == (*auto_blur)["tile_sizes"]);
    // out: its own loops, as written.
    const nlohmann::json *out = group_of(j, "out");
    REQUIRE(out);
    CHECK((*out)["note"].get<std::string>().find("y (parallel), xo, xi (vector)") != std::string::npos);
    // The blur's tiles run before out, and blur_x lives in the tiles' scratchpads.
    for (const auto &s : j["storage"])
        if (s["func"] == "blur_x") CHECK(s["kind"] == "scratch");
    for (auto [w, h] : {std::pair{1, 1}, std::pair{7, 3}, std::pair{37, 29}, std::pair{64, 33}}) check_against_interpreter(p, w, h);
    // The JSON round trip gives the same loop nest.
    BlurThenScale c;
    Pipeline q(c.out);
    q.set_schedule_json(p.schedule_json());
    CHECK(loop_nest(q) == loop_nest(p));
    // auto_schedule(false): every Func at root.
    p.auto_schedule(false);
    nlohmann::json all_root = nlohmann::json::parse(p.schedule_json());
    CHECK(all_root["groups"].size() == 3);
    REQUIRE(group_of(all_root, "blur_x"));
    CHECK((*group_of(all_root, "blur_x"))["note"].get<std::string>().find("computed at root by directives") != std::string::npos);
    check_against_interpreter(p, 37, 29);
}

TEST_CASE("Funcs without directives around a Func with directives run on the emulated GPU", "[directives][gpu]") {
    BlurThenScale b;
    Var bx("bx"), by("by"), tx("tx"), ty("ty");
    b.out.gpu_tile(b.x, b.y, bx, by, tx, ty, 16, 4);
    Pipeline p(b.out);
    for (auto [w, h] : {std::pair{1, 1}, std::pair{17, 5}, std::pair{45, 33}}) {
        Buffer<float> got(std::vector<int>{w, h}), want(std::vector<int>{w, h});
        got.set_min({-3, 2});
        want.set_min({-3, 2});
        p.compile(Target::cuda(80).emulated(), {}).realize(got);
        interpret(p, std::vector<Buffer<void>>{Buffer<void>(want)});
        INFO(w << " x " << h);
        CHECK(same(got, want));
    }
    // The blur keeps its automatic group (mapped onto a kernel as the automatic schedule is).
    std::string schedule = p.compile(Target::cuda(80).emulated(), {}).compiler_ir("schedule");
    CHECK(schedule.find("automatic (no directives)") != std::string::npos);
}

TEST_CASE("a producer between an automatic group's Funcs in definition order runs before the group", "[directives]") {
    // g reads in; h (directives) reads in; f reads g and h. g merges into f's group, which must
    // run after h although g is defined before h.
    Var x("x"), y("y"), xo("xo"), xi("xi");
    Buffer<float> in = random_image(70, 70, 21);
    in.set_min({-8, -8});
    Func g("g"), h("h"), f("f");
    g(x, y) = in(x - 1, y) + in(x + 1, y);
    h(x, y) = in(x, y) * 3.0f;
    f(x, y) = g(x, y - 1) + g(x, y + 1) + h(x, y);
    h.split(x, xo, xi, 4).vectorize(xi);
    Pipeline p(f);
    nlohmann::json j = nlohmann::json::parse(p.schedule_json());
    INFO(j["loop_nest"].get<std::string>());
    REQUIRE(group_of(j, "g"));
    CHECK(group_of(j, "g") == group_of(j, "f"));
    CHECK(j["groups"][0]["stages"][0] == "h");
    for (auto [w, hh] : {std::pair{1, 1}, std::pair{13, 5}, std::pair{41, 37}}) check_against_interpreter(p, w, hh);
}

TEST_CASE("a matmul with directives between automatic producer and consumer Funcs computes the reference",
          "[directives]") {
    Matmul m;
    Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
    Func scaled_a("scaled_a"), relu("relu");
    scaled_a(m.x, m.y) = m.a(m.x, m.y) * 0.5f;
    Func c("c");
    c(m.x, m.y) = 0.0f;
    c(m.x, m.y) += scaled_a(m.k.x, m.y) * m.b(m.x, m.k.x);
    relu(m.x, m.y) = max(c(m.x, m.y), 0.25f);
    c.update(0).split(m.y, yo, yi, 4).split(m.x, xo, xi, 8).reorder(xi, yi, m.k.x, xo, yo).unroll(yi).vectorize(xi).parallel(yo);
    Pipeline p(relu);
    nlohmann::json j = nlohmann::json::parse(p.schedule_json());
    INFO(j["loop_nest"].get<std::string>());
    CHECK(j["schedule_tree"].get<std::string>().find("register_tile:4:8") != std::string::npos);
    for (const char *automatic : {"relu", "scaled_a"}) {
        REQUIRE(group_of(j, automatic));
        CHECK((*group_of(j, automatic))["note"].get<std::string>().rfind("automatic (no directives)", 0) == 0);
    }
    for (auto [w, h] : {std::pair{11, 13}, std::pair{8, 4}, std::pair{3, 2}}) {
        Buffer<float> got(std::vector<int>{w, h}), want(std::vector<int>{w, h});
        realize_both(p, got, want);
        INFO(w << " x " << h);
        CHECK(same(got, want));
    }
}

TEST_CASE("an illegal directive is named when the other Funcs are scheduled automatically", "[directives]") {
    Var x("x");
    Buffer<float> in = random_image(40, 4, 22);
    Func pre("pre"), prefix("prefix"), post("post");
    RDom r(1, 30, "r");
    pre(x) = in(x, 0) + 1.0f;
    prefix(x) = pre(x);
    prefix(r.x) = prefix(r.x - 1) + pre(r.x);
    post(x) = prefix(x) * 2.0f;
    prefix.update(0).parallel(r.x);
    REQUIRE_USER_ERROR(Pipeline(post).compile(Target::host(), {}), "Func prefix",
                       "the directive prefix.update(0).parallel(r.x) is illegal", "distance [1]");
}
