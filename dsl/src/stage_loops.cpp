// Replays a definition's scheduling directives into its loops (stage_loops.h).
#include "tessera/stage_loops.h"

#include <algorithm>
#include <sstream>

#include "tessera/error.h"
#include "tessera/text_builder.h"

namespace tessera {

namespace {

const char *kind_name(LoopDirective::Kind k) {
    switch (k) {
    case LoopDirective::Kind::Split: return "split";
    case LoopDirective::Kind::Fuse: return "fuse";
    case LoopDirective::Kind::Reorder: return "reorder";
    case LoopDirective::Kind::Vectorize: return "vectorize";
    case LoopDirective::Kind::Unroll: return "unroll";
    case LoopDirective::Kind::Parallel: return "parallel";
    case LoopDirective::Kind::GpuBlocks: return "gpu_blocks";
    case LoopDirective::Kind::GpuThreads: return "gpu_threads";
    }
    return "?";
}

Expr int32(int64_t v) { return make_const(Int(32), v); }

class Replay {
public:
    Replay(const FuncContents &f, int definition) : f_(f), definition_(definition) {
        if (definition < 0 || definition > int(f.updates.size()))
            user_error("Func ", f.name, " has no update definition ", definition - 1, ".");
        const Definition &d = definition == 0 ? f.pure : f.updates[size_t(definition - 1)];
        for (int i = int(d.args.size()) - 1; i >= 0; --i)
            if (d.args[size_t(i)]->op == Op::Var) {
                StageLoop l;
                l.name = d.args[size_t(i)]->name;
                l.value = ir::make_var(l.name);
                // A constant bound() gives the loop over dimension i a constant range.
                if (auto range = constant_bound(f, i)) {
                    l.min = range->first;
                    l.extent = range->second;
                }
                loops_.push_back(l);
            }
        if (d.rdom)
            for (int r = int(d.rdom->dims.size()) - 1; r >= 0; --r) {
                const RVarDef &rv = d.rdom->dims[size_t(r)];
                StageLoop l;
                l.name = rv.name;
                l.value = ir::make_var(l.name);
                l.min = ir::as_const_int(rv.min);
                l.extent = ir::as_const_int(rv.extent);
                if (!l.min || !l.extent) l.min = l.extent = std::nullopt;
                l.from_rdom = true;
                loops_.push_back(l);
            }
    }

    void apply(const LoopDirective &d) {
        d_ = &d;
        switch (d.kind) {
        case LoopDirective::Kind::Split: split(d.vars.at(0), d.vars.at(1), d.vars.at(2), d.factor); break;
        case LoopDirective::Kind::Fuse: fuse(d.vars.at(0), d.vars.at(1), d.vars.at(2)); break;
        case LoopDirective::Kind::Reorder: reorder(d.vars); break;
        case LoopDirective::Kind::Vectorize:
        case LoopDirective::Kind::Unroll: {
            const bool vec = d.kind == LoopDirective::Kind::Vectorize;
            std::string v = d.vars.at(0);
            if (d.factor != 0) {
                std::string inner = v + (vec ? "_vi" : "_ui");
                split(v, v, inner, d.factor);
                v = inner;
            }
            StageLoop &l = loops_[find(v)];
            if (l.unroll || l.vector)
                fail("loop " + v + " is already " + (l.unroll ? "unrolled" : "vectorized") + "; a loop takes one of vectorize and unroll.");
            if (vec) {
                if (l.parallel) fail("loop " + v + " is already parallel; a loop is parallel or vectorized, not both.");
                l.vector = true;
            } else {
                if (!l.extent)
                    fail("loop " + v + " has no constant range to unroll completely. Give a factor (unroll(" + v +
                         ", 4)) to unroll the inner loop of a split, or bound the Func's dimension first (bound(" + v +
                         ", 0, 4)).");
                l.unroll = true;
            }
            break;
        }
        case LoopDirective::Kind::Parallel:
        case LoopDirective::Kind::GpuBlocks: {
            StageLoop &l = loops_[find(d.vars.at(0))];
            if (l.vector) fail("loop " + l.name + " is already vectorized; a loop is parallel or vectorized, not both.");
            l.parallel = true;
            l.gpu = l.gpu || d.kind == LoopDirective::Kind::GpuBlocks;
            break;
        }
        case LoopDirective::Kind::GpuThreads: {
            StageLoop &l = loops_[find(d.vars.at(0))];
            if (l.parallel) fail("loop " + l.name + " is already a parallel (block) loop.");
            if (l.unroll) fail("loop " + l.name + " is already unrolled.");
            l.vector = true;
            l.gpu = true;
            break;
        }
        }
        // Marks whose loops the code generators can honour: one parallel loop per stage, or two
        // adjacent ones (run as one collapsed loop, OpenMP's collapse(2)), and a vector loop
        // innermost.
        std::vector<size_t> parallel;
        for (size_t i = 0; i < loops_.size(); ++i) {
            if (loops_[i].parallel) parallel.push_back(i);
            if (loops_[i].vector && i + 1 != loops_.size())
                fail("the " + std::string(loops_[i].gpu ? "thread" : "vectorized") + " loop " + loops_[i].name +
                     " is not the innermost loop (" + loops_.back().name + " is). Reorder it innermost.");
        }
        if (parallel.size() > 2 || (parallel.size() == 2 && parallel[1] != parallel[0] + 1))
            fail("the stage would have two parallel loops that are not adjacent, or more than two. Parallelize one loop, "
                 "or two adjacent ones (they run as one collapsed loop).");
    }

