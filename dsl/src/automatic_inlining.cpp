#include "tessera/automatic_inlining.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tessera/func_graph.h"

namespace tessera {

namespace {

// Inlining stops where a consumer's value, written out as a tree, would pass this many nodes
// (a Func called twice at one point doubles when its value is substituted).
constexpr uint64_t kMaxInlinedNodes = 4000;

// The pure Var `e` is, plus or minus an integer constant: its name, or nothing.
std::optional<std::string> shifted_var(const Expr &e) {
    std::optional<ir::ShiftedVar> v = ir::as_shifted_var(e);
    return v ? std::optional<std::string>(v->name) : std::nullopt;
}

bool has_vars(const Expr &e) { return !ir::free_vars(e).empty() || !ir::rdoms_in(e).empty(); }

// Whether every Func and input `f`'s value reads, it reads at f's pure Vars plus or minus
// constants, or at coordinates without Vars.
bool reads_only_shifted(const FuncContents &f) {
    bool ok = true;
    ir::visit(f.pure.value, [&](const Expr &n) {
        if (n->op != Op::FuncCall && n->op != Op::InputCall) return ok;
        for (const Expr &a : n->args) {
            std::optional<std::string> v = shifted_var(a);
            bool pure = v && std::find(f.pure_args.begin(), f.pure_args.end(), *v) != f.pure_args.end();
            if (!pure && has_vars(a)) ok = false;
        }
        return ok;
    });
    return ok;
}

// Whether consumer `c` reads `f` one-to-one: every call of f in c's value has the same
// arguments, each a distinct pure Var of c plus or minus a constant, one per dimension of f.
bool read_one_to_one(const FuncContents &f, const FuncContents &c) {
    std::optional<std::string> first;  // the arguments of the first call, printed
    bool ok = true;
    ir::visit(c.pure.value, [&](const Expr &n) {
        if (!ok || n->op != Op::FuncCall || n->func_ptr != &f) return ok;
        std::string printed;
        for (const Expr &a : n->args) printed += to_string(a) + ",";
        if (first) {
            ok = *first == printed;
            return ok;
        }
        first = printed;
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
    return ok && first.has_value();
}

} // namespace

std::set<const FuncContents *> automatic_inlines(const PipelineGraph &g) {
    std::set<const FuncContents *> inlined;
    for (const auto &f : g.funcs)
        if (has_schedule_directives(*f)) return inlined;
    // Producers first, so that a consumer's size below counts what is inlined into it already.
    for (const auto &fp : g.funcs) {
        const FuncContents &f = *fp;
        if (f.compute_inline || !f.updates.empty() || g.is_output(&f) || f.dimensions() == 0 || !f.bounds.empty()) continue;
        auto it = g.consumers.find(&f);
        if (it == g.consumers.end() || it->second.size() != 1) continue;
        const FuncContents &c = *it->second.front();
        if (&c == &f || c.compute_inline || !c.updates.empty()) continue;
        if (!reads_only_shifted(f) || !read_one_to_one(f, c)) continue;
        inlined.insert(&f);
        if (ir::expanded_size(inline_calls(c.pure.value, inlined), kMaxInlinedNodes + 1) > kMaxInlinedNodes) inlined.erase(&f);
    }
    return inlined;
}

} // namespace tessera
