// Construction of the polyhedral model: parameters, statements, access relations and regions.
#include "tessera/poly/model.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include <isl/aff.h>
#include <isl/map.h>
#include <isl/set.h>
#include <isl/space.h>

#include <tessera/automatic_inlining.h>
#include <tessera/bounds.h>

#include "tessera/poly/affine.h"
#include "tessera/poly/dead_instances.h"
#include "tessera/poly/isl_expr.h"
#include "tessera/poly/schedule_json.h"
#include "tessera/poly/staged_inputs.h"
#include "tessera/poly/invariant_subexpressions.h"
#include "tessera/poly/recomputed_reads.h"
#include "tessera/poly/transposed_operands.h"

#include "opaque_parameters.h"
#include "region_bounds.h"
#include "select_cases.h"
#include "statement_calls.h"

namespace tessera::poly {

namespace {

// The elements of an array one access (or one box) touches, as the range of each coordinate on
// its own. Box hulls need no more, and the ranges stay simple where the multi-dimensional range
// of a clamped or mirrored 3-D access has dozens of pieces with divisions (its pieces multiply
// across dimensions; those of one coordinate do not).
struct RegionPart {
    isl::set present;                   // the parameter values for which the access happens
    std::vector<isl::set> coordinates;  // per array dimension, in isl order: a 1-D set
};

std::string array_dim_var(int j) { return "$a" + std::to_string(j); }

class ModelBuilder {
public:
    ModelBuilder(Model &m, const std::string &imported_schedule, bool gpu, int threads)
        : m_(m), imported_schedule_(imported_schedule), gpu_(gpu), threads_(threads) {}

    void build() {
        m_.graph = build_pipeline_graph(m_.pipeline.outputs());
        m_.graph.inlined = imported_schedule_.empty() ? automatic_inlines(m_.graph) : inlined_in_schedule_json(m_.graph, imported_schedule_);
        check_compute_inline(m_.graph);
        copies_ = transposed_operands(m_.graph);
        if (!gpu_) add_invariant_subexpressions(m_.graph, copies_);
        OperandCopies staged = model_staged_inputs(m_.graph, imported_schedule_, gpu_);
        for (const OperandCopies::Copy &c : staged.copies) m_.staged_copies.push_back(c.func.get());
        copies_.append(std::move(staged));
        add_operand_copies(m_.graph, copies_);
        if (!gpu_) m_.recomputed = recompute_computed_coordinate_reads(m_.graph, copies_);
        make_parameters();
        make_arrays();
        make_context();
        infer_regions();
        order_statements();
        make_original_schedule();
        if (threads_ > 1) {
            m_.set_dead_instances(start_dead_instances(m_));
        } else {
            DeadInstances dead = dead_instances(m_);
            m_.set_dead_instances([dead] { return dead; });
        }
        describe_regions();
    }

private:
    // ---- Parameters and arrays --------------------------------------------------------------

    std::string unique(const std::string &base) {
        std::string name = isl_name(base);
        std::string candidate = name;
        for (int k = 1; used_names_.count(candidate); ++k) candidate = name + "_" + std::to_string(k);
        used_names_.insert(candidate);
        return candidate;
    }

    void add_param(Parameter p, Type t) {
        p.var = ir::make_var("$" + p.name, t);
        m_.params.push_back(std::move(p));
    }

    void make_parameters() {
        const auto &outs = m_.pipeline.outputs();
        for (size_t i = 0; i < outs.size(); ++i)
            for (int d = 0; d < outs[i].dimensions(); ++d) {
                for (int which = 0; which < 2; ++which) {
                    Parameter p;
                    p.kind = which == 0 ? Parameter::Kind::OutputMin : Parameter::Kind::OutputExtent;
                    p.name = unique("out_" + outs[i].name() + (which == 0 ? "_min_" : "_extent_") + std::to_string(d));
                    p.output = int(i);
                    p.dim = d;
                    p.in_isl = true;
                    add_param(p, Int(32));
                }
            }
        // Only the input sizes that expressions use are parameters: every extra isl parameter
        // slows every isl operation down.
        std::set<std::tuple<const InputContents *, int, int>> used;
        for (const auto &f : m_.graph.funcs)
            for (const Definition *def : definitions_of(*f))
                for (const Expr &e : definition_exprs(*def))
                    ir::visit(e, [&](const Expr &n) {
                        if (n->op == Op::BufferDim) used.insert({n->input.get(), n->index, n->which});
                        return true;
                    });
        for (const auto &in : m_.graph.inputs)
            for (int d = 0; d < in->dimensions; ++d)
                for (int which = 0; which < 2; ++which) {
                    if (!used.count({in.get(), d, which})) continue;
                    Parameter p;
                    p.kind = which == 0 ? Parameter::Kind::InputMin : Parameter::Kind::InputExtent;
                    p.name = unique("in_" + in->name + (which == 0 ? "_min_" : "_extent_") + std::to_string(d));
                    p.input = in;
                    p.dim = d;
                    p.in_isl = true;
                    add_param(p, Int(32));
                }
        for (const auto &pc : m_.graph.params) {
            Parameter p;
            p.kind = Parameter::Kind::Scalar;
            p.name = unique("p_" + pc->name);
            p.param = pc;
            p.in_isl = pc->type.is_int_or_uint() && !pc->type.is_bool() && pc->type.bits <= 32;
            add_param(p, pc->type);
        }
    }

