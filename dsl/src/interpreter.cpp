// The reference interpreter. It infers, consumers first, the box of each Func that its
// consumers read (interval bounds of their call arguments), checks the inputs against what is
// read, then computes each Func over its box, producers first, with the reference evaluator.
// Calls of Funcs computed inline are replaced by their values first, as the compiled paths do:
// such a Func has no box, so a call coordinate its value ignores needs no bound.
#include <algorithm>
#include <cmath>
#include <optional>

#include "tessera/automatic_inlining.h"
#include "tessera/bounds.h"
#include "tessera/eval.h"
#include "tessera/func_graph.h"
#include "tessera/interpret.h"

namespace tessera {
namespace {

using Box = std::vector<Interval>;

bool box_empty(const Box &b) {
    return std::any_of(b.begin(), b.end(), [](const Interval &i) { return i.empty(); });
}

std::string range_str(const Interval &i) { return detail::str_cat("[", int64_t(i.min), ", ", int64_t(i.max), "]"); }

// Evaluates an Expr that uses no variables (RDom bounds).
int64_t eval_constant(const Expr &e) {
    CompiledExpr c(e, EvalBindings{});
    return c.eval(nullptr).i;
}

// The loops of one update definition: the pure Vars on its left and its RDom variables.
struct UpdateLoops {
    std::vector<std::pair<int, Interval>> pure;   // (position, range)
    std::vector<Interval> rvars;
    BoundsScope scope;
};

struct FuncState {
    // Whether any consumer reads the Func (or it is an output): a zero-dimensional Func's box
    // cannot be empty, so it says whether such a Func is computed.
    bool read = false;
    bool computed = false;
    Box required;  // read by consumers (or the output buffer); the range of update pure Vars
    Box realized;  // required plus what the updates write and read of the Func itself
    Buffer<void> storage;
    Accessor accessor;
    // Per update definition, its loops over `required` (none when they are empty).
    std::vector<std::optional<UpdateLoops>> updates;
};

class Interpreter {
public:
    Interpreter(const PipelineGraph &g, const std::vector<Buffer<void>> &outputs, InterpretReport *report)
        : g_(g), outputs_(outputs), report_(report) {
        for (const auto &f : g_.funcs) {
            std::vector<Definition> &defs = definitions_[f.get()];
            for (const Definition *d : definitions_of(*f)) {
                Definition inlined = *d;
                for (Expr &a : inlined.args) a = inline_calls(a, g_.inlined);
                inlined.value = inline_calls(inlined.value, g_.inlined);
                defs.push_back(std::move(inlined));
            }
        }
    }

    void run() {
        check_bindings(g_);
        for (size_t i = 0; i < g_.outputs.size(); ++i) output_buffer_[g_.outputs[i]] = &outputs_[i];
        infer_regions();
        check_inputs();
        make_accessors();
        for (const auto &f : g_.funcs) compute(*f);
        if (report_) {
            for (const auto &f : g_.funcs) {
                auto &region = report_->computed_region[f->name];
                region.clear();
                for (const Interval &i : state_.at(f.get()).realized) region.emplace_back(int64_t(i.min), int64_t(i.max));
            }
        }
    }

private:
    // A Func's definitions with inlined calls replaced (the RDom's bounds and predicates are
    // kept: a Func they call is computed).
    const Definition &pure_of(const FuncContents &f) const { return definitions_.at(&f)[0]; }
    const Definition &update_of(const FuncContents &f, size_t k) const { return definitions_.at(&f)[k + 1]; }

    Box output_box(const FuncContents &f) const {
        const Buffer<void> &b = *output_buffer_.at(&f);
        Box box;
        for (int i = 0; i < b.dimensions(); ++i) box.push_back(Interval{double(b.min(i)), double(b.min(i) + b.extent(i) - 1)});
        return box;
    }

    static std::optional<UpdateLoops> update_loops(const Definition &u, const Box &pure_range) {
        UpdateLoops l;
        for (size_t i = 0; i < u.args.size(); ++i)
            if (u.args[i]->op == Op::Var) {
                l.pure.emplace_back(int(i), pure_range[i]);
                l.scope.vars[u.args[i]->name] = pure_range[i];
                if (pure_range[i].empty()) return std::nullopt;
            }
        if (u.rdom) {
            for (size_t k = 0; k < u.rdom->dims.size(); ++k) {
                int64_t mn = eval_constant(u.rdom->dims[k].min), ext = eval_constant(u.rdom->dims[k].extent);
                if (ext <= 0) return std::nullopt;
                Interval r{double(mn), double(mn + ext - 1)};
                l.rvars.push_back(r);
                l.scope.rvars[{u.rdom.get(), int(k)}] = r;
            }
            // The RVars range only over values for which the predicates can hold (the
            // polyhedral model sees affine predicates exactly, so it never needs more).
            for (const Expr &p : u.rdom->predicates) narrow_by_condition(p, l.scope);
            for (size_t k = 0; k < l.rvars.size(); ++k) {
                l.rvars[k] = l.scope.rvars.at({u.rdom.get(), int(k)});
                if (l.rvars[k].empty()) return std::nullopt;
            }
            // A predicate false over the whole RDom: the update never runs and reads nothing
            // (as the polyhedral model, which sees the empty domain, agrees).
            for (const Expr &p : u.rdom->predicates)
                if (bounds_of(p, l.scope).max < 0.5) return std::nullopt;
        }
        return l;
    }

