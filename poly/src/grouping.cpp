#include "tessera/poly/grouping.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <isl/aff.h>
#include <isl/map.h>
#include <isl/val.h>

#include "tessera/poly/overlapped_tiling.h"

namespace tessera::poly {
namespace {

// Work of one evaluation of a statement: its arithmetic and memory operations.
int64_t cost_of(const Statement &s) {
    int64_t n = 0;
    ir::visit(s.value, [&](const Expr &e) {
        if (!e->args.empty()) ++n;
        return true;
    });
    return std::max<int64_t>(n, 1);
}

struct Estimate {
    bool feasible = false;
    double recompute = 0;
    int64_t working_set = 0;
    // GPU targets: the global memory one tile moves, in bytes of whole 32-byte sectors.
    double traffic = 0;
    std::string why_not;
};

struct PlanState {
    GroupPlan plan;
    std::optional<Footprints> probe;  // footprints at the probe tile sizes (overlapped groups)
};

class Planner {
public:
    Planner(const Model &m, const ScheduleOptions &o, const std::set<const FuncContents *> &alone)
        : m_(m), o_(o), alone_(alone) {
        for (const Statement &s : m.statements) cost_.push_back(cost_of(s));
    }

    std::vector<GroupPlan> plan() {
        for (const auto &f : m_.graph.funcs) {
            PlanState g;
            g.plan.funcs.push_back(f.get());
            for (size_t i = 0; i < m_.statements.size(); ++i)
                if (m_.statements[i].func == f.get()) g.plan.statements.push_back(int(i));
            if (g.plan.statements.empty()) continue;  // computed nowhere (an empty region)
            // (Only overlapped groups merge: a Func left alone is never one.)
            g.plan.overlapped = f->updates.empty() && f->dimensions() >= 1 && !alone_.count(f.get());
            groups_.push_back(g);
        }
        if (o_.fusion != Fusion::None) merge_groups();
        std::vector<GroupPlan> result;
        for (PlanState &g : groups_) {
            if (g.plan.overlapped) choose_tiles(g);
            result.push_back(g.plan);
        }
        return result;
    }

private:
    int group_of(const FuncContents *f) const {
        for (size_t i = 0; i < groups_.size(); ++i) {
            const auto &fs = groups_[i].plan.funcs;
            if (std::find(fs.begin(), fs.end(), f) != fs.end()) return int(i);
        }
        return -1;
    }

    bool has_output(const GroupPlan &g) const {
        return std::any_of(g.funcs.begin(), g.funcs.end(), [&](FuncContents *f) { return m_.graph.is_output(f); });
    }

    size_t root_rank(const GroupPlan &g) const { return m_.statements[size_t(g.statements.back())].dims.size(); }

    // The sliding window a group's stages keep, if any: on a GPU each thread's column of rows
    // (column_window), on a CPU a ring of rows across the tile (sliding_window).
    std::optional<SlidingWindow> window_for(const std::vector<int> &stages) const {
        if (o_.gpu && o_.gpu_column_windows) return column_window(m_, stages);
        return o_.sliding_window ? sliding_window(m_, stages) : std::nullopt;
    }

    // Tile sizes for a root of `n` dimensions (tuple order): x wide, y as given, others 1; or the
    // user's sizes (given x first).
    std::vector<int> tiles_for(size_t n, int y) const {
        std::vector<int> t(n, 1);
        if (!o_.tile_sizes.empty()) {
            for (size_t i = 0; i < n && i < o_.tile_sizes.size(); ++i) t[n - 1 - i] = std::max(1, o_.tile_sizes[i]);
            return t;
        }
        if (n >= 1) t[n - 1] = n == 1 ? 4096 : std::max(256, o_.vector_width * 16);
        // A GPU tile is one block's: 64 x 8 points (blocks of a few warps).
        if (n >= 1 && o_.gpu) t[n - 1] = n == 1 ? 1024 : 64;
        if (n >= 2) t[n - 2] = y;
        return t;
    }

