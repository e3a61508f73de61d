#include "tessera/poly/gpu_mapping.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <isl/schedule_node.h>

#include "tessera/poly/isl_util.h"
#include "tessera/poly/tree_transform.h"

namespace tessera::poly {

namespace {

isl_schedule_node_type type_of(const isl::schedule_node &n) { return isl_schedule_node_get_type(n.get()); }

std::optional<Mark> mark_at(const isl::schedule_node &n) { return mark_of(n.get()); }

// Whether `n` is a mark of kind `k`.
bool is_mark(const isl::schedule_node &n, Mark::Kind k) {
    std::optional<Mark> mk = mark_at(n);
    return mk && mk->kind == k;
}

// Whether the subtree at `n` holds a mark of kind `k`.
bool holds_mark(const isl::schedule_node &n, Mark::Kind k) {
    if (is_mark(n, k)) return true;
    int children = int(isl_schedule_node_n_children(n.get()));
    for (int i = 0; i < children; ++i)
        if (holds_mark(n.child(i), k)) return true;
    return false;
}

// The model statement a tuple of the tree names: a model statement ("S_f_1") or the copy an
// overlapped group computes in its tiles ("G0_S_f_1"); -1 for neither.
int model_statement_of(const Model &m, const std::string &tuple, bool &copy) {
    copy = false;
    int s = m.statement_index(tuple);
    if (s >= 0) return s;
    size_t k = 1;
    while (k < tuple.size() && std::isdigit(static_cast<unsigned char>(tuple[k]))) ++k;
    if (tuple.size() > k + 1 && tuple[0] == 'G' && k > 1 && tuple[k] == '_') {
        copy = true;
        return m.statement_index(tuple.substr(k + 1));
    }
    return -1;
}

// The arrays the statements below `n` read and write (model array indices).
struct ArraySets {
    std::set<int> reads, writes;
    bool copies = false;  // some statement is an overlapped group's copy

