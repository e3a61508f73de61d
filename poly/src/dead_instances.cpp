#include "tessera/poly/dead_instances.h"

#include "tessera/poly/storage_folding.h"

#include <isl/schedule.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include <algorithm>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tessera::poly {
namespace {

// Per Func, the isl work of finding its dead instances: a join and a subtraction over its
// accesses (a few statements each). Over it, the Func keeps all its instances. heat-3d's planes
// need between 20,000 and 40,000 (60 ms); at 300,000 a Func of fuzzer seed 2487947 (reductions
// over RDoms with `where` clauses, accesses at x / 2) took 700 ms before giving up, three times.
constexpr long kDeadInstanceOperations = 100000;

// A statement whose instances without the dead ones form more pieces than this keeps them all:
// each piece splits the loops of a tiled band once more wherever isl's AST generator separates
// them. jacobi-1d's pure planes shrink to 3 pieces (plane 0 and the two ends of the others) and
// their separated AST takes 50 ms more; jacobi-2d's 5 pieces took 9 s and ran 5% faster, heat-3d
// has 7.
constexpr int kMaxRemainingPieces = 3;

// sources → later sinks that access the same element (as dependences.cpp's memory-based ones).
isl::union_map later_accesses(const isl::union_map &sources, const isl::union_map &sinks, const isl::union_map &earlier_to_later) {
    return sources.apply_range(sinks.reverse()).intersect(earlier_to_later);
}

bool candidate_func(const Array &a) {
    return a.kind == Array::Kind::Func && a.output < 0 && a.func && !a.func->updates.empty() && !has_schedule_directives(*a.func);
}

// Whether `s` is an update of array `ai` that overwrites (exactly, unguarded) an element without
// reading it first: only such a write can leave an earlier instance dead. An update that reads
// the very element it writes (a reduction: f(x) = f(x) + g(x, r)) reads the value it replaces,
// and the pure definition writes each element first.
bool overwrites_unread(const Statement &s, int ai) {
    if (s.definition == 0 || s.write.array != ai || !s.write.exact || !s.guards.empty() || s.domain.is_empty()) return false;
    for (const Access &r : s.reads)
        if (r.array == ai && r.relation.is_equal(s.write.relation)) return false;
    return true;
}

// What the analysis reads of one candidate Func: its accesses, and the domains of the
// statements that access it and of those that write it exactly, unguarded.
struct FuncAccesses {
    isl::union_map reads, writes, must;
    isl::union_set statements;
    std::vector<isl::set> writers;
    int array;
};

std::vector<FuncAccesses> candidate_accesses(const Model &m) {
    std::vector<FuncAccesses> funcs;
    for (size_t ai = 0; ai < m.arrays.size(); ++ai) {
        const Array &a = m.arrays[ai];
        if (!candidate_func(a)) continue;
        // A Func none of whose updates overwrites unread (a reduction, a scan) has no dead
        // instances, and its accesses are not joined: in DNN pipelines, whose matmuls, softmaxes
        // and norms are such reductions, the join was most of this analysis (a transformer
        // layer: about 0.6 s of its 3.7 s compile).
        if (std::none_of(m.statements.begin(), m.statements.end(), [&](const Statement &s) { return overwrites_unread(s, int(ai)); }))
            continue;
        isl::union_map none = isl::union_map::empty(m.ctx());
        FuncAccesses f{none, none, none, isl::union_set::empty(m.ctx()), {}, int(ai)};
        for (const Statement &s : m.statements) {
            if (s.domain.is_empty()) continue;
            bool touches = false;
            for (const Access &r : s.reads)
                if (r.array == int(ai)) {
                    f.reads = f.reads.unite(isl::union_map(r.relation));
                    touches = true;
                }
            if (s.write.array == int(ai)) {
                f.writes = f.writes.unite(isl::union_map(s.write.relation));
                if (s.write.exact && s.guards.empty()) {
                    f.must = f.must.unite(isl::union_map(s.write.relation));
                    f.writers.push_back(s.domain);
                }
                touches = true;
            }
            if (touches) f.statements = f.statements.unite(isl::union_set(s.domain));
        }
        funcs.push_back(f);
    }
    return funcs;
}

// The dead instances of `funcs` under `order` (the original schedule as a map), all in one
// isl context.
DeadInstances analyse(const isl::union_map &order, const std::vector<FuncAccesses> &funcs) {
    isl::ctx ctx = order.ctx();
    isl::union_set dead = isl::union_set::empty(ctx), overwritten = dead;
    for (const FuncAccesses &f : funcs) {
        isl::union_set dead_here = isl::union_set::empty(ctx), overwritten_here = dead_here;
        bool finished = within_quota(ctx, kDeadInstanceOperations, [&] {
            isl::union_map o = order.intersect_domain(f.statements);
            isl::union_map earlier_to_later = isl::manage(isl_union_map_lex_lt_union_map(o.copy(), o.copy()));
            // w → r: r reads, after w, the element w writes (whoever else writes it between).
            isl::union_map flow = later_accesses(f.writes, f.reads, earlier_to_later);
            // w → r with a must-write of that element strictly between: r does not see w's value.
            // (Each writer considered writes one element, so the element of w, w' and r is one.)
            isl::union_map rewritten = later_accesses(f.writes, f.must, earlier_to_later);  // w → a later must-write
            isl::union_map overwritten = rewritten.apply_range(later_accesses(f.must, f.reads, earlier_to_later));
            isl::union_set live = flow.subtract(overwritten.intersect(flow)).domain();
            // Only instances whose element is written again later: an element nothing ever reads
            // again (a stencil's corners, a region's margin) is left alone, since removing it
            // would cut the domain into pieces no loop covers simply.
            isl::union_set overwritten_later = rewritten.domain();
            for (const isl::set &domain : f.writers) {
                isl::set d = overwritten_later.extract_set(domain.space()).subtract(live.extract_set(domain.space()));
                d = d.intersect(domain).coalesce();
                if (d.is_empty()) continue;
                overwritten_here = overwritten_here.unite(isl::union_set(d));
                isl::set remaining = domain.subtract(d).coalesce();
                if (isl_set_n_basic_set(remaining.get()) > kMaxRemainingPieces) continue;
                dead_here = dead_here.unite(isl::union_set(d));
            }
        });
        if (!finished) continue;
        dead = dead.unite(dead_here);
        overwritten = overwritten.unite(overwritten_here);
    }
    return {dead.coalesce(), overwritten.coalesce(), {}};
}

// `f` rebuilt in the isl context `to` (copied_to): a helper thread's own copy, or a private one
// in the model's context, which an analysis stopped by its quota partway cannot leave broken
// (isl may leave the pieces it worked on so, and the model's domains serve the rest of the
// compile).
FuncAccesses copied_to(isl::ctx to, const FuncAccesses &f) {
    FuncAccesses copy{poly::copied_to(to, f.reads), poly::copied_to(to, f.writes), poly::copied_to(to, f.must),
                      poly::copied_to(to, f.statements), {}, f.array};
    for (const isl::set &w : f.writers) copy.writers.push_back(poly::copied_to(to, w));
    return copy;
}

} // namespace

