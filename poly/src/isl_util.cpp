#include "tessera/poly/isl_util.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <mutex>
#include <set>
#include <pthread.h>
#include <thread>

#include <isl/aff.h>
#include <isl/id.h>
#include <isl/mat.h>
#include <isl/schedule.h>
#include <isl/space.h>
#include <isl/union_map.h>
#include <isl/union_set.h>
#include <isl/val.h>

namespace tessera::poly {

IslContext::IslContext() : ctx_(isl_ctx_alloc()) {
    // Errors become C++ exceptions in the bindings; keep isl quiet on stderr.
    isl_options_set_on_error(ctx_, ISL_ON_ERROR_CONTINUE);
}

IslContext::~IslContext() { isl_ctx_free(ctx_); }

namespace {
std::atomic<double> quota_scale{1.0};
} // namespace

void OperationQuota::scale_for_testing(double factor) { quota_scale = factor > 0 ? factor : 1.0; }

OperationQuota::OperationQuota(isl::ctx ctx, long max_operations) : ctx_(ctx.get()) {
    previous_ = isl_ctx_get_max_operations(ctx_);
    isl_ctx_reset_operations(ctx_);
    if (max_operations > 0) max_operations = std::max(1L, long(double(max_operations) * quota_scale.load()));
    isl_ctx_set_max_operations(ctx_, max_operations > 0 ? (unsigned long)max_operations : 0);
}

OperationQuota::~OperationQuota() {
    isl_ctx_set_max_operations(ctx_, previous_);
    isl_ctx_reset_operations(ctx_);
}

namespace {
double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double thread_cpu_ms() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}
} // namespace

ThreadCpuClock::ThreadCpuClock() : start_(thread_cpu_ms()) {}

double ThreadCpuClock::elapsed_ms() const { return thread_cpu_ms() - start_; }

struct CpuDeadline::Watchdog {
    std::mutex mutex;
    std::condition_variable stop_requested;
    bool stop = false;
    std::atomic<bool> fired{false};
    isl_ctx *ctx = nullptr;
    std::thread thread;
};

CpuDeadline::CpuDeadline(isl::ctx ctx, double max_cpu_ms) {
    if (max_cpu_ms <= 0) return;
    clockid_t clock;
    if (pthread_getcpuclockid(pthread_self(), &clock) != 0) return;  // (no deadline where the clock cannot be read)
    auto cpu_ms = [clock] {
        timespec t{};
        clock_gettime(clock, &t);
        return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
    };
    watchdog_ = std::make_unique<Watchdog>();
    Watchdog *w = watchdog_.get();
    w->ctx = ctx.get();
    double end = cpu_ms() + max_cpu_ms;
    w->thread = std::thread([w, end, cpu_ms] {
        std::unique_lock<std::mutex> lock(w->mutex);
        while (!w->stop) {
            if (cpu_ms() >= end) {
                isl_ctx_abort(w->ctx);
                w->fired = true;
                return;
            }
            w->stop_requested.wait_for(lock, std::chrono::milliseconds(5));
        }
    });
}

CpuDeadline::~CpuDeadline() {
    if (!watchdog_) return;
    {
        std::lock_guard<std::mutex> lock(watchdog_->mutex);
        watchdog_->stop = true;
    }
    watchdog_->stop_requested.notify_one();
    watchdog_->thread.join();
    if (watchdog_->fired) isl_ctx_resume(watchdog_->ctx);
}

bool CpuDeadline::expired() const { return watchdog_ && watchdog_->fired; }

Stopwatch::Stopwatch() : last_(now_ms()) {}

double Stopwatch::elapsed_ms() const { return now_ms() - last_; }

double Stopwatch::lap() {
    double t = now_ms(), d = t - last_;
    last_ = t;
    return d;
}