    bool conflicts_with(const ArraySets &later) const {
        for (int a : writes)
            if (later.reads.count(a) || later.writes.count(a)) return true;
        for (int a : reads)
            if (later.writes.count(a)) return true;
        return false;
    }
    void add(const ArraySets &o) {
        reads.insert(o.reads.begin(), o.reads.end());
        writes.insert(o.writes.begin(), o.writes.end());
        copies = copies || o.copies;
    }
};

ArraySets arrays_below(const Model &m, const isl::schedule_node &n) {
    ArraySets a;
    isl::union_set dom = isl::manage(isl_schedule_node_get_domain(n.get()));
    for (const isl::set &s : sets_of(dom)) {
        bool copy = false;
        int st = model_statement_of(m, isl_set_get_tuple_name(s.get()), copy);
        if (st < 0) continue;
        a.copies = a.copies || copy;
        const Statement &ms = m.statements[size_t(st)];
        a.writes.insert(ms.write.array);
        for (const Access &r : ms.reads) a.reads.insert(r.array);
    }
    return a;
}

// Whether two instances below the band at `band`, in different iterations of its loops (and
// the same iteration of every loop around it), access one element with at least one write:
// the band then needs a barrier between its iterations. Exact for model statements (their
// access relations, isl); for the copies of an overlapped group, whose instances carry tile
// coordinates, any array both written and read below the band counts.
bool carries_conflict(const Model &m, const isl::schedule_node &band) {
    ArraySets a = arrays_below(m, band);
    if (a.copies) {
        for (int w : a.writes)
            if (a.reads.count(w)) return true;
        return false;
    }
    // Only arrays that are read below the band, written by several statements, or written
    // twice by one (a reduction) can conflict: a pure stage writes each element once.
    isl::union_set dom = isl::manage(isl_schedule_node_get_domain(band.get()));
    std::map<int, int> writers;
    std::set<int> candidates;
    for (const isl::set &s : sets_of(dom)) {
        bool copy = false;
        int st = model_statement_of(m, isl_set_get_tuple_name(s.get()), copy);
        if (st < 0) return true;
        const Statement &ms = m.statements[size_t(st)];
        if (++writers[ms.write.array] > 1 || ms.definition > 0 || !ms.write.exact) candidates.insert(ms.write.array);
    }
    for (int r : a.reads)
        if (writers.count(r)) candidates.insert(r);
    if (candidates.empty()) return false;
    // Over the quota (about 10 ms of isl): a barrier, which is always legal.
    bool conflict = true;
    within_quota(m.ctx(), 50000, [&] {
        isl::union_map writes = m.may_writes().unite(m.must_writes()).intersect_domain(dom);
        isl::union_map accesses = m.reads().intersect_domain(dom).unite(writes);
        isl::union_set arrays = isl::union_set::empty(m.ctx());
        for (const isl::map &w : maps_of(writes))
            for (int c : candidates)
                if (m.arrays[size_t(c)].name == isl_map_get_tuple_name(w.get(), isl_dim_out)) arrays = arrays.unite(isl::union_set(w.range()));
        writes = writes.intersect_range(arrays);
        accesses = accesses.intersect_range(arrays);
        isl::union_map pairs = writes.apply_range(accesses.reverse());
        isl::union_map outer = isl::manage(isl_schedule_node_get_prefix_schedule_union_map(band.get()));
        isl::union_map inner = isl::manage(isl_schedule_node_get_prefix_schedule_union_map(band.child(0).get()));
        isl::union_map same_outer = outer.apply_range(outer.reverse());
        isl::union_map same_inner = inner.apply_range(inner.reverse());
        conflict = !pairs.intersect(same_outer).subtract(same_inner).is_empty();
    });
    return conflict;
}

// Removes the mark at `n`; returns the node now at its position (its child).
isl::schedule_node drop_mark(const isl::schedule_node &n) { return isl::manage(isl_schedule_node_delete(n.copy())); }

// Node types that only select or order statements: a kernel never starts at one of them (a
// mark cannot stand between a sequence and its filters).
bool structural(isl_schedule_node_type t) {
    return t == isl_schedule_node_domain || t == isl_schedule_node_filter || t == isl_schedule_node_sequence ||
           t == isl_schedule_node_set || t == isl_schedule_node_context || t == isl_schedule_node_extension ||
           t == isl_schedule_node_guard;
}

isl::schedule_node map_inside_kernel(const isl::schedule_node &node);

bool all_coincident(const isl::schedule_node &band) {
    int members = int(isl_schedule_node_band_n_member(band.get()));
    for (int i = 0; i < members; ++i)
        if (isl_schedule_node_band_member_get_coincident(band.get(), i) != isl_bool_true) return false;
    return true;
}

// A band of fewer than three loops, all parallel, directly above another permutable band whose
// loops are all parallel too (a parallel:2 mark split the tile band of an overlapped group):
// one band of their loops, so that all of them can be the grid's. Returns the band.
isl::schedule_node merge_parallel_child_band(const isl::schedule_node &band) {
    isl::schedule_node child = band.child(0);
    int outer = int(isl_schedule_node_band_n_member(band.get()));
    if (!is_band(child) || outer >= 3 || !all_coincident(band) || !all_coincident(child) ||
        isl_schedule_node_band_get_permutable(band.get()) != isl_bool_true ||
        isl_schedule_node_band_get_permutable(child.get()) != isl_bool_true)
        return band;
    int inner = int(isl_schedule_node_band_n_member(child.get()));
    isl_multi_union_pw_aff *merged = isl_multi_union_pw_aff_flat_range_product(
        isl_schedule_node_band_get_partial_schedule(band.get()), isl_schedule_node_band_get_partial_schedule(child.get()));
    isl_schedule_node *c = isl_schedule_node_delete(child.copy());  // the child's position now holds its child
    c = isl_schedule_node_parent(c);                                 // the band
    c = isl_schedule_node_delete(c);                                 // the band's position now holds the rest
    c = isl_schedule_node_insert_partial_schedule(c, merged);
    c = isl_schedule_node_band_set_permutable(c, 1);
    for (int i = 0; i < outer + inner; ++i) c = isl_schedule_node_band_member_set_coincident(c, i, 1);
    return isl::manage(c);
}

// The kernels of the subtree at `n` (outside any kernel); returns the node at n's position.
isl::schedule_node map_outside_kernels(const isl::schedule_node &node) {
    isl::schedule_node n = node;
    isl_schedule_node_type t = type_of(n);
    // (A leaf here is a statement reached through filters only, such as a reduction's
    // initialization beside the loops of its updates: a kernel of its own.)
    if (!structural(t) && !holds_mark(n, Mark::Kind::Parallel)) {
        // Nothing parallel below: one block runs it all.
        n = insert_mark(n, Mark::kernel(0));
        return map_inside_kernel(n.child(0)).parent();
    }
    if (std::optional<Mark> mk = mark_at(n); mk && mk->kind == Mark::Kind::Parallel) {
        isl::schedule_node band = drop_mark(n);
        if (!is_band(band)) {
            n = insert_mark(band, Mark::kernel(0));
            return map_inside_kernel(n.child(0)).parent();
        }
        band = merge_parallel_child_band(band);
        // The block loops: the band's leading coincident loops (at least those the mark ran on
        // threads), up to the grid's three dimensions, collapsed into one.
        int members = int(isl_schedule_node_band_n_member(band.get()));
        int blocks = std::min(mk->collapse, members);
        while (blocks < std::min(members, 3) && isl_schedule_node_band_member_get_coincident(band.get(), blocks) == isl_bool_true)
            ++blocks;
        blocks = std::max(1, std::min(blocks, 3));
        // The band's loops after the block loops run inside each block: a band of their own,
        // so that a barrier can stand between their iterations.
        if (members > blocks) band = split_band(band, blocks);
        n = insert_mark(band, Mark::kernel(blocks));
        band = n.child(0);
        band = map_inside_kernel(band.child(0)).parent();
        return band.parent();
    }
    int children = int(isl_schedule_node_n_children(n.get()));
    for (int i = 0; i < children; ++i) n = map_outside_kernels(n.child(i)).parent();
    return n;
}

// Inside a kernel: vector marks become thread marks; parallel and register_tile marks go.
isl::schedule_node map_inside_kernel(const isl::schedule_node &node) {
    isl::schedule_node n = node;
    if (std::optional<Mark> mk = mark_at(n)) {
        if (mk->kind == Mark::Kind::Parallel || mk->kind == Mark::Kind::RegisterTile) return map_inside_kernel(drop_mark(n));
        if (mk->kind == Mark::Kind::Vector) n = insert_mark(drop_mark(n), Mark::thread());
    }
    int children = int(isl_schedule_node_n_children(n.get()));
    for (int i = 0; i < children; ++i) n = map_inside_kernel(n.child(i)).parent();
    return n;
}

std::string statements_below(const isl::schedule_node &n) {
    std::string names;
    isl::union_set dom = isl::manage(isl_schedule_node_get_domain(n.get()));
    for (const isl::set &s : sets_of(dom)) names += std::string(names.empty() ? "" : ", ") + isl_set_get_tuple_name(s.get());
    return names;
}


// Barriers inside the kernels of the subtree at `n` (see the header); `in_kernel`: n lies in
// a kernel below its block band. With `violation`, nothing is inserted: the first place that
// needs a barrier and has none is described there instead.
isl::schedule_node place_barriers(const Model &m, const isl::schedule_node &node, bool in_kernel, std::string *violation) {
    isl::schedule_node n = node;
    if (violation && !violation->empty()) return n;
    std::optional<Mark> mk = mark_at(n);
    if (mk && mk->kind == Mark::Kind::Kernel) {
        isl::schedule_node below = n.child(0);
        // The block band runs its iterations on different blocks: no barrier at its level.
        if (mk->collapse > 0 && is_band(below)) return place_barriers(m, below.child(0), true, violation).parent().parent();
        return place_barriers(m, below, true, violation).parent();
    }
    if (in_kernel && holds_mark(n, Mark::Kind::Thread)) {
        if (is_band(n) && !(n.has_parent() && is_mark(n.parent(), Mark::Kind::Thread)) &&
            carries_conflict(m, n)) {
            // Iteration i + 1 of this loop touches what other threads touched in iteration i.
            if (violation) {
                if (!is_mark(n.child(0), Mark::Kind::Barrier))
                    *violation = "The GPU loop around " + statements_below(n) +
                                 " carries a dependence between threads of a block (an element one iteration writes, another "
                                 "reads or writes) but has no barrier at the start of its body. Put a \"barrier\" mark there.";
                return place_barriers(m, n.child(0), true, violation).parent();
            }
            isl::schedule_node body = insert_mark(n.child(0), Mark::barrier());
            n = place_barriers(m, body.child(0), true, violation).parent().parent();
            return n;
        }
        if (type_of(n) == isl_schedule_node_sequence) {
            ArraySets since_barrier;
            int children = int(isl_schedule_node_n_children(n.get()));
            for (int i = 0; i < children; ++i) {
                isl::schedule_node filter = n.child(i);
                ArraySets here = arrays_below(m, filter);
                bool has_barrier = is_mark(filter.child(0), Mark::Kind::Barrier);
                if (i > 0 && since_barrier.conflicts_with(here) && !has_barrier) {
                    // Child i touches what an earlier child wrote (or writes what it read),
                    // on other threads of the block.
                    if (violation) {
                        *violation = "In a GPU kernel, " + statements_below(filter) + " accesses arrays that " +
                                     statements_below(n.child(i - 1)) + " (or an earlier stage) wrote or read, on other threads of "
                                     "the block, with no barrier between them. Put a \"barrier\" mark above it.";
                        return n;
                    }
                    filter = insert_mark(filter.child(0), Mark::barrier()).parent();
                    has_barrier = true;
                }
                if (has_barrier) since_barrier = ArraySets{};
                since_barrier.add(here);
                n = filter.parent();
            }
        }
    }
    int children = int(isl_schedule_node_n_children(n.get()));
    for (int i = 0; i < children; ++i) n = place_barriers(m, n.child(i), in_kernel, violation).parent();
    return n;
}

// Whether every statement instance below `n` runs in a kernel, none in two: "" or why not.
std::string kernel_coverage(const isl::schedule_node &n, bool in_kernel) {
    std::optional<Mark> mk = mark_at(n);
    bool kernel = mk && mk->kind == Mark::Kind::Kernel;
    if (kernel && in_kernel) return "A kernel mark lies inside another kernel (around " + statements_below(n) + "). Remove one.";
    if (type_of(n) == isl_schedule_node_leaf && !in_kernel)
        return "Statements " + statements_below(n) + " lie outside every kernel of a GPU schedule. Put a \"kernel\" mark above them.";
    int children = int(isl_schedule_node_n_children(n.get()));
    for (int i = 0; i < children; ++i) {
        std::string why = kernel_coverage(n.child(i), in_kernel || kernel);
        if (!why.empty()) return why;
    }
    return "";
}

} // namespace

isl::schedule map_to_gpu(const Model &m, const isl::schedule &schedule) {
    isl::schedule_node root = map_outside_kernels(schedule.root());
    root = place_barriers(m, root, false, nullptr);
    return root.schedule();
}

std::string gpu_mapping_violation(const Model &m, const isl::schedule &schedule) {
    if (count_kernels(schedule) == 0) return "";
    std::string why = kernel_coverage(schedule.root(), false);
    if (why.empty()) place_barriers(m, schedule.root(), false, &why);
    return why;
}



namespace {
void count_marks(const isl::schedule_node &n, KernelSummary &k) {
    if (std::optional<Mark> mk = mark_at(n)) {
        if (mk->kind == Mark::Kind::Barrier) ++k.barriers;
        if (mk->kind == Mark::Kind::Thread) ++k.thread_loops;
    }
    int children = int(isl_schedule_node_n_children(n.get()));
    for (int i = 0; i < children; ++i) count_marks(n.child(i), k);
}

void kernels_below(const isl::schedule_node &n, std::vector<KernelSummary> &out) {
    std::optional<Mark> mk = mark_at(n);
    if (mk && mk->kind == Mark::Kind::Kernel) {
        KernelSummary k;
        k.block_loops = mk->collapse;
        isl::union_set dom = isl::manage(isl_schedule_node_get_domain(n.get()));
        for (const isl::set &s : sets_of(dom)) k.statements.push_back(isl_set_get_tuple_name(s.get()));
        std::sort(k.statements.begin(), k.statements.end());
        count_marks(n, k);
        out.push_back(k);
        return;
    }
    int children = int(isl_schedule_node_n_children(n.get()));
    for (int i = 0; i < children; ++i) kernels_below(n.child(i), out);
}
} // namespace

std::vector<KernelSummary> kernels_of(const isl::schedule &schedule) {
    std::vector<KernelSummary> out;
    kernels_below(schedule.root(), out);
    return out;
}

int count_kernels(const isl::schedule &schedule) { return int(kernels_of(schedule).size()); }

std::set<std::string> single_block_statements(const isl::schedule &schedule) {
    std::set<std::string> out;
    for (const KernelSummary &k : kernels_of(schedule))
        if (k.block_loops == 0) out.insert(k.statements.begin(), k.statements.end());
    return out;
}

} // namespace tessera::poly
