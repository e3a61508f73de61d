// Legality of a schedule. Every check maps statement instances to points of the schedule's
// single time space and intersects with the lexicographic order there, which keeps the isl work
// per dependence relation small.
#include "tessera/poly/legality.h"

#include "tessera/poly/gpu_mapping.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <isl/aff.h>
#include <isl/flow.h>
#include <isl/local_space.h>
#include <isl/map.h>
#include <isl/schedule.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include "tessera/poly/register_tiling.h"
#include "tessera/poly/ring_initialization.h"
#include "tessera/poly/storage_folding.h"
#include "tessera/poly/tree_transform.h"

namespace tessera::poly {
namespace {

// isl operations for the analysis of each ring's first planes (ring_initialization.h).
constexpr long kRingOperations = 200000;

std::string coords(isl_point *p, isl_dim_type type, int first, int n) {
    std::ostringstream s;
    s << "[";
    for (int i = 0; i < n; ++i) {
        isl_val *v = isl_point_get_coordinate_val(p, type, first + i);
        s << (i ? ", " : "") << isl_val_get_num_si(v);
        isl_val_free(v);
    }
    s << "]";
    return s.str();
}

// How a violation quotes one dependence (a map between statement instances): the distance
// between the two instances ("[1, -1]"), and one pair of them ("S_f_1[1, 1]", "S_f_1[2, 0]").
struct QuotedDependence {
    std::string source, sink;  // tuple names
    std::string distance;      // empty when the two tuples differ in dimension
    std::string source_point, sink_point;
};

QuotedDependence quote(const isl::map &dep) {
    QuotedDependence q;
    q.source = isl_map_get_tuple_name(dep.get(), isl_dim_in);
    q.sink = isl_map_get_tuple_name(dep.get(), isl_dim_out);
    int n_in = int(isl_map_dim(dep.get(), isl_dim_in)), n_out = int(isl_map_dim(dep.get(), isl_dim_out));
    if (n_in == n_out) {
        isl_point *dp = isl_set_sample_point(isl_map_deltas(dep.copy()));
        q.distance = coords(dp, isl_dim_set, 0, n_in);
        isl_point_free(dp);
    }
    isl_point *pt = isl_set_sample_point(isl_map_wrap(dep.copy()));
    q.source_point = q.source + coords(pt, isl_dim_set, 0, n_in);
    q.sink_point = q.sink + coords(pt, isl_dim_set, n_in, n_out);
    isl_point_free(pt);
    return q;
}

// The map from one executed copy to the model instance it computes.
isl::map copy_to_instance(const Program &p, const ExecStatement &e) {
    const Statement &s = p.model->statements[size_t(e.statement)];
    isl_map *m = isl_map_identity(isl_space_map_from_set(isl_set_get_space(e.domain.get())));
    m = isl_map_project_out(m, isl_dim_out, 0, unsigned(e.tiles));
    m = isl_map_set_tuple_name(m, isl_dim_out, s.name.c_str());
    return isl::manage(isl_map_intersect_domain(m, e.domain.copy()));
}

// The schedule as a map into one time space (shorter ranges padded with zeros).
isl::union_map time_map(const Program &p, int &time_dims) {
    std::vector<isl::map> maps = maps_of(p.schedule.map());
    time_dims = 0;
    for (const isl::map &m : maps) time_dims = std::max(time_dims, int(isl_map_dim(m.get(), isl_dim_out)));
    isl::union_map u = isl::union_map::empty(p.model->ctx());
    for (const isl::map &m : maps) {
        int n = int(isl_map_dim(m.get(), isl_dim_out));
        isl_map *x = isl_map_add_dims(m.copy(), isl_dim_out, unsigned(time_dims - n));
        for (int i = n; i < time_dims; ++i) x = isl_map_fix_si(x, isl_dim_out, unsigned(i), 0);
        u = u.unite(isl::union_map(isl::manage(isl_map_reset_tuple_id(x, isl_dim_out))));
    }
    return u;
}

// { a -> b : a >=lex b } on the time space.
isl::union_map not_before(const isl::union_map &time, int time_dims) {
    isl::union_set range = time.range();
    isl_space *params = isl_union_set_get_space(range.get());
    isl_space *sp = isl_space_set_from_params(params);
    sp = isl_space_add_dims(sp, isl_dim_set, unsigned(time_dims));
    return isl::union_map(isl::manage(isl_map_lex_ge(sp)));
}

struct Checker {
    const Program &p;
    const Model &m;
    isl::union_map time;         // exec copy -> time point
    isl::union_map to_instance;  // exec copy -> the model instance it computes
    isl::union_map inst_time;    // model instance -> time points of its copies
    isl::union_map ge;         // time -> time, not strictly later
    isl::union_map to_copies;  // model instance -> its executed copies
    isl::multi_union_pw_aff time_at;  // the time map as a function (null without time dimensions)
    Legality r;