    // Grows `box` to contain the coordinates of a call, whose arguments range over `scope`.
    void require(const ExprNode &call, const BoundsScope &scope, Box &box, const std::string &reader) {
        if (box.empty()) box.assign(call.args.size(), Interval::nothing());
        for (size_t i = 0; i < call.args.size(); ++i) {
            Interval r = bounds_of(call.args[i], scope);
            if (!r.bounded() || r.max - r.min >= 2147483647.0)
                user_error("Cannot bound the region of ", call.name, " read by ", reader, ": coordinate ", i, " (",
                           call.args[i], ") may take any value in ", r.bounded() ? range_str(r) : std::string("(-inf, inf)"),
                           ". Clamp it to the valid range, e.g. clamp(e, 0, n - 1), or use a BoundaryConditions function.");
            box[i] = box[i].hull(r);
        }
    }

    // Adds the regions of every Func and input called in `e` (except `self`) to their boxes.
    void require_calls(const Expr &e, const BoundsScope &scope, const FuncContents &reader) {
        ir::visit(e, [&](const Expr &n) {
            if (n->op == Op::FuncCall && n->func_ptr != &reader) {
                FuncState &callee = state_[n->func_ptr];
                callee.read = true;
                require(*n, scope, callee.required, reader.name);
            }
            else if (n->op == Op::InputCall) require(*n, scope, input_required_[n->input.get()], reader.name);
            return true;
        });
    }

    void infer_regions() {
        for (auto it = g_.funcs.rbegin(); it != g_.funcs.rend(); ++it) {
            const FuncContents &f = **it;
            FuncState &s = state_[&f];
            bool is_output = output_buffer_.count(&f) > 0;
            if (s.required.empty()) s.required.assign(size_t(f.dimensions()), Interval::nothing());
            if (is_output) {
                Box ob = output_box(f);
                for (size_t i = 0; i < ob.size(); ++i) s.required[i] = s.required[i].hull(ob[i]);
            }
            // Consumers were all visited before: `required` is final, but for bound() and
            // align_bounds(), which set and widen the range computed (and the updates' loops).
            const Box needed = s.required;
            apply_bounds(f, s.required);
            if ((s.read || is_output) && !box_empty(needed)) check_bounds(f, needed, s.required, s.required);
            s.realized = s.required;
            for (size_t k = 0; k < f.updates.size(); ++k) s.updates.push_back(update_loops(update_of(f, k), s.required));
            s.computed = (s.read || is_output) && !box_empty(s.required);
            if (!s.computed) continue;
            for (size_t k = 0; k < f.updates.size(); ++k) {
                const Definition &u = update_of(f, k);
                const std::optional<UpdateLoops> &loops = s.updates[k];
                if (!loops) continue;
                for (size_t i = 0; i < u.args.size(); ++i)
                    if (u.args[i]->op != Op::Var) {
                        Interval r = bounds_of(u.args[i], loops->scope);
                        if (!r.bounded() || r.max - r.min >= 2147483647.0)
                            user_error("Cannot bound the region of Func ", f.name, " written by its update definition: "
                                       "argument ", i, " (", u.args[i], ") may take any value. Clamp it, e.g. clamp(e, 0, n - 1).");
                        s.realized[i] = s.realized[i].hull(r);
                    }
                for (const Expr &e : definition_exprs(u))
                    ir::visit(e, [&](const Expr &n) {
                        if (n->op == Op::FuncCall && n->func_ptr == &f) require(*n, loops->scope, s.realized, f.name);
                        return true;
                    });
            }
            if (is_output) {
                Box ob = output_box(f);
                for (size_t i = 0; i < ob.size(); ++i)
                    if (s.realized[i].min < ob[i].min || s.realized[i].max > ob[i].max)
                        detail::output_too_small(f.name, int64_t(i), int64_t(s.realized[i].min), int64_t(s.realized[i].max),
                                                 int64_t(ob[i].min), int64_t(ob[i].max));
            }
            check_bounds(f, needed, s.realized, s.required);
            BoundsScope pure_scope;
            for (size_t i = 0; i < f.pure_args.size(); ++i) pure_scope.vars[f.pure_args[i]] = s.realized[i];
            require_calls(pure_of(f).value, pure_scope, f);
            for (size_t k = 0; k < f.updates.size(); ++k)
                if (s.updates[k])
                    for (const Expr &e : definition_exprs(update_of(f, k))) require_calls(e, s.updates[k]->scope, f);
        }
    }

