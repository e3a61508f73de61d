// The random expressions of the fuzzer's pipelines (generator.h): values of every type,
// reads of Funcs and inputs at affine, clamped and data-dependent coordinates, conditions,
// RDom predicates and inline reductions, each with the C++ text that builds it.
#include "generator.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tessera::fuzz::detail {

Code Generator::small_constant(Type t) {
    if (t.is_float()) {
        if (choices_.percent(3)) return constant(t, 0, choices_.percent(50) ? 1e4 : -1e4);
        return constant(t, 0, small_int() / 4.0);
    }
    if (choices_.percent(3)) {  // an extreme of the type
        if (choices_.percent(50)) return constant(t, t.is_int() ? int64_t(t.min_value()) : 0, 0);
        // The largest value; -1 wraps to the largest uint64.
        int64_t largest = t.bits < 64 ? int64_t(t.max_value()) : t.is_int() ? std::numeric_limits<int64_t>::max() : -1;
        return constant(t, largest, 0);
    }
    int v = small_int();
    return constant(t, t.is_uint() ? std::abs(v) : v, 0);
}

Code Generator::value(Type t, const Scope &s, int depth) {
    if (depth <= 0) return leaf(t, s, 0);
    bool integer = !t.is_float();
    enum { Leaf, Arithmetic, Division, Bitwise, Select, Cast, Unary, Math, Clamp, Reduction };
    int kind = choices_.weighted({24, 22, 6, 6, 9, 8, 5, 4, 4, 8});
    if (kind == Bitwise && !integer) kind = Arithmetic;
    if (kind == Reduction && s.reductions_around >= 2) kind = Leaf;
    switch (kind) {
    case Leaf: return leaf(t, s, depth - 1);
    case Arithmetic: {
        static const std::vector<Binary> ops = {Binary::Add, Binary::Sub, Binary::Mul, Binary::Min, Binary::Max};
        Binary op = choices_.one_of(ops);
        Code a = value(t, s, depth - 1);
        // Sometimes an operand of another type, promoted by the DSL's rules, then cast back.
        Code b = value(choices_.percent(15) ? random_type() : t, s, depth - 1);
        reconcile(a, b);
        return cast_to(t, binary(op, a, b));
    }
    case Division: {
        Code a = value(t, s, depth - 1);
        Code b = choices_.percent(50) ? value(t, s, depth - 1)
                                      : constant(t, choices_.one_of<int>({2, 3, 4, -1, 0, 7, -3, 8}),
                                                 choices_.one_of<double>({2, 0.5, -4, 0, 3}));
        return binary(choices_.percent(50) ? Binary::Mod : Binary::Div, a, b);
    }
    case Bitwise: {
        static const std::vector<Binary> ops = {Binary::BitAnd, Binary::BitOr, Binary::BitXor, Binary::Shl, Binary::Shr};
        Binary op = choices_.one_of(ops);
        Code a = value(t, s, depth - 1);
        bool shift = op == Binary::Shl || op == Binary::Shr;
        Code b = shift && choices_.percent(60)
                     ? constant(t, choices_.one_of<int>({1, 2, 3, -1, t.bits, t.bits + 1, 0}), 0)
                     : value(t, s, depth - 1);
        return binary(op, a, b);
    }
    case Select: {
        Code c = condition(s, depth - 1);
        Code a = value(t, s, depth - 1), b = value(t, s, depth - 1);
        return {select(c.expr, a.expr, b.expr), "select(" + c.text + ", " + a.text + ", " + b.text + ")"};
    }
    case Cast: return cast_to(t, value(random_type(), s, depth - 1));
    case Unary: {
        Code a = value(t, s, depth - 1);
        switch (choices_.below(integer ? 3 : 2)) {
        case 0: return {-a.expr, "(-" + a.text + ")"};
        case 1: return cast_to(t, function("abs", a, abs(a.expr)));  // abs of a signed integer is unsigned
        default: return {~a.expr, "(~" + a.text + ")"};
        }
    }
    case Math: {
        Type real = integer ? (choices_.percent(50) ? Float(32) : Float(64)) : t;
        Code a = value(real, s, depth - 1);
        Code m;
        int which = choices_.weighted({20, 20, 20, 20, 10, 4, 3, 3});
        // On a real GPU exp, log and sin come from libdevice, whose last bit may differ from the
        // host's libm (the interpreter's): the exactly rounded sqrt stands in for them there.
        if (settings_.device_sm && which > 4) which = 4;
        switch (which) {
        case 0: m = function("floor", a, floor(a.expr)); break;
        case 1: m = function("ceil", a, ceil(a.expr)); break;
        case 2: m = function("round", a, round(a.expr)); break;
        case 3: m = function("trunc", a, trunc(a.expr)); break;
        case 4: m = function("sqrt", a, sqrt(a.expr)); break;
        case 5: m = function("exp", a, exp(a.expr)); break;
        case 6: m = function("log", a, log(a.expr)); break;
        default: m = function("sin", a, sin(a.expr)); break;
        }
        return cast_to(t, m);
    }
    case Clamp: {
        Code a = value(t, s, depth - 1);
        int lo = small_int();
        if (t.is_uint()) lo = std::abs(lo);
        int hi = lo + choices_.below(8);
        Code l = constant(t, lo, lo / 2.0), h = constant(t, hi, hi / 2.0);
        return {clamp(a.expr, l.expr, h.expr), "clamp(" + a.text + ", " + l.text + ", " + h.text + ")"};
    }
    default: return inline_reduction(t, s, depth);
    }
}

