// Scheduling from directives (directive_schedule.h).
#include "tessera/poly/directive_schedule.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
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
#include "tessera/poly/overlapped_tiling.h"
#include "tessera/poly/register_tiling.h"
#include "tessera/poly/scheduler.h"
#include "tessera/poly/tree_transform.h"

namespace tessera::poly {
namespace {

// A definition and its model statements (several where an update's selects were split into
// cases), in the original order.
struct StageRef {
    int index = -1;
    FuncContents *func = nullptr;
    int definition = 0;
    std::vector<int> statements;
};

std::vector<StageRef> stages_of(const Model &m) {
    std::vector<StageRef> stages;
    for (std::vector<int> &d : definitions_in_order(m)) {
        StageRef r;
        r.index = int(stages.size());
        r.func = m.statements[size_t(d.front())].func;
        r.definition = m.statements[size_t(d.front())].definition;
        r.statements = std::move(d);
        stages.push_back(r);
    }
    return stages;
}

// The instances of a stage: the union of its statements' domains.
isl::union_set domain_of(const Model &m, const StageRef &st) {
    isl::union_set dom = isl::union_set::empty(m.ctx());
    for (int si : st.statements) dom = dom.unite(isl::union_set(m.statements[size_t(si)].domain));
    return dom;
}

const std::vector<LoopDirective> &own_directives(const StageRef &st) {
    return st.definition == 0 ? st.func->pure.directives : st.func->updates[size_t(st.definition - 1)].directives;
}

// The directives each stage is scheduled with.
using DirectivesOf = std::function<std::vector<LoopDirective>(const StageRef &)>;

// The band members of a stage's loops: for each statement, [loop values] over its instance.
isl::multi_union_pw_aff band_members(const Model &m, const StageRef &st, const std::vector<StageLoop> &loops) {
    isl::union_map all = isl::union_map::empty(m.ctx());
    for (int si : st.statements) {
        const Statement &s = m.statements[size_t(si)];
        AffineSpace sp = m.instance_space(s.name, s.dims);
        isl_space *range = isl_space_set_from_params(isl_space_params(s.domain.space().release()));
        range = isl_space_add_dims(range, isl_dim_set, unsigned(loops.size()));
        isl_space *map_space = isl_space_map_from_domain_and_range(s.domain.space().release(), range);
        isl_multi_pw_aff *mpa = isl_multi_pw_aff_zero(map_space);
        for (size_t k = 0; k < loops.size(); ++k) {
            std::optional<isl::pw_aff> v = to_pw_aff(loops[k].value, sp);
            if (!v) {
                isl_multi_pw_aff_free(mpa);
                internal_error("The loop ", loops[k].name, " of ", s.name, " (", loops[k].value, ") is not affine.");
            }
            mpa = isl_multi_pw_aff_set_pw_aff(mpa, int(k), v->release());
        }
        isl::map map = isl::manage(isl_map_from_multi_pw_aff(mpa)).intersect_domain(s.domain);
        all = all.unite(isl::union_map(map));
    }
    return isl::manage(isl_multi_union_pw_aff_from_union_map(all.release()));
}

// Halide's register blocking written as directives: the loops end with reduction loops, then an
// unrolled row loop and a vectorized loop, both of constant range (matmul: ..., k, yi
// (unrolled, 8), xi (vector, 32)). The block of the output those two span stays in registers
// across the reduction loops when they run below a register_tile mark (register_tiling.h): the
// index of the first reduction loop of that run, or -1 when the loops have another shape.
int register_block_start(const std::vector<StageLoop> &loops) {
    int n = int(loops.size());
    if (n < 3) return -1;
    const StageLoop &row = loops[size_t(n - 2)], &lanes = loops[size_t(n - 1)];
    if (!lanes.vector || !lanes.extent || !row.unroll || !row.extent || row.from_rdom || lanes.from_rdom) return -1;
    int first = n - 2;
    while (first > 0 && loops[size_t(first - 1)].from_rdom && !loops[size_t(first - 1)].parallel) --first;
    return first < n - 2 ? first : -1;
}

// The schedule of one stage computed at root: its loops as one band, then the marks.
// `register_block`: put a register blocking (register_block_start) under a register_tile mark;
// where the mark would be unsound (register_tile_unsound), the rows are unrolled by isl instead.
isl::schedule root_stage_schedule(const Model &m, const StageRef &st, const std::vector<StageLoop> &loops,
                                  bool register_block = true) {
    isl::schedule_node node = isl::schedule::from_domain(domain_of(m, st)).root().child(0);
    if (loops.empty()) return node.schedule();  // a zero-dimensional definition has no loops
    isl::schedule_node band = node.insert_partial_schedule(band_members(m, st, loops));
    const int n = int(loops.size());
    const int block = register_block ? register_block_start(loops) : -1;
    for (int k = 0; k < n; ++k)
        if (loops[size_t(k)].unroll && !(block >= 0 && k == n - 2)) band = unroll_member(band, k);  // the code generator unrolls the rows of a register tile
    // The vector loop is innermost: mark it first, then the register tile, then the parallel
    // loop above them.
    if (loops.back().vector) {
        isl::schedule_node mark = mark_member(band, n - 1, Mark::vector());
        band = n > 1 ? mark.parent() : mark;
    }
    if (block >= 0) {
        isl::schedule_node inner = block > 0 ? split_band(band, block).child(0) : band;
        isl::schedule_node mark = insert_mark(inner, Mark::register_tile(*loops[size_t(n - 2)].extent, int(*loops.back().extent)));
        if (!register_tile_unsound(m, mark).empty()) return root_stage_schedule(m, st, loops, false);
        band = block > 0 ? mark.parent() : mark;
    }
    for (int k = 0; k < n; ++k)
        if (loops[size_t(k)].parallel) {
            int count = k + 1 < n && loops[size_t(k + 1)].parallel ? 2 : 1;  // adjacent: collapsed
            band = mark_member(band, k, Mark::parallel(count), count);
            break;
        }
    return band.schedule();
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

std::string stage_text(const StageRef &st) {
    return st.definition == 0 ? "pure" : "update " + std::to_string(st.definition - 1);
}

// ---- compute_at / store_at ------------------------------------------------------------------

// Funcs computed inside the tiles of one consumer's loops: an overlapped group (overlapped_tiling.h)
// whose root is the consumer's pure definition.
struct AtGroup {
    FuncContents *root = nullptr;
    std::vector<FuncContents *> producers;  // in the model's order
    std::vector<int> stages;                // model statements, producers first, root last
    std::vector<int> tile_sizes, tile_order;
    std::optional<SlidingWindow> window;
    bool parallel = false, vector = false;
    std::string note;
};

std::string level_text(const FuncContents &f, const char *what, const FuncContents::LoopLevel &l) {
    std::shared_ptr<FuncContents> at = l.func.lock();
    return f.name + "." + what + "(" + (at ? at->name : std::string("?")) + ", " + l.loop + ")";
}

// A loop of a pure stage in terms of one dimension: d itself, d / T, or d % T.
struct LoopShape {
    enum class Kind { Plain, Outer, Inner, Other } kind = Kind::Other;
    std::string dim;
    int64_t factor = 1;
};

LoopShape shape_of(const StageLoop &l) {
    LoopShape s;
    const Expr &v = l.value;
    if (v->op == Op::Var) {
        s.kind = LoopShape::Kind::Plain;
        s.dim = v->name;
        return s;
    }
    if ((v->op == Op::Div || v->op == Op::Mod) && v->args[0]->op == Op::Var) {
        if (std::optional<int64_t> k = ir::as_const_int(v->args[1])) {
            s.kind = v->op == Op::Div ? LoopShape::Kind::Outer : LoopShape::Kind::Inner;
            s.dim = v->args[0]->name;
            s.factor = *k;
        }
    }
    return s;
}

[[noreturn]] void at_error(const FuncContents &lead, const std::string &written, const std::string &why) {
    user_error("Func ", lead.name, ": ", written, ": ", why);
}

// The overlapped groups the compute_at and store_at directives ask for, checked: each group's
// root tiled by its loops down to the store level, the producers read only inside the group.
std::vector<AtGroup> plan_at_groups(const Model &m) {
    std::map<FuncContents *, int> pure_statement;
    std::map<FuncContents *, bool> has_updates;
    for (size_t i = 0; i < m.statements.size(); ++i) {
        const Statement &s = m.statements[i];
        if (s.definition == 0) pure_statement[s.func] = int(i);
        else has_updates[s.func] = true;
    }
    std::vector<AtGroup> groups;
    std::map<FuncContents *, size_t> group_of_root;
    for (const auto &fp : m.graph.funcs) {
        FuncContents *f = fp.get();
        if (f->store_at.defined() && !f->compute_at.defined())
            user_error("Func ", f->name, ": ", level_text(*f, "store_at", f->store_at),
                       " needs a compute_at at that loop or inside it (compute_at(", f->store_at.loop, ") computes and stores there).");
        if (!f->compute_at.defined() || !pure_statement.count(f)) continue;  // nothing to compute
        std::shared_ptr<FuncContents> at = f->compute_at.func.lock();
        std::string written = level_text(*f, "compute_at", f->compute_at);
        if (!at || !pure_statement.count(at.get()))
            user_error("Func ", f->name, ": ", written, " names a Func this pipeline does not compute. Compute ", f->name,
                       " at a loop of one of its consumers.");
        if (at->compute_at.defined())
            user_error("Func ", f->name, ": ", written, ", but ", at->name, " is itself computed at ",
                       level_text(*at, "compute_at", at->compute_at),
                       ". Compute both at the outer Func's loop: they then share its tiles.");
        if (f->store_at.defined() && f->store_at.func.lock() != at)
            user_error("Func ", f->name, ": ", level_text(*f, "store_at", f->store_at), " and ", written,
                       " name different Funcs. Store and compute at loops of the same consumer.");
        if (has_updates.count(f))
            user_error("Func ", f->name, ": ", written, ": ", f->name,
                       " has update definitions, and only a pure Func is computed inside another's tiles. Compute it at root.");
        if (!f->pure.directives.empty())
            user_error("Func ", f->name, ": ", written, ": ", f->name, " also has loop directives (",
                       directive_text(*f, 0, f->pure.directives.front()), "); inside ", at->name,
                       "'s tiles its loops follow the tile's. Remove them.");
        auto [it, fresh] = group_of_root.emplace(at.get(), groups.size());
        if (fresh) {
            AtGroup g;
            g.root = at.get();
            groups.push_back(g);
        }
        AtGroup &g = groups[it->second];
        if (!g.producers.empty()) {
            const FuncContents &first = *g.producers.front();
            if (first.compute_at.loop != f->compute_at.loop || first.store_at.loop != f->store_at.loop)
                user_error("Func ", f->name, ": ", written, " and ", level_text(first, "compute_at", first.compute_at),
                           " use different loops of ", at->name, ". Funcs computed inside one Func's tiles share its loops.");
        }
        g.producers.push_back(f);
    }
    for (AtGroup &g : groups) {
        FuncContents &root = *g.root;
        const FuncContents &lead = *g.producers.front();
        std::string written = level_text(lead, "compute_at", lead.compute_at);
        auto fail = [&](const std::string &why) { at_error(lead, written, why); };
        // Every reader of a producer is in the group.
        std::set<const FuncContents *> members(g.producers.begin(), g.producers.end());
        members.insert(&root);
        for (const FuncContents *p : g.producers) {
            int array = m.array_of(p);
            for (const Statement &s : m.statements) {
                if (members.count(s.func)) continue;
                for (const Access &a : s.reads)
                    if (a.array == array)
                        fail("Func " + s.func->name + " also reads " + p->name +
                             ", outside the tiles of " + root.name + ". Compute " + p->name + " at root.");
            }
            if (m.arrays[size_t(array)].output >= 0) fail(p->name + " is an output of the pipeline. Compute it at root.");
        }
        // The root's loops down to the store level tile it.
        const Statement &rs = m.statements[size_t(pure_statement[&root])];
        std::vector<StageLoop> loops = stage_loops(root, 0);
        auto position = [&](const std::string &loop, const char *what) -> size_t {
            for (size_t i = 0; i < loops.size(); ++i)
                if (loops[i].name == loop) return i;
            std::string have;
            for (const StageLoop &l : loops) have += (have.empty() ? "" : ", ") + l.name;
            at_error(lead, written, std::string("Func ") + root.name + " has no loop " + loop + " to " + what +
                                        " at (its loops, outermost first: " + have + ").");
        };
        size_t compute = position(lead.compute_at.loop, "compute"), tile_end = compute;
        if (lead.store_at.defined()) {
            tile_end = position(lead.store_at.loop, "store");
            if (tile_end > compute) fail("the store_at loop " + lead.store_at.loop + " is inside the compute_at loop.");
        }
        std::map<std::string, int> dim_index;
        for (size_t j = 0; j < rs.dims.size(); ++j) dim_index[rs.dims[j]] = int(j);
        g.tile_sizes.assign(rs.dims.size(), 0);
        for (size_t i = 0; i <= tile_end; ++i) {
            LoopShape s = shape_of(loops[i]);
            if ((s.kind != LoopShape::Kind::Plain && s.kind != LoopShape::Kind::Outer) || !dim_index.count(s.dim) ||
                g.tile_sizes[size_t(dim_index[s.dim])] != 0)
                fail("the loops of " + root.name + " down to " + loops[tile_end].name +
                     " must be its dimensions or the outer loops of their splits, each once (" + loops[i].name +
                     " is not). Tile it: " + root.name + ".tile(x, y, xo, yo, xi, yi, 64, 32), then compute at xo.");
            g.tile_sizes[size_t(dim_index[s.dim])] = int(s.factor);
            g.tile_order.push_back(dim_index[s.dim]);
            if (loops[i].parallel && i > 1)
                fail("only the outermost tile loops of " + root.name + " may be parallel (the automatic scheduler's "
                     "choice: the outermost, or the outer two collapsed where both carry nothing).");
            if (loops[i].unroll || loops[i].vector) fail("a tile loop of " + root.name + " is unrolled or vectorized.");
        }
        for (size_t j = 0; j < rs.dims.size(); ++j)
            if (g.tile_sizes[j] == 0)
                fail("the loops of " + root.name + " down to " + loops[tile_end].name + " leave its dimension " + rs.dims[j] +
                     " whole, so the tile has no constant size. Split " + rs.dims[j] + " and compute at its outer loop.");
        // Inside the tile: the inner loops of the splits, in dimension order.
        std::vector<std::string> inner_expected;
        for (size_t j = 0; j < rs.dims.size(); ++j)
            if (g.tile_sizes[j] > 1) inner_expected.push_back(rs.dims[j]);
        std::vector<std::string> inner_got;
        for (size_t i = tile_end + 1; i < loops.size(); ++i) {
            LoopShape s = shape_of(loops[i]);
            if (s.kind != LoopShape::Kind::Inner) inner_got.push_back("?");
            else inner_got.push_back(s.dim);
            if (loops[i].parallel || loops[i].unroll || (loops[i].vector && i + 1 != loops.size()))
                fail("inside its tiles, " + root.name + "'s loops may only vectorize the innermost.");
        }
        if (inner_got != inner_expected)
            fail("inside its tiles, " + root.name +
                 "'s loops must be the inner loops of its splits in dimension order (as tile() makes them).");
        g.parallel = loops.front().parallel;
        g.vector = loops.back().vector && loops.size() > tile_end + 1;
        // The stages, producers first.
        for (const Statement &s : m.statements)
            if (s.definition == 0 && std::count(g.producers.begin(), g.producers.end(), s.func))
                g.stages.push_back(pure_statement[s.func]);
        g.stages.push_back(pure_statement[&root]);
        std::string producers;
        for (const FuncContents *p : g.producers) producers += (producers.empty() ? "" : ", ") + p->name;
        g.note = producers + " computed at " + root.name + "." + lead.compute_at.loop;
        if (compute != tile_end) {
            // Rows slide inside the tile: compute_at the row loop, store_at the tile loop.
            g.window = sliding_window(m, g.stages);
            LoopShape row = shape_of(loops[compute]);
            if (!g.window || compute != tile_end + 1 || row.kind != LoopShape::Kind::Inner ||
                dim_index[row.dim] != g.window->row_dim)
                fail("store_at(" + lead.store_at.loop + ") with compute_at(" + lead.compute_at.loop +
                     ") slides rows inside the tile, which needs the compute loop to be the first loop inside the tile, "
                     "over the rows, and every producer read at constant row offsets.");
            g.note += ", stored at " + root.name + "." + lead.store_at.loop + " (rows slide)";
        }
        g.note += " by directives; root loops (outermost first): " + loops_text(loops);
    }
    return groups;
}

// The automatic scheduler's share of a schedule with directives: the Funcs without any, grouped
// and scheduled as the automatic scheduler does (scheduler.h), each group at the place of its
// root (the group's last Func) among the stages with directives.
struct AutomaticPart {
    const ScheduleOptions *options = nullptr;
    std::vector<GroupPlan> plans;              // every Func's; a Func with directives alone in its own
    std::set<const FuncContents *> directed;   // the Funcs scheduled by their directives
    const Dependences *dependences = nullptr;  // the pipeline's, computed before scheduling
    bool folded = false;                       // set when a group stores a Func folded
};

// The directive schedule: each stage at root over its loops, except the stages of overlapped
// groups, which run as their group at the place of its root, and, when `automatic` is given,
// the Funcs without directives, which run in its groups. `groups` receives the Group records.
// Every group comes at the place of its last Func, after everything its Funcs read: a Func
// with directives read by a group's root but not by its producers may come between them in
// definition order, and the producers (merged only into their one consumer) read nothing that
// the root's place comes before.
isl::schedule directive_tree(std::shared_ptr<const Model> model, const std::vector<StageRef> &stages, const DirectivesOf &directives_of,
                             const std::vector<AtGroup> &at_groups, std::vector<Group> &groups,
                             AutomaticPart *automatic = nullptr) {
    const Model &m = *model;
    groups.clear();
    std::map<const FuncContents *, size_t> at_root, func_group;
    std::set<const FuncContents *> inside;
    for (size_t k = 0; k < at_groups.size(); ++k) {
        at_root[at_groups[k].root] = k;
        for (const FuncContents *p : at_groups[k].producers) inside.insert(p);
    }
    // The automatic groups by their root Func.
    std::map<const FuncContents *, const GroupPlan *> plan_of_root;
    if (automatic)
        for (const GroupPlan &plan : automatic->plans)
            if (!automatic->directed.count(plan.funcs.back())) plan_of_root[plan.funcs.back()] = &plan;
    std::set<const FuncContents *> placed;
    isl::schedule full;
    for (const StageRef &st : stages) {
        if (inside.count(st.func) && st.definition == 0) continue;  // in its consumer's tiles
        if (automatic && !automatic->directed.count(st.func)) {
            auto root = plan_of_root.find(st.func);
            // A producer of a group, or a later stage of a Func whose group is placed: done.
            if (root == plan_of_root.end() || !placed.insert(st.func).second) continue;
            std::optional<GroupSchedule> gs = schedule_group(m, *root->second, int(groups.size()), *automatic->options,
                                                             [&] { return automatic->dependences; });
            if (!gs) internal_error("the dependences were computed before scheduling the Funcs without directives");
            automatic->folded = automatic->folded || gs->folded;
            gs->group.note = "automatic (no directives): " + gs->group.note;
            groups.push_back(gs->group);
            full = in_sequence(full, gs->schedule);
            continue;
        }
        auto ag = at_root.find(st.func);
        if (st.definition == 0 && ag != at_root.end()) {
            const AtGroup &a = at_groups[ag->second];
            int k = int(groups.size());
            std::string why;
            auto ot = overlapped_tiling(m, k, a.stages, a.tile_sizes, a.window, a.parallel, a.vector, why, a.tile_order);
            if (!ot) {
                const FuncContents &lead = *a.producers.front();
                user_error("Func ", lead.name, ": ", level_text(lead, "compute_at", lead.compute_at), ": ", why);
            }
            Group g;
            g.name = "G" + std::to_string(k);
            g.kind = Group::Kind::OverlappedTiles;
            g.statements = a.stages;
            for (int s : a.stages) g.funcs.push_back(m.statements[size_t(s)].func);
            g.tile_sizes = ot->tile_sizes;
            g.note = a.note;
            groups.push_back(g);
            full = in_sequence(full, ot->schedule);
            continue;
        }
        std::vector<StageLoop> loops = stage_loops(*st.func, st.definition, directives_of(st));
        full = in_sequence(full, root_stage_schedule(m, st, loops));
        auto [it, fresh] = func_group.emplace(st.func, groups.size());
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
        g.note += " " + stage_text(st) + " loops (outermost first): " + (loops.empty() ? "none" : loops_text(loops)) + ";";
    }
    return full;
}

// The dependences between instances of one stage that has directives. Stages computed at root
// run one after the other in their original order, and a loop directive reorders (or marks) the
// loops of its own stage only, so every dependence between two stages, and every one inside a
// stage without directives, holds by construction: only these can be violated (the updates'
// carried ones; pure definitions have none), and checking them alone is what keeps the check
// cheap (fuzzer seeds 2093 and 5065: 1.4 s per check over every dependence, where a scattering
// update without directives had dependences isl composed slowly).
Dependences within_stages(const Model &m, const Dependences &d, const std::vector<StageRef> &stages) {
    std::vector<isl::union_set> domains;
    for (const StageRef &st : stages) {
        if (!own_directives(st).empty()) domains.push_back(domain_of(m, st));
    }
    auto keep = [&](const isl::union_map &u) {
        isl::union_map r = isl::union_map::empty(m.ctx());
        for (const isl::union_set &dom : domains) r = r.unite(u.intersect_domain(dom).intersect_range(dom));
        return r;
    };
    return Dependences{keep(d.flow), keep(d.anti), keep(d.output), d.computed};
}

} // namespace

Program schedule_from_directives(std::shared_ptr<const Model> model, const ScheduleOptions &options, bool automatic) {
    const Model &m = *model;
    if (m.statements.empty()) return sequential_program(model);
    const long max_operations = options.max_operations;
    const bool gpu = options.gpu;
    std::vector<StageRef> stages = stages_of(m);
    if (!gpu)
        for (const StageRef &st : stages)
            for (const LoopDirective &d : own_directives(st))
                if (d.kind == LoopDirective::Kind::GpuBlocks || d.kind == LoopDirective::Kind::GpuThreads)
                    user_error("Func ", st.func->name, ": the directive ", directive_text(*st.func, st.definition, d),
                               " maps loops to a GPU, but the pipeline is compiled for the host CPU. Compile it for "
                               "Target::cuda(sm) (or Target::cuda(sm).emulated()), or use parallel and vectorize.");
    std::vector<AtGroup> at_groups = plan_at_groups(m);
    Dependences d = compute_dependences(m, max_operations);
    if (!d.computed)
        user_error("Cannot check the schedule the directives describe: dependence analysis exceeded its operation quota (",
                   max_operations, "). Remove directives to let the automatic scheduler order the loops.");
    DirectivesOf own = [](const StageRef &st) { return own_directives(st); };
    std::optional<AutomaticPart> rest;
    if (automatic) {
        rest.emplace();
        rest->options = &options;
        for (const auto &f : m.graph.funcs)
            if (has_schedule_directives(*f)) rest->directed.insert(f.get());
        for (const AtGroup &a : at_groups) rest->directed.insert(a.root);
        rest->plans = plan_groups(m, options, rest->directed);
        rest->dependences = &d;
    }
    std::vector<Group> groups;
    isl::schedule tree = directive_tree(model, stages, own, at_groups, groups, rest ? &*rest : nullptr);
    Program p = program_from_tree(model, tree, groups, rest.has_value() ? AstQuota{} : kUnboundedAtomicAst);
    if (!p.nest) {
        // (Only with the automatic groups is the AST bounded, as the automatic scheduler's is:
        // over the quota, the Funcs without directives run at root instead.)
        Program q = schedule_from_directives(model, options, false);
        for (Group &g : q.groups)
            g.note += " (the automatic schedule of the Funcs without directives exceeded the AST generator's quota)";
        return q;
    }
    p.scheduled_with = options;
    const bool folded = rest && rest->folded;
    // The check is bounded like every isl analysis here: dependences through modular
    // predicates and scattered updates took isl 30 s (fuzzer seed 2093 with --directives).
    const Dependences inside = within_stages(m, d, stages);
    // The whole proof (the check, then the search for the culprit) shares one budget of isl
    // operations: half for the check, an eighth for each step of the search. A step over its
    // share ends the search, and the violation is reported without naming the directive.
    auto checked = [&](const Program &q, bool all_stages_at_root, long quota) -> std::optional<Legality> {
        Legality r;
        if (!within_quota(m.ctx(), quota, [&] { r = check_legality(q, all_stages_at_root ? inside : d, false); }))
            return std::nullopt;
        return r;
    };
    std::optional<Legality> whole = checked(p, at_groups.empty() && !folded, max_operations / 2);
    if (folded && (!whole || !whole->legal)) {
        // A folded Func's ring is checked here, as in the automatic schedule: without folding,
        // the Funcs without directives are legal by construction.
        ScheduleOptions unfolded = options;
        unfolded.storage_folding = false;
        return schedule_from_directives(model, unfolded, automatic);
    }
    if (!whole)
        user_error("Cannot check the schedule the directives describe: proving that it respects the dependences "
                   "exceeded isl's operation quota (",
                   max_operations / 2, "). Remove directives (the automatic scheduler needs no proof), or simplify the "
                   "index expressions and RDom predicates.");
    const Legality &l = *whole;
    if (l.legal) return p;
    // Find a loop directive whose addition makes the schedule illegal (every Func at root): in
    // the directives in order (stage by stage, each stage's as written), a prefix that is legal
    // followed by one that is not. The empty prefix is the original order, legal by
    // construction; a binary search needs a logarithmic number of checks.
    std::vector<std::pair<size_t, size_t>> flat;  // (stage, directive)
    for (size_t k = 0; k < stages.size(); ++k)
        for (size_t j = 0; j < own_directives(stages[k]).size(); ++j) flat.emplace_back(k, j);
    // The program of the first `count` directives, every Func at root.
    auto prefix_program = [&](size_t count) {
        DirectivesOf prefix = [&](const StageRef &other) {
            std::vector<LoopDirective> ds;
            for (size_t q = 0; q < count; ++q)
                if (flat[q].first == size_t(other.index)) ds.push_back(own_directives(other)[flat[q].second]);
            return ds;
        };
        std::vector<Group> g;
        return program_from_tree(model, directive_tree(model, stages, prefix, {}, g), g);
    };
    // (Without compute_at groups, the full program is that of every directive.)
    const long step_quota = max_operations / 8;
    auto step_legal = [&](size_t count) -> std::optional<bool> {
        std::optional<Legality> r = checked(prefix_program(count), true, step_quota);
        if (!r) return std::nullopt;
        return r->legal;
    };
    std::optional<bool> loops_alone = at_groups.empty() ? std::optional<bool>(false) : step_legal(flat.size());
    if (!flat.empty() && loops_alone && !*loops_alone) {
        size_t lo = 0, hi = flat.size();  // prefix lo is legal, prefix hi is not
        bool found = true;
        while (hi - lo > 1 && found) {
            size_t mid = (lo + hi) / 2;
            std::optional<bool> legal = step_legal(mid);
            if (!legal) found = false;
            else (*legal ? lo : hi) = mid;
        }
        if (found) {
            const StageRef &st = stages[flat[hi - 1].first];
            std::optional<Legality> lq =
                hi == flat.size() && at_groups.empty() ? whole : checked(prefix_program(hi), true, step_quota);
            if (lq)
                user_error("Func ", st.func->name, ": the directive ",
                           directive_text(*st.func, st.definition, own_directives(st)[flat[hi - 1].second]),
                           " is illegal. ", lq->violation);
        }
        user_error("The schedule the directives describe is illegal (which directive makes it so could not be found "
                   "within isl's operation quota). ",
                   l.violation);
    }
    if (!at_groups.empty()) {
        const FuncContents &lead = *at_groups.front().producers.front();
        // (A producer whose tiles' footprints do not cover its whole box, a diagonal read, is
        // legal: the legality check asks of a scratchpad only what its tiles read.)
        user_error("Func ", lead.name, ": the directive ", level_text(lead, "compute_at", lead.compute_at),
                   " (or another compute_at or store_at) is illegal. ", l.violation);
    }
    user_error("The schedule the directives describe is illegal. ", l.violation);
}

} // namespace tessera::poly