    void make_arrays() {
        for (const auto &f : m_.graph.funcs) {
            Array a;
            a.kind = Array::Kind::Func;
            a.name = unique("F_" + f->name);
            a.type = f->type;
            a.dimensions = f->dimensions();
            a.func = f.get();
            const auto &outs = m_.pipeline.outputs();
            for (size_t i = 0; i < outs.size(); ++i)
                if (outs[i].contents().get() == f.get()) a.output = int(i);
            a.region = isl::set::empty(array_space(a));  // isl objects must be set before a copy
            m_.arrays.push_back(std::move(a));
        }
        for (const auto &in : m_.graph.inputs) {
            Array a;
            a.kind = Array::Kind::Input;
            a.name = unique("I_" + in->name);
            a.type = in->type;
            a.dimensions = in->dimensions;
            a.input = in;
            a.region = isl::set::empty(array_space(a));
            m_.arrays.push_back(std::move(a));
        }
    }

    isl::space array_space(const Array &a) const { return m_.set_space(a.name, unsigned(a.dimensions)); }

    const Parameter &param(Parameter::Kind k, int output, const InputContents *in, int dim) const {
        for (const Parameter &p : m_.params)
            if (p.kind == k && p.output == output && p.input.get() == in && p.dim == dim) return p;
        internal_error("missing parameter");
    }

    void make_context() {
        isl::set ctx = isl::set::universe(m_.set_space("", 0).params());
        AffineSpace ps = param_space();
        for (const Parameter &p : m_.params) {
            if (p.kind == Parameter::Kind::OutputExtent) ctx = ctx.intersect(*to_set(p.var >= 1, ps));
            if (p.kind == Parameter::Kind::InputExtent) ctx = ctx.intersect(*to_set(p.var >= 0, ps));
        }
        m_.context = ctx;
    }

    AffineSpace param_space() const {
        AffineSpace s;
        s.universe = isl::set::universe(m_.set_space("", 0).params());
        s.param_id = [this](const std::string &v) { return m_.param_id(v); };
        return s;
    }

    // ---- Lowering of definitions ------------------------------------------------------------

    // Replaces RDom variables by Vars of the same name, input sizes and Params by the Vars of
    // their parameters, and calls of Funcs computed inline (Func::compute_inline, or
    // automatically: PipelineGraph::inlined) by their values at the call's coordinates.
    Expr lower(const Expr &e) {
        // Integer values of the Params alone that are not affine in them: parameters of their own.
        return opaque_.rewrite(lower_leaves(e), m_, param_space(), [this](const Expr &value) {
            return add_region_param("pv_" + std::to_string(opaque_.count()), value, 0, -1).var;
        });
    }

    Expr lower_leaves(const Expr &e) const {
        return ir::transform(e, [&](const Expr &n) -> Expr {
            switch (n->op) {
            // (The coordinates are lowered already; the substituted value is lowered in turn.)
            case Op::FuncCall:
                return m_.graph.is_inlined(n->func_ptr) ? lower_leaves(inline_calls(n, m_.graph.inlined)) : n;
            case Op::RVar: return ir::make_var(n->name);
            case Op::BufferDim:
                return param(n->which == 0 ? Parameter::Kind::InputMin : Parameter::Kind::InputExtent, -1,
                             n->input.get(), n->index).var;
            case Op::Param:
                for (const Parameter &p : m_.params)
                    if (p.param == n->param) return p.var;
                internal_error("missing Param ", n->name);
            default: return n;
            }
        });
    }

    // ---- Boxes ------------------------------------------------------------------------------

    // isl operations one exact region bound may take before box_hull falls back to bounding
    // the region's pieces one by one (see docs/schedule-json.md). Both are exact; the fallback's
    // bound is a Region parameter, as an exact bound of several pieces is too. The unions that
    // exceed this quota are those of clamped, downsampled reads, whose exact bound isl does not
    // find at all: at 50,000 operations each failed attempt cost 15-60 ms (local_laplacian's
    // grey image and input: 170 ms of its model), at 10,000 a fifth of that. No schedule of the
    // 39 apps changed; 6 apps' Region parameters take the fallback's expressions (interpolate's
    // model 1.34 -> 0.97 s, pyramid_blend's 1.64 -> 1.35 s, local_laplacian's 1.18 -> 1.0 s).
    static constexpr long kExactBoundOperations = 10000;
    // isl operations the piece-by-piece fallback may take for one bound.
    static constexpr long kPieceBoundOperations = 2000000;

    // A Region parameter (named from `base`) whose run-time value is `value`, over earlier
    // parameters; `array` and `dim` say which region it bounds (-1: none).
    const Parameter &add_region_param(const std::string &base, const Expr &value, int dim, int array) {
        Parameter p;
        p.kind = Parameter::Kind::Region;
        p.name = unique(base);
        p.dim = dim;
        p.array = array;
        p.in_isl = true;
        p.value = value;
        add_param(p, Int(32));
        return m_.params.back();
    }

    // A Region parameter standing for a bound whose exact value is `value` at run time.
    isl::pw_aff region_parameter(const Expr &value, const std::string &tuple, int dim, bool upper) {
        int array = -1;
        for (size_t k = 0; k < m_.arrays.size(); ++k)
            if (m_.arrays[k].name == tuple) array = int(k);
        const Parameter &p = add_region_param("rg_" + tuple + (upper ? "_hi_" : "_lo_") + std::to_string(dim), value, dim, array);
        isl::set params = isl::set::universe(m_.set_space("", 0).params());
        return isl::manage(isl_pw_aff_param_on_domain_id(params.release(), isl_id_alloc(m_.ctx().get(), p.name.c_str(), nullptr)));
    }

    // Whether `b` is defined nowhere in the model's context: decided over the parameters its
    // domain involves (over all of them, local_laplacian's 300 such tests took 0.1 s).
    bool nowhere_in_context(const isl::pw_aff &b) const {
        isl_set *domain = drop_unused_params(isl_pw_aff_domain(b.copy()));
        isl::set context = context_over_parameters(m_.context, isl_set_get_space(domain));
        return isl_set_is_empty(isl_set_intersect(domain, context.release())) == isl_bool_true;
    }