    // (Outer dimensions probed whole: a producer without a channel is not taken for one computed
    // again per channel, when the tiles chosen later may hold every channel.)
    std::vector<int> probe_tiles(const GroupPlan &g) const {
        std::vector<int> t = tiles_for(root_rank(g), o_.gpu ? 8 : 32);
        if (o_.tile_sizes.empty() && !o_.gpu)
            for (size_t j = 0; j + 2 < t.size(); ++j) t[j] = kOuterExtent;
        return t;
    }

    // How a dimension of a stage's footprint box moves with the tiles: along tile dimension
    // `tile_dim` (-1: it stays put), by `scale` times the tile's size per tile.
    struct BoxScale {
        int tile_dim = -1;
        double scale = 0;
    };

    // Footprint box sizes at other tile sizes: a dimension that spans at least the probe tile
    // grows one for one with the tile (its halo stays), the others keep their size.
    // (A stage of lower rank than the root, a 2-D demosaic under a colour image's tiles, lines up
    // with the root's innermost dimensions.) Growing a downsampled level's box twice as fast
    // (its BoxScale) is exact but chose tiles with 4 times the working sets for local_laplacian's
    // last groups, which ran 15% slower: the sizes stay one for one, only what a tile alone needs
    // of a stage (estimate) follows the scale.
    static std::vector<long> scaled(const std::vector<long> &sizes, const std::vector<int> &probe, const std::vector<int> &tiles) {
        std::vector<long> r = sizes;
        for (size_t k = 0; k < probe.size() && k < r.size(); ++k) {
            long &size = r[r.size() - 1 - k];
            size_t j = probe.size() - 1 - k;
            if (size >= probe[j]) size += tiles[j] - probe[j];
        }
        return r;
    }

    // Per stage, per dimension of its footprint box (tuple order): the tile dimension it moves
    // with and how far it moves when the tile moves by one, over the probe tile's size: 1 at the
    // root's resolution, 2 for a level the root reads downsampled by 2 (pyramid_blend's
    // gauss_1_down_x under gauss_1), 0.5 upsampled. Empty for a stage whose box bound isl gives
    // in pieces, or that moves with several tile dimensions (and for the root).
    // Memoized per stage box (box_scales_: the same boxes come back in every merge attempt).
    std::vector<std::vector<BoxScale>> box_scales(const Footprints &fp, const std::vector<int> &probe) {
        std::vector<std::vector<BoxScale>> r(fp.spread.size());
        for (size_t i = 0; i + 1 < fp.spread.size(); ++i) {
            if (!fp.spread[i] || fp.spread[i]->is_null()) continue;
            auto key = std::make_pair(static_cast<const isl_map *>(fp.spread[i]->get()), probe);
            if (auto hit = box_scales_.find(key); hit != box_scales_.end()) {
                r[i] = hit->second.second;
                continue;
            }
            r[i] = box_scale(*fp.spread[i], i < fp.offsets.size() ? fp.offsets[i] : std::nullopt, probe);
            box_scales_[key] = {*fp.spread[i], r[i]};
        }
        return r;
    }

