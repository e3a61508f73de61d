#include "tessera/var.h"

#include <atomic>

#include "tessera/buffer.h"
#include "tessera/ir.h"
#include "tessera/param.h"

namespace tessera {

namespace detail {
std::string unique_name(const std::string &prefix) {
    static std::atomic<int> counter{0};
    return prefix + "$" + std::to_string(counter++);
}
} // namespace detail

Var::Var() : name_(detail::unique_name("v")) {}

Var::Var(const std::string &name) : name_(name) {
    if (name.empty()) user_error("Var: the name must not be empty.");
}

Var::operator Expr() const { return ir::make_var(name_); }

RVar::RVar(std::shared_ptr<RDomContents> rdom, int index) : rdom_(std::move(rdom)), index_(index) {}

const std::string &RVar::name() const {
    if (!rdom_) user_error("RVar: this RVar belongs to no RDom (default-constructed).");
    return rdom_->dims[size_t(index_)].name;
}

Expr RVar::min() const {
    name();
    return rdom_->dims[size_t(index_)].min;
}

Expr RVar::extent() const {
    name();
    return rdom_->dims[size_t(index_)].extent;
}

RVar::operator Expr() const {
    name();
    return ir::make_rvar(rdom_, index_);
}

namespace {

// RDom bounds may depend on constants, Params and input sizes only: the domain must be known
// before any Func is computed.
Expr checked_bound(Expr e, const std::string &rdom, int dim, const char *which) {
    if (!e.defined()) user_error("RDom ", rdom, ": the ", which, " of dimension ", dim, " is undefined.");
    if (!e.type().is_int_or_uint() || e.type().is_bool())
        user_error("RDom ", rdom, ": the ", which, " of dimension ", dim, " (", e, ") has type ", e.type(),
                   "; RDom bounds must be integers.");
    ir::visit(e, [&](const Expr &n) {
        switch (n->op) {
        case Op::Var:
            user_error("RDom ", rdom, ": the ", which, " of dimension ", dim, " (", e, ") uses the Var ", n->name,
                       ". RDom bounds may use constants, Params and input sizes only.");
        case Op::RVar:
            user_error("RDom ", rdom, ": the ", which, " of dimension ", dim, " (", e,
                       ") uses the RDom variable ", n->name, ". RDom bounds may use constants, Params and input sizes only.");
        case Op::FuncCall:
        case Op::InputCall:
            user_error("RDom ", rdom, ": the ", which, " of dimension ", dim, " (", e, ") reads ", n->name,
                       ". RDom bounds may not depend on computed values; use a Param or an input size.");
        default: return true;
        }
    });
    return e.type() == Int(32) ? e : cast(Int(32), e);
}

} // namespace

void RDom::init(const std::vector<Range> &ranges, const std::string &name) {
    if (ranges.empty()) user_error("RDom ", name, ": an RDom needs at least one dimension.");
    c_ = std::make_shared<RDomContents>();
    c_->name = name.empty() ? detail::unique_name("r") : name;
    static const char *suffix[] = {"x", "y", "z", "w"};
    for (size_t i = 0; i < ranges.size(); ++i) {
        RVarDef d;
        d.name = c_->name + "." + (i < 4 ? std::string(suffix[i]) : std::to_string(i));
        d.min = checked_bound(ranges[i].min, c_->name, int(i), "min");
        d.extent = checked_bound(ranges[i].extent, c_->name, int(i), "extent");
        c_->dims.push_back(std::move(d));
    }
    RVar *members[] = {&x, &y, &z, &w};
    for (size_t i = 0; i < ranges.size() && i < 4; ++i) *members[i] = RVar(c_, int(i));
}

RDom::RDom(const std::vector<Range> &ranges, const std::string &name) { init(ranges, name); }
RDom::RDom(Expr min0, Expr extent0, const std::string &name) { init({{min0, extent0}}, name); }
RDom::RDom(Expr min0, Expr extent0, Expr min1, Expr extent1, const std::string &name) {
    init({{min0, extent0}, {min1, extent1}}, name);
}
RDom::RDom(Expr min0, Expr extent0, Expr min1, Expr extent1, Expr min2, Expr extent2, const std::string &name) {
    init({{min0, extent0}, {min1, extent1}, {min2, extent2}}, name);
}
RDom::RDom(Expr min0, Expr extent0, Expr min1, Expr extent1, Expr min2, Expr extent2, Expr min3, Expr extent3,
           const std::string &name) {
    init({{min0, extent0}, {min1, extent1}, {min2, extent2}, {min3, extent3}}, name);
}

RDom::RDom(const Buffer<void> &buffer) {
    if (!buffer.defined()) user_error("RDom: the buffer is undefined.");
    std::vector<Range> r;
    for (int i = 0; i < buffer.dimensions(); ++i)
        r.emplace_back(Expr(int(buffer.min(i))), Expr(int(buffer.extent(i))));
    init(r, buffer.name().empty() ? "" : buffer.name() + "_dom");
}

RDom::RDom(const InputBuffer<void> &input) {
    std::vector<Range> r;
    for (int i = 0; i < input.dimensions(); ++i) r.emplace_back(input.dim(i).min(), input.dim(i).extent());
    init(r, input.name() + "_dom");
}

RDom &RDom::where(Expr predicate) {
    if (!c_) user_error("RDom::where: the RDom is undefined (default-constructed).");
    if (!predicate.defined()) user_error("RDom ", c_->name, ": where() was given an undefined Expr.");
    detail::check_expression_size("The predicate given to RDom " + c_->name + "'s where()", predicate);
    if (!predicate.type().is_bool())
        user_error("RDom ", c_->name, ": the predicate ", predicate, " given to where() has type ", predicate.type(),
                   "; it must be bool.");
    for (const auto &r : ir::rdoms_in(predicate))
        if (r != c_)
            user_error("RDom ", c_->name, ": the predicate ", predicate, " uses variables of another RDom (", r->name,
                       "). A predicate may use only its own RDom's variables.");
    // The predicate's variables refer to this RDom without owning it: the RDom owns its
    // predicates, so owning references back would be a cycle that is never freed.
    RDomContents *self = c_.get();
    predicate = ir::transform(predicate, [self](const Expr &n) {
        if (n->op != Op::RVar || n->rdom.get() != self) return n;
        auto copy = std::make_shared<ExprNode>(*n.get());
        copy->rdom = std::shared_ptr<RDomContents>(std::shared_ptr<RDomContents>(), self);  // non-owning
        return Expr(std::move(copy));
    });
    c_->predicates.push_back(std::move(predicate));
    return *this;
}

int RDom::dimensions() const { return c_ ? int(c_->dims.size()) : 0; }

RVar RDom::operator[](int i) const {
    if (!c_ || i < 0 || i >= dimensions())
        user_error("RDom ", c_ ? c_->name : std::string("<undefined>"), ": dimension ", i, " does not exist (it has ",
                   dimensions(), ").");
    return RVar(c_, i);
}

const std::string &RDom::name() const {
    if (!c_) user_error("RDom: the RDom is undefined (default-constructed).");
    return c_->name;
}

RDom::operator Expr() const { return Expr(operator RVar()); }

RDom::operator RVar() const {
    if (dimensions() != 1)
        user_error("RDom ", c_ ? c_->name : std::string("<undefined>"), " has ", dimensions(),
                   " dimensions; only a one-dimensional RDom can be used as a single variable. Use r.x, r.y, ...");
    return RVar(c_, 0);
}

} // namespace tessera