    std::vector<StageLoop> loops() const { return loops_; }

private:
    [[noreturn]] void fail(const std::string &why) const {
        user_error("Func ", f_.name, ": ", directive_text(f_, definition_, *d_), ": ", why);
    }

    size_t find(const std::string &name) const {
        for (size_t i = 0; i < loops_.size(); ++i)
            if (loops_[i].name == name) return i;
        std::ostringstream have;
        for (size_t i = 0; i < loops_.size(); ++i) have << (i ? ", " : "") << loops_[i].name;
        fail("the stage has no loop " + name + " (its loops, outermost first: " + have.str() + ").");
    }

    void check_fresh(const std::string &name, const std::string &except) const {
        if (name.empty()) fail("a new loop needs a name.");
        for (const StageLoop &l : loops_)
            if (l.name == name && name != except) fail("the stage already has a loop named " + name + ".");
    }

    void split(const std::string &old, const std::string &outer, const std::string &inner, int factor) {
        size_t i = find(old);
        if (factor <= 0) fail("the factor must be positive.");
        if (outer == inner) fail("the outer and inner loops need different names.");
        check_fresh(outer, old);
        check_fresh(inner, old);
        StageLoop l = loops_[i];
        if (l.vector || l.unroll || l.parallel) fail("loop " + old + " is already marked; split it before marking it.");
        Expr offset = l.min && *l.min != 0 ? ir::make_binary(Op::Sub, l.value, int32(*l.min)) : l.value;
        StageLoop o = l, in = l;
        o.name = outer;
        o.value = ir::make_binary(Op::Div, offset, int32(factor));
        in.name = inner;
        in.value = ir::make_binary(Op::Mod, offset, int32(factor));
        in.min = 0;
        in.extent = factor;
        o.min = o.extent = std::nullopt;
        if (l.extent) {
            o.min = 0;
            o.extent = (*l.extent + factor - 1) / factor;
        }
        loops_[i] = in;
        loops_.insert(loops_.begin() + long(i), o);
    }

    void fuse(const std::string &inner, const std::string &outer, const std::string &fused) {
        size_t i = find(inner), o = find(outer);
        if (i == o) fail("a loop cannot be fused with itself.");
        check_fresh(fused, outer == fused ? outer : inner == fused ? inner : "");
        const StageLoop &in = loops_[i];
        StageLoop out = loops_[o];
        if (!in.min || !in.extent)
            fail("the inner loop " + inner +
                 " has no constant range, so the fused loop is not affine. Split it first (its inner part has the "
                 "factor as extent), or fuse loops of a constant-size RDom.");
        if (in.vector || in.unroll || in.parallel || out.vector || out.unroll || out.parallel)
            fail("fuse loops before marking them.");
        Expr scaled = ir::make_binary(Op::Mul, out.value, int32(*in.extent));
        Expr local = *in.min != 0 ? ir::make_binary(Op::Sub, in.value, int32(*in.min)) : in.value;
        StageLoop f = out;
        f.name = fused;
        f.value = ir::make_binary(Op::Add, scaled, local);
        f.from_rdom = in.from_rdom || out.from_rdom;
        if (out.min && out.extent) {
            f.min = *out.min * *in.extent;
            f.extent = *out.extent * *in.extent;
        } else {
            f.min = f.extent = std::nullopt;
        }
        loops_[o] = f;
        loops_.erase(loops_.begin() + long(i));
    }

    void reorder(const std::vector<std::string> &innermost_first) {
        std::vector<size_t> positions;
        for (const std::string &v : innermost_first) {
            size_t p = find(v);
            if (std::count(positions.begin(), positions.end(), p)) fail("loop " + v + " is named twice.");
            positions.push_back(p);
        }
        std::vector<size_t> slots = positions;
        std::sort(slots.begin(), slots.end());  // outermost first
        std::vector<StageLoop> old = loops_;
        // The outermost slot gets the last name (the outermost of the list).
        for (size_t k = 0; k < slots.size(); ++k) loops_[slots[k]] = old[positions[positions.size() - 1 - k]];
    }

    const FuncContents &f_;
    int definition_;
    const LoopDirective *d_ = nullptr;
    std::vector<StageLoop> loops_;
};

} // namespace

std::vector<StageLoop> stage_loops(const FuncContents &f, int definition, const std::vector<LoopDirective> &directives) {
    Replay r(f, definition);
    for (const LoopDirective &d : directives) r.apply(d);
    return r.loops();
}

std::vector<StageLoop> stage_loops(const FuncContents &f, int definition) {
    const Definition &d = definition == 0 ? f.pure : f.updates.at(size_t(definition - 1));
    return stage_loops(f, definition, d.directives);
}

std::string directive_text(const FuncContents &f, int definition, const LoopDirective &d) {
    TextBuilder s;
    s << f.name;
    if (definition > 0) s << ".update(" << definition - 1 << ")";
    s << "." << kind_name(d.kind) << "(";
    for (size_t i = 0; i < d.vars.size(); ++i) s << (i ? ", " : "") << d.vars[i];
    if (d.factor != 0) s << ", " << d.factor;
    s << ")";
    return s.take();
}

} // namespace tessera