    // The minimum (or maximum) of dimension j of `s` as an isl bound: the exact pw_aff when it
    // is one affine piece, otherwise a Region parameter whose run-time value is the exact bound.
    // Exact bounds of unions with many pieces can take isl very long; over its quota the bound
    // becomes a Region parameter computed as the min (max) of the bounds of the pieces that are
    // non-empty at run time, which is just as exact but not simplified.
    //
    // `s` is the union of `parts` (the ranges of the accesses that make up a region). When the
    // union is too complex to bound at once, the bound is the min (max) over the parts, each
    // bounded exactly where it can be, and piece by piece where it cannot.
    //
    // The sets are 1-D (one coordinate of the array, `dim` in Halide order).
    //
    // `over_quota` records which exact attempts ran out of operations: [0] the union, [1 + i]
    // part i. The two bounds of one dimension share it, so that the upper bound does not spend
    // the quota again on a set whose lower bound was already too complex (each failed attempt
    // is some 40 ms of isl work; fuzzer seed 30457 spent 1.6 s of its model on them).
    isl::pw_aff region_bound(const isl::set &s, const std::vector<isl::set> &parts, int dim,
                             const std::string &tuple, const std::string &what, bool upper,
                             std::vector<bool> &over_quota) {
        over_quota.resize(parts.size() + 1, false);
        IdResolver ids = [this](const std::string &id) { return m_.param_var(id); };
        auto dim_bound = [&](const isl::set &piece) {
            // Bounded over the parameters the piece involves (a handful of the dozens a pipeline
            // has, each a column of every constraint isl handles), then aligned back.
            // (Coalesced before it is aligned: over all the parameters, coalescing took longer
            // than the bound itself; local_laplacian's 1,400 bounds 0.1 s.)
            isl_set *reduced = drop_unused_params(piece.copy());
            isl_pw_aff *bound = upper ? isl_set_dim_max(reduced, 0) : isl_set_dim_min(reduced, 0);  // 1-D sets
            isl::pw_aff b = isl::manage(isl_pw_aff_align_params(isl_pw_aff_coalesce(bound), isl_space_params(isl_set_get_space(piece.get()))));
            if (isl_pw_aff_involves_nan(b.get()))
                user_error("Cannot bound the region of ", what, " in dimension ", dim,
                           ": the polyhedral model finds it unbounded. Clamp the coordinates that read it.");
            return b;
        };
        // Where no piece is present at run time the bound is the neutral one, so that the
        // range is the empty [INT32_MAX, INT32_MIN].
        Expr neutral = make_const(Int(64), upper ? int64_t(INT32_MIN) : int64_t(INT32_MAX));
        auto guarded = [&](const isl::pw_aff &b) {
            // A bound defined nowhere in the context (an empty piece) cannot be an expression.
            if (nowhere_in_context(b)) return neutral;
            Expr present = set_to_condition(b.domain(), m_.context, ids);
            return ir::make_select(present, pw_aff_to_select(b, m_.context, ids), neutral);
        };
        // The exact attempts, which may run out of their quota, each bound a private copy of
        // their set: isl 0.25 stopped by the quota partway can leave the basic sets it was
        // working on broken, and the union shares them with the parts bounded next (a null basic
        // map in isl_basic_map_compute_divs, a crash, for out(x, y) = repeat_edge(in)(2x - 1, y)).
        isl::pw_aff exact;
        Expr value;
        bool done = !over_quota[0] && within_quota(m_.ctx(), kExactBoundOperations, [&] {
            exact = dim_bound(copied_to(m_.ctx(), s));
            // One affine piece on a plain domain (one conjunction without local variables, such
            // as "extent > 0") stays exact in isl. Several pieces, or a domain with divisions or
            // disjunctions (regions read through mirror/repeat boundary conditions get domains
            // of dozens of existentials), would make every set built on the bound as complex.
            isl::set where = exact.domain();
            bool plain = isl_pw_aff_n_piece(exact.get()) == 1 && isl_set_n_basic_set(where.get()) <= 1 &&
                         isl_set_involves_locals(where.get()) == isl_bool_false;
            if (!plain) value = guarded(exact);
        });
        if (done) return value.defined() ? region_parameter(value, tuple, dim, upper) : exact;
        over_quota[0] = true;
        value = neutral;
        auto combine = [&](const Expr &bound) { value = ir::make_binary(upper ? Op::Max : Op::Min, value, bound); };
        done = true;
        for (size_t i = 0; i < parts.size(); ++i) {
            const isl::set &part = parts[i];
            check_time_budget();
            Expr bound;
            // A single part is the union itself, whose exact bound just ran out of operations.
            bool try_exact = parts.size() > 1 && !over_quota[i + 1];
            if (try_exact && within_quota(m_.ctx(), kExactBoundOperations, [&] { bound = guarded(dim_bound(copied_to(m_.ctx(), part))); })) {
                combine(bound);
                continue;
            }
            over_quota[i + 1] = true;
            done = within_quota(m_.ctx(), kPieceBoundOperations, [&] {
                for (const isl::set &piece : pieces_of(part)) combine(guarded(dim_bound(piece)));
            });
            if (!done) break;
        }
        if (!done)
            user_error("The region of ", what, " in dimension ", dim, " is too complex for the polyhedral model to bound ",
                       "within its operation budget. Simplify the coordinates that read it (fewer min/max/clamp and ",
                       "select terms), or split the pipeline.");
        return region_parameter(value, tuple, dim, upper);
    }

