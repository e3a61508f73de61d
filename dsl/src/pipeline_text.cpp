#include "tessera/pipeline_text.h"

#include "tessera/stage_loops.h"
#include "tessera/text_builder.h"

#include <charconv>
#include <cmath>
#include <map>

#include "tessera/buffer.h"
#include "tessera/func_graph.h"
#include "tessera/pipeline.h"

namespace tessera {
namespace {

// Names objects of one kind (Funcs, inputs, Params, RDoms): the object's name, with `#k` (k its
// rank among those of that name) when several share it.
template <typename T>
class Names {
public:
    void add(const T *object, const std::string &name) {
        if (index_.count(object)) return;
        int &n = per_name_[name];
        index_[object] = {name, n++};
    }
    std::string operator()(const T *object) const {
        auto it = index_.find(object);
        if (it == index_.end()) return "?";  // not reachable from the graph: cannot happen
        const auto &[name, k] = it->second;
        if (per_name_.at(name) == 1) return name;
        return name + "#" + std::to_string(k);
    }

private:
    std::map<const T *, std::pair<std::string, int>> index_;
    std::map<std::string, int> per_name_;
};

struct Printer {
    TextBuilder s;
    Names<FuncContents> funcs;
    Names<InputContents> inputs;
    Names<ParamContents> params;
    Names<RDomContents> rdoms;

    void type_prefix(const Type &t) { s << "(" << t << ")"; }

    void expr(const Expr &e) {
        if (!e.defined()) {
            s << "<undefined>";
            return;
        }
        const ExprNode &n = *e;
        auto list = [&](size_t from) {
            for (size_t i = from; i < n.args.size(); ++i) {
                if (i > from) s << ", ";
                expr(n.args[i]);
            }
        };
        switch (n.op) {
        case Op::IntConst:
            if (n.type != Int(32)) type_prefix(n.type);
            s << n.int_value;
            return;
        case Op::UIntConst:
            if (n.type.is_bool()) s << (n.uint_value ? "true" : "false");
            else type_prefix(n.type), s << n.uint_value;
            return;
        case Op::FloatConst: {
            // %.17g reads back as the same double; the value is already exact in its type.
            // std::to_chars prints what printf's %.17g prints; a whole number below 1e17 (where
            // %.17g prints its digits alone) as an integer, without the tables of the general
            // case, which a new process's first cache hit would otherwise fault in.
            char buf[40];
            double v = n.float_value;
            std::to_chars_result r;
            if (v == std::trunc(v) && std::fabs(v) < 1e17 && !(v == 0 && std::signbit(v)))
                r = std::to_chars(buf, buf + sizeof buf, int64_t(v));
            else
                r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 17);
            if (n.type != Float(64)) type_prefix(n.type);
            s << std::string_view(buf, size_t(r.ptr - buf));
            return;
        }
        case Op::Var:
            if (n.type != Int(32)) type_prefix(n.type);
            s << n.name;
            return;
        case Op::RVar:
            s << rdoms(n.rdom.get()) << "[" << n.index << "]";
            return;
        case Op::Param: s << params(n.param.get()); return;
        case Op::BufferDim: s << inputs(n.input.get()) << (n.which == 0 ? ".min(" : ".extent(") << n.index << ")"; return;
        case Op::Cast: s << n.type << "("; expr(n.args[0]); s << ")"; return;
        case Op::Min:
        case Op::Max:
        case Op::Abs:
        case Op::Select:
        case Op::Likely: s << op_name(n.op) << "("; list(0); s << ")"; return;
        case Op::Math: s << math_fn_name(MathFn(n.index)) << "("; list(0); s << ")"; return;
        case Op::Not:
        case Op::BitNot: s << op_name(n.op); expr(n.args[0]); return;
        case Op::FuncCall: s << funcs(n.func_ptr) << "("; list(0); s << ")"; return;
        case Op::InputCall: s << inputs(n.input.get()) << "("; list(0); s << ")"; return;
        default:
            s << "(";
            expr(n.args[0]);
            s << " " << op_name(n.op) << " ";
            expr(n.args[1]);
            s << ")";
            return;
        }
    }

