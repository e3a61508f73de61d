// Loop distribution of an innermost loop around the writers of an update's own reads
// (tree_transform.h, distribute_innermost_member): which updates get it, why others do not, and
// the results at sizes around the tiles.
#include "poly_test_util.h"

#include <random>

#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <nlohmann/json.hpp>

#include <tessera/poly/tree_transform.h>

using namespace tessera;
using json = nlohmann::json;

namespace {

// Floyd-Warshall's step k as PolyBench writes it: p(j, i) = min(p(j, i), p(k, i) + p(j, k)).
// Row i reads p(k, i), which its instance j == k writes: one j loop carries a dependence
// into that instance and out of it.
struct ShortestPaths {
    Var j{"j"}, i{"i"};
    InputBuffer<int> lengths{"lengths", 2};
    Func p{"p"};
    Pipeline pipeline;
    ShortestPaths() {
        RDom r(0, lengths.width(), 0, lengths.height(), 0, lengths.height(), "r");
        p(j, i) = lengths(j, i);
        Expr through_k = p(r.z, r.y) + p(r.x, r.z);
        p(r.x, r.y) = select(p(r.x, r.y) < through_k, p(r.x, r.y), through_k);
        pipeline = Pipeline(p);
    }
    // Compiled, and the schedule `p` run by the AST interpreter with its parallel loops
    // backwards, against the reference interpreter.
    void compare(int n, const CompileOptions &options, const poly::Program *p = nullptr) {
        Buffer<int> data(n, n);
        std::mt19937 rng{uint32_t(n)};
        for (int y = 0; y < n; ++y)
            for (int x = 0; x < n; ++x) data(x, y) = rng() % 5 == 0 ? 999 : int(rng() % 20) - (x == y ? 0 : 3);
        lengths.set(data);
        Buffer<int> got(n, n), want(n, n), backwards(n, n);
        pipeline.compile(Target::host(), options).realize(got);
        interpret(pipeline, {want});
        if (p) {
            poly::ExecuteOptions eo;
            eo.reverse_parallel_loops = true;
            poly::execute(*p, {backwards}, eo);
        }
        bool same = true, same_backwards = true;
        for (int y = 0; y < n; ++y)
            for (int x = 0; x < n; ++x) {
                same = same && got(x, y) == want(x, y);
                same_backwards = same_backwards && (!p || backwards(x, y) == want(x, y));
            }
        INFO("n = " << n);
        CHECK(same);
        CHECK(same_backwards);
    }
};

int count(const std::string &text, const std::string &what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

} // namespace

TEST_CASE("a step reading the row and column it updates runs the other rows in parallel and each row in "
          "three vector loops around that column",
          "[poly][distribution]") {
    ShortestPaths sp;
    json j = json::parse(sp.pipeline.schedule_json());
    std::string nest = j["loop_nest"], note = j["groups"][0]["note"];
    // Rows i < k, row k, rows i > k; in each row, j < k, j == k, j > k.
    CHECK(note.find("rows distributed into 3 parallel loops around the row the others read") != std::string::npos);
    CHECK(note.find("innermost loop distributed into 3 vector loops") != std::string::npos);
    size_t step = nest.find("for (int c0 = 0;");  // the update's step loop (after the pure definition's)
    REQUIRE(step != std::string::npos);
    CHECK(count(nest.substr(step), "// parallel") == 3);
    CHECK(count(nest.substr(step), "// vector") >= 9);
    std::shared_ptr<const poly::Model> m = poly::build_model(sp.pipeline);
    poly::ScheduleOptions o;
    o.verify = true;
    poly::Program prog = poly::schedule_model(m, o);
    poly_test::check_legal(prog, "distributed shortest paths");
    // Negative lengths too (the diagonal may change within a step), sizes of one, two and
    // three, odd and prime ones.
    for (int n : {1, 2, 3, 8, 17, 40}) sp.compare(n, {}, &prog);
    // Small tiles (j in tiles of 4): the column k falls at each position of a tile, and at
    // tile boundaries.
    poly::ScheduleOptions small_tiles = o;
    small_tiles.tile_sizes = {4, 3};
    poly::Program small = poly::schedule_model(m, small_tiles);
    CHECK(small.groups[0].note.find("distributed into 3 vector loops") != std::string::npos);
    poly_test::check_legal(small, "distributed shortest paths in small tiles");
    CompileOptions small_options;
    small_options.tile_sizes = {4, 3};
    for (int n : {5, 9, 13}) sp.compare(n, small_options, &small);
}

TEST_CASE("an innermost loop whose dependences stay inside one piece is not distributed", "[poly][distribution]") {
    // A prefix sum along each row: every instance reads what the one before it wrote, so the
    // writers of its reads are the whole row, not one instance per row.
    Var j("j"), i("i");
    InputBuffer<float> in("in", 2);
    Func s("s");
    RDom r(1, in.width() - 1, 0, in.height(), "r");
    s(j, i) = in(j, i);
    s(r.x, r.y) = s(r.x - 1, r.y) + s(r.x, r.y);
    Pipeline p(s);
    json js = json::parse(p.schedule_json());
    CHECK(js["groups"][0]["note"].get<std::string>().find("distributed") == std::string::npos);

    // Straight from the tree edit: one piece per half of the row carries the scan inside it.
    std::shared_ptr<const poly::Model> m = poly::build_model(p);
    poly::Dependences d = poly::compute_dependences(*m, 100000000);
    REQUIRE(d.computed);
    isl::schedule_node update = m->original.root().child(0).child(1).child(0);  // sequence -> filter -> band
    REQUIRE(poly::is_band(update));
    isl::union_set domain = isl::manage(isl_schedule_node_get_domain(update.get()));
    isl::set row = poly::sets_of(domain).at(0);
    std::string name = isl_set_get_tuple_name(row.get());
    isl::union_set left(isl::set(m->ctx(), "{ " + name + "[i, j] : j < 4 }").intersect(row));
    isl::union_set right = domain.subtract(left);
    poly::Distribution dist = poly::distribute_innermost_member(update, d.all(), {left, right});
    CHECK_FALSE(dist.node);
    CHECK(dist.why_not.find("carries a dependence inside piece") != std::string::npos);
    // And the scan still runs in order.
    Buffer<float> data(7, 3), got(7, 3), want(7, 3);
    for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 7; ++x) data(x, y) = float(x + 10 * y);
    in.set(data);
    p.realize(got);
    interpret(p, {want});
    for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 7; ++x) CHECK(got(x, y) == want(x, y));
}

