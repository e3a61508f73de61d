#include "tessera/poly/affine_schedule.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <isl/aff.h>
#include <isl/options.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>

#include "tessera/poly/isl_util.h"
#include "tessera/poly/loop_order.h"
#include "tessera/poly/register_tiling.h"
#include "tessera/poly/substitution_blocks.h"
#include "tessera/poly/tree_transform.h"

namespace tessera::poly {
namespace {

// The union of the statements' domains.
isl::union_set domain_of(const Model &m, const std::vector<int> &statements) {
    isl::union_set dom = isl::union_set::empty(m.ctx());
    for (int s : statements) dom = dom.unite(isl::union_set(m.statements[size_t(s)].domain));
    return dom;
}

// The original order of the statements of `dom`: a sequence of identity bands, no marks.
isl::schedule original_order(const Model &m, const isl::union_set &dom) {
    return isl::manage(isl_schedule_intersect_domain(m.original.copy(), dom.copy()));
}

// Whether some member of the band combines several loop variables (a skewed band, as for time
// tiling): a second level of tiles does not pay there and makes the AST expensive.
bool skewed(const isl::schedule_node &band) {
    isl::multi_union_pw_aff mupa = isl::manage(isl_schedule_node_band_get_partial_schedule(band.get()));
    bool result = false;
    int n = int(isl_multi_union_pw_aff_dim(mupa.get(), isl_dim_set));
    for (int i = 0; i < n && !result; ++i) {
        isl_union_pw_aff *upa = isl_multi_union_pw_aff_get_at(mupa.get(), i);
        isl_union_pw_aff_foreach_pw_aff(
            upa,
            [](isl_pw_aff *pa, void *user) {
                isl_pw_aff_foreach_piece(
                    pa,
                    [](isl_set *set, isl_aff *aff, void *u) {
                        int vars = 0;
                        for (int d = 0; d < int(isl_aff_dim(aff, isl_dim_in)); ++d) {
                            isl_val *c = isl_aff_get_coefficient_val(aff, isl_dim_in, d);
                            if (!isl_val_is_zero(c)) ++vars;
                            isl_val_free(c);
                        }
                        if (vars > 1) *static_cast<bool *>(u) = true;
                        isl_set_free(set);
                        isl_aff_free(aff);
                        return isl_stat_ok;
                    },
                    user);
                isl_pw_aff_free(pa);
                return isl_stat_ok;
            },
            &result);
        isl_union_pw_aff_free(upa);
    }
    return result;
}

// How many first-level tiles the second level of tiles (the outer cache's) holds along each
// member of the tile band at `tile`: 4, but 1 along the vector member (the innermost, where
// it is coincident). Its first-level rows then stay the point tile's 4 KiB, so that the block
// of an operand the row loop does not move (matmul's B: 128 steps of k by 4 KiB, 512 KiB) fits
// in L2 and serves each block of 8 rows of the tile from there; with 4 it was 2 MiB, read from
// L3 for each of them. dgemm 2048^3, 2 threads: 160-170 -> 152-154 ms; float matmul 2048^3
// 58-66 -> 51-53 ms.
//
// More rows per tile would pass over B less often: a 2048^3 dgemm's B (32 MiB, this L3's
// size) comes from memory once per tile of 32 rows; 16 row blocks per tile ran it in 112-120
// ms. But the row tiles are what the threads share: 16 left PyTorch's mlp (128 rows by 1024
// columns: one tile) on one thread, 1.47 -> 2.92 ms. Tiles that size want the threads inside
// them (BLIS parallelizes its loops around the micro-kernel), or the row count known.
std::vector<int> outer_tile_factors(const isl::schedule_node &tile) {
    int members = int(isl_schedule_node_band_n_member(tile.get()));
    std::vector<int> factors(size_t(members), 4);
    if (isl_schedule_node_band_member_get_coincident(tile.get(), members - 1) == isl_bool_true) factors.back() = 1;
    return factors;
}

// The members of the band at `band`, its coincident ones first, then the others, each group in
// its order; `coincident` is set to how many are coincident. Permuting a permutable band so
// puts its parallel loops outermost: the outer tile loops, where matmul's (i, k, j) become
// (i, j, k) and the tiles of rows and of columns run on the threads as one collapsed loop (a
// matrix of few row tiles still has work for every thread); a GPU band's grid and threads.
std::vector<int> coincident_members_first(const isl::schedule_node &band, int &coincident) {
    int members = int(isl_schedule_node_band_n_member(band.get()));
    std::vector<int> order, others;
    for (int k = 0; k < members; ++k)
        (isl_schedule_node_band_member_get_coincident(band.get(), k) == isl_bool_true ? order : others).push_back(k);
    coincident = int(order.size());
    order.insert(order.end(), others.begin(), others.end());
    return order;
}

class BandEditor {
public:
    BandEditor(const Model &m, const ScheduleOptions &o, const isl::union_map &order, std::vector<std::vector<int>> &tiles,
               std::vector<std::string> &notes)
        : m_(m), o_(o), order_(order), tiles_(tiles), notes_(notes) {}

