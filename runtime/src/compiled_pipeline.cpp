#include "tessera/runtime/compiled_pipeline.h"

#include "tessera/runtime/buffer_pool.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <tessera/codegen/abi.h>
#include <tessera/codegen/arguments.h>
#include <tessera/codegen/cpu_target.h>
#include <tessera/codegen/parallel_compile.h>
#include <tessera/codegen/gpu_target.h>
#include <tessera/poly/gpu_mapping.h>
#include <tessera/target_info.h>
#include <tessera/eval.h>
#include <tessera/pipeline_text.h>
#include <tessera/poly/directive_schedule.h>
#include <tessera/poly/schedule_json.h>
#include <tessera/poly/scheduler.h>

#include "cuda_runtime.h"
#include "compile_options.h"
#include "tessera/runtime/compile_cache.h"
#include "tessera/runtime/compiler_ir.h"
#include "tessera/runtime/html_report.h"
#include "tessera/runtime/gpu_emulator.h"
#include "tessera/runtime/jit.h"
#include "tessera/runtime/log.h"

namespace tessera::runtime {

std::shared_ptr<const poly::Program> program_for(const Pipeline &p, const CompileOptions &o, CompileReport &report) {
    return program_for(p, schedule_options(o), report);
}

std::shared_ptr<const poly::Program> program_for(const Pipeline &p, const poly::ScheduleOptions &so, CompileReport &report) {
    poly::Stopwatch w;
    std::string imported;
    bool automatic = true;  // Funcs without directives scheduled automatically
    {
        std::lock_guard<std::mutex> lock(p.contents()->mutex);
        imported = p.contents()->schedule_override;
        automatic = p.contents()->auto_schedule;
    }
    const bool directives = imported.empty() && !p.auto_scheduled();
    // (The automatic scheduler's model finds its dead instances on a helper thread meanwhile;
    // written and imported schedules need none.)
    std::shared_ptr<const poly::Model> model =
        poly::build_model(p, imported, so.gpu && so.gpu_stage_inputs, imported.empty() && !directives ? so.ast_threads : 1);
    report.phase_ms.emplace_back("model", w.lap());
    std::shared_ptr<const poly::Program> program;
    if (!imported.empty() || directives) {
        poly::Program q = directives ? poly::schedule_from_directives(model, so, automatic)
                                     : poly::schedule_from_json(model, imported);
        // A CPU schedule imported for a GPU target is mapped onto kernels as the automatic
        // one is; one with kernel marks is taken as it is (and checked for legality).
        if (so.gpu && poly::count_kernels(q.schedule) == 0)
            q = poly::program_from_tree(model, poly::map_to_gpu(*model, q.schedule), q.groups);
        program = std::make_shared<const poly::Program>(std::move(q));
        report.phase_ms.emplace_back(directives ? "schedule (directives)" : "schedule (imported)", w.lap());
        return program;
    }
    program = std::make_shared<const poly::Program>(poly::schedule_model(model, so));
    w.lap();
    double ast = 0, schedule = 0;
    for (const auto &[phase, ms] : program->timings) (phase == "storage and AST" ? ast : schedule) += ms;
    report.phase_ms.emplace_back("schedule", schedule);
    report.phase_ms.emplace_back("AST", ast);
    return program;
}

namespace {

std::atomic<int> g_counter{0};

// Values of scalar arguments laid out as their C types.
struct ScalarSlot {
    alignas(8) unsigned char bytes[8] = {};
};

void fill_scalar(ScalarSlot &slot, Type t, Value v) {
    store_scalar(t, slot.bytes, v);
}

tessera_buffer_t descriptor(const BufferImpl &b) {
    tessera_buffer_t d{};
    d.host = b.host;
    d.version = TESSERA_ABI_VERSION;
    d.dimensions = int32_t(b.dims.size());
    for (size_t i = 0; i < b.dims.size() && i < TESSERA_MAX_DIMS; ++i) d.dim[i] = {b.dims[i].min, b.dims[i].extent, b.dims[i].stride};
    return d;
}

bool dense0(const Buffer<void> &b) { return b.dimensions() == 0 || b.stride(0) == 1 || b.extent(0) <= 1; }

class CompiledPipeline : public CallableImpl {
public:
    // Holds a Pipeline of its own over p's outputs: p may cache this object (executor.cpp), and
    // holding p's contents would make a cycle that is never freed.
    // `cuda`: the program's kernels run on a CUDA GPU, its buffers copied to and from it.
    // `emulated`: the program's kernels run in the GPU emulator, which checks every global access
    // against the call's buffers.
    // It needs no program to run (a cache hit has none): its arguments come from the Func graph,
    // and `array_names` (the program's arrays, e.g. "Func blur_x") name them in run-time errors.
    // `program`: the scheduled program, or null (a cache hit: compiler_ir schedules again on
    // request). `kept`: the stages only a compile produces (LLVM IR, assembly, PTX), when kept.
    CompiledPipeline(const Pipeline &p, std::vector<std::string> array_names, std::unique_ptr<JitCode> code,
                     CompileReport report, std::shared_ptr<const poly::Program> program, Target target, CompileOptions options,
                     std::map<std::string, std::string> kept, std::shared_ptr<CudaProgram> cuda = nullptr, bool emulated = false)
        : pipeline_(p.outputs()), graph_(build_pipeline_graph(pipeline_.outputs())), array_names_(std::move(array_names)),
          code_(std::move(code)), report_(std::move(report)), arguments_(codegen::pipeline_arguments(graph_, pipeline_)),
          cuda_(std::move(cuda)), emulated_(emulated), target_(std::move(target)), options_(std::move(options)),
          kept_(std::move(kept)), program_(std::move(program)) {
        // The schedule it was compiled with, for compiler_ir's stages.
        std::string imported;
        {
            std::lock_guard<std::mutex> lock(p.contents()->mutex);
            imported = p.contents()->schedule_override;
        }
        pipeline_.contents()->schedule_override = imported;
    }