    // The scales of one stage's box (box_scales); empty when unknown.
    // The box's low end is its offset where the footprints have one without floors (the
    // spread box is built from it); otherwise isl's minimum of the box.
    static std::vector<BoxScale> box_scale(const isl::map &box, const std::optional<isl::multi_aff> &offset,
                                           const std::vector<int> &probe) {
        isl_map *spread = box.get();
        int n = int(isl_map_dim(spread, isl_dim_out)), t = int(isl_map_dim(spread, isl_dim_in));
        std::vector<BoxScale> scale(static_cast<size_t>(n));
        bool known = t == int(probe.size());
        bool plain_offset = offset && !offset->is_null() && int(isl_multi_aff_dim(offset->get(), isl_dim_out)) == n;
        for (int d = 0; d < n && plain_offset; ++d) {
            isl_aff *a = isl_multi_aff_get_at(offset->get(), d);
            plain_offset = isl_aff_dim(a, isl_dim_div) == 0;
            isl_aff_free(a);
        }
        for (int d = 0; d < n && known; ++d) {
            isl_aff *aff = nullptr;
            isl_pw_aff *lo = plain_offset ? nullptr : isl_map_dim_min(isl_map_copy(spread), d);
            if (plain_offset) aff = isl_multi_aff_get_at(offset->get(), d);
            else if (isl_pw_aff_n_piece(lo) == 1)
                isl_pw_aff_foreach_piece(
                    lo,
                    [](isl_set *set, isl_aff *a, void *user) {
                        isl_set_free(set);
                        *static_cast<isl_aff **>(user) = a;
                        return isl_stat_ok;
                    },
                    &aff);
            isl_pw_aff_free(lo);
            if (!aff) {
                known = false;
                break;
            }
            for (int j = 0; j < t; ++j) {
                isl_val *v = isl_aff_get_coefficient_val(aff, isl_dim_in, j);
                double c = v ? std::abs(isl_val_get_d(v)) : 0;
                isl_val_free(v);
                if (c == 0) continue;
                if (scale[size_t(d)].tile_dim >= 0) known = false;  // moves with two tile dimensions
                scale[size_t(d)] = {j, c / double(probe[size_t(j)])};
            }
            isl_aff_free(aff);
        }
        return known ? scale : std::vector<BoxScale>{};
    }

    // The extent assumed for outer dimensions (beyond y and x) when choosing their tile size:
    // the number of channels of a colour image. Output extents are not known when compiling.
    static constexpr int kOuterExtent = 4;
    // The shortest tiles (rows) at which a merge over the cache at the probe's tiles is
    // estimated again (merge_groups).
    static constexpr int kMinMergeRows = 8;

    Estimate estimate(const GroupPlan &g, const Footprints &fp, const std::vector<std::vector<BoxScale>> &scales,
                      const std::vector<int> &probe, const std::vector<int> &tiles,
                      const std::optional<SlidingWindow> &window = std::nullopt) const {
        Estimate e;
        e.feasible = true;
        double tile_volume = 1;
        for (int t : tiles) tile_volume *= t;
        double useful = 0, done = 0;
        size_t rank = tiles.size();
        for (size_t i = 0; i < g.statements.size(); ++i) {
            const Statement &s = m_.statements[size_t(g.statements[i])];
            double volume = tile_volume, needed = -1;
            if (i + 1 < g.statements.size()) {
                volume = 1;
                std::vector<long> sizes = scaled(fp.sizes[i], probe, tiles);
                for (long v : sizes) volume *= double(v);
                // What one tile alone needs of a stage that moves with every tile dimension: per
                // dimension, its box or how far the box moves per tile, whichever is smaller (the
                // rest is recomputed by the neighbouring tile). Capping it at the root's tile
                // instead counted half of a level downsampled by 2 as recomputed (53% for
                // pyramid_blend's gauss_1_down_x under gauss_1), which kept every pyramid level
                // out of its consumer's tiles. (With the sizes grown one for one, see scaled(),
                // such a level's box is then all it needs at tiles above the probe's.)
                // A dimension of the stage that no tile dimension moves (a grid's intensity bins
                // and channels under an image's tiles) is needed whole by every tile. But when
                // some tile dimension moves none of the stage's, each tile along it computes the
                // same points again: left to the count below. bilateral_grid's grid stages (4-D
                // under the 2-D output) were counted as all needed, recomputation 0%, while 8-row
                // tiles computed each grid row's blur six times.
                if (scales[i].size() == s.dims.size() && sizes.size() == s.dims.size()) {
                    double own = 1;
                    std::vector<bool> moved(rank, false);
                    for (size_t d = 0; d < s.dims.size(); ++d) {
                        const BoxScale &b = scales[i][d];
                        if (b.tile_dim >= 0 && size_t(b.tile_dim) < rank) moved[size_t(b.tile_dim)] = true;
                        own *= b.tile_dim >= 0 ? std::min(double(sizes[d]), b.scale * tiles[size_t(b.tile_dim)]) : double(sizes[d]);
                    }
                    if (std::all_of(moved.begin(), moved.end(), [](bool m) { return m; })) needed = own;
                }
                // A sliding window keeps only its ring of rows.
                double kept = volume;
                if (window && window->fold[i] > 0 && size_t(window->row_dim) < sizes.size() && sizes[size_t(window->row_dim)] > 0)
                    kept = volume / double(sizes[size_t(window->row_dim)]) * double(std::min<long>(window->fold[i], sizes[size_t(window->row_dim)]));
                e.working_set += int64_t(kept) * s.func->type.bytes();
            }
            double c = double(cost_[size_t(g.statements[i])]);
            done += c * volume;
            // A stage whose box stays put along an outer tile dimension (a channel) is
            // computed again in each tile along it: as many as kOuterExtent / tile size.
            double repeats = 1;
            if (i < fp.moves_with.size())
                for (size_t j = 0; j + 2 < rank; ++j)
                    if (!(fp.moves_with[i] >> j & 1u)) repeats *= std::max(1.0, double(kOuterExtent) / tiles[j]);
            useful += c * (needed >= 0 ? needed : s.dims.size() == rank ? std::min(volume, tile_volume) : volume / repeats);
        }
        e.recompute = useful > 0 ? done / useful - 1 : 0;
        if (o_.gpu) e.traffic = tile_traffic(g, fp, probe, tiles);
        return e;
    }