    // Edits the band at n (tiling, marks), then the subtree below it; returns the node at n's
    // position. `in_sequential_loop`: a band above n runs its loop in order.
    isl::schedule_node visit(isl::schedule_node n, bool allow_parallel, bool in_sequential_loop = false) {
        if (!is_band(n)) {
            int children = isl_schedule_node_n_children(n.get());
            for (int i = 0; i < children; ++i) n = visit(n.child(i), allow_parallel, in_sequential_loop).parent();
            return n;
        }
        int members = int(isl_schedule_node_band_n_member(n.get()));
        bool permutable = isl_schedule_node_band_get_permutable(n.get()) == isl_bool_true;
        if (std::optional<isl::schedule_node> rows = distribute_rows(n, allow_parallel)) return *rows;
        if (permutable && members >= 2)
            if (std::optional<isl::schedule_node> split = distribute_statements_fixed_along_members(n))
                return visit(*split, allow_parallel, in_sequential_loop);
        if (std::optional<isl::schedule_node> blocks = substitution_blocks(n)) return visit(*blocks, allow_parallel, in_sequential_loop);
        std::vector<int> model_sizes;  // tile sizes from the strides (loop_order.h), per member
        std::vector<int> point_order;  // a permutation of the point band alone
        LoopOrder order;
        if (permutable && members >= 2) {
            // Contiguous, coincident loop innermost (loop_order.h): the vector loop.
            order = stride_one_innermost_order(m_, n);
            model_sizes = order.tile_sizes;
            auto coincident = [&](int k) {
                return isl_schedule_node_band_member_get_coincident(n.get(), k) == isl_bool_true;
            };
            if (!order.members.empty() && !order.chain_innermost && (coincident(order.members[0]) || !coincident(0))) {
                n = permute_band(n, order.members);
                notes_.push_back(order.reason);
            } else if (!order.members.empty()) {
                // Moving the only coincident member inward would lose the parallel outer loop
                // (out(y) += in(y, r): (y, r) -> (r, y)). Both bands of a tiled permutable band
                // are permutable: the tile loops keep isl's order, the point loops take the new one.
                point_order = order.members;
                for (int k = 0; k < members; ++k) model_sizes[size_t(order.members[size_t(k)])] = order.tile_sizes[size_t(k)];
                notes_.push_back(order.reason + (order.chain_innermost ? " (in each tile: a chain of dependent steps; the tile loops keep isl's order)"
                                                                       : " (in each tile; the tile loops keep the parallel one outermost)"));
            }
        }
        // Interleaved reductions (unroll-and-jam without the unrolling): a two-loop band whose
        // inner loop is a reduction into one element per outer iteration (gesummv's tmp(i) +=
        // A(j, i) * x(j)) is one chain of dependent additions per row, bound by the adder's
        // latency. Inside each tile the rows' loop goes innermost: its 8 chains are independent
        // (each row still adds its terms in order) and overlap in the pipeline.
        bool interleaved = false;
        if (permutable && members == 2 && point_order.empty() && !skewed(n) && o_.tile_sizes.empty() &&
            model_sizes.size() == 2 && isl_schedule_node_band_member_get_coincident(n.get(), 0) == isl_bool_true &&
            isl_schedule_node_band_member_get_coincident(n.get(), 1) != isl_bool_true && model_sizes[0] == 8) {
            point_order = {1, 0};
            interleaved = true;
            notes_.push_back("reductions interleaved: in each tile, the 8 rows' independent chains run in the reduction loop");
        }
        // GPU targets: the parallel loops outermost (the tile loops among them become the grid),
        // the innermost of them next (its points spread over the block's threads), the
        // reductions last, inside each thread: matmul's (i, k, j) becomes (i, j, k), so that
        // threads need a barrier only between tiles of k, not at every k.
        int thread_member = -1;
        if (o_.gpu && permutable && members >= 2 && !skewed(n) && point_order.empty() && !interleaved) {
            int parallel_members = 0;
            std::vector<int> gpu_order = coincident_members_first(n, parallel_members);
            if (parallel_members > 0 && parallel_members < members) {
                n = permute_band(n, gpu_order);
                if (int(model_sizes.size()) == members) {
                    std::vector<int> sizes;
                    for (int k : gpu_order) sizes.push_back(model_sizes[size_t(k)]);
                    model_sizes = sizes;
                }
                thread_member = parallel_members - 1;
                // A tile of the thread loop is the block's width.
                if (int(model_sizes.size()) == members) model_sizes[size_t(thread_member)] = std::max(32, o_.vector_width * 8);
                notes_.push_back("GPU: parallel loops outermost, the reduction loops inside each thread");
            }
        }
        bool parallel = allow_parallel && o_.parallel &&
                        isl_schedule_node_band_member_get_coincident(n.get(), 0) == isl_bool_true;
        bool tiled = permutable && members >= 2;
        bool wavefront = false;
        bool jammed = false;  // the last band of the edited chain holds jammed rows (jam_rows)
        bool skew = skewed(n);
        int chain_members = members;
        if (tiled) {
            std::vector<int> sizes(size_t(members), 32);
            if (o_.tile_sizes.empty() && int(model_sizes.size()) == members) sizes = model_sizes;
            for (int i = 0; i < members && i < int(o_.tile_sizes.size()); ++i)
                sizes[size_t(members - 1 - i)] = o_.tile_sizes[size_t(i)];
            // A skewed band (time tiles of a stencil) keeps its innermost loop whole: whole rows
            // vectorize with long trip counts, and isl's AST of fully skewed tiles took seconds.
            // A 1-D stencil (2 members: time and the row) has its row tiled too, in long pieces:
            // whole rows left it one tile per wavefront, its time steps in order on one thread.
            bool row_tiles = skew && members == 2 && !o_.gpu;
            int tiled_members = skew && !row_tiles ? members - 1 : members;
            if (skew && o_.tile_sizes.empty()) {
                // Time tiles (measured on PolyBench jacobi-2d and heat-3d, 2 threads): 32 steps
                // by 64 rows over whole 2-D rows, 16 cubed over whole rows of a 3-D grid.
                sizes.assign(size_t(members), 16);
                if (members == 3) sizes = {32, 64, 1};
                // jacobi-1d, 500 steps, 2 threads: N = 2000 0.137 -> 0.105 ms (tiles of 128 x
                // 512: 0.119; 64 x 1024: 0.120; 32 x 1024: 0.150), N = 10^4 0.76 -> 0.43 ms,
                // N = 10^5 (1000 steps) 25.7 -> 7.3 ms; N = 400 and 120 as fast as before.
                if (row_tiles) sizes = {kRowTileSteps, kRowTilePoints};
            }
            if (skew && !row_tiles) {
                sizes.pop_back();
                n = split_band(n, tiled_members);
            }
            // A register tile's rows that divide the unrolled member's tile become its tile
            // (register_tile_shape); the second level keeps the member's reach (factor x rows).
            std::optional<RegisterTileShape> register_shape;
            int row_split = 1;
            if (!interleaved && !skew && point_order.empty() && o_.tile_sizes.empty() && thread_member < 0) {
                register_shape = register_tile_shape(n, order);
                if (register_shape && register_shape->rows < sizes[size_t(register_shape->unroll)]) {
                    row_split = sizes[size_t(register_shape->unroll)] / register_shape->rows;
                    sizes[size_t(register_shape->unroll)] = register_shape->rows;
                }
            }
            tiles_.push_back(sizes);
            if (row_tiles)
                notes_.push_back("time tiles of " + std::to_string(sizes[0]) + " steps by " + std::to_string(sizes[1]) +
                                 " points of the row (a 1-D stencil: the row is tiled too)");
            isl::schedule_node untiled = n;
            isl::schedule_node tile = tile_band(n, sizes);
            chain_members += tiled_members;
            // A second level of tiles (outer_tile_factors) for the outer cache,
            // where the tiles run in parallel. Where they run as wavefronts or in order (lu's and
            // cholesky's steps k carry dependences), it gained nothing and doubled the compile:
            // N = 2000, 2 threads, lu 559 -> 566 ms run, 366 -> 175 ms compile (AST 178 -> 45);
            // cholesky 198 -> 201 ms, 390 -> 173 ms (AST 184 -> 60).
            bool outer_coincident = isl_schedule_node_band_member_get_coincident(n.get(), 0) == isl_bool_true;
            if (members >= 3 && !skew && !o_.gpu && outer_coincident) {
                std::vector<int> factors = outer_tile_factors(tile);
                // A member tiled by one (its tiles reuse nothing: loop_order.h) is not grouped
                // again either: bilateral_grid's histogram cells went in blocks of 4 x 4.
                for (size_t k = 0; k < factors.size() && k < sizes.size(); ++k)
                    if (sizes[k] == 1) factors[k] = 1;
                if (register_shape) factors[size_t(register_shape->unroll)] *= row_split;
                isl::schedule_node outer = tile_band(tile, factors);
                int outer_parallel = 0;
                tile = permute_band(outer, coincident_members_first(outer, outer_parallel));
                chain_members += members;
                std::string listed;
                for (int f : factors) listed += (listed.empty() ? "" : " x ") + std::to_string(f);
                notes_.push_back("a second level of tiles (" + listed +
                                 " first-level tiles per loop; its parallel loops outermost)");
            }
            // The point band lies below the tile band(s); mark its innermost member vector, then
            // climb back (edits below a node leave its ancestors in place).
            isl::schedule_node point = tile;
            int steps = 0;
            for (int seen = 0; seen < chain_members - members; ++steps) {
                seen += int(isl_schedule_node_band_n_member(point.get()));
                point = point.child(0);
            }
            if (!point_order.empty()) point = permute_band(point, point_order);
            bool register_tiled = false;
            if (register_shape) {
                int sunk_members = 0;
                std::optional<isl::schedule_node> edited = register_tile_point_band(point, untiled, *register_shape, sunk_members);
                if (edited) {
                    point = *edited;
                    register_tiled = true;
                    // The vector member is now two loops, and the bands the rows and the block
                    // went under are part of the edited chain.
                    chain_members += 1 + sunk_members;
                }
            }
            if (interleaved) point = unroll_full_tiles(point, 1, model_sizes[0]);
            if (skew && !row_tiles) {
                point = point.child(0);  // the whole innermost loop, below the point band
                ++steps;
            }
            if (thread_member >= 0) point = mark_thread_member(point, thread_member);
            else if (!interleaved && !register_tiled) point = mark_innermost_vector(point);
            if (skew && !row_tiles && !o_.gpu && thread_member < 0 && is_band(point)) {
                // The whole row loop of a skewed band stayed a recurrence (no vector mark:
                // seidel-2d's rows, each element waiting for its left neighbour through six
                // additions and a division): kJammedRows rows run jammed in it, their chains
                // in flight together (jam_rows; the point band is permutable).
                point = jam_rows(point.parent(), kJammedRows).child(0);
                chain_members += 1;
                jammed = true;
                notes_.push_back("rows jammed: " + std::to_string(kJammedRows) + " rows of each time tile run together along the row loop");
            }
            for (int i = 0; i < steps; ++i) point = point.parent();
            n = mark_parallel_and_vector(point, parallel, false);
            if (!parallel && allow_parallel && o_.parallel && in_sequential_loop) {
                // Wavefronts inside a loop that runs in order (floyd-warshall's step k around
                // its rows and columns) would open a parallel region per wavefront per outer
                // iteration, for a few tiles each: measured 2.4x slower than running in order.
                notes_.push_back("tiles run in order (no wavefronts inside the sequential loop around them)");
            } else if (!parallel && allow_parallel && o_.parallel) {
                // No tile loop is parallel (a time-tiled stencil: every member carries a
                // dependence): run the tiles by wavefronts instead.
                Wavefront w = wavefront_band(n);
                if (w.band) {
                    n = *w.band;
                    wavefront = true;
                    notes_.push_back("tiles run in parallel wavefronts (tile loops 1 + 2)");
                }
            }
            if (jammed) {
                // The jammed rows (the last band of the chain) unrolled where all of them run,
                // now that the tile loops above, whose values the isolate option names, are final.
                isl::schedule_node at = n;
                int down = 0;
                for (int seen = 0;; ++down) {
                    if (is_band(at) && (seen += int(isl_schedule_node_band_n_member(at.get()))) >= chain_members) break;
                    at = at.child(0);
                }
                at = unroll_full_tiles(at, 0, kJammedRows);
                for (int i = 0; i < down; ++i) at = at.parent();
                n = at;
            }
        } else {
            n = mark_parallel_and_vector(n, parallel, members > 0);
        }
        // Descend past the edited chain of bands and marks to the band's original child.
        int steps = 0;
        for (int seen = 0;;) {
            if (is_band(n)) seen += int(isl_schedule_node_band_n_member(n.get()));
            n = n.child(0);
            ++steps;
            if (seen >= chain_members) break;
        }
        n = visit(n, allow_parallel && !parallel && !wavefront, in_sequential_loop || (members > 0 && !parallel && !wavefront));
        for (int i = 0; i < steps; ++i) n = n.parent();
        return n;
    }

private:
    // A triangular solve's rows in blocks (substitution_blocks.h): the bulk of each block in
    // parallel or interleaved, where the band would otherwise run as wavefronts of tiles.
    std::optional<isl::schedule_node> substitution_blocks(const isl::schedule_node &band) {
        if (o_.gpu || !o_.tile_sizes.empty() || skewed(band) || isl_schedule_node_band_n_member(band.get()) != 2) return std::nullopt;
        for (int k = 0; k < 2; ++k)
            if (isl_schedule_node_band_member_get_coincident(band.get(), k) == isl_bool_true) return std::nullopt;
        SubstitutionBlocks blocks = substitution_row_blocks(band, order_, kSubstitutionBlockRows);
        if (!blocks.band) return std::nullopt;
        notes_.push_back("rows in blocks of " + std::to_string(kSubstitutionBlockRows) +
                         " (a substitution: the rows of a block read earlier blocks but near the diagonal)");
        return blocks.band;
    }