TEST_CASE("a statement isl fuses into a reduction's band at one position of its loop gets a band of its own after it",
          "[poly][loop_distribution]") {
    // Covariance's upper triangle: the division runs once per element after the reduction; isl
    // places it in the reduction's band (i, j, k) at k = extent. Distributed, the reduction's
    // tiled band holds no tile with the division in it.
    Var j("j"), i("i");
    InputBuffer<double> d("d", 2);
    RDom k(0, d.height(), "k");
    k.where(j >= i);
    Func upper("upper");
    upper(j, i) = 0.0;
    upper(j, i) += d(i, k) * d(j, k);
    upper(j, i) = upper(j, i) / 3.0;
    Pipeline p(upper);
    json s = json::parse(p.schedule_json());
    std::string notes;
    for (const json &g : s["groups"]) notes += g.value("note", "") + "\n";
    INFO(notes << s["loop_nest"].get<std::string>());
    CHECK(notes.find("distributed into bands of their own") != std::string::npos);
    // The division's statement is outside every loop of the reduction's band: it follows the
    // reduction's last statement call, not inside the same innermost loop.
    std::string nest = s["loop_nest"];
    CHECK(nest.find("S_upper_2(") > nest.rfind("S_upper_1("));

    std::shared_ptr<const poly::Model> m = poly::build_model(p);
    poly_test::check_legal(poly::schedule_model(m, {}), "upper");
    for (auto [n, rows] : std::vector<std::array<int, 2>>{{1, 1}, {9, 5}, {33, 70}, {130, 3}}) {
        Buffer<double> data(n, rows);
        std::mt19937 rng(uint32_t(n * 31 + rows));
        std::uniform_real_distribution<double> u(-1, 1);
        for (int y = 0; y < rows; ++y)
            for (int x = 0; x < n; ++x) data(x, y) = u(rng);
        d.set(data);
        Buffer<double> got(n, n), want(n, n);
        p.realize({got});
        interpret(p, {want});
        apps::Comparison c = apps::compare(got, want, 0);
        INFO("n " << n << " rows " << rows << ": " << c.first_mismatch);
        CHECK(c.ok);
    }
}
