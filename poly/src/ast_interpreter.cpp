#include "tessera/poly/ast_interpreter.h"

#include <map>
#include <unordered_map>
#include <unordered_set>

#include <tessera/eval.h>
#include <tessera/pipeline.h>

namespace tessera::poly {
namespace {

Accessor accessor_of(const std::string &name, Type type, uint8_t *base, const std::vector<BufferDim> &dims) {
    Accessor a;
    a.name = name;
    a.type = type;
    a.base = base;
    a.dims = int(dims.size());
    for (int i = 0; i < a.dims; ++i) {
        a.min[i] = dims[size_t(i)].min;
        a.extent[i] = dims[size_t(i)].extent;
        a.stride[i] = dims[size_t(i)].stride;
    }
    return a;
}

class AstInterpreter {
public:
    AstInterpreter(const Program &p, const std::vector<Buffer<void>> &outputs, const ExecuteOptions &o)
        : p_(p), m_(*p.model), outputs_(outputs), options_(o) {}

    void run() {
        detail::check_output_buffers(m_.pipeline, outputs_);
        check_bindings(m_.graph);
        for (const Buffer<void> &b : outputs_)
            for (int d = 0; d < b.dimensions(); ++d)
                if (b.extent(d) <= 0) return;  // nothing to compute
        bind_parameters();
        for (const auto &in : m_.graph.inputs)
            input_acc_[in.get()] = accessor_of(in->name, in->type, in->bound->host_for_read(), in->bound->dims);
        check_inputs();
        allocate_storage();
        statements_.resize(p_.statements.size());
        run_node(p_.nest);
    }

private:
    int slot(const std::string &name) {
        auto it = slot_.find(name);
        if (it != slot_.end()) return it->second;
        int s = int(slots_.size());
        slots_.push_back(Value{});
        slot_[name] = s;
        return s;
    }

    EvalBindings bindings() {
        EvalBindings b;
        b.var_slot = [this](const std::string &v) { return slot(v); };
        b.accessor = [this](const ExprNode &call) -> const Accessor * {
            if (call.op == Op::InputCall) return &input_acc_.at(call.input.get());
            int st = p_.storage_of_array[size_t(m_.array_of(call.func_ptr))];
            TESSERA_INTERNAL_ASSERT(st >= 0, "no storage for ", call.name);
            return &storage_acc_[size_t(st)];
        };
        return b;
    }

    Value eval(const Expr &e) { return CompiledExpr(e, bindings()).eval(slots_.data()); }

    void bind_parameters() {
        for (const Parameter &prm : m_.params) {
            Value v{};
            switch (prm.kind) {
            case Parameter::Kind::OutputMin: v.i = outputs_[size_t(prm.output)].min(prm.dim); break;
            case Parameter::Kind::OutputExtent: v.i = outputs_[size_t(prm.output)].extent(prm.dim); break;
            case Parameter::Kind::InputMin: v.i = prm.input->bound->dims[size_t(prm.dim)].min; break;
            case Parameter::Kind::InputExtent: v.i = prm.input->bound->dims[size_t(prm.dim)].extent; break;
            case Parameter::Kind::Scalar: v = prm.param->value; break;
            case Parameter::Kind::Region: v = eval(prm.value); break;  // after the parameters it uses
            }
            slots_[size_t(slot(prm.var->name))] = v;
        }
    }

