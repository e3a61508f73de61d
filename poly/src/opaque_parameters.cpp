// Integer values of the Params alone as parameters of their own (opaque_parameters.h).
#include "opaque_parameters.h"

namespace tessera::poly {

Expr OpaqueParameters::rewrite(const Expr &e, const Model &m, const AffineSpace &params, const MakeParameter &make) {
    auto parameters_only = [&](const Expr &x) {
        bool only = true;
        ir::visit(x, [&](const Expr &n) {
            if (n->op == Op::Var) only = only && m.param_by_var(n->name) != nullptr;
            else if (n->op == Op::RVar || n->op == Op::FuncCall || n->op == Op::InputCall) only = false;
            return only;
        });
        return only;
    };
    // Bottom-up: an operand replaced first leaves an affine expression above it alone.
    return ir::transform(e, [&](const Expr &n) -> Expr {
        Type t = n.type();
        bool fits_int32 = (t.is_int() && t.bits <= 32) || (t.is_uint() && !t.is_bool() && t.bits <= 16);
        if (!fits_int32 || n->op == Op::Var || ir::as_const_int(n) || !parameters_only(n) || to_pw_aff(n, params)) return n;
        std::string text = to_string(n);
        auto known = known_.find(text);
        if (known == known_.end()) known = known_.emplace(text, make(ir::make_cast(Int(64), n))).first;
        return t == Int(32) ? known->second : ir::make_cast(t, known->second);
    });
}

} // namespace tessera::poly
