#include "tessera/poly/dead_instances.h"

#include <isl/schedule.h>
#include <isl/set.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include <algorithm>
#include <optional>
#include <set>

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

} // namespace

DeadInstances dead_instances(const Model &m) {
    isl::union_set dead = isl::union_set::empty(m.ctx()), overwritten = dead;
    if (m.statements.empty()) return {dead, overwritten};
    // The original schedule as a map, made when a Func first needs it: a pipeline without
    // updates needs none, and local_laplacian's (99 statements) took isl 100 ms.
    std::optional<isl::union_map> order;
    for (size_t ai = 0; ai < m.arrays.size(); ++ai) {
        const Array &a = m.arrays[ai];
        if (!candidate_func(a)) continue;
        // A Func none of whose updates overwrites unread (a reduction, a scan) has no dead
        // instances, and its accesses are not joined: in DNN pipelines, whose matmuls, softmaxes
        // and norms are such reductions, the join was most of this analysis (a transformer
        // layer: about 0.6 s of its 3.7 s compile).
        if (std::none_of(m.statements.begin(), m.statements.end(), [&](const Statement &s) { return overwrites_unread(s, int(ai)); }))
            continue;
        std::vector<size_t> writers;  // statements that write the array, exactly and unguarded
        isl::union_map none = isl::union_map::empty(m.ctx());
        isl::union_map reads = none, writes = none, must = none;
        isl::union_set statements = isl::union_set::empty(m.ctx());
        for (size_t si = 0; si < m.statements.size(); ++si) {
            const Statement &s = m.statements[si];
            if (s.domain.is_empty()) continue;
            bool touches = false;
            for (const Access &r : s.reads)
                if (r.array == int(ai)) {
                    reads = reads.unite(isl::union_map(r.relation));
                    touches = true;
                }
            if (s.write.array == int(ai)) {
                writes = writes.unite(isl::union_map(s.write.relation));
                if (s.write.exact && s.guards.empty()) {
                    must = must.unite(isl::union_map(s.write.relation));
                    writers.push_back(si);
                }
                touches = true;
            }
            if (touches) statements = statements.unite(isl::union_set(s.domain));
        }
        isl::union_set dead_here = isl::union_set::empty(m.ctx()), overwritten_here = dead_here;
        if (!order) order = isl::manage(isl_schedule_get_map(m.original.get()));
        bool finished = within_quota(m.ctx(), kDeadInstanceOperations, [&] {
            isl::union_map o = order->intersect_domain(statements);
            isl::union_map earlier_to_later = isl::manage(isl_union_map_lex_lt_union_map(o.copy(), o.copy()));
            // w → r: r reads, after w, the element w writes (whoever else writes it between).
            isl::union_map flow = later_accesses(writes, reads, earlier_to_later);
            // w → r with a must-write of that element strictly between: r does not see w's value.
            // (Each writer considered writes one element, so the element of w, w' and r is one.)
            isl::union_map rewritten = later_accesses(writes, must, earlier_to_later);  // w → a later must-write
            isl::union_map overwritten = rewritten.apply_range(later_accesses(must, reads, earlier_to_later));
            isl::union_set live = flow.subtract(overwritten.intersect(flow)).domain();
            // Only instances whose element is written again later: an element nothing ever reads
            // again (a stencil's corners, a region's margin) is left alone, since removing it
            // would cut the domain into pieces no loop covers simply.
            isl::union_set overwritten_later = rewritten.domain();
            for (size_t si : writers) {
                const Statement &s = m.statements[si];
                isl::set d = overwritten_later.extract_set(s.domain.space()).subtract(live.extract_set(s.domain.space()));
                d = d.intersect(s.domain).coalesce();
                if (d.is_empty()) continue;
                overwritten_here = overwritten_here.unite(isl::union_set(d));
                isl::set remaining = s.domain.subtract(d).coalesce();
                if (isl_set_n_basic_set(remaining.get()) > kMaxRemainingPieces) continue;
                dead_here = dead_here.unite(isl::union_set(d));
            }
        });
        if (!finished) continue;
        dead = dead.unite(dead_here);
        overwritten = overwritten.unite(overwritten_here);
    }
    return {dead.coalesce(), overwritten.coalesce()};
}

} // namespace tessera::poly
