// Schedule parts rebuilt over the parameters they involve (used_parameters.h), for the AST.
#include "../test_util.h"

#include <isl/ast.h>
#include <isl/ast_build.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/space.h>

#include <tessera/poly/isl_expr.h>
#include <tessera/poly/used_parameters.h>

using namespace tessera;

namespace {

struct IslContext {
    isl_ctx *ctx = isl_ctx_alloc();
    ~IslContext() { isl_ctx_free(ctx); }
};

std::vector<std::string> parameter_names(isl_space *space) {
    std::vector<std::string> names;
    for (isl_size i = 0; i < isl_space_dim(space, isl_dim_param); ++i)
        names.push_back(isl_space_get_dim_name(space, isl_dim_param, unsigned(i)));
    isl_space_free(space);
    return names;
}

// The parameters of the schedule's domain.
std::vector<std::string> schedule_parameters(const isl::schedule &s) {
    isl_union_set *domain = isl_schedule_get_domain(s.get());
    std::vector<std::string> names = parameter_names(isl_union_set_get_space(domain));
    isl_union_set_free(domain);
    return names;
}

// The name of the mark just below the domain of `s` ("" if none), and in `below` the node
// under it (the caller frees it).
std::string top_mark(const isl::schedule &s, isl_schedule_node **below) {
    isl_schedule_node *root = isl_schedule_get_root(s.get());
    isl_schedule_node *mark = isl_schedule_node_get_child(root, 0);
    isl_schedule_node_free(root);
    std::string name;
    if (isl_schedule_node_get_type(mark) == isl_schedule_node_mark) {
        isl_id *id = isl_schedule_node_mark_get_id(mark);
        name = isl_id_get_name(id);
        isl_id_free(id);
    }
    *below = isl_schedule_node_get_child(mark, 0);
    isl_schedule_node_free(mark);
    return name;
}

std::string ast_c(const isl::schedule &s, const isl::set &context, int indent = 0) {
    isl_ast_build *build = isl_ast_build_from_context(context.copy());
    isl_ast_node *root = isl_ast_build_node_from_schedule(build, s.copy());
    isl_ast_build_free(build);
    isl_printer *p = isl_printer_set_indent(isl_printer_set_output_format(isl_printer_to_str(isl_ast_node_get_ctx(root)), ISL_FORMAT_C), indent);
    p = isl_printer_print_ast_node(p, root);
    char *text = isl_printer_get_str(p);
    std::string c = text;
    free(text);
    isl_printer_free(p);
    isl_ast_node_free(root);
    return c;
}

// Two groups under a sequence: S_f over its Region parameters (a tiled band with a mark and
// loop types), S_g over N; M is in no set.
const char *kTwoGroups =
    "{ domain: \"[N, M, rg_lo, rg_hi] -> { S_f[x] : rg_lo <= x <= rg_hi; S_g[y] : 0 <= y < N }\", "
    "child: { sequence: [ "
    "{ filter: \"[N, M, rg_lo, rg_hi] -> { S_f[x] }\", child: { mark: \"parallel:1\", child: { "
    "schedule: \"[N, M, rg_lo, rg_hi] -> [{ S_f[x] -> [(floor(x / 32))] }, { S_f[x] -> [(x mod 32)] }]\", "
    "permutable: 1, coincident: [ 1, 0 ], options: \"{ atomic[1] }\" } } }, "
    "{ filter: \"[N, M, rg_lo, rg_hi] -> { S_g[y] }\", child: { "
    "schedule: \"[N, M, rg_lo, rg_hi] -> [{ S_g[y] -> [(y)] }]\" } } ] } }";

} // namespace

TEST_CASE("each group of a schedule is rebuilt over the parameters it involves", "[poly][ast]") {
    IslContext c;
    isl::schedule s = isl::manage(isl_schedule_read_from_str(c.ctx, kTwoGroups));
    isl::set context = isl::manage(isl_set_read_from_str(c.ctx, "[N, M, rg_lo, rg_hi] -> { : N > 0 and M > N and rg_lo <= rg_hi }"));
    std::string why;
    auto parts = poly::schedule_parts_over_used_parameters(s, context, why);
    REQUIRE(parts);
    REQUIRE(parts->size() == 2);
    const auto &f = (*parts)[0], &g = (*parts)[1];
    CHECK((schedule_parameters(f.schedule)) == std::vector<std::string>{"rg_lo", "rg_hi"});
    CHECK((schedule_parameters(g.schedule)) == std::vector<std::string>{"N"});
    // The context keeps what it implies on the parameters left (M > N > 0 gives N > 0).
    CHECK(isl_set_is_equal(g.context.get(), isl::set(c.ctx, "[N] -> { : N > 0 }").get()) == isl_bool_true);
    CHECK(isl_set_is_equal(f.context.get(), isl::set(c.ctx, "[rg_lo, rg_hi] -> { : rg_lo <= rg_hi }").get()) == isl_bool_true);

    // The mark, the band's members, flags and loop types are those of the original.
    isl_schedule_node *band = nullptr;
    CHECK(top_mark(f.schedule, &band) == "parallel:1");
    REQUIRE(isl_schedule_node_get_type(band) == isl_schedule_node_band);
    CHECK(isl_schedule_node_band_n_member(band) == 2);
    CHECK(isl_schedule_node_band_get_permutable(band) == isl_bool_true);
    CHECK(isl_schedule_node_band_member_get_coincident(band, 0) == isl_bool_true);
    CHECK(isl_schedule_node_band_member_get_coincident(band, 1) == isl_bool_false);
    CHECK(isl_schedule_node_band_member_get_ast_loop_type(band, 1) == isl_ast_loop_atomic);
    isl_schedule_node_free(band);

    // The groups' ASTs, one after the other, are the AST of the whole schedule.
    std::string whole = ast_c(s, context);
    CHECK(whole == "{\n" + ast_c(f.schedule, f.context, 2) + ast_c(g.schedule, g.context, 2) + "}\n");
}