    // The global memory a GPU tile moves, in bytes of whole 32-byte sectors (a warp-wide access
    // moves the sectors it touches): each row of the box of a stage that reads an array the
    // group does not compute (an input, or its staged copy: staged_inputs.h), and each row of
    // the tile's output. The halo a tile reads again of its neighbours' rows is in it; so is the
    // sector a narrow row wastes at each end. Boxes stand for the footprints they read.
    double tile_traffic(const GroupPlan &g, const Footprints &fp, const std::vector<int> &probe, const std::vector<int> &tiles) const {
        constexpr double kSector = 32;
        auto rows_bytes = [&](const std::vector<long> &box, int bytes) {
            if (box.empty()) return double(bytes);
            double rows = 1;
            for (size_t d = 0; d + 1 < box.size(); ++d) rows *= double(std::max<long>(box[d], 0));
            return rows * std::ceil(double(std::max<long>(box.back(), 0)) * bytes / kSector) * kSector;
        };
        std::set<int> computed;
        for (int st : g.statements) computed.insert(m_.statements[size_t(st)].write.array);
        std::vector<long> tile(tiles.begin(), tiles.end());
        double traffic = 0;
        for (size_t i = 0; i < g.statements.size(); ++i) {
            const Statement &s = m_.statements[size_t(g.statements[i])];
            const bool last = i + 1 == g.statements.size();
            std::vector<long> box = last ? tile : scaled(fp.sizes[i], probe, tiles);
            for (const Access &r : s.reads)
                if (!computed.count(r.array)) traffic += rows_bytes(box, m_.arrays[size_t(r.array)].type.bytes());
            if (last) traffic += rows_bytes(box, s.func->type.bytes());
        }
        return traffic;
    }

    const Footprints *probe_of(PlanState &g) {
        if (!g.probe) {
            std::string why;
            auto fp = compute_footprints(m_, g.plan.statements, probe_tiles(g.plan), why, nullptr, &reads_);
            if (!fp) return nullptr;
            g.probe = *fp;
        }
        return &*g.probe;
    }

