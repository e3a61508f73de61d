#include "tessera/poly/scheduler.h"

#include <algorithm>

#include <isl/schedule.h>

#include "tessera/poly/affine_schedule.h"
#include "tessera/poly/gpu_mapping.h"
#include "tessera/poly/staged_inputs.h"
#include "tessera/poly/grouping.h"
#include "tessera/poly/legality.h"
#include "tessera/poly/overlapped_tiling.h"
#include "tessera/poly/ring_initialization.h"
#include "tessera/poly/storage_folding.h"
#include "tessera/poly/tree_transform.h"

namespace tessera::poly {

const char *fusion_name(Fusion f) {
    switch (f) {
    case Fusion::None: return "none";
    case Fusion::Smart: return "smart";
    case Fusion::Max: return "max";
    }
    return "?";
}

Fusion parse_fusion(const std::string &s) {
    if (s == "none") return Fusion::None;
    if (s == "smart") return Fusion::Smart;
    if (s == "max") return Fusion::Max;
    user_error("Schedule option 'fusion' is '", s, "'; use none, smart or max.");
}

namespace {
// isl operations for the separated AST of a schedule without its dead instances; over them the
// schedule is generated with the dead instances (see schedule_groups).
constexpr long kDeadInstanceAstOperations = 300000;

// `ring_first`: as schedule_group's, for every group.
Program schedule_groups(std::shared_ptr<const Model> model, const ScheduleOptions &o, bool ring_first = true);
} // namespace

std::optional<GroupSchedule> schedule_group(const Model &m, const GroupPlan &plan, int index, const ScheduleOptions &o,
                                            const std::function<const Dependences *()> &dependences, bool ring_first) {
    GroupSchedule r;
    Group &g = r.group;
    // (What split the pipeline after this group comes last in its note.)
    auto with_split_reason = [&](GroupSchedule &done) {
        if (!plan.not_merged.empty())
            done.group.note += (done.group.note.empty() ? "" : "; ") + std::string("not merged into its consumer: ") + plan.not_merged;
        return done;
    };
    g.statements = plan.statements;
    g.funcs = plan.funcs;
    g.note = plan.note;
    g.name = "G" + std::to_string(index);
    if (plan.overlapped) {
        std::string why;
        auto ot = overlapped_tiling(m, index, plan.statements, plan.tile_sizes, plan.window, o.parallel, true, why);
        if (ot) {
            r.schedule = ot->schedule;
            g.kind = Group::Kind::OverlappedTiles;
            g.tile_sizes = ot->tile_sizes;
            return with_split_reason(r);
        }
        g.note = "overlapped tiling does not apply: " + why;
    }
    std::vector<StorageFold> folds;
    // (Under the scheduler's quota like every isl analysis here; out of it, nothing folds.)
    if (o.storage_folding &&
        !within_quota(m.ctx(), o.max_operations, [&] { folds = storage_fold_candidates(m, plan.statements); }))
        folds.clear();
    if (!folds.empty()) {
        // A Func stepped along a dimension keeps only its last planes: its pure definition
        // must then run inside the stepping loop, just before the planes it initializes are
        // needed, so the group is scheduled as a whole under the ring's extra order (unless it
        // runs on the first planes only, below).
        const Dependences *deps = dependences();
        if (!deps) return std::nullopt;
        isl::union_map ring_order = fold_dependences(m, folds);
        // A folded Func's pure definition on the ring's first planes only (ring_initialization.h):
        // the group is scheduled without it (isl then fuses the updates alone, without the
        // ring's order back to the pure definition: heat-3d's group 134 -> 63 ms), and those
        // planes run before it.
        std::vector<int> statements = plan.statements;
        isl::union_set first_planes = isl::union_set::empty(m.ctx());
        std::string ring_note;
        for (const StorageFold &f : folds) {
            if (!ring_first || o.gpu) break;
            RingInitialization ri = ring_initialization(m, f, o.max_operations);
            const std::string &name = m.arrays[size_t(f.array)].func->name;
            ring_note += detail::str_cat("; the pure definition of ", name, " runs ",
                                         ri.why_not.empty() ? "on the ring's first planes only, before its updates"
                                                            : "on every plane: " + ri.why_not);
            if (!ri.why_not.empty()) continue;
            first_planes = first_planes.unite(ri.first_planes);
            std::vector<int> others;
            for (int st : statements)
                if (m.statements[size_t(st)].definition > 0 || m.statements[size_t(st)].write.array != f.array) others.push_back(st);
            statements = others;
        }
        AffineGroupSchedule a = affine_group_schedule(m, statements, *deps, o, &ring_order);
        if (a.scheduled) {
            g.kind = Group::Kind::Affine;
            if (!a.tile_sizes.empty()) g.tile_sizes = a.tile_sizes.back();
            r.ring_first = !first_planes.is_empty();
            if (r.ring_first) a.schedule = initialize_ring_first(first_planes, a.schedule);
            isl::schedule_node top = a.schedule.root().child(0);
            std::string what;
            for (const StorageFold &f : folds) {
                top = insert_mark(top, fold_mark(m, f));
                const Array &arr = m.arrays[size_t(f.array)];
                what += detail::str_cat(what.empty() ? "" : ", ", arr.func->name, " along dimension ", f.dimension,
                                        " to ", f.planes, " planes");
            }
            r.schedule = top.schedule();
            g.note = "storage folded: " + what + (a.note.empty() ? "" : "; " + a.note) + ring_note;
            r.folded = true;
            return with_split_reason(r);
        }
    }
    // A Func's pure definition runs before its updates: isl would otherwise fuse the
    // initialization into the updates' (possibly skewed) band for no gain.
    const Dependences *deps = dependences();
    if (!deps) return std::nullopt;
    std::vector<int> pure, updates;
    for (int s : plan.statements) (m.statements[size_t(s)].definition == 0 ? pure : updates).push_back(s);
    g.kind = Group::Kind::Affine;
    for (const std::vector<int> *part : {&pure, &updates}) {
        if (part->empty()) continue;
        AffineGroupSchedule a = affine_group_schedule(m, *part, *deps, o);
        r.schedule = in_sequence(r.schedule, a.schedule);
        if (!a.tile_sizes.empty()) g.tile_sizes = a.tile_sizes.back();
        // (After the reason the group is not overlapped-tiled, when it was meant to be.)
        if (!a.note.empty()) g.note = g.note.empty() ? a.note : g.note + "; " + a.note;
    }
    if (g.note.empty()) g.note = "isl scheduler";
    return with_split_reason(r);
}

Program schedule_model(std::shared_ptr<const Model> model, const ScheduleOptions &o) {
    Program p = schedule_groups(model, o);
    // A staged input's copy stored whole, because the Funcs reading it landed in different
    // groups, would move the input through global memory twice: the pipeline is scheduled again
    // without staging, and the first group's note says why.
    if (std::string why = unstaged_copy(p); !why.empty()) {
        Stopwatch watch;
        std::shared_ptr<const Model> plain = build_model(model->pipeline, "", false, o.ast_threads);
        double model_ms = watch.lap();
        p = schedule_groups(plain, o);
        p.timings.insert(p.timings.begin(), {"model (inputs not staged)", model_ms});
        if (!p.groups.empty()) p.groups[0].note = "inputs not staged in shared memory (" + why + "); " + p.groups[0].note;
    }
    // (A fallback that rescheduled with other options, such as without storage folding, keeps
    // those.)
    if (!p.scheduled_with) p.scheduled_with = o;
    // The models' helper threads (build_model) are done before the schedule is returned, even
    // where it never asked for the dead instances: none runs beside what is compiled from it.
    model->dead();
    if (p.model) p.model->dead();
    return p;
}

namespace {
// The automatic schedule: groups, their schedules, storage and the AST.
Program schedule_groups(std::shared_ptr<const Model> model, const ScheduleOptions &o, bool ring_first) {
    const Model &m = *model;
    Stopwatch watch;
    std::vector<std::pair<std::string, double>> timings;
    if (m.statements.empty()) return sequential_program(model);
    std::vector<GroupPlan> plans = plan_groups(m, o);
    timings.emplace_back("grouping", watch.lap());
    // Dependences drive isl's scheduler and the verification; overlapped-tiled groups of pure
    // stages are correct by construction and need none. They are computed when first needed:
    // a group planned for overlapped tiling may turn out not to fit it (below) and go to isl's
    // scheduler, which without them would see independent statements and reorder them freely.
    isl::union_map none = isl::union_map::empty(m.ctx());
    Dependences deps{none, none, none, true};
    bool have_deps = false;
    auto need_deps = [&] {
        if (have_deps) return true;
        deps = compute_dependences(m, o.max_operations);
        timings.emplace_back("dependences", watch.lap());
        have_deps = true;
        return deps.computed;
    };
    auto sequential = [&](const std::string &why) {
        Program p = sequential_program(model);
        if (o.gpu) p = program_from_tree(model, map_to_gpu(m, p.schedule), p.groups);
        p.groups[0].note = why + "; the pipeline runs in its original sequential order" +
                           (o.gpu ? " (on a GPU, in kernels of one block)" : "");
        p.timings = timings;
        p.timings.emplace_back("storage and AST", watch.lap());
        return p;
    };
    const std::string deps_over_quota = "dependence analysis exceeded its operation quota (max_operations)";
    if (o.verify && !need_deps()) return sequential(deps_over_quota);
    std::vector<Group> groups;
    isl::schedule full;  // owned: the early returns below (dependences over their quota) must not leak it
    bool folded = false;      // some group stores a Func folded (verified below)
    bool ring_applied = false;  // and runs its pure definition on the ring's first planes only
    auto dependences = [&]() -> const Dependences * { return need_deps() ? &deps : nullptr; };
    for (size_t k = 0; k < plans.size(); ++k) {
        std::optional<GroupSchedule> gs = schedule_group(m, plans[k], int(k), o, dependences, ring_first);
        if (!gs) return sequential(deps_over_quota);
        folded = folded || gs->folded;
        ring_applied = ring_applied || gs->ring_first;
        full = in_sequence(full, gs->schedule);
        groups.push_back(gs->group);
    }
    isl::schedule tree = full;
    if (o.gpu) {
        tree = map_to_gpu(m, tree);
        // The schedule says which groups run as one block of a kernel, for want of parallelism.
        std::set<std::string> single = single_block_statements(tree);
        for (Group &g : groups)
            for (int st : g.statements)
                if (single.count(m.statements[size_t(st)].name)) {
                    g.note += (g.note.empty() ? "" : "; ") +
                              std::string("GPU: runs in a kernel of one block (no parallel loop around ") +
                              m.statements[size_t(st)].name + ")";
                    break;
                }
    }
    timings.emplace_back("group schedules", watch.lap());
    Program p;
    // The dead instances (dead_instances.h) are left out where isl's AST generator separates the
    // loops within kDeadInstanceAstOperations (a plane's loop runs the update alone, unguarded),
    // unless a ring's first planes already run alone. In a skewed time-tiled band the pure
    // planes shrunk to their borders split the tiles into many more pieces (jacobi-2d: 9 s of
    // AST, and slower loops): there the dead instances run.
    if (!ring_applied && !m.dead().is_empty()) {
        isl::union_set live = isl::manage(isl_union_set_subtract(isl_schedule_get_domain(tree.get()), m.dead().copy()));
        isl::schedule without_dead = isl::manage(isl_schedule_intersect_domain(tree.copy(), live.release()));
        p = program_from_tree(model, separate_vector_loops(without_dead), groups, AstQuota{kDeadInstanceAstOperations, -1, o.ast_threads});
    }
    if (!p.nest) p = program_from_tree(model, tree, groups, AstQuota{kAstOperations, kAtomicAstOperations, o.ast_threads});
    timings.emplace_back("storage and AST", watch.lap());
    if (!p.nest)
        return sequential("isl's AST generator exceeded its operation quota on this schedule, separated and atomic (" +
                          std::to_string(kAstOperations) + " and " + std::to_string(kAtomicAstOperations) +
                          " operations, " + std::to_string(int(kAstAttemptCpuMs / 1000)) + " s of CPU time each)");
    if (o.verify || folded) {
        // The check, and what replaces an illegal schedule.
        auto check = [model, o, deps, ring_applied, folded](const Program &checked) -> std::shared_ptr<const Program> {
            Legality l = check_legality(checked, deps, false);  // (the GPU mapping is correct by construction)
            ScheduleOptions again = o;
            again.defer_legality = false;  // (the fallback comes back checked)
            if (!l.legal && ring_applied) {
                // Only this check confirms that a ring's first planes precede the reads they now
                // serve: where they do not, scheduled again with every plane initialized.
                Program q = schedule_groups(model, again, false);
                if (!q.scheduled_with) q.scheduled_with = again;
                for (Group &qg : q.groups)
                    if (qg.note.find("storage folded") != std::string::npos)
                        qg.note += "; the pure definition runs on every plane: its first planes alone would not be legal (" + l.violation + ")";
                return std::make_shared<const Program>(std::move(q));
            }
            if (!l.legal && folded) {
                // The fold's preconditions were checked on the model (storage_fold_candidates) and
                // isl scheduled under its order; this check is the net under both. Without folding
                // the schedule is correct by construction.
                again.storage_folding = false;
                Program q = schedule_model(model, again);
                for (Group &qg : q.groups)
                    qg.note += (qg.note.empty() ? "" : "; ") + std::string("storage not folded: ") + l.violation;
                return std::make_shared<const Program>(std::move(q));
            }
            if (!l.legal) internal_error("the automatic schedule is illegal: ", l.violation);
            return nullptr;
        };
        if (o.defer_legality) {
            p.deferred_legality = check;
        } else {
            if (std::shared_ptr<const Program> q = check(p)) return *q;
            timings.emplace_back("legality check", watch.lap());
        }
    }
    p.timings = timings;
    return p;
}
} // namespace

Program schedule_pipeline(const Pipeline &pl, const ScheduleOptions &o) {
    Stopwatch watch;
    std::shared_ptr<const Model> m = build_model(pl, "", o.gpu && o.gpu_stage_inputs, o.ast_threads);
    double model_ms = watch.lap();
    Program p = schedule_model(m, o);
    p.timings.insert(p.timings.begin(), {"model", model_ms});
    return p;
}

} // namespace tessera::poly
