// What the automatic scheduler decides: fusion groups, overlapped tiles and halos, scratchpads,
// tiled affine bands, marks, and the quota fallbacks.
#include "poly_test_util.h"

#include <set>

#include <isl/flow.h>

#include <tessera/poly/affine_schedule.h>
#include <tessera/poly/schedule_json.h>

using namespace tessera;

namespace {

poly::Program schedule(const std::string &app_name, poly::ScheduleOptions o = {}) {
    auto app = apps::make_app(app_name);
    o.verify = true;
    return poly::schedule_pipeline(app->pipeline(), o);
}

const poly::Storage &storage_of(const poly::Program &p, const std::string &func) {
    for (const poly::Storage &s : p.storage)
        if (s.name == func) return s;
    FAIL("no storage for " << func);
    return p.storage[0];
}

int64_t constant(const Expr &e) { return ir::as_const_int(e).value_or(-1); }

// The loop immediately around the first call of `statement` in `nest`: what its line says before
// "for (" (its kind: "parallel ", "vectorized ", ...) and its variable.
struct LoopAround {
    std::string kind, var;
};
LoopAround loop_around(const std::string &nest, const std::string &statement) {
    size_t call = nest.find(statement + "(");
    REQUIRE(call != std::string::npos);
    size_t last_for = nest.rfind("for (", call);
    REQUIRE(last_for != std::string::npos);
    size_t line = nest.rfind('\n', last_for) + 1;
    size_t var = last_for + 5;
    return {nest.substr(line, last_for - line), nest.substr(var, nest.find(' ', var) - var)};
}

} // namespace

TEST_CASE("blur_x_blur_y becomes one fused group with a halo of 4 along y", "[poly][structure]") {
    poly::Program p = schedule("blur_x_blur_y");
    REQUIRE(p.groups.size() == 1);
    const poly::Group &g = p.groups[0];
    CHECK(g.kind == poly::Group::Kind::OverlappedTiles);
    REQUIRE(g.funcs.size() == 2);
    CHECK(g.funcs[0]->name == "blur_x");
    CHECK(g.funcs[1]->name == "blur_y");
    // Tiles over (c, y, x). Each tile computes blur_x over the tile plus 4 rows (the halo), one
    // row ahead of blur_y after another (a sliding window), so its scratchpad is a ring of rows.
    REQUIRE(g.tile_sizes.size() == 3);
    const poly::Storage &bx = storage_of(p, "blur_x");
    CHECK(bx.kind == poly::Storage::Kind::Scratch);
    REQUIRE(bx.footprint.size() == 3);
    CHECK(bx.footprint[0] == g.tile_sizes[2]);
    CHECK(bx.footprint[1] == g.tile_sizes[1] + 4);
    CHECK(bx.footprint[2] == 1);
    REQUIRE(bx.fold.size() == 3);
    CHECK(bx.fold[1] == 8);  // the 5 rows blur_y reads, rounded up to a power of two
    CHECK(constant(bx.extent[1]) == 8);
    CHECK(storage_of(p, "blur_y").kind == poly::Storage::Kind::Output);
    // Both stages sit in one tile loop nest, under one parallel loop.
    CHECK(p.ast_c.find("G0_S_blur_x_0") != std::string::npos);
    CHECK(p.ast_c.find("G0_S_blur_y_0") != std::string::npos);
    std::string nest = poly::to_string(p.nest);
    CHECK(nest.find("parallel for") != std::string::npos);
    CHECK(nest.find("vectorized for") != std::string::npos);
    size_t tile_body = nest.find("// tile_body");
    REQUIRE(tile_body != std::string::npos);
    CHECK(nest.find("G0_S_blur_x_0") > tile_body);
    CHECK(nest.find("G0_S_blur_y_0") > nest.find("G0_S_blur_x_0"));
}

TEST_CASE("harris (11 stages) and unsharp mask fuse fully", "[poly][structure]") {
    // harris's stages but Ix and Iy, and unsharp_mask's blury and sharpen, are inlined
    // (automatic_inlining.h): 3 and 2 stages remain, all in one group, every intermediate in the
    // tiles' scratchpads.
    poly::Program h = schedule("harris");
    REQUIRE(h.groups.size() == 1);
    CHECK(h.groups[0].funcs.size() == 3);
    CHECK(h.groups[0].kind == poly::Group::Kind::OverlappedTiles);
    poly::Program u = schedule("unsharp_mask");
    REQUIRE(u.groups.size() == 1);
    CHECK(u.groups[0].funcs.size() == 2);
    for (const poly::Storage &s : u.storage)
        if (s.name == "blurx") CHECK(s.kind == poly::Storage::Kind::Scratch);
}

TEST_CASE("without fusion every Func is its own group with a full buffer", "[poly][structure]") {
    poly::ScheduleOptions o;
    o.fusion = poly::Fusion::None;
    poly::Program p = schedule("blur_x_blur_y", o);
    CHECK(p.groups.size() == 2);
    CHECK(storage_of(p, "blur_x").kind == poly::Storage::Kind::Buffer);
}

TEST_CASE("given tile sizes are used, dimension 0 first", "[poly][structure]") {
    poly::ScheduleOptions o;
    o.tile_sizes = {128, 8};
    poly::Program p = schedule("blur_x_blur_y", o);
    REQUIRE(p.groups.size() == 1);
    CHECK(p.groups[0].tile_sizes == std::vector<int>{1, 8, 128});
    CHECK(storage_of(p, "blur_x").footprint[1] == 12);
    CHECK(storage_of(p, "blur_x").footprint[0] == 128);
}