    // The groups that read group gi's Funcs. A Func computed inline (compute_inline) has no
    // statements and no group, and stands for its own consumers (fuzzer seed 61192 with
    // --directives indexed groups_ with -1 here, an allocation failure or not depending on the
    // memory layout).
    std::vector<int> consumer_groups(size_t gi) const {
        const PlanState &g = groups_[gi];
        std::vector<int> consumers;
        std::vector<FuncContents *> readers(g.plan.funcs.begin(), g.plan.funcs.end());
        std::set<FuncContents *> seen(readers.begin(), readers.end());
        while (!readers.empty()) {
            FuncContents *f = readers.back();
            readers.pop_back();
            auto it = m_.graph.consumers.find(f);
            if (it == m_.graph.consumers.end()) continue;
            for (FuncContents *c : it->second) {
                int cg = group_of(c);
                if (cg < 0) {
                    if (seen.insert(c).second) readers.push_back(c);
                } else if (cg != int(gi) && std::find(consumers.begin(), consumers.end(), cg) == consumers.end()) {
                    consumers.push_back(cg);
                }
            }
        }
        return consumers;
    }

    // Merges a producer group into its only consumer group while overlapped tiling applies and,
    // for smart fusion, the estimates stay within bounds. A merge computes the footprints of the
    // producer's stages only; failed merges are remembered.
    void merge_groups() {
        // A failed merge is not tried again when the consumer group has grown since: its root
        // and tiles are the same, more stages only read more of the producer, so the producer's
        // footprints, the recomputation and the working set only grow (a 33-stage pyramid level
        // was tried against each of 4 consumers in turn, 0.3 s each).
        std::set<std::pair<std::vector<FuncContents *>, FuncContents *>> failed;
        for (bool changed = true; changed;) {
            changed = false;
            for (size_t gi = 0; gi < groups_.size() && !changed; ++gi) {
                PlanState &g = groups_[gi];
                std::vector<int> consumers = consumer_groups(gi);
                if (consumers.empty()) continue;
                if (!g.plan.overlapped) {
                    const FuncContents *f = g.plan.funcs.back();
                    g.plan.not_merged = !f->updates.empty() ? "it has update definitions, and only pure Funcs are computed in a consumer's tiles"
                                        : alone_.count(f)   ? "it has scheduling directives"
                                                            : "a Func of no dimensions is not tiled";
                    continue;
                }
                if (has_output(g.plan)) {
                    g.plan.not_merged = "an output of the pipeline is stored whole in its buffer";
                    continue;
                }
                if (consumers.size() != 1) {
                    std::string names;
                    for (int k : consumers) names += (names.empty() ? "" : ", ") + groups_[size_t(k)].plan.funcs.back()->name;
                    g.plan.not_merged = detail::str_cat("read by ", consumers.size(), " groups (those of ", names,
                                                        "), and a group is merged only into a single consumer");
                    continue;
                }
                size_t ci = size_t(consumers[0]);
                PlanState &c = groups_[ci];
                const std::string consumer = "the group of " + c.plan.funcs.back()->name;
                if (!c.plan.overlapped) {
                    g.plan.not_merged = consumer + " is not overlapped-tiled";
                    continue;
                }
                if (int(g.plan.funcs.size() + c.plan.funcs.size()) > o_.max_group_stages) {
                    g.plan.not_merged = detail::str_cat("merged into ", consumer, ", a group would have ",
                                                        g.plan.funcs.size() + c.plan.funcs.size(),
                                                        " stages, over max_group_stages (", o_.max_group_stages, ")");
                    continue;
                }
                auto key = std::make_pair(g.plan.funcs, c.plan.funcs.back());
                if (failed.count(key)) continue;  // (its reason is recorded)
                const Footprints *cf = probe_of(c);
                if (!cf) {
                    g.plan.not_merged = consumer + " has no per-tile footprint of fixed size";
                    continue;
                }
                PlanState merged;
                merged.plan.funcs = g.plan.funcs;
                merged.plan.funcs.insert(merged.plan.funcs.end(), c.plan.funcs.begin(), c.plan.funcs.end());
                merged.plan.statements = g.plan.statements;
                merged.plan.statements.insert(merged.plan.statements.end(), c.plan.statements.begin(), c.plan.statements.end());
                merged.plan.overlapped = true;
                // The consumer group's footprints stay valid: same root, same tiles.
                Footprints known;
                known.boxes.resize(g.plan.statements.size());
                known.sizes.resize(g.plan.statements.size());
                known.boxes.insert(known.boxes.end(), cf->boxes.begin(), cf->boxes.end());
                known.sizes.insert(known.sizes.end(), cf->sizes.begin(), cf->sizes.end());
                known.spread.resize(g.plan.statements.size());
                known.spread.insert(known.spread.end(), cf->spread.begin(), cf->spread.end());
                known.offsets.resize(g.plan.statements.size());
                known.offsets.insert(known.offsets.end(), cf->offsets.begin(), cf->offsets.end());
                known.moves_with.resize(g.plan.statements.size(), ~0u);
                known.moves_with.insert(known.moves_with.end(), cf->moves_with.begin(), cf->moves_with.end());
                std::vector<int> probe = probe_tiles(merged.plan);
                std::string why;
                auto fp = compute_footprints(m_, merged.plan.statements, probe, why, &known, &reads_);
                if (!fp) {
                    g.plan.not_merged = "in the tiles of " + consumer + ", " + why;
                    failed.insert(key);
                    continue;
                }
                // A stage every tile needs all of (camera_pipe's tone curve, 1024 pow calls)
                // is computed once, before the group, not once per tile.
                auto invariant = std::find(fp->moves_with.begin(), fp->moves_with.begin() + long(g.plan.statements.size()), 0u);
                if (invariant != fp->moves_with.begin() + long(g.plan.statements.size())) {
                    const Statement &st = m_.statements[size_t(g.plan.statements[size_t(invariant - fp->moves_with.begin())])];
                    g.plan.not_merged = detail::str_cat(st.func->name, " is read over the same region by every tile of ", consumer,
                                                        " (a lookup table): it is computed once, before that group");
                    failed.insert(key);
                    continue;
                }
                const std::optional<SlidingWindow> window = window_for(merged.plan.statements);
                const std::vector<std::vector<BoxScale>> scales = box_scales(*fp, probe);
                Estimate e = estimate(merged.plan, *fp, scales, probe, probe, window);
                // Over the cache at the probe's height, the merge still pays if shorter tiles (as
                // short as kMinMergeRows, which choose_tiles may pick) fit it within the
                // recomputation allowed: interpolate's 36 upsampling stages under its normalizing
                // stage, whose tiles hold all 4 channels.
                std::vector<int> shorter = probe;
                while (o_.fusion == Fusion::Smart && e.working_set > o_.cache_bytes && shorter.size() >= 2 &&
                       shorter[shorter.size() - 2] / 2 >= kMinMergeRows) {
                    shorter[shorter.size() - 2] /= 2;
                    Estimate s = estimate(merged.plan, *fp, scales, probe, shorter, window);
                    if (s.recompute > o_.max_recompute) break;
                    e = s;
                }
                if (o_.fusion == Fusion::Smart && (e.recompute > o_.max_recompute || e.working_set > o_.cache_bytes)) {
                    g.plan.not_merged =
                        e.recompute > o_.max_recompute
                            ? detail::str_cat("merged into ", consumer, ", the tiles would recompute an estimated ", int(e.recompute * 100 + 0.5),
                                              "% of their work, over max_recompute (", int(o_.max_recompute * 100 + 0.5), "%)")
                            : detail::str_cat("merged into ", consumer, ", a tile's working set would be ", e.working_set,
                                              " bytes, over cache_bytes (", o_.cache_bytes, ")");
                    failed.insert(key);
                    continue;
                }
                merged.probe = *fp;
                groups_[ci] = merged;
                groups_.erase(groups_.begin() + long(gi));
                changed = true;
            }
        }
    }