    // The pieces around the writers of a statement's own reads, for distribute_innermost_member,
    // along instance dimension `d` counted from the last (0: the innermost, 1: the one outside
    // it): the instances that write an element another instance reads, one equal to it in
    // every dimension before d and different in d; those before them in d; and those after.
    // In Floyd-Warshall's step k, p(j, i) = min(p(j, i), p(k, i) + p(j, k)): along j (d = 0)
    // row i's p(k, i) is written by its instance j == k, and along i (d = 1) row k, p(j, k), by
    // the row i == k. The writers must sit at one position of d for each iteration of the
    // dimensions before it; otherwise, or with none, empty.
    std::vector<isl::union_set> pieces_around_own_read_writers(const isl::schedule_node &band, int d_from_last) {
        isl::union_set domain = isl::manage(isl_schedule_node_get_domain(band.get()));
        isl::union_set before = isl::union_set::empty(m_.ctx()), at = before, after = before;
        bool found = false;
        for (const isl::set &dom : sets_of(domain)) {
            const char *name = isl_set_get_tuple_name(dom.get());
            int index = name ? m_.statement_index(name) : -1;
            const Statement *s = index >= 0 ? &m_.statements[size_t(index)] : nullptr;
            int n = int(isl_set_dim(dom.get(), isl_dim_set)), d = n - 1 - d_from_last;
            if (!s || d < 1 || s->write.relation.is_null() || !s->write.exact) {
                before = before.unite(isl::union_set(dom));
                continue;
            }
            isl::space space = dom.space();
            // Pairs of instances equal in every dimension before d, and those also equal in d.
            isl::map same_outer = isl::manage(isl_map_universe(isl_space_map_from_set(space.copy())));
            for (int k = 0; k < d; ++k)
                same_outer = isl::manage(isl_map_equate(same_outer.release(), isl_dim_in, k, isl_dim_out, k));
            isl::map same_at_d = isl::manage(isl_map_equate(same_outer.copy(), isl_dim_in, d, isl_dim_out, d));
            isl::map write = s->write.relation.intersect_domain(dom);
            isl::set writers = isl::manage(isl_set_empty(space.copy()));
            for (const Access &r : s->reads) {
                if (r.array != s->write.array || !r.exact) continue;
                // reader -> the instance writing what it reads, in the same outer iteration, elsewhere in d
                isl::map conflict = r.relation.intersect_domain(dom).apply_range(write.reverse());
                writers = writers.unite(conflict.intersect(same_outer).subtract(same_at_d).range());
            }
            writers = writers.coalesce();
            if (writers.is_empty()) {
                before = before.unite(isl::union_set(dom));
                continue;
            }
            // One position of d per outer iteration.
            isl::map writer_pairs = same_outer.intersect_domain(writers).intersect_range(writers);
            if (!writer_pairs.is_subset(same_at_d)) return {};
            isl::map to_writers = same_outer.intersect_range(writers);
            isl::map gt = isl::manage(isl_map_order_gt(to_writers.copy(), isl_dim_in, d, isl_dim_out, d));
            isl::set on = to_writers.intersect(same_at_d).domain().intersect(dom);
            isl::set hi = gt.domain().intersect(dom);
            before = before.unite(isl::union_set(dom.subtract(on).subtract(hi)));
            at = at.unite(isl::union_set(on));
            after = after.unite(isl::union_set(hi));
            found = true;
        }
        if (!found) return {};
        std::vector<isl::union_set> pieces;
        for (const isl::union_set &p : {before, at, after})
            if (!p.is_empty()) pieces.push_back(p.coalesce());
        return pieces;
    }