DeadInstances dead_instances(const Model &m) {
    std::vector<FuncAccesses> funcs = candidate_accesses(m);
    if (funcs.empty()) return {isl::union_set::empty(m.ctx()), isl::union_set::empty(m.ctx()), {}};
    for (FuncAccesses &f : funcs) f = copied_to(m.ctx(), f);
    // (The original schedule as a map only where a Func needs it: local_laplacian's, of 99
    // statements and no candidate, took isl 100 ms.)
    return analyse(isl::manage(isl_schedule_get_map(m.original.get())), funcs);
}

std::function<DeadInstances()> start_dead_instances(const Model &m) {
    isl::ctx ctx = m.ctx();
    std::vector<FuncAccesses> funcs = candidate_accesses(m);
    if (funcs.empty()) return [ctx] { return DeadInstances{isl::union_set::empty(ctx), isl::union_set::empty(ctx), {}}; };
    // The accesses copied into the helper's context here, its result back into the model's
    // when asked for (each copy reads its source context while no other thread uses it).
    // The helper also finds the Funcs' region_covers_accesses, which their rings' first
    // planes need with the dead instances (heat-3d: 15 ms more of the scheduler's beside it).
    struct Covers {
        int array;
        isl::set region;
        std::vector<isl::set> touched;
    };
    struct Handoff {
        IslContext own;  // first: destroyed after the isl objects below
        std::vector<FuncAccesses> funcs;
        std::vector<Covers> covers;
        isl::union_map order;
        isl::union_set dead, overwritten;
        std::map<int, isl::set> found_covers;
    };
    auto h = std::make_shared<Handoff>();
    isl::ctx own = h->own.ctx();
    for (const FuncAccesses &f : funcs) {
        h->funcs.push_back(copied_to(own, f));
        const isl::set &region = m.arrays[size_t(f.array)].region;
        if (m.region_covers.count(f.array) || region.is_empty()) continue;
        Covers c{f.array, copied_to(own, region), {}};
        for (const isl::set &t : touched_elements(m, f.array)) c.touched.push_back(copied_to(own, t));
        h->covers.push_back(c);
    }
    h->order = copied_to(own, isl::manage(isl_schedule_get_map(m.original.get())));
    // (A future of std::async waits for its thread when destroyed: a model dropped before its
    // dead instances were asked for waits for them, and no thread outlives the library.)
    // (As in build_model, an isl error outside the analysis' quota is an internal error.)
    auto found = std::make_shared<std::future<void>>(std::async(std::launch::async, [h] {
        try {
            DeadInstances d = analyse(h->order, h->funcs);
            h->dead = d.dead;
            h->overwritten = d.overwritten;
            for (const Covers &c : h->covers) h->found_covers.emplace(c.array, covering_parameters(c.region, c.touched));
        } catch (const isl::exception &e) {
            internal_error("isl failed while finding the model's dead instances: ", e.what());
        }
    }));
    return [ctx, h, found] {
        found->get();
        DeadInstances d{copied_to(ctx, h->dead), copied_to(ctx, h->overwritten), {}};
        for (const auto &[array, covers] : h->found_covers) d.covers.emplace(array, copied_to(ctx, covers));
        return d;
    };
}

} // namespace tessera::poly
