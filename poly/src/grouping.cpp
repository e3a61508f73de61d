#include "tessera/poly/grouping.h"

#include <algorithm>
#include <map>
#include <sstream>

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
    std::string why_not;
};

class Planner {
public:
    Planner(const Model &m, const ScheduleOptions &o) : m_(m), o_(o) {}

    std::vector<GroupPlan> plan() {
        for (const auto &f : m_.graph.funcs) {
            GroupPlan g;
            g.funcs.push_back(f.get());
            for (size_t i = 0; i < m_.statements.size(); ++i)
                if (m_.statements[i].func == f.get()) g.statements.push_back(int(i));
            if (g.statements.empty()) continue;  // computed nowhere (an empty region)
            g.overlapped = f->updates.empty() && f->dimensions() >= 1;
            groups_.push_back(g);
        }
        if (o_.fusion != Fusion::None) merge_groups();
        for (GroupPlan &g : groups_)
            if (g.overlapped) choose_tiles(g);
        return groups_;
    }

private:
    int group_of(const FuncContents *f) const {
        for (size_t i = 0; i < groups_.size(); ++i)
            if (std::find(groups_[i].funcs.begin(), groups_[i].funcs.end(), f) != groups_[i].funcs.end()) return int(i);
        return -1;
    }

    bool has_output(const GroupPlan &g) const {
        return std::any_of(g.funcs.begin(), g.funcs.end(), [&](FuncContents *f) { return m_.graph.is_output(f); });
    }

    // Default tile sizes for a root of `n` dimensions (tuple order): x wide, y 32, others 1, or
    // the user's sizes (given x first).
    std::vector<int> tiles_for(size_t n, int y) const {
        std::vector<int> t(n, 1);
        if (!o_.tile_sizes.empty()) {
            for (size_t i = 0; i < n && i < o_.tile_sizes.size(); ++i) t[n - 1 - i] = std::max(1, o_.tile_sizes[i]);
            return t;
        }
        if (n >= 1) t[n - 1] = n == 1 ? 4096 : std::max(256, o_.vector_width * 16);
        if (n >= 2) t[n - 2] = y;
        return t;
    }

    Estimate estimate(const std::vector<int> &stages, const std::vector<int> &tiles) const {
        Estimate e;
        std::string why;
        auto sizes = footprint_sizes(m_, stages, tiles, why);
        if (!sizes) {
            e.why_not = why;
            return e;
        }
        e.feasible = true;
        double tile_volume = 1;
        for (int t : tiles) tile_volume *= t;
        double useful = 0, done = 0;
        size_t root_rank = tiles.size();
        for (size_t i = 0; i < stages.size(); ++i) {
            const Statement &s = m_.statements[size_t(stages[i])];
            double volume = 1;
            for (long v : (*sizes)[i]) volume *= double(v);
            if ((*sizes)[i].empty()) volume = tile_volume;
            double c = double(cost_of(s));
            done += c * volume;
            useful += c * (s.dims.size() == root_rank ? std::min(volume, tile_volume) : volume);
            if (i + 1 < stages.size()) e.working_set += int64_t(volume) * s.func->type.bytes();
        }
        e.recompute = useful > 0 ? done / useful - 1 : 0;
        return e;
    }

    void merge_groups() {
        for (bool changed = true; changed;) {
            changed = false;
            for (size_t gi = 0; gi < groups_.size() && !changed; ++gi) {
                GroupPlan &g = groups_[gi];
                if (!g.overlapped || has_output(g)) continue;
                std::vector<int> consumers;
                for (FuncContents *f : g.funcs) {
                    auto it = m_.graph.consumers.find(f);
                    if (it == m_.graph.consumers.end()) continue;
                    for (FuncContents *c : it->second) {
                        int cg = group_of(c);
                        if (cg != int(gi) && std::find(consumers.begin(), consumers.end(), cg) == consumers.end())
                            consumers.push_back(cg);
                    }
                }
                if (consumers.size() != 1) continue;
                GroupPlan &c = groups_[size_t(consumers[0])];
                if (!c.overlapped) continue;
                if (int(g.funcs.size() + c.funcs.size()) > o_.max_group_stages) continue;
                std::vector<int> stages = g.statements;
                stages.insert(stages.end(), c.statements.begin(), c.statements.end());
                std::vector<int> tiles = tiles_for(m_.statements[size_t(stages.back())].dims.size(), 32);
                Estimate e = estimate(stages, tiles);
                if (!e.feasible) continue;
                if (o_.fusion == Fusion::Smart &&
                    (e.recompute > o_.max_recompute || e.working_set > o_.cache_bytes))
                    continue;
                GroupPlan merged;
                merged.funcs = g.funcs;
                merged.funcs.insert(merged.funcs.end(), c.funcs.begin(), c.funcs.end());
                merged.statements = stages;
                merged.overlapped = true;
                size_t ci = size_t(consumers[0]);
                groups_[ci] = merged;
                groups_.erase(groups_.begin() + long(gi));
                changed = true;
            }
        }
    }

    // Picks the tile sizes of an overlapped group: the largest y tile (64 down to 1) whose
    // working set fits the cache and, for smart fusion, whose recomputation stays in bounds.
    void choose_tiles(GroupPlan &g) {
        size_t n = m_.statements[size_t(g.statements.back())].dims.size();
        std::vector<int> best;
        Estimate best_e;
        std::vector<int> candidates = o_.tile_sizes.empty() && n >= 2 ? std::vector<int>{64, 32, 16, 8, 4, 2, 1}
                                                                     : std::vector<int>{32};
        for (int y : candidates) {
            std::vector<int> tiles = tiles_for(n, y);
            Estimate e = estimate(g.statements, tiles);
            if (!e.feasible) {
                g.overlapped = false;
                g.note = "overlapped tiling does not apply: " + e.why_not;
                return;
            }
            best = tiles;
            best_e = e;
            bool fits = e.working_set <= o_.cache_bytes;
            bool cheap = o_.fusion != Fusion::Smart || g.funcs.size() == 1 || e.recompute <= o_.max_recompute;
            if (fits && cheap) break;
        }
        g.tile_sizes = best;
        g.recompute = best_e.recompute;
        g.working_set = best_e.working_set;
        std::ostringstream s;
        s << "overlapped tiles";
        for (size_t i = 0; i < best.size(); ++i) s << (i ? " x " : " ") << best[i];
        s << " (outermost first); estimated recomputation " << int(best_e.recompute * 100 + 0.5)
          << "%, working set " << best_e.working_set << " bytes per tile";
        g.note = s.str();
    }

    const Model &m_;
    const ScheduleOptions &o_;
    std::vector<GroupPlan> groups_;
};

} // namespace

std::vector<GroupPlan> plan_groups(const Model &m, const ScheduleOptions &o) { return Planner(m, o).plan(); }

} // namespace tessera::poly