TEST_CASE("matmul gets a tiled, parallel band from isl's scheduler", "[poly][structure]") {
    poly::Program p = schedule("matmul");
    REQUIRE(!p.groups.empty());
    const poly::Group &g = p.groups.back();
    CHECK(g.kind == poly::Group::Kind::Affine);
    CHECK(!g.tile_sizes.empty());
    std::string nest = poly::to_string(p.nest);
    CHECK(nest.find("parallel for") != std::string::npos);
    // Tile loops step over tiles: the point loops start at a multiple of the tile size.
    CHECK(nest.find("32 * $c") != std::string::npos);
}

namespace {

// The arguments of the first call of `statement` in a loop-nest dump, split at top-level commas.
std::vector<std::string> call_arguments(const std::string &nest, const std::string &statement) {
    size_t at = nest.find(statement + "(");
    REQUIRE(at != std::string::npos);
    std::vector<std::string> args(1);
    int depth = 0;
    for (size_t i = at + statement.size() + 1; i < nest.size(); ++i) {
        char c = nest[i];
        if (c == '(') ++depth;
        if (c == ')' && depth-- == 0) break;
        if (c == ',' && depth == 0) args.emplace_back();
        else args.back() += c;
    }
    return args;
}

// The variable of the innermost loop around the first call of `statement`, and whether that
// loop is vectorized.
std::pair<std::string, bool> innermost_loop(const std::string &nest, const std::string &statement) {
    size_t at = nest.find(statement + "(");
    REQUIRE(at != std::string::npos);
    size_t loop = nest.rfind("for (", at);
    REQUIRE(loop != std::string::npos);
    size_t line = nest.rfind('\n', loop);
    bool vectorized = nest.substr(line + 1, loop - line - 1).find("vectorized") != std::string::npos;
    size_t var = loop + 5;
    return {nest.substr(var, nest.find(' ', var) - var), vectorized};
}

} // namespace

TEST_CASE("a band of three loops gets a second level of tiles where its tiles run in parallel, not where they run as "
          "wavefronts",
          "[poly][structure]") {
    // gemm's rows are parallel: tiles of tiles for the outer cache (statement arguments
    // 32 * c0 + 8 * c3 + ...). lu's step k carries dependences: its tiles run as wavefronts,
    // where a second level gained nothing and doubled the compile.
    poly::Program gemm = schedule("pb_gemm");
    CHECK(gemm.groups.back().note.find("a second level of tiles") != std::string::npos);
    CHECK(call_arguments(poly::to_string(gemm.nest), "S_pb_gemm_1").at(0).find("32 * $c0") != std::string::npos);
    poly::Program lu = schedule("pb_lu");
    INFO(lu.groups.back().note);
    CHECK(lu.groups.back().note.find("wavefronts") != std::string::npos);
    CHECK(lu.groups.back().note.find("a second level of tiles") == std::string::npos);
    poly_test::check_legal(lu, "lu");
    poly_test::check_app("pb_lu", {{1}, {9}, {33}, {70}});
}

TEST_CASE("gemm's outer tiles hold 4 row blocks by one column block, rows and columns collapsed into one "
          "parallel loop",
          "[poly][structure]") {
    // The second level of tiles (outer_tile_factors): 8-row blocks by 4 (32 rows, 32 * c0),
    // columns not grouped (512 doubles: 4 KiB, 512 * c1), steps of k by 4 (128), the two
    // parallel tile loops outermost and collapsed, the reduction's tile loop inside them.
    poly::Program gemm = schedule("pb_gemm");
    INFO(gemm.groups.back().note);
    CHECK(gemm.groups.back().note.find("a second level of tiles (4 x 4 x 1 first-level tiles per loop") != std::string::npos);
    std::string nest = poly::to_string(gemm.nest);
    std::vector<std::string> args = call_arguments(nest, "S_pb_gemm_1");
    CHECK(args.at(0).find("32 * $c0") != std::string::npos);
    CHECK(args.at(1).find("512 * $c1") != std::string::npos);
    CHECK(args.at(2).find("128 * $c2") != std::string::npos);
    size_t update = nest.find("S_pb_gemm_1(");
    size_t outer = nest.rfind("parallel for collapse(2) ($c0", update);
    REQUIRE(outer != std::string::npos);
    CHECK(nest.substr(outer, update - outer).find("parallel") == nest.substr(outer, update - outer).rfind("parallel"));
    // doitgen's band of four: the vector loop p alone is not grouped.
    poly::Program doitgen = schedule("pb_doitgen");
    INFO(doitgen.groups.back().note);
    CHECK(doitgen.groups.back().note.find("a second level of tiles (4 x 4 x 4 x 1 first-level") != std::string::npos);
    // Sizes around the 32-row and 512-column outer tiles, and smaller than one.
    poly_test::check_app("pb_gemm", {{1, 1, 1}, {31, 5, 3}, {33, 513, 7}, {65, 511, 129}, {97, 17, 33}});
    poly_test::check_app("matmul", {{33, 1025, 3}, {5, 1023, 130}});
}