isl::set context_over_parameters(const isl::set &context, isl_space *params) {
    // The kept parameters first (align_params puts those of `params` first, in its order), then
    // all the others projected out in one step: one at a time, each step simplified the whole
    // set again (a model of 23 outputs with 100 parameters: 8 s of its region bounds).
    isl_size kept = isl_space_dim(params, isl_dim_param);
    isl_set *c = isl_set_align_params(context.copy(), isl_space_copy(params));
    isl_size all = isl_set_dim(c, isl_dim_param);
    if (all > kept) c = isl_set_project_out(c, isl_dim_param, unsigned(kept), unsigned(all - kept));
    return isl::manage(isl_set_align_params(c, params));
}

std::vector<isl::set> sets_of(const isl::union_set &u) {
    std::vector<isl::set> v;
    isl_union_set_foreach_set(
        u.get(),
        [](isl_set *s, void *user) {
            static_cast<std::vector<isl::set> *>(user)->push_back(isl::manage(s));
            return isl_stat_ok;
        },
        &v);
    return v;
}

isl::schedule without_statements_empty_in(const isl::schedule &schedule, const isl::set &context) {
    isl::union_set kept = isl::union_set::empty(context.ctx());
    bool dropped = false;
    for (const isl::set &s : sets_of(schedule.get_domain())) {
        if (s.intersect_params(context).is_empty()) dropped = true;
        else kept = kept.unite(isl::union_set(s));
    }
    return dropped ? isl::manage(isl_schedule_intersect_domain(schedule.copy(), kept.release())) : schedule;
}

std::vector<isl::set> pieces_of(const isl::set &s) {
    std::vector<isl::set> v;
    isl_set_foreach_basic_set(
        s.get(),
        [](isl_basic_set *b, void *user) {
            static_cast<std::vector<isl::set> *>(user)->push_back(isl::manage(isl_set_from_basic_set(b)));
            return isl_stat_ok;
        },
        &v);
    return v;
}

std::vector<isl::map> maps_of(const isl::union_map &u) {
    std::vector<isl::map> v;
    isl_union_map_foreach_map(
        u.get(),
        [](isl_map *m, void *user) {
            static_cast<std::vector<isl::map> *>(user)->push_back(isl::manage(m));
            return isl_stat_ok;
        },
        &v);
    return v;
}

namespace {

// `object` with each run of consecutive parameters that `involves` says it does not involve
// removed by `remove` (first, count), from the last parameter down.
template <typename T, typename Dim, typename Involves, typename Remove>
T *drop_unused_param_runs(T *object, Dim dim, Involves involves, Remove remove) {
    if (!object) return object;
    int n = int(dim(object));
    for (int hi = n - 1; hi >= 0 && object;) {
        if (involves(object, hi) != isl_bool_false) {
            --hi;
            continue;
        }
        int lo = hi;
        while (lo > 0 && involves(object, lo - 1) == isl_bool_false) --lo;
        object = remove(object, lo, hi - lo + 1);
        hi = lo - 1;
    }
    return object;
}

} // namespace

isl_multi_aff *step_along(isl_space *space, int dim) {
    isl_multi_aff *next = isl_multi_aff_identity(isl_space_map_from_set(space));
    isl_aff *coordinate = isl_multi_aff_get_at(next, dim);
    return isl_multi_aff_set_at(next, dim, isl_aff_add_constant_si(coordinate, 1));
}

isl_set *drop_unused_params(isl_set *set) {
    return drop_unused_param_runs(
        set, [](isl_set *s) { return isl_set_dim(s, isl_dim_param); },
        [](isl_set *s, int i) { return isl_set_involves_dims(s, isl_dim_param, unsigned(i), 1); },
        [](isl_set *s, int first, int n) { return isl_set_project_out(s, isl_dim_param, unsigned(first), unsigned(n)); });
}

isl_map *drop_unused_params(isl_map *map) {
    return drop_unused_param_runs(
        map, [](isl_map *m) { return isl_map_dim(m, isl_dim_param); },
        [](isl_map *m, int i) { return isl_map_involves_dims(m, isl_dim_param, unsigned(i), 1); },
        [](isl_map *m, int first, int n) { return isl_map_project_out(m, isl_dim_param, unsigned(first), unsigned(n)); });
}