    void definition(const FuncContents &f, const Definition &d) {
        s << "  " << funcs(&f) << "(";
        for (size_t i = 0; i < d.args.size(); ++i) {
            if (i) s << ", ";
            expr(d.args[i]);
        }
        s << ") = ";
        expr(d.value);
        if (d.rdom) {
            const RDomContents &r = *d.rdom;
            s << "\n    over " << rdoms(&r) << ":";
            for (size_t k = 0; k < r.dims.size(); ++k) {
                s << " [" << k << "] " << r.dims[k].name << " from ";
                expr(r.dims[k].min);
                s << " extent ";
                expr(r.dims[k].extent);
                s << ";";
            }
            for (const Expr &p : r.predicates) {
                s << " where ";
                expr(p);
                s << ";";
            }
        }
        s << "\n";
    }

    void directives(const FuncContents &f) {
        if (f.compute_root) s << "  compute_root\n";
        if (f.compute_inline) s << "  compute_inline\n";
        for (const FuncContents::DimensionBound &b : f.bounds) {
            s << "  bound " << f.pure_args[size_t(b.dim)];
            if (b.min.defined()) {
                s << " min ";
                expr(b.min);
                s << " extent ";
                expr(b.extent);
            }
            if (b.modulus != 1) s << " align " << b.modulus << " remainder " << b.remainder;
            s << "\n";
        }
        for (auto [what, level] : {std::pair{"compute_at", &f.compute_at}, std::pair{"store_at", &f.store_at}})
            if (level->defined()) {
                std::shared_ptr<FuncContents> at = level->func.lock();
                s << "  " << what << " " << (at ? funcs(at.get()) : std::string("?")) << "." << level->loop << "\n";
            }
        int k = 0;
        for (const Definition *d : definitions_of(f)) {
            for (const LoopDirective &l : d->directives) s << "  schedule " << directive_text(f, k, l) << "\n";
            ++k;
        }
    }
};

} // namespace

std::string pipeline_text(const Pipeline &p) {
    PipelineGraph g = build_pipeline_graph(p.outputs());
    Printer out;
    for (const auto &f : g.funcs) out.funcs.add(f.get(), f->name);
    for (const auto &in : g.inputs) out.inputs.add(in.get(), in->name);
    for (const auto &prm : g.params) out.params.add(prm.get(), prm->name);
    // An update's RDom, and those of inline reductions where they appear.
    for (const auto &f : g.funcs)
        for (const Definition *d : definitions_of(*f)) {
            if (d->rdom) out.rdoms.add(d->rdom.get(), d->rdom->name);
            for (const Expr &e : definition_exprs(*d))
                for (const auto &r : ir::rdoms_in(e)) out.rdoms.add(r.get(), r->name);
        }

    TextBuilder &s = out.s;
    for (const auto &in : g.inputs) {
        s << (in->is_parameter ? "input " : "buffer ") << out.inputs(in.get()) << " : " << in->type << ", "
          << in->dimensions << " dimensions";
        // A concrete Buffer's region (its elements are read when the code runs).
        if (!in->is_parameter && in->bound) {
            s << " over";
            for (const auto &d : in->bound->dims) s << " [" << d.min << ", +" << d.extent << ")";
        }
        s << "\n";
    }
    for (const auto &prm : g.params) s << "param " << out.params(prm.get()) << " : " << prm->type << "\n";
    for (const auto &f : g.funcs) {
        s << "func " << out.funcs(f.get()) << "(";
        for (size_t i = 0; i < f->pure_args.size(); ++i) s << (i ? ", " : "") << f->pure_args[i];
        s << ") : " << f->type << "\n";
        for (const Definition *d : definitions_of(*f)) out.definition(*f, *d);
        out.directives(*f);
    }
    for (const Func &o : p.outputs()) s << "output " << out.funcs(o.contents().get()) << "\n";
    std::string schedule;
    bool automatic;
    {
        std::lock_guard<std::mutex> lock(p.contents()->mutex);
        schedule = p.contents()->schedule_override;
        automatic = p.contents()->auto_schedule;
    }
    if (!automatic) s << "auto_schedule off\n";
    if (!schedule.empty()) s << "schedule (imported)\n" << schedule << "\n";
    return s.take();
}

} // namespace tessera