    // The smallest box containing the union of `parts` (regions of the array `tuple` of `n`
    // dimensions), with parametric bounds per dimension (see region_bound).
    isl::set box_hull(const std::vector<RegionPart> &parts, const std::string &tuple, unsigned n,
                      const std::string &what) {
        bool present = false;
        for (const RegionPart &p : parts) present = present || !p.present.is_empty();
        if (!present) return isl::set::empty(m_.set_space(tuple, n));
        std::vector<isl::pw_aff> los, his;
        for (unsigned j = 0; j < n; ++j) {
            // The parts' ranges (over the parameters each involves) over those any of them
            // involves, in the model's order: a deep pipeline has hundreds of parameters, each a
            // column of every constraint isl handles, and isl's binary operations align the
            // parameters of their operands in another order, which would reorder the conditions
            // of the expressions built from the bounds.
            std::vector<isl::space> involved;
            for (const RegionPart &p : parts) involved.push_back(p.coordinates[j].space());
            isl::space sp_1 = m_.set_space(tuple, 1);
            isl_space *params = params_in_order_of(sp_1, involved);
            // Identical ranges (a Func read the same way twice) are bounded once; coalescing is
            // only a simplification, skipped where it would take long.
            std::vector<isl::set> distinct;
            for (const RegionPart &p : parts) {
                isl::set c = isl::manage(isl_set_align_params(p.coordinates[j].copy(), isl_space_copy(params)));
                bool seen = isl_set_plain_is_empty(c.get()) == isl_bool_true;
                for (const isl::set &d : distinct) seen = seen || isl_set_plain_is_equal(d.get(), c.get()) == isl_bool_true;
                if (!seen) distinct.push_back(c);
            }
            // (Each coalesced as a private copy, kept only when it finishes: isl stopped by its
            // quota partway may leave the pieces it worked on broken, and the parts share them.)
            for (isl::set &d : distinct)
                within_quota(m_.ctx(), kExactBoundOperations, [&] { d = copied_to(m_.ctx(), d).coalesce(); });
            isl::set all = isl::manage(isl_set_empty(isl_space_align_params(isl_space_drop_all_params(sp_1.release()), params)));
            // isl 0.25's coalesce can crash (a null dereference in isl_set_wrap_facet) on a union
            // of parts that are themselves unions with divisions, which mirror boundary
            // conditions give (fuzzer seed 2305741): such a union is bounded uncoalesced.
            bool divided_unions = false;
            for (const isl::set &d : distinct) {
                all = all.unite(d);
                divided_unions = divided_unions ||
                                 (isl_set_n_basic_set(d.get()) > 1 && isl_set_involves_locals(d.get()) == isl_bool_true);
            }
            if (!divided_unions) within_quota(m_.ctx(), kExactBoundOperations, [&] { all = copied_to(m_.ctx(), all).coalesce(); });
            if (all.is_empty()) return isl::set::empty(m_.set_space(tuple, n));
            int dim = int(n) - 1 - int(j);
            std::vector<bool> over_quota;
            los.push_back(region_bound(all, distinct, dim, tuple, what, false, over_quota));
            his.push_back(region_bound(all, distinct, dim, tuple, what, true, over_quota));
        }
        // The box lives in a space that knows every parameter, including new Region ones.
        isl::space sp = m_.set_space(tuple, n);
        isl::set box = isl::set::universe(sp);
        // A zero-dimensional array (an inline reduction over no free Var) has no bounds to
        // carry where it is needed: its box holds its one element only for the parameters
        // where some part is present (fuzzer seed 31173: a reduction read by a Func that
        // nothing needed at run time was computed anyway, reading an input out of bounds).
        if (n == 0) {
            isl::set where = isl::set::empty(isl::manage(isl_space_params(sp.copy())));
            for (const RegionPart &p : parts) where = where.unite(p.present);
            box = box.intersect_params(where.coalesce());
        }
        for (unsigned j = 0; j < n; ++j) box = restrict_dimension(box, j, los[j], his[j]);
        return box.coalesce();
    }

    // A box (or any set in an array space) as a RegionPart: each dimension projected on its own.
    static RegionPart part_of_box(const isl::set &box) {
        RegionPart part;
        part.present = isl::manage(drop_unused_params(box.params().release()));
        unsigned n = box.tuple_dim();
        const char *name = isl_set_get_tuple_name(box.get());
        for (unsigned j = 0; j < n; ++j) {
            isl_set *c = isl_set_project_out(box.copy(), isl_dim_set, j + 1, n - j - 1);
            c = isl_set_project_out(c, isl_dim_set, 0, j);
            part.coordinates.push_back(isl::manage(isl_set_set_tuple_name(drop_unused_params(c), name)));
        }
        return part;
    }

    isl::set output_box(const Array &a) const {
        AffineSpace s;
        s.universe = isl::set::universe(array_space(a));
        s.param_id = [this](const std::string &v) { return m_.param_id(v); };
        isl::set box = s.universe;
        for (int d = 0; d < a.dimensions; ++d) {
            int j = a.dimensions - 1 - d;
            s.var_dims[array_dim_var(j)] = j;
            Expr x = ir::make_var(array_dim_var(j));
            Expr mn = param(Parameter::Kind::OutputMin, a.output, nullptr, d).var;
            Expr ext = param(Parameter::Kind::OutputExtent, a.output, nullptr, d).var;
            box = box.intersect(*to_set(x >= mn && x <= mn + ext - 1, s));
        }
        return box;
    }

    static isl::set rename(const isl::set &s, const std::string &tuple) {
        return isl::manage(isl_set_set_tuple_name(s.copy(), tuple.c_str()));
    }