    // The band's statements grouped by the members along which each stays at one position
    // (covariance's division cov(j, i) /= N - 1, which isl fuses into its reduction's band
    // (i, j, k) at k = N), each group distributed into a band of its own (distribute_band)
    // where there are several groups and the dependences allow it. The tiled band of the
    // reduction alone has no tiles that hold the division: isl's AST of the fused band split
    // every tile loop into the cases with and without the last k (covariance: 408 ms of AST).
    // Under the scheduler's quota; nothing where it is exceeded.
    std::optional<isl::schedule_node> distribute_statements_fixed_along_members(const isl::schedule_node &band) {
        std::optional<isl::schedule_node> result;
        within_quota(m_.ctx(), o_.max_operations, [&] {
            int members = int(isl_schedule_node_band_n_member(band.get()));
            isl::union_set domain = isl::manage(isl_schedule_node_get_domain(band.get()));
            std::map<std::string, std::vector<int>> dims = member_dims(band, members);
            std::vector<std::pair<std::vector<bool>, isl::union_set>> groups;
            for (const isl::set &s : sets_of(domain)) {
                bool has_dims = isl_set_dim(s.get(), isl_dim_set) > 0;
                std::vector<bool> f;
                for (int d : dims[isl_set_get_tuple_name(s.get())]) f.push_back(has_dims && d == kConstantMember);
                auto it = std::find_if(groups.begin(), groups.end(), [&](const auto &g) { return g.first == f; });
                if (it == groups.end()) groups.emplace_back(f, isl::union_set(s));
                else it->second = it->second.unite(isl::union_set(s));
            }
            if (groups.size() < 2) return;
            std::vector<isl::union_set> pieces;
            for (const auto &g : groups) pieces.push_back(g.second);
            Distribution d = distribute_band(band, order_, pieces);
            if (!d.node) return;
            notes_.push_back("statements at one position along a loop of the band distributed into bands of their own");
            result = d.node;
        });
        return result;
    }

