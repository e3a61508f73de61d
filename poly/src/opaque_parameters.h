// Private to poly's model builder: integer values of the Params alone that are not affine in
// them become parameters of their own.
//
// A value such as cast<int>(cast<float16_t>(p)) or p * q is one number per run, but isl cannot
// express it over the parameters, so an index through it used to be bounded by its type or its
// clamps. As a Region parameter whose run-time value the entry computes, it is a plain isl
// parameter: an index through it is exact, as the interpreter's bounds of it are. Fuzzer seed
// 2479879 read b0(3, clamp(cast<int>(cast<float16_t>(p0)), -2, 5)) with p0 = 6; the compiled code
// asked b0 to cover rows -2 to 5 where the interpreter read row 5, and rejected the buffer.
//
//   rewrite(b0(3, clamp(cast<int>(cast<float16_t>($p_p0)), -2, 5)))
//     = b0(3, clamp($pv_0, -2, 5))      with $pv_0 = int64(cast<int>(cast<float16_t>($p_p0)))
#pragma once

#include <functional>
#include <map>
#include <string>

#include "tessera/poly/affine.h"
#include "tessera/poly/model.h"

namespace tessera::poly {

class OpaqueParameters {
public:
    // Makes a Region parameter of `value` (Int(64), over earlier parameters) and returns its Var.
    using MakeParameter = std::function<Expr(const Expr &value)>;

    // `e` (lowered: Params are their parameters' Vars) with every maximal integer subexpression
    // of the parameters alone that fits int32 and is not affine over `params` replaced by a
    // parameter; equal values (by their text) share one.
    Expr rewrite(const Expr &e, const Model &m, const AffineSpace &params, const MakeParameter &make);

    size_t count() const { return known_.size(); }

private:
    std::map<std::string, Expr> known_;  // by the value's text
};

} // namespace tessera::poly