    // ---- Accesses ---------------------------------------------------------------------------

    // The relation from a statement's instances to the elements `args` (Halide order) of
    // `array`: exact when every coordinate is affine, bounded by affine_bounds otherwise.
    //
    // With `part`, also the range of each coordinate on its own (see RegionPart).
    Access access(const Statement &s, const AffineSpace &space, const std::vector<Expr> &args, int array,
                  const std::string &what, RegionPart *part = nullptr) const {
        check_time_budget();
        const Array &arr = m_.arrays[size_t(array)];
        Access acc;
        acc.array = array;
        isl::space dom_space = space.universe.space();
        isl::map rel;
        isl::space params;  // those of the first coordinate's relation
        bool first = true;
        for (int j = 0; j < arr.dimensions; ++j) {
            const Expr &e = args[size_t(arr.dimensions - 1 - j)];
            // A select in the index whose condition may wrap is bounded by both of its values.
            AffineSpace exact_where_it_runs = space;
            exact_where_it_runs.exact_selects = s.domain.is_subset(exact_conditions(e, space));
            AffineBounds b = affine_bounds(e, exact_where_it_runs);
            if (!b.lo || !b.hi)
                user_error("Cannot bound the region of ", what, " read by ", s.func->name, ": coordinate ",
                           arr.dimensions - 1 - j, " (", e, ") may take any value. Clamp it to the valid range, e.g. "
                           "clamp(e, 0, n - 1), or use a BoundaryConditions function.");
            isl::map dim_rel;
            if (b.exact) {
                dim_rel = isl::manage(isl_map_from_pw_aff(b.lo->copy()));
            } else {
                acc.exact = false;
                isl::map lo = isl::manage(isl_map_from_pw_aff(b.lo->copy()));
                isl::map hi = isl::manage(isl_map_from_pw_aff(b.hi->copy()));
                isl::space lo_space = lo.space();
                isl::space one = isl::manage(isl_space_range(lo_space.copy()));
                isl::map le = isl::manage(isl_map_lex_le(one.copy()));
                isl::map ge = isl::manage(isl_map_lex_ge(one.copy()));
                dim_rel = lo.apply_range(le).intersect(hi.apply_range(ge));
            }
            if (part) {
                // (Over the parameters the two involve, in the model's order: see box_hull.)
                isl_map *rel_used = drop_unused_params(dim_rel.copy());
                isl_set *domain_used = drop_unused_params(s.domain.copy());
                isl_space *range_params = params_in_order_of(dom_space, {isl::manage(isl_map_get_space(rel_used)),
                                                                         isl::manage(isl_set_get_space(domain_used))});
                rel_used = isl_map_align_params(rel_used, isl_space_copy(range_params));
                domain_used = isl_set_align_params(domain_used, range_params);
                isl::set range = isl::manage(isl_map_range(isl_map_intersect_domain(rel_used, domain_used)));
                part->coordinates.push_back(isl::manage(isl_set_set_tuple_name(range.release(), arr.name.c_str())));
            }
            // The coordinates' relations are combined over the parameters they involve, then
            // aligned back to those of the first: over all of a deep pipeline's parameters, each
            // product of pieces cost as much again (local_laplacian's 1,500 products: 0.1 s).
            if (first) params = isl::manage(isl_space_params(dim_rel.space().release()));
            isl_map *reduced = drop_unused_params(dim_rel.release());
            rel = first ? isl::manage(reduced) : isl::manage(isl_map_flat_range_product(rel.release(), reduced));
            first = false;
        }
        if (first) {  // a zero-dimensional array
            rel = isl::manage(isl_map_from_domain(isl::set::universe(dom_space).release()));
        } else {
            rel = isl::manage(isl_map_align_params(rel.release(), params.release()));
        }
        rel = isl::manage(isl_map_set_tuple_name(rel.release(), isl_dim_out, arr.name.c_str()));
        acc.unrestricted = rel;
        acc.relation = rel.intersect_domain(s.domain);
        // Coalescing is a simplification. A clamped read of an input (a boundary condition
        // inlined into its consumers) is a piecewise relation whose pieces multiply across
        // dimensions (9 for a 2-D clamp), and coalescing them was a third of a deep pyramid's
        // model time; inputs are never written, so no dependence is computed from it.
        if (!(arr.kind == Array::Kind::Input && isl_map_n_basic_map(acc.relation.get()) > 4))
            acc.relation = acc.relation.coalesce();
        if (part) part->present = isl::manage(drop_unused_params(s.domain.params().release()));
        return acc;
    }

    // ---- Regions and statements ---------------------------------------------------------------