TEST_CASE("a group that is a sequence below a fold mark is a part per child below copies of the mark", "[poly][ast]") {
    // A ring's first planes (S_0, over the Region parameters rg_lo, rg_hi), then its time loop
    // (S_1, over N and T), below the group's fold mark; then another group (S_g).
    IslContext c;
    const char *tree =
        "{ domain: \"[N, T, rg_lo, rg_hi] -> { S_0[t, x] : 0 <= t <= 1 and rg_lo <= x <= rg_hi; "
        "S_1[t, x] : 0 <= t < T and 0 < x < N; S_g[x] : 0 <= x < N }\", child: { sequence: [ "
        "{ filter: \"[N, T, rg_lo, rg_hi] -> { S_0[t, x]; S_1[t, x] }\", child: { mark: \"fold:F_J:1:2\", child: { sequence: [ "
        "{ filter: \"[N, T, rg_lo, rg_hi] -> { S_0[t, x] }\", child: { schedule: \"[N, T, rg_lo, rg_hi] -> [{ S_0[t, x] -> [(t)] }, { S_0[t, x] -> [(x)] }]\" } }, "
        "{ filter: \"[N, T, rg_lo, rg_hi] -> { S_1[t, x] }\", child: { schedule: \"[N, T, rg_lo, rg_hi] -> [{ S_1[t, x] -> [(t)] }, { S_1[t, x] -> [(t + x)] }]\" } } ] } } }, "
        "{ filter: \"[N, T, rg_lo, rg_hi] -> { S_g[x] }\", child: { schedule: \"[N, T, rg_lo, rg_hi] -> [{ S_g[x] -> [(x)] }]\" } } ] } }";
    isl::schedule s = isl::manage(isl_schedule_read_from_str(c.ctx, tree));
    isl::set context(c.ctx, "[N, T, rg_lo, rg_hi] -> { : N > 2 and T > 0 and rg_lo <= 0 and rg_hi >= N - 1 }");
    std::string why;
    auto parts = poly::schedule_parts_over_used_parameters(s, context, why);
    REQUIRE(parts);
    REQUIRE(parts->size() == 3);
    CHECK(schedule_parameters((*parts)[0].schedule) == std::vector<std::string>{"rg_lo", "rg_hi"});
    CHECK(schedule_parameters((*parts)[1].schedule) == std::vector<std::string>{"N", "T"});
    CHECK(schedule_parameters((*parts)[2].schedule) == std::vector<std::string>{"N"});
    for (size_t k = 0; k < 2; ++k) {
        isl_schedule_node *band = nullptr;
        CHECK(top_mark((*parts)[k].schedule, &band) == "fold:F_J:1:2");
        CHECK(isl_schedule_node_get_type(band) == isl_schedule_node_band);
        isl_schedule_node_free(band);
    }
    // Each part's loops are those of the whole schedule's AST, in order.
    std::string whole = ast_c(s, context);
    for (const auto &part : *parts) {
        std::string loops = ast_c(part.schedule, part.context);
        std::string last_loop = loops.substr(loops.rfind("for ("));
        CHECK(whole.find(last_loop.substr(0, last_loop.find('\n'))) != std::string::npos);
    }
}

TEST_CASE("a schedule without a top-level sequence is one part", "[poly][ast]") {
    IslContext c;
    isl::schedule s = isl::manage(isl_schedule_read_from_str(
        c.ctx, "{ domain: \"[N, M] -> { S[i] : 0 <= i < M }\", child: { schedule: \"[N, M] -> [{ S[i] -> [(i)] }]\" } }"));
    std::string why;
    auto parts = poly::schedule_parts_over_used_parameters(s, isl::set(c.ctx, "[N, M] -> { : N > 0 }"), why);
    REQUIRE(parts);
    REQUIRE(parts->size() == 1);
    CHECK(schedule_parameters((*parts)[0].schedule) == std::vector<std::string>{"M"});
}