isl_pw_aff *drop_unused_params(isl_pw_aff *pa) {
    return drop_unused_param_runs(
        pa, [](isl_pw_aff *p) { return isl_pw_aff_dim(p, isl_dim_param); },
        [](isl_pw_aff *p, int i) { return isl_pw_aff_involves_dims(p, isl_dim_param, unsigned(i), 1); },
        [](isl_pw_aff *p, int first, int n) { return isl_pw_aff_drop_dims(p, isl_dim_param, unsigned(first), unsigned(n)); });
}

isl_space *params_in_order_of(const isl::space &order, const std::vector<isl::space> &involved) {
    std::set<isl_id *> used;
    for (const isl::space &space : involved) {
        isl_space *sp = space.get();
        isl_size n = isl_space_dim(sp, isl_dim_param);
        for (isl_size i = 0; i < n; ++i) {
            isl_id *id = isl_space_get_dim_id(sp, isl_dim_param, unsigned(i));
            used.insert(id);  // (isl's ids are unique per name and user pointer: compared by address)
            isl_id_free(id);
        }
    }
    isl_space *params = isl_space_params(order.copy());
    // Dropped from the last to the first, each run of unused parameters at once.
    for (isl_size i = isl_space_dim(params, isl_dim_param); i > 0;) {
        isl_size end = i;
        for (; i > 0; --i) {
            isl_id *id = isl_space_get_dim_id(params, isl_dim_param, unsigned(i - 1));
            bool kept = used.count(id) > 0;
            isl_id_free(id);
            if (kept) break;
        }
        if (i < end) params = isl_space_drop_dims(params, isl_dim_param, unsigned(i), unsigned(end - i));
        if (i > 0) --i;
    }
    return params;
}

std::string isl_name(const std::string &name) {
    std::string s;
    for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "_" + s;
    return s;
}

namespace {
// An id of context `to` with the name and user pointer of `id` (taken).
isl_id *id_in(isl_ctx *to, isl_id *id) {
    isl_id *r = isl_id_alloc(to, isl_id_get_name(id), isl_id_get_user(id));
    isl_id_free(id);
    return r;
}

// `sp` (kept) in context `to`: its parameters, tuples and dimensions with their ids. Null for a
// space with nested tuples, which copied_to leaves to isl's text.
isl_space *space_in(isl_ctx *to, isl_space *sp) {
    if (isl_space_is_wrapping(sp) == isl_bool_true || isl_space_domain_is_wrapping(sp) == isl_bool_true ||
        isl_space_range_is_wrapping(sp) == isl_bool_true)
        return nullptr;
    bool is_set = isl_space_is_set(sp) == isl_bool_true;
    isl_size params = isl_space_dim(sp, isl_dim_param), in = isl_space_dim(sp, isl_dim_in),
             out = isl_space_dim(sp, isl_dim_out);
    isl_space *r = is_set ? isl_space_set_alloc(to, unsigned(params), unsigned(out))
                          : isl_space_alloc(to, unsigned(params), unsigned(in), unsigned(out));
    auto copy_dims = [&](isl_dim_type type, isl_size n) {
        for (int i = 0; i < n; ++i)
            if (isl_space_has_dim_id(sp, type, unsigned(i)) == isl_bool_true)
                r = isl_space_set_dim_id(r, type, unsigned(i), id_in(to, isl_space_get_dim_id(sp, type, unsigned(i))));
    };
    copy_dims(isl_dim_param, params);
    copy_dims(isl_dim_in, in);
    copy_dims(isl_dim_out, out);
    for (isl_dim_type type : {isl_dim_in, isl_dim_out})
        if (!(is_set && type == isl_dim_in) && isl_space_has_tuple_id(sp, type) == isl_bool_true)
            r = isl_space_set_tuple_id(r, type, id_in(to, isl_space_get_tuple_id(sp, type)));
    return r;
}

// `m` (taken) in context `to`, element by element.
isl_mat *mat_in(isl_ctx *to, isl_mat *m) {
    isl_size rows = isl_mat_rows(m), cols = isl_mat_cols(m);
    isl_mat *r = isl_mat_alloc(to, unsigned(rows), unsigned(cols));
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) {
            isl_val *v = isl_mat_get_element_val(m, i, j);
            isl_val *w;
            if (isl_val_cmp_si(v, LONG_MAX) < 0 && isl_val_cmp_si(v, LONG_MIN) > 0) {
                w = isl_val_int_from_si(to, isl_val_get_num_si(v));
            } else {
                char *text = isl_val_to_str(v);
                w = isl_val_read_from_str(to, text);
                free(text);
            }
            isl_val_free(v);
            r = isl_mat_set_element_val(r, i, j, w);
        }
    isl_mat_free(m);
    return r;
}