Code Generator::leaf(Type t, const Scope &s, int depth) {
    switch (choices_.weighted({20, 55, 15, 10})) {
    case 1: return cast_to(t, read(s, depth));
    case 2: {
        std::vector<Code> bases = s.bases();
        if (bases.empty()) break;
        return cast_to(t, choices_.one_of(bases));
    }
    case 3: {
        if (params_.empty()) break;
        const ParamInfo &p = params_[size_t(choices_.below(int(params_.size())))];
        use(p.owner);
        return cast_to(t, Code{p.param, p.name});
    }
    default: break;
    }
    return small_constant(t);
}

Code Generator::read_source(Source &src, const std::vector<Code> &args) {
    auto [exprs, text] = call_parts(src.name, args);
    ++src.reads;
    use(src.owner);
    return {src.read(exprs), text};
}

// A read of some Func or input; with `forced`, one of its coordinates is `forced` plus an offset.
Code Generator::read(const Scope &s, int depth, const Code *forced) {
    // Reading a small input directly usually reads outside it: a UserError for both paths.
    bool outside_allowed = choices_.percent(2);
    std::vector<size_t> candidates, unread;
    for (size_t i = 0; i < sources_.size(); ++i) {
        const Source &src = sources_[i];
        if (!src.readable || (src.read_only_through_boundary && !outside_allowed)) continue;
        candidates.push_back(i);
        if (src.reads == 0) unread.push_back(i);
    }
    // Prefer what nothing reads yet, so that most Funcs reach the outputs.
    const std::vector<size_t> &pool = !unread.empty() && choices_.percent(40) ? unread : candidates;
    Source &src = sources_[pool[size_t(choices_.below(int(pool.size())))]];
    int forced_position = forced ? choices_.below(src.dimensions) : -1;
    std::vector<Code> args;
    for (int d = 0; d < src.dimensions; ++d) {
        if (d != forced_position) args.push_back(index(s, d, depth));
        else if (far_) args.push_back(binary(Binary::Add, near_output(s, d), *forced));
        else args.push_back(plus(*forced, choices_.range(-1, 1)));
    }
    return read_source(src, args);
}

// A pure Var for coordinate `position` of a read: the one in that position, else any.
const Code &Generator::near_output(const Scope &s, int position) {
    if (position < int(s.pure.size())) return s.pure[size_t(position)];
    return s.pure.empty() ? choices_.one_of(s.reduction) : choices_.one_of(s.pure);
}

