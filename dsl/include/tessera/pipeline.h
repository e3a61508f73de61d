// Pipeline: one or more output Funcs computed together.
#pragma once

#include <memory>
#include <initializer_list>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/buffer.h"
#include "tessera/callable.h"
#include "tessera/func.h"

namespace tessera {

// The buffers produced by realizing a pipeline, one per output.
class Realization {
public:
    Realization() = default;
    explicit Realization(std::vector<Buffer<void>> buffers) : buffers_(std::move(buffers)) {}
    size_t size() const { return buffers_.size(); }
    const Buffer<void> &operator[](size_t i) const;
    std::vector<Buffer<void>> &buffers() { return buffers_; }
    const std::vector<Buffer<void>> &buffers() const { return buffers_; }
    // A single-output realization converts to its buffer.
    template <typename T>
    operator Buffer<T>() const {
        return Buffer<T>(single());
    }

private:
    const Buffer<void> &single() const;
    std::vector<Buffer<void>> buffers_;
};

struct PipelineContents {
    std::vector<Func> outputs;
    // An imported schedule (JSON) that replaces the automatic one, or empty.
    std::string schedule_override;
    // Pipeline::auto_schedule(false): Funcs without directives (stage.h) are computed at root in
    // Halide's default order instead of by the automatic scheduler.
    bool auto_schedule = true;
    // State owned by the layer that executes the pipeline (e.g. compiled code), created on
    // first use and guarded by `mutex`.
    std::mutex mutex;
    std::shared_ptr<void> executor_state;
};

class Pipeline {
public:
    Pipeline();
    Pipeline(const Func &output);
    Pipeline(const std::vector<Func> &outputs);

    const std::vector<Func> &outputs() const;

    // Computes every output over [0, sizes[i]) in each dimension.
    Realization realize(const std::vector<int> &sizes) const;
    Realization realize(std::initializer_list<int> sizes) const { return realize(std::vector<int>(sizes)); }
    // Computes every output into the given buffers (one per output, over their regions).
    void realize(const std::vector<Buffer<void>> &outputs) const;
    void realize(const Buffer<void> &output) const;

    // Compiles the pipeline for `target` (docs/architecture.md, "codegen"). One compilation serves
    // every size unless options.specialize_sizes says otherwise.
    Callable compile(const Target &target = Target::host(), const CompileOptions &options = {}) const;

    // The schedule realize() uses, as JSON (docs/schedule-json.md): groups, schedule tree,
    // storage, footprints, loop nest.
    std::string schedule_json() const;
    // Replaces the automatic schedule by an (edited) JSON schedule. Throws a UserError naming
    // the violated dependence (both statements and the distance) if it is illegal.
    void set_schedule_json(const std::string &json) const;
    // Returns to the automatic schedule.
    void clear_schedule_json() const;

    // false: schedule the pipeline from its directives (stage.h) alone, in place of the
    // automatic scheduler, even where no Func has one: every Func at root, in definition
    // order, each stage in Halide's default loop order unless its directives say otherwise.
    // true (the default): Funcs with directives follow them, the others are scheduled
    // automatically.
    void auto_schedule(bool on) const;
    // Whether the pipeline is scheduled entirely automatically: auto_schedule(false) was not
    // called and no Func it computes has a directive.
    bool auto_scheduled() const;

    const std::shared_ptr<PipelineContents> &contents() const { return c_; }

private:
    std::shared_ptr<PipelineContents> c_;
};

namespace detail {
// Allocates one output buffer per output Func over [0, sizes[i]); checks arity and definitions.
std::vector<Buffer<void>> allocate_outputs(const Pipeline &p, const std::vector<int> &sizes);
// Checks the output buffers given to realize: one per output, each of its Func's type and
// dimensionality.
void check_output_buffers(const Pipeline &p, const std::vector<Buffer<void>> &outputs);
// The user errors of a buffer too small for what the pipeline reads or writes, worded alike by
// every way of running a pipeline (interpreter, AST interpreter, compiled code).
[[noreturn]] void input_too_small(const std::string &name, bool is_input_buffer, int64_t dim, int64_t need_min,
                                  int64_t need_max, int64_t have_min, int64_t have_max);
[[noreturn]] void output_too_small(const std::string &func, int64_t dim, int64_t need_min, int64_t need_max,
                                   int64_t have_min, int64_t have_max);
// The user error of a Func needed outside its Func::bound (`var`: the bound's Var).
[[noreturn]] void outside_bound(const std::string &func, const std::string &var, int64_t dim, int64_t need_min,
                                int64_t need_max, int64_t bound_min, int64_t bound_max);

// How realize() executes a pipeline. Until a code generator installs itself, realize() runs
// the reference interpreter.
using RealizeHook = void (*)(const Pipeline &, const std::vector<Buffer<void>> &);
void set_realize_hook(RealizeHook hook);
RealizeHook realize_hook();

// How schedules are produced and checked; installed by the runtime layer.
struct ScheduleHooks {
    std::string (*to_json)(const Pipeline &) = nullptr;
    void (*check)(const Pipeline &, const std::string &json) = nullptr;
};
void set_schedule_hooks(ScheduleHooks hooks);

// Incremented by every new Func definition, so caches keyed on a pipeline's structure can tell
// when it changed.
uint64_t definitions_epoch();
void bump_definitions_epoch();
} // namespace detail

} // namespace tessera