    // The box each output Func is computed over (what its consumers and its own updates touch)
    // must lie inside its buffer; inputs must cover what is read.
    void check_inputs() {
        for (const Array &a : m_.arrays) {
            if (a.output < 0 || a.region.is_empty()) continue;
            const Buffer<void> &b = outputs_[size_t(a.output)];
            for (int d = 0; d < a.dimensions; ++d) {
                int64_t mn = eval(a.min[size_t(d)]).i, ext = eval(a.extent[size_t(d)]).i;
                int64_t lo = b.min(d), hi = lo + b.extent(d) - 1;
                if (ext > 0 && (mn < lo || mn + ext - 1 > hi)) detail::output_too_small(a.func->name, d, mn, mn + ext - 1, lo, hi);
            }
        }
        for (const BoundCheck &c : m_.bound_checks) {
            int64_t need_min = eval(c.need_min).i, need_max = eval(c.need_max).i;
            int64_t bound_min = eval(c.bound_min).i, bound_max = eval(c.bound_max).i;
            if (need_min <= need_max && (need_min < bound_min || need_max > bound_max)) {
                const FuncContents &f = *m_.arrays[size_t(c.array)].func;
                detail::outside_bound(f.name, f.pure_args[size_t(c.dim)], c.dim, need_min, need_max, bound_min, bound_max);
            }
        }
        for (const Array &a : m_.arrays) {
            if (a.kind != Array::Kind::Input || a.region.is_empty()) continue;
            const BufferImpl &b = *a.input->bound;
            for (int d = 0; d < a.dimensions; ++d) {
                int64_t mn = eval(a.min[size_t(d)]).i, ext = eval(a.extent[size_t(d)]).i;
                if (ext <= 0) break;
                int64_t lo = b.dims[size_t(d)].min, hi = lo + b.dims[size_t(d)].extent - 1;
                if (mn < lo || mn + ext - 1 > hi)
                    detail::input_too_small(a.input->name, a.input->is_parameter, d, mn, mn + ext - 1, lo, hi);
            }
        }
    }

    void allocate_storage() {
        storage_acc_.resize(p_.storage.size());
        buffers_.resize(p_.storage.size());
        for (size_t i = 0; i < p_.storage.size(); ++i) {
            const Storage &s = p_.storage[i];
            if (s.thread_window)
                user_error("The schedule keeps ", s.name, " in GPU threads' column windows, which only a GPU target (or its emulator) runs. "
                           "Compile it for Target::cuda(sm).emulated() instead of interpreting its loop nest.");
            if (s.kind == Storage::Kind::Output) {
                const Buffer<void> &b = outputs_[size_t(s.output)];
                storage_acc_[i] = accessor_of(s.name, s.type, b.raw_data(), b.impl()->dims);
                continue;
            }
            std::vector<int> sizes;
            std::vector<int64_t> mins;
            bool empty = false;
            for (int d = 0; d < s.dimensions; ++d) {
                int64_t ext = eval(s.extent[size_t(d)]).i;
                int64_t mn = s.kind == Storage::Kind::Scratch ? 0 : eval(s.min[size_t(d)]).i;
                if (ext <= 0) empty = true;
                sizes.push_back(int(std::max<int64_t>(ext, 0)));
                mins.push_back(mn);
            }
            if (empty) {
                storage_acc_[i] = Accessor{};
                storage_acc_[i].name = s.name;
                storage_acc_[i].type = s.type;
                storage_acc_[i].dims = s.dimensions;
                continue;
            }
            buffers_[i] = Buffer<void>(s.type, sizes, s.name);
            buffers_[i].set_min(mins);
            storage_acc_[i] = accessor_of(s.name, s.type, buffers_[i].raw_data(), buffers_[i].impl()->dims);
        }
    }

    struct CompiledStatement {
        bool ready = false;
        std::vector<int> dim_slots;
        CompiledExpr value;
        std::vector<CompiledExpr> store, guards;
        int storage = -1;
    };

    CompiledStatement &statement(int i) {
        CompiledStatement &c = statements_[size_t(i)];
        if (c.ready) return c;
        const ExecStatement &s = p_.statements[size_t(i)];
        for (const std::string &d : s.dims) c.dim_slots.push_back(slot(d));
        EvalBindings b = bindings();
        c.value = CompiledExpr(s.value, b);
        for (const Expr &e : s.store) c.store.emplace_back(e, b);
        for (const Expr &e : s.guards) c.guards.emplace_back(e, b);
        const Statement &ms = m_.statements[size_t(s.statement)];
        c.storage = p_.storage_of_array[size_t(m_.array_of(ms.func))];
        c.ready = true;
        return c;
    }

    struct CompiledCall {
        std::vector<CompiledExpr> args;
    };

    struct CompiledLoop {
        int slot;
        CompiledExpr min, max;
        bool backwards;  // ExecuteOptions::reverse_parallel_loops, and the loop runs on threads
    };

