// The pipeline generator of pipeline_fuzzer.h: inputs, Params, Funcs with their pure and update
// definitions, RDoms, outputs and options (the expressions in them: expression_generator.cpp).
//
// The generator builds each Expr together with the C++ text that builds the same Expr (the same
// calls, in the same order), so the reproduction of a failure is exactly the pipeline that ran.
#include "generator.h"

#include <tessera/func_graph.h>
#include <tessera/stage_loops.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <typeinfo>

namespace tessera::fuzz::detail {

std::string Generator::reproduction() const {
    std::vector<bool> needed(uses_.size(), !complete_);
    std::vector<int> stack = output_owners_;
    while (!stack.empty()) {
        int o = stack.back();
        stack.pop_back();
        if (needed[size_t(o)]) continue;
        needed[size_t(o)] = true;
        for (int u : uses_[size_t(o)]) stack.push_back(u);
    }
    std::string s = "// Needs <cstring>, <tessera/tessera.h>, \"fuzz/pipeline_fuzzer.h\" (for fuzz::fill_buffer) and using "
                    "namespace tessera.\n{\n";
    for (const auto &[owner, statement] : statements_)
        if (owner == kAlways || needed[size_t(owner)]) s += "    " + statement + "\n";
    s += realization_;
    return s + "}\n";
}

GeneratedPipeline Generator::generate() {
    vars_ = {{Var("x"), "x"}, {Var("y"), "y"}, {Var("z"), "z"}};
    emit(kAlways, "Var x(\"x\"), y(\"y\"), z(\"z\");");
    int dimensions = std::min(1 + choices_.weighted({30, 50, 20}), settings_.max_dimensions);
    make_inputs();
    make_params();
    make_options(dimensions);
    int count = choices_.range(1, settings_.max_funcs);
    int outputs = count >= 2 && choices_.percent(25) ? 2 : 1;
    std::vector<FuncInfo> funcs;
    for (int i = 0; i < count; ++i) {
        bool is_output = i >= count - outputs;
        int dims = is_output || choices_.percent(50) ? dimensions : choices_.range(1, settings_.max_dimensions);
        funcs.push_back(define_func(i, dims, is_output));
        // Neither output reads the other: an output read by another Func must cover what that Func
        // reads, which random regions rarely do.
        if (is_output) sources_.back().readable = false;
    }
    // Drawn only with directives on, so that the pipelines of other runs stay as they were.
    if (settings_.directives) add_directives(funcs);
    make_outputs(std::vector<FuncInfo>(funcs.end() - outputs, funcs.end()));
    complete_ = true;
    return result_;
}

void Generator::make_inputs() {
    int count = choices_.range(1, 3);
    for (int k = 0; k < count; ++k) {
        InputInfo in;
        in.type = random_type();
        in.dimensions = choices_.range(1, settings_.max_dimensions);
        in.embedded = choices_.percent(20);
        in.small = choices_.percent(55);
        in.name = (in.embedded ? "b" : "in") + std::to_string(k);
        // A large input covers what direct reads at small offsets need around any output region
        // the generator picks; a small one is read through boundary conditions.
        static const int large_min[] = {-40, -24, -12}, large_extent[] = {160, 96, 48};
        for (int d = 0; d < in.dimensions; ++d) {
            if (in.small) {
                in.extents.push_back(choices_.one_of<int>({5, 1, 2, 3, 7, 8, 13}));
                in.mins.push_back(choices_.one_of<int>({0, -1, 2, -3}));
            } else {
                in.extents.push_back(large_extent[in.dimensions - 1] + choices_.below(4));
                in.mins.push_back(large_min[in.dimensions - 1] - choices_.below(4));
            }
        }
        uint64_t salt = uint64_t(choices_.below(1 << 30));
        in.owner = new_owner();
        std::string element = cpp_type(in.type), data = in.embedded ? in.name : in.name + "_data";
        in.data = Buffer<void>(in.type, in.extents, data);
        emit(in.owner, "Buffer<" + element + "> " + data + "(std::vector<int>{" + join_numbers(in.extents) + "}, \"" +
                           data + "\");");
        if (std::any_of(in.mins.begin(), in.mins.end(), [](int m) { return m != 0; })) {
            in.data.set_min(std::vector<int64_t>(in.mins.begin(), in.mins.end()));
            emit(in.owner, data + ".set_min({" + join_numbers(in.mins) + "});");
        }
        fill_buffer(in.data, salt);
        emit(in.owner, "fuzz::fill_buffer(" + data + ", " + std::to_string(salt) + ");");
        if (!in.embedded) {
            in.input = InputBuffer<void>(in.type, in.dimensions, in.name);
            in.input.set(in.data);
            emit(in.owner, "InputBuffer<" + element + "> " + in.name + "(\"" + in.name + "\", " +
                               std::to_string(in.dimensions) + ");");
            emit(in.owner, in.name + ".set(" + data + ");");
        }
        Source src;
        src.name = in.name;
        src.dimensions = in.dimensions;
        src.type = in.type;
        if (in.embedded) src.read = [b = in.data](const std::vector<Expr> &a) { return b(a); };
        else src.read = [i = in.input](const std::vector<Expr> &a) { return i(a); };
        src.owner = in.owner;
        src.read_only_through_boundary = in.small;
        in.source = sources_.size();
        sources_.push_back(src);
        inputs_.push_back(in);
        if (in.small || choices_.percent(20)) {
            int kinds = 1 + choices_.below(2);
            for (int i = 0; i < kinds; ++i) add_boundary(in, Boundary(choices_.below(5)));
        }
    }
}

void Generator::add_boundary(const InputInfo &in, Boundary kind) {
    std::string name = in.name + "_" + boundary_name(kind);
    if (!boundary_funcs_.insert(name).second) return;  // the same Func name twice would be ambiguous
    int owner = new_owner();
    uses_[size_t(owner)].push_back(in.owner);
    Func f;
    std::string call = std::string("BoundaryConditions::") + boundary_name(kind) + "(" + in.name;
    if (kind == Boundary::ConstantExterior) {
        Code exterior = small_constant(in.type);
        f = in.embedded ? BoundaryConditions::constant_exterior(in.data, exterior.expr)
                        : BoundaryConditions::constant_exterior(in.input, exterior.expr);
        call += ", " + exterior.text;
    } else {
        using Make = Func (*)(const Buffer<void> &);
        using MakeFromInput = Func (*)(const InputBuffer<void> &);
        static const Make from_buffer[] = {BoundaryConditions::repeat_edge, nullptr, BoundaryConditions::mirror_image,
                                           BoundaryConditions::mirror_interior, BoundaryConditions::repeat_image};
        static const MakeFromInput from_input[] = {BoundaryConditions::repeat_edge, nullptr,
                                                   BoundaryConditions::mirror_image, BoundaryConditions::mirror_interior,
                                                   BoundaryConditions::repeat_image};
        f = in.embedded ? from_buffer[int(kind)](in.data) : from_input[int(kind)](in.input);
    }
    emit(owner, "Func " + name + " = " + call + ");");
    Source src;
    src.name = name;
    src.dimensions = in.dimensions;
    src.type = in.type;
    src.read = [f](const std::vector<Expr> &a) { return Expr(f(a)); };
    src.owner = owner;
    sources_.push_back(src);
}

void Generator::add_boundary(const FuncInfo &fi) {
    Boundary kind = Boundary(choices_.below(5));
    std::string name = fi.name + "_" + boundary_name(kind);
    if (!boundary_funcs_.insert(name).second) return;
    int owner = new_owner();
    uses_[size_t(owner)].push_back(sources_.back().owner);
    BoundaryConditions::Region region;
    std::vector<std::string> region_text;
    for (size_t d = 0; d < fi.vars.size(); ++d) {
        if (choices_.percent(25)) {  // unbounded
            region.emplace_back();
            region_text.push_back("{}");
            continue;
        }
        int min = choices_.range(-2, 2), extent = choices_.range(1, 8);
        region.emplace_back(Expr(min), Expr(extent));
        region_text.push_back("{" + std::to_string(min) + ", " + std::to_string(extent) + "}");
    }
    std::string bounds = "{" + join(region_text) + "}";
    Func f;
    std::string call = std::string("BoundaryConditions::") + boundary_name(kind) + "(" + fi.name;
    switch (kind) {
    case Boundary::RepeatEdge: f = BoundaryConditions::repeat_edge(fi.func, region); break;
    case Boundary::ConstantExterior: {
        Code exterior = small_constant(fi.type);
        f = BoundaryConditions::constant_exterior(fi.func, exterior.expr, region);
        call += ", " + exterior.text;
        break;
    }
    case Boundary::MirrorImage: f = BoundaryConditions::mirror_image(fi.func, region); break;
    case Boundary::MirrorInterior: f = BoundaryConditions::mirror_interior(fi.func, region); break;
    case Boundary::RepeatImage: f = BoundaryConditions::repeat_image(fi.func, region); break;
    }
    emit(owner, "Func " + name + " = " + call + ", " + bounds + ");");
    Source src;
    src.name = name;
    src.dimensions = int(fi.vars.size());
    src.type = fi.type;
    src.read = [f](const std::vector<Expr> &a) { return Expr(f(a)); };
    src.owner = owner;
    sources_.push_back(src);
}

void Generator::make_params() {
    int count = choices_.weighted({60, 30, 10});
    for (int k = 0; k < count; ++k) {
        ParamInfo p;
        p.name = "p" + std::to_string(k);
        p.owner = new_owner();
        if (choices_.percent(30)) {
            double v = small_int() / 4.0;
            Param<float> param(p.name, float(v));
            p.param = param;
            emit(p.owner, "Param<float> " + p.name + "(\"" + p.name + "\", " + real_literal(v) + "f);");
        } else {
            int v = choices_.range(0, 6);
            Param<int> param(p.name, v);
            p.param = param;
            emit(p.owner, "Param<int> " + p.name + "(\"" + p.name + "\", " + std::to_string(v) + ");");
        }
        params_.push_back(p);
    }
}

void Generator::make_options(int dimensions) {
    CompileOptions &o = result_.options;
    o.fusion = choices_.one_of<std::string>({"smart", "none", "max"});
    if (choices_.percent(40))
        for (int d = 0; d < dimensions; ++d) o.tile_sizes.push_back(choices_.one_of<int>({8, 4, 16, 1, 2, 3, 5, 32}));
    o.vectorize = !choices_.percent(30);
    o.parallel = !choices_.percent(20);
    o.threads = choices_.one_of<int>({1, 2});
    // The extents of every output: around tile boundaries, primes and 1.
    std::vector<int> extents;
    for (int d = 0; d < dimensions; ++d) {
        int tile = d < int(o.tile_sizes.size()) ? o.tile_sizes[size_t(d)] : 0;
        if (tile > 0) extents.push_back(choices_.one_of<int>({tile, tile - 1, tile + 1, 2 * tile + 1, 1, 7, 13}));
        else extents.push_back(choices_.one_of<int>({8, 1, 2, 3, 5, 7, 9, 13, 16, 17, 31, 32, 33}));
        extents.back() = std::max(extents.back(), 1);
    }
    auto points = [&] {
        int64_t n = 1;
        for (int e : extents) n *= e;
        return n;
    };
    while (points() > settings_.max_output_points) {
        auto largest = std::max_element(extents.begin(), extents.end());
        *largest = (*largest + 1) / 2;
    }
    // Per output: the same region, or its own; or both at one end of int32 (see far_).
    far_ = choices_.percent(4);
    bool far_high = choices_.percent(50);
    for (int k = 0; k < 2; ++k) {
        OutputShape shape;
        shape.extents = extents;
        for (int d = 0; d < dimensions; ++d) {
            int64_t e = extents[size_t(d)];
            const int64_t int32_max = std::numeric_limits<int32_t>::max(), int32_min = std::numeric_limits<int32_t>::min();
            if (far_ && far_high) shape.mins.push_back(int32_max - e + 1 - choices_.below(3));
            else if (far_) shape.mins.push_back(int32_min + choices_.below(3));
            else shape.mins.push_back(choices_.percent(30) ? small_int() : 0);
        }
        if (k == 1 && (far_ || choices_.percent(60))) shape.mins = result_.outputs[0].mins;
        result_.outputs.push_back(shape);
    }
}

FuncInfo Generator::define_func(int index, int dimensions, bool is_output) {
    FuncInfo f;
    f.name = "f" + std::to_string(index);
    f.func = Func(f.name);
    f.type = random_type();
    f.vars.assign(vars_.begin(), vars_.begin() + dimensions);
    current_owner_ = new_owner();
    int owner = current_owner_;
    emit(owner, "Func " + f.name + "(\"" + f.name + "\");");
    Scope scope;
    scope.pure = f.vars;
    Code v = !is_output && choices_.percent(8) ? routing_value(f, scope) : value(f.type, scope, 1 + choices_.below(3));
    auto [args, lhs] = call_parts(f.name, f.vars);
    f.func(args) = v.expr;
    emit(owner, lhs + " = " + v.text + ";");
    int updates = choices_.weighted({65, 25, 10});
    for (int u = 0; u < updates; ++u) add_update(f, is_output);
    current_owner_ = kAlways;
    Source src;
    src.name = f.name;
    src.dimensions = dimensions;
    src.type = f.type;
    src.read = [func = f.func](const std::vector<Expr> &a) { return Expr(func(a)); };
    src.owner = owner;
    sources_.push_back(src);
    if (is_output) output_owners_.push_back(owner);
    else if (!far_ && choices_.percent(10)) add_boundary(f);  // its bounds lie near 0
    return f;
}

Code Generator::routing_value(FuncInfo &f, const Scope &s) {
    std::vector<size_t> candidates;
    for (size_t i = 0; i < sources_.size(); ++i)
        if (sources_[i].readable && !sources_[i].read_only_through_boundary) candidates.push_back(i);
    if (candidates.empty()) return value(f.type, s, 2);
    f.type = sources_[choices_.one_of(candidates)].type;
    std::vector<size_t> same;
    for (size_t i : candidates)
        if (sources_[i].type == f.type) same.push_back(i);
    auto in_place = [&](Source &src) {
        std::vector<Code> args;
        for (int d = 0; d < src.dimensions; ++d) {
            if (d >= int(s.pure.size())) {
                args.push_back(int_constant(choices_.range(0, 2)));
                continue;
            }
            const Code &v = s.pure[size_t(d)];
            // Halved far from 0 (an output near the end of int32), a region would span half of it.
            switch (choices_.weighted({55, 30, far_ ? 0 : 15})) {
            case 0: args.push_back(v); break;
            case 1: args.push_back(plus(v, choices_.range(-2, 2))); break;
            default: args.push_back({v.expr / 2, "(" + v.text + " / 2)"}); break;
            }
        }
        return read_source(src, args);
    };
    Code a = in_place(sources_[choices_.one_of(same)]);
    if (choices_.percent(30) || s.pure.empty()) return a;
    Code b = in_place(sources_[choices_.one_of(same)]);
    const Code &v = choices_.one_of(s.pure);
    int k = choices_.range(-1, 3);
    Code c;
    switch (choices_.below(3)) {
    case 0: c = {v.expr % 2 == 0, "((" + v.text + " % 2) == 0)"}; break;
    case 1: c = {v.expr < k, "(" + v.text + " < " + std::to_string(k) + ")"}; break;
    default: c = {v.expr == k, "(" + v.text + " == " + std::to_string(k) + ")"}; break;
    }
    return {select(c.expr, a.expr, b.expr), "select(" + c.text + ", " + a.text + ", " + b.text + ")"};
}

// f(args) = value, or value combined with f's current value there.
void Generator::assign(const FuncInfo &f, const std::vector<Code> &args, const Code &value) {
    auto [a, lhs] = call_parts(f.name, args);
    Code self{Expr(f.func(a)), lhs};
    switch (choices_.weighted({15, 40, 10, 8, 12, 10, 5})) {
    case 0:
        f.func(a) = value.expr;
        emit(current_owner_, lhs + " = " + value.text + ";");
        break;
    case 1:
        f.func(a) += value.expr;
        emit(current_owner_, lhs + " += " + value.text + ";");
        break;
    case 2:
        f.func(a) -= value.expr;
        emit(current_owner_, lhs + " -= " + value.text + ";");
        break;
    case 3:
        f.func(a) *= value.expr;
        emit(current_owner_, lhs + " *= " + value.text + ";");
        break;
    case 4: {
        Code m = binary(Binary::Max, self, value);
        f.func(a) = m.expr;
        emit(current_owner_, lhs + " = " + m.text + ";");
        break;
    }
    case 5: {
        Code m = binary(Binary::Min, self, value);
        f.func(a) = m.expr;
        emit(current_owner_, lhs + " = " + m.text + ";");
        break;
    }
    default: {
        Scope scope;
        scope.pure = args;
        Code c = condition(scope, 0);
        Code s{select(c.expr, value.expr, self.expr), "select(" + c.text + ", " + value.text + ", " + self.text + ")"};
        f.func(a) = s.expr;
        emit(current_owner_, lhs + " = " + s.text + ";");
        break;
    }
    }
}

void Generator::add_update(FuncInfo &f, bool is_output) {
    enum { Accumulate, Coordinates, Scan, Histogram, Empty };
    int kind = choices_.weighted({40, 25, 15, 15, 5});
    // An output's update that writes outside the output's region is a UserError on both paths;
    // keep that to a fraction of the outputs.
    if (is_output && kind != Accumulate && kind != Empty && !choices_.percent(20)) kind = Accumulate;
    if (far_ && kind != Empty) kind = Accumulate;  // the others write at RDom coordinates
    int dims = int(f.vars.size());
    if (kind == Accumulate || kind == Empty) {
        // f(x, y) op= value over an RDom that only reduces: a convolution-like update.
        RDomInfo r = make_rdom(choices_.range(1, 2), f.vars, kind == Empty);
        Scope scope{f.vars, r.vars, 0};
        Code v = cast_to(f.type, read(scope, 1, &r.vars[size_t(choices_.below(int(r.vars.size())))]));
        if (choices_.percent(50)) v = binary(Binary::Add, v, value(f.type, scope, 1));
        assign(f, f.vars, v);
        return;
    }
    if (kind == Histogram) {
        // f(..., clamp(data, lo, hi), ...) += weight over an RDom, possibly one covering an input.
        RDomInfo r;
        Code data;
        std::vector<const InputInfo *> large;
        for (const InputInfo &in : inputs_)
            if (!in.small) large.push_back(&in);
        if (!large.empty() && choices_.percent(40)) {
            const InputInfo &in = *large[size_t(choices_.below(int(large.size())))];
            r.name = "r" + std::to_string(rdoms_++);
            r.rdom = in.embedded ? RDom(in.data) : RDom(in.input);
            emit(current_owner_, "RDom " + r.name + "(" + in.name + ");");
            use(in.owner);
            static const char *fields[] = {".x", ".y", ".z"};
            for (int d = 0; d < in.dimensions; ++d) r.vars.push_back({Expr(r.rdom[d]), r.name + fields[d]});
            data = read_source(sources_[in.source], r.vars);
        } else {
            r = make_rdom(choices_.range(1, 2), {});
            Scope scope{{}, r.vars, 0};
            data = read(scope, 1, &r.vars[0]);
        }
        int bin = choices_.below(dims);
        std::vector<Code> kept, args = f.vars;
        for (int d = 0; d < dims; ++d)
            if (d != bin) kept.push_back(f.vars[size_t(d)]);
        Scope scope{kept, r.vars, 0};
        if (choices_.percent(40)) {
            Code other = value(data.type(), scope, 1);
            reconcile(data, other);
            data = binary(Binary::Add, data, other);
        }
        int lo = choices_.one_of<int>({0, -2, 1, 3}), bins = choices_.one_of<int>({8, 4, 1, 16, 3});
        Code low = int_constant(lo), high = int_constant(lo + bins - 1);
        Code as_int = cast_to(Int(32), data);
        args[size_t(bin)] = {clamp(as_int.expr, low.expr, high.expr),
                             "clamp(" + as_int.text + ", " + low.text + ", " + high.text + ")"};
        Code weight = choices_.percent(60) ? value(f.type, scope, 1) : constant(f.type, 1, 1.0);
        auto [a, lhs] = call_parts(f.name, args);
        f.func(a) += weight.expr;
        emit(current_owner_, lhs + " += " + weight.text + ";");
        return;
    }
    // Coordinates and scans: some arguments are RVars (plus an offset), the others pure Vars.
    RDomInfo r = make_rdom(choices_.range(1, settings_.max_dimensions), {}, false, true);
    std::vector<Code> args = f.vars, kept;
    std::vector<int> reduction_positions;
    for (int d = 0; d < dims; ++d) {
        if (choices_.percent(50)) {
            args[size_t(d)] = plus(r.vars[size_t(choices_.below(int(r.vars.size())))], choices_.range(-1, 1));
            reduction_positions.push_back(d);
        } else {
            kept.push_back(f.vars[size_t(d)]);
        }
    }
    if (reduction_positions.empty()) {
        int d = choices_.below(dims);
        args[size_t(d)] = r.vars[0];
        reduction_positions.push_back(d);
        kept.erase(std::find_if(kept.begin(), kept.end(), [&](const Code &c) { return c.text == f.vars[size_t(d)].text; }));
    }
    // The predicates of the RDom may use the kept Vars, now that they are known.
    if (choices_.percent(30)) {
        Code p = predicate(r, kept);
        r.rdom.where(p.expr);
        emit(current_owner_, r.name + ".where(" + p.text + ");");
    }
    Scope scope{kept, r.vars, 0};
    Code v = value(f.type, scope, 1 + choices_.below(2));
    if (kind == Coordinates) {
        assign(f, args, v);
        return;
    }
    // A scan: f(r) = f(r - k) op value, each point reading one computed before it.
    std::vector<Code> previous = args;
    int p = reduction_positions[size_t(choices_.below(int(reduction_positions.size())))];
    previous[size_t(p)] = plus(args[size_t(p)], -choices_.range(1, 2));
    auto [a, lhs] = call_parts(f.name, args);
    auto [b, earlier_text] = call_parts(f.name, previous);
    Code earlier{Expr(f.func(b)), earlier_text};
    if (choices_.percent(30)) v = {Expr(f.func(a)), lhs};  // a running total of f's own values
    static const std::vector<Binary> combine = {Binary::Add, Binary::Max, Binary::Sub, Binary::Mul};
    Code scan = binary(choices_.one_of(combine), earlier, v);
    f.func(a) = scan.expr;
    emit(current_owner_, lhs + " = " + scan.text + ";");
}

RDomInfo Generator::make_rdom(int dimensions, const std::vector<Code> &pure, bool force_empty,
                                bool without_predicate) {
    RDomInfo r;
    r.name = "r" + std::to_string(rdoms_++);
    const std::string &name = r.name;
    std::vector<Expr> bounds;
    std::vector<std::string> text;
    bool never_true = force_empty && choices_.percent(50);
    int empty_dimension = force_empty && !never_true ? choices_.below(dimensions) : -1;
    for (int d = 0; d < dimensions; ++d) {
        std::vector<const InputInfo *> small;
        for (const InputInfo &in : inputs_)
            if (in.small && !in.embedded) small.push_back(&in);
        int kind = choices_.weighted({85, 10, 5});
        if (kind == 1 && !small.empty() && d != empty_dimension) {
            // The whole extent of a small input's dimension, known only at run time.
            const InputInfo &in = *small[size_t(choices_.below(int(small.size())))];
            int k = choices_.below(in.dimensions);
            bounds.push_back(in.input.dim(k).min());
            bounds.push_back(in.input.dim(k).extent());
            std::string dim = in.name + ".dim(" + std::to_string(k) + ")";
            text.push_back(dim + ".min()");
            text.push_back(dim + ".extent()");
            r.constant_mins.push_back(in.mins[size_t(k)]);
            use(in.owner);
            continue;
        }
        int min = choices_.one_of<int>({0, -1, 1, 2, -2});
        r.constant_mins.push_back(min);
        bounds.push_back(Expr(min));
        text.push_back(std::to_string(min));
        std::vector<const ParamInfo *> ints;
        for (const ParamInfo &p : params_)
            if (p.param.type() == Int(32)) ints.push_back(&p);
        if (kind == 2 && !ints.empty() && d != empty_dimension) {
            const ParamInfo &p = *ints[size_t(choices_.below(int(ints.size())))];
            bounds.push_back(p.param);
            text.push_back(p.name);
            use(p.owner);
            continue;
        }
        int extent = d == empty_dimension ? 0 : std::vector<int>{3, 2, 1, 4, 5, 7, 8, 9, 0}[size_t(
                                                   choices_.weighted({20, 15, 10, 12, 12, 10, 8, 5, 5}))];
        bounds.push_back(Expr(extent));
        text.push_back(std::to_string(extent));
    }
    switch (dimensions) {
    case 1: r.rdom = RDom(bounds[0], bounds[1], name); break;
    case 2: r.rdom = RDom(bounds[0], bounds[1], bounds[2], bounds[3], name); break;
    default: r.rdom = RDom(bounds[0], bounds[1], bounds[2], bounds[3], bounds[4], bounds[5], name); break;
    }
    emit(current_owner_, "RDom " + name + "(" + join(text) + ", \"" + name + "\");");
    static const char *fields[] = {".x", ".y", ".z"};
    for (int d = 0; d < dimensions; ++d) r.vars.push_back({Expr(r.rdom[d]), name + fields[d]});
    Code p;
    if (never_true) {
        size_t k = size_t(choices_.below(dimensions));
        p = binary(Binary::LT, r.vars[k], int_constant(r.constant_mins[k] - 1 - choices_.below(3)));
    } else if (!without_predicate && choices_.percent(30)) {
        p = predicate(r, pure);
    }
    if (p.expr.defined()) {
        r.rdom.where(p.expr);
        emit(current_owner_, name + ".where(" + p.text + ");");
    }
    return r;
}

Code Generator::predicate(const RDomInfo &r, const std::vector<Code> &pure) {
    size_t k = size_t(choices_.below(int(r.vars.size())));
    const Code &v = r.vars[k];
    switch (choices_.weighted({30, 20, 15, 15, 8, 7, 4, 5})) {
    case 0: {
        static const std::vector<Binary> ops = {Binary::LT, Binary::LE, Binary::GT, Binary::GE, Binary::NE, Binary::EQ};
        return binary(choices_.one_of(ops), v, int_constant(choices_.range(-2, 6)));
    }
    case 1:  // triangular
        if (r.vars.size() >= 2) return binary(Binary::LE, r.vars[1], r.vars[0]);
        return binary(Binary::LE, v, int_constant(choices_.range(0, 4)));
    case 2: {  // every other point
        std::vector<Code> others = pure;
        others.insert(others.end(), r.vars.begin(), r.vars.end());
        Code sum = binary(Binary::Add, v, choices_.one_of(others));
        return binary(Binary::EQ, binary(Binary::Mod, sum, int_constant(2)), int_constant(0));
    }
    case 3:  // bounded by a pure Var of the definition
        if (!pure.empty()) return binary(choices_.percent(50) ? Binary::LE : Binary::NE, v, choices_.one_of(pure));
        return binary(Binary::NE, v, int_constant(1));
    case 4:  // below the RDom's min: never true
        return binary(Binary::LT, v, int_constant(r.constant_mins[k] - 1 - choices_.below(3)));
    case 5: {  // depends on data
        Scope scope{pure, r.vars, 0};
        Code data = read(scope, 0, &v);
        return binary(Binary::GT, data, small_constant(data.type()));
    }
    case 6:  // int32 arithmetic that wraps at some points (v + 2147483646 > 0 only while v <= 1)
        return binary(choices_.percent(50) ? Binary::GT : Binary::LT, wrapping_sum(v), int_constant(choices_.range(-2, 2)));
    default:
        return binary(choices_.percent(50) ? Binary::And : Binary::Or, predicate(r, pure), predicate(r, pure));
    }
}

void Generator::add_directives(const std::vector<FuncInfo> &funcs) {
    int fresh = 0;  // numbers the Vars the directives declare
    add_loop_directives(funcs, fresh);
    add_compute_inline(funcs);
    add_compute_at(funcs, fresh);
    add_bounds(funcs);
}

void Generator::add_bounds(const std::vector<FuncInfo> &funcs) {
    // Regions set (bound: a run that needs more is refused by both paths alike) or widened
    // (align_bounds: the same values over more points).
    for (const FuncInfo &fi : funcs) {
        if (fi.vars.empty() || fi.func.contents()->compute_inline) continue;
        const std::string &v = fi.vars[size_t(choices_.below(int(fi.vars.size())))].text;
        // Rare: both often make a run need more of an input than the fuzzer's buffers hold
        // (a shared rejection, which tests little else).
        if (choices_.percent(3)) {
            int mn = choices_.range(-4, 2), ext = choices_.range(6, 40);
            Func(fi.func).bound(Var(v), mn, ext);
            emit(owner_of(fi.name), fi.name + ".bound(" + v + ", " + std::to_string(mn) + ", " + std::to_string(ext) + ");");
        }
        if (choices_.percent(6)) {
            int modulus = choices_.one_of<int>({2, 4, 8, 3}), remainder = choices_.range(0, modulus - 1);
            Func(fi.func).align_bounds(Var(v), modulus, remainder);
            emit(owner_of(fi.name), fi.name + ".align_bounds(" + v + ", " + std::to_string(modulus) + ", " +
                                        std::to_string(remainder) + ");");
        }
    }
}

void Generator::add_loop_directives(const std::vector<FuncInfo> &funcs, int &fresh) {
    for (const FuncInfo &fi : funcs) {
        int owner = owner_of(fi.name);
        int stages = 1 + fi.func.num_update_definitions();
        for (int k = 0; k < stages; ++k) {
            Stage stage(fi.func.contents(), k);
            std::string on = fi.name + (k > 0 ? ".update(" + std::to_string(k - 1) + ")" : "");
            int count = choices_.weighted({30, 30, 25, 15});
            for (int j = 0; j < count; ++j) {
                std::vector<StageLoop> loops = stage_loops(*fi.func.contents(), k);
                if (loops.empty()) break;
                // A loop's C++ expression in the reproduction is its name: x, r0.x, or a Var
                // declared for a split (d3o).
                auto pick = [&] { return loops[size_t(choices_.below(int(loops.size())))].name; };
                std::string declare, call;
                std::function<void()> apply;
                switch (choices_.below(6)) {
                case 0: {
                    std::string old = pick(), o = "d" + std::to_string(fresh) + "o", i = "d" + std::to_string(fresh) + "i";
                    ++fresh;
                    int factor = choices_.one_of<int>({4, 2, 3, 8, 1});
                    declare = "Var " + o + "(\"" + o + "\"), " + i + "(\"" + i + "\");";
                    call = "split(" + old + ", " + o + ", " + i + ", " + std::to_string(factor) + ")";
                    apply = [&stage, old, o, i, factor] { stage.split(Var(old), Var(o), Var(i), factor); };
                    break;
                }
                case 1: {
                    std::string a = pick(), b = pick();
                    call = "reorder(" + a + ", " + b + ")";
                    apply = [&stage, a, b] { stage.reorder(Var(a), Var(b)); };
                    break;
                }
                case 2: {
                    std::string v = pick();
                    // On a GPU target, parallel loops become blocks: said either way.
                    bool blocks = settings_.gpu && choices_.percent(50);
                    call = (blocks ? "gpu_blocks(" : "parallel(") + v + ")";
                    apply = [&stage, v, blocks] { blocks ? stage.gpu_blocks(Var(v)) : stage.parallel(Var(v)); };
                    break;
                }
                case 3: {
                    std::string v = loops.back().name;
                    if (settings_.gpu && choices_.percent(50)) {
                        call = "gpu_threads(" + v + ")";
                        apply = [&stage, v] { stage.gpu_threads(Var(v)); };
                        break;
                    }
                    int factor = choices_.one_of<int>({0, 4, 8});
                    call = "vectorize(" + v + (factor ? ", " + std::to_string(factor) : "") + ")";
                    apply = [&stage, v, factor] { stage.vectorize(Var(v), factor); };
                    break;
                }
                case 4: {
                    std::string v = pick();
                    int factor = choices_.one_of<int>({2, 0, 4});
                    call = "unroll(" + v + (factor ? ", " + std::to_string(factor) : "") + ")";
                    apply = [&stage, v, factor] { stage.unroll(Var(v), factor); };
                    break;
                }
                default: {
                    std::string inner = pick(), outer = pick(), fused = "d" + std::to_string(fresh++) + "f";
                    declare = "Var " + fused + "(\"" + fused + "\");";
                    call = "fuse(" + inner + ", " + outer + ", " + fused + ")";
                    apply = [&stage, inner, outer, fused] { stage.fuse(Var(inner), Var(outer), Var(fused)); };
                    break;
                }
                }
                try {
                    apply();
                } catch (const UserError &) {
                    continue;  // refused where it is written (no such loop, two parallel loops, ...)
                }
                if (!declare.empty()) emit(owner, declare);
                emit(owner, on + "." + call + ";");
            }
        }
    }
}

void Generator::add_compute_inline(const std::vector<FuncInfo> &funcs) {
    for (const FuncInfo &fi : funcs)
        if (fi.func.num_update_definitions() == 0 && fi.func.contents()->pure.directives.empty() && choices_.percent(15)) {
            Func(fi.func).compute_inline();
            emit(owner_of(fi.name), fi.name + ".compute_inline();");
        }
}

void Generator::add_compute_at(const std::vector<FuncInfo> &funcs, int &fresh) {
    // A producer computed inside the tiles of a later Func: the consumer's pure loops split and
    // reordered into tiles, the producer computed at the last tile loop, or its rows sliding
    // (store_at the tile, compute_at the first loop inside). Where the pair does not qualify
    // (another Func reads the producer, rows cannot slide, ...), compiling refuses it.
    auto reads = [](const FuncInfo &reader, const FuncInfo &read) {
        for (const Definition *d : definitions_of(*reader.func.contents()))
            for (const Expr &e : definition_exprs(*d))
                if (ir::contains_call_to(e, read.func.contents().get())) return true;
        return false;
    };
    if (funcs.size() >= 2 && choices_.percent(40)) {
        const FuncInfo &f = funcs[size_t(choices_.range(1, int(funcs.size()) - 1))];
        // Preferably a producer that f alone reads (others are refused when compiling).
        std::vector<const FuncInfo *> only_f, any;
        for (const FuncInfo &g : funcs) {
            if (&g == &f) break;
            any.push_back(&g);
            bool alone = reads(f, g);
            for (const FuncInfo &h : funcs)
                if (&h != &f && &h != &g && reads(h, g)) alone = false;
            if (alone) only_f.push_back(&g);
        }
        const std::vector<const FuncInfo *> &pool = !only_f.empty() && choices_.percent(85) ? only_f : any;
        const FuncInfo &g = *pool[size_t(choices_.below(int(pool.size())))];
        if (f.func.contents()->pure.directives.empty() && g.func.contents()->pure.directives.empty() &&
            g.func.num_update_definitions() == 0 && !f.func.contents()->compute_inline && !g.func.contents()->compute_inline) {
            int owner = owner_of(f.name);
            std::vector<std::string> outer, inner;  // outermost dimension first (the tuple order)
            try {
                for (int d = int(f.vars.size()) - 1; d >= 0; --d) {
                    std::string v = f.vars[size_t(d)].text, o = "c" + std::to_string(fresh) + "o",
                                i = "c" + std::to_string(fresh) + "i";
                    ++fresh;
                    int factor = choices_.one_of<int>({4, 2, 3, 8});
                    Func(f.func).split(Var(v), Var(o), Var(i), factor);
                    emit(owner, "Var " + o + "(\"" + o + "\"), " + i + "(\"" + i + "\");");
                    emit(owner, f.name + ".split(" + v + ", " + o + ", " + i + ", " + std::to_string(factor) + ");");
                    outer.push_back(o);
                    inner.push_back(i);
                }
                if (outer.size() > 1) {
                    std::vector<VarOrRVar> order;
                    std::string text;
                    for (auto it = inner.rbegin(); it != inner.rend(); ++it) order.push_back(Var(*it)), text += (text.empty() ? "" : ", ") + *it;
                    for (auto it = outer.rbegin(); it != outer.rend(); ++it) order.push_back(Var(*it)), text += ", " + *it;
                    Func(f.func).reorder(order);
                    emit(owner, f.name + ".reorder({" + text + "});");
                }
                if (choices_.percent(50)) {
                    Func(f.func).parallel(Var(outer.front()));
                    emit(owner, f.name + ".parallel(" + outer.front() + ");");
                }
                if (choices_.percent(50)) {
                    Func(f.func).vectorize(Var(inner.back()));
                    emit(owner, f.name + ".vectorize(" + inner.back() + ");");
                }
                Func producer(g.func);
                if (outer.size() > 1 && choices_.percent(40)) {
                    producer.store_at(f.func, Var(outer.back())).compute_at(f.func, Var(inner.front()));
                    emit(owner, g.name + ".store_at(" + f.name + ", " + outer.back() + ").compute_at(" + f.name + ", " +
                                    inner.front() + ");");
                } else {
                    producer.compute_at(f.func, Var(outer.back()));
                    emit(owner, g.name + ".compute_at(" + f.name + ", " + outer.back() + ");");
                }
            } catch (const UserError &) {
                // refused where it is written: the directives so far stay, as the reproduction shows
            }
        }
    }
}

void Generator::make_outputs(const std::vector<FuncInfo> &funcs) {
    std::vector<Func> outputs;
    std::vector<std::string> names;
    for (const FuncInfo &f : funcs) {
        outputs.push_back(f.func);
        names.push_back(f.name);
    }
    result_.outputs.resize(funcs.size());
    result_.pipeline = Pipeline(outputs);
    const CompileOptions &o = result_.options;
    std::string s;
    auto line = [&](const std::string &statement) { s += "    " + statement + "\n"; };
    line(funcs.size() == 1 ? "Pipeline pipeline(" + names[0] + ");" : "Pipeline pipeline({" + join(names) + "});");
    line("CompileOptions options;");
    line("options.fusion = \"" + o.fusion + "\";");
    if (!o.tile_sizes.empty()) line("options.tile_sizes = {" + join_numbers(o.tile_sizes) + "};");
    if (!o.vectorize) line("options.vectorize = false;");
    if (!o.parallel) line("options.parallel = false;");
    line("options.threads = " + std::to_string(o.threads) + ";");
    std::vector<std::string> got, want;
    for (size_t k = 0; k < funcs.size(); ++k) {
        OutputShape &shape = result_.outputs[k];
        shape.type = funcs[k].type;
        shape.func = funcs[k].name;
        for (const char *prefix : {"out", "want"}) {
            std::string name = prefix + std::to_string(k);
            line("Buffer<" + cpp_type(shape.type) + "> " + name + "(std::vector<int>{" + join_numbers(shape.extents) +
                 "}, \"" + name + "\");");
            if (std::any_of(shape.mins.begin(), shape.mins.end(), [](int64_t m) { return m != 0; }))
                line(name + ".set_min({" + join_numbers(shape.mins) + "});");
            (prefix[0] == 'o' ? got : want).push_back(name);
        }
        line("std::memset(out" + std::to_string(k) + ".raw_data(), 0xa5, out" + std::to_string(k) +
             ".number_of_elements() * sizeof(" + cpp_type(shape.type) + "));  // unwritten elements then differ");
    }
    // Drawn last, so that the choices before it (and the pipelines of earlier seeds) stay as they were.
    if (settings_.gpu) {
        result_.target = settings_.device_sm ? Target::cuda(settings_.device_sm) : Target::cuda(80).emulated();
        if (choices_.percent(30)) result_.target = result_.target.with_shared_memory_opt_in();
    }
    // Funcs without directives are scheduled automatically around those with directives, or,
    // for a quarter of the pipelines, at root in Halide's default order.
    if (settings_.directives && choices_.percent(25)) {
        result_.pipeline.auto_schedule(false);
        line("pipeline.auto_schedule(false);");
    }
    // Half the GPU pipelines without column windows (the default: threads walking down their
    // columns where a group's stages read each other only in their own column).
    if (settings_.gpu && choices_.percent(50)) {
        result_.options.gpu_column_windows = false;
        line("options.gpu_column_windows = false;");
    }
    // A quarter of the smart-fusion pipelines with other fusion thresholds (tessera-tune's
    // knobs): other groupings of the same stages, each still the interpreter's result.
    if (result_.options.fusion == "smart" && choices_.percent(25)) {
        result_.options.max_recompute = choices_.one_of<double>({0.0, 0.1, 1.0, 4.0});
        line("options.max_recompute = " + std::to_string(*result_.options.max_recompute) + ";");
        if (!settings_.gpu) {
            result_.options.cache_bytes = choices_.one_of<int64_t>({1024, 16384, 1 << 20});
            line("options.cache_bytes = " + std::to_string(*result_.options.cache_bytes) + ";");
        }
    }
    std::string target = !settings_.gpu ? "Target::host()"
                         : settings_.device_sm ? "Target::cuda(" + std::to_string(settings_.device_sm) + ")"
                                               : "Target::cuda(80).emulated()";
    if (settings_.gpu && result_.target.shared_memory_opt_in) target += ".with_shared_memory_opt_in()";
    line("pipeline.compile(" + target + ", options).realize(std::vector<Buffer<void>>{" + join(got) + "});");
    line("interpret(pipeline, std::vector<Buffer<void>>{" + join(want) + "});");
    line("// Compare " + join(got) + " with " + join(want) + " bit for bit (NaN equals NaN).");
    realization_ = s;
}

GeneratedPipeline generate_pipeline(Choices &choices, const FuzzSettings &settings, std::string &reproduction) {
    Generator generator(choices, settings);
    try {
        GeneratedPipeline g = generator.generate();
        reproduction = generator.reproduction();
        return g;
    } catch (...) {
        reproduction = generator.reproduction();
        throw;
    }
}

} // namespace tessera::fuzz::detail