Code Generator::index(const Scope &s, int position, int depth) {
    std::vector<Code> bases = s.bases();
    if (bases.empty()) return int_constant(choices_.range(-2, 5));
    const Code &natural = position < int(s.pure.size()) ? s.pure[size_t(position)] : choices_.one_of(bases);
    auto offset = [&] { return choices_.one_of<int>({0, 1, -1, 2, -2, 3, -3}); };
    if (far_) return plus(near_output(s, position), offset());
    switch (choices_.weighted({55, 12, 6, 4, 4, 3, 10, 6})) {
    case 1: return plus(choices_.one_of(bases), offset());
    case 2: return int_constant(choices_.range(-2, 5));
    case 3: {
        const Code &b = choices_.one_of(bases);
        return plus({b.expr * 2, "(" + b.text + " * 2)"}, offset());
    }
    case 4: {
        const Code &b = choices_.one_of(bases);
        return plus({b.expr / 2, "(" + b.text + " / 2)"}, offset());
    }
    case 5: {
        const Code &b = choices_.one_of(bases);
        int c = choices_.range(-2, 4);
        return {c - b.expr, "(" + std::to_string(c) + " - " + b.text + ")"};
    }
    case 6: {
        if (depth <= 0) break;
        // A data-dependent coordinate, bounded by a clamp.
        Code v = cast_to(Int(32), value(random_type(), s, depth - 1));
        int lo = choices_.one_of<int>({0, -2, 1, 3}), hi = lo + choices_.one_of<int>({7, 3, 0, 15});
        Code l = int_constant(lo), h = int_constant(hi);
        return {clamp(v.expr, l.expr, h.expr), "clamp(" + v.text + ", " + l.text + ", " + h.text + ")"};
    }
    case 7: {
        const Code &b = choices_.one_of(bases);
        Code c = int_constant(choices_.range(-1, 6));
        switch (choices_.below(3)) {
        case 0: return binary(Binary::Min, b, c);
        case 1: return binary(Binary::Max, b, c);
        default: return binary(Binary::Mod, b, int_constant(choices_.one_of<int>({3, 5, 8})));
        }
    }
    default: break;
    }
    return plus(natural, offset());
}

Code Generator::wrapping_sum(const Code &v) {
    int big = choices_.one_of<int>({2147483647, 2147483646, 2147483000, -2147483647 - 1 + 3});
    return binary(Binary::Add, cast_to(Int(32), v), int_constant(big));
}

Code Generator::condition(const Scope &s, int depth) {
    static const std::vector<Binary> comparisons = {Binary::LT, Binary::LE, Binary::GT,
                                                    Binary::GE, Binary::EQ, Binary::NE};
    Type t = random_type();
    Code a = value(t, s, depth), b = value(t, s, depth);
    reconcile(a, b);
    Code c = binary(choices_.one_of(comparisons), a, b);
    std::vector<Code> bases = s.bases();
    if (!bases.empty() && choices_.percent(5))  // a comparison whose int32 sum wraps at some points
        c = binary(choices_.one_of(comparisons), wrapping_sum(choices_.one_of(bases)), int_constant(choices_.range(-2, 2)));
    if (choices_.percent(15)) c = binary(choices_.percent(50) ? Binary::And : Binary::Or, c, condition(s, 0));
    if (choices_.percent(10)) c = {!c.expr, "(!" + c.text + ")"};
    return c;
}

Code Generator::inline_reduction(Type t, const Scope &s, int depth) {
    int kind = choices_.weighted({40, 20, 20, 8, 6, 6});
    RDomInfo r = make_rdom(choices_.range(1, 2), s.pure);
    Scope inner{s.pure, r.vars, s.reductions_around + 1};
    Type body_type = choices_.percent(70) ? t : random_type();
    Code body = cast_to(body_type, read(inner, depth - 1, &r.vars[size_t(choices_.below(int(r.vars.size())))]));
    if (choices_.percent(50)) {
        static const std::vector<Binary> ops = {Binary::Add, Binary::Sub, Binary::Mul, Binary::Max};
        body = binary(choices_.one_of(ops), body, value(body_type, inner, depth - 1));
    }
    switch (kind) {
    case 0: return cast_to(t, function("sum", body, sum(body.expr)));
    case 1: return cast_to(t, function("maximum", body, maximum(body.expr)));
    case 2: return cast_to(t, function("minimum", body, minimum(body.expr)));
    case 3: return cast_to(t, function("product", body, product(body.expr)));
    default: {
        bool largest = kind == 4;
        Tuple tuple = largest ? argmax(body.expr) : argmin(body.expr);
        int element = choices_.below(int(tuple.size()));
        std::string text = std::string(largest ? "argmax(" : "argmin(") + body.text + ")[" + std::to_string(element) + "]";
        return cast_to(t, Code{tuple[size_t(element)], text});
    }
    }
}

} // namespace tessera::fuzz::detail
