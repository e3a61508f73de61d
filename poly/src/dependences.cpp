#include "tessera/poly/dependences.h"

namespace tessera::poly {
namespace {

isl::union_map flow_between(const isl::union_map &sinks, const isl::union_map &must_sources,
                            const isl::union_map &may_sources, const isl::schedule &order) {
    isl::union_access_info info(sinks);
    info = info.set_must_source(must_sources).set_may_source(may_sources).set_schedule(order);
    return info.compute_flow().may_dependence();
}

} // namespace

Dependences compute_dependences(const Model &m, long max_operations) {
    isl::union_set dom = m.domains();
    isl::union_map reads = m.reads(), must = m.must_writes(), may = m.may_writes();
    isl::union_map none = isl::union_map::empty(m.ctx());
    // isl's C++ objects cannot be copied while null: start from empty relations.
    Dependences d{none, none, none, false};
    try {
        OperationQuota quota(m.ctx(), max_operations);
        // Flow dependences are memory-based (every earlier write of an element, not only the
        // last): a superset of the value-based ones, as safe for scheduling, and much cheaper
        // for isl than finding the last writer.
        d.flow = flow_between(reads, none, may, m.original);
        d.anti = flow_between(may, none, reads, m.original);
        d.output = flow_between(may, must, may.subtract(must), m.original);
        // A statement instance does not depend on itself (a read-modify-write of one element).
        isl::union_map identity = dom.identity();
        d.anti = d.anti.subtract(identity);
        d.output = d.output.subtract(identity);
        d.flow = d.flow.gist_domain(dom).gist_range(dom).coalesce();
        d.anti = d.anti.gist_domain(dom).gist_range(dom).coalesce();
        d.output = d.output.gist_domain(dom).gist_range(dom).coalesce();
        d.computed = true;
    } catch (const isl::exception_quota &) {
        d = Dependences{none, none, none, false};
    }
    return d;
}

} // namespace tessera::poly
