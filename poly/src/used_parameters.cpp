#include "tessera/poly/used_parameters.h"

#include <isl/aff.h>
#include <isl/constraint.h>
#include <isl/id.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/space.h>
#include <isl/union_set.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tessera/poly/isl_util.h"
#include "tessera/poly/marks.h"

namespace tessera::poly {
namespace {

// The names of the parameters that the constraints (and divisions) of `set` involve.
void add_used(isl_set *set, std::set<std::string> &used) {
    isl_size n = isl_set_dim(set, isl_dim_param);
    for (isl_size i = 0; i < n; ++i)
        if (isl_set_involves_dims(set, isl_dim_param, unsigned(i), 1) == isl_bool_true)
            used.insert(isl_set_get_dim_name(set, isl_dim_param, unsigned(i)));
}

void add_used(isl_union_set *uset, std::set<std::string> &used) {
    isl_union_set_foreach_set(
        uset,
        [](isl_set *set, void *user) {
            add_used(set, *static_cast<std::set<std::string> *>(user));
            isl_set_free(set);
            return isl_stat_ok;
        },
        &used);
}

void add_used(isl_multi_union_pw_aff *mupa, std::set<std::string> &used) {
    isl_size n = isl_multi_union_pw_aff_size(mupa);
    for (isl_size k = 0; k < n; ++k) {
        isl_union_pw_aff *upa = isl_multi_union_pw_aff_get_at(mupa, int(k));
        isl_union_pw_aff_foreach_pw_aff(
            upa,
            [](isl_pw_aff *pa, void *user) {
                auto &used = *static_cast<std::set<std::string> *>(user);
                isl_size params = isl_pw_aff_dim(pa, isl_dim_param);
                for (isl_size i = 0; i < params; ++i)
                    if (isl_pw_aff_involves_dims(pa, isl_dim_param, unsigned(i), 1) == isl_bool_true)
                        used.insert(isl_pw_aff_get_dim_name(pa, isl_dim_param, unsigned(i)));
                isl_pw_aff_free(pa);
                return isl_stat_ok;
            },
            &used);
        isl_union_pw_aff_free(upa);
    }
}

// The parameters that the nodes of the subtree at `node` involve, or false where it holds a
// node kind that `rebuild` does not handle.
bool collect_used(isl_schedule_node *node, std::set<std::string> &used) {
    switch (isl_schedule_node_get_type(node)) {
    case isl_schedule_node_leaf: return true;
    case isl_schedule_node_band: {
        isl_multi_union_pw_aff *mupa = isl_schedule_node_band_get_partial_schedule(node);
        add_used(mupa, used);
        isl_multi_union_pw_aff_free(mupa);
        isl_union_set *options = isl_schedule_node_band_get_ast_build_options(node);
        add_used(options, used);
        isl_union_set_free(options);
        break;
    }
    case isl_schedule_node_filter: {
        isl_union_set *filter = isl_schedule_node_filter_get_filter(node);
        add_used(filter, used);
        isl_union_set_free(filter);
        break;
    }
    case isl_schedule_node_mark:
    case isl_schedule_node_sequence:
    case isl_schedule_node_set: break;
    default: return false;
    }
    isl_size n = isl_schedule_node_n_children(node);
    for (isl_size i = 0; i < n; ++i) {
        isl_schedule_node *child = isl_schedule_node_get_child(node, int(i));
        bool ok = collect_used(child, used);
        isl_schedule_node_free(child);
        if (!ok) return false;
    }
    return true;
}

// Rebuilds isl objects over the reduced parameter space `params`: each piece drops the
// parameters it does not involve (all of them are in `params`) and is aligned to `params`.
class Reducer {
public:
    explicit Reducer(isl_space *params) : params_(params) {}
    ~Reducer() { isl_space_free(params_); }
    Reducer(const Reducer &) = delete;
    Reducer &operator=(const Reducer &) = delete;

    isl_space *params() const { return params_; }

    isl_set *set(isl_set *s) const {
        return isl_set_align_params(drop_unused_params(s), isl_space_copy(params_));
    }