    // Instances a schedule need not run: dead ones and, in rings, the pure planes past the
    // first whose values the ring holds (ring_initialization.h).
    isl::union_set may_be_left_out;
    // The rings' first planes -> the reads of their Funcs, where a schedule left out later
    // planes (ring_initialization.h).
    isl::union_map ring_first_before_reads;

    explicit Checker(const Program &prog) : p(prog), m(*prog.model) {
        int dims = 0;
        time = time_map(p, dims);
        to_instance = isl::union_map::empty(m.ctx());
        for (const ExecStatement &e : p.statements) to_instance = to_instance.unite(isl::union_map(copy_to_instance(p, e)));
        inst_time = to_instance.reverse().apply_range(time);
        ge = not_before(time, dims);
        to_copies = to_instance.reverse();
        if (dims > 0) time_at = isl::manage(isl_multi_union_pw_aff_from_union_map(time.copy()));
        may_be_left_out = m.dead();
        ring_first_before_reads = isl::union_map::empty(m.ctx());
        isl::union_set executed = to_instance.range();
        for (const Storage &st : p.storage)
            for (size_t k = 0; st.kind == Storage::Kind::Buffer && k < st.fold.size(); ++k) {
                if (st.fold[k] <= 0) continue;
                // (Analysed only where the schedule leaves out more than dead instances.)
                isl::union_set pure = isl::union_set::empty(m.ctx());
                for (const Statement &s : m.statements)
                    if (s.definition == 0 && s.write.array == st.array) pure = pure.unite(isl::union_set(s.domain));
                if (pure.subtract(executed).is_subset(may_be_left_out)) continue;
                RingInitialization ri = ring_initialization(m, StorageFold{st.array, int(k), st.fold[k]}, kRingOperations);
                if (ri.left_out.is_empty()) continue;
                may_be_left_out = may_be_left_out.unite(ri.left_out);
                isl::union_set readers = isl::union_set::empty(m.ctx());
                for (const Statement &s : m.statements)
                    for (const Access &acc : s.reads)
                        if (acc.array == st.array) readers = readers.unite(isl::union_set(s.domain));
                ring_first_before_reads = ring_first_before_reads.unite(
                    isl::manage(isl_union_map_from_domain_and_range(ri.first_planes.copy(), readers.release())));
            }
    }

    // Whether some pair of executed copies in `copy_deps` runs the second no later than the first.
    // Compared at the time map as a function of the copies (isl's lex_ge_at), which keeps the
    // copies' coordinates: composing the pairs with the time map instead projects them out, and
    // with tiled, skewed time maps that took most of the check (heat-3d's folded planes: 145 ms
    // of the order check against 62 ms this way).
    bool copies_not_in_order(const isl::union_map &copy_deps) const {
        if (copy_deps.is_empty()) return false;
        if (time_at.is_null()) return true;
        return !isl::manage(isl_union_map_lex_ge_at_multi_union_pw_aff(copy_deps.copy(), time_at.copy())).is_empty();
    }

    void fail(const std::string &s) {
        if (r.legal) {
            r.legal = false;
            r.violation = s;
        }
    }

    // Pairs of instances ordered by `deps` must have every copy of the source before every copy
    // of the sink.
    void check_order(const isl::union_map &deps, const char *kind, const char *meaning) {
        if (!r.legal || deps.is_empty()) return;
        if (!copies_not_in_order(deps.apply_domain(to_copies).apply_range(to_copies))) return;
        for (const isl::map &d : maps_of(deps)) {
            isl::union_map ud(d);
            isl::union_map bad = ud.apply_domain(inst_time).apply_range(inst_time).intersect(ge);
            if (bad.is_empty()) continue;
            // Back from time points to an example pair of instances.
            isl::union_map inst =
                ud.intersect(isl::manage(isl_union_map_from_domain_and_range(bad.domain().apply(inst_time.reverse()).release(),
                                                                             bad.range().apply(inst_time.reverse()).release())));
            std::vector<isl::map> examples = maps_of(inst.is_empty() ? ud : inst);
            QuotedDependence q = quote(examples.front());
            std::ostringstream s;
            s << "The schedule violates the " << kind << " dependence from " << q.source << " to " << q.sink;
            if (!q.distance.empty()) s << " (distance " << q.distance << ")";
            s << ": " << q.source_point << " must run before " << q.sink_point << " (" << meaning
              << "), but the schedule runs it after.";
            fail(s.str());
            return;
        }
        fail(std::string("The schedule violates a ") + kind + " dependence.");
    }

