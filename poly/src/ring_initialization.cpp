#include "tessera/poly/ring_initialization.h"

#include <optional>

#include <isl/map.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include <tessera/ir.h>

#include "tessera/poly/isl_util.h"
#include "tessera/poly/tree_transform.h"

namespace tessera::poly {
namespace {

// The coefficient of Var `v` in `e` when e is v times an integer plus terms free of v (sums,
// differences, products by integer constants, integer casts), nothing otherwise.
std::optional<int64_t> coefficient_of(const Expr &e, const std::string &v, int depth = 0) {
    if (depth > 16) return std::nullopt;
    const ExprNode &n = *e;
    auto free_of_v = [&](const Expr &x) {
        bool found = false;
        ir::visit(x, [&](const Expr &y) {
            if (y->op == Op::Var && y->name == v) found = true;
            return !found;
        });
        return !found;
    };
    switch (n.op) {
    case Op::Var:
        return n.name == v ? 1 : 0;
    case Op::IntConst:
    case Op::UIntConst:
    case Op::Param:
    case Op::BufferDim:
        return 0;
    case Op::Cast:
        if (!n.type.is_int() && !n.type.is_uint()) return std::nullopt;
        return coefficient_of(n.args[0], v, depth + 1);
    case Op::Add:
    case Op::Sub: {
        auto a = coefficient_of(n.args[0], v, depth + 1), b = coefficient_of(n.args[1], v, depth + 1);
        if (!a || !b) return std::nullopt;
        return n.op == Op::Add ? *a + *b : *a - *b;
    }
    case Op::Mul:
        for (int k = 0; k < 2; ++k) {
            const Expr &c = n.args[size_t(k)];
            if (c->op != Op::IntConst) continue;
            auto a = coefficient_of(n.args[size_t(1 - k)], v, depth + 1);
            if (a) return *a * c->int_value;
        }
        return free_of_v(e) ? std::optional<int64_t>(0) : std::nullopt;
    default:
        return free_of_v(e) ? std::optional<int64_t>(0) : std::nullopt;
    }
}

// Whether `e` takes the same value at v and v + period: v appears only inside `x % k` with x
// linear in v and k dividing x's step over a period.
bool periodic(const Expr &e, const std::string &v, int64_t period) {
    bool ok = true;
    ir::visit(e, [&](const Expr &x) {
        if (!ok) return false;
        if (x->op == Op::Mod && x->args[1]->op == Op::IntConst && x->args[1]->int_value > 0) {
            std::optional<int64_t> a = coefficient_of(x->args[0], v);
            if (a && (*a * period) % x->args[1]->int_value == 0) return false;  // periodic: not descended
        }
        if (x->op == Op::Var && x->name == v) ok = false;
        return ok;
    });
    return ok;
}

// { A[e] -> A[e'] : e'_q = e_q + k planes for some k >= 0, e'_p = e_p otherwise }: the elements
// sharing e's slot in the ring from its plane on.
isl::map slot_mates_at_or_after(const Model &m, const StorageFold &fold) {
    const Array &a = m.arrays[size_t(fold.array)];
    int n = a.dimensions, q = n - 1 - fold.dimension;
    std::string in, out, same;
    for (int p = 0; p < n; ++p) {
        std::string i = "i" + std::to_string(p), o = "o" + std::to_string(p);
        in += (p ? ", " : "") + i;
        out += (p ? ", " : "") + o;
        same += " and " + (p == q ? o + " = " + i + " + " + std::to_string(fold.planes) + "k" : o + " = " + i);
    }
    std::string text = "{ " + a.name + "[" + in + "] -> " + a.name + "[" + out + "] : exists (k : k >= 0" + same + ") }";
    return isl::manage(isl_map_read_from_str(m.ctx().get(), text.c_str()));
}

RingInitialization refused(const Model &m, std::string why) {
    RingInitialization r{isl::union_set::empty(m.ctx()), isl::union_set::empty(m.ctx()), std::move(why)};
    return r;
}

RingInitialization analyse(const Model &m, const StorageFold &fold) {
    const Array &a = m.arrays[size_t(fold.array)];
    const Statement *pure = nullptr;
    isl::union_map update_writes = isl::union_map::empty(m.ctx());
    for (const Statement &s : m.statements) {
        if (s.func != a.func || s.write.array != fold.array) continue;
        if (s.definition > 0) {
            update_writes = update_writes.unite(isl::union_map(s.write.relation.intersect_domain(s.domain)));
        } else if (pure) {
            return refused(m, "the pure definition of " + a.func->name + " is more than one statement");
        } else {
            pure = &s;
        }
    }
    if (!pure) return refused(m, a.func->name + " has no pure definition in the model");
    if (!pure->guards.empty() || !pure->write.exact) return refused(m, "the pure definition of " + a.func->name + " is guarded");
    isl::map write = pure->write.relation.intersect_domain(pure->domain);
    if (!write.is_injective()) return refused(m, "the pure definition of " + a.func->name + " writes an element twice");
    // The first planes: the region's first ring of them, the elements written a full ring behind
    // no other one. (Every later element has one of them in its slot, a whole number of rings
    // behind: the one a ring behind it is written, and is a first or a later one.)
    isl::set written = write.range();
    isl::set later = written.intersect(written.apply(planes_apart(m, fold, fold.planes, false)));
    RingInitialization r = refused(m, "");
    r.first_planes = isl::union_set(write.subtract_range(later).domain());
    r.left_out = isl::union_set(write.intersect_range(later).domain());
    if (r.left_out.is_empty()) return refused(m, "the pure definition of " + a.func->name + " has no instance past the ring's first planes");
    // Each left-out instance is overwritten before anything reads it, or unread, or its value
    // is kept in the ring. Checked where the region holds every access of the Func, as it does
    // at run time (the AST of a folded group and the legality check assume it too).
    isl::set covers = region_covers_accesses(m, fold.array);
    isl::union_set read_u = isl::union_set::empty(m.ctx());
    for (const Statement &s : m.statements)
        for (const Access &acc : s.reads)
            if (acc.array == fold.array) read_u = read_u.unite(isl::union_set(acc.relation.intersect_domain(s.domain).range()));
    // (The model's sets as private copies: isl stopped by the quota partway may leave the pieces
    // it worked on broken, and the model serves the rest of the compile.)
    isl::set kept = r.left_out.extract_set(pure->domain.space())
                        .intersect_params(copied_to(m.ctx(), covers))
                        .subtract(copied_to(m.ctx(), m.overwritten().extract_set(pure->domain.space())))
                        .apply(write)
                        .intersect(read_u.extract_set(written.space()));
    if (kept.is_empty()) return r;
    // Kept: the pure value is the same along the folded dimension a ring apart, ...
    if (fold.dimension >= int(pure->store.size()) || pure->store[size_t(fold.dimension)]->op != Op::Var)
        return refused(m, "the pure definition of " + a.func->name + " is not stored at its own Vars");
    const std::string &v = pure->store[size_t(fold.dimension)]->name;
    if (!periodic(pure->value, v, fold.planes))
        return refused(m, "the pure definition of " + a.func->name + " changes from plane to plane of the ring (" + v +
                              " appears other than in " + v + " % k, k dividing " + std::to_string(fold.planes) + ")");
    // ... and no update writes the slot at or before the plane read (in the region, where
    // the first planes are the lowest): the slot still holds the first plane's value.
    isl::set update_written = update_writes.range().extract_set(written.space());
    if (!update_written.apply(slot_mates_at_or_after(m, fold)).intersect(kept).is_empty())
        return refused(m, "an update of " + a.func->name + " writes a slot of the ring between its first plane and a later one whose pure value is read");
    return r;
}

} // namespace

RingInitialization ring_initialization(const Model &m, const StorageFold &fold, long max_operations) {
    auto key = std::make_tuple(fold.array, fold.dimension, fold.planes);
    if (auto known = m.ring_initializations.find(key); known != m.ring_initializations.end()) return *known->second;
    std::optional<RingInitialization> r;
    if (!within_quota(m.ctx(), max_operations, [&] { r = analyse(m, fold); }) || !r)
        return refused(m, "the analysis of the ring's first planes exceeded its isl operation quota");
    m.ring_initializations.emplace(key, std::make_shared<const RingInitialization>(*r));
    return *r;
}

isl::schedule initialize_ring_first(const isl::union_set &first_planes, const isl::schedule &rest) {
    isl_union_map *identity = isl_union_map_empty(isl_union_set_get_space(first_planes.get()));
    for (const isl::set &d : sets_of(first_planes)) {
        isl_map *id = isl_map_identity(isl_space_map_from_set(isl_set_get_space(d.get())));
        identity = isl_union_map_add_map(identity, isl_map_reset_tuple_id(id, isl_dim_out));
    }
    isl::schedule alone = isl::manage(isl_schedule_from_domain(first_planes.copy()));
    isl_schedule_node *first = isl_schedule_node_child(isl_schedule_get_root(alone.get()), 0);
    first = isl_schedule_node_insert_partial_schedule(first, isl_multi_union_pw_aff_from_union_map(identity));
    first = isl_schedule_node_band_set_permutable(first, 1);
    for (int k = 0; k < int(isl_schedule_node_band_n_member(first)); ++k) first = isl_schedule_node_band_member_set_coincident(first, k, 1);
    isl::schedule marked = mark_parallel_and_vector(isl::manage(first), true, true).schedule();
    return isl::manage(isl_schedule_sequence(marked.release(), rest.copy()));
}

} // namespace tessera::poly