TEST_CASE("a batched matmul's tiles hold one matrix of the batch, its register tile rows of one matrix",
          "[poly][structure]") {
    // bmm(j, i, b) += A(k, i, b) * B(j, k, b): every access moves to another matrix along b, so
    // tiling b reuses nothing; tiled by 8 as the other rows were, a tile's steps of k touched 8
    // matrices of B (3 MiB at 8 x 512 x 768 x 768, from L3 for each block of rows: 28 ms, 14 ms
    // with tiles of one matrix). The register tile's rows stay the rows of one matrix (i).
    poly::Program bmm = schedule("batched_matmul");
    INFO(bmm.groups.back().note);
    CHECK(bmm.groups.back().tile_sizes == std::vector<int>{1, 8, 32, 1024});
    std::string nest = poly::to_string(bmm.nest);
    INFO(nest);
    std::vector<std::string> args = call_arguments(nest, "S_bmm_1");  // b, i, j, k
    REQUIRE(args.size() == 4);
    size_t mark = nest.find("// register_tile:8:32");
    REQUIRE(mark != std::string::npos);
    // Below the mark: the reduction's steps, then the 8 rows, which are i's (args[1]).
    size_t rows = nest.rfind("for (", nest.find("// vector", mark));
    std::string row_var = nest.substr(nest.find('$', rows), nest.find(' ', nest.find('$', rows)) - nest.find('$', rows));
    CHECK(args[1].find(row_var) != std::string::npos);
    CHECK(args[0].find(row_var) == std::string::npos);
    // Batches around one tile and around the outer tile of 4, rows short of a block.
    poly_test::check_app("batched_matmul", {{1, 1, 1, 1}, {3, 9, 37, 19}, {5, 17, 33, 129}, {9, 8, 64, 5}});
}

TEST_CASE("a histogram's cells are not tiled: each cell's window of input is read in runs along the rows",
          "[poly][structure]") {
    // bilateral_grid's grid(x, y, bin(in(8x + r.x - 4, 8y + r.y - 4)), c) += ...: along the cells
    // x and y every exact access (the input) moves 8 points apart, so tiles of cells reuse
    // nothing; tiled 8 x 8 (and again 4 x 4 at the second level) they read the input 8 rows by
    // 64 points at a time, runs the prefetchers did not follow: 6.7 ms of the app's 19, 3.4 ms
    // with the cells in order.
    poly::Program grid = schedule("bilateral_grid");
    std::string nest = poly::to_string(grid.nest);
    INFO(nest);
    std::vector<std::string> args = call_arguments(nest, "S_grid_1");  // c, x, y, r.x, r.y
    REQUIRE(args.size() == 5);
    for (int d : {1, 2}) {
        INFO("argument " << d << ": " << args[size_t(d)]);
        CHECK(args[size_t(d)].find('*') == std::string::npos);  // a loop variable, not tile + point
    }
    // The window's loops inside the cells' loops, the channel the vector loop inside them.
    size_t call = nest.find("S_grid_1(");
    CHECK(nest.rfind("vectorized for", call) > nest.rfind("parallel for", call));
    poly_test::check_app("bilateral_grid", {{9, 17}, {61, 29}, {67, 131}});
}

TEST_CASE("a grid stage of more dimensions than its consumer's tiles counts the grid rows neighbouring tiles compute again",
          "[poly][structure]") {
    // bilateral_grid's blurs run over a 4-D grid (x / 8, y / 8, z, c) in the tiles of the 2-D
    // output: a tile of 8 rows needs blurz at 6 grid rows, of which it alone needs one, the rest
    // computed again by the tiles above and below. Only stages of the tiles' own rank were
    // counted so; the grid stages counted as all needed (estimated recomputation 0%, and tiles of
    // 4 rows, each grid row blurred twelve times). grid's compute_root() (what the automatic
    // schedule does with it anyway) keeps the slice, `interpolated`, from being inlined into the
    // output, so that the group is the one of the slice's 3-D tiles.
    auto app = apps::make_app("bilateral_grid");
    for (const auto &f : build_pipeline_graph(app->pipeline().outputs()).funcs)
        if (f->name == "grid") Func(f).compute_root();
    poly::ScheduleOptions o;
    o.verify = true;
    poly::Program grid = poly::schedule_pipeline(app->pipeline(), o);
    const poly::Group &slice = grid.groups.back();
    INFO(slice.note);
    REQUIRE(slice.tile_sizes.size() == 2);
    size_t at = slice.note.find("estimated recomputation ");
    REQUIRE(at != std::string::npos);
    int percent = std::stoi(slice.note.substr(at + std::string("estimated recomputation ").size()));
    CHECK(percent > 0);
    CHECK(slice.tile_sizes[0] >= 8);  // rows: at least one grid row per tile
}

TEST_CASE("matmul's reduction loop moves outward and its column loop becomes the vector loop",
          "[poly][structure]") {
    // C(j, i) += A(k, i) * B(j, k): isl keeps k innermost, where B is read with a row stride
    // and nothing vectorizes. j is contiguous in C and B and invariant in A (loop_order.h).
    for (const std::string app : {"matmul", "gemm"}) {
        poly::Program p = schedule(app);
        std::string nest = poly::to_string(p.nest);
        std::string update = "S_" + app + "_1";
        auto [var, vectorized] = innermost_loop(nest, update);
        std::vector<std::string> args = call_arguments(nest, update);  // i, j, k
        REQUIRE(args.size() == 3);
        INFO(nest);
        CHECK(vectorized);
        CHECK(args[1].find(var) != std::string::npos);
        CHECK(args[2].find(var) == std::string::npos);
        CHECK(p.groups.back().note.find("loop order") != std::string::npos);
        // Tiles from the strides: 4 KiB rows of float along j, 32 along the reduction, 8 along i.
        CHECK(p.groups.back().tile_sizes == std::vector<int>{8, 32, 1024});
    }
    // atax's y(j) += A(j, r) * tmp(r): j, the only coincident member, becomes the vector loop
    // inside each tile, while the tile loops keep j outermost and parallel.
    {
        poly::Program p = schedule("pb_atax");
        std::string nest = poly::to_string(p.nest);
        INFO(nest);
        auto [var, vectorized] = innermost_loop(nest, "S_y_1");
        CHECK(vectorized);
        CHECK(call_arguments(nest, "S_y_1")[0].find(var) != std::string::npos);
        size_t update = nest.find("S_y_1(");
        size_t parallel = nest.rfind("parallel for", update);
        REQUIRE(parallel != std::string::npos);
        CHECK(nest.find("S_y_0(", parallel) > update);  // that parallel loop is the update's own
        CHECK(p.groups.back().note.find("in each tile") != std::string::npos);
    }
    // A scan's RDom loop is not coincident: it stays where it is (and the update is not vectorized
    // along it).
    poly::Program scan = schedule("prefix_sum");
    CHECK(scan.groups.back().note.find("loop order") == std::string::npos);
}