    // bound() replaces a dimension's range; align_bounds() widens it (see Func::align_bounds).
    static void apply_bounds(const FuncContents &f, Box &box) {
        if (box_empty(box)) return;
        for (const FuncContents::DimensionBound &b : f.bounds) {
            Interval &r = box[size_t(b.dim)];
            if (b.min.defined()) {
                int64_t mn = eval_constant(b.min), ext = eval_constant(b.extent);
                r = Interval{double(mn), double(mn + ext - 1)};
            }
            if (b.modulus > 1 && !r.empty())
                r = Interval{double(b.align_down(int64_t(r.min))), double(b.align_down(int64_t(r.max)) + b.modulus - 1)};
        }
    }

    // What the Func's consumers (or output buffer) need, and what its updates touch, must lie
    // inside its bound() (`bounded`: the bound, widened by align_bounds).
    static void check_bounds(const FuncContents &f, const Box &needed, const Box &realized, const Box &bounded) {
        for (const FuncContents::DimensionBound &b : f.bounds) {
            if (!b.min.defined()) continue;
            size_t d = size_t(b.dim);
            Interval need = needed[d].hull(realized[d]);
            const Interval &have = bounded[d];
            if (!need.empty() && (have.empty() || need.min < have.min || need.max > have.max))
                detail::outside_bound(f.name, f.pure_args[d], int64_t(d), int64_t(need.min), int64_t(need.max),
                                      int64_t(have.min), int64_t(have.max));
        }
    }

    void check_inputs() {
        for (const auto &in : g_.inputs) {
            auto it = input_required_.find(in.get());
            if (it == input_required_.end() || box_empty(it->second)) continue;
            const BufferImpl &b = *in->bound;
            for (size_t i = 0; i < it->second.size(); ++i) {
                const Interval &need = it->second[i];
                int64_t lo = b.dims[i].min, hi = b.dims[i].min + b.dims[i].extent - 1;
                if (need.min < double(lo) || need.max > double(hi))
                    detail::input_too_small(in->name, in->is_parameter, int64_t(i), int64_t(need.min), int64_t(need.max), lo, hi);
            }
        }
    }

    // `for_write`: the interpreter writes the buffer (an output, a Func's storage), so a GPU's
    // copy of it becomes stale; inputs are only read.
    static Accessor accessor_of(const std::string &name, BufferImpl &b, bool for_write) {
        Accessor a;
        a.name = name;
        a.type = b.type;
        a.base = for_write ? b.host_for_write() : b.host_for_read();
        a.dims = int(b.dims.size());
        if (a.dims > kMaxDimensions) user_error("Buffer ", name, " has ", a.dims, " dimensions; at most ", kMaxDimensions, " are supported.");
        for (int i = 0; i < a.dims; ++i) {
            a.min[i] = b.dims[size_t(i)].min;
            a.extent[i] = b.dims[size_t(i)].extent;
            a.stride[i] = b.dims[size_t(i)].stride;
        }
        return a;
    }

    void make_accessors() {
        for (const auto &in : g_.inputs)
            if (in->bound) input_accessor_[in.get()] = accessor_of(in->name, *in->bound, false);
        for (const auto &fp : g_.funcs) {
            const FuncContents &f = *fp;
            FuncState &s = state_[&f];
            if (!s.computed) continue;
            if (output_buffer_.count(&f)) {
                s.accessor = accessor_of(f.name, *output_buffer_.at(&f)->impl(), true);
                continue;
            }
            std::vector<int> sizes;
            std::vector<int64_t> mins;
            for (const Interval &r : s.realized) {
                sizes.push_back(int(r.max - r.min + 1));
                mins.push_back(int64_t(r.min));
            }
            s.storage = Buffer<void>(f.type, sizes, f.name);
            s.storage.set_min(mins);
            s.accessor = accessor_of(f.name, *s.storage.impl(), true);
        }
    }