    isl_union_set *union_set(isl_union_set *u) const {
        struct Data {
            const Reducer *r;
            isl_union_set *result;
        } data{this, isl_union_set_empty(isl_space_copy(params_))};
        isl_union_set_foreach_set(
            u,
            [](isl_set *s, void *user) {
                auto *d = static_cast<Data *>(user);
                d->result = isl_union_set_add_set(d->result, d->r->set(s));
                return isl_stat_ok;
            },
            &data);
        isl_union_set_free(u);
        return data.result;
    }

    isl_multi_union_pw_aff *mupa(isl_multi_union_pw_aff *m) const {
        isl_size n = isl_multi_union_pw_aff_size(m);
        isl_space *space = isl_multi_union_pw_aff_get_space(m);
        isl_space *reduced = isl_space_add_dims(isl_space_set_from_params(isl_space_copy(params_)), isl_dim_set, unsigned(n));
        if (isl_space_has_tuple_id(space, isl_dim_set) == isl_bool_true)
            reduced = isl_space_set_tuple_id(reduced, isl_dim_set, isl_space_get_tuple_id(space, isl_dim_set));
        isl_space_free(space);
        isl_union_pw_aff_list *list = isl_union_pw_aff_list_alloc(isl_space_get_ctx(params_), int(n));
        for (isl_size k = 0; k < n; ++k) {
            struct Data {
                const Reducer *r;
                isl_union_pw_aff *result;
            } data{this, isl_union_pw_aff_empty(isl_space_copy(params_))};
            isl_union_pw_aff *upa = isl_multi_union_pw_aff_get_at(m, int(k));
            isl_union_pw_aff_foreach_pw_aff(
                upa,
                [](isl_pw_aff *pa, void *user) {
                    auto *d = static_cast<Data *>(user);
                    pa = isl_pw_aff_align_params(drop_unused_params(pa), isl_space_copy(d->r->params_));
                    d->result = isl_union_pw_aff_add_pw_aff(d->result, pa);
                    return isl_stat_ok;
                },
                &data);
            isl_union_pw_aff_free(upa);
            list = isl_union_pw_aff_list_add(list, data.result);
        }
        isl_multi_union_pw_aff_free(m);
        return isl_multi_union_pw_aff_from_union_pw_aff_list(reduced, list);
    }

private:
    isl_space *params_;
};

// Rebuilds the subtree at `from` (of the original schedule) in place of the leaf `to` of the new
// schedule, node by node with every isl object reduced. Returns the new subtree's root.
isl_schedule_node *rebuild(isl_schedule_node *from, isl_schedule_node *to, const Reducer &r) {
    // Inserting above the leaf `to` gives the new node; its child(0) is again a leaf, where the
    // original node's child goes; parent() comes back up to the new node.
    auto below = [&](isl_schedule_node *inserted) {
        isl_schedule_node *child = isl_schedule_node_get_child(from, 0);
        inserted = isl_schedule_node_parent(rebuild(child, isl_schedule_node_child(inserted, 0), r));
        isl_schedule_node_free(child);
        return inserted;
    };
    switch (isl_schedule_node_get_type(from)) {
    case isl_schedule_node_leaf: return to;
    // Each band keeps its flags: permutable, coincident members, loop types, options.
    case isl_schedule_node_band: {
        isl_schedule_node *band = isl_schedule_node_insert_partial_schedule(to, r.mupa(isl_schedule_node_band_get_partial_schedule(from)));
        band = isl_schedule_node_band_set_permutable(band, isl_schedule_node_band_get_permutable(from) == isl_bool_true);
        isl_size n = isl_schedule_node_band_n_member(from);
        for (isl_size i = 0; i < n; ++i) {
            band = isl_schedule_node_band_member_set_coincident(
                band, int(i), isl_schedule_node_band_member_get_coincident(from, int(i)) == isl_bool_true);
            band = isl_schedule_node_band_member_set_ast_loop_type(band, int(i),
                                                                   isl_schedule_node_band_member_get_ast_loop_type(from, int(i)));
            band = isl_schedule_node_band_member_set_isolate_ast_loop_type(
                band, int(i), isl_schedule_node_band_member_get_isolate_ast_loop_type(from, int(i)));
        }
        band = isl_schedule_node_band_set_ast_build_options(band, r.union_set(isl_schedule_node_band_get_ast_build_options(from)));
        return below(band);
    }
    // A mark keeps its isl_id, and so the typed Mark it carries.
    case isl_schedule_node_mark: return below(isl_schedule_node_insert_mark(to, isl_schedule_node_mark_get_id(from)));
    case isl_schedule_node_filter:
        return below(isl_schedule_node_insert_filter(to, r.union_set(isl_schedule_node_filter_get_filter(from))));
    // A sequence (set) of filters: each filter's subtree goes under the new filter of its child.
    case isl_schedule_node_sequence:
    case isl_schedule_node_set: {
        isl_size n = isl_schedule_node_n_children(from);
        isl_union_set_list *filters = isl_union_set_list_alloc(isl_schedule_node_get_ctx(from), int(n));
        for (isl_size i = 0; i < n; ++i) {
            isl_schedule_node *child = isl_schedule_node_get_child(from, int(i));
            filters = isl_union_set_list_add(filters, r.union_set(isl_schedule_node_filter_get_filter(child)));
            isl_schedule_node_free(child);
        }
        isl_schedule_node *node = isl_schedule_node_get_type(from) == isl_schedule_node_sequence
                                      ? isl_schedule_node_insert_sequence(to, filters)
                                      : isl_schedule_node_insert_set(to, filters);
        for (isl_size i = 0; i < n; ++i) {
            isl_schedule_node *filter = isl_schedule_node_get_child(from, int(i));
            isl_schedule_node *child = isl_schedule_node_get_child(filter, 0);
            node = isl_schedule_node_child(isl_schedule_node_child(node, int(i)), 0);
            node = isl_schedule_node_parent(isl_schedule_node_parent(rebuild(child, node, r)));
            isl_schedule_node_free(child);
            isl_schedule_node_free(filter);
        }
        return node;
    }
    default: isl_schedule_node_free(to); return nullptr;  // excluded by collect_used
    }
}

// The constraints of `set`, where it is one conjunction without local variables (nullptr
// otherwise).
isl_constraint_list *constraints_of_conjunction(isl_set *set) {
    if (isl_set_n_basic_set(set) != 1 || isl_set_involves_locals(set) != isl_bool_false) return nullptr;
    isl_basic_set_list *conjunctions = isl_set_get_basic_set_list(set);
    isl_basic_set *bset = isl_basic_set_list_get_at(conjunctions, 0);
    isl_basic_set_list_free(conjunctions);
    isl_constraint_list *constraints = isl_basic_set_get_constraint_list(bset);
    isl_basic_set_free(bset);
    return constraints;
}

// The names of the parameters `c` involves.
std::vector<std::string> parameters_of(isl_constraint *c) {
    std::vector<std::string> names;
    isl_size params = isl_constraint_dim(c, isl_dim_param);
    for (isl_size i = 0; i < params; ++i)
        if (isl_constraint_involves_dims(c, isl_dim_param, unsigned(i), 1) == isl_bool_true)
            names.push_back(isl_constraint_get_dim_name(c, isl_dim_param, unsigned(i)));
    return names;
}

// `domain` (a part's instances) without the constraints that only restate `context` about
// parameters nothing else in the part involves: such a parameter then drops out of the part's
// AST (schedule_parts_over_used_parameters). A statically shaped torch graph keeps the
// "extent > 0" of its output's sizes in every statement's domain, and isl took 30 ms for the AST
// of a tiled matmul over those three parameters, 18 ms without them. `elsewhere`: the parameters
// the part's schedule involves. Only sets of one conjunction without local variables are looked
// at; the context is asked only about constraints that would let a parameter drop out (isl's
// gist of every set against the context took local_laplacian 0.7 s).
isl_union_set *without_restated_context(isl_union_set *domain, const isl::set &context, const std::set<std::string> &elsewhere) {
    struct Entry {
        isl_set *set;
        isl_constraint_list *constraints;  // null: kept whole
    };
    struct Data {
        std::vector<Entry> entries;
        std::set<std::string> pinned;  // involved by something that stays
    } data;
    data.pinned = elsewhere;
    isl_union_set_foreach_set(
        domain,
        [](isl_set *set, void *user) {
            auto *d = static_cast<Data *>(user);
            Entry e{set, constraints_of_conjunction(set)};
            if (!e.constraints) {
                add_used(set, d->pinned);
            } else {
                unsigned dims = unsigned(isl_set_dim(set, isl_dim_set));
                for (isl_size i = 0; i < isl_constraint_list_size(e.constraints); ++i) {
                    isl_constraint *c = isl_constraint_list_get_at(e.constraints, int(i));
                    if (isl_constraint_involves_dims(c, isl_dim_set, 0, dims) == isl_bool_true)
                        for (std::string &name : parameters_of(c)) d->pinned.insert(std::move(name));
                    isl_constraint_free(c);
                }
            }
            d->entries.push_back(e);
            return isl_stat_ok;
        },
        &data);
    isl_union_set *result = isl_union_set_empty(isl_union_set_get_space(domain));
    isl_union_set_free(domain);
    for (Entry &e : data.entries) {
        isl_basic_set *kept = nullptr;
        isl_size n = e.constraints ? isl_constraint_list_size(e.constraints) : 0;
        for (isl_size i = 0; i < n; ++i) {
            isl_constraint *c = isl_constraint_list_get_at(e.constraints, int(i));
            bool drop = false;
            if (isl_constraint_involves_dims(c, isl_dim_set, 0, unsigned(isl_set_dim(e.set, isl_dim_set))) == isl_bool_false) {
                std::vector<std::string> names = parameters_of(c);
                bool free_parameters = !names.empty();
                for (const std::string &name : names) free_parameters = free_parameters && !data.pinned.count(name);
                if (free_parameters) {
                    isl_set *half = isl_set_params(isl_set_from_basic_set(isl_basic_set_from_constraint(isl_constraint_copy(c))));
                    drop = isl_set_is_subset(context.get(), half) == isl_bool_true;
                    isl_set_free(half);
                }
            }
            if (drop && !kept) {
                // (The constraints before this one, kept.)
                kept = isl_basic_set_universe(isl_set_get_space(e.set));
                for (isl_size j = 0; j < i; ++j) kept = isl_basic_set_add_constraint(kept, isl_constraint_list_get_at(e.constraints, int(j)));
            }
            if (!drop && kept) kept = isl_basic_set_add_constraint(kept, isl_constraint_copy(c));
            isl_constraint_free(c);
        }
        isl_constraint_list_free(e.constraints);
        if (kept) {
            isl_set_free(e.set);
            e.set = isl_set_from_basic_set(kept);
        }
        result = isl_union_set_add_set(result, e.set);
    }
    return result;
}

// A part whose AST is generated alone: its instances, its subtree, and marks to put above it.
struct Part {
    isl_union_set *domain;
    isl_schedule_node *subtree;
    std::vector<isl_id *> wrapping;
};

// The part of the schedule made of the instances `domain` and the subtree at `subtree` (below
// the marks `wrapping`, outermost first), over the parameters they involve.
ScheduleOverUsedParameters reduce(isl_union_set *domain, isl_schedule_node *subtree, const std::vector<isl_id *> &wrapping,
                                  const std::set<std::string> &used, const isl::set &context) {
    isl_space *all = isl_union_set_get_space(domain);
    isl_space *params = isl_space_params_alloc(isl_space_get_ctx(all), 0);
    isl_size n = isl_space_dim(all, isl_dim_param);
    for (isl_size i = 0; i < n; ++i) {
        isl_id *id = isl_space_get_dim_id(all, isl_dim_param, unsigned(i));
        if (used.count(isl_id_get_name(id))) {
            isl_size at = isl_space_dim(params, isl_dim_param);
            params = isl_space_add_dims(params, isl_dim_param, 1);
            params = isl_space_set_dim_id(params, isl_dim_param, unsigned(at), id);
        } else {
            isl_id_free(id);
        }
    }
    isl_space_free(all);
    Reducer r(params);
    ScheduleOverUsedParameters part;
    isl_schedule *schedule = isl_schedule_from_domain(r.union_set(domain));
    isl_schedule_node *leaf = isl_schedule_node_child(isl_schedule_get_root(schedule), 0);
    isl_schedule_free(schedule);
    for (isl_id *mark : wrapping) leaf = isl_schedule_node_child(isl_schedule_node_insert_mark(leaf, isl_id_copy(mark)), 0);
    isl_schedule_node *root = rebuild(subtree, leaf, r);
    part.schedule = isl::manage(isl_schedule_node_get_schedule(root));
    isl_schedule_node_free(root);
    part.context = context_over_parameters(context, isl_space_copy(r.params()));
    return part;
}

} // namespace

std::optional<std::vector<ScheduleOverUsedParameters>> schedule_parts_over_used_parameters(
    const isl::schedule &schedule, const isl::set &context, std::string &why) {
    isl_schedule_node *root = isl_schedule_get_root(schedule.get());
    isl_schedule_node *top = isl_schedule_node_get_child(root, 0);
    // (domain, subtree) of each group: the top sequence's filters, or the whole tree.
    std::vector<std::pair<isl_union_set *, isl_schedule_node *>> groups;
    if (isl_schedule_node_get_type(top) == isl_schedule_node_sequence) {
        isl_size n = isl_schedule_node_n_children(top);
        for (isl_size i = 0; i < n; ++i) {
            isl_schedule_node *filter = isl_schedule_node_get_child(top, int(i));
            isl_union_set *domain =
                isl_union_set_intersect(isl_schedule_node_get_domain(filter), isl_schedule_node_filter_get_filter(filter));
            groups.push_back({domain, isl_schedule_node_get_child(filter, 0)});
            isl_schedule_node_free(filter);
        }
    } else {
        groups.push_back({isl_schedule_get_domain(schedule.get()), isl_schedule_node_copy(top)});
    }
    isl_schedule_node_free(top);
    isl_schedule_node_free(root);
    // A group that is a sequence below fold marks (a folded Func's first planes, then its time
    // loop: ring_initialization.h) splits into the sequence's children, each below copies of
    // the marks (which apply to the whole group and mark no loop). The first planes involve
    // the Func's Region parameters, the time loop the input's sizes and the steps: heat-3d's
    // time loop took isl 47 ms with all 14 parameters, 23 ms with its 4.
    std::vector<Part> parts;
    for (auto &[domain, subtree] : groups) {
        std::vector<isl_id *> marks;
        isl_schedule_node *below = isl_schedule_node_copy(subtree);
        while (isl_schedule_node_get_type(below) == isl_schedule_node_mark) {
            isl_id *id = isl_schedule_node_mark_get_id(below);
            std::optional<Mark> mark = mark_of_id(id);
            if (!mark || mark->kind != Mark::Kind::Fold) {
                isl_id_free(id);
                break;
            }
            marks.push_back(id);
            below = isl_schedule_node_child(below, 0);
        }
        if (marks.empty() || isl_schedule_node_get_type(below) != isl_schedule_node_sequence) {
            for (isl_id *id : marks) isl_id_free(id);
            isl_schedule_node_free(below);
            parts.push_back(Part{domain, subtree, {}});
            continue;
        }
        isl_size n = isl_schedule_node_n_children(below);
        for (isl_size i = 0; i < n; ++i) {
            isl_schedule_node *filter = isl_schedule_node_get_child(below, int(i));
            isl_union_set *part_domain = isl_union_set_intersect(isl_union_set_copy(domain), isl_schedule_node_filter_get_filter(filter));
            std::vector<isl_id *> copies;
            for (isl_id *id : marks) copies.push_back(isl_id_copy(id));
            parts.push_back(Part{part_domain, isl_schedule_node_get_child(filter, 0), copies});
            isl_schedule_node_free(filter);
        }
        for (isl_id *id : marks) isl_id_free(id);
        isl_schedule_node_free(below);
        isl_union_set_free(domain);
        isl_schedule_node_free(subtree);
    }

    std::optional<std::vector<ScheduleOverUsedParameters>> result;
    std::vector<std::set<std::string>> used(parts.size());
    bool rebuildable = true;
    for (size_t k = 0; k < parts.size() && rebuildable; ++k) {
        rebuildable = collect_used(parts[k].subtree, used[k]);
        if (rebuildable) parts[k].domain = without_restated_context(parts[k].domain, context, used[k]);
        add_used(parts[k].domain, used[k]);
    }
    if (rebuildable) {
        result.emplace();
        for (size_t k = 0; k < parts.size(); ++k)
            result->push_back(reduce(isl_union_set_copy(parts[k].domain), parts[k].subtree, parts[k].wrapping, used[k], context));
    } else {
        why = "the schedule holds a node other than bands, marks, filters, sequences and sets";
    }
    for (Part &part : parts) {
        isl_union_set_free(part.domain);
        isl_schedule_node_free(part.subtree);
        for (isl_id *id : part.wrapping) isl_id_free(id);
    }
    return result;
}

} // namespace tessera::poly