TEST_CASE("a scan keeps its loop-carried order and is not marked parallel", "[poly][structure]") {
    poly::Program p = schedule("prefix_sum");
    // The loop around the update must not be parallel (the pure init loop may be).
    CHECK(loop_around(poly::to_string(p.nest), "S_prefix_sum_1").kind.find("parallel") == std::string::npos);
}

TEST_CASE("a scatter's channel loop runs innermost, below its reduction loops, where it is the vector loop",
          "[poly][structure]") {
    // bilateral_grid's grid(x, y, z(r), c) += ...: c is coincident and last in its band, the
    // reduction r.x in a band below. The vector loop over c now holds one statement, and the
    // pixel's bin computed in it is the same for both channels. Verified (schedule() checks
    // legality), and the app's results are checked in test_image_suite.cpp.
    poly::Program p = schedule("bilateral_grid");
    std::string nest = poly::to_string(p.nest);
    LoopAround around = loop_around(nest, "S_grid_1");
    CHECK(around.kind.find("vectorized") != std::string::npos);
    // Its variable is the channel, the update's first coordinate.
    CHECK(nest.find("S_grid_1(" + around.var + ",") != std::string::npos);
    bool noted = false;
    for (const poly::Group &g : p.groups) noted |= g.note.find("moved below the reduction bands") != std::string::npos;
    CHECK(noted);
}

TEST_CASE("a tiny quota makes dependence analysis fall back to the original order", "[poly][structure]") {
    auto app = apps::make_app("jacobi_2d");
    poly::ScheduleOptions o;
    o.max_operations = 50;
    poly::Program p = poly::schedule_pipeline(app->pipeline(), o);
    REQUIRE(p.groups.size() == 1);
    CHECK(p.groups[0].note.find("quota") != std::string::npos);
    app->prepare({13, 11, 3}, 2);
    poly_test::check_program(p, *app, "quota fallback");
}

TEST_CASE("the dependences of Funcs each written once are isl's dataflow, with no anti or output ones", "[poly][structure]") {
    for (const char *name : {"blur_x_blur_y", "harris", "unsharp_mask", "bilateral_grid"}) {
        INFO(name);
        auto app = apps::make_app(name);
        std::shared_ptr<const poly::Model> m = poly::build_model(app->pipeline());
        poly::Dependences d = poly::compute_dependences(*m, 100000000);
        REQUIRE(d.computed);
        // Independently: isl's value-based dataflow under the original order.
        isl::union_map writes = m->may_writes(), reads = m->reads();
        isl_union_access_info *info = isl_union_access_info_from_sink(reads.copy());
        info = isl_union_access_info_set_may_source(info, writes.copy());
        info = isl_union_access_info_set_schedule(info, isl_schedule_copy(m->original.get()));
        isl::union_map dataflow = isl::manage(isl_union_flow_get_may_dependence(isl_union_access_info_compute_flow(info)));
        isl::union_set dom = m->domains();
        auto on_domains = [&](const isl::union_map &deps) { return deps.intersect_domain(dom).intersect_range(dom); };
        // Memory-based dependences hold the value-based ones; where every Func is written once,
        // they are the same, and nothing is read before it is written or written twice.
        CHECK(on_domains(dataflow).is_subset(on_domains(d.flow)));
        if (std::string(name) != "bilateral_grid") {
            CHECK(on_domains(d.flow).is_equal(on_domains(dataflow)));
            CHECK(on_domains(d.anti).is_empty());
            CHECK(on_domains(d.output).is_empty());
        } else {
            CHECK(!on_domains(d.output).is_empty());  // the grid's histogram is updated in place
        }
    }
}

TEST_CASE("the dependences are every earlier access of an element under the whole original order", "[poly][structure]") {
    // compute_dependences orders instances definition by definition (the original schedule is a
    // sequence of definitions) and compares schedules only within one; independently here:
    // isl's lexicographic order of the whole original schedule, on every app (updates in place,
    // reductions, definitions split into cases (cholesky, lu, trisolv), time loops; the pyramids
    // are left out for time).
    for (const std::string &name : apps::app_names()) {
        if (name == "local_laplacian" || name == "pyramid_blend" || name == "interpolate") continue;
        INFO(name);
        auto app = apps::make_app(name);
        std::shared_ptr<const poly::Model> m = poly::build_model(app->pipeline());
        poly::Dependences d = poly::compute_dependences(*m, 100000000);
        REQUIRE(d.computed);
        isl::union_map order = isl::manage(isl_schedule_get_map(m->original.get()));
        isl::union_map before = isl::manage(isl_union_map_lex_lt_union_map(order.copy(), order.copy()));
        isl::union_map writes = m->may_writes(), reads = m->reads();
        auto earlier = [&](const isl::union_map &sources, const isl::union_map &sinks) {
            return sources.apply_range(sinks.reverse()).intersect(before);
        };
        isl::union_set dom = m->domains();
        auto on_domains = [&](const isl::union_map &deps) { return deps.intersect_domain(dom).intersect_range(dom); };
        CHECK(on_domains(d.flow).is_equal(on_domains(earlier(writes, reads))));
        CHECK(on_domains(d.anti).is_equal(on_domains(earlier(reads, writes))));
        CHECK(on_domains(d.output).is_equal(on_domains(earlier(writes, writes))));
    }
}

