// What a built model answers: its relations, arrays, parameters and spaces, its dead
// instances, and its statements by definition (model.h). model.cpp builds it.
#include "tessera/poly/model.h"

#include <isl/id.h>
#include <isl/space.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

namespace tessera::poly {

void Model::set_dead_instances(std::function<DeadInstances()> find) { find_dead_ = std::move(find); }

const DeadInstances &Model::dead_instances() const {
    std::call_once(dead_found_, [this] {
        TESSERA_INTERNAL_ASSERT(find_dead_, "a model without its dead-instance analysis");
        dead_.emplace(find_dead_());
        find_dead_ = nullptr;
        // (Over every parameter of the model, as region_covers_accesses gives them.)
        isl::space params = set_space("", 0).params();
        for (const auto &[array, covers] : dead_->covers)
            region_covers.emplace(array, isl::manage(isl_set_align_params(covers.copy(), params.copy())));
    });
    return *dead_;
}

const isl::union_set &Model::dead() const { return dead_instances().dead; }

const isl::union_set &Model::overwritten() const { return dead_instances().overwritten; }

isl::union_set Model::domains() const {
    isl::union_set u = isl::union_set::empty(ctx());
    for (const Statement &s : statements) u = u.unite(isl::union_set(s.domain));
    return u;
}

isl::union_map Model::reads() const {
    isl::union_map u = isl::union_map::empty(ctx());
    for (const Statement &s : statements)
        for (const Access &a : s.reads) u = u.unite(isl::union_map(a.relation));
    return u;
}

isl::union_map Model::must_writes() const {
    isl::union_map u = isl::union_map::empty(ctx());
    for (const Statement &s : statements)
        if (s.write.exact && s.guards.empty()) u = u.unite(isl::union_map(s.write.relation));
    return u;
}

isl::union_map Model::may_writes() const {
    isl::union_map u = isl::union_map::empty(ctx());
    for (const Statement &s : statements) u = u.unite(isl::union_map(s.write.relation));
    return u;
}

int Model::array_of(const FuncContents *f) const {
    for (size_t i = 0; i < arrays.size(); ++i)
        if (arrays[i].func == f) return int(i);
    return -1;
}

int Model::array_of(const InputContents *in) const {
    for (size_t i = 0; i < arrays.size(); ++i)
        if (arrays[i].input.get() == in) return int(i);
    return -1;
}

int Model::statement_index(const std::string &name) const {
    for (size_t i = 0; i < statements.size(); ++i)
        if (statements[i].name == name) return int(i);
    return -1;
}

const Parameter *Model::param_by_var(const std::string &var_name) const {
    for (const Parameter &p : params)
        if (p.var->name == var_name) return &p;
    return nullptr;
}

const Parameter *Model::param_by_name(const std::string &isl_name) const {
    for (const Parameter &p : params)
        if (p.name == isl_name) return &p;
    return nullptr;
}

Expr Model::param_var(const std::string &isl_name) const {
    const Parameter *p = param_by_name(isl_name);
    if (!p) internal_error("unknown isl parameter ", isl_name);
    return p->var;
}

std::optional<isl::id> Model::param_id(const std::string &var_name) const {
    const Parameter *p = param_by_var(var_name);
    if (!p || !p->in_isl) return std::nullopt;
    return isl::id(ctx(), p->name);
}

AffineSpace Model::instance_space(const std::string &tuple, const std::vector<std::string> &dims) const {
    AffineSpace s;
    s.universe = isl::set::universe(set_space(tuple, unsigned(dims.size())));
    for (size_t i = 0; i < dims.size(); ++i) s.var_dims[dims[i]] = int(i);
    s.param_id = [this](const std::string &v) { return param_id(v); };
    return s;
}

isl::space Model::set_space(const std::string &tuple, unsigned dims) const {
    isl_space *s = isl_space_params_alloc(ctx().get(), 0);
    for (const Parameter &p : params)
        if (p.in_isl) s = isl_space_add_param_id(s, isl_id_alloc(ctx().get(), p.name.c_str(), nullptr));
    s = isl_space_set_from_params(s);
    s = isl_space_add_dims(s, isl_dim_set, dims);
    s = isl_space_set_tuple_name(s, isl_dim_set, tuple.c_str());
    return isl::manage(s);
}

std::vector<std::vector<int>> definitions_in_order(const Model &m) {
    std::vector<std::vector<int>> definitions;
    for (size_t i = 0; i < m.statements.size(); ++i) {
        const Statement &s = m.statements[i];
        bool same = !definitions.empty() && s.definition > 0 && m.statements[size_t(definitions.back().front())].func == s.func &&
                    m.statements[size_t(definitions.back().front())].definition == s.definition;
        if (same) definitions.back().push_back(int(i));
        else definitions.push_back({int(i)});
    }
    return definitions;
}

} // namespace tessera::poly