    const CompileReport &report() const override { return report_; }
    const Pipeline &pipeline() const override { return pipeline_; }

    std::string compiler_ir(const std::string &stage) const override {
        const auto &stages = compiler_ir_stages();
        if (std::find(stages.begin(), stages.end(), stage) == stages.end()) {
            std::string all;
            for (const auto &x : stages) all += (all.empty() ? "" : ", ") + x;
            user_error("Callable::compiler_ir: there is no stage '", stage, "'. The stages are ", all, ".");
        }
        if (stage == "pipeline") return pipeline_text(pipeline_);
        if (stage == "model" || stage == "dependences" || stage == "schedule" || stage == "loop_nest") {
            std::shared_ptr<const poly::Program> program = scheduled();
            std::lock_guard<std::mutex> lock(program->model->isl_mutex);
            if (stage == "model") return model_text(*program->model);
            if (stage == "dependences") return dependences_text(*program->model);
            if (stage == "schedule") return poly::schedule_to_json(*program);
            return poly::to_string(program->nest);
        }
        auto it = kept_.find(stage);
        if (it != kept_.end()) return it->second;
        if (stage == "ptx" && !cuda_ && !emulated_)
            user_error("Callable::compiler_ir: stage 'ptx' exists for GPU targets (Target::cuda); this pipeline was compiled for the host.");
        if (stage == "asm" && (cuda_ || emulated_))
            user_error("Callable::compiler_ir: stage 'asm' is the host's assembly; a GPU target's kernels are in stage 'ptx'.");
        user_error("Callable::compiler_ir: stage '", stage, "' was not kept. Compile with CompileOptions::keep_assembly = true ",
                   "(or with TESSERA_DUMP set) to keep the LLVM IR and the assembly.");
    }

    void write_report(const std::string &path) const override {
        std::shared_ptr<const poly::Program> program = scheduled();
        std::string page;
        {
            std::lock_guard<std::mutex> lock(program->model->isl_mutex);
            page = html_report(*program, report_, pipeline_text(pipeline_), target_);
        }
        std::ofstream out(path, std::ios::binary);
        out << page;
        if (!out) user_error("Callable::write_report: cannot write ", path, ".");
    }

    void run(const Bindings *bindings, const std::vector<Buffer<void>> &outputs) const override {
        if (!bindings) check_bindings(graph_);
        std::vector<tessera_buffer_t> desc(arguments_.size());
        std::vector<ScalarSlot> scalars(arguments_.size());
        std::vector<void *> argv(arguments_.size());
        std::vector<BufferImpl *> buffer_of(arguments_.size(), nullptr);  // what each descriptor describes
        std::vector<Buffer<void>> keep;                             // dense copies of inputs
        std::vector<std::pair<Buffer<void>, Buffer<void>>> copy_back;  // dense output → user's
        for (size_t i = 0; i < arguments_.size(); ++i) {
            const codegen::Argument &a = arguments_[i];
            switch (a.kind) {
            case codegen::Argument::Kind::Input: {
                Buffer<void> b = bound(a, bindings);
                if (!dense0(b)) {
                    b = b.copy();
                    keep.push_back(b);
                }
                // On the host the current elements must be there; a GPU run copies them to the
                // device only when it has no current copy (run_on_gpu).
                if (!cuda_) b.impl()->host_for_read();
                desc[i] = descriptor(*b.impl());
                buffer_of[i] = b.impl().get();
                argv[i] = &desc[i];
                break;
            }
            case codegen::Argument::Kind::Param: {
                Value v = a.param->value;
                bool have = a.param->is_set;
                if (bindings) {
                    auto it = bindings->params().find(a.param.get());
                    if (it != bindings->params().end()) {
                        v = it->second;
                        have = true;
                    }
                }
                if (!have) user_error("Param ", a.name, " has no value. Call ", a.name, ".set(value) or pass it in Bindings.");
                fill_scalar(scalars[i], a.type, v);
                argv[i] = scalars[i].bytes;
                break;
            }
            case codegen::Argument::Kind::Output: {
                Buffer<void> b = outputs[size_t(a.output)];
                if (!dense0(b)) {
                    Buffer<void> dense = b.copy();
                    copy_back.emplace_back(dense, b);
                    b = dense;
                }
                if (!cuda_) b.impl()->host_for_write();
                desc[i] = descriptor(*b.impl());
                buffer_of[i] = b.impl().get();
                argv[i] = &desc[i];
                break;
            }
            }
        }
        tessera_error_t err{};
        auto fn = reinterpret_cast<int32_t (*)(void **, tessera_error_t *)>(code_->address());
        if (cuda_) {
            run_on_gpu(fn, argv, desc, buffer_of);
        } else if (emulated_) {
            std::vector<std::pair<const void *, int64_t>> spans;
            for (size_t i = 0; i < arguments_.size(); ++i) {
                if (arguments_[i].kind == codegen::Argument::Kind::Param || !desc[i].host) continue;
                auto [lo, hi] = span(desc[i], arguments_[i].type.bytes());
                spans.emplace_back(desc[i].host + lo, hi - lo);
            }
            EmulatedBuffers checked(spans);
            int32_t rc = fn(argv.data(), &err);
            if (rc != TESSERA_OK) report_error(err);
        } else {
            int32_t rc = fn(argv.data(), &err);
            if (rc != TESSERA_OK) report_error(err);
        }
        for (auto &[dense, user] : copy_back) user.copy_from(dense);
    }

private:
    // The bytes a descriptor's elements span: [host + lo, host + hi) (strides may be negative).
    static std::pair<int64_t, int64_t> span(const tessera_buffer_t &d, int64_t element_bytes) {
        int64_t lo = 0, hi = 0;
        for (int32_t k = 0; k < d.dimensions; ++k) {
            if (d.dim[k].extent <= 0) return {0, 0};
            int64_t reach = (d.dim[k].extent - 1) * d.dim[k].stride;
            (reach < 0 ? lo : hi) += reach;
        }
        return {lo * element_bytes, (hi + 1) * element_bytes};
    }