    // distribute_innermost_member of `band`'s innermost member over the pieces around the
    // writers along dimension `d_from_last` of the statements at `analysed` (the same band,
    // or it before a split). Under the scheduler's quota, like every isl analysis here; out of
    // it, or with no such writers, no distribution.
    Distribution distribute_around_writers(const isl::schedule_node &analysed, const isl::schedule_node &band,
                                           int d_from_last) {
        Distribution d;
        if (!within_quota(m_.ctx(), o_.max_operations, [&] {
                std::vector<isl::union_set> pieces = pieces_around_own_read_writers(analysed, d_from_last);
                if (!pieces.empty()) d = distribute_innermost_member(band, order_, pieces);
            }))
            return Distribution{};
        return d;
    }

    // Whether member `k` of the band iterates, in every statement, exactly the instance
    // dimension `d_from_last` from the last.
    static bool member_iterates(const isl::schedule_node &band, int k, int d_from_last) {
        isl::multi_union_pw_aff mupa = isl::manage(isl_schedule_node_band_get_partial_schedule(band.get()));
        isl_union_pw_aff *upa = isl_multi_union_pw_aff_get_at(mupa.get(), k);
        struct Check {
            int d_from_last;
            bool ok = true;
        } check{d_from_last};
        isl_union_pw_aff_foreach_pw_aff(
            upa,
            [](isl_pw_aff *pa, void *user) {
                auto *c = static_cast<Check *>(user);
                int n = int(isl_pw_aff_dim(pa, isl_dim_in)), want = n - 1 - c->d_from_last;
                for (int d = 0; d < n; ++d)
                    if ((isl_pw_aff_involves_dims(pa, isl_dim_in, unsigned(d), 1) == isl_bool_true) != (d == want)) c->ok = false;
                isl_pw_aff_free(pa);
                return isl_stat_ok;
            },
            &check);
        isl_union_pw_aff_free(upa);
        return check.ok;
    }

    // A band none of whose loops is parallel, whose last two members iterate its statements'
    // last two dimensions (rows, then the innermost loop), where one row per iteration of the
    // loops around writes what the other rows read (Floyd-Warshall's row k in step k): its rows
    // distributed into those before that row, the row, and those after
    // (distribute_innermost_member), each a parallel loop of rows, and in each the innermost
    // loop distributed or marked vector as in mark_innermost_vector. Nothing otherwise.
    std::optional<isl::schedule_node> distribute_rows(const isl::schedule_node &band, bool allow_parallel) {
        if (o_.gpu || !o_.tile_sizes.empty() || skewed(band)) return std::nullopt;
        int members = int(isl_schedule_node_band_n_member(band.get()));
        if (members < 2) return std::nullopt;
        for (int k = 0; k < members; ++k)
            if (isl_schedule_node_band_member_get_coincident(band.get(), k) == isl_bool_true) return std::nullopt;
        if (!member_iterates(band, members - 2, 1) || !member_iterates(band, members - 1, 0)) return std::nullopt;
        Distribution d = distribute_around_writers(band, split_band(band, members - 1), 1);
        if (!d.node) return std::nullopt;
        isl::schedule_node seq = members > 2 ? d.node->child(0) : *d.node;
        int pieces = int(isl_schedule_node_n_children(seq.get()));
        bool parallel = allow_parallel && o_.parallel;
        for (int k = 0; k < pieces; ++k) {
            isl::schedule_node rows = seq.child(k).child(0);
            if (parallel) rows = insert_mark(rows, Mark::parallel(1)).child(0);
            isl::schedule_node inner = mark_innermost_vector(rows.child(0));
            rows = inner.parent();
            if (parallel) rows = rows.parent();
            seq = rows.parent().parent();
        }
        notes_.push_back("rows distributed into " + std::to_string(pieces) +
                         (parallel ? " parallel loops" : " loops") + " around the row the others read");
        return members > 2 ? seq.parent() : seq;
    }

    // The shape of a register tile (register_tiling.h) for a band of an update whose innermost
    // member is the vector loop and whose written element stays the same along some other member
    // (the reduction loop): which coincident member outside it is unrolled (its tile's rows), how
    // many rows, and how many vectors of each row stay in registers across the reduction.
    struct RegisterTileShape {
        int unroll = -1;  // the member whose rows are unrolled
        int rows = 0;     // rows per register tile: the member's tile size, or a divisor of it
        int vectors = 0;  // vector registers per row
        int block = 0;    // elements per row: vectors x lanes
    };

