// Pipelines, targets, compilation and the reference interpreter, for Python.
//
//   p = tessera.Pipeline([blur_y])
//   c = p.compile(tessera.Target.host(), threads=2)   # CompileOptions as keywords
//   c.realize(out_array)                               # reads the InputBuffers' bound values
//   c.run({inp: img, scale: 0.5}, [out_array])         # explicit values; safe from many threads
//   c.report()["phase_ms"]                             # compile time by phase
//   ref = tessera.interpret(blur_y, [w, h])            # the oracle of the tests
//
// Compilation and runs release the GIL.
#include "bindings.h"

#include <functional>

#include <tessera/pipeline_text.h>
#include <tessera/runtime/executor.h>

#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace tessera::python {

namespace {

CompileOptions to_options(const nb::kwargs &kwargs) {
    CompileOptions o;
    for (auto [key, value] : kwargs) {
        std::string k = nb::cast<std::string>(key);
        if (k == "threads") o.threads = nb::cast<int>(value);
        else if (k == "fast_math") o.fast_math = nb::cast<bool>(value);
        else if (k == "fusion") o.fusion = nb::cast<std::string>(value);
        else if (k == "tile_sizes") o.tile_sizes = nb::cast<std::vector<int>>(value);
        else if (k == "max_recompute") o.max_recompute = nb::cast<double>(value);
        else if (k == "cache_bytes") o.cache_bytes = nb::cast<int64_t>(value);
        else if (k == "parallel") o.parallel = nb::cast<bool>(value);
        else if (k == "vectorize") o.vectorize = nb::cast<bool>(value);
        else if (k == "specialize_sizes") o.specialize_sizes = nb::cast<std::vector<int>>(value);
        else if (k == "keep_assembly") o.keep_assembly = nb::cast<bool>(value);
        else if (k == "cache") o.cache = nb::cast<bool>(value);
        else if (k == "compile_threads") o.compile_threads = nb::cast<int>(value);
        else if (k == "gpu_unroll_rows") o.gpu_unroll_rows = nb::cast<int>(value);
        else if (k == "gpu_align_warps") o.gpu_align_warps = nb::cast<std::string>(value);
        else if (k == "gpu_stage_inputs") o.gpu_stage_inputs = nb::cast<bool>(value);
        else if (k == "gpu_column_windows") o.gpu_column_windows = nb::cast<bool>(value);
        else
            user_error("compile: unknown option '", k,
                       "'. The options are threads, fast_math, fusion, tile_sizes, max_recompute, cache_bytes, parallel, vectorize, "
                       "specialize_sizes, keep_assembly, cache, compile_threads, gpu_unroll_rows, gpu_align_warps, gpu_stage_inputs and gpu_column_windows (docs/python.md).");
    }
    return o;
}

std::vector<Func> to_outputs(nb::handle outputs) {
    if (nb::isinstance<Func>(outputs)) return {nb::cast<Func>(outputs)};
    std::vector<Func> fs;
    for (nb::handle f : outputs) {
        if (!nb::isinstance<Func>(f))
            user_error("Pipeline: outputs must be Funcs; got ", nb::cast<std::string>(nb::repr(f)), ".");
        fs.push_back(nb::cast<Func>(f));
    }
    return fs;
}

bool is_sizes(nb::handle what) {
    if (!nb::isinstance<nb::list>(what) && !nb::isinstance<nb::tuple>(what)) return false;
    for (nb::handle h : what)
        if (!PyLong_Check(h.ptr())) return false;
    return true;
}

// Output buffers from a Buffer, an array, or a list of them.
std::vector<PyBuffer> to_outputs_buffers(nb::handle what, const char *where) {
    std::vector<PyBuffer> out;
    if (nb::isinstance<nb::list>(what) || nb::isinstance<nb::tuple>(what))
        for (nb::handle h : what) out.push_back(to_buffer(h, true, where));
    else
        out.push_back(to_buffer(what, true, where));
    return out;
}

std::vector<Buffer<void>> handles(const std::vector<PyBuffer> &bs) {
    std::vector<Buffer<void>> out;
    for (const PyBuffer &b : bs) out.push_back(b.buffer);
    return out;
}

// One Buffer for a single-output pipeline, else a list (as Halide's Python bindings return).
nb::object wrap_realization(const std::vector<Buffer<void>> &bs) {
    if (bs.size() == 1) return wrap_buffer(bs[0]);
    nb::list l;
    for (const Buffer<void> &b : bs) l.append(wrap_buffer(b));
    return l;
}

} // namespace