    void infer_regions() {
        read_parts_.assign(m_.arrays.size(), {});
        for (auto it = m_.graph.funcs.rbegin(); it != m_.graph.funcs.rend(); ++it) {
            FuncContents *f = it->get();
            int ai = m_.array_of(f);
            Array &arr = m_.arrays[size_t(ai)];
            std::string what = detail::str_cat("Func ", f->name);
            std::vector<RegionPart> &parts = read_parts_[size_t(ai)];
            if (arr.output >= 0) parts.push_back(part_of_box(output_box(arr)));
            if (parts.empty()) continue;
            isl::set required = box_hull(parts, arr.name, unsigned(arr.dimensions), what);
            if (required.is_empty()) continue;
            // bound() and align_bounds() set and widen the range computed (and the range of the
            // updates' pure loops); what was needed is checked against the bound below.
            const isl::set needed = required;
            if (!f->bounds.empty()) required = bounds_.apply(*f, ai, required);

            std::vector<Statement> stmts(f->updates.size() + 1);
            std::vector<RegionPart> realized_parts{part_of_box(required)};
            for (size_t k = 0; k < f->updates.size(); ++k) {
                Statement &s = stmts[k + 1];
                RegionPart written;
                make_update_statement(*f, int(k), required, s, written);
                if (s.domain.is_empty()) continue;
                AffineSpace sp = m_.instance_space(s.name, s.dims);
                realized_parts.push_back(written);
                for_each_distinct_call(s, [&](const ExprNode &call) {
                    if (call.op != Op::FuncCall || call.func_ptr != f) return;
                    RegionPart read;
                    access(s, sp, call.args, ai, f->name, &read);
                    realized_parts.push_back(read);
                });
            }
            // For an output, the realized box must fit its buffer; that is checked at run time,
            // where the buffer's extents are known.
            isl::set realized = box_hull(realized_parts, arr.name, unsigned(arr.dimensions), what);
            if (!f->bounds.empty()) {
                std::vector<RegionPart> need_parts = realized_parts;
                need_parts[0] = part_of_box(needed);
                isl::set need = need_parts.size() == 1 ? needed : box_hull(need_parts, arr.name, unsigned(arr.dimensions), what);
                realized = bounds_.check(ai, need, realized);
            }
            arr.region = realized;

            Statement &pure = stmts[0];
            pure.func = f;
            pure.definition = 0;
            pure.name = unique("S_" + f->name + "_0");
            for (auto d = f->pure_args.rbegin(); d != f->pure_args.rend(); ++d) pure.dims.push_back(*d);
            pure.domain = rename(realized, pure.name);
            pure.value = lower(copies_.value_of(*f, 0));
            for (const std::string &a : f->pure_args) pure.store.push_back(ir::make_var(a));
            AffineSpace psp = m_.instance_space(pure.name, pure.dims);
            pure.write = access(pure, psp, pure.store, ai, f->name);

            // Regions above are those of whole definitions; statements below are their cases.
            std::vector<Statement> cases;
            for (Statement &s : stmts) {
                if (s.domain.is_null() || s.domain.is_empty()) continue;
                if (s.definition == 0) cases.push_back(std::move(s));
                else split_affine_selects(std::move(s), ai, cases);
            }
            stmts = std::move(cases);
            for (Statement &s : stmts) {
                AffineSpace sp = m_.instance_space(s.name, s.dims);
                for_each_distinct_call(s, [&](const ExprNode &call) {
                    int target = call.op == Op::FuncCall ? m_.array_of(call.func_ptr) : m_.array_of(call.input.get());
                    TESSERA_INTERNAL_ASSERT(target >= 0, "no array for ", call.name);
                    RegionPart read;
                    Access a = access(s, sp, call.args, target, call.name, &read);
                    bool seen = false;
                    for (const Access &r : s.reads)
                        if (r.array == a.array && r.relation.is_equal(a.relation)) seen = true;
                    if (!seen) s.reads.push_back(a);
                    if (target != ai) read_parts_[size_t(target)].push_back(read);
                });
            }
            for (Statement &s : stmts) by_func_[f].push_back(std::move(s));
        }
        for (size_t i = 0; i < m_.arrays.size(); ++i) {
            Array &a = m_.arrays[i];
            if (a.kind == Array::Kind::Input && !read_parts_[i].empty())
                a.region = box_hull(read_parts_[i], a.name, unsigned(a.dimensions), detail::str_cat("input ", a.input->name));
        }
    }

    // isl's operation quotas bound each region bound, but quotas do not nest (each one resets
    // isl's counter), so the many small computations between them are bounded by this thread's
    // CPU time instead (not wall-clock time, which a loaded machine stretches): the model of a
    // pipeline the fuzzer generates takes well under a second, that of 23 elementwise torch ops
    // over one 3-D tensor (23 outputs, 140 parameters) 2.8-3.7 s on a slow machine of our kind
    // (half the speed of another of the same kind).
    static constexpr double kModelSeconds = 8.0;
    void check_time_budget() const {
        if (cpu_.elapsed_ms() > kModelSeconds * 1000)
            user_error("The regions of this pipeline are too entangled for the polyhedral model to infer within ",
                       kModelSeconds, " s of computation. Simplify the index expressions that combine clamps, selects and "
                       "data-dependent reads, or split the pipeline.");
    }