TEST_CASE("a tiny quota makes isl's scheduler keep a group's original order", "[poly][structure]") {
    auto app = apps::make_app("seidel_2d");
    std::shared_ptr<const poly::Model> m = poly::build_model(app->pipeline());
    poly::Dependences d = poly::compute_dependences(*m, 100000000);
    REQUIRE(d.computed);
    poly::ScheduleOptions o;
    o.max_operations = 50;
    std::vector<int> updates;
    for (size_t i = 0; i < m->statements.size(); ++i)
        if (m->statements[i].definition > 0) updates.push_back(int(i));
    poly::AffineGroupSchedule s = poly::affine_group_schedule(*m, updates, d, o);
    CHECK(s.note.find("quota") != std::string::npos);
    CHECK(s.tile_sizes.empty());
}

TEST_CASE("a parametric schedule built once runs correctly at many sizes and origins", "[poly][structure]") {
    auto app = apps::make_app("blur_x_blur_y");
    poly::Program p = poly::schedule_pipeline(app->pipeline(), poly::ScheduleOptions{});
    poly_test::check_legal(p, "blur");
    for (auto [w, h] : std::vector<std::pair<int, int>>{{5, 5}, {300, 7}, {17, 290}, {64, 64}}) {
        app->prepare({w, h}, uint32_t(w + h));
        poly_test::check_runs(p, *app, "blur at " + std::to_string(w) + "x" + std::to_string(h));
    }
    // A region that does not start at 0.
    Var x("x"), y("y");
    InputBuffer<int> in("in", 2);
    Func f("f"), g("g");
    f(x, y) = in(x, y) * 2 + in(x + 1, y);
    g(x, y) = f(x, y - 1) + f(x, y + 1);
    Buffer<int> b(40, 30);
    b.set_min({-5, -9});
    for (int yy = -9; yy < 21; ++yy)
        for (int xx = -5; xx < 35; ++xx) b(xx, yy) = xx * 7 - yy * 3;
    in.set(b);
    poly::Program q = poly::schedule_pipeline(Pipeline(g), poly::ScheduleOptions{});
    Buffer<int> got(20, 10), want(20, 10);
    got.set_min({-3, -7});
    want.set_min({-3, -7});
    poly::execute(q, {got});
    interpret(Pipeline(g), {want});
    CHECK(apps::compare(got, want, 0).ok);
}

TEST_CASE("a parallel tile band whose outer tile loop runs once runs its next tile loop on threads", "[poly][structure]") {
    // Constant sizes (bound()) that fit one tile along y: isl drops the y tile loop, which runs
    // once, and the x tile loop collapsed with it under the parallel:2 mark ran serially (a
    // torch transformer's bounded partition: 10 of its 38 parallel loop nests on one thread).
    test_util::BoundedStencil stencil(200, 3);
    poly::ScheduleOptions o;
    o.verify = true;
    o.tile_sizes = {8, 64};
    poly::Program p = poly::schedule_pipeline(Pipeline(stencil.g), o);
    std::string nest = poly::to_string(p.nest);
    INFO(p.ast_c);
    INFO(nest);
    REQUIRE(p.ast_c.find("parallel:2") != std::string::npos);
    CHECK(p.ast_c.find("for (int c0") == std::string::npos);  // the y tile loop is gone
    size_t parallel = nest.find("parallel for");
    REQUIRE(parallel != std::string::npos);
    CHECK(nest.find("$c1", parallel) < nest.find('\n', parallel));  // the x tile loop, alone
    CHECK(nest.find("collapse", parallel) > nest.find('\n', parallel));
    Buffer<int> got(200, 3), want(200, 3);
    interpret(Pipeline(stencil.g), {want});
    poly::ExecuteOptions eo;
    eo.reverse_parallel_loops = true;
    poly::execute(p, {got}, eo);
    CHECK(apps::compare(got, want, 0).ok);
}

TEST_CASE("tiles with no parallel loop inside a sequential loop run in order, not as wavefronts", "[poly][structure]") {
    // A step k that runs in order around a tiled (i, j) band in which both loops carry a
    // dependence: Floyd-Warshall's update (row k and column k change during step k) that also
    // reads the row before its own, so that the rows depend on each other and cannot be
    // distributed around row k (test_loop_distribution.cpp). A wavefront there would open a
    // parallel region per wavefront per step; a time-tiled stencil's outermost band keeps its.
    Var j("j"), i("i");
    InputBuffer<int> lengths("lengths", 2);
    Func p("p");
    RDom r(0, lengths.width(), 1, lengths.height() - 1, 0, lengths.height(), "r");
    p(j, i) = lengths(j, i);
    Expr through_k = p(r.z, r.y) + p(r.x, r.z) + p(r.x, r.y - 1);
    p(r.x, r.y) = select(p(r.x, r.y) < through_k, p(r.x, r.y), through_k);
    poly::ScheduleOptions o;
    o.verify = true;
    poly::Program fw = poly::schedule_pipeline(Pipeline(p), o);
    std::string nest = poly::to_string(fw.nest);
    INFO(nest);
    size_t update = nest.find("S_p_1(");
    REQUIRE(update != std::string::npos);
    CHECK(nest.rfind("parallel for", update) < nest.find("S_p_0("));  // only the initialization's
    CHECK(fw.groups.back().note.find("tiles run in order") != std::string::npos);
    poly::Program seidel = schedule("pb_seidel_2d");
    CHECK(seidel.groups.back().note.find("wavefronts") != std::string::npos);
    CHECK(seidel.groups.back().note.find("tiles run in order") == std::string::npos);
}