nb::object realize_either(nb::handle what, const char *where,
                          const std::function<Realization(const std::vector<int> &)> &into_new,
                          const std::function<void(const std::vector<Buffer<void>> &)> &into_given) {
    if (is_sizes(what)) {
        std::vector<int> sizes = nb::cast<std::vector<int>>(what);
        Realization r;
        {
            nb::gil_scoped_release release;
            r = into_new(sizes);
        }
        return wrap_realization(r.buffers());
    }
    std::vector<PyBuffer> outs = to_outputs_buffers(what, where);
    std::vector<Buffer<void>> hs = handles(outs);
    {
        nb::gil_scoped_release release;
        into_given(hs);
    }
    return nb::none();
}

namespace {

// Sets a Param's value in Bindings through its typed setter.
template <typename T>
void bind_typed(Bindings &b, const Param<void> &p, Value v) {
    struct View : Param<T> {
        explicit View(std::shared_ptr<ParamContents> c) { this->c_ = std::move(c); }
    };
    T value;
    if constexpr (std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>) value = T(v.f);
    else if constexpr (std::is_floating_point_v<T>) value = T(v.f);
    else if constexpr (std::is_same_v<T, bool>) value = v.u != 0;
    else if constexpr (std::is_signed_v<T>) value = T(v.i);
    else value = T(v.u);
    b.set<T>(View(p.contents()), value);
}

void bind_param(Bindings &b, const Param<void> &p, nb::handle value) {
    Type t = p.type();
    Value v = python_to_scalar(t, value, "Param " + p.name());
    if (t.is_bool()) return bind_typed<bool>(b, p, v);
    if (t == Int(8)) return bind_typed<int8_t>(b, p, v);
    if (t == Int(16)) return bind_typed<int16_t>(b, p, v);
    if (t == Int(32)) return bind_typed<int32_t>(b, p, v);
    if (t == Int(64)) return bind_typed<int64_t>(b, p, v);
    if (t == UInt(8)) return bind_typed<uint8_t>(b, p, v);
    if (t == UInt(16)) return bind_typed<uint16_t>(b, p, v);
    if (t == UInt(32)) return bind_typed<uint32_t>(b, p, v);
    if (t == UInt(64)) return bind_typed<uint64_t>(b, p, v);
    if (t == Float(16)) return bind_typed<float16_t>(b, p, v);
    if (t == BFloat(16)) return bind_typed<bfloat16_t>(b, p, v);
    if (t == Float(32)) return bind_typed<float>(b, p, v);
    if (t == Float(64)) return bind_typed<double>(b, p, v);
    internal_error("Param ", p.name(), " has the unexpected type ", t);
}

nb::dict report_dict(const CompileReport &r) {
    nb::dict d;
    nb::dict phases;
    for (const auto &[phase, ms] : r.phase_ms) phases[phase.c_str()] = ms;
    d["phase_ms"] = phases;
    d["total_ms"] = r.total_ms;
    d["kernels"] = r.kernels;
    d["llvm_instructions"] = r.llvm_instructions;
    d["llvm_optimization_level"] = r.llvm_optimization_level;
    d["llvm_partitions"] = r.llvm_partitions;
    d["llvm_ir"] = r.llvm_ir;
    d["assembly"] = r.assembly;
    d["ptx"] = r.ptx;
    d["cache"] = r.cache;
    return d;
}

Callable compile_pipeline(const Pipeline &p, const Target *target, const nb::kwargs &kwargs) {
    CompileOptions options = to_options(kwargs);
    Target t = target ? *target : Target::host();
    nb::gil_scoped_release release;
    return p.compile(t, options);
}

} // namespace

