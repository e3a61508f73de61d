// Row blocks of a substitution (substitution_blocks.h): triangular solves run the bulk of each
// block of rows in parallel and the part near the diagonal in order; recurrences are refused.
// Results are compared exactly (each row keeps its order of additions) at sizes around the
// block of 128 rows, compiled and through the AST interpreter with parallel loops backwards.
#include "poly_test_util.h"

#include <isl/schedule_node.h>
#include <nlohmann/json.hpp>

#include <tessera/poly/substitution_blocks.h>
#include <tessera/poly/tree_transform.h>

using namespace tessera;
using json = nlohmann::json;

namespace {

bool has(const std::string &text, const std::string &what) { return text.find(what) != std::string::npos; }

// A random n x n matrix, its diagonal dominant (no small pivot), and a random vector.
void random_system(Buffer<double> &a, Buffer<double> &b, int n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int y = 0; y < n; ++y) {
        b(y) = u(rng);
        for (int x = 0; x < n; ++x) a(x, y) = x == y ? n + std::abs(u(rng)) : u(rng);
    }
}

} // namespace

TEST_CASE("a forward substitution runs the bulk of each block of rows in parallel and the part near the diagonal in order",
          "[poly][substitution]") {
    auto app = apps::make_app("pb_trisolv");
    std::shared_ptr<const poly::Model> m = poly::build_model(app->pipeline());
    poly::Program p = poly::schedule_model(m, {});
    REQUIRE(p.groups.size() >= 1);
    std::string note = p.groups.back().note;
    INFO(note << "\n" << p.ast_c);
    CHECK(has(note, "rows in blocks of 128"));
    // The block loop runs in order; inside it, the bulk's rows in parallel (interleaved by 8).
    size_t blocks = p.ast_c.find(", 128)");
    REQUIRE(blocks != std::string::npos);
    CHECK(has(p.ast_c.substr(blocks), "parallel"));
    CHECK(has(note, "reductions interleaved"));
    poly_test::check_legal(p, "trisolv in row blocks");
    // Sizes within one block (no bulk), at and around its end, and several blocks with a partial one.
    uint32_t seed = 5;
    for (int n : {1, 2, 127, 128, 129, 257, 300}) {
        app->prepare({n}, seed++);
        poly_test::check_runs(p, *app, "trisolv n = " + std::to_string(n));
    }
}

TEST_CASE("a backward substitution, its rows written from the last, runs in row blocks and matches plain loops exactly",
          "[poly][substitution]") {
    // U x = b with U upper triangular: row i subtracts U(j, i) x(j) for j > i (from the last j
    // down), then divides by U(i, i). Row r.y of the update is PolyBench's i = n - 1 - r.y.
    InputBuffer<double> U("U", 2), b("b", 1);
    Var i("i");
    Func x("backward");
    RDom r(0, U.width(), 0, U.width(), "r");
    r.where(r.x <= r.y);
    Expr row = U.width() - 1 - r.y, col = U.width() - 1 - r.x;
    x(i) = b(i);
    x(row) = select(r.x == r.y, x(row) / U(row, row), x(row) - U(col, row) * x(col));
    Pipeline pipeline(x);
    json j = json::parse(pipeline.schedule_json());
    INFO(j["groups"].dump(1) << j["loop_nest"].get<std::string>());
    CHECK(has(j["groups"].dump(), "rows in blocks of 128"));
    for (int n : {1, 5, 128, 129, 301}) {
        Buffer<double> a(n, n), rhs(n), got(n);
        random_system(a, rhs, n, uint32_t(n));
        U.set(a);
        b.set(rhs);
        pipeline.realize(got);
        std::vector<double> want(static_cast<size_t>(n));
        for (int k = n - 1; k >= 0; --k) {
            double v = rhs(k);
            for (int c = n - 1; c > k; --c) v -= a(c, k) * want[size_t(c)];
            want[size_t(k)] = v / a(k, k);
        }
        bool same = true;
        for (int k = 0; k < n; ++k) same = same && got(k) == want[size_t(k)];
        INFO("n = " << n);
        CHECK(same);
    }
}

TEST_CASE("a recurrence whose rows read the row before them all along is not split into row blocks", "[poly][substitution]") {
    // s(j, i) = s(j - 1, i) + s(j, i - 1): left of its block, every instance of a row but the
    // block's first waits for the row before it.
    InputBuffer<double> in("in", 2);
    Var j("j"), i("i");
    Func s("recurrence");
    RDom r(1, in.width() - 1, 1, in.height() - 1, "r");
    s(j, i) = in(j, i);
    s(r.x, r.y) = s(r.x - 1, r.y) + 0.5 * s(r.x, r.y - 1);
    Pipeline pipeline(s);
    json js = json::parse(pipeline.schedule_json());
    for (const json &g : js["groups"]) CHECK_FALSE(has(g.dump(), "rows in blocks"));

    // Straight from the tree edit, on the update's band in its original order (rows, then j),
    // permutable (both dependence distances are non-negative).
    std::shared_ptr<const poly::Model> m = poly::build_model(pipeline);
    poly::Dependences d = poly::compute_dependences(*m, 100000000);
    REQUIRE(d.computed);
    isl::schedule_node update = m->original.root().child(0).child(1).child(0);  // sequence -> filter -> band
    REQUIRE(poly::is_band(update));
    update = isl::manage(isl_schedule_node_band_set_permutable(update.release(), 1));
    poly::SubstitutionBlocks blocks = poly::substitution_row_blocks(update, d.all(), 4);
    CHECK_FALSE(blocks.band);
    CHECK(blocks.why_not == "left of its block, an instance depends on another row of the block");
    // As it is, not permutable; and the rows alone, one member, are not a substitution.
    CHECK(poly::substitution_row_blocks(m->original.root().child(0).child(1).child(0), d.all(), 4).why_not ==
          "the band is not permutable");
    CHECK(poly::substitution_row_blocks(poly::split_band(update, 1), d.all(), 4).why_not == "not a band of two members");

    for (int n : {3, 130}) {
        Buffer<double> a(n, n), got(n, n), want(n, n);
        std::mt19937 rng{uint32_t(n)};
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        for (int y = 0; y < n; ++y)
            for (int x = 0; x < n; ++x) a(x, y) = u(rng);
        in.set(a);
        pipeline.realize(got);
        interpret(pipeline, {want});
        bool same = true;
        for (int y = 0; y < n; ++y)
            for (int x = 0; x < n; ++x) same = same && got(x, y) == want(x, y);
        INFO("n = " << n);
        CHECK(same);
    }
}