    // The shape with the fewest loads per multiply-add, on `band` (coincidence read there) with
    // the point loops' order and tile sizes `order`; nothing when the band has no such shape.
    // Accumulators: rows x vectors per row, within the register file less 4 for the operands
    // (32 vector registers with AVX-512, 16 with AVX2), at most 2 vectors a row. An operand
    // invariant along the rows is loaded once for all of them, one invariant along the vector
    // loop is one broadcast per row (matmul, rows i: 2 vectors of B and 8 broadcasts of A for 16
    // multiply-adds; conv, rows the output channel: 2 vectors of the input and 8 of the weights,
    // where rows of the image would load 16 vectors of the input). A member's rows may be a
    // divisor of its tile (the caller then tiles it by the rows): with AVX2's 16 registers, 8
    // rows leave room for one vector a row (1 load and 8 broadcasts for 8 multiply-adds), 4 rows
    // for two (2 loads and 4 broadcasts for 8); conv2d 56 x 56 x 64 -> 64 with fused
    // multiply-adds, one thread: 4.9-5.0 -> 3.4 ms.
    std::optional<RegisterTileShape> register_tile_shape(const isl::schedule_node &band, const LoopOrder &order) const {
        if (!o_.register_tiling || o_.vector_width < 2) return std::nullopt;
        int members = int(isl_schedule_node_band_n_member(band.get()));
        if (members < 3 || int(order.tile_sizes.size()) != members || int(order.write_invariant.size()) != members ||
            int(order.write_contiguous.size()) != members)
            return std::nullopt;
        auto coincident = [&](int k) { return isl_schedule_node_band_member_get_coincident(band.get(), k) == isl_bool_true; };
        int v = members - 1;
        int lanes = o_.vector_width * 4 / std::max(1, order.element_bytes);
        int registers = o_.vector_width >= 16 ? 32 : 16;
        auto vectors_for = [&](int rows) { return std::max(1, std::min(2, (registers - 4) / std::max(1, rows))); };
        auto loads = [&](int k, int rows) {
            const int vectors = vectors_for(rows);
            if (order.operand_invariant.size() != size_t(members)) return 0;
            const std::vector<bool> &along_rows = order.operand_invariant[size_t(k)], &along_vector = order.operand_invariant[size_t(v)];
            int n = 0;
            for (size_t a = 0; a < along_rows.size() && a < along_vector.size(); ++a)
                n += (along_rows[a] ? 1 : rows) * (along_vector[a] ? 1 : vectors);
            return n;
        };
        // Loads per multiply-add, compared exactly as fractions; of equals, more accumulators, then
        // the innermost member. (Not a member tiled by one, a batch: one row.)
        RegisterTileShape best;
        bool reduction = false;
        auto better = [&](int k, int rows) {
            if (best.unroll < 0) return true;
            long a = long(loads(k, rows)) * best.rows * best.vectors, b = long(loads(best.unroll, best.rows)) * rows * vectors_for(rows);
            if (a != b) return a < b;
            if (rows * vectors_for(rows) != best.rows * best.vectors) return rows * vectors_for(rows) > best.rows * best.vectors;
            return k != best.unroll;  // (a member's whole tile before a divisor of it as good)
        };
        for (int k = 0; k < v; ++k) {
            if (!coincident(k) && order.write_invariant[size_t(k)]) reduction = true;
            const int tile = order.tile_sizes[size_t(k)];
            if (!coincident(k) || order.write_invariant[size_t(k)] || tile < 2 || tile > kMaxUnroll) continue;
            for (int rows = tile; rows >= 2 && tile % rows == 0; rows /= 2)
                if (better(k, rows)) best = {k, rows, vectors_for(rows), 0};
        }
        // The block of the output stays in vector registers only if it is whole vectors: the
        // write contiguous along the vector loop. A strided write would be one scalar store per
        // lane and row (fuzzer seed 2427171: 1,024 stores of int8 in one block, 20,000
        // instructions, 4 s in LLVM's SLP vectorizer), for no reuse in registers.
        if (!reduction || best.unroll < 0 || !coincident(v) || !order.write_contiguous[size_t(v)]) return std::nullopt;
        best.block = lanes * best.vectors;
        if (lanes < 2 || order.tile_sizes[size_t(v)] % best.block != 0) return std::nullopt;
        return best;
    }

    // Register tiling (register_tiling.h) of the point band at `point`, in `shape` (whose rows
    // are the unrolled member's tile size): the member's rows move just outside the vector loop,
    // and vector blocks of each row stay in registers across the reduction. Nothing when the
    // band's statements do not allow it (register_tile's reasons).
    // `untiled`: the band before it was tiled (same members, same order), on which the bounds
    // of rows and block are compared: its instances have no tile loops to project out.
    // `sunk_members`: set to the members of the bands below the point band that the rows and
    // the block went under (register_tiling.h).
    std::optional<isl::schedule_node> register_tile_point_band(const isl::schedule_node &point, const isl::schedule_node &untiled,
                                                               const RegisterTileShape &shape, int &sunk_members) {
        RegisterTiling rt = register_tile(m_, point, shape.unroll, shape.rows, shape.block, untiled);
        if (!rt.band) return std::nullopt;
        sunk_members = rt.sunk_members;
        notes_.push_back("register tiles of " + std::to_string(shape.rows) + " x " + std::to_string(shape.block) +
                         " (unrolled rows by vector blocks) across the reduction loop");
        return rt.band;
    }
    static constexpr int kMaxUnroll = 8;
    static constexpr int kJammedRows = 2;
    // Time tiles of a 1-D stencil: steps by points of the (skewed) row.
    static constexpr int kRowTileSteps = 128;
    static constexpr int kRowTilePoints = 1024;
    // Rows per block of a substitution (trisolv N = 2000, 2 threads: 64 rows 0.46 ms, 128 rows
    // 0.40 ms, 256 rows 0.42 ms): fewer blocks fork fewer parallel loops, smaller ones leave
    // less of each row to the serial part near the diagonal.
    static constexpr int kSubstitutionBlockRows = 128;

    // Marks the innermost member of the point band at `point` "vector" when it is coincident,
    // or when it carries none of the dependences with every loop around it fixed (the point
    // loops of a skewed band, whose outer point loop carries them all). Returns the topmost
    // node of the edited band.
    // GPU targets: the point band (parallel members, the thread member at `t`, reductions)
    // split into (members before t) (vector mark: the thread loop) (t) (the reductions), which
    // map_to_gpu turns into a thread loop around each thread's reductions. Returns the top band.
    isl::schedule_node mark_thread_member(isl::schedule_node point, int t) {
        int members = int(isl_schedule_node_band_n_member(point.get()));
        isl::schedule_node band = point;
        if (t > 0) band = split_band(band, t).child(0);
        if (members - t > 1) band = split_band(band, 1);
        band = insert_mark(band, Mark::vector());
        return t > 0 ? band.parent() : band;
    }

