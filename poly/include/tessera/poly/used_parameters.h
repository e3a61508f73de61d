// A part of a schedule tree rebuilt over only the parameters it involves, for isl's AST
// generator.
//
// Every set of the model lives in one parameter space: the outputs' and inputs' bounds, the
// Params, and two Region parameters per dimension of every Func whose region is not affine. A
// pipeline of 9 Funcs has some 70 of them, and every constraint isl handles while it generates
// the AST carries a coefficient for each, although a group's loops involve a handful. isl
// does not drop unused parameters from a schedule, so this rebuilds one group's subtree with
// them projected out (fuzzer seed 30457: one group's AST 1.97 s with 73 parameters, 0.60 s
// with the 8 it uses; the AST is the same).
//
// Example: a schedule whose domain is
//   [N, M, rg_lo, rg_hi] -> { S_f[x] : rg_lo <= x <= rg_hi; S_g[y] : 0 <= y < N }
// under a sequence (filter S_f, filter S_g). Group 0 (the S_f filter) becomes
//   [rg_lo, rg_hi] -> { S_f[x] : rg_lo <= x <= rg_hi }   with S_f's bands, marks and options,
// and a context [N, M, rg_lo, rg_hi] -> { : N > 0 and rg_lo <= rg_hi } becomes
//   [rg_lo, rg_hi] -> { : rg_lo <= rg_hi }   (the other parameters projected out: the AST is
// valid under a weaker context, at worst with a guard more).
#pragma once

#include <isl/cpp.h>

#include <optional>
#include <string>
#include <vector>

namespace tessera::poly {

struct ScheduleOverUsedParameters {
    isl::schedule schedule;  // the domain, then the rebuilt subtree
    isl::set context;        // the context with every other parameter projected out
};

// The parts of `schedule` whose ASTs can be generated one by one: the children of its
// top-level sequence (the program's groups), or the whole tree when it has none; a group that
// is a sequence below fold marks (a ring's first planes, then its time loop), each child of
// that sequence below copies of the marks. Each is rebuilt over the parameters it involves. Failure (nullopt, `why` says so) when the tree holds
// a node this does not rebuild (extension, expansion, context or guard nodes, which imported
// schedules may hold): the caller generates the whole schedule as it is.
std::optional<std::vector<ScheduleOverUsedParameters>> schedule_parts_over_used_parameters(
    const isl::schedule &schedule, const isl::set &context, std::string &why);

} // namespace tessera::poly