TEST_CASE("a reduction followed by an update of each result still moves its reduction loop outward",
          "[poly][structure]") {
    // covariance: upper(j, i) += data(i, k) * data(j, k), then upper(j, i) = upper(j, i) / (n - 1).
    // isl fuses the division into the reduction's band at a constant value of the k member;
    // the band's members may still be reordered (it is permutable), and the division's
    // accesses do not move along k.
    poly::Program p = schedule("pb_covariance");
    std::string nest = poly::to_string(p.nest);
    INFO(nest);
    auto [var, vectorized] = innermost_loop(nest, "S_cov_upper_1");
    CHECK(vectorized);
    std::vector<std::string> args = call_arguments(nest, "S_cov_upper_1");  // i, j, k
    REQUIRE(args.size() == 3);
    CHECK(args[1].find(var) != std::string::npos);
    bool noted = false;
    for (const poly::Group &g : p.groups) noted = noted || g.note.find("S_cov_upper_1: j innermost") != std::string::npos;
    CHECK(noted);
}

TEST_CASE("row reductions run 8 rows' chains interleaved in the reduction loop, unguarded in full tiles", "[poly][structure]") {
    // gesummv's tmp(i) += A(j, i) * x(j): one chain of dependent additions per row. In each tile
    // the 8 rows' loop goes inside the reduction loop, unrolled where the tile holds 8 rows: 8
    // independent chains with no test between them. A partial tile runs its rows as a loop.
    poly::Program p = schedule("pb_gesummv");
    std::string nest = poly::to_string(p.nest);
    INFO(nest);
    std::vector<size_t> at;
    for (size_t k = nest.find("S_tmp_1("); k != std::string::npos; k = nest.find("S_tmp_1(", k + 1)) at.push_back(k);
    REQUIRE(at.size() >= 9);
    // The full tiles: 8 consecutive copies, rows 8 c0 + 0 .. 7, nothing tested between them.
    std::string full = nest.substr(at[0], at[7] - at[0]);
    CHECK(full.find("if") == std::string::npos);
    CHECK(full.find("for") == std::string::npos);
    CHECK(nest.substr(at[7], 40).find("(int64)7)") != std::string::npos);
    // The partial tiles: the rest of the copies are in a loop over the tile's rows ($c3).
    for (size_t k = 8; k < at.size(); ++k) CHECK(nest.substr(at[k], 60).find("$c3") != std::string::npos);
    bool noted = false;
    for (const poly::Group &g : p.groups) noted = noted || g.note.find("reductions interleaved") != std::string::npos;
    CHECK(noted);
    // Each copy is one row, j (the reduction) varies inside: the row index has no loop of its own.
    std::vector<std::string> args = call_arguments(nest, "S_tmp_1");  // i, j
    REQUIRE(args.size() == 2);
    auto [var, vectorized] = innermost_loop(nest, "S_tmp_1");
    CHECK_FALSE(vectorized);
    CHECK(args[1].find(var) != std::string::npos);
    CHECK(args[0].find(var) == std::string::npos);
}

TEST_CASE("a band with no parallel loop runs its contiguous reduction chain innermost rather than a strided column",
          "[poly][structure]") {
    // cholesky's trailing update A(j, i) -= A(k, i) * A(k, j) (statement dims k, i, j): no
    // member of its band is parallel. Along j, A(k, j) strides a whole row per step; along k,
    // every access is contiguous or invariant. k goes innermost in each tile (a chain of 8
    // dependent steps per element), where isl's order ran j innermost (2.1x slower at N=2000).
    poly::Program p = schedule("pb_cholesky");
    std::string nest = poly::to_string(p.nest);
    INFO(nest);
    auto [var, vectorized] = innermost_loop(nest, "S_cholesky_1_case2");
    CHECK_FALSE(vectorized);
    std::vector<std::string> args = call_arguments(nest, "S_cholesky_1_case2");  // k, i, j
    REQUIRE(args.size() == 3);
    CHECK(args[0].find(var) != std::string::npos);
    CHECK(args[1].find(var) == std::string::npos);
    CHECK(args[2].find(var) == std::string::npos);
    bool noted = false;
    for (const poly::Group &g : p.groups) noted = noted || g.note.find("a chain of dependent steps") != std::string::npos;
    CHECK(noted);
    // lu's A(j, i) -= A(k, i) * A(j, k) is contiguous along j: j stays innermost.
    poly::Program lu = schedule("pb_lu");
    std::string lu_nest = poly::to_string(lu.nest);
    INFO(lu_nest);
    auto [lu_var, lu_vectorized] = innermost_loop(lu_nest, "S_lu_1_case1");
    std::vector<std::string> lu_args = call_arguments(lu_nest, "S_lu_1_case1");  // k, i, j
    REQUIRE(lu_args.size() == 3);
    CHECK(lu_args[2].find(lu_var) != std::string::npos);
    for (const poly::Group &g : lu.groups) CHECK(g.note.find("a chain of dependent steps") == std::string::npos);
}