    // Every model instance has a copy, but for dead ones (dead_instances.h), which may have
    // none, and those of Funcs in per-tile scratchpads; those writing full buffers or outputs
    // have exactly one. A scratchpad's Func is computed where its group's tiles read it, which
    // check_tiles verifies: its region, the box hull of what all its consumers' regions read,
    // can hold elements no tile reads (pyramid_blend's gauss_mask_2_down_x, read through a
    // down-sampled and an up-sampled consumer).
    void check_coverage() {
        for (size_t si = 0; si < m.statements.size(); ++si) {
            const Statement &s = m.statements[si];
            if (!r.legal) return;
            int st = p.storage_of_array[size_t(m.array_of(s.func))];
            if (p.storage[size_t(st)].kind == Storage::Kind::Scratch) continue;
            isl::set required = s.domain.subtract(may_be_left_out.extract_set(s.domain.space()));
            // A statement executed as itself by one copy (outside overlapped groups): its
            // instances are covered if the copy's domain holds them, and computed once if the
            // schedule maps each to one time point. Checked on the schedule's own map, without
            // composing instances and time (which took isl seconds on a scattering update,
            // fuzzer seed 2093 with --directives).
            const ExecStatement *only = nullptr;
            int copies = 0;
            for (const ExecStatement &e : p.statements)
                if (e.statement == int(si)) ++copies, only = &e;
            if (copies == 1 && only->group < 0 && only->tiles == 0) {
                // (An instance of the tree's domain that no filter passes has no time point.)
                isl::union_map when = time.intersect_domain(isl::union_set(only->domain));
                if (!required.is_subset(only->domain) || !isl::union_set(required).is_subset(when.domain()))
                    fail("The schedule does not compute every instance of " + s.name + " (Func " + s.func->name + ").");
                else if (!when.is_single_valued())
                    fail("The schedule computes some instances of " + s.name + " (Func " + s.func->name +
                         ") more than once, but they write a full buffer; only per-tile scratchpads may be recomputed.");
                continue;
            }
            isl::union_map mine = inst_time.intersect_domain(isl::union_set(s.domain));
            if (!isl::union_set(required).is_subset(mine.domain())) {
                fail("The schedule does not compute every instance of " + s.name + " (Func " + s.func->name + ").");
                return;
            }
            if (!mine.is_single_valued())
                fail("The schedule computes some instances of " + s.name + " (Func " + s.func->name +
                     ") more than once, but they write a full buffer; only per-tile scratchpads may be recomputed.");
        }
    }

    // A scratchpad folded into a ring of rows, read by `reads` and written by `writes` (copy ->
    // [n_tile tile coordinates, element]): the last write of each slot a read finds must be
    // that of the element itself, so no row sharing its slot overwrote it since.
    void check_ring(const Storage &st, const Array &arr, unsigned n_tile, const isl::union_map &writes,
                    const isl::union_map &reads) {
        isl::union_map slot = ring_slots(m, arr, st.fold, n_tile);
        isl::union_map slot_writes = writes.apply_range(slot);
        const std::string &name = arr.func->name;
        // No reader may need two elements that share a slot at once.
        isl::union_map same_slot = slot.apply_range(slot.reverse()).subtract(slot.domain().identity());
        if (!reads.apply_range(same_slot).intersect(reads).is_empty()) {
            fail("The schedule overwrites a row of " + name +
                 " in its ring (fold) before a stage reads it: a stage reads more rows than the fold keeps.");
            return;
        }
        // One analysis over all reads of the ring, on the statements that access it only.
        // Since a reader's elements occupy distinct slots, the last writer of a slot it reads
        // must have written the element it wants there, i.e. one of its elements.
        isl::union_set accessing = writes.domain().unite(reads.domain());
        isl::schedule local = isl::manage(isl_schedule_intersect_domain(p.schedule.copy(), accessing.copy()));
        isl::union_access_info info(reads.apply_range(slot));
        isl::union_flow flow = info.set_must_source(slot_writes).set_schedule(local).compute_flow();
        if (!flow.may_no_source().is_empty()) {
            fail("The schedule lets a stage of its overlapped group read " + name +
                 " before the tile computes it (the flow dependence inside the tile is not respected).");
            return;
        }
        isl::union_map right = writes.apply_range(reads.reverse());  // writer -> reader of the element
        if (!flow.must_dependence().unite(flow.may_dependence()).subtract(right).is_empty())
            fail("The schedule overwrites a row of " + name +
                 " in its ring (fold) before a stage reads it: the fold keeps too few rows for the schedule.");
    }

