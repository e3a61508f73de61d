#include "tessera/structural_equality.h"

#include <cstring>
#include <functional>
#include <set>
#include <utility>

namespace tessera::ir {
namespace {

bool same_node(const ExprNode &a, const ExprNode &b) {
    return a.op == b.op && a.type == b.type && a.int_value == b.int_value && a.uint_value == b.uint_value &&
           std::memcmp(&a.float_value, &b.float_value, sizeof(double)) == 0 && a.name == b.name && a.index == b.index &&
           a.which == b.which && a.func_ptr == b.func_ptr && a.input == b.input && a.param == b.param && a.rdom == b.rdom &&
           a.args.size() == b.args.size();
}

size_t combine(size_t seed, size_t v) { return seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2)); }

} // namespace

namespace {

// `equal` holds the pairs of nodes found equal so far: two DAGs built apart, each sharing its
// subexpressions (`e = select(c, e * 3, e - 1)` ten times), compare in time linear in their
// distinct nodes rather than in their size as trees.
bool equal_nodes(const Expr &a, const Expr &b, std::set<std::pair<const ExprNode *, const ExprNode *>> &equal) {
    if (a.same_as(b)) return true;
    if (!a.defined() || !b.defined() || !same_node(*a, *b)) return false;
    if (equal.count({a.get(), b.get()})) return true;
    for (size_t i = 0; i < a->args.size(); ++i)
        if (!equal_nodes(a->args[i], b->args[i], equal)) return false;
    equal.insert({a.get(), b.get()});
    return true;
}

} // namespace

bool structurally_equal(const Expr &a, const Expr &b) {
    std::set<std::pair<const ExprNode *, const ExprNode *>> equal;
    return equal_nodes(a, b, equal);
}

size_t ExprSet::hash(const Expr &e) {
    if (!e.defined()) return 0;
    auto it = hashes_.find(e.get());
    if (it != hashes_.end()) return it->second;
    const ExprNode &n = *e;
    size_t h = combine(size_t(n.op), size_t(n.type.code) * 131 + size_t(n.type.bits));
    h = combine(h, std::hash<int64_t>()(n.int_value));
    h = combine(h, std::hash<uint64_t>()(n.uint_value));
    uint64_t bits;
    std::memcpy(&bits, &n.float_value, sizeof bits);
    h = combine(h, std::hash<uint64_t>()(bits));
    h = combine(h, std::hash<std::string>()(n.name));
    h = combine(h, size_t(n.index) * 7 + size_t(n.which));
    h = combine(h, std::hash<const void *>()(n.func_ptr));
    for (const Expr &a : n.args) h = combine(h, hash(a));
    hashes_.emplace(e.get(), h);
    return h;
}

bool ExprSet::insert(const Expr &e) {
    std::vector<Expr> &bucket = buckets_[hash(e)];
    for (const Expr &b : bucket)
        if (structurally_equal(b, e)) return false;
    bucket.push_back(e);
    return true;
}

} // namespace tessera::ir