    // Whether the one-member band at `node` carries a dependence of `order_` between some
    // statement's instance x and the next one along the dimension the band runs over
    // (member_dims), x + e_d, found at one sample x: both at equal values of every loop around
    // the band, and at different values of the band. A witness only: false says nothing. (A
    // reduction's update depends on itself one step along its reduction loop; isl's
    // carries_dependences took 2-6 ms to find that below a transformer layer's tile loops, the
    // witness about 1 ms.)
    bool carries_unit_step(const isl::schedule_node &node) const {
        std::map<std::string, std::vector<int>> dims = member_dims(node, 1);
        isl_union_pw_multi_aff *prefix = isl_schedule_node_get_prefix_schedule_union_pw_multi_aff(node.get());
        isl_union_pw_multi_aff *band =
            isl_union_pw_multi_aff_from_multi_union_pw_aff(isl_schedule_node_band_get_partial_schedule(node.get()));
        bool carried = false;
        for (const isl::set &set : sets_of(isl::manage(isl_schedule_node_get_domain(node.get())))) {
            auto d = dims.find(isl_set_get_tuple_name(set.get()));
            if (carried || d == dims.end() || d->second.empty() || d->second[0] < 0) continue;
            int dim = d->second[0];
            isl_map *next = isl_map_from_multi_aff(step_along(isl_set_get_space(set.get()), dim));
            isl::union_map steps = order_.intersect(isl::union_map(isl::manage(next)));
            isl::set from = isl::manage(isl_set_intersect_params(
                isl_union_set_extract_set(steps.domain().release(), isl_set_get_space(set.get())), m_.context.copy()));
            if (from.is_empty()) continue;
            // Both schedules over the sample's parameters, in its order.
            isl_space *space = isl_set_get_space(from.get());
            auto aligned = [&](isl_union_pw_multi_aff *u) {
                // (The function of this statement's instances.)
                isl_union_pw_multi_aff *of = isl_union_pw_multi_aff_intersect_domain(
                    isl_union_pw_multi_aff_copy(u), isl_union_set_from_set(isl_set_universe(isl_space_copy(space))));
                isl_pw_multi_aff_list *list = isl_union_pw_multi_aff_get_pw_multi_aff_list(of);
                isl_union_pw_multi_aff_free(of);
                isl_pw_multi_aff *f = isl_pw_multi_aff_list_size(list) == 1 ? isl_pw_multi_aff_list_get_at(list, 0) : nullptr;
                isl_pw_multi_aff_list_free(list);
                return f ? isl_pw_multi_aff_align_params(f, isl_space_params(isl_space_copy(space))) : nullptr;
            };
            isl_pw_multi_aff *outer = aligned(prefix), *member = aligned(band);
            isl_point *x = isl_set_sample_point(isl_set_align_params(from.copy(), isl_space_params(isl_space_copy(space))));
            isl_space_free(space);
            // Whether `f` is equal (want_equal) or unequal at x and x + e_d, every member evaluated
            // to an integer at both (otherwise no witness either way).
            auto compare = [&](isl_pw_multi_aff *f, bool want_equal) {
                isl_point *y = isl_point_add_ui(isl_point_copy(x), isl_dim_set, dim, 1);
                isl_size n = isl_pw_multi_aff_dim(f, isl_dim_out);
                bool evaluated = n >= 0, all_equal = true;
                for (isl_size i = 0; evaluated && i < n; ++i) {
                    isl_pw_aff *pa = isl_pw_multi_aff_get_at(f, int(i));
                    isl_val *at_x = isl_pw_aff_eval(isl_pw_aff_copy(pa), isl_point_copy(x));
                    isl_val *at_y = isl_pw_aff_eval(pa, isl_point_copy(y));
                    evaluated = at_x && at_y && isl_val_is_int(at_x) == isl_bool_true && isl_val_is_int(at_y) == isl_bool_true;
                    all_equal = all_equal && evaluated && isl_val_eq(at_x, at_y) == isl_bool_true;
                    isl_val_free(at_x);
                    isl_val_free(at_y);
                }
                isl_point_free(y);
                return evaluated && (want_equal ? all_equal : n > 0 && !all_equal);
            };
            carried = x && isl_point_is_void(x) == isl_bool_false && outer && member && compare(outer, true) && compare(member, false);
            isl_point_free(x);
            isl_pw_multi_aff_free(outer);
            isl_pw_multi_aff_free(member);
        }
        isl_union_pw_multi_aff_free(prefix);
        isl_union_pw_multi_aff_free(band);
        return carried;
    }

    isl::schedule_node mark_innermost_vector(isl::schedule_node point) {
        int members = int(isl_schedule_node_band_n_member(point.get()));
        if (isl_schedule_node_band_member_get_coincident(point.get(), members - 1) == isl_bool_true) {
            if (std::optional<isl::schedule_node> sunk = sink_vector_member(point, members)) return *sunk;
            return mark_parallel_and_vector(point, false, true);
        }
        if (!o_.gpu) {
            // Distributed around the writers of the statement's own reads, each piece's loop
            // vectorizes (Floyd-Warshall).
            Distribution d = distribute_around_writers(point, point, 0);
            if (d.node) {
                isl::schedule_node seq = members > 1 ? d.node->child(0) : *d.node;
                int n = int(isl_schedule_node_n_children(seq.get()));
                for (int k = 0; k < n; ++k) seq = insert_mark(seq.child(k).child(0), Mark::vector()).parent().parent();
                std::string note = "innermost loop distributed into " + std::to_string(n) +
                                   " vector loops around the writers of the update's own reads";
                if (std::find(notes_.begin(), notes_.end(), note) == notes_.end()) notes_.push_back(note);
                return members > 1 ? seq.parent() : seq;
            }
        }
        isl::schedule_node inner = members > 1 ? split_band(point, members - 1).child(0) : point;
        // (The witness first: a reduction's update found carried in a fraction of the time.)
        bool fast = carries_unit_step(inner);
        if (!fast && !carries_dependences(inner, order_)) inner = insert_mark(inner, Mark::vector());
        return members > 1 ? inner.parent() : inner;
    }