    // Runs the entry with every buffer in the GPU's memory, Halide-style: a buffer keeps its
    // device copy (BufferResidency) between calls, an input is copied to the device only when
    // the host's elements are newer, and outputs stay on the device, newer than the host's
    // elements until something reads them on the host.
    void run_on_gpu(int32_t (*fn)(void **, tessera_error_t *), std::vector<void *> &argv, std::vector<tessera_buffer_t> &desc,
                    const std::vector<BufferImpl *> &buffer_of) const {
        cuda_->prepare();
        for (size_t i = 0; i < arguments_.size(); ++i) {
            const codegen::Argument &a = arguments_[i];
            if (a.kind == codegen::Argument::Kind::Param) continue;
            BufferImpl &b = *buffer_of[i];
            BufferResidency &r = *b.residency;
            auto [lo, hi] = span(desc[i], a.type.bytes());
            if (!r.device || r.device->api != CudaProgram::api() || r.device->span_lo != lo || r.device->span_bytes != hi - lo) {
                b.host_for_read();  // the elements an old copy holds come back first
                r.device = CudaProgram::make_device_copy(lo, hi - lo);
                r.host_dirty = true;  // the new copy holds nothing yet
                r.device_dirty = false;
            }
            if (a.kind == codegen::Argument::Kind::Input && r.host_dirty) {
                r.device->copy_to_device(b.host + lo);
                r.host_dirty = false;
            }
            desc[i].host = reinterpret_cast<uint8_t *>(uintptr_t(r.device->address())) - lo;
        }
        tessera_error_t err{};
        int32_t rc = fn(argv.data(), &err);
        if (rc != TESSERA_OK) report_error(err);
        // The outputs were written in full on the device.
        for (size_t i = 0; i < arguments_.size(); ++i)
            if (arguments_[i].kind == codegen::Argument::Kind::Output) {
                buffer_of[i]->residency->host_dirty = false;
                buffer_of[i]->residency->device_dirty = true;
            }
    }

    Buffer<void> bound(const codegen::Argument &a, const Bindings *bindings) const {
        if (bindings) {
            auto it = bindings->inputs().find(a.input.get());
            if (it != bindings->inputs().end()) return it->second;
        }
        if (!a.input->bound)
            user_error("InputBuffer ", a.name, " is not bound to a buffer. Call ", a.name,
                       ".set(buffer) or pass it in Bindings before running the pipeline.");
        struct Access : Buffer<void> {
            explicit Access(std::shared_ptr<BufferImpl> i) : Buffer<void>(std::move(i)) {}
        };
        return Access(a.input->bound);
    }

