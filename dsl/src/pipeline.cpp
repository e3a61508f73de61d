#include "tessera/pipeline.h"
#include "tessera/func_graph.h"

#include <algorithm>
#include <atomic>

#include "tessera/interpret.h"

namespace tessera {

const Buffer<void> &Realization::operator[](size_t i) const {
    if (i >= buffers_.size())
        user_error("Realization: output ", i, " does not exist (the pipeline has ", buffers_.size(), " outputs).");
    return buffers_[i];
}

const Buffer<void> &Realization::single() const {
    if (buffers_.size() != 1)
        user_error("Realization: converting a realization of ", buffers_.size(),
                   " outputs to one Buffer; index it with [i] instead.");
    return buffers_[0];
}

Pipeline::Pipeline() : c_(std::make_shared<PipelineContents>()) {}

Pipeline::Pipeline(const Func &output) : Pipeline(std::vector<Func>{output}) {}

Pipeline::Pipeline(const std::vector<Func> &outputs) : c_(std::make_shared<PipelineContents>()) {
    if (outputs.empty()) user_error("Pipeline: a pipeline needs at least one output Func.");
    for (size_t i = 0; i < outputs.size(); ++i)
        for (size_t j = 0; j < i; ++j)
            if (outputs[i].contents() == outputs[j].contents())
                user_error("Pipeline: Func ", outputs[i].name(), " is listed twice as an output.");
    // Handles of their own onto the outputs: a copy of the caller's would share its realize
    // cache (Func::realize), which may hold a Pipeline over these contents: a cycle.
    for (const Func &f : outputs) c_->outputs.emplace_back(f.contents());
}

const std::vector<Func> &Pipeline::outputs() const { return c_->outputs; }

void Pipeline::auto_schedule(bool on) const {
    {
        std::lock_guard<std::mutex> lock(c_->mutex);
        c_->auto_schedule = on;
    }
    detail::bump_definitions_epoch();
}

bool Pipeline::auto_scheduled() const {
    {
        std::lock_guard<std::mutex> lock(c_->mutex);
        if (!c_->auto_schedule) return false;
    }
    for (const auto &f : build_pipeline_graph(outputs()).funcs)
        if (has_schedule_directives(*f)) return false;
    return true;
}

namespace detail {

namespace {
std::atomic<RealizeHook> g_realize_hook{nullptr};
} // namespace

void set_realize_hook(RealizeHook hook) { g_realize_hook = hook; }
RealizeHook realize_hook() { return g_realize_hook; }

namespace {
ScheduleHooks g_schedule_hooks;
std::atomic<uint64_t> g_epoch{0};
} // namespace

void set_schedule_hooks(ScheduleHooks hooks) { g_schedule_hooks = hooks; }
uint64_t definitions_epoch() { return g_epoch.load(); }
void bump_definitions_epoch() { ++g_epoch; }

std::vector<Buffer<void>> allocate_outputs(const Pipeline &p, const std::vector<int> &sizes) {
    if (p.outputs().empty()) user_error("Pipeline::realize: the pipeline has no outputs.");
    std::vector<Buffer<void>> out;
    for (const Func &f : p.outputs()) {
        if (!f.defined())
            user_error("Pipeline::realize: the output Func ", f.name(), " is undefined. Give it a definition first.");
        if (int(sizes.size()) != f.dimensions())
            user_error("Func ", f.name(), " has ", f.dimensions(), " dimensions, but realize was given ", sizes.size(),
                       " sizes. Pass one size per dimension.");
        for (size_t i = 0; i < sizes.size(); ++i)
            if (sizes[i] < 0) user_error("Func ", f.name(), ": realize size ", sizes[i], " of dimension ", i, " is negative.");
        out.emplace_back(f.type(), sizes, f.name());
    }
    return out;
}

void input_too_small(const std::string &name, bool is_input_buffer, int64_t dim, int64_t need_min, int64_t need_max,
                     int64_t have_min, int64_t have_max) {
    user_error(is_input_buffer ? "InputBuffer " : "Buffer ", name, " is too small: dimension ", dim, " needs [", need_min,
               ", ", need_max, "] but the buffer covers [", have_min, ", ", have_max,
               "]. Provide a buffer that covers the region the pipeline reads, or apply a BoundaryConditions function to "
               "the input.");
}

void output_too_small(const std::string &func, int64_t dim, int64_t need_min, int64_t need_max, int64_t have_min,
                      int64_t have_max) {
    user_error("Func ", func, " is an output, and computing it needs dimension ", dim, " over [", need_min, ", ", need_max,
               "] (read by its consumers or its own update definitions), but its output buffer covers [", have_min, ", ",
               have_max, "]. Realize over a larger region or keep the accesses inside it.");
}

void outside_bound(const std::string &func, const std::string &var, int64_t dim, int64_t need_min, int64_t need_max,
                   int64_t bound_min, int64_t bound_max) {
    user_error("Func ", func, " is computed over [", bound_min, ", ", bound_max, "] in dimension ", dim, " (", var,
               ") by its bound(), but the pipeline needs it over [", need_min, ", ", need_max,
               "] (read by its consumers or its own update definitions; for an output, its buffer). Widen the bound, or "
               "realize a region that needs less of ", func, ".");
}

namespace {
// An output whose elements share memory (a zero stride, or strides that interleave) would be
// written by several points in an order no schedule promises. Dimensions sorted by |stride|
// do not overlap when each stride steps past everything the smaller ones span.
void check_no_self_overlap(const Func &f, const Buffer<void> &b) {
    // An empty buffer has no elements to share (a dense one has stride 0 after its empty
    // dimension).
    for (int d = 0; d < b.dimensions(); ++d)
        if (b.extent(d) <= 0) return;
    std::vector<std::pair<int64_t, int>> dims;  // |stride|, dimension
    for (int d = 0; d < b.dimensions(); ++d)
        if (b.extent(d) > 1) dims.emplace_back(b.stride(d) < 0 ? -b.stride(d) : b.stride(d), d);
    std::sort(dims.begin(), dims.end());
    int64_t span = 0;  // elements spanned by the dimensions so far, minus one
    for (auto [stride, d] : dims) {
        if (stride <= span)
            user_error("The output buffer ", b.name(), " of Func ", f.name(), " has stride ", b.stride(d), " in dimension ",
                       d, ", so different coordinates share memory. Pass an output buffer whose elements are distinct "
                       "(e.g. a dense Buffer).");
        span += stride * (b.extent(d) - 1);
    }
}
} // namespace

void check_output_buffers(const Pipeline &p, const std::vector<Buffer<void>> &outputs) {
    if (outputs.size() != p.outputs().size())
        user_error("Pipeline::realize: the pipeline has ", p.outputs().size(), " outputs but ", outputs.size(),
                   " output buffers were given.");
    for (size_t i = 0; i < outputs.size(); ++i) {
        const Func &f = p.outputs()[i];
        if (!f.defined())
            user_error("Pipeline::realize: the output Func ", f.name(), " is undefined. Give it a definition first.");
        const Buffer<void> &b = outputs[i];
        if (!b.defined()) user_error("Pipeline::realize: the output buffer for Func ", f.name(), " is undefined.");
        if (b.type() != f.type())
            user_error("Pipeline::realize: Func ", f.name(), " has type ", f.type(), " but its output buffer ", b.name(),
                       " has type ", b.type(), ".");
        if (b.dimensions() != f.dimensions())
            user_error("Func ", f.name(), " has ", f.dimensions(), " dimensions, but its output buffer ", b.name(),
                       " has ", b.dimensions(), ". Pass a buffer with one dimension per Func dimension.");
        check_no_self_overlap(f, b);
    }
}

} // namespace detail

Realization Pipeline::realize(const std::vector<int> &sizes) const {
    std::vector<Buffer<void>> out = detail::allocate_outputs(*this, sizes);
    realize(out);
    return Realization(std::move(out));
}

void Pipeline::realize(const std::vector<Buffer<void>> &outputs) const {
    detail::check_output_buffers(*this, outputs);
    if (auto hook = detail::realize_hook()) hook(*this, outputs);
    else interpret(*this, outputs);
}

void Pipeline::realize(const Buffer<void> &output) const { realize(std::vector<Buffer<void>>{output}); }

namespace {
void require_scheduler(const char *what) {
    if (!detail::g_schedule_hooks.to_json)
        user_error("Pipeline::", what, " needs Tessera's scheduler: include <tessera/tessera.h> and link Tessera::tessera.");
}
} // namespace

std::string Pipeline::schedule_json() const {
    require_scheduler("schedule_json");
    return detail::g_schedule_hooks.to_json(*this);
}

void Pipeline::set_schedule_json(const std::string &json) const {
    require_scheduler("set_schedule_json");
    detail::g_schedule_hooks.check(*this, json);
    std::lock_guard<std::mutex> lock(c_->mutex);
    c_->schedule_override = json;
}

void Pipeline::clear_schedule_json() const {
    std::lock_guard<std::mutex> lock(c_->mutex);
    c_->schedule_override.clear();
}

} // namespace tessera