    // Full buffers folded along a dimension (storage_folding.h): no statement instance may read
    // two elements that share a slot. (That each slot holds the plane a read wants is the order
    // of fold_dependences, checked like a dependence.)
    void check_folded_buffers() {
        for (const Storage &st : p.storage) {
            if (!r.legal || st.kind != Storage::Kind::Buffer || !st.folded()) continue;
            const Array &arr = m.arrays[size_t(st.array)];
            isl::union_map reads = isl::union_map::empty(m.ctx());
            for (const Statement &s : m.statements)
                for (const Access &a : s.reads)
                    if (a.array == st.array) reads = reads.unite(isl::union_map(a.relation.intersect_domain(s.domain)));
            isl::union_map slot = ring_slots(m, arr, st.fold);
            isl::union_map same_slot = slot.apply_range(slot.reverse()).subtract(slot.domain().identity());
            if (!reads.apply_range(same_slot).intersect(reads).is_empty()) {
                fail("The schedule folds " + arr.func->name +
                     " into fewer planes than a statement reads at once: one read would find another plane's value in its slot.");
                return;
            }
            for (size_t k = 0; k < st.fold.size(); ++k) {
                if (st.fold[k] <= 0) continue;
                std::string why = fold_reader_violation(m, StorageFold{st.array, int(k), st.fold[k]});
                if (!why.empty()) {
                    fail("The schedule folds " + arr.func->name + " into a ring of " + std::to_string(st.fold[k]) +
                         " planes, but " + why + ".");
                    return;
                }
            }
        }
    }

    // The statements that read a folded Func without defining it must run after all of its
    // definitions (they read the final ring).
    void check_fold_readers_last() {
        for (const Storage &st : p.storage) {
            if (!r.legal || st.kind != Storage::Kind::Buffer || !st.folded()) continue;
            const FuncContents *f = m.arrays[size_t(st.array)].func;
            isl::union_set defs = isl::union_set::empty(m.ctx()), readers = defs;
            for (const Statement &s : m.statements) {
                if (s.func == f) defs = defs.unite(isl::union_set(s.domain));
                else if (std::any_of(s.reads.begin(), s.reads.end(), [&](const Access &a) { return a.array == st.array; }))
                    readers = readers.unite(isl::union_set(s.domain));
            }
            if (readers.is_empty()) continue;
            isl::union_map before = isl::manage(isl_union_map_from_domain_and_range(defs.release(), readers.release()));
            check_order(before, "folded storage",
                        "a statement reading a folded Func reads its final ring, after all of its definitions");
        }
    }