    // The cost factor of a tile's working set against the core's cache: 1 up to half of
    // `cache_bytes`, growing linearly to 1.25 at twice it, 1.25 beyond. It was a step (1.25 from
    // `cache_bytes` on): a change of a few percent in the working set then flipped the choice.
    // camera_pipe with its one-to-one stages inlined (automatic_inlining.h) has scratchpads of
    // 0.87 MB at 4 x 4 x 2048 and 2.8 MB at 4 x 16 x 4096, on a 1 MiB L2: the step chose the
    // first (21 ms), this the second (13.5 ms).
    double spill_penalty(int64_t working_set) const {
        double over = (double(working_set) / double(o_.cache_bytes) - 0.5) / 1.5;
        return 1 + 0.25 * std::clamp(over, 0.0, 1.0);
    }

    // Whether coordinate j of a root offset is the same in every tile (its tiles hold the whole
    // dimension).
    static bool stays_put(const isl::multi_aff &offset, int j) {
        isl_aff *a = isl_multi_aff_get_at(offset.get(), j);
        bool cst = isl_aff_is_cst(a) == isl_bool_true;
        isl_aff_free(a);
        return cst;
    }

    // Picks the tile sizes of an overlapped group (after the Jangda–Bondhugula model, which sizes
    // tiles by the cache): the shape minimizing (1 + estimated recomputation) * (1 + 512 /
    // width) * spill_penalty(working set). Wide tiles keep input rows streaming and make
    // non-temporal output stores pay; short ones recompute more halo.
    void choose_tiles(PlanState &g) {
        const Footprints *fp = probe_of(g);
        if (!fp) {
            g.plan.overlapped = false;
            g.plan.note = "overlapped tiling does not apply: a footprint per tile has no fixed size";
            return;
        }
        size_t n = root_rank(g.plan);
        std::vector<int> probe = probe_tiles(g.plan);
        std::vector<int> best;
        Estimate best_e;
        double best_score = 0;
        std::vector<int> smallest;
        Estimate smallest_e;
        std::vector<std::vector<BoxScale>> scales = box_scales(*fp, probe);
        g.plan.window = window_for(g.plan.statements);
        const std::optional<SlidingWindow> &window = g.plan.window;
        const bool columns = window && window->columns_outside;
        auto consider = [&](const std::vector<int> &tiles) {
            Estimate e = estimate(g.plan, *fp, scales, probe, tiles, window);
            smallest = tiles;
            smallest_e = e;
            // Spilling the tile out of the core's cache costs, but less than recomputing a
            // large share of a compute-heavy group: a penalty, not a limit, up to 4 times the
            // cache (beyond, deep pipelines' tiles ran slower: camera_pipe 4 x 64 x 4096 with
            // 12 MB of scratchpads per tile 33 ms, 4 x 8 x 4096 19 ms).
            if (e.working_set > 4 * o_.cache_bytes) return;
            // A GPU tile's scratchpads must fit the block's shared memory (else they go to
            // global memory, and their traffic with them).
            if (o_.gpu && e.working_set > o_.cache_bytes) return;
            double width = tiles.empty() ? 1 : tiles.back();
            double volume = 1;
            for (int t : tiles) volume *= t;
            // On a GPU, what a tile moves per point it computes, recomputation weighing a quarter
            // of what it does on a CPU (a block's arithmetic is cheap against its memory
            // traffic), and the threads a row narrower than the block leaves idle: a block's
            // threads spread one row at a time (blur: 16 x 256 points, not 40 x 128, which
            // moves 5% fewer sectors with half the threads idle). On a CPU, wide tiles keep
            // input rows streaming.
            double idle = std::max(1.0, double(o_.gpu_block_threads) * (columns ? o_.gpu_window_columns : 1) / width);
            double score = o_.gpu ? (1 + 0.25 * e.recompute) * e.traffic / volume * idle
                                  : (1 + e.recompute) * (1 + 512.0 / width) * spill_penalty(e.working_set);
            if (best.empty() || score < best_score) {
                best = tiles;
                best_e = e;
                best_score = score;
            }
        };
        if (!o_.tile_sizes.empty() || n == 0) {
            best = tiles_for(n, 32);
            best_e = estimate(g.plan, *fp, scales, probe, best, window);
        } else {
            std::vector<int> widths = n == 1 ? std::vector<int>{16384, 8192, 4096, 2048}
                                             : std::vector<int>{4096, 2048, 1024, 512, 256};
            std::vector<int> heights = n == 1 ? std::vector<int>{1} : std::vector<int>{256, 128, 64, 32, 16, 8, 4, 2, 1};
            // GPU tiles are one block's work, their scratchpads in its shared memory
            // (cache_bytes): a few warps wide, so that a grid has many blocks.
            if (o_.gpu) {
                widths = n == 1 ? std::vector<int>{1024, 512, 256} : std::vector<int>{256, 128, 64, 32};
                heights = n == 1 ? std::vector<int>{1} : std::vector<int>{64, 48, 40, 32, 24, 16, 8, 4, 2, 1};
            }
            // A column window's tile is one pass of the block's threads wide (each thread its
            // gpu_window_columns columns), and as tall as the rows a thread walks down: 32 in
            // the hand-written kernel measured (bench/gpu_blur_reference.cu), taller leaving
            // fewer blocks for the GPU's SMs.
            if (columns) {
                int pass = o_.gpu_block_threads * std::max(1, o_.gpu_window_columns);
                widths = {pass, pass / 2};
                heights = {32, 16, 8};
            }
            // Outer dimensions (a channel) in tiles of 1 or all kOuterExtent at once; all at
            // once where the probe's tiles hold the whole dimension (a channel bounded to 3): the
            // footprints may rest on it (fixed_where_single_tile, overlapped_tiling.cpp).
            std::vector<int> outer = n >= 3 && !o_.gpu ? std::vector<int>{1, kOuterExtent} : std::vector<int>{1};
            if (n >= 3 && !o_.gpu && stays_put(*fp->offsets.back(), int(n) - 3)) outer = {kOuterExtent};
            for (int z : outer)
                for (int x : widths)
                    for (int y : heights) {
                        std::vector<int> tiles(n, 1);
                        tiles[n - 1] = x;
                        if (n >= 2) tiles[n - 2] = y;
                        if (n >= 3) tiles[n - 3] = z;
                        consider(tiles);
                    }
        }
        if (best.empty()) {  // nothing fits the cache: the smallest tiles tried
            best = smallest;
            best_e = smallest_e;
        }
        g.plan.tile_sizes = best;
        std::ostringstream s;
        s << "overlapped tiles";
        for (size_t i = 0; i < best.size(); ++i) s << (i ? " x " : " ") << best[i];
        s << " (outermost first); estimated recomputation " << int(best_e.recompute * 100 + 0.5)
          << "%, working set " << best_e.working_set << " bytes per tile";
        g.plan.note = s.str();
    }

    const Model &m_;
    const ScheduleOptions &o_;
    const std::set<const FuncContents *> &alone_;
    std::vector<int64_t> cost_;  // per model statement: cost_of()
    std::vector<PlanState> groups_;
    // The box scales of stage boxes already seen, by the box's isl object (kept alive here, so
    // its address is not reused): a consumer group's boxes are carried into every group it is
    // tried in, and their scales came back at every merge attempt (local_laplacian: 0.6 s).
    std::map<std::pair<const isl_map *, std::vector<int>>, std::pair<isl::map, std::vector<BoxScale>>> box_scales_;
    ReadShapes reads_;  // (the same reads' boxes are derived at every probe and merge)
};

} // namespace

std::vector<GroupPlan> plan_groups(const Model &m, const ScheduleOptions &o, const std::set<const FuncContents *> &alone) {
    return Planner(m, o, alone).plan();
}

} // namespace tessera::poly
