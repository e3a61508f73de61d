#include "tessera/poly/loop_order.h"

#include <isl/aff.h>
#include <isl/map.h>
#include <isl/schedule_node.h>
#include <isl/set.h>
#include <isl/union_map.h>

#include <algorithm>
#include <map>
#include <optional>

#include "tessera/poly/isl_util.h"

namespace tessera::poly {
namespace {

// How consecutive iterations of one loop move through an array.
enum class Stride { Invariant, One, Other, Unknown };

} // namespace

std::map<std::string, std::vector<int>> member_dims(const isl::schedule_node &band, int members) {
    std::map<std::string, std::vector<int>> dims;
    isl_multi_union_pw_aff *mupa = isl_schedule_node_band_get_partial_schedule(band.get());
    for (int k = 0; k < members; ++k) {
        isl_union_pw_aff *upa = isl_multi_union_pw_aff_get_at(mupa, k);
        struct Visit {
            std::map<std::string, std::vector<int>> *dims;
            int member, members;
        } v{&dims, k, members};
        isl_union_pw_aff_foreach_pw_aff(
            upa,
            [](isl_pw_aff *pa, void *user) {
                auto &v = *static_cast<Visit *>(user);
                isl_space *sp = isl_pw_aff_get_domain_space(pa);
                const char *name = isl_space_get_tuple_name(sp, isl_dim_set);
                std::vector<int> &d = (*v.dims)[name ? name : ""];
                isl_space_free(sp);
                if (d.empty()) d.assign(size_t(v.members), -1);
                int found = -1;
                if (isl_pw_aff_n_piece(pa) == 1) {
                    isl_pw_aff_foreach_piece(
                        pa,
                        [](isl_set *set, isl_aff *aff, void *u) {
                            int &found = *static_cast<int *>(u);
                            int n = int(isl_aff_dim(aff, isl_dim_in)), hits = 0, dim = -1;
                            for (int i = 0; i < n; ++i) {
                                isl_val *c = isl_aff_get_coefficient_val(aff, isl_dim_in, i);
                                if (!isl_val_is_zero(c)) {
                                    ++hits;
                                    dim = isl_val_is_one(c) ? i : -2;
                                }
                                isl_val_free(c);
                            }
                            isl_val *den = isl_aff_get_denominator_val(aff);
                            if (hits == 1 && dim >= 0 && isl_val_is_one(den)) found = dim;
                            if (hits == 0) found = kConstantMember;
                            isl_val_free(den);
                            isl_set_free(set);
                            isl_aff_free(aff);
                            return isl_stat_ok;
                        },
                        &found);
                }
                d[size_t(v.member)] = found;
                isl_pw_aff_free(pa);
                return isl_stat_ok;
            },
            &v);
        isl_union_pw_aff_free(upa);
    }
    isl_multi_union_pw_aff_free(mupa);
    return dims;
}

namespace {

// The stride of an access that is one affine function of the instances on its domain, without
// divisions (a Func's `in(x + 1, y)`): its coefficients along `dim` are the difference, read off
// without isl's relation algebra (the 28 loop orders of a transformer layer took 36 ms, most of
// it in that algebra), where two instances one apart exist (otherwise Unknown, as stride_along).
// None for any other access.
std::optional<Stride> affine_stride_along(const isl::map &access, int dim) {
    if (isl_map_n_basic_map(access.get()) != 1) return std::nullopt;
    isl_pw_multi_aff *pma = isl_pw_multi_aff_from_map(access.copy());
    if (!pma || isl_pw_multi_aff_n_piece(pma) != 1) {
        isl_pw_multi_aff_free(pma);
        return std::nullopt;
    }
    struct Piece {
        isl_set *domain = nullptr;
        isl_multi_aff *function = nullptr;
    } piece;
    isl_pw_multi_aff_foreach_piece(
        pma,
        [](isl_set *set, isl_multi_aff *ma, void *user) {
            auto &p = *static_cast<Piece *>(user);
            p.domain = set;
            p.function = ma;
            return isl_stat_ok;
        },
        &piece);
    isl_pw_multi_aff_free(pma);
    std::optional<Stride> stride;
    isl_size n = isl_multi_aff_size(piece.function);
    bool plain = n >= 0;
    bool zero_but_last = true;
    long last = 0;
    for (isl_size i = 0; plain && i < n; ++i) {
        isl_aff *aff = isl_multi_aff_get_at(piece.function, i);
        isl_val *den = isl_aff_get_denominator_val(aff);
        isl_val *c = isl_aff_get_coefficient_val(aff, isl_dim_in, dim);
        plain = isl_aff_dim(aff, isl_dim_div) == 0 && isl_val_is_one(den) == isl_bool_true && isl_val_is_int(c) == isl_bool_true;
        if (plain) {
            long v = isl_val_get_num_si(c);
            if (i == n - 1) last = v;
            else if (v != 0) zero_but_last = false;
        }
        isl_val_free(c);
        isl_val_free(den);
        isl_aff_free(aff);
    }
    isl_multi_aff_free(piece.function);
    if (plain) {
        // Instances x with x + e_dim also in the domain.
        isl_multi_aff *next = step_along(isl_set_get_space(piece.domain), dim);
        isl_set *both = isl_set_intersect(isl_set_preimage_multi_aff(isl_set_copy(piece.domain), next), isl_set_copy(piece.domain));
        isl_bool none = isl_set_is_empty(both);
        isl_set_free(both);
        if (none == isl_bool_true) stride = Stride::Unknown;
        else if (none == isl_bool_false) {
            if (n == 0 || (zero_but_last && last == 0)) stride = Stride::Invariant;
            else if (zero_but_last && (last == 1 || last == -1)) stride = Stride::One;
            else stride = Stride::Other;
        }
    }
    isl_set_free(piece.domain);
    return stride;
}

// The stride of `access` (a relation from the statement's instances) along dimension `dim`:
// the set of differences between the elements touched by instances one apart in `dim`.
Stride stride_along(const isl::map &access, int dim) {
    std::optional<Stride> fast = affine_stride_along(access, dim);
    if (fast) return *fast;
    isl::map step = isl::manage(isl_map_from_multi_aff(step_along(isl_space_domain(isl_map_get_space(access.get())), dim)));
    // element -> element of the next instance, over the instances that touch the first.
    isl::map pairs = access.reverse().apply_range(step.apply_range(access));
    isl::set deltas = isl::manage(isl_map_deltas(pairs.release()));
    if (deltas.is_empty()) return Stride::Unknown;
    int n = int(deltas.tuple_dim());
    auto only = [&](int last) {
        isl::set s = isl::set::universe(deltas.space());
        for (int i = 0; i < n; ++i)
            s = isl::manage(isl_set_fix_si(s.release(), isl_dim_set, i, i == n - 1 ? last : 0));
        return deltas.is_subset(s);
    };
    if (n == 0 || only(0)) return Stride::Invariant;
    if (only(1) || only(-1)) return Stride::One;
    return Stride::Other;
}

} // namespace

LoopOrder stride_one_innermost_order(const Model &m, const isl::schedule_node &band) {
    LoopOrder r;
    int members = int(isl_schedule_node_band_n_member(band.get()));
    if (members < 2) {
        r.reason = "a band of one member";
        return r;
    }
    std::map<std::string, std::vector<int>> dims = member_dims(band, members);
    // Score each member as the innermost loop: contiguous accesses vectorize and use whole
    // cache lines, invariant ones stay in registers, strided ones cost a line (or a gather) each.
    std::vector<int> score(size_t(members), 0);
    std::vector<bool> strided(size_t(members), false);
    std::vector<bool> write_invariant(size_t(members), true), write_contiguous(size_t(members), true);
    // Members along which every access moves by more than one element (a batch: bmm's b moves C,
    // A and B each to another matrix): tiling them reuses nothing.
    // An access whose coordinates depend on data (a histogram's bin) is left out; some exact
    // access must stride along the member (moves_apart).
    std::vector<bool> no_reuse(size_t(members), true), moves_apart(size_t(members), false);
    std::vector<bool> varies(size_t(members), false);  // some statement is not constant along it
    // Members along which a statement's write depends on data (a histogram's bins along its
    // window): a reduction into data-dependent cells.
    std::vector<bool> write_scattered(size_t(members), false);
    auto operand_invariant = std::vector<std::vector<bool>>(size_t(members));
    int element_bytes = 1;
    for (const auto &[name, of_member] : dims) {
        int si = m.statement_index(name);
        if (si < 0) {
            r.reason = "a statement the model does not know (" + name + ")";
            return r;
        }
        const Statement &s = m.statements[size_t(si)];
        if (s.write.array >= 0) element_bytes = std::max(element_bytes, m.arrays[size_t(s.write.array)].type.bytes());
        std::vector<const Access *> accesses{&s.write};
        for (const Access &a : s.reads) accesses.push_back(&a);
        for (int k = 0; k < members; ++k) {
            if (of_member[size_t(k)] == kConstantMember) continue;
            varies[size_t(k)] = true;
            if (of_member[size_t(k)] < 0) {
                r.reason = "member " + std::to_string(k) + " is not one dimension of " + name + " (a skewed band)";
                return r;
            }
            for (const Access *a : accesses) {
                if (a->relation.is_null()) continue;
                Stride st = a->exact ? stride_along(a->relation, of_member[size_t(k)]) : Stride::Other;
                if (a == &s.write && st != Stride::Invariant) write_invariant[size_t(k)] = false;
                if (a != &s.write && a->array != s.write.array) operand_invariant[size_t(k)].push_back(st == Stride::Invariant);
                if (a == &s.write && st != Stride::One) write_contiguous[size_t(k)] = false;
                if (a->exact && st != Stride::Other) no_reuse[size_t(k)] = false;
                if (a->exact && st == Stride::Other) moves_apart[size_t(k)] = true;
                if (a == &s.write && !a->exact) write_scattered[size_t(k)] = true;
                switch (st) {
                case Stride::One: score[size_t(k)] += 2; break;
                case Stride::Invariant: score[size_t(k)] += 1; break;
                case Stride::Other:
                    score[size_t(k)] -= 3;
                    strided[size_t(k)] = true;
                    break;
                case Stride::Unknown: break;
                }
            }
        }
    }
    auto coincident = [&](int k) { return isl_schedule_node_band_member_get_coincident(band.get(), k) == isl_bool_true; };
    int best = members - 1;
    bool any_coincident = false;
    for (int k = 0; k < members; ++k) {
        any_coincident = any_coincident || coincident(k);
        if (coincident(k) && score[size_t(k)] > score[size_t(best)]) best = k;
    }
    if (!any_coincident && strided[size_t(best)]) {
        // No member is parallel, so none is a vector loop, and the innermost strides: the
        // innermost becomes the best member whose accesses are all contiguous or invariant, a
        // reduction's chain (cholesky's A(j, i) -= A(k, i) A(k, j) along k, rather than its
        // columns j, along which A(k, j) strides a row: a cache line and a TLB entry each).
        for (int k = 0; k < members; ++k)
            if (!strided[size_t(k)] && (strided[size_t(best)] || score[size_t(k)] > score[size_t(best)])) best = k;
        r.chain_innermost = best != members - 1;
    }
    std::vector<int> order;
    for (int k = 0; k < members; ++k)
        if (k != best) order.push_back(k);
    order.push_back(best);
    // A batch member of a band with a reduction (a batched matmul) gets tiles of one: each tile
    // then works on one matrix, its operand blocks in L2 (bmm 8 x 512 x 768 x 768 tiled 8 along
    // the batch: a tile of k steps touched 8 matrices of B, 3 MiB, from L3 for each block of rows).
    // So does a member along which every exact access moves apart in a band with a scatter's
    // reduction: bilateral_grid's histogram, grid(x, y, bin(in(8x + r.x, 8y + r.y)), c) +=,
    // tiled 8 cells by 8 read its input 8 rows by 64 points at a time, each point once: short
    // runs the prefetchers did not follow (3.4 ms untiled, 6.7 tiled).
    bool reduction = false;
    for (int k = 0; k < members; ++k)
        reduction = reduction || (varies[size_t(k)] && !coincident(k) && (write_invariant[size_t(k)] || write_scattered[size_t(k)]));
    for (int k : order) {
        int size = 8;
        if (k == best && r.chain_innermost) size = kChainTile;
        else if (k == best) size = std::max(32, 4096 / element_bytes);
        else if (!coincident(k) && write_invariant[size_t(k)]) size = 32;
        else if (reduction && coincident(k) && no_reuse[size_t(k)] && moves_apart[size_t(k)]) size = 1;
        r.tile_sizes.push_back(size);
        r.write_invariant.push_back(write_invariant[size_t(k)]);
        r.write_contiguous.push_back(write_contiguous[size_t(k)]);
        if (dims.size() == 1) r.operand_invariant.push_back(operand_invariant[size_t(k)]);
    }
    r.element_bytes = element_bytes;
    if (best == members - 1) {
        r.reason = "the innermost member is already the best";
        return r;
    }
    r.members = order;
    const std::string innermost_why = r.chain_innermost ? " innermost (accesses contiguous or invariant), "
                                                        : " innermost (coincident; accesses contiguous or invariant), ";
    // Name the loops after the dimensions of the first statement that has both, e.g. "j
    // innermost, k outward".
    for (const auto &[name, of_member] : dims) {
        if (of_member[size_t(best)] < 0 || of_member[size_t(members - 1)] < 0 ||
            of_member[size_t(best)] == of_member[size_t(members - 1)])
            continue;
        const Statement &s = m.statements[size_t(m.statement_index(name))];
        auto dim_name = [&](int k) { return s.dims[size_t(of_member[size_t(k)])]; };
        r.reason = name + ": " + dim_name(best) + innermost_why + dim_name(members - 1) + " outward";
        return r;
    }
    r.reason = "member " + std::to_string(best) + innermost_why + "member " + std::to_string(members - 1) + " outward";
    return r;
}

} // namespace tessera::poly
