#include "tessera/poly/dependences.h"

#include <isl/schedule.h>
#include <isl/union_map.h>

#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <string>

namespace tessera::poly {
namespace {

// Memory-based dependences: every `sources` instance → every later (`earlier_to_later`)
// `sinks` instance that accesses the same element. What isl's compute_flow gives with
// may-sources only, computed as one join and one intersection: compute_flow goes through the
// accesses depth by depth with a subtraction at each, which isl's operation quota does not
// bound (fuzzer seed 2448215: over 4 s for one array before the quota stopped it; this way
// 0.15 s).
isl::union_map all_earlier_accesses(const isl::union_map &sinks, const isl::union_map &sources,
                                    const isl::union_map &earlier_to_later) {
    return sources.apply_range(sinks.reverse()).intersect(earlier_to_later);
}

// `u` with each map over only the parameters it involves (the union over those of its maps).
isl::union_map over_used_parameters(isl_union_map *u) {
    if (!u) return isl::union_map();  // an earlier call ran out of operations (within_quota)
    isl_union_map *reduced = isl_union_map_empty(isl_space_params_alloc(isl_union_map_get_ctx(u), 0));
    isl_union_map_foreach_map(
        u,
        [](isl_map *map, void *user) {
            auto *r = static_cast<isl_union_map **>(user);
            *r = isl_union_map_add_map(*r, drop_unused_params(map));
            return isl_stat_ok;
        },
        &reduced);
    isl_union_map_free(u);
    return isl::manage(reduced);
}

// The maps of `accesses` (statement -> array element) by the array they access.
std::map<std::string, isl::union_map> by_array(const isl::union_map &accesses) {
    std::map<std::string, isl_union_map *> parts;
    isl_union_map_foreach_map(
        accesses.get(),
        [](isl_map *map, void *user) {
            auto &parts = *static_cast<std::map<std::string, isl_union_map *> *>(user);
            const char *name = isl_map_get_tuple_name(map, isl_dim_out);
            isl_union_map *&part = parts[name ? name : ""];
            part = part ? isl_union_map_add_map(part, map) : isl_union_map_from_map(map);
            return isl_stat_ok;
        },
        &parts);
    std::map<std::string, isl::union_map> result;
    for (auto &[name, part] : parts) result.emplace(name, isl::manage(part));
    return result;
}

// The array written by one statement alone, exactly, each instance a distinct element, and
// read only by statements after it in the original order: a pure Func (or an elementwise op's
// result), most of the arrays of an image pipeline or a framework model. Its flow dependences
// are every pair of its writer and a reader of the same element, and it has no anti or output
// ones, without the order's lexicographic comparison (bilateral_grid's dependence analysis:
// 63 -> 38 ms). Returns the writer, or -1 where the array needs the general analysis.
int single_assignment_writer(const Model &m, const std::string &array, const std::vector<int> &position) {
    int writer = -1;
    for (size_t i = 0; i < m.statements.size(); ++i) {
        const Statement &s = m.statements[i];
        if (s.write.array < 0 || m.arrays[size_t(s.write.array)].name != array) continue;
        if (writer >= 0 || !s.write.exact || !s.guards.empty()) return -1;
        writer = int(i);
    }
    if (writer < 0) return -1;
    const Statement &w = m.statements[size_t(writer)];
    for (size_t i = 0; i < m.statements.size(); ++i)
        for (const Access &r : m.statements[i].reads)
            if (r.array == w.write.array && position[i] <= position[size_t(writer)]) return -1;
    if (!w.write.relation.intersect_domain(w.domain).is_injective()) return -1;
    return writer;
}

// The original order between the instances of `statements` (on `domains`, their domains), as
// isl_union_map_lex_lt_union_map of the original schedule `order` gives it, built definition by
// definition: the original schedule is a sequence of definitions (model.cpp), so every instance
// of an earlier definition precedes every instance of a later one, and only the statements of one
// definition need isl's lexicographic comparison. (A transformer layer's 14 reduction arrays,
// an init and an update each, took 6-21 ms apiece comparing the two statements' schedules.)
isl::union_map earlier_to_later(const Model &m, const isl::union_set &domains, const std::vector<int> &position,
                                const std::function<const isl::union_map &()> &order) {
    std::map<int, std::vector<isl::set>> by_definition;
    for (const isl::set &s : sets_of(domains)) {
        int st = m.statement_index(isl_set_get_tuple_name(s.get()));
        if (st < 0) {  // (not a statement of the model: compare everything, as isl would)
            isl::union_map o = over_used_parameters(order().intersect_domain(domains).release());
            return isl::manage(isl_union_map_lex_lt_union_map(o.copy(), o.copy()));
        }
        by_definition[position[size_t(st)]].push_back(s);
    }
    isl::union_map result = isl::union_map::empty(m.ctx());
    for (auto a = by_definition.begin(); a != by_definition.end(); ++a) {
        if (a->second.size() == 1) {
            // One statement: its original schedule is its own dimensions in order (model.cpp), so
            // its instances' order is the lexicographic one of its domain, without the schedule.
            isl_set *s = drop_unused_params(a->second.front().copy());
            isl_map *lt = isl_map_lex_lt(isl_set_get_space(s));
            lt = isl_map_intersect_range(isl_map_intersect_domain(lt, isl_set_copy(s)), s);
            result = result.unite(isl::union_map(isl::manage(lt)));
        } else {
            isl::union_set within = isl::union_set::empty(m.ctx());
            for (const isl::set &s : a->second) within = within.unite(isl::union_set(s));
            isl::union_map o = over_used_parameters(order().intersect_domain(within).release());
            result = result.unite(isl::manage(isl_union_map_lex_lt_union_map(o.copy(), o.copy())));
        }
        for (auto b = std::next(a); b != by_definition.end(); ++b)
            for (const isl::set &earlier : a->second)
                for (const isl::set &later : b->second)
                    result = result.unite(isl::union_map(isl::manage(drop_unused_params(
                        isl_map_from_domain_and_range(drop_unused_params(earlier.copy()), drop_unused_params(later.copy()))))));
    }
    return result;
}

} // namespace

Dependences compute_dependences(const Model &m, long max_operations) {
    isl::union_set dom = m.domains();
    isl::union_map reads = m.reads(), may = m.may_writes();
    isl::union_map none = isl::union_map::empty(m.ctx());
    // isl's C++ objects cannot be copied while null: start from empty relations.
    Dependences d{none, none, none, false};
    // (Over the quota, isl's C calls return null and the C++ ones throw: within_quota takes both.)
    bool finished = within_quota(m.ctx(), max_operations, [&] {
        // All three are memory-based (every earlier access of an element, not only the last
        // write): a superset of the value-based ones whose transitive closure is the same, as
        // safe for scheduling and legality, and much cheaper for isl than finding the last
        // writer, which takes subtractions that its operation quota does not bound.
        //
        // Array by array, each over the parameters its accesses and their statements' order
        // involve: dependences only relate accesses of one array, and every constraint isl
        // handles carries a column per parameter, dozens in a model with many Region
        // parameters, of which one array's accesses use a few (fuzzer seed 30457: 3.1 s of
        // dependence analysis over all 73 at once).
        // The original schedule as a map, made when an array first needs it (arrays of a single
        // writer need none: dead_instances.cpp).
        std::optional<isl::union_map> order;
        std::map<std::string, isl::union_map> reads_of = by_array(reads), may_of = by_array(may);
        // Each statement's place in the original sequence (the cases of a definition share one).
        std::vector<int> position(m.statements.size(), 0);
        std::vector<std::vector<int>> definitions = definitions_in_order(m);
        for (size_t k = 0; k < definitions.size(); ++k)
            for (int st : definitions[k]) position[size_t(st)] = int(k);
        for (const auto &[array, array_may] : may_of) {
            auto array_reads = reads_of.find(array);
            isl::union_map r = over_used_parameters((array_reads == reads_of.end() ? none : array_reads->second).copy());
            isl::union_map w = over_used_parameters(array_may.copy());
            isl::union_set statements = r.domain().unite(w.domain());
            // Their domains, to simplify the dependences against. (The order is strict: a
            // statement instance does not depend on itself, a read-modify-write of one element.)
            isl::union_set domains = dom.intersect(statements.universe());
            // Domains with local variables (RDoms with `where` clauses, parity conditions) are left
            // out: gisting against them makes isl compute explicit divisions of every relation,
            // half of fuzzer seed 2487947's dependence analysis (1.5 s), for a simplification.
            bool divided = false;
            for (const isl::set &d : sets_of(domains)) divided = divided || isl_set_involves_locals(d.get()) == isl_bool_true;
            auto simplified = [&](const isl::union_map &deps) {
                if (divided) return deps.coalesce();
                return deps.gist_domain(domains).gist_range(domains).coalesce();
            };
            if (single_assignment_writer(m, array, position) >= 0) {
                // (Every pair of its writer and a later reader, on their domains.)
                isl::union_map pairs = w.apply_range(r.reverse()).intersect_domain(domains).intersect_range(domains);
                d.flow = d.flow.unite(simplified(pairs));
                continue;
            }
            auto original_order = [&]() -> const isl::union_map & {
                if (!order) order = isl::manage(isl_schedule_get_map(m.original.get()));
                return *order;
            };
            isl::union_map before = earlier_to_later(m, domains, position, original_order);
            d.flow = d.flow.unite(simplified(all_earlier_accesses(r, w, before)));
            d.anti = d.anti.unite(simplified(all_earlier_accesses(w, r, before)));
            d.output = d.output.unite(simplified(all_earlier_accesses(w, w, before)));
        }
        // Dependences through several arrays between two statements are one relation.
        d.flow = d.flow.coalesce();
        d.anti = d.anti.coalesce();
        d.output = d.output.coalesce();
        d.computed = true;
    });
    if (!finished) d = Dependences{none, none, none, false};
    return d;
}

} // namespace tessera::poly
