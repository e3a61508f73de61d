// Small helpers around isl: the owned context, operation quotas, and names isl can parse.
#pragma once

#include <isl/cpp.h>
#include <isl/ctx.h>
#include <isl/options.h>

#include <memory>
#include <string>
#include <vector>

namespace tessera::poly {

// Owns an isl_ctx. isl::ctx does not free its context; this does, last, so declare it before
// every isl object that uses it.
class IslContext {
public:
    IslContext();
    ~IslContext();
    IslContext(const IslContext &) = delete;
    IslContext &operator=(const IslContext &) = delete;
    isl::ctx ctx() const { return isl::ctx(ctx_); }
    isl_ctx *get() const { return ctx_; }

private:
    isl_ctx *ctx_;
};

// Limits the isl operations of the enclosed analysis; over the limit isl throws
// isl::exception_quota, which callers turn into a documented fallback.
class OperationQuota {
public:
    // Multiplies every quota given from now on, in every thread, by `factor` (1: as given). For
    // stress tests (tessera-fuzz --quota-scale): tiny quotas send every analysis down its
    // fallback, where isl is stopped partway, which must neither crash nor change a result.
    static void scale_for_testing(double factor);

public:
    OperationQuota(isl::ctx ctx, long max_operations);
    ~OperationQuota();

private:
    isl_ctx *ctx_;
    unsigned long previous_;
};

// Aborts the isl computation running on `ctx` (isl_ctx_abort, as a signal handler may) once the
// constructing thread has spent `max_cpu_ms` of CPU time since construction; 0: never. A watchdog
// thread reads that thread's CPU clock every few milliseconds. An operation quota alone does not
// bound time: the cost of one isl operation grows with its coefficients, and a fuzzer pipeline
// (seed 2497874: mirrored boundary conditions and guarded updates) spent 17 s in an AST
// generation that stayed within its million operations, about 17 us each. The destructor stops
// the watchdog and clears the abort, so that the context serves the caller's fallback.
class CpuDeadline {
public:
    CpuDeadline(isl::ctx ctx, double max_cpu_ms);
    ~CpuDeadline();
    CpuDeadline(const CpuDeadline &) = delete;
    CpuDeadline &operator=(const CpuDeadline &) = delete;
    bool expired() const;  // whether the watchdog aborted the computation

private:
    struct Watchdog;
    std::unique_ptr<Watchdog> watchdog_;
};

// Runs `f` under an operation quota of `max_operations`; returns false when isl ran out of it
// (whether the bindings threw exception_quota, or a C call returned NULL and whatever `f` threw
// about that), with the context's error cleared so that the caller can fall back. Other errors
// propagate.
// A C call that runs out of the quota may return null without anything throwing (callers that
// test for null and give up): `f` finishing with the quota error recorded counts as out of
// quota too, so that no stale error is left for a later call to misread.
template <typename F>
bool within_quota(isl::ctx ctx, long max_operations, F &&f) {
    OperationQuota quota(ctx, max_operations);
    isl_ctx_reset_error(ctx.get());
    try {
        f();
        if (isl_ctx_last_error(ctx.get()) != isl_error_quota) return true;
    } catch (const isl::exception_quota &) {
    } catch (...) {
        if (isl_ctx_last_error(ctx.get()) != isl_error_quota) throw;
    }
    isl_ctx_reset_error(ctx.get());
    return false;
}

// As within_quota, and also false when `f` ran past `max_cpu_ms` of this thread's CPU time
// (CpuDeadline; 0: no limit), isl's computation aborted.
template <typename F>
bool within_quota(isl::ctx ctx, long max_operations, double max_cpu_ms, F &&f) {
    CpuDeadline deadline(ctx, max_cpu_ms);
    bool finished = false;
    try {
        finished = within_quota(ctx, max_operations, f);
    } catch (...) {
        if (!deadline.expired()) throw;
    }
    if (deadline.expired()) {
        isl_ctx_reset_error(ctx.get());
        return false;
    }
    return finished;
}

// Measures wall-clock milliseconds since construction (or the last lap).
class Stopwatch {
public:
    Stopwatch();
    double lap();  // milliseconds since the previous lap
    double elapsed_ms() const;  // milliseconds since the previous lap, without starting a new one

private:
    double last_;
};

// Measures the CPU time of the calling thread since construction, in milliseconds: a budget
// on computation that does not run out sooner on a loaded machine (a wall-clock budget made the
// same pipeline fail to compile while other processes ran).
class ThreadCpuClock {
public:
    ThreadCpuClock();
    double elapsed_ms() const;

private:
    double start_;
};

// The sets of a union set and the maps of a union map, as vectors.
std::vector<isl::set> sets_of(const isl::union_set &u);
std::vector<isl::map> maps_of(const isl::union_map &u);
// The disjuncts (basic sets) of a set, each as a set.
std::vector<isl::set> pieces_of(const isl::set &s);

// `schedule` restricted to the statements that have an instance for some parameter values in
// `context`; the schedule itself when every one has. The AST of a schedule under a context
// where a statement is empty still discovers so in every piece of its loops: e.g. under
// `[n] -> { : n <= 0 }`, `{ A[i] : 0 <= i < 8; B[i] : 0 <= i < n }` keeps only A.
isl::schedule without_statements_empty_in(const isl::schedule &schedule, const isl::set &context);

// `context` (a set of parameter values) with every parameter that `params` lacks projected
// out, aligned to `params`: it keeps every constraint the context implies on the parameters
// left. Takes `params`.
isl::set context_over_parameters(const isl::set &context, isl_space *params);

// x -> x + e_dim on the set space `space` (takes it): an instance to the next along dimension
// `dim`.
isl_multi_aff *step_along(isl_space *space, int dim);

// isl's drop_unused_params (takes its argument): the parameters no constraint involves projected
// out. isl 0.25 projects them out one at a time, each projection simplifying every piece again;
// with dozens of Region parameters of which a set uses a few, that was a fifth of the pyramid
// apps' model (local_laplacian: 0.6 s). These project out each run of consecutive unused
// parameters at once: the same set.
isl_set *drop_unused_params(isl_set *set);
isl_map *drop_unused_params(isl_map *map);
isl_pw_aff *drop_unused_params(isl_pw_aff *pa);

// The parameters of `order` (a model's parameter space) that some space of `involved` has, in
// `order`'s order: objects whose unused parameters were dropped, aligned to it, combine over a
// few parameters as their counterparts over all of them would, in the same order (isl's binary
// operations align differing parameters in the order of their first operand, then the
// second's, which reorders the conditions of the expressions built from the result).
//
// Example: order [a, b, c, d], involved [c] and [d, a] -> [a, c, d].
isl_space *params_in_order_of(const isl::space &order, const std::vector<isl::space> &involved);

// `x` rebuilt in the isl context `to`, from its spaces and constraints (existentially quantified
// variables stay so): the same set, for another thread to work on in a context of its own. isl's
// text would do as well, but its parser takes 15 ms for heat-3d's 2.7 KB of reads (17
// parameters), this 0.7 ms. Reads x in its own context: the caller must be the one thread
// using both contexts meanwhile. (Spaces with nested tuples go through isl's text.)
isl::union_map copied_to(isl::ctx to, const isl::union_map &x);
isl::union_set copied_to(isl::ctx to, const isl::union_set &x);
isl::set copied_to(isl::ctx to, const isl::set &x);

// A name isl's parser accepts: letters, digits and underscores, not starting with a digit.
std::string isl_name(const std::string &name);

} // namespace tessera::poly