    // Inside an overlapped group, a read of a scratchpad must find the element written in the
    // same tile, earlier. With a folded scratchpad (a ring of rows), the last write of the read's
    // slot must be that of the element itself: no later row may have overwritten it.
    void check_tiles() {
        for (const Storage &st : p.storage) {
            if (!r.legal || st.kind != Storage::Kind::Scratch) continue;
            const Array &arr = m.arrays[size_t(st.array)];
            isl::union_map writes = isl::union_map::empty(m.ctx()), reads = writes;
            unsigned n_tile = 0;
            for (const ExecStatement &e : p.statements) {
                // Only the copies of the owning group touch a scratchpad.
                if (e.group != st.group) continue;
                const Statement &s = m.statements[size_t(e.statement)];
                unsigned n = unsigned(isl_set_dim(e.domain.get(), isl_dim_set)), tiles = unsigned(e.tiles);
                // copy -> [tile coordinates, element accessed]
                isl::map instance = copy_to_instance(p, e);
                isl_map *tile = isl_map_identity(isl_space_map_from_set(isl_set_get_space(e.domain.get())));
                tile = isl_map_project_out(tile, isl_dim_out, tiles, n - tiles);
                isl::map tile_of = isl::manage(isl_map_reset_tuple_id(tile, isl_dim_out));
                auto tile_local = [&](const isl::map &access) {
                    isl_map *a = isl_map_apply_range(instance.copy(), access.copy());
                    a = isl_map_flatten_range(isl_map_range_product(tile_of.copy(), a));
                    return isl::union_map(isl::manage(isl_map_set_tuple_name(a, isl_dim_out, arr.name.c_str())));
                };
                if (s.write.array == st.array) {
                    writes = writes.unite(tile_local(s.write.relation));
                    n_tile = tiles;
                }
                for (const Access &a : s.reads)
                    if (a.array == st.array) {
                        reads = reads.unite(tile_local(a.relation));
                    }
            }
            // (Where the regions hold every access, as their run-time values always do: isl sees
            // region parameters as free, and a scratchpad's region bounds its writes.)
            isl::set assumed = region_covers_accesses(m, st.array);
            reads = reads.intersect_params(assumed);
            writes = writes.intersect_params(assumed);
            if (!reads.range().is_subset(writes.range())) {
                fail("The schedule lets a stage of its overlapped group read " + arr.func->name +
                     " where the tile does not compute it (the footprint of " + arr.func->name + " is too small).");
                return;
            }
            if (!st.folded()) {
                isl::union_map flow = writes.apply_range(reads.reverse());  // writer copy -> reader copy
                if (copies_not_in_order(flow))
                    fail("The schedule lets a stage of its overlapped group read " + arr.func->name +
                         " before the tile computes it (the flow dependence inside the tile is not respected).");
                continue;
            }
            check_ring(st, arr, n_tile, writes, reads);
        }
    }
};

// Visits every band directly below a "parallel", "vector", "kernel" (with block loops) or
// "thread" mark, and every register_tile mark node.
void marked_bands(isl_schedule_node *n, std::vector<std::pair<Mark, isl::schedule_node>> &out) {
    if (std::optional<Mark> mark = mark_of(n)) {
        if (mark->kind == Mark::Kind::RegisterTile) out.emplace_back(*mark, isl::manage_copy(n));
        isl_schedule_node *c = isl_schedule_node_get_child(n, 0);
        if (mark->marks_loop() &&
            isl_schedule_node_get_type(c) == isl_schedule_node_band)
            out.emplace_back(*mark, isl::manage_copy(c));
        isl_schedule_node_free(c);
    }
    int k = int(isl_schedule_node_n_children(n));
    for (int i = 0; i < k; ++i) {
        isl_schedule_node *c = isl_schedule_node_get_child(n, i);
        marked_bands(c, out);
        isl_schedule_node_free(c);
    }
}

// The folds of full buffers (storage_folding.h).
std::vector<StorageFold> buffer_folds(const Program &p) {
    std::vector<StorageFold> folds;
    for (const Storage &st : p.storage)
        for (size_t k = 0; st.kind == Storage::Kind::Buffer && k < st.fold.size(); ++k)
            if (st.fold[k] > 0) folds.push_back(StorageFold{st.array, int(k), st.fold[k]});
    return folds;
}

} // namespace

// A marked loop must not carry `deps` (pairs of executed copies): pairs that agree on every
// loop around it must agree on it.
static void check_marks(const Program &p, const isl::union_map &deps, Checker &c) {
    std::vector<std::pair<Mark, isl::schedule_node>> bands;
    isl::schedule_node root = p.schedule.root();
    marked_bands(root.get(), bands);
    for (const auto &[mark, band] : bands) {
        if (!c.r.legal) return;
        if (mark.kind == Mark::Kind::RegisterTile) {
            // The code generator gives each row of the tile an alias scope of its own.
            std::string unsound = register_tile_unsound(*p.model, band);
            if (!unsound.empty())
                c.fail("The mark " + mark.text() + " cannot keep its rows in registers: " + unsound + ". Remove the mark.");
            continue;
        }
        // A collapsed parallel mark runs its band's outer `collapse` loops on threads together,
        // a kernel mark its block loops on blocks.
        bool collapsed = mark.kind == Mark::Kind::Parallel || mark.kind == Mark::Kind::Kernel;
        isl::union_map carried = carried_dependences(band, deps, collapsed ? mark.collapse : 1);
        if (!carried.is_empty()) {
            QuotedDependence q = quote(maps_of(carried).front());
            // (The distance only between instances of one statement.)
            std::string distance = q.source == q.sink && !q.distance.empty() ? " (distance " + q.distance + ")" : "";
            c.fail(detail::str_cat("The loop", mark.collapse > 1 ? "s" : "", " marked ", mark.text(), " around ", q.source,
                                   " carries a dependence from ", q.source, " to ", q.sink, distance, ": ", q.source_point,
                                   " and ", q.sink_point, " touch the same element, so its iterations may not run in "
                                   "parallel. Remove the mark."));
        }
    }
}

Legality check_legality(const Program &p, const Dependences &d, bool gpu_mapping) {
    Checker c(p);
    // Instances of one overlapped group are recomputed per tile, not ordered across tiles:
    // their mutual dependences are checked tile by tile (check_tiles).
    std::map<int, isl::union_set> group_domain;
    for (const ExecStatement &e : p.statements) {
        if (e.group < 0) continue;
        int k = e.group;
        const isl::set &dom = p.model->statements[size_t(e.statement)].domain;
        auto it = group_domain.find(k);
        if (it == group_domain.end()) group_domain.emplace(k, isl::union_set(dom));
        else it->second = it->second.unite(isl::union_set(dom));
    }
    isl::union_map same_group = isl::union_map::empty(p.model->ctx());
    for (const auto &kv : group_domain)
        same_group = same_group.unite(isl::manage(isl_union_map_from_domain_and_range(kv.second.copy(), kv.second.copy())));
    // A folded array's region holds every access of it, as it does at run time (the AST of a
    // folded group assumes it: region_covers_accesses).
    isl::union_set dom = p.model->domains();
    for (const StorageFold &f : buffer_folds(p)) dom = dom.intersect_params(region_covers_accesses(*p.model, f.array));
    auto prepared = [&](const isl::union_map &deps) {
        return deps.intersect_domain(dom).intersect_range(dom).subtract(same_group);
    };
    std::vector<StorageFold> folds = buffer_folds(p);
    isl::union_map fold_order = folds.empty() ? isl::union_map::empty(p.model->ctx()) : fold_dependences(*p.model, folds);
    // Dependences between executed copies (recomputed copies inside a group excluded), mapped to
    // the copies once for the order check and the marks' (each mapping took heat-3d 11 ms).
    // Folded buffers add the order of their slots: a marked loop must not run a write of a
    // slot concurrently with an access of the plane it replaces. (Copies of one group are
    // pairs of instances of one group: a copy computes one instance.)
    const isl::union_map &to_copies = c.to_copies;
    isl::union_map same_copy_group = isl::union_map::empty(p.model->ctx());
    for (const auto &kv : group_domain) {
        isl::union_set g = kv.second.apply(to_copies);
        same_copy_group = same_copy_group.unite(isl::manage(isl_union_map_from_domain_and_range(g.copy(), g.copy())));
    }
    isl::union_map between_copies = d.all()
                                        .unite(fold_order)
                                        .intersect_domain(dom)
                                        .intersect_range(dom)
                                        .apply_domain(to_copies)
                                        .apply_range(to_copies)
                                        .subtract(same_copy_group);
    // Every kind of order at once first: one comparison at the time map instead of five (each
    // maps its pairs to the executed copies); only a violation is looked for kind by kind, for
    // the message.
    isl::union_map orders = between_copies.unite(prepared(c.ring_first_before_reads).apply_domain(to_copies).apply_range(to_copies));
    if (c.copies_not_in_order(orders)) {
        c.check_order(prepared(d.flow), "flow (read-after-write)", "it writes a value the other reads");
        // (Where a schedule leaves out later planes of a ring, their reads find the value the
        // first planes wrote in their slots.)
        c.check_order(prepared(c.ring_first_before_reads), "ring's first planes",
                      "a later plane that it left out finds the value of the first planes in its slot");
        c.check_order(prepared(d.anti), "anti (write-after-read)", "it reads a value the other overwrites");
        c.check_order(prepared(d.output), "output (write-after-write)", "both write the same element, in this order");
        if (!folds.empty())
            c.check_order(prepared(fold_order), "folded storage",
                          "a slot of the folded Func holds one plane at a time: the later plane's write must wait for "
                          "every access of the earlier one");
        c.fail("The schedule violates a dependence.");  // (each kind alone found one above, first)
    }
    c.check_coverage();
    c.check_tiles();
    c.check_folded_buffers();
    c.check_fold_readers_last();
    if (c.r.legal) check_marks(p, between_copies, c);
    if (c.r.legal && gpu_mapping) {
        std::string gpu = gpu_mapping_violation(*p.model, p.schedule);
        if (!gpu.empty()) c.fail(gpu);
    }
    return c.r;
}

} // namespace tessera::poly
