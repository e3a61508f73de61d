// isl objects copied into another context (isl_util.h, copied_to): the same sets, relations and
// names there, whatever their constraints hold.
#include "../test_util.h"

#include <isl/id.h>
#include <isl/map.h>
#include <isl/set.h>
#include <isl/space.h>

#include <cstdlib>
#include <string>

#include <tessera/poly/isl_util.h>

using namespace tessera;

namespace {

// `x` as isl's text read into `to`'s context: what copied_to must equal.
isl::union_map read_into(const poly::IslContext &to, const isl::union_map &x) {
    char *text = isl_union_map_to_str(x.get());
    isl::union_map r(to.ctx(), text);
    free(text);
    return r;
}

} // namespace

TEST_CASE("a union map copied to another context is the same relation there", "[poly][isl]") {
    poly::IslContext from, to;
    // Several maps, several pieces, equalities, a division (floor) in a constraint and an
    // existentially quantified variable, parameters, and a map no constraint restricts.
    const char *text =
        "[n, m] -> { S[i, j] -> A[i + 1, j] : 0 <= i < n and 0 <= j < m; "
        "S[i, j] -> A[i, 2j] : i = n - 1 and j >= 3; "
        "T[t, x] -> B[x] : exists (e : t = 2e) and 0 <= x < floor(n / 3) and t <= 7; "
        "U[i] -> C[i, i] : i < 0 or i > m; "
        "V[] -> A[0, 0] }";
    isl::union_map original(from.ctx(), text);
    isl::union_map copied = poly::copied_to(to.ctx(), original);
    CHECK(copied.ctx().get() == to.get());
    CHECK(copied.is_equal(read_into(to, original)));
    // The copy is a relation of its own context: it takes part in that context's operations.
    isl::union_map twice = copied.apply_range(copied.reverse());
    CHECK_FALSE(twice.is_empty());

    // The empty union, and one whose single map is empty for every parameter value.
    CHECK(poly::copied_to(to.ctx(), isl::union_map::empty(from.ctx())).is_empty());
    CHECK(poly::copied_to(to.ctx(), isl::union_map(from.ctx(), "[n] -> { S[i] -> A[i] : i < 0 and i > n + 5 and n > 0 }")).is_empty());
}

TEST_CASE("copied sets keep their tuple names, parameter order and huge coefficients", "[poly][isl]") {
    poly::IslContext from, to;
    isl::union_set u(from.ctx(), "[p, q] -> { S[i, j] : 0 <= i < q and j = p; T[k] : k >= 0 and 3k <= p }");
    isl::union_set cu = poly::copied_to(to.ctx(), u);
    CHECK(cu.is_equal(read_into(to, isl::manage(isl_union_map_from_range(u.copy()))).range()));

    // A coefficient beyond a long goes through its text.
    isl::set big(from.ctx(), "[n] -> { A[i] : 0 <= i <= 100000000000000000000000 + n }");
    isl::set cbig = poly::copied_to(to.ctx(), big);
    CHECK(cbig.is_equal(isl::set(to.ctx(), "[n] -> { A[i] : 0 <= i <= 100000000000000000000000 + n }")));
    CHECK(std::string(isl_set_get_tuple_name(cbig.get())) == "A");
    isl_space *space = isl_set_get_space(cbig.get());
    CHECK(std::string(isl_space_get_dim_name(space, isl_dim_param, 0)) == "n");
    isl_space_free(space);

    // A set of parameter values stays one: it meets the target's own.
    isl::set params = poly::copied_to(to.ctx(), isl::set(from.ctx(), "[n, m] -> { : n > 3 and m < n }"));
    CHECK(isl_set_is_params(params.get()) == isl_bool_true);
    CHECK(params.intersect(isl::set(to.ctx(), "[n, m] -> { : n < 6 }")).is_equal(isl::set(to.ctx(), "[n, m] -> { : 3 < n < 6 and m < n }")));

    // An empty set of a named space stays one.
    isl::set empty = poly::copied_to(to.ctx(), isl::set(from.ctx(), "[n] -> { A[i] : 1 = 0 }"));
    CHECK(empty.is_empty());
    CHECK(std::string(isl_set_get_tuple_name(empty.get())) == "A");
}

TEST_CASE("ids keep their user pointers, and nested spaces are copied through isl's text", "[poly][isl]") {
    poly::IslContext from, to;
    int marker = 0;
    isl_id *id = isl_id_alloc(from.get(), "S", &marker);
    isl::set s = isl::manage(isl_set_set_tuple_id(isl_set_read_from_str(from.get(), "{ [i] : 0 <= i < 4 }"), id));
    isl::set cs = poly::copied_to(to.ctx(), s);
    isl_id *copied_id = isl_set_get_tuple_id(cs.get());
    CHECK(isl_id_get_user(copied_id) == &marker);
    CHECK(std::string(isl_id_get_name(copied_id)) == "S");
    isl_id_free(copied_id);

    isl::union_map nested(from.ctx(), "{ [S[i] -> A[j]] -> T[k] : k = i + j and 0 <= i, j < 3 }");
    CHECK(poly::copied_to(to.ctx(), nested).is_equal(read_into(to, nested)));
}

TEST_CASE("the parameters some objects involve keep the model's order", "[poly][isl]") {
    poly::IslContext c;
    isl::set model(c.ctx(), "[a, b, c, d, e] -> { A[i] : 0 <= i < a + b + c + d + e }");
    auto names = [](isl_space *params) {
        std::string s;
        for (isl_size i = 0; i < isl_space_dim(params, isl_dim_param); ++i)
            s += std::string(s.empty() ? "" : ",") + isl_space_get_dim_name(params, isl_dim_param, unsigned(i));
        isl_space_free(params);
        return s;
    };
    // Involved in another order than the model's, and one of them twice: the model's order,
    // each once; a parameter no object involves is left out, at either end and in between.
    isl::set first(c.ctx(), "[d, a] -> { A[i] : i = d + a }");
    isl::set second(c.ctx(), "[c, a] -> { A[i] : i = c - a }");
    CHECK(names(poly::params_in_order_of(model.space(), {first.space(), second.space()})) == "a,c,d");
    isl::set last(c.ctx(), "[e] -> { A[i] : i = e }");
    CHECK(names(poly::params_in_order_of(model.space(), {last.space()})) == "e");
    CHECK(names(poly::params_in_order_of(model.space(), {isl::set(c.ctx(), "{ A[i] : i = 0 }").space()})) == "");
    CHECK(names(poly::params_in_order_of(model.space(), {model.space()})) == "a,b,c,d,e");
    // Aligned to it, a union of the two is the same set as over all of the model's parameters.
    isl_space *params = poly::params_in_order_of(model.space(), {first.space(), second.space()});
    isl::set united = isl::manage(isl_set_align_params(first.copy(), isl_space_copy(params)))
                          .unite(isl::manage(isl_set_align_params(second.copy(), params)));
    auto over_model = [&](const isl::set &s) { return isl::manage(isl_set_align_params(s.copy(), isl_space_params(model.space().release()))); };
    isl::set full = over_model(first).unite(over_model(second));
    CHECK(over_model(united).is_equal(full));
}