    [[noreturn]] void report_error(const tessera_error_t &e) const {
        if (e.code == TESSERA_ERROR_REGION_RANGE) {
            std::string what = "an intermediate region";
            if (e.argument >= 0 && size_t(e.argument) < array_names_.size()) what = array_names_[size_t(e.argument)];
            user_error("Computing the pipeline needs ", what, " over [", e.need_min, ", ", e.need_max, "] in dimension ",
                       e.dim, ", outside the 32-bit coordinate range compiled code uses. Keep coordinates within "
                       "[-2^31, 2^31) (e.g. clamp them, or realize a smaller region).");
        }
        if (e.code == TESSERA_ERROR_BOUND) {
            // The array's name is "Func <name>"; its Var is named by the Func's pure arguments.
            std::string func = size_t(e.argument) < array_names_.size() ? array_names_[size_t(e.argument)] : "?";
            if (func.rfind("Func ", 0) == 0) func = func.substr(5);
            std::string var = "?";
            for (const auto &f : graph_.funcs)
                if (f->name == func && e.dim >= 0 && e.dim < f->dimensions()) var = f->pure_args[size_t(e.dim)];
            detail::outside_bound(func, var, e.dim, e.need_min, e.need_max, e.have_min, e.have_max);
        }
        const codegen::Argument &a = arguments_.at(size_t(e.argument));
        switch (e.code) {
        case TESSERA_ERROR_BUFFER_RANGE:
            user_error(a.kind == codegen::Argument::Kind::Output ? "The output buffer of Func " : "The buffer of ", a.name,
                       " covers [", e.need_min, ", ", e.need_max, "] in dimension ", e.dim,
                       ", outside the 32-bit coordinate range compiled code uses. Use buffers whose coordinates lie "
                       "within [-2^31, 2^31), or split the work into smaller buffers.");
        case TESSERA_ERROR_INPUT_TOO_SMALL:
            detail::input_too_small(a.name, a.input->is_parameter, e.dim, e.need_min, e.need_max, e.have_min, e.have_max);
        case TESSERA_ERROR_OUTPUT_TOO_SMALL:
            detail::output_too_small(a.name, e.dim, e.need_min, e.need_max, e.have_min, e.have_max);
        case TESSERA_ERROR_SPECIALIZATION:
            user_error("The pipeline was compiled for output ", a.name, " of extent ", e.need_min, " in dimension ", e.dim,
                       " (CompileOptions::specialize_sizes) but is run with extent ", e.have_min,
                       ". Compile without specialize_sizes to accept every size.");
        case TESSERA_ERROR_ALIASING: {
            const codegen::Argument &other = arguments_.at(size_t(e.need_min));
            user_error("The output buffer of Func ", a.name, " shares memory with the ",
                       other.kind == codegen::Argument::Kind::Output ? "output buffer of Func " : "buffer of InputBuffer ",
                       other.name, ". Compiled pipelines do not compute in place: pass an output buffer that overlaps "
                       "no input and no other output (e.g. a new Buffer, then copy).");
        }
        case TESSERA_ERROR_GPU: user_error(take_gpu_error());
        case TESSERA_ERROR_ABI_VERSION:
            internal_error("the descriptor of buffer ", a.name, " has ABI version ", e.need_min, ", not ", TESSERA_ABI_VERSION);
        case TESSERA_ERROR_OUT_OF_MEMORY:
            user_error("The pipeline could not allocate an intermediate buffer of ", e.need_min, " bytes.");
        default: internal_error("compiled pipeline returned error code ", e.code);
        }
    }

    // The program compiled (a cache hit: scheduled again, the same way, on first request).
    std::shared_ptr<const poly::Program> scheduled() const {
        std::lock_guard<std::mutex> lock(program_mutex_);
        if (!program_) {
            CompileReport ignored;
            program_ = target_.arch == Target::Arch::CUDA
                           ? program_for(pipeline_, gpu_schedule_options(options_, TargetInfo::nvidia_gpu(target_.sm, target_.shared_memory_opt_in)), ignored)
                           : program_for(pipeline_, options_, ignored);
        }
        return program_;
    }

