#include "tessera/callable.h"

#include <atomic>

#include "tessera/pipeline.h"

namespace tessera {

Bindings &Bindings::set(const InputBuffer<void> &input, const Buffer<void> &buffer) {
    if (!buffer.defined()) user_error("Bindings: the buffer for InputBuffer ", input.name(), " is undefined.");
    if (buffer.type() != input.type())
        user_error("Bindings: InputBuffer ", input.name(), " has type ", input.type(), " but is given Buffer ",
                   buffer.name(), " of type ", buffer.type(), ".");
    if (buffer.dimensions() != input.dimensions())
        user_error("Bindings: InputBuffer ", input.name(), " has ", input.dimensions(), " dimensions but is given Buffer ",
                   buffer.name(), " with ", buffer.dimensions(), ".");
    inputs_[input.contents().get()] = buffer;
    return *this;
}

void Callable::check() const {
    if (!impl_) user_error("Callable: this Callable is empty; get one from Pipeline::compile().");
}

void Callable::realize(const std::vector<Buffer<void>> &outputs) const {
    check();
    detail::check_output_buffers(impl_->pipeline(), outputs);
    impl_->run(nullptr, outputs);
}

Realization Callable::realize(const std::vector<int> &sizes) const {
    check();
    std::vector<Buffer<void>> out = detail::allocate_outputs(impl_->pipeline(), sizes);
    realize(out);
    return Realization(std::move(out));
}

Realization Callable::realize(std::initializer_list<int> sizes) const { return realize(std::vector<int>(sizes)); }

void Callable::run(const Bindings &bindings, const std::vector<Buffer<void>> &outputs) const {
    check();
    detail::check_output_buffers(impl_->pipeline(), outputs);
    impl_->run(&bindings, outputs);
}

const CompileReport &Callable::report() const {
    check();
    return impl_->report();
}

std::string Callable::compiler_ir(const std::string &stage) const {
    check();
    return impl_->compiler_ir(stage);
}

void Callable::write_report(const std::string &path) const {
    check();
    impl_->write_report(path);
}

namespace detail {
namespace {
std::atomic<CompileHook> g_compile_hook{nullptr};
}
void set_compile_hook(CompileHook hook) { g_compile_hook = hook; }
CompileHook compile_hook() { return g_compile_hook; }
} // namespace detail

Callable Pipeline::compile(const Target &target, const CompileOptions &options) const {
    auto hook = detail::compile_hook();
    if (!hook)
        user_error("Pipeline::compile needs Tessera's code generator: include <tessera/tessera.h> and link Tessera::tessera.");
    return Callable(hook(*this, target, options));
}

} // namespace tessera