// `m` (kept) in context `to`, basic map by basic map from their constraints (existentially
// quantified variables stay so); null where space_in is.
isl_map *map_in(isl_ctx *to, isl_map *m) {
    isl_space *sp = isl_map_get_space(m);
    isl_space *target = space_in(to, sp);
    isl_space_free(sp);
    if (!target) return nullptr;
    struct Copy {
        isl_ctx *to;
        isl_space *space;
        isl_map *result;
    } copy{to, target, isl_map_empty(isl_space_copy(target))};
    isl_map_foreach_basic_map(
        m,
        [](isl_basic_map *b, void *user) {
            Copy &c = *static_cast<Copy *>(user);
            isl_mat *eq = isl_basic_map_equalities_matrix(b, isl_dim_param, isl_dim_in, isl_dim_out, isl_dim_div, isl_dim_cst);
            isl_mat *ineq = isl_basic_map_inequalities_matrix(b, isl_dim_param, isl_dim_in, isl_dim_out, isl_dim_div, isl_dim_cst);
            isl_basic_map_free(b);
            isl_basic_map *copied = isl_basic_map_from_constraint_matrices(isl_space_copy(c.space), mat_in(c.to, eq), mat_in(c.to, ineq),
                                                                           isl_dim_param, isl_dim_in, isl_dim_out, isl_dim_div, isl_dim_cst);
            c.result = isl_map_union(c.result, isl_map_from_basic_map(copied));
            return isl_stat_ok;
        },
        &copy);
    isl_space_free(target);
    return copy.result;
}
} // namespace

isl::union_map copied_to(isl::ctx to, const isl::union_map &u) {
    struct Copy {
        isl_ctx *to;
        isl_union_map *result;
        bool complete;
    } copy{to.get(), isl_union_map_empty_ctx(to.get()), true};
    isl_union_map_foreach_map(
        u.get(),
        [](isl_map *m, void *user) {
            Copy &c = *static_cast<Copy *>(user);
            isl_map *copied = map_in(c.to, m);
            isl_map_free(m);
            if (!copied) {
                c.complete = false;
                return isl_stat_error;
            }
            c.result = isl_union_map_add_map(c.result, copied);
            return isl_stat_ok;
        },
        &copy);
    if (copy.complete) return isl::manage(copy.result);
    isl_union_map_free(copy.result);
    char *text = isl_union_map_to_str(u.get());
    isl::union_map r(to, text);
    free(text);
    return r;
}

isl::union_set copied_to(isl::ctx to, const isl::union_set &u) {
    return copied_to(to, isl::manage(isl_union_map_from_range(u.copy()))).range();
}

isl::set copied_to(isl::ctx to, const isl::set &s) {
    // (A set of parameter values goes as a set of no dimensions, and comes back one.)
    bool params = isl_set_is_params(s.get()) == isl_bool_true;
    isl_map *as_map = isl_map_from_range(params ? isl_set_from_params(s.copy()) : s.copy());
    isl_map *copied = map_in(to.get(), as_map);
    isl_map_free(as_map);
    if (copied) return isl::manage(params ? isl_set_params(isl_map_range(copied)) : isl_map_range(copied));
    char *text = isl_set_to_str(s.get());
    isl::set r(to, text);
    free(text);
    return r;
}

} // namespace tessera::poly
