#include "tessera/automatic_inlining.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tessera/func_graph.h"

namespace tessera {

namespace {

// Inlining stops where a consumer's value, written out as a tree, would pass this many nodes
// (a Func called twice at one point doubles when its value is substituted).
constexpr uint64_t kMaxInlinedNodes = 4000;

// The pure Var `e` is, plus or minus integer constants: its name, or nothing. Nested shifts count
// (`(x + 2) - 1`: a call's coordinates once a Func read at x + 2 is inlined).
std::optional<std::string> shifted_var(const Expr &e) {
    if (e->op == Op::Var) return e->name;
    if (e->op != Op::Add && e->op != Op::Sub) return std::nullopt;
    if (ir::as_const_int(e->args[1])) return shifted_var(e->args[0]);
    if (e->op == Op::Add && ir::as_const_int(e->args[0])) return shifted_var(e->args[1]);
    return std::nullopt;
}

bool has_vars(const Expr &e) { return !ir::free_vars(e).empty() || !ir::rdoms_in(e).empty(); }

// `e` is one of f's pure Vars plus or minus constants, clamped between bounds without Vars
// (`clamp(x - 1, 0, in.width() - 1)`: a repeat_edge coordinate), or has no Vars at all.
bool clamped_pure_coordinate(const Expr &e, const FuncContents &f) {
    if (!has_vars(e)) return true;
    Expr inner = e;
    if (e->op == Op::Min && !has_vars(e->args[1]) && e->args[0]->op == Op::Max && !has_vars(e->args[0]->args[1]))
        inner = e->args[0]->args[0];
    std::optional<std::string> v = shifted_var(inner);
    return v && std::find(f.pure_args.begin(), f.pure_args.end(), *v) != f.pure_args.end();
}

} // namespace

bool reads_at_shifted_points(const FuncContents &f, const Expr &value, bool data_coordinates) {
    bool ok = true;
    ir::visit(value, [&](const Expr &n) {
        if (n->op != Op::FuncCall && n->op != Op::InputCall) return ok;
        for (const Expr &a : n->args) {
            if (data_coordinates && ir::reads_data(a)) continue;
            if (n->op == Op::InputCall) {
                ok = ok && clamped_pure_coordinate(a, f);
                continue;
            }
            std::optional<std::string> v = shifted_var(a);
            bool pure = v && std::find(f.pure_args.begin(), f.pure_args.end(), *v) != f.pure_args.end();
            if (!pure && has_vars(a)) ok = false;
        }
        return ok;
    });
    return ok;
}

namespace {

// Whether every Func and input `f`'s value reads, it reads at f's pure Vars plus or minus
// constants, or at coordinates without Vars; an input also at such Vars clamped (a boundary
// condition inlined into f: its accesses are those the boundary Func had).
bool reads_only_shifted(const FuncContents &f) { return reads_at_shifted_points(f, f.pure.value, false); }

// The distinct points of `f` that `value` (the value of consumer `c`, with what is inlined into
// it substituted) reads, when each call of f has as arguments distinct pure Vars of c plus or minus
// constants, one per dimension of f (so that f and c have points alike: no up- or downsampling);
// 0 when one does not.
size_t points_read_at_shifts(const FuncContents &f, const Expr &value, const FuncContents &c) {
    std::set<std::string> points;  // the arguments of each call, printed
    bool ok = true;
    ir::visit(value, [&](const Expr &n) {
        if (!ok || n->op != Op::FuncCall || n->func_ptr != &f) return ok;
        std::string printed;
        for (const Expr &a : n->args) printed += to_string(a) + ",";
        if (!points.insert(printed).second) return ok;
        std::vector<std::string> vars;
        for (const Expr &a : n->args) {
            std::optional<std::string> v = shifted_var(a);
            if (!v || std::find(c.pure_args.begin(), c.pure_args.end(), *v) == c.pure_args.end() ||
                std::find(vars.begin(), vars.end(), *v) != vars.end()) {
                ok = false;
                break;
            }
            vars.push_back(*v);
        }
        ok = ok && int(vars.size()) == f.dimensions();
        return ok;
    });
    return ok ? points.size() : 0;
}

// A cheap pointwise Func is recomputed at each point its consumer reads rather than stored when its
// value has at most this many operations (harris's Ixx = Ix * Ix has one).
constexpr size_t kMaxRecomputedOperations = 4;

// The Funcs that read `f` once those computed inline are seen through: each consumer of f, or, for
// one computed inline (by compute_inline or in `inlined`), the Funcs that read it, and so on.
std::set<const FuncContents *> effective_consumers(const FuncContents &f, const PipelineGraph &g,
                                                   const std::set<const FuncContents *> &inlined) {
    std::set<const FuncContents *> result;
    std::vector<const FuncContents *> stack{&f};
    std::set<const FuncContents *> seen;
    while (!stack.empty()) {
        const FuncContents *p = stack.back();
        stack.pop_back();
        if (!seen.insert(p).second) continue;
        auto it = g.consumers.find(p);
        if (it == g.consumers.end()) continue;
        for (const FuncContents *c : it->second) {
            if (c->compute_inline || inlined.count(c)) stack.push_back(c);
            else result.insert(c);
        }
    }
    return result;
}

// Whether `f` is a pure intermediate Func the automatic schedule may inline at all: not inlined
// by compute_inline already, no updates, not an output, with dimensions and no bound().
bool inlinable(const FuncContents &f, const PipelineGraph &g) {
    return !f.compute_inline && f.updates.empty() && !g.is_output(&f) && f.dimensions() > 0 && f.bounds.empty();
}

bool may_be_inlined(const FuncContents &f, const PipelineGraph &g) { return inlinable(f, g) && reads_only_shifted(f); }

// The one Func that reads `f` (through inlined Funcs), if it is pure and computed; else null.
const FuncContents *only_consumer(const FuncContents &f, const PipelineGraph &g,
                                  const std::set<const FuncContents *> &inlined) {
    std::set<const FuncContents *> cs = effective_consumers(f, g, inlined);
    if (cs.size() != 1) return nullptr;
    const FuncContents *c = *cs.begin();
    return c == &f || !c->updates.empty() ? nullptr : c;
}

bool within_size(const FuncContents &c, const std::set<const FuncContents *> &inlined) {
    return ir::expanded_size(inline_calls(c.pure.value, inlined), kMaxInlinedNodes + 1) <= kMaxInlinedNodes;
}

// `e` as one of f's pure Vars plus or minus constants, or that divided by a positive constant
// (`y / 2`: a row of a Func at half the rows): the Var's name; nothing otherwise.
std::optional<std::string> own_var_or_divided(const Expr &e) {
    if (e->op == Op::Div) {
        std::optional<int64_t> k = ir::as_const_int(e->args[1]);
        if (!k || *k < 1) return std::nullopt;
        return shifted_var(e->args[0]);
    }
    return shifted_var(e);
}

// Whether `call` reads another Func with f's own Vars in their places (x in the first coordinate,
// y in the second, ...) plus or minus constants, or divided by constants, and constants
// elsewhere: one channel or shift of it, or its rows at half the rate. A transposing read is not:
// inlined, it would turn each of its consumers' contiguous reads into strided ones.
bool reads_in_place(const FuncContents &f, const Expr &call) {
    if (call->op != Op::FuncCall || call->func_ptr == &f) return false;
    for (size_t j = 0; j < call->args.size(); ++j) {
        if (!has_vars(call->args[j])) continue;
        std::optional<std::string> var = own_var_or_divided(call->args[j]);
        if (!var || j >= f.pure_args.size() || *var != f.pure_args[j]) return false;
    }
    return true;
}

// Whether `e` computes nothing from what it reads: a read in place (reads_in_place), or a select
// between such values on a condition that reads nothing (camera_pipe's demosaiced(x, y, c) =
// select(c == 0, red(x, y), c == 1, green(x, y), blue(x, y)), and its red(x, y) = select(y % 2
// == 0, red_even_rows(x, y / 2), red_odd_rows(x, y / 2))).
bool routes_reads(const FuncContents &f, const Expr &e) {
    if (e->op == Op::Select) return !ir::reads_data(e->args[0]) && routes_reads(f, e->args[1]) && routes_reads(f, e->args[2]);
    return reads_in_place(f, e);
}

// Whether `f` is one read of an input at its own points (clamped or not: what
// BoundaryConditions::repeat_edge of an input defines; may_be_inlined checks the coordinates), or
// routes reads of other Funcs (routes_reads): an alias such as camera_pipe's g_gr(x, y) =
// deinterleaved(x, y, 0), one channel of a Func under a name of its own, or a choice among such
// reads by coordinates. Inlined, each of its consumers' points reads what f read at one point
// where it read f at one (for a choice, where the consumer's coordinates or its rows decide it:
// inline_routing_funcs checks), without f's own pass over its whole region (a copy, margins
// included).
bool routes_one_read(const FuncContents &f, const PipelineGraph &g) {
    const Expr &v = f.pure.value;
    if (v->op == Op::InputCall) return may_be_inlined(f, g);
    return routes_reads(f, v) && inlinable(f, g);
}

// `e` with constants folded and each select on a constant condition replaced by its branch:
// what a consumer reads once compiled (LLVM folds the same).
Expr folded(const Expr &e) {
    return ir::transform(e, [](const Expr &n) -> Expr {
        if (n->op == Op::Select && ir::is_const(n->args[0])) return ir::const_value(n->args[0]).u ? n->args[1] : n->args[2];
        return ir::fold_constants(n);
    });
}

// The distinct points `e` reads at one point of a Func whose innermost Var is `inner`, where a
// select on a condition without `inner` reads only the branch it takes (the larger counted): such
// a condition is uniform in a vector step, which branches on it (vector_lowering.cpp,
// branch_select). Printed calls.
std::set<std::string> executed_reads(const Expr &e, const std::string &inner) {
    std::set<std::string> r;
    auto add = [&](const std::set<std::string> &s) { r.insert(s.begin(), s.end()); };
    if (e->op == Op::Select) {
        std::vector<std::string> vars = ir::free_vars(e->args[0]);
        if (std::find(vars.begin(), vars.end(), inner) == vars.end()) {
            add(executed_reads(e->args[0], inner));
            std::set<std::string> a = executed_reads(e->args[1], inner), b = executed_reads(e->args[2], inner);
            add(a.size() >= b.size() ? a : b);
            return r;
        }
    }
    if (e->op == Op::FuncCall || e->op == Op::InputCall) r.insert(to_string(e));
    for (const Expr &a : e->args) add(executed_reads(a, inner));
    return r;
}

// Inlines every Func that routes one read (routes_one_read) into all its consumers, however many
// and however they read it, where each consumer's value stays within size and, for a choice
// among reads, reads no more points than with f stored (executed_reads: each of its calls at
// coordinates that decide the choice, or choosing by rows: camera_pipe's colour correction reads
// demosaiced at channels 0, 1 and 2, inlined red(x, y), green(x, y) and blue(x, y), and those
// inlined one of two rows at y / 2 each). Returns whether any was added.
bool inline_routing_funcs(const PipelineGraph &g, std::set<const FuncContents *> &inlined) {
    bool added = false;
    for (const auto &fp : g.funcs) {
        const FuncContents &f = *fp;
        if (inlined.count(&f) || !routes_one_read(f, g)) continue;
        std::set<const FuncContents *> consumers = effective_consumers(f, g, inlined);
        if (consumers.empty() || consumers.count(&f)) continue;
        // Not into updates: their reads at reduction coordinates, clamped in every dimension,
        // multiplied the pieces of the model's access relations (a fuzzed pipeline's model and
        // schedule went from well under a second to 6.5 s).
        if (std::any_of(consumers.begin(), consumers.end(), [](const FuncContents *c) { return !c->updates.empty(); }))
            continue;
        std::set<const FuncContents *> trial = inlined;
        trial.insert(&f);
        bool choice = f.pure.value->op == Op::Select;
        bool fits = std::all_of(consumers.begin(), consumers.end(), [&](const FuncContents *c) {
            if (!within_size(*c, trial)) return false;
            if (!choice) return true;
            const std::string inner = c->pure_args.empty() ? std::string() : c->pure_args[0];
            return executed_reads(folded(inline_calls(c->pure.value, trial)), inner).size() <=
                   executed_reads(folded(inline_calls(c->pure.value, inlined)), inner).size();
        });
        if (!fits) continue;
        inlined.insert(&f);
        added = true;
    }
    return added;
}

// Inlines each Func that `eligible` admits into its only consumer c, where `reads(f, c's value
// with inlined Funcs substituted, c)` holds and c's value stays within size; consumers first, so
// that a Func read through an inlined Func sees the Func that reads that one. Returns whether any
// was added.
template <class Eligible, class Reads>
bool inline_into_only_consumer(const PipelineGraph &g, std::set<const FuncContents *> &inlined, Eligible eligible, Reads reads) {
    bool added = false;
    for (auto it = g.funcs.rbegin(); it != g.funcs.rend(); ++it) {
        const FuncContents &f = **it;
        if (inlined.count(&f) || !eligible(f, g)) continue;
        const FuncContents *c = only_consumer(f, g, inlined);
        if (!c || !reads(f, inline_calls(c->pure.value, inlined), *c)) continue;
        inlined.insert(&f);
        if (within_size(*c, inlined)) added = true;
        else inlined.erase(&f);
    }
    return added;
}

// Inlines the Funcs read one-to-one by their only consumer.
bool inline_one_to_one(const PipelineGraph &g, std::set<const FuncContents *> &inlined) {
    return inline_into_only_consumer(g, inlined, may_be_inlined, [](const FuncContents &f, const Expr &value, const FuncContents &c) {
        return points_read_at_shifts(f, value, c) == 1;
    });
}

// Inlines cheap Funcs read at several points by their only consumer where that saves memory
// accesses. Stored, a Func costs its own reads and a store, and its consumer reads its points;
// inlined, the consumer reads what it reads, at each of those points. Candidates of one consumer
// are weighed together, as they may read the same points (harris's Ixx, Iyy and Ixy all read Ix
// and Iy at the 9 points harris reads anyway): starting from all of them inlined, the one whose
// storing saves most is stored, while storing one saves anything. Ties inline (a stage fewer).
bool inline_cheap_pointwise(const PipelineGraph &g, std::set<const FuncContents *> &inlined) {
    // Consumers and their candidates in the graph's order, so that ties break the same way in
    // every run.
    std::vector<std::pair<const FuncContents *, std::vector<const FuncContents *>>> candidates;
    for (const auto &fp : g.funcs) {
        const FuncContents &f = *fp;
        if (inlined.count(&f) || !may_be_inlined(f, g)) continue;
        if (ir::operation_count(inline_calls(f.pure.value, inlined)) > kMaxRecomputedOperations) continue;
        const FuncContents *c = only_consumer(f, g, inlined);
        if (!c || points_read_at_shifts(f, inline_calls(c->pure.value, inlined), *c) == 0) continue;
        auto it = std::find_if(candidates.begin(), candidates.end(), [&](const auto &e) { return e.first == c; });
        if (it == candidates.end()) candidates.push_back({c, {&f}});
        else it->second.push_back(&f);
    }
    std::map<const FuncContents *, size_t> position;
    for (size_t i = 0; i < g.funcs.size(); ++i) position[g.funcs[i].get()] = i;
    std::sort(candidates.begin(), candidates.end(),
              [&](const auto &l, const auto &r) { return position.at(l.first) < position.at(r.first); });
    bool added = false;
    for (const auto &[c, fs] : candidates) {
        std::vector<size_t> own;  // each candidate's reads and its store
        for (const FuncContents *f : fs) own.push_back(ir::distinct_reads(inline_calls(f->pure.value, inlined)) + 1);
        // Memory accesses a point with the candidates in `in` inlined (SIZE_MAX when c's value
        // grows too large).
        auto cost = [&](const std::vector<bool> &in) {
            std::set<const FuncContents *> trial = inlined;
            size_t stored = 0;
            for (size_t i = 0; i < fs.size(); ++i) {
                if (in[i]) trial.insert(fs[i]);
                else stored += own[i];
            }
            if (!within_size(*c, trial)) return SIZE_MAX;
            return ir::distinct_reads(inline_calls(c->pure.value, trial)) + stored;
        };
        std::vector<bool> in(fs.size(), true);
        size_t current = cost(in);
        for (;;) {
            size_t best = fs.size(), best_cost = current;
            for (size_t i = 0; i < fs.size(); ++i) {
                if (!in[i]) continue;
                in[i] = false;
                size_t k = cost(in);
                in[i] = true;
                if (k < best_cost) best = i, best_cost = k;
            }
            if (best == fs.size()) break;
            in[best] = false;
            current = best_cost;
        }
        if (current == SIZE_MAX) continue;
        for (size_t i = 0; i < fs.size(); ++i)
            if (in[i]) inlined.insert(fs[i]), added = true;
    }
    return added;
}

// `e` as a * v + k, a pure Var v of `c` times a positive constant a plus a constant k: a and v
// (`2 * x - 1`: a downsample's read); nothing otherwise.
std::optional<std::pair<int64_t, std::string>> scaled_var(const Expr &e, const FuncContents &c) {
    Expr inner = e;
    while ((inner->op == Op::Add || inner->op == Op::Sub) && ir::as_const_int(inner->args[1])) inner = inner->args[0];
    int64_t scale = 1;
    if (inner->op == Op::Mul) {
        std::optional<int64_t> k0 = ir::as_const_int(inner->args[0]), k1 = ir::as_const_int(inner->args[1]);
        if (k0 && !k1) scale = *k0, inner = inner->args[1];
        else if (k1 && !k0) scale = *k1, inner = inner->args[0];
        else return std::nullopt;
    }
    if (scale < 1 || inner->op != Op::Var ||
        std::find(c.pure_args.begin(), c.pure_args.end(), inner->name) == c.pure_args.end())
        return std::nullopt;
    return std::make_pair(scale, inner->name);
}

// How many points of `f` each point of consumer `c` stands for (the product of the scales of its
// calls' coordinates: 2 for a downsample by 2 in x), when every call of f in `value` (c's value,
// inlined Funcs substituted) has as coordinates distinct pure Vars of c times positive constants
// plus constants, or constants; nothing when one does not (x / 2, a data-dependent coordinate).
std::optional<int64_t> points_per_consumer_point(const FuncContents &f, const Expr &value, const FuncContents &c) {
    std::optional<int64_t> ratio;
    bool ok = true;
    ir::visit(value, [&](const Expr &n) {
        if (!ok || n->op != Op::FuncCall || n->func_ptr != &f) return ok;
        int64_t r = 1;
        std::vector<std::string> vars;
        for (const Expr &a : n->args) {
            if (!has_vars(a)) continue;
            std::optional<std::pair<int64_t, std::string>> sv = scaled_var(a, c);
            if (!sv || std::find(vars.begin(), vars.end(), sv->second) != vars.end()) {
                ok = false;
                break;
            }
            vars.push_back(sv->second);
            r *= sv->first;
        }
        ratio = std::max(ratio.value_or(1), r);
        return ok;
    });
    if (!ok) return std::nullopt;
    return ratio;
}

// Inlines cheap Funcs of inputs alone (at most 4 operations, no Func read once inlined Funcs are
// seen through: interpolate's premultiplied colour, input * alpha) into all their consumers, when
// for each consumer that saves memory accesses: stored, the Func costs its reads and a store per
// point, as many points of it per consumer point as the consumer's reads scale (2 for a
// downsample), and the consumer reads it; inlined, the consumer reads the inputs at each point it
// read the Func. Its reads are of inputs, so inlining adds no dependence between statements.
bool inline_cheap_input_functions(const PipelineGraph &g, std::set<const FuncContents *> &inlined) {
    bool added = false;
    for (const auto &fp : g.funcs) {
        const FuncContents &f = *fp;
        if (inlined.count(&f) || !may_be_inlined(f, g)) continue;
        Expr value = inline_calls(f.pure.value, inlined);
        if (ir::operation_count(value) > kMaxRecomputedOperations) continue;
        bool reads_funcs = false;
        ir::visit(value, [&](const Expr &n) {
            reads_funcs = reads_funcs || n->op == Op::FuncCall;
            return !reads_funcs;
        });
        if (reads_funcs) continue;
        std::set<const FuncContents *> consumers = effective_consumers(f, g, inlined);
        if (consumers.empty() || consumers.count(&f)) continue;
        const size_t own = ir::distinct_reads(value) + 1;
        std::set<const FuncContents *> trial = inlined;
        trial.insert(&f);
        bool saves = true;
        for (const FuncContents *c : consumers) {
            if (!c->updates.empty()) {
                saves = false;
                break;
            }
            Expr stored_value = inline_calls(c->pure.value, inlined);
            std::optional<int64_t> ratio = points_per_consumer_point(f, stored_value, *c);
            if (!ratio || !within_size(*c, trial) ||
                ir::distinct_reads(inline_calls(c->pure.value, trial)) > ir::distinct_reads(stored_value) + own * size_t(*ratio)) {
                saves = false;
                break;
            }
        }
        if (!saves) continue;
        inlined.insert(&f);
        added = true;
    }
    return added;
}

// `e` as a base expression plus an integer constant: (base, constant). `li + 1` is (li, 1), `li`
// is (li, 0), a constant k is (no base, k).
std::pair<Expr, int64_t> base_plus_constant(const Expr &e) {
    if (std::optional<int64_t> k = ir::as_const_int(e)) return {Expr(), *k};
    if (e->op == Op::Add || e->op == Op::Sub) {
        if (std::optional<int64_t> k = ir::as_const_int(e->args[1])) {
            auto [base, more] = base_plus_constant(e->args[0]);
            return {base, e->op == Op::Add ? more + *k : more - *k};
        }
    }
    return {e, 0};
}

} // namespace

ReadOncePattern read_once_pattern(const FuncContents &f, const Expr &value, const FuncContents &c) {
    std::optional<std::vector<std::string>> shape;  // per coordinate: the shifted Var, or "@" and the base printed
    std::set<std::vector<int64_t>> constants;
    bool ok = true, any = false, data_dependent = false;
    ir::visit(value, [&](const Expr &n) {
        if (!ok || n->op != Op::FuncCall || n->func_ptr != &f) return ok;
        any = true;
        std::vector<std::string> at;
        std::vector<int64_t> fixed;
        std::set<std::string> vars;
        for (const Expr &a : n->args) {
            std::optional<std::string> v = shifted_var(a);
            if (v && std::find(c.pure_args.begin(), c.pure_args.end(), *v) != c.pure_args.end()) {
                ok = ok && vars.insert(*v).second;
                at.push_back(to_string(a));
                continue;
            }
            auto [base, k] = base_plus_constant(a);
            if (base.defined()) {
                // A base that reads f itself, or an RDom's variable, is not one value per point of c.
                ok = ok && !ir::contains_call_to(base, &f) && ir::rdoms_in(base).empty();
                data_dependent = true;
            }
            at.push_back("@" + (base.defined() ? to_string(base) : std::string()));
            fixed.push_back(k);
        }
        ok = ok && (!shape || *shape == at) && constants.insert(fixed).second;
        shape = at;
        return ok;
    });
    if (!ok || !any || !shape) return ReadOncePattern::None;
    auto is_other = [](const std::string &a) { return a[0] == '@'; };
    // Every Var of c among the coordinates, else several points of c read each point of f
    // (camera_pipe's colour matrix, read at constants alone by every pixel).
    if (size_t(std::count_if(shape->begin(), shape->end(), [&](const std::string &a) { return !is_other(a); })) != c.pure_args.size())
        return ReadOncePattern::None;
    if (std::count_if(shape->begin(), shape->end(), is_other) == 0) return ReadOncePattern::OneToOne;
    return data_dependent ? ReadOncePattern::AtComputedCoordinates : ReadOncePattern::AtConstants;
}

namespace {

// Whether `f`'s only consumer c reads each of its points at most once, at c's own point in some
// coordinates and elsewhere in the others (read_once_pattern). A Func read one-to-one is
// inline_one_to_one's, whose conditions on what the Func reads keep floor divisions out of its
// consumer; one read at computed coordinates must meet them too (local_laplacian's gauss_up_0,
// an upsampling read at (y + 1) / 2 and read at data-dependent levels, inlined, put floor
// divisions and data-dependent levels into one access and isl's AST generator ran past its quota).
bool reads_each_point_once(const FuncContents &f, const Expr &value, const FuncContents &c) {
    switch (read_once_pattern(f, value, c)) {
    case ReadOncePattern::AtConstants: return true;
    case ReadOncePattern::AtComputedCoordinates: return reads_only_shifted(f);
    default: return false;
    }
}

// Inlines the Funcs whose only consumer reads each of their points once, at constants or at
// computed coordinates in the coordinates it does not share (reads_each_point_once): inlining
// recomputes nothing, and the calls at each consumer point share their work (bilateral_grid's
// slice, whose two channels look up the same 8 grid cells: 15.5 -> 13.4 ms), or compute only
// the points read (local_laplacian's laplace_j, 2 of 8 levels). Read at constants, unlike
// one-to-one Funcs, these may read at any coordinates (the slice's x / 8 and data-dependent bin):
// the consumer reads the same points of what they read as they did, at its own point.
bool inline_read_once(const PipelineGraph &g, std::set<const FuncContents *> &inlined) {
    return inline_into_only_consumer(g, inlined, inlinable, reads_each_point_once);
}

} // namespace

std::set<const FuncContents *> automatic_inlines(const PipelineGraph &g) {
    std::set<const FuncContents *> inlined;
    for (const auto &f : g.funcs)
        if (has_schedule_directives(*f)) return inlined;
    // Each inline can make another Func's consumer unique: a few rounds reach the fixed point.
    for (int round = 0; round < 8; ++round) {
        bool added = inline_routing_funcs(g, inlined);
        added = inline_one_to_one(g, inlined) || added;
        added = inline_cheap_pointwise(g, inlined) || added;
        added = inline_cheap_input_functions(g, inlined) || added;
        added = inline_read_once(g, inlined) || added;
        if (!added) break;
    }
    return inlined;
}

} // namespace tessera