    void make_update_statement(FuncContents &f, int k, const isl::set &required, Statement &s, RegionPart &written) {
        check_time_budget();
        const Definition &u = f.updates[size_t(k)];
        s.func = &f;
        s.definition = k + 1;
        s.name = unique("S_" + f.name + "_" + std::to_string(k + 1));
        // Pure Vars outermost (last dimension first), then the RDom's variables (last first).
        std::vector<int> pure_positions;
        for (int i = int(u.args.size()) - 1; i >= 0; --i)
            if (u.args[size_t(i)]->op == Op::Var) {
                pure_positions.push_back(i);
                s.dims.push_back(u.args[size_t(i)]->name);
            }
        if (u.rdom)
            for (int r = int(u.rdom->dims.size()) - 1; r >= 0; --r) s.dims.push_back(u.rdom->dims[size_t(r)].name);
        AffineSpace sp = m_.instance_space(s.name, s.dims);
        // An update runs only where the Func is computed at all, where its consumers need some
        // of it: one that writes through its RDom alone (f(r.x + 1) = ...) would otherwise run,
        // and read its inputs, for a Func nothing reads (a consumer's RDom empty at run time).
        isl::set dom = sp.universe.intersect_params(required.params());
        // Pure Vars range over the box the consumers need.
        for (size_t q = 0; q < pure_positions.size(); ++q) {
            int i = pure_positions[q];
            int j = f.dimensions() - 1 - i;
            isl::pw_aff lo = isl::manage(isl_set_dim_min(required.copy(), j));
            isl::pw_aff hi = isl::manage(isl_set_dim_max(required.copy(), j));
            isl::pw_aff var = *to_pw_aff(ir::make_var(s.dims[q]), sp);
            isl::space ssp = sp.universe.space();
            isl_space *params = isl_space_params(ssp.copy());
            isl::pw_aff lo_on = isl::manage(isl_pw_aff_insert_domain(isl_pw_aff_align_params(lo.copy(), isl_space_copy(params)), ssp.copy()));
            isl::pw_aff hi_on = isl::manage(isl_pw_aff_insert_domain(isl_pw_aff_align_params(hi.copy(), params), ssp.copy()));
            dom = dom.intersect(lo_on.le_set(var)).intersect(var.le_set(hi_on));
        }
        if (u.rdom) {
            for (size_t r = 0; r < u.rdom->dims.size(); ++r) {
                const RVarDef &d = u.rdom->dims[r];
                Expr v = ir::make_var(d.name), mn = lower(d.min), ext = lower(d.extent);
                auto in_range = to_set(v >= mn && v <= mn + ext - 1, sp);
                if (!in_range)
                    user_error("RDom ", u.rdom->name, ": the bounds of ", d.name, " (min ", d.min, ", extent ", d.extent,
                               ") must be affine in the input sizes and integer Params for the polyhedral layer.");
                dom = dom.intersect(*in_range);
            }
            // A predicate that no point of a constant RDom can satisfy, by interval bounds with
            // the Params unknown (`in(r.y) > INT64_MAX`): the update never runs and reads
            // nothing, as the interpreter decides (fuzzer seed 2101789).
            BoundsScope box;
            box.symbolic = true;
            bool constant_box = true;
            for (size_t r = 0; r < u.rdom->dims.size() && constant_box; ++r) {
                std::optional<int64_t> mn = ir::as_const_int(u.rdom->dims[r].min), ext = ir::as_const_int(u.rdom->dims[r].extent);
                constant_box = mn && ext;
                if (constant_box) box.rvars[{u.rdom.get(), int(r)}] = Interval{double(*mn), double(*mn + *ext - 1)};
            }
            if (constant_box)
                for (const Expr &p : u.rdom->predicates)
                    if (bounds_of(p, box).max < 0.5) dom = isl::set::empty(dom.space());
            // Each conjunct on its own: the affine ones that isl holds exactly restrict the domain
            // (and so the regions), the others (wrapping int32 arithmetic, data-dependent
            // values) are tested at run time. `r.x == 1 && r.x + 2147483647 < 2` runs at r.x = 1
            // only, and reads nothing at r.x = 0 (fuzzer seed 2006728). An affine int32 conjunct
            // that may wrap is modeled with its wrap (to_set_wrapping): a guard alone left the
            // domain, and the regions it needs, as if it held everywhere, where the interpreter
            // finds it holds nowhere (`r.x + -2147483645 > 0`, fuzzer seed 1700140).
            // An affine conjunct exact only where its arithmetic stays in range (`(r.x + y) % 2
            // == 0` is exact unless y is within 2 of INT32_MIN) restricts the domain there and
            // stays a guard for the rest: the regions it needs are exact for every coordinate a
            // realistic buffer has (fuzzer seed 2473823 asked for an input region that only a
            // never-taken update would read).
            for (const Expr &p : u.rdom->predicates)
                for (const Expr &lp : ir::conjuncts(lower(p))) {
                    auto ps = to_set(lp, sp);
                    isl::set exact = ps ? exact_conditions(lp, sp) : isl::set();
                    if (ps && dom.is_subset(exact)) dom = dom.intersect(*ps);
                    else if (auto ws = to_set_wrapping(lp, sp)) dom = dom.intersect(*ws);
                    else {
                        if (ps) dom = dom.intersect(ps->unite(sp.universe.subtract(exact))).coalesce();
                        s.guards.push_back(lp);
                    }
                }
        }
        s.domain = dom.coalesce();
        for (const Expr &a : u.args) s.store.push_back(lower(a));
        s.value = lower(copies_.value_of(f, k + 1));
        if (!s.domain.is_empty()) s.write = access(s, sp, s.store, m_.array_of(&f), f.name, &written);
    }

    // Index-set splitting (select_cases.h): an update whose value selects on affine conditions of
    // its instance, like LU's `select(r.x == r.z, pivot_division, trailing_update)`, becomes one
    // statement per case, in the update's order (one band), so that the dependences and the
    // scheduler see each case's own accesses: LU's trailing update then parallelizes and
    // vectorizes. The first case keeps the update's name; over kMaxCases cases it stays whole.
    static constexpr size_t kMaxCases = 8;
    void split_affine_selects(Statement s, int array, std::vector<Statement> &out) {
        std::vector<std::pair<isl::set, Expr>> cases =
            affine_select_cases(s.domain, s.value, m_.instance_space(s.name, s.dims), kMaxCases);
        if (cases.size() > kMaxCases || (cases.size() == 1 && cases[0].second.same_as(s.value))) {
            out.push_back(std::move(s));
            return;
        }
        for (size_t i = 0; i < cases.size(); ++i) {
            Statement c = s;
            if (i > 0) c.name = unique(s.name + "_case" + std::to_string(i));
            c.domain = rename(cases[i].first, c.name);
            c.value = cases[i].second;
            c.write = access(c, m_.instance_space(c.name, c.dims), c.store, array, s.func->name);
            out.push_back(std::move(c));
        }
    }

    void order_statements() {
        for (const auto &f : m_.graph.funcs) {
            auto it = by_func_.find(f.get());
            if (it == by_func_.end()) continue;
            for (Statement &s : it->second) m_.statements.push_back(std::move(s));
        }
    }

