// The extension module tessera._tessera. The package `tessera` (frontends/python/tessera)
// re-exports it; docs/python.md describes the Python DSL.
//
// Errors: tessera::UserError becomes tessera.UserError and tessera::InternalError becomes
// tessera.InternalError, both subclasses of tessera.Error (a RuntimeError), with Tessera's
// message, which names the Func, buffer or option and says what to do.
#include "bindings.h"

namespace tessera::python {
namespace {

void define_errors(nb::module_ &m) {
    // nanobind tries the most recently registered translator first: registering the general
    // Error first makes UserError and InternalError match before it.
    static nb::exception<Error> error(m, "Error", PyExc_RuntimeError);
    static nb::exception<UserError> user(m, "UserError", error);
    static nb::exception<InternalError> internal(m, "InternalError", error);
}

} // namespace
} // namespace tessera::python

NB_MODULE(_tessera, m) {
    using namespace tessera::python;
    m.doc() = "Tessera: a polyhedral loop optimizer with a Halide-like DSL (C++ core).";
    define_errors(m);
    define_expressions(m);
    define_buffers(m);
    define_funcs(m);
    define_pipelines(m);
    define_ops(m);
    define_pooled_outputs(m);
}
