// Index-set splitting of updates on their affine selects (model.cpp, split_affine_selects): which
// updates become one statement per case, that the cases keep the update's interleaved order, and
// that the result is exact on the scheduled, AST-interpreted and compiled paths.
#include "poly_test_util.h"

using namespace tessera;

namespace {

const poly::Statement *statement(const poly::Model &m, const std::string &name) {
    for (const poly::Statement &s : m.statements)
        if (s.name == name) return &s;
    return nullptr;
}

int statements_of(const poly::Model &m, const std::string &func) {
    int n = 0;
    for (const poly::Statement &s : m.statements) n += s.func->name == func && s.definition > 0;
    return n;
}

bool has_select(const Expr &e) {
    bool found = false;
    ir::visit(e, [&](const Expr &n) {
        found = found || n->op == Op::Select;
        return true;
    });
    return found;
}

// The scheduled program (AST-interpreted with parallel loops run backwards, legality checked)
// and the compiled code against the reference interpreter, exactly.
template <typename T>
void check_all_paths(const Func &out, const std::vector<int> &sizes, const std::string &what) {
    Pipeline p(out);
    Buffer<T> want(sizes), scheduled(sizes), compiled(sizes);
    interpret(p, {want});
    poly::ScheduleOptions so;
    so.verify = true;
    poly::Program prog = poly::schedule_pipeline(p, so);
    poly_test::check_legal(prog, what);
    poly::ExecuteOptions eo;
    eo.reverse_parallel_loops = true;
    poly::execute(prog, {scheduled}, eo);
    for (int threads : {1, 2}) {
        CompileOptions co;
        co.threads = threads;
        p.compile(Target::host(), co).realize({compiled});
        apps::Comparison c = apps::compare(compiled, want, 0);
        INFO(what << " compiled, threads " << threads << ": " << c.first_mismatch);
        CHECK(c.ok);
    }
    apps::Comparison c = apps::compare(scheduled, want, 0);
    INFO(what << " scheduled: " << c.first_mismatch << "\n" << prog.ast_c);
    CHECK(c.ok);
}

} // namespace

TEST_CASE("an update that selects on an affine condition of its instance becomes one statement per case",
          "[poly][split]") {
    // Three cases of a triangular step, like LU's: the diagonal, the column below it, the rest.
    InputBuffer<double> in("in", 2);
    Var x("x"), y("y");
    Func f("f");
    RDom r(0, in.width(), 0, in.height(), 0, in.height(), "r");
    r.where(r.x >= r.z && r.y >= r.z);
    f(x, y) = in(x, y);
    f(r.x, r.y) = select(r.x == r.z && r.y == r.z, f(r.x, r.y) + 1.0, r.x == r.z, f(r.x, r.y) / f(r.z, r.z),
                         f(r.x, r.y) - f(r.z, r.y) * f(r.x, r.z));
    auto m = poly::build_model(Pipeline(f));
    CHECK(statements_of(*m, "f") == 3);
    for (const char *name : {"S_f_1", "S_f_1_case1", "S_f_1_case2"}) {
        const poly::Statement *s = statement(*m, name);
        REQUIRE(s);
        CHECK_FALSE(has_select(s->value));
        CHECK(s->definition == 1);
    }
    // Each case reads only what its own value reads: the diagonal case reads f at its own point.
    CHECK(statement(*m, "S_f_1")->reads.size() == 1);
    for (int n : {1, 2, 7, 33}) {
        Buffer<double> data(n, n);
        std::mt19937 rng{uint32_t(n)};
        apps::fill_random(data, rng, 1.0, 2.0);
        for (int i = 0; i < n; ++i) data(i, i) = n + 1.0;
        in.set(data);
        check_all_paths<double>(f, {n, n}, "three cases at n=" + std::to_string(n));
    }
}

TEST_CASE("the cases of a split update run interleaved in the update's order, not one case after the other",
          "[poly][split]") {
    // Per step, f(0) reads the f(1) of the step before and f(1) reads the f(0) just written:
    // running all of case 0 before case 1 would give other values.
    Var x("x");
    Func f("pair");
    RDom r(0, 2, 0, 9, "r");
    f(x) = x + 1;
    f(r.x) = select(r.x == 0, f(1) * 2 + f(0), f(0) - f(1) * 3);
    auto m = poly::build_model(Pipeline(f));
    CHECK(statements_of(*m, "pair") == 2);
    check_all_paths<int>(f, {2}, "interleaved pair");
    // The cases alternate along the RDom with a modulus, in a scan.
    Func g("alternating");
    RDom s(2, 39, "s");
    g(x) = x;
    g(s) = select(s % 3 == 0, g(s - 1) * 2, s % 3 == 1, g(s - 1) - 5, g(s - 1) + g(s - 2));
    auto mg = poly::build_model(Pipeline(g));
    CHECK(statements_of(*mg, "alternating") == 3);
    check_all_paths<int>(g, {41}, "alternating scan");
}

TEST_CASE("a select on data is not split, and a case that never runs is dropped", "[poly][split]") {
    InputBuffer<float> in("in", 1);
    Var x("x");
    Func data_select("data_select"), never("never");
    RDom r(0, in.width(), "r");
    data_select(x) = 0.f;
    data_select(r) = select(in(r) > 0.5f, data_select(r) + in(r), data_select(r) - 1.f);
    auto m = poly::build_model(Pipeline(data_select));
    CHECK(statements_of(*m, "data_select") == 1);
    CHECK(has_select(statement(*m, "S_data_select_1")->value));

    never(x) = 1.f;
    never(r) = select(r < 0, never(r) * 100.f, never(r) + in(r));  // r < 0 never holds
    auto mn = poly::build_model(Pipeline(never));
    CHECK(statements_of(*mn, "never") == 1);
    CHECK_FALSE(has_select(statement(*mn, "S_never_1")->value));

    Buffer<float> b(13);
    std::mt19937 rng(5);
    apps::fill_random(b, rng, 0.0, 1.0);
    in.set(b);
    check_all_paths<float>(data_select, {13}, "data select");
    check_all_paths<float>(never, {13}, "case never taken");
}