    // ---- The original schedule --------------------------------------------------------------

    void make_original_schedule() {
        isl::union_set dom = m_.domains();
        if (m_.statements.empty()) {
            m_.original = isl::schedule::from_domain(dom);
            return;
        }
        // The cases of one definition share one entry: they run interleaved in the definition's
        // order, not one case after the other.
        std::vector<std::vector<int>> definitions = definitions_in_order(m_);
        isl::schedule_node node = isl::schedule::from_domain(dom).root().child(0);
        isl::union_set_list filters(m_.ctx(), int(definitions.size()));
        for (const auto &d : definitions) {
            isl::union_set filter(m_.statements[size_t(d.front())].domain);
            for (size_t i = 1; i < d.size(); ++i) filter = filter.unite(isl::union_set(m_.statements[size_t(d[i])].domain));
            filters = filters.add(filter);
        }
        if (definitions.size() > 1) node = node.insert_sequence(filters);
        for (size_t k = 0; k < definitions.size(); ++k) {
            const Statement &first = m_.statements[size_t(definitions[k].front())];
            isl::schedule_node leaf = definitions.size() > 1 ? node.child(int(k)).child(0) : node;
            if (!first.dims.empty()) {
                isl::union_map ids = isl::union_map::empty(m_.ctx());
                for (int i : definitions[k]) {
                    isl::space dom_space = m_.statements[size_t(i)].domain.space();
                    isl::map id = isl::manage(isl_map_identity(isl_space_map_from_set(dom_space.copy())));
                    ids = ids.unite(isl::union_map(isl::manage(isl_map_reset_tuple_id(id.release(), isl_dim_out))));
                }
                isl::multi_union_pw_aff mupa = isl::manage(isl_multi_union_pw_aff_from_union_map(ids.release()));
                leaf = leaf.insert_partial_schedule(mupa);
            }
            node = definitions.size() > 1 ? leaf.parent().parent() : leaf;
        }
        m_.original = node.schedule();
    }

    // ---- Regions as expressions ---------------------------------------------------------------

    void describe_regions() {
        IdResolver ids = [this](const std::string &id) { return m_.param_var(id); };
        for (Array &a : m_.arrays) {
            // An empty region (a Func read only by statements that never run, such as updates
            // over an empty RDom) is the empty box at 0: storage of no elements.
            a.min.assign(size_t(a.dimensions), Expr(0));
            a.extent.assign(size_t(a.dimensions), Expr(0));
            if (a.region.is_empty()) continue;
            // Where the region is empty for the run's parameters (every access to the array is
            // in statements that do not run), isl's expressions of its bounds are those of some
            // other case: the extents are 0 there, so that nothing is checked or allocated.
            // (Over the parameters the region involves, as the expressions are: over all of a
            // deep pipeline's parameters each bound took a millisecond.)
            isl::set region = isl::manage(drop_unused_params(a.region.copy()));
            isl::set present = region.params();
            Expr present_condition;
            if (!context_over_parameters(m_.context, isl_set_get_space(present.get())).is_subset(present))
                present_condition = set_to_condition(present, m_.context, ids);
            for (int j = 0; j < a.dimensions; ++j) {
                int d = a.dimensions - 1 - j;
                isl::pw_aff lo = isl::manage(isl_set_dim_min(region.copy(), j));
                isl::pw_aff hi = isl::manage(isl_set_dim_max(region.copy(), j));
                isl::pw_aff one = isl::manage(isl_pw_aff_val_on_domain(lo.domain().release(), isl_val_one(m_.ctx().get())));
                a.min[size_t(d)] = pw_aff_to_expr(lo, m_.context, ids);
                a.extent[size_t(d)] = pw_aff_to_expr(hi.sub(lo).add(one), m_.context, ids);
                if (present_condition.defined())
                    a.extent[size_t(d)] = ir::make_select(present_condition, a.extent[size_t(d)], make_const(Int(64), int64_t(0)));
            }
        }
    }

    Model &m_;
    const std::string &imported_schedule_;
    const bool gpu_;  // a GPU schedule: inputs are staged in shared memory (staged_inputs.h)
    const int threads_;  // build_model's
    ThreadCpuClock cpu_;  // since the model was started (check_time_budget)
    std::set<std::string> used_names_;
    std::map<const FuncContents *, std::vector<Statement>> by_func_;
    OperandCopies copies_;  // copies added to the graph, and the definitions that read them
    OpaqueParameters opaque_;  // opaque_parameters.h
    // Per array, what the accesses that read it touch (its region is their box hull).
    std::vector<std::vector<RegionPart>> read_parts_;
    // Func::bound and Func::align_bounds (region_bounds.h).
    RegionBounds bounds_{m_, RegionBounds::Hooks{[this](const Expr &e) { return lower(e); },
                                                 [this](const Expr &value, const std::string &tuple, int dim, bool upper) {
                                                     return region_parameter(value, tuple, dim, upper);
                                                 }}};
};

} // namespace

std::unique_ptr<Model> build_model(const Pipeline &p, const std::string &imported_schedule, bool gpu, int threads) {
    auto m = std::make_unique<Model>();
    // A Pipeline of its own over the same outputs: a model cached by `p` (through its compiled
    // code) must not hold p's contents, or neither would ever be freed.
    m->pipeline = Pipeline(p.outputs());
    try {
        ModelBuilder(*m, imported_schedule, gpu, threads).build();  // bounded: region_bound's quotas, check_time_budget
    } catch (const isl::exception &e) {
        internal_error("isl failed while building the model: ", e.what());
    }
    return m;
}

} // namespace tessera::poly