    // The coincident last member of the point band moved below the bands under it when they
    // are a chain of reduction bands (no coincident member) down to the statement, and marked
    // vector there; the node at the point band's place, or nothing when the subtree has no such
    // shape. A scatter's reduction: the bilateral grid's `grid(x, y, z(r), c) += ...` has c
    // (the channel, coincident) last in its band and r.x in a band below, so the vector mark
    // fell on a loop with a loop inside, which ran as a plain loop around the reduction: each
    // pixel's bin was computed once per channel. Below the chain, the channel loop holds one
    // pixel's updates, whose shared part (the pixel, its bin) LLVM hoists out of it. Moving a
    // coincident member inward is legal: every dependence has distance 0 along it.
    std::optional<isl::schedule_node> sink_vector_member(const isl::schedule_node &point, int members) {
        if (o_.gpu) return std::nullopt;
        int chain = 0;
        for (isl::schedule_node below = point.child(0);; below = below.child(0)) {
            if (isl_schedule_node_get_type(below.get()) == isl_schedule_node_leaf) break;
            if (!is_band(below) || isl_schedule_node_n_children(below.get()) != 1) return std::nullopt;
            for (int k = 0; k < int(isl_schedule_node_band_n_member(below.get())); ++k)
                if (isl_schedule_node_band_member_get_coincident(below.get(), k) == isl_bool_true) return std::nullopt;
            ++chain;
        }
        if (chain == 0) return std::nullopt;
        isl::schedule_node last = members > 1 ? split_band(point, members - 1).child(0) : point;
        isl_multi_union_pw_aff *mupa = isl_schedule_node_band_get_partial_schedule(last.get());
        isl_space *params = isl_multi_union_pw_aff_get_space(mupa);
        params = isl_space_params(params);
        isl_union_pw_aff *member = isl_multi_union_pw_aff_get_at(mupa, 0);
        isl_multi_union_pw_aff_free(mupa);
        isl::schedule_node n = isl::manage(isl_schedule_node_delete(last.copy()));
        for (int k = 0; k < chain; ++k) n = n.child(0);
        n = insert_permutable_band(n, params, isl_union_pw_aff_list_from_union_pw_aff(member), {true});
        n = mark_parallel_and_vector(n, false, true);
        // Back to the point band's place: from the mark up the chain, then the band's other
        // members above it.
        for (int k = 0; k < chain; ++k) n = n.parent();
        if (members > 1) n = n.parent();
        std::string note = "the coincident innermost member moved below the reduction bands under it, where it is the vector loop";
        if (std::find(notes_.begin(), notes_.end(), note) == notes_.end()) notes_.push_back(note);
        return n;
    }

    const Model &m_;
    const ScheduleOptions &o_;
    const isl::union_map &order_;  // the dependences (and extra order) the schedule respects
    std::vector<std::vector<int>> &tiles_;
    std::vector<std::string> &notes_;
};

} // namespace

AffineGroupSchedule affine_group_schedule(const Model &m, const std::vector<int> &statements, const Dependences &d,
                                          const ScheduleOptions &o, const isl::union_map *extra_order) {
    AffineGroupSchedule r;
    isl::union_set dom = domain_of(m, statements);
    r.schedule = original_order(m, dom);
    isl::union_map deps = d.all().intersect_domain(dom).intersect_range(dom);

    isl_ctx *ctx = m.ctx().get();
    isl_options_set_schedule_outer_coincidence(ctx, o.outer_coincidence ? 1 : 0);
    isl_options_set_schedule_maximize_band_depth(ctx, 1);
    isl_options_set_schedule_max_coefficient(ctx, 20);
    isl_options_set_schedule_max_constant_term(ctx, 20);
    isl_options_set_schedule_serialize_sccs(ctx, o.fusion == Fusion::None ? 1 : 0);
    isl::schedule computed;
    isl::union_map order = deps;
    if (extra_order) order = order.unite(extra_order->intersect_domain(dom).intersect_range(dom));
    try {
        // On private copies: isl stopped by the quota partway may leave the pieces it worked on
        // broken, and the model's domains, context and dependences (which these share pieces
        // with) serve the original order below and everything after it.
        isl::union_set own_dom = copied_to(m.ctx(), dom);
        isl::union_map own_order = copied_to(m.ctx(), order), own_deps = copied_to(m.ctx(), deps);
        isl::set own_context = copied_to(m.ctx(), m.context);
        OperationQuota quota(m.ctx(), o.max_operations);
        isl::schedule_constraints sc = isl::schedule_constraints::on_domain(own_dom);
        sc = sc.set_context(own_context).set_validity(own_order).set_coincidence(own_order).set_proximity(own_deps);
        computed = sc.compute_schedule();
    } catch (const isl::exception_quota &) {
        r.note = "isl's scheduler exceeded its operation quota (max_operations); kept the original order";
        return r;
    } catch (const isl::exception &e) {
        // isl's scheduler can fail outright ("unable to carry dependences" with bounded
        // coefficients): the original order is legal, so keep it.
        isl_ctx_reset_error(ctx);
        r.note = std::string("isl's scheduler failed (") + e.what() + "); kept the original order";
        return r;
    }
    r.scheduled = true;
    std::vector<std::string> notes;
    BandEditor editor(m, o, order, r.tile_sizes, notes);
    isl::schedule_node root = computed.root();
    r.schedule = editor.visit(root, true).schedule();
    for (const std::string &n : notes) r.note += (r.note.empty() ? "loop order: " : "; ") + n;
    return r;
}

} // namespace tessera::poly