    void run_node(const LoopNodePtr &n) {
        if (!n) return;
        switch (n->kind) {
        case LoopNode::Kind::Block:
            for (const auto &c : n->children) run_node(c);
            return;
        case LoopNode::Kind::Mark: run_node(n->body); return;
        case LoopNode::Kind::If: {
            auto it = conditions_.find(n.get());
            if (it == conditions_.end()) it = conditions_.emplace(n.get(), CompiledExpr(n->condition, bindings())).first;
            if (it->second.eval(slots_.data()).u) run_node(n->then_case);
            else run_node(n->else_case);
            return;
        }
        case LoopNode::Kind::For: {
            auto it = loops_.find(n.get());
            if (it == loops_.end()) {
                // A loop collapsed into a parallel one runs on threads too: backwards as well.
                // (A parallel loop is compiled before the loop inside it first runs.)
                if (n->parallel && n->collapse >= 2 && n->body && n->body->kind == LoopNode::Kind::For)
                    collapsed_inner_.insert(n->body.get());
                bool backwards = options_.reverse_parallel_loops && (n->parallel || collapsed_inner_.count(n.get()));
                EvalBindings b = bindings();
                it = loops_.emplace(n.get(), CompiledLoop{slot(n->var), CompiledExpr(n->min, b), CompiledExpr(n->max, b), backwards}).first;
            }
            const CompiledLoop &l = it->second;
            int64_t lo = l.min.eval(slots_.data()).i, hi = l.max.eval(slots_.data()).i;
            if (hi < lo) return;
            int64_t step = n->step;
            if (l.backwards) {
                int64_t last = lo + (hi - lo) / step * step;
                for (int64_t v = last; v >= lo; v -= step) {
                    slots_[size_t(l.slot)].i = v;
                    run_node(n->body);
                }
            } else {
                for (int64_t v = lo; v <= hi; v += step) {
                    slots_[size_t(l.slot)].i = v;
                    run_node(n->body);
                }
            }
            return;
        }
        case LoopNode::Kind::Call: {
            auto it = calls_.find(n.get());
            if (it == calls_.end()) {
                CompiledCall c;
                EvalBindings b = bindings();
                for (const Expr &a : n->args) c.args.emplace_back(a, b);
                it = calls_.emplace(n.get(), std::move(c)).first;
            }
            CompiledStatement &s = statement(n->statement);
            const CompiledCall &call = it->second;
            TESSERA_INTERNAL_ASSERT(call.args.size() == s.dim_slots.size(), "arity of ", n->statement_name);
            Value args[kMaxDimensions * 2];
            for (size_t i = 0; i < call.args.size(); ++i) args[i] = call.args[i].eval(slots_.data());
            for (size_t i = 0; i < call.args.size(); ++i) slots_[size_t(s.dim_slots[i])] = args[i];
            for (const CompiledExpr &g : s.guards)
                if (!g.eval(slots_.data()).u) return;
            int64_t coords[kMaxDimensions];
            for (size_t i = 0; i < s.store.size(); ++i) coords[i] = s.store[i].eval(slots_.data()).i;
            storage_acc_[size_t(s.storage)].store(coords, s.value.eval(slots_.data()));
            return;
        }
        }
    }

    const Program &p_;
    const Model &m_;
    const std::vector<Buffer<void>> &outputs_;
    ExecuteOptions options_;
    std::map<std::string, int> slot_;
    std::vector<Value> slots_;
    std::vector<Accessor> storage_acc_;
    std::vector<Buffer<void>> buffers_;
    std::map<const InputContents *, Accessor> input_acc_;
    std::vector<CompiledStatement> statements_;
    std::unordered_map<const LoopNode *, CompiledExpr> conditions_;
    std::unordered_map<const LoopNode *, CompiledLoop> loops_;
    std::unordered_map<const LoopNode *, CompiledCall> calls_;
    std::unordered_set<const LoopNode *> collapsed_inner_;  // loops collapsed into a parallel one
};

} // namespace

void execute(const Program &p, const std::vector<Buffer<void>> &outputs, const ExecuteOptions &options) {
    AstInterpreter(p, outputs, options).run();
}

} // namespace tessera::poly