    Pipeline pipeline_;
    PipelineGraph graph_;
    std::vector<std::string> array_names_;
    std::unique_ptr<JitCode> code_;
    CompileReport report_;
    std::vector<codegen::Argument> arguments_;
    std::shared_ptr<CudaProgram> cuda_;
    bool emulated_ = false;
    Target target_;
    CompileOptions options_;
    std::map<std::string, std::string> kept_;
    mutable std::mutex program_mutex_;
    mutable std::shared_ptr<const poly::Program> program_;
};

// A module for the JIT, named after this process's next pipeline, and the JIT's TargetMachine.
struct JitModule {
    std::string name;
    std::unique_ptr<llvm::LLVMContext> context;
    std::unique_ptr<llvm::Module> module;
    std::unique_ptr<llvm::TargetMachine> tm;
};

// How run-time errors name the program's arrays.
std::vector<std::string> array_names(const poly::Program &program) {
    std::vector<std::string> names;
    for (const poly::Array &a : program.model->arrays) names.push_back(a.func ? "Func " + a.func->name : "InputBuffer " + a.input->name);
    return names;
}

std::vector<std::string> output_names(const Pipeline &p) {
    std::vector<std::string> names;
    for (const Func &f : p.outputs()) names.push_back(f.name());
    return names;
}

std::string joined(const std::vector<std::string> &v) {
    std::string s;
    for (const auto &x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
}

// "name ms, name ms, ..." of a list of phases.
std::string phase_list_text(const std::vector<std::pair<std::string, double>> &phases) {
    std::ostringstream s;
    s.precision(3);
    for (size_t i = 0; i < phases.size(); ++i) s << (i ? ", " : "") << phases[i].first << " " << phases[i].second;
    return s.str();
}

std::string phases_text(const CompileReport &r) {
    std::ostringstream s;
    s.precision(3);
    s << r.total_ms << " ms (" << phase_list_text(r.phase_ms) << ")";
    return s.str();
}

JitModule new_jit_module() {
    JitModule j;
    j.name = "tessera_pipeline_" + std::to_string(g_counter++);
    j.context = std::make_unique<llvm::LLVMContext>();
    j.module = std::make_unique<llvm::Module>(j.name, *j.context);
    j.tm = jit_target_machine();
    return j;
}

} // namespace

void lower_to_llvm(const poly::Program &program, const codegen::CodegenOptions &options, llvm::Module &module,
                   llvm::TargetMachine &tm, CompileReport &report, poly::Stopwatch &w, std::string *unoptimized_ir) {
    codegen::prepare_module(module, tm);
    codegen::lower_program(program, module, options);
    report.phase_ms.emplace_back("LLVM IR", w.lap());
    if (unoptimized_ir) {
        llvm::raw_string_ostream ir(*unoptimized_ir);
        module.print(ir, nullptr);
        w.lap();
    }
    report.llvm_instructions = codegen::instruction_count(module);
}

void lower_and_optimize(const poly::Program &program, const codegen::CodegenOptions &options, llvm::Module &module,
                        llvm::TargetMachine &tm, CompileReport &report, poly::Stopwatch &w, std::string *unoptimized_ir) {
    lower_to_llvm(program, options, module, tm, report, w, unoptimized_ir);
    report.llvm_optimization_level = codegen::optimize_module(module, tm);
    report.phase_ms.emplace_back("LLVM optimization", w.lap());
}

// Routes the module's calls of the runtime through the loader's import table (runtime/jit.h),
// optimizes it and generates its machine code on compile_threads() threads
// (codegen/parallel_compile.h), appending the "LLVM optimization" and "machine code" phases (the
// text kept for `kept`, when asked, is not counted in either).
codegen::MachineCode optimize_and_generate(std::unique_ptr<llvm::Module> module, llvm::TargetMachine &tm, const CompileOptions &o,
                                          CompileReport &report, poly::Stopwatch &w, std::map<std::string, std::string> *kept) {
    int threads = o.compile_threads > 0 ? o.compile_threads : codegen::compile_threads();
    jit_route_imports(*module);
    codegen::MachineCode code = codegen::compile_module(std::move(module), tm, jit_target_machine, threads, kept != nullptr);
    w.lap();
    report.llvm_optimization_level = code.optimization_level;
    report.llvm_partitions = code.partitions;
    report.phase_ms.emplace_back("LLVM optimization", code.optimization_ms);
    report.phase_ms.emplace_back("machine code", code.machine_code_ms);
    if (kept) {
        (*kept)["llvm"] = std::move(code.optimized_ir);
        (*kept)["asm"] = std::move(code.assembly);
    }
    return code;
}

int compilation_count() { return g_counter.load(); }

namespace {

// What every cache entry holds of a compile: its entry symbol and object, the outputs, the
// arrays' names for run-time errors, and the report's LLVM figures and total time.
CacheEntry cache_entry(const Pipeline &p, const std::string &symbol, std::string shared_object,
                       const std::vector<std::string> &arrays, const CompileReport &report) {
    CacheEntry e;
    e.symbol = symbol;
    e.shared_object = std::move(shared_object);
    e.partitions = report.llvm_partitions;
    e.outputs = output_names(p);
    e.array_names = arrays;
    e.llvm_instructions = report.llvm_instructions;
    e.llvm_optimization_level = report.llvm_optimization_level;
    e.compile_ms = report.total_ms;
    return e;
}

// Stores `e` under `key`, timed as the report's "cache store" phase.
void store_compiled(CompileCache &cache, const std::string &key, const CacheEntry &e, CompileReport &report, poly::Stopwatch &w) {
    cache.store(key, e);
    report.phase_ms.emplace_back("cache store", w.lap());
    log_line(LogTopic::Cache, "miss " + key.substr(0, 16) + " (" + joined(e.outputs) + "): compiled and stored");
}

// A program's deferred legality check (poly::Program::deferred_legality) on a thread of its
// own, started at construction, while the caller generates the program's machine code: code
// generation does not touch isl, so the model's isl context has one user at a time. Joined by
// result(), or by the destructor when code generation throws.
class ConcurrentLegalityCheck {
public:
    explicit ConcurrentLegalityCheck(const poly::Program &program) {
        if (!program.deferred_legality) return;
        thread_ = std::thread([this, &program] {
            poly::Stopwatch w;
            try {
                replacement_ = program.deferred_legality(program);
            } catch (...) {
                error_ = std::current_exception();
            }
            ms_ = w.lap();
        });
    }
    ConcurrentLegalityCheck(const ConcurrentLegalityCheck &) = delete;
    ConcurrentLegalityCheck &operator=(const ConcurrentLegalityCheck &) = delete;
    ~ConcurrentLegalityCheck() {
        if (thread_.joinable()) thread_.join();
    }