void define_pipelines(nb::module_ &m) {
    nb::class_<Target>(m, "Target", "Where code runs: Target.host(), Target.cuda(80), Target.cuda(80).emulated().")
        .def_static("host", &Target::host)
        .def_static("cuda", &Target::cuda, nb::arg("sm"))
        .def("emulated", &Target::emulated)
        .def("with_shared_memory_opt_in", &Target::with_shared_memory_opt_in)
        .def_prop_ro("arch", [](const Target &t) { return t.arch == Target::Arch::CUDA ? "cuda" : "host"; })
        .def_prop_ro("sm", [](const Target &t) { return t.sm; })
        .def_prop_ro("emulate", [](const Target &t) { return t.emulate; })
        .def("__repr__", [](const Target &t) {
            if (t.arch == Target::Arch::Host) return std::string("<tessera.Target host>");
            return "<tessera.Target cuda sm_" + std::to_string(t.sm) + (t.emulate ? " emulated" : "") + ">";
        });

    nb::class_<Callable>(m, "Callable", "A compiled pipeline (Pipeline.compile / Func.compile).")
        .def("realize",
             [](const Callable &c, nb::handle what) {
                 return realize_either(what, "Callable.realize", [&](const std::vector<int> &sizes) { return c.realize(sizes); },
                                       [&](const std::vector<Buffer<void>> &outs) { c.realize(outs); });
             },
             nb::arg("sizes_or_outputs"),
             "realize([w, h]) returns new Buffers; realize(out) or realize([out0, out1]) computes into Buffers or "
             "writable arrays.")
        .def("run",
             [](const Callable &c, nb::dict values, nb::handle outputs) {
                 Bindings b;
                 for (auto [key, value] : values) {
                     if (nb::isinstance<InputBuffer<void>>(key)) {
                         const auto &in = nb::cast<InputBuffer<void> &>(key);
                         b.set(in, to_buffer(value, false, ("Callable.run: InputBuffer " + in.name()).c_str()).buffer);
                     } else if (nb::isinstance<Param<void>>(key)) {
                         bind_param(b, nb::cast<Param<void> &>(key), value);
                     } else {
                         user_error("Callable.run: the keys of the values are InputBuffers and Params; got ",
                                    nb::cast<std::string>(nb::repr(key)), ".");
                     }
                 }
                 std::vector<PyBuffer> outs = to_outputs_buffers(outputs, "Callable.run");
                 std::vector<Buffer<void>> hs = handles(outs);
                 nb::gil_scoped_release release;
                 c.run(b, hs);
             },
             nb::arg("values"), nb::arg("outputs"),
             "Runs with explicit values {input_buffer: array, param: number} into the outputs; safe to call from "
             "several threads at once.")
        .def("report", [](const Callable &c) { return report_dict(c.report()); },
             "Compile time by phase (ms), the compile cache's status, and the generated code when compiled with "
             "keep_assembly=True.")
        .def("compiler_ir", [](const Callable &c, const std::string &stage) {
            nb::gil_scoped_release release;
            return c.compiler_ir(stage);
        }, nb::arg("stage"),
             "One stage of the compile as text: pipeline, model, dependences, schedule, loop_nest, llvm_unoptimized, llvm, "
             "asm, ptx (the last four with keep_assembly=True or TESSERA_DUMP set).")
        .def("write_report", [](const Callable &c, const std::string &path) {
            nb::gil_scoped_release release;
            c.write_report(path);
        }, nb::arg("path"), "Writes a self-contained HTML page: the Func graph with its fusion groups, tiles, loop nest, "
                            "compile time by phase and the cache status.");

    nb::class_<Pipeline>(m, "Pipeline", "One or more output Funcs computed together.")
        .def("__init__", [](Pipeline *self, nb::handle outputs) { new (self) Pipeline(to_outputs(outputs)); },
             nb::arg("outputs"))
        .def("outputs", &Pipeline::outputs)
        .def("realize",
             [](const Pipeline &p, nb::handle what) {
                 return realize_either(what, "Pipeline.realize", [&](const std::vector<int> &sizes) { return p.realize(sizes); },
                                       [&](const std::vector<Buffer<void>> &outs) { p.realize(outs); });
             },
             nb::arg("sizes_or_outputs"))
        .def("compile", [](const Pipeline &p, const Target *target, const nb::kwargs &kwargs) {
            return compile_pipeline(p, target, kwargs);
        }, nb::arg("target") = nb::none(), nb::arg("options"))
        .def("schedule_json", [](const Pipeline &p) {
            nb::gil_scoped_release release;
            return p.schedule_json();
        }, "The schedule realize() uses, as JSON (docs/schedule-json.md).")
        .def("set_schedule_json", [](const Pipeline &p, const std::string &json) {
            nb::gil_scoped_release release;
            p.set_schedule_json(json);
        }, nb::arg("json"), "Replaces the automatic schedule; an illegal schedule raises tessera.Error naming the dependence.")
        .def("clear_schedule_json", &Pipeline::clear_schedule_json)
        .def("auto_schedule", &Pipeline::auto_schedule, nb::arg("on"),
             "False: schedule from the Funcs' directives alone, every Func without directives at root; True (the "
             "default): those Funcs are scheduled automatically (docs/dsl.md, \"Scheduling\").")
        .def_prop_ro("auto_scheduled", &Pipeline::auto_scheduled,
                     "Whether the automatic scheduler schedules the whole pipeline (no directive, auto_schedule not off).");

    m.def("compile_counters", [] {
        runtime::CompileCounters c = runtime::compile_counters();
        nb::dict d;
        d["compiles"] = c.compiles;
        d["recompiles"] = c.recompiles;
        d["cache_hits"] = c.cache_hits;
        d["cache_misses"] = c.cache_misses;
        d["cache_stores"] = c.cache_stores;
        d["cache_corrupt"] = c.cache_corrupt;
        d["cache_evictions"] = c.cache_evictions;
        d["cache_refused"] = c.cache_refused;
        return d;
    }, "This process's compile events: compiles, recompiles of a Pipeline compiled before, and the persistent "
       "cache's hits, misses, stores, corrupt entries, evictions and refused directories (docs/cache.md).");
    m.def("pipeline_text", [](nb::handle outputs) { return pipeline_text(Pipeline(to_outputs(outputs))); },
          nb::arg("outputs"), "The pipeline as text: every Func, input and Param it depends on, with every definition.");

    m.def("compile", [](nb::handle outputs, const Target *target, const nb::kwargs &kwargs) {
        return compile_pipeline(Pipeline(to_outputs(outputs)), target, kwargs);
    }, nb::arg("outputs"), nb::arg("target") = nb::none(), nb::arg("options"),
       "compile(func_or_funcs, target=None, **options): Pipeline(outputs).compile(target, **options).");

    m.def("interpret",
          [](nb::handle outputs, nb::handle what) {
              Pipeline p(to_outputs(outputs));
              return realize_either(what, "interpret", [&](const std::vector<int> &sizes) { return interpret(p, sizes); },
                                    [&](const std::vector<Buffer<void>> &outs) { interpret(p, outs); });
          },
          nb::arg("outputs"), nb::arg("sizes_or_outputs"),
          "Runs the reference interpreter (exact, in the declared types): the oracle of the tests.");
}

} // namespace tessera::python