TEST_CASE("seidel-2d's time tiles run two rows jammed along the row loop, each row a recurrence", "[poly][structure]") {
    // A(j, i) = (... + A(j - 1, i) + ...) / 9 in place: each element waits for its left
    // neighbour, so the skewed row loop gets no vector mark. Two rows of each time tile run
    // together in it: in full pairs, two unguarded copies of the statement per iteration, the
    // second one row down and one element left in the skewed row loop (where row i + 1 reads
    // row i's new values).
    poly::Program p = schedule("pb_seidel_2d");
    std::string nest = poly::to_string(p.nest);
    INFO(nest);
    bool noted = false;
    for (const poly::Group &g : p.groups) noted = noted || g.note.find("rows jammed: 2 rows") != std::string::npos;
    CHECK(noted);
    size_t first = nest.find("S_seidel_2d_1(");
    REQUIRE(first != std::string::npos);
    size_t second = nest.find("S_seidel_2d_1(", first + 1);
    REQUIRE(second != std::string::npos);
    std::string between = nest.substr(first, second - first);
    CHECK(between.find("for") == std::string::npos);
    CHECK(between.find("if") == std::string::npos);
    std::vector<std::string> args = call_arguments(nest.substr(second), "S_seidel_2d_1");  // t, i, j
    REQUIRE(args.size() == 3);
    CHECK(args[1].find("+ (int64)1)") != std::string::npos);
    CHECK(args[2].find("+ (int64)-1)") != std::string::npos);
    CHECK(nest.find("vectorized") == nest.rfind("vectorized"));  // only the initial copy is vectorized
}

namespace {
const poly::Group &group_of(const poly::Program &p, const std::string &func) {
    for (const poly::Group &g : p.groups)
        for (const FuncContents *f : g.funcs)
            if (f->name == func) return g;
    FAIL("no group computes " << func);
    return p.groups[0];
}
} // namespace

TEST_CASE("a lookup table every tile reads all of is computed once, outside the tiles that read it", "[poly][structure]") {
    // camera_pipe's tone curve (1024 entries, a pow each) and colour matrix: the same for every
    // tile, so merged into the tiled group they would be computed again in each tile.
    poly::Program p = schedule("camera_pipe");
    const poly::Group &curve = group_of(p, "curve");
    CHECK(curve.funcs.size() == 1);
    CHECK(group_of(p, "matrix").funcs.size() == 1);
    const poly::Group &out = group_of(p, "camera_pipe");
    CHECK(out.kind == poly::Group::Kind::OverlappedTiles);
    CHECK(&out != &curve);
    CHECK(group_of(p, "curved").name == out.name);
    // The schedule says why the tone curve was not merged.
    CHECK(curve.note.find("not merged into its consumer: curve is read over the same region by every tile") != std::string::npos);
}

TEST_CASE("a pyramid level's horizontal pass is computed in the tiles of its vertical pass", "[poly][structure]") {
    // gauss_1_down_x(x, y) reads the level below at 2x + k; gauss_1(x, y) reads gauss_1_down_x at
    // 2y + k: a tile of gauss_1 needs twice its rows of gauss_1_down_x, all of them its own (only
    // the halo is recomputed), which the recomputation estimate once counted as half recomputed.
    poly::Program p = schedule("pyramid_blend");
    for (const char *level : {"gauss_a_1", "gauss_b_2", "gauss_mask_1"}) {
        INFO(level);
        const poly::Group &g = group_of(p, level);
        CHECK(g.kind == poly::Group::Kind::OverlappedTiles);
        CHECK(group_of(p, std::string(level) + "_down_x").name == g.name);
    }
}

TEST_CASE("the schedule says why a producer was not merged into the group that reads it", "[poly][structure]") {
    InputBuffer<float> in("in", 2);
    Var x("x"), y("y");
    Func a("a"), b("b"), c("c"), d("d");
    // a and b have 5 operations: too many to be recomputed at each point read (automatic_inlining.h).
    a(x, y) = ((in(x, y) * 2.0f + 1.0f) * in(x, y) - 3.0f) * 0.5f;
    b(x, y) = ((a(x, y) + a(x + 1, y)) * 0.5f - a(x, y) * a(x + 1, y)) * 3.0f;
    c(x, y) = a(x, y + 1) - 1.0f;
    d(x, y) = b(x, y) * b(x, y + 2);
    poly::ScheduleOptions o;
    o.verify = true;
    // a is read by the groups of two outputs: a producer merges only into a single consumer.
    {
        poly::Program p = poly::schedule_pipeline(Pipeline({b, c}), o);
        const poly::Group &ga = group_of(p, "a");
        INFO(ga.note);
        CHECK(ga.funcs.size() == 1);
        CHECK(ga.note.find("not merged into its consumer: read by 2 groups (those of b, c)") != std::string::npos);
        // Nothing reads the outputs: their notes give no reason.
        CHECK(group_of(p, "b").note.find("not merged") == std::string::npos);
    }
    // A chain over the stage limit: b is merged with a, and d would exceed it.
    {
        poly::ScheduleOptions two = o;
        two.max_group_stages = 2;
        poly::Program p = poly::schedule_pipeline(Pipeline(d), two);
        const poly::Group &gb = group_of(p, "b");
        INFO(gb.note);
        CHECK(gb.funcs.size() == 2);
        CHECK(gb.note.find("a group would have 3 stages, over max_group_stages (2)") != std::string::npos);
        // ... and the note is in the schedule JSON.
        CHECK(poly::schedule_to_json(p).find("over max_group_stages (2)") != std::string::npos);
    }
    // A producer with an update definition is not computed in its consumer's tiles.
    {
        Func acc("acc"), use("use");
        RDom r(0, 3, "r");
        acc(x, y) = in(x, y);
        acc(x, y) += in(x + r, y);
        use(x, y) = acc(x, y) + acc(x + 1, y);
        poly::Program p = poly::schedule_pipeline(Pipeline(use), o);
        INFO(group_of(p, "acc").note);
        CHECK(group_of(p, "acc").note.find("not merged into its consumer: it has update definitions") != std::string::npos);
    }
}

