// Pure variables (Var) and reduction domains (RDom, RVar).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/expr.h"

namespace tessera {

template <typename T> class Buffer;
template <typename T> class InputBuffer;

// A pure variable: a name that stands for a coordinate in a Func definition. Two Vars with
// the same name are the same variable.
class Var {
public:
    // A Var with a fresh unique name.
    Var();
    explicit Var(const std::string &name);
    const std::string &name() const { return name_; }
    operator Expr() const;
    bool same_as(const Var &o) const { return name_ == o.name_; }

private:
    std::string name_;
};

// One dimension of an RDom.
class RVar {
public:
    RVar() = default;
    RVar(std::shared_ptr<RDomContents> rdom, int index);
    const std::string &name() const;
    Expr min() const;
    Expr extent() const;
    operator Expr() const;
    const std::shared_ptr<RDomContents> &domain() const { return rdom_; }
    int index() const { return index_; }

private:
    std::shared_ptr<RDomContents> rdom_;
    int index_ = 0;
};

// A range [min, min + extent) of integers.
struct Range {
    Expr min, extent;
    Range() = default;
    Range(Expr min_, Expr extent_) : min(std::move(min_)), extent(std::move(extent_)) {}
};

// A reduction domain: a box of integer points, optionally restricted by predicates, that an
// update definition iterates over in order (r.x innermost). Bounds may use Params and the
// sizes of InputBuffers, but not Vars, RVars or values of Funcs and buffers.
class RDom {
public:
    RDom() = default;
    explicit RDom(const std::vector<Range> &ranges, const std::string &name = "");
    RDom(Expr min0, Expr extent0, const std::string &name = "");
    RDom(Expr min0, Expr extent0, Expr min1, Expr extent1, const std::string &name = "");
    RDom(Expr min0, Expr extent0, Expr min1, Expr extent1, Expr min2, Expr extent2,
         const std::string &name = "");
    RDom(Expr min0, Expr extent0, Expr min1, Expr extent1, Expr min2, Expr extent2, Expr min3,
         Expr extent3, const std::string &name = "");
    // The region covered by a buffer (its mins and extents).
    explicit RDom(const Buffer<void> &buffer);
    explicit RDom(const InputBuffer<void> &input);

    // Restricts the domain to the points where `predicate` holds (a bool Expr over this RDom's
    // variables, Params, and the pure Vars of the definition that uses it). Several calls
    // combine with &&.
    RDom &where(Expr predicate);

    int dimensions() const;
    RVar operator[](int i) const;
    const std::string &name() const;
    bool defined() const { return c_ != nullptr; }
    operator Expr() const;  // a one-dimensional RDom is its variable
    operator RVar() const;
    const std::shared_ptr<RDomContents> &contents() const { return c_; }

    RVar x, y, z, w;

private:
    void init(const std::vector<Range> &ranges, const std::string &name);
    std::shared_ptr<RDomContents> c_;
};

namespace detail {
// A fresh name with the given prefix, unique within the process.
std::string unique_name(const std::string &prefix);
} // namespace detail

} // namespace tessera