TEST_CASE("a part's parameters that only restate the context leave its AST", "[poly][ast]") {
    // A statically shaped graph's statement: constant bounds, and the output's sizes E0, E1 only
    // in "E > 0", which the context says. Its AST needs neither; N (a bound) and the constraint
    // on it that the context does not imply (N > 4) stay, as does E1 > 0 where E1 also bounds
    // a loop (S_h).
    IslContext c;
    isl::schedule s = isl::manage(isl_schedule_read_from_str(
        c.ctx,
        "{ domain: \"[E0, E1, N] -> { S_f[i, j] : E0 > 0 and E1 > 0 and 0 <= i < 64 and 0 <= j < 32; "
        "S_g[i] : E0 > 0 and N > 4 and 0 <= i < N; S_h[i] : E1 > 0 and 0 <= i < E1 }\", child: { sequence: [ "
        "{ filter: \"[E0, E1, N] -> { S_f[i, j] }\", child: { schedule: \"[E0, E1, N] -> [{ S_f[i, j] -> [(floor(i / 8))] }, "
        "{ S_f[i, j] -> [(j)] }]\", permutable: 1 } }, "
        "{ filter: \"[E0, E1, N] -> { S_g[i] }\", child: { schedule: \"[E0, E1, N] -> [{ S_g[i] -> [(i)] }]\" } }, "
        "{ filter: \"[E0, E1, N] -> { S_h[i] }\", child: { schedule: \"[E0, E1, N] -> [{ S_h[i] -> [(i)] }]\" } } ] } }"));
    isl::set context(c.ctx, "[E0, E1, N] -> { : E0 > 0 and E1 > 0 and N >= 0 }");
    std::string why;
    auto parts = poly::schedule_parts_over_used_parameters(s, context, why);
    REQUIRE(parts);
    REQUIRE(parts->size() == 3);
    CHECK(schedule_parameters((*parts)[0].schedule).empty());
    CHECK(schedule_parameters((*parts)[1].schedule) == std::vector<std::string>{"N"});
    CHECK(schedule_parameters((*parts)[2].schedule) == std::vector<std::string>{"E1"});
    // S_g still runs only where N > 4; S_h's domain is unchanged.
    std::string g = ast_c((*parts)[1].schedule, (*parts)[1].context);
    CHECK(g.find("N >= 5") != std::string::npos);
    // Under the context, the parts' ASTs are the whole schedule's.
    std::string whole = ast_c(s, context);
    CHECK(whole == "{\n" + ast_c((*parts)[0].schedule, (*parts)[0].context, 2) +
                       ast_c((*parts)[1].schedule, (*parts)[1].context, 2) + ast_c((*parts)[2].schedule, (*parts)[2].context, 2) + "}\n");
}

TEST_CASE("a schedule with a node the rebuild does not know is left whole, with the reason", "[poly][ast]") {
    IslContext c;
    // A context node (as an imported schedule may hold).
    isl::schedule s = isl::manage(isl_schedule_read_from_str(
        c.ctx, "{ domain: \"[N] -> { S[i] : 0 <= i < N }\", child: { context: \"[N] -> { : N > 2 }\", "
               "child: { schedule: \"[N] -> [{ S[i] -> [(i)] }]\" } } }"));
    std::string why;
    auto parts = poly::schedule_parts_over_used_parameters(s, isl::set(c.ctx, "[N] -> { : }"), why);
    CHECK_FALSE(parts);
    CHECK(why.find("a node other than") != std::string::npos);
}

TEST_CASE("an integer operand of && or || in an isl expression is a truth value", "[poly][ast]") {
    // isl writes "always" as the integer 1, also as an operand of && and || (over fewer
    // parameters, the condition of a region bound became `n >= 3 && 1`, fuzzer seed 5448); the
    // conversion rejected it as mixing bool and integer operands.
    IslContext c;
    isl_ast_expr *n = isl_ast_expr_from_id(isl_id_alloc(c.ctx, "n", nullptr));
    isl_ast_expr *test = isl_ast_expr_ge(n, isl_ast_expr_from_val(isl_val_int_from_si(c.ctx, 3)));
    isl_ast_expr *always = isl_ast_expr_from_val(isl_val_int_from_si(c.ctx, 1));
    isl_ast_expr *never = isl_ast_expr_from_val(isl_val_int_from_si(c.ctx, 0));
    isl::ast_expr both = isl::manage(isl_ast_expr_and(isl_ast_expr_copy(test), always));
    isl::ast_expr either = isl::manage(isl_ast_expr_or(test, never));
    Var v("n");
    poly::IdResolver ids = [&](const std::string &) { return Expr(v); };
    for (const isl::ast_expr &e : {both, either}) {
        Expr x = poly::from_ast_expr(e, ids, Int(32));
        CHECK(x.type().is_bool());
        for (int value : {2, 3, 4}) {
            Expr folded = ir::transform(ir::substitute(x, {{"n", Expr(value)}}), [](const Expr &e) { return ir::fold_constants(e); });
            INFO(x << " at n = " << value << ": " << folded);
            REQUIRE(ir::is_const(folded));
            CHECK(ir::const_value(folded).u == uint64_t(value >= 3));
        }
    }
}