TEST_CASE("tiles of a colour image hold all its channels when producers without channels would be recomputed per channel",
          "[poly][structure]") {
    // The demosaic (2-D) under the 3-channel output: one channel per tile would compute it 3 times.
    poly::Program p = schedule("camera_pipe");
    const poly::Group &out = group_of(p, "camera_pipe");
    REQUIRE(out.tile_sizes.size() == 3);
    CHECK(out.tile_sizes[0] == 4);
    CHECK(group_of(p, "g_r").name == out.name);
    // blur_x_blur_y's stages all have channels: nothing is recomputed, one channel per tile.
    poly::Program blur = schedule("blur_x_blur_y");
    REQUIRE(blur.groups.size() == 1);
    CHECK(blur.groups[0].tile_sizes[0] == 1);
}

namespace {

// alpha_normalized(x, y, c) = (smoothed(x, y - 1, c) + smoothed(x, y + 1, c)) / (smoothed(x, y, 3)
// + 1): colour channels divided by an alpha channel, as interpolate's last stage does.
struct AlphaNormalized {
    InputBuffer<float> in{"in", 3};
    Func smoothed{"smoothed"}, out{"alpha_normalized"};
    AlphaNormalized() {
        Var x("x"), y("y"), c("c");
        smoothed(x, y, c) = in(x - 1, y, c) * 0.25f + in(x, y, c) * 0.5f + in(x + 1, y, c) * 0.25f + 1.f;
        out(x, y, c) = (smoothed(x, y - 1, c) + smoothed(x, y + 1, c)) / (smoothed(x, y, 3) + 1.f);
    }
};

} // namespace

TEST_CASE("a stage that reads a constant channel fuses with its producer once its channels are bounded: its tiles hold them all",
          "[poly][structure]") {
    // Read at its own channel c and at channel 3, `smoothed` has no box of fixed size in tiles of
    // one channel (c and 3 are apart by 3 - c). With the output bounded to channels [0, 3), tiles
    // of 4 channels hold every channel in one tile: the box of `smoothed` is channels 0 to 3 in
    // each (overlapped_tiling.cpp, fixed_where_single_tile), and the group keeps those tiles.
    poly::ScheduleOptions o;
    o.verify = true;
    {
        AlphaNormalized unbounded;
        poly::Program p = poly::schedule_pipeline(Pipeline(unbounded.out), o);
        CHECK(p.groups.size() == 2);
        CHECK(storage_of(p, "smoothed").kind == poly::Storage::Kind::Buffer);
    }
    AlphaNormalized a;
    a.out.bound(Var("c"), 0, 3);
    poly::Program p = poly::schedule_pipeline(Pipeline(a.out), o);
    REQUIRE(p.groups.size() == 1);
    INFO(p.groups[0].note);
    REQUIRE(p.groups[0].tile_sizes.size() == 3);
    CHECK(p.groups[0].tile_sizes[0] == 4);
    const poly::Storage &s = storage_of(p, "smoothed");
    CHECK(s.kind == poly::Storage::Kind::Scratch);
    REQUIRE(s.footprint.size() == 3);
    CHECK(s.footprint[2] == 4);
    // The values, against the interpreter, at sizes from one pixel to several tiles.
    Callable c = Pipeline(a.out).compile(Target::host());
    for (auto [w, h] : {std::pair{1, 1}, {5, 3}, {37, 19}, {130, 9}}) {
        Buffer<float> data(w + 2, h + 2, 4);
        data.set_min({-1, -1, 0});
        std::mt19937 rng(uint32_t(w * 31 + h));
        apps::fill_random(data, rng, 0, 1);
        a.in.set(data);
        Buffer<float> got(w, h, 3), want(w, h, 3);
        c.realize(got);
        interpret(Pipeline(a.out), {want});
        apps::Comparison cmp = apps::compare(got, want, 0);
        INFO(w << "x" << h << ": " << cmp.first_mismatch);
        CHECK(cmp.ok);
    }
}

TEST_CASE("interpolate's upsampling levels and its normalizing stage fuse into one group whose tiles hold all 4 channels",
          "[poly][structure]") {
    // The normalizing stage reads interpolated_0 at c and at the alpha channel 3; its output is
    // bounded to 3 channels, so its tiles hold all 4 (the test above). The upsampling levels
    // below (36 stages) take more than the cache at the probe's 32 rows of 4 channels, but fit it
    // at shorter tiles: merged (merge_groups), interpolated_0 never goes through memory.
    poly::Program p = schedule("interpolate");
    const poly::Group &last = p.groups.back();
    INFO(last.note);
    std::set<std::string> names;
    for (const FuncContents *f : last.funcs) names.insert(f->name);
    CHECK(names.count("interpolate"));
    CHECK(names.count("interpolated_0"));
    CHECK(names.count("upsampled_0"));
    CHECK(names.count("interpolated_1"));
    REQUIRE(last.tile_sizes.size() == 3);
    CHECK(last.tile_sizes[0] == 4);
    CHECK(storage_of(p, "interpolated_0").kind == poly::Storage::Kind::Scratch);
}