    EvalBindings bindings(const FuncContents &f, const Definition *u) const {
        EvalBindings b;
        std::vector<std::string> pure = f.pure_args;
        b.var_slot = [pure](const std::string &v) {
            auto it = std::find(pure.begin(), pure.end(), v);
            return it == pure.end() ? -1 : int(it - pure.begin());
        };
        const RDomContents *r = u ? u->rdom.get() : nullptr;
        int base = int(pure.size());
        b.rvar_slot = [r, base](const RDomContents *d, int i) { return d == r ? base + i : -1; };
        b.accessor = [this](const ExprNode &call) -> const Accessor * {
            if (call.op == Op::FuncCall) return &state_.at(call.func_ptr).accessor;
            return &input_accessor_.at(call.input.get());
        };
        return b;
    }

    // Visits every point of the loops (the last loop outermost), setting slots[slot_i].
    template <typename F>
    static void for_each_point(const std::vector<std::pair<int, Interval>> &loops, std::vector<Value> &slots, F &&body) {
        size_t n = loops.size();
        for (const auto &l : loops)
            if (l.second.empty()) return;
        for (const auto &l : loops) slots[size_t(l.first)].i = int64_t(l.second.min);
        while (true) {
            body();
            size_t i = 0;
            for (; i < n; ++i) {
                Value &v = slots[size_t(loops[i].first)];
                if (++v.i <= int64_t(loops[i].second.max)) break;
                v.i = int64_t(loops[i].second.min);
            }
            if (i == n) return;
        }
    }

    void compute(const FuncContents &f) {
        FuncState &s = state_.at(&f);
        if (!s.computed) return;
        int d = f.dimensions();
        std::vector<Value> slots(size_t(d) + kMaxDimensions);
        int64_t coords[kMaxDimensions];

        CompiledExpr value(pure_of(f).value, bindings(f, nullptr));
        std::vector<std::pair<int, Interval>> loops;
        for (int i = 0; i < d; ++i) loops.emplace_back(i, s.realized[size_t(i)]);
        for_each_point(loops, slots, [&] {
            for (int i = 0; i < d; ++i) coords[i] = slots[size_t(i)].i;
            s.accessor.store(coords, value.eval(slots.data()));
            ++points_;
        });

        for (size_t k = 0; k < f.updates.size(); ++k) {
            const Definition &u = update_of(f, k);
            const std::optional<UpdateLoops> &l = s.updates[k];
            if (!l) continue;
            EvalBindings b = bindings(f, &u);
            CompiledExpr uvalue(u.value, b);
            std::vector<CompiledExpr> args;
            for (const Expr &a : u.args) args.emplace_back(a, b);
            std::vector<CompiledExpr> predicates;
            if (u.rdom)
                for (const Expr &p : u.rdom->predicates) predicates.emplace_back(p, b);
            // RDom variables innermost (r.x fastest), pure Vars outside them (last one outermost).
            std::vector<std::pair<int, Interval>> uloops;
            for (size_t k = 0; k < l->rvars.size(); ++k) uloops.emplace_back(d + int(k), l->rvars[k]);
            for (const auto &p : l->pure) uloops.emplace_back(p.first, p.second);
            for_each_point(uloops, slots, [&] {
                for (const CompiledExpr &p : predicates)
                    if (!p.eval(slots.data()).u) return;
                for (int i = 0; i < d; ++i) coords[i] = args[size_t(i)].eval(slots.data()).i;
                s.accessor.store(coords, uvalue.eval(slots.data()));
                ++points_;
            });
        }
    }

    const PipelineGraph &g_;
    const std::vector<Buffer<void>> &outputs_;
    InterpretReport *report_;
    int64_t points_ = 0;

public:
    int64_t points() const { return points_; }

private:
    std::map<const FuncContents *, const Buffer<void> *> output_buffer_;
    std::map<const FuncContents *, FuncState> state_;
    std::map<const FuncContents *, std::vector<Definition>> definitions_;
    std::map<const InputContents *, Box> input_required_;
    std::map<const InputContents *, Accessor> input_accessor_;
};

} // namespace

void interpret(const Pipeline &p, const std::vector<Buffer<void>> &outputs, InterpretReport *report) {
    detail::check_output_buffers(p, outputs);
    // The graph lists the outputs in p.outputs() order (a Pipeline has no duplicates), as the
    // buffers are.
    PipelineGraph g = build_pipeline_graph(p.outputs());
    g.inlined = automatic_inlines(g);
    Interpreter interpreter(g, outputs, report);
    interpreter.run();
    if (report) report->points = interpreter.points();
}

Realization interpret(const Pipeline &p, const std::vector<int> &sizes) {
    std::vector<Buffer<void>> out = detail::allocate_outputs(p, sizes);
    interpret(p, out);
    return Realization(std::move(out));
}

Buffer<void> interpret(const Func &f, const std::vector<int> &sizes) { return interpret(Pipeline(f), sizes)[0]; }

} // namespace tessera