    // Waits for the check; null when the program is legal (or needed no check), else the
    // program to compile instead. Rethrows what the check threw. Adds its time to `report` as
    // the phase "legality check (concurrent)".
    std::shared_ptr<const poly::Program> result(CompileReport &report) {
        if (!thread_.joinable()) return nullptr;
        thread_.join();
        report.phase_ms.emplace_back("legality check (concurrent)", ms_);
        if (error_) std::rethrow_exception(error_);
        return replacement_;
    }

private:
    std::thread thread_;
    std::shared_ptr<const poly::Program> replacement_;
    std::exception_ptr error_;
    double ms_ = 0;
};

// Compiles the program to an object, loads it, and stores it in `cache` under `key` when given.
std::shared_ptr<const CallableImpl> compile_program(const Pipeline &p, const std::shared_ptr<const poly::Program> &program,
                                                    const CompileOptions &o, CompileReport report, CompileCache *cache,
                                                    const std::string &key) {
    poly::Stopwatch total;
    poly::Stopwatch w;
    const CompileReport scheduled = report;
    ConcurrentLegalityCheck check(*program);
    auto [name, context, module, tm] = new_jit_module();
    codegen::CodegenOptions co = codegen_options(p, o, name);
    co.pooled_buffers = true;
    std::string dump = dump_directory();
    bool keep = o.keep_assembly || !dump.empty();
    std::map<std::string, std::string> kept;
    lower_to_llvm(*program, co, *module, *tm, report, w, keep ? &kept["llvm_unoptimized"] : nullptr);
    codegen::MachineCode machine = optimize_and_generate(std::move(module), *tm, o, report, w, keep ? &kept : nullptr);
    if (std::shared_ptr<const poly::Program> instead = check.result(report)) {
        // The schedule was not legal: the code made of it is dropped, and the program
        // scheduled again (checked) is compiled instead, its time counted in the total.
        CompileReport again = scheduled;
        again.phase_ms.push_back(report.phase_ms.back());
        again.total_ms += total.lap();
        log_line(LogTopic::Compile, joined(output_names(p)) + ": the schedule failed its legality check; compiled again as scheduled without it");
        return compile_program(p, instead, o, std::move(again), cache, key);
    }
    w.lap();
    if (o.keep_assembly) {
        report.llvm_ir = kept["llvm"];
        report.assembly = kept["asm"];
    }
    std::string shared_object = jit_link_objects(machine.objects, name);
    std::unique_ptr<JitCode> code = jit_load_shared_object(shared_object, name);
    report.phase_ms.emplace_back("link", w.lap());
    report.total_ms += total.lap();  // after the scheduling time it may hold already
    std::vector<std::string> arrays = array_names(*program);
    if (cache) store_compiled(*cache, key, cache_entry(p, name, std::move(shared_object), arrays, report), report, w);
    log_line(LogTopic::Compile, joined(output_names(p)) + " for the host: " + phases_text(report));
    if (!program->timings.empty() && log_enabled(LogTopic::Compile))
        // (The automatic scheduler's own phases, which the report's "schedule" and "AST" sum up.)
        log_line(LogTopic::Compile, joined(output_names(p)) + " scheduler phases: " + phase_list_text(program->timings));
    auto compiled = std::make_shared<CompiledPipeline>(p, std::move(arrays), std::move(code), std::move(report), program,
                                                       Target::host(), o, std::move(kept));
    if (!dump.empty()) dump_compiler_ir(Callable(compiled), p, dump);
    return compiled;
}

} // namespace

namespace {

// The persistent cache a compile for `t` with `o` uses, with its key; none (and report.cache
// saying why) when it is off. `report`'s "cache lookup" phase is timed by `w`.
struct CacheUse {
    std::shared_ptr<CompileCache> cache;
    std::string key;
};

CacheUse cache_for(const Pipeline &p, const Target &t, const CompileOptions &o, const std::string *text, CompileReport &report,
                   poly::Stopwatch &w) {
    CacheUse use;
    if (!o.cache) report.cache = "off: CompileOptions::cache is false";
    else if (o.keep_assembly) report.cache = "off: CompileOptions::keep_assembly asks for the IR and assembly of a compile";
    else if (!dump_directory().empty()) report.cache = "off: TESSERA_DUMP asks for every stage of a compile";
    else {
        use.cache = process_compile_cache();
        if (!use.cache->usable()) {
            report.cache = "off: " + use.cache->refused_reason();
            use.cache.reset();
        }
    }
    if (!use.cache) return use;
    // Checks the options the way compiling does before the key is made of them (without the
    // host's facts, which a hit does not need).
    check_compile_options(p, o);
    use.key = text ? cache_key(*text, t, o) : cache_key(p, t, o);
    report.phase_ms.emplace_back("cache lookup", w.lap());
    return use;
}

// The entry of `use.key` loaded into the JIT, or nothing (report.cache "miss"; an entry that
// verified but does not link is reported, removed and compiled again).
std::optional<std::pair<CacheEntry, std::unique_ptr<JitCode>>> load_cached(const CacheUse &use, CompileReport &report,
                                                                            poly::Stopwatch &w) {
    if (!use.cache) return std::nullopt;
    if (std::optional<CacheEntry> e = use.cache->load(use.key)) {
        try {
            std::unique_ptr<JitCode> code = jit_load_shared_object(e->shared_object, e->symbol, e->file);
            report.phase_ms.emplace_back("load", w.lap());
            report.cache = "hit";
            report.llvm_instructions = e->llvm_instructions;
            report.llvm_optimization_level = e->llvm_optimization_level;
            report.llvm_partitions = e->partitions;
            report.kernels = e->kernels;
            return std::make_pair(std::move(*e), std::move(code));
        } catch (const InternalError &x) {
            warn_once("the compile cache entry " + use.cache->entry_path(use.key) + " verified but could not be loaded (" + x.what() +
                      "). It was removed and the pipeline is compiled again.");
            use.cache->remove(use.key);
        }
    }
    report.cache = "miss";
    return std::nullopt;
}

void log_hit(const CacheUse &use, const CacheEntry &e, const CompileReport &report) {
    if (!log_enabled(LogTopic::Cache)) return;  // the line costs a new process's hit 20 us to format
    log_line(LogTopic::Cache, "hit " + use.key.substr(0, 16) + " (" + joined(e.outputs) + "): loaded in " + phases_text(report) +
                                  ", where compiling took " + std::to_string(int64_t(e.compile_ms)) + " ms");
}

// Points the GPU entry's `<symbol>_gpu_runtime` global at what it launches through: the CUDA
// program's runtime, or the emulator's. Set by the loader, so that the object holds no address
// of this process and can be cached.
void set_gpu_runtime(const JitCode &code, const std::string &symbol, CudaProgram *cuda) {
    auto *slot = static_cast<tessera_gpu_runtime_t **>(code.lookup(symbol + codegen::kRuntimeGlobalSuffix));
    *slot = cuda ? cuda->runtime() : emulator_runtime();
}

} // namespace

std::shared_ptr<const CallableImpl> compile_for_host(const Pipeline &p, const Target &t, const CompileOptions &o,
                                                     const std::string *text) {
    if (t.arch == Target::Arch::CUDA) return compile_for_cuda(p, t, o, text);
    if (!t.cpu.empty() || !t.features.empty())
        user_error("Target: only the host CPU is supported for now; leave Target::cpu and features empty.");
    if (t.emulate || t.shared_memory_opt_in)
        user_error("Target::", t.emulate ? "emulated()" : "with_shared_memory_opt_in()",
                   " applies to GPU targets: use it on Target::cuda(sm), not on Target::host().");
    poly::Stopwatch total;
    poly::Stopwatch w;
    CompileReport report;
    // The persistent cache: a hit loads the stored object and skips everything else.
    CacheUse use = cache_for(p, t, o, text, report, w);
    if (auto hit = load_cached(use, report, w)) {
        report.total_ms = total.lap();
        log_hit(use, hit->first, report);
        return std::make_shared<CompiledPipeline>(p, std::move(hit->first.array_names), std::move(hit->second), std::move(report),
                                                  nullptr, t, o, std::map<std::string, std::string>{});
    }
    // A folded schedule's legality check runs while its machine code is made (compile_program).
    poly::ScheduleOptions so = schedule_options(o);
    so.defer_legality = true;
    std::shared_ptr<const poly::Program> program = program_for(p, so, report);
    report.total_ms = total.lap();
    return compile_program(p, program, o, std::move(report), use.cache.get(), use.key);
}

std::shared_ptr<const CallableImpl> compile_program_for_host(const Pipeline &p, std::shared_ptr<const poly::Program> program,
                                                             const CompileOptions &o, CompileReport report) {
    if (report.cache.empty()) report.cache = "off: a program already scheduled in this process (one schedule_json() showed first)";
    return compile_program(p, program, o, std::move(report), nullptr, "");
}

namespace {

// Compiles a GPU program: kernels (PTX for a CUDA GPU) and the host code that launches them,
// loads it, and stores it in `cache` under `key` when given.
std::shared_ptr<const CallableImpl> compile_gpu_program(const Pipeline &p, std::shared_ptr<const poly::Program> program,
                                                        const Target &t, const CompileOptions &o, CompileReport report,
                                                        CompileCache *cache, const std::string &key) {
    TargetInfo device = TargetInfo::nvidia_gpu(t.sm, t.shared_memory_opt_in);
    poly::Stopwatch total;
    report.kernels = poly::count_kernels(program->schedule);
    poly::Stopwatch w;
    auto [name, context, module, tm] = new_jit_module();
    codegen::CodegenOptions co = codegen_options(p, o, name);
    co.gpu = true;
    co.gpu_threads = gpu_block_threads(device);
    co.gpu_shared_bytes = device.shared_bytes_per_block;
    co.gpu_unroll_rows = o.gpu_unroll_rows > 0 ? o.gpu_unroll_rows : device.rows_in_flight;
    co.gpu_window_columns = device.window_columns;
    co.gpu_warp_alignment = gpu_warp_alignment(o);
    co.streaming_output_stores = false;
    co.input_prefetch_bytes = device.prefetch_bytes;  // (none: prefetching is a CPU cache's)
    // The entry's runtime global starts null and is set once loaded (set_gpu_runtime).
    co.gpu_runtime = nullptr;
    std::shared_ptr<CudaProgram> cuda = t.emulate ? nullptr : std::make_shared<CudaProgram>();
    std::string dump = dump_directory();
    bool keep = o.keep_assembly || !dump.empty();
    std::map<std::string, std::string> kept;
    codegen::prepare_module(*module, *tm);
    codegen::lower_program(*program, *module, co);
    report.phase_ms.emplace_back("LLVM IR", w.lap());
    if (keep) {
        llvm::raw_string_ostream ir(kept["llvm_unoptimized"]);
        module->print(ir, nullptr);
        w.lap();
    }
    std::vector<codegen::KernelName> kernels = codegen::kernel_names(*module);
    if (keep || cuda) {
        report.ptx = codegen::emit_ptx(*module, t.sm);
        report.phase_ms.emplace_back("PTX", w.lap());
    }
    std::string ptx = cuda ? report.ptx : std::string();
    if (cuda) cuda->set_code(report.ptx, kernels);
    // The emulator runs the same kernels on the host, its device interface inlined.
    codegen::define_emulated_device(*module);
    report.llvm_instructions = codegen::instruction_count(*module);
    codegen::MachineCode machine = optimize_and_generate(std::move(module), *tm, o, report, w, keep ? &kept : nullptr);
    if (keep) {
        kept.erase("asm");  // the kernels' code is the PTX
        kept["ptx"] = report.ptx;
        if (o.keep_assembly) report.llvm_ir = kept["llvm"];
        else if (!cuda) report.ptx.clear();  // computed for the dump only
    }
    std::string shared_object = jit_link_objects(machine.objects, name);
    std::unique_ptr<JitCode> code = jit_load_shared_object(shared_object, name);
    set_gpu_runtime(*code, name, cuda.get());
    report.phase_ms.emplace_back("link", w.lap());
    report.total_ms += total.lap();
    std::vector<std::string> arrays = array_names(*program);
    if (cache) {
        CacheEntry e = cache_entry(p, name, std::move(shared_object), arrays, report);
        e.kernels = report.kernels;
        e.ptx = std::move(ptx);
        for (const auto &k : kernels) e.kernel_names.emplace_back(k.function, k.groups);
        store_compiled(*cache, key, std::move(e), report, w);
    }
    log_line(LogTopic::Compile, joined(output_names(p)) + " for sm_" + std::to_string(t.sm) + (t.emulate ? " (emulated)" : "") +
                                    ": " + phases_text(report));
    auto compiled = std::make_shared<CompiledPipeline>(p, std::move(arrays), std::move(code), std::move(report), program, t, o,
                                                       std::move(kept), std::move(cuda), t.emulate);
    if (!dump.empty()) dump_compiler_ir(Callable(compiled), p, dump);
    return compiled;
}

} // namespace

std::shared_ptr<const CallableImpl> compile_for_cuda(const Pipeline &p, const Target &t, const CompileOptions &o,
                                                     const std::string *text) {
    if (!t.cpu.empty() || !t.features.empty())
        user_error("Target::cuda: leave Target::cpu and features empty (the compute capability is Target::sm).");
    if (t.sm < 50 || t.sm > 120)
        user_error("Target::cuda(", t.sm, "): the compute capability must be 50 to 120 (80 for sm_80, 90 for sm_90).");
    poly::Stopwatch total;
    poly::Stopwatch w;
    CompileReport report;
    CacheUse use = cache_for(p, t, o, text, report, w);
    if (auto hit = load_cached(use, report, w)) {
        CacheEntry &e = hit->first;
        std::shared_ptr<CudaProgram> cuda;
        if (!t.emulate) {
            cuda = std::make_shared<CudaProgram>();
            std::vector<codegen::KernelName> kernels;
            for (auto &[function, groups] : e.kernel_names) kernels.push_back({function, groups});
            cuda->set_code(e.ptx, std::move(kernels));
        }
        set_gpu_runtime(*hit->second, e.symbol, cuda.get());
        report.total_ms = total.lap();
        log_hit(use, e, report);
        return std::make_shared<CompiledPipeline>(p, std::move(e.array_names), std::move(hit->second), std::move(report), nullptr, t, o,
                                                  std::map<std::string, std::string>{}, std::move(cuda), t.emulate);
    }
    std::shared_ptr<const poly::Program> program = program_for(p, gpu_schedule_options(o, TargetInfo::nvidia_gpu(t.sm, t.shared_memory_opt_in)), report);
    report.total_ms = total.lap();
    return compile_gpu_program(p, std::move(program), t, o, std::move(report), use.cache.get(), use.key);
}

std::shared_ptr<const CallableImpl> compile_program_for_cuda(const Pipeline &p, std::shared_ptr<const poly::Program> program,
                                                             const Target &t, const CompileOptions &o, CompileReport report) {
    if (report.cache.empty()) report.cache = "off: a program scheduled in this process";
    return compile_gpu_program(p, std::move(program), t, o, std::move(report), nullptr, "");
}

} // namespace tessera::runtime
