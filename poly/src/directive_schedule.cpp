// Scheduling from directives (directive_schedule.h).
#include "tessera/poly/directive_schedule.h"

#include <functional>
#include <map>
#include <sstream>

#include <isl/aff.h>
#include <isl/map.h>
#include <isl/schedule_node.h>
#include <isl/union_map.h>

#include <tessera/error.h>
#include <tessera/func_graph.h>
#include <tessera/stage_loops.h>

#include "tessera/poly/affine.h"
#include "tessera/poly/dependences.h"
#include "tessera/poly/legality.h"
#include "tessera/poly/tree_transform.h"

namespace tessera::poly {
namespace {

// A definition as the original schedule orders it: its child in the top sequence (or the only
// one), and its model statements (several where an update's selects were split into cases).
struct StageRef {
    int child = -1;
    FuncContents *func = nullptr;
    int definition = 0;
    std::vector<int> statements;
};

std::vector<StageRef> stages_of(const Model &m) {
    std::vector<StageRef> stages;
    for (size_t i = 0; i < m.statements.size(); ++i) {
        const Statement &s = m.statements[i];
        if (!stages.empty() && stages.back().func == s.func && stages.back().definition == s.definition && s.definition > 0) {
            stages.back().statements.push_back(int(i));
            continue;
        }
        StageRef r;
        r.child = int(stages.size());
        r.func = s.func;
        r.definition = s.definition;
        r.statements = {int(i)};
        stages.push_back(r);
    }
    return stages;
}

// The directives each stage is scheduled with.
using DirectivesOf = std::function<std::vector<LoopDirective>(const StageRef &)>;

// The band members of a stage's loops: for each statement, [loop values] over its instance.
isl::multi_union_pw_aff band_members(const Model &m, const StageRef &st, const std::vector<StageLoop> &loops) {
    isl::union_map all = isl::union_map::empty(m.ctx());
    for (int si : st.statements) {
        const Statement &s = m.statements[size_t(si)];
        AffineSpace sp;
        sp.universe = isl::set::universe(s.domain.space());
        for (size_t i = 0; i < s.dims.size(); ++i) sp.var_dims[s.dims[i]] = int(i);
        isl_space *range = isl_space_set_from_params(isl_space_params(s.domain.space().release()));
        range = isl_space_add_dims(range, isl_dim_set, unsigned(loops.size()));
        isl_space *map_space = isl_space_map_from_domain_and_range(s.domain.space().release(), range);
        isl_multi_pw_aff *mpa = isl_multi_pw_aff_zero(map_space);
        for (size_t k = 0; k < loops.size(); ++k) {
            std::optional<isl::pw_aff> v = to_pw_aff(loops[k].value, sp);
            if (!v)
                internal_error("The loop ", loops[k].name, " of ", s.name, " (", loops[k].value, ") is not affine.");
            mpa = isl_multi_pw_aff_set_pw_aff(mpa, int(k), v->release());
        }
        isl::map map = isl::manage(isl_map_from_multi_pw_aff(mpa)).intersect_domain(s.domain);
        all = all.unite(isl::union_map(map));
    }
    return isl::manage(isl_multi_union_pw_aff_from_union_map(all.release()));
}

// The band of stage `st` in `schedule`: the only band, or the one under its filter.
isl::schedule_node band_of(const isl::schedule &schedule, const StageRef &st, size_t stages) {
    isl::schedule_node n = schedule.root().child(0);
    if (stages > 1) n = n.child(st.child).child(0);
    return n;
}

isl::schedule directive_tree(const Model &m, const std::vector<StageRef> &stages, const DirectivesOf &directives_of) {
    isl::schedule schedule = m.original;
    for (const StageRef &st : stages) {
        std::vector<LoopDirective> ds = directives_of(st);
        if (ds.empty()) continue;
        std::vector<StageLoop> loops = stage_loops(*st.func, st.definition, ds);
        isl::schedule_node band = band_of(schedule, st, stages.size());
        if (!is_band(band)) continue;  // a zero-dimensional definition has no loops
        band = replace_band_members(band, band_members(m, st, loops));
        for (size_t k = 0; k < loops.size(); ++k)
            if (loops[k].unroll) band = unroll_member(band, int(k));
        // The vector loop is innermost: mark it first, then the parallel one above it.
        int n = int(loops.size());
        if (loops.back().vector) {
            isl::schedule_node mark = mark_member(band, n - 1, Mark::vector());
            band = n > 1 ? mark.parent() : mark;
        }
        for (int k = 0; k < n; ++k)
            if (loops[size_t(k)].parallel) band = mark_member(band, k, Mark::parallel());
        schedule = band.schedule();
    }
    return schedule;
}

std::string loops_text(const std::vector<StageLoop> &loops) {
    std::ostringstream s;
    for (size_t i = 0; i < loops.size(); ++i) {
        s << (i ? ", " : "") << loops[i].name;
        if (loops[i].parallel) s << " (parallel)";
        if (loops[i].vector) s << " (vector)";
        if (loops[i].unroll) s << " (unrolled)";
    }
    return s.str();
}

// One group per Func, computed at root; its note lists each stage's loops.
std::vector<Group> root_groups(const Model &m, const std::vector<StageRef> &stages) {
    std::vector<Group> groups;
    std::map<FuncContents *, size_t> index;
    for (const StageRef &st : stages) {
        auto [it, fresh] = index.emplace(st.func, groups.size());
        if (fresh) {
            Group g;
            g.name = st.func->name;
            g.kind = Group::Kind::Sequential;
            g.funcs = {st.func};
            g.note = "computed at root by directives;";
            groups.push_back(g);
        }
        Group &g = groups[it->second];
        for (int s : st.statements) g.statements.push_back(s);
        std::vector<StageLoop> loops = stage_loops(*st.func, st.definition);
        g.note += std::string(" ") + (st.definition == 0 ? "pure" : "update " + std::to_string(st.definition - 1)) +
                  " loops (outermost first): " + (loops.empty() ? "none" : loops_text(loops)) + ";";
    }
    (void)m;
    return groups;
}

} // namespace

Program schedule_from_directives(std::shared_ptr<const Model> model, long max_operations) {
    const Model &m = *model;
    std::vector<StageRef> stages = stages_of(m);
    auto own = [](const StageRef &st) {
        return st.definition == 0 ? st.func->pure.directives : st.func->updates[size_t(st.definition - 1)].directives;
    };
    std::vector<Group> groups = root_groups(m, stages);
    Program p = program_from_tree(model, directive_tree(m, stages, own), groups);
    Dependences d = compute_dependences(m, max_operations);
    if (!d.computed)
        user_error("Cannot check the schedule the directives describe: dependence analysis exceeded its operation quota (",
                   max_operations, "). Remove directives to let the automatic scheduler order the loops.");
    Legality l = check_legality(p, d, false);
    if (l.legal) return p;
    // Find the first directive whose addition makes the schedule illegal: the stages before
    // it with all of theirs, its own stage with those written before it.
    for (size_t k = 0; k < stages.size(); ++k) {
        std::vector<LoopDirective> mine = own(stages[k]);
        for (size_t j = 0; j < mine.size(); ++j) {
            auto prefix = [&](const StageRef &st) {
                if (st.child < stages[k].child) return own(st);
                if (st.child > stages[k].child) return std::vector<LoopDirective>{};
                return std::vector<LoopDirective>(mine.begin(), mine.begin() + long(j) + 1);
            };
            Program q = program_from_tree(model, directive_tree(m, stages, prefix), groups);
            Legality lq = check_legality(q, d, false);
            if (!lq.legal)
                user_error("Func ", stages[k].func->name, ": the directive ",
                           directive_text(*stages[k].func, stages[k].definition, mine[j]), " is illegal. ", lq.violation);
        }
    }
    user_error("The schedule the directives describe is illegal. ", l.violation);
}

} // namespace tessera::poly
