#include "tessera/codegen/cpu_target.h"

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>
#include <mutex>
#include <thread>

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#if defined(__x86_64__) && defined(__GLIBC__)
#include <sys/platform/x86.h>
#endif

#include <tessera/error.h>

namespace tessera::codegen {

namespace {
void initialize_llvm() {
    static std::once_flag once;
    std::call_once(once, [] {
        llvm::InitializeNativeTarget();
        llvm::InitializeNativeTargetAsmPrinter();
        llvm::InitializeNativeTargetAsmParser();
    });
}

} // namespace

CpuTarget host_cpu() {
    // Asked once: LLVM's queries (cpuid and /proc) take about 0.2 ms, and a process that loads
    // its pipelines from the compile cache would spend more on them than on loading.
    static const CpuTarget host = [] {
        initialize_llvm();
        CpuTarget t;
        t.triple = llvm::sys::getProcessTriple();
        t.cpu = llvm::sys::getHostCPUName().str();
        std::string f;
        for (const auto &kv : llvm::sys::getHostCPUFeatures()) f += std::string(f.empty() ? "" : ",") + (kv.second ? "+" : "-") + kv.first().str();
        t.features = tuned_features(t.cpu, f);
        return t;
    }();
    return host;
}

std::string tuned_features(const std::string &cpu, std::string features) {
    if (cpu.rfind("znver", 0) == 0) features += std::string(features.empty() ? "" : ",") + "+prefer-no-gather";
    return features;
}

namespace {
// A small file's first line (sysfs), read with plain system calls. Empty when it cannot be read.
std::string first_line(const char *path) {
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {};
    char buf[4096];
    ssize_t n = ::read(fd, buf, sizeof buf);
    ::close(fd);
    if (n <= 0) return {};
    std::string s(buf, size_t(n));
    return s.substr(0, s.find('\n'));
}

// A cache size from /sys/devices/system/cpu/cpu0/cache/index<k>/size ("48K", "1024K", "32M").
int64_t sysfs_cache_bytes(int index, int64_t fallback) {
    std::string path = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size";
    std::string s = first_line(path.c_str());
    if (s.empty()) return fallback;
    int64_t v = std::atoll(s.c_str());
    char unit = s.back();
    if (unit == 'K') v *= 1024;
    if (unit == 'M') v *= 1024 * 1024;
    return v > 0 ? v : fallback;
}

// A cache size as the C library knows it (glibc computes them from cpuid when the process
// starts: no system call), else from sysfs (index0 is the L1 data cache, index1 the L1
// instruction cache), else `fallback`.
int64_t cache_bytes(int level, int64_t fallback) {
    long v = sysconf(level == 1 ? _SC_LEVEL1_DCACHE_SIZE : level == 2 ? _SC_LEVEL2_CACHE_SIZE : _SC_LEVEL3_CACHE_SIZE);
    return v > 0 ? int64_t(v) : sysfs_cache_bytes(level == 1 ? 0 : level, fallback);
}

// The cores this process may run on (its affinity mask, which libomp's default team follows
// too); the online CPUs where the mask cannot be read.
int usable_cores() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    return std::max(1, int(std::thread::hardware_concurrency()));
}

// The facts host_target_info reads from the operating system rather than from LLVM.
struct MemoryFacts {
    int64_t l1, l2, l3;
    int cores;
};

const MemoryFacts &memory_facts() {
    static const MemoryFacts facts = [] {
        TargetInfo defaults;
        return MemoryFacts{cache_bytes(1, defaults.l1_bytes), cache_bytes(2, defaults.l2_bytes), cache_bytes(3, 0), usable_cores()};
    }();
    return facts;
}

// The CPU's identification and feature flags as cpuid reports them, read from what glibc
// queried when the process started (<sys/platform/x86.h>; no cpuid instruction, which traps to
// the hypervisor in a virtual machine): every leaf glibc keeps (1, 7, 0x80000001, 0xd, ...),
// whose leaf 1 holds the family, model and stepping, each with the features glibc found usable
// (those the operating system enables too, as LLVM's feature query checks). The bits of leaf 1
// that differ between the cores of one CPU (the APIC id, EBX bits 24-31) are masked. Empty
// elsewhere.
std::string cpuid_identity() {
#if defined(__x86_64__) && defined(__GLIBC__) && __GLIBC_PREREQ(2, 33)
    std::string s = __builtin_cpu_is("intel") ? "intel" : __builtin_cpu_is("amd") ? "amd" : "x86";
    // Each word as " %08x", by hand into a buffer of its own: printf's machinery is cold code in
    // a new process, whose first cache hit computes this (and appending it a character at a time
    // took 15,000 instructions).
    constexpr unsigned kLeaves = CPUID_INDEX_14_ECX_0 - CPUID_INDEX_1 + 1;
    char words[kLeaves * 8 * 9];
    char *out = words;
    for (unsigned leaf = CPUID_INDEX_1; leaf <= CPUID_INDEX_14_ECX_0; ++leaf) {
        const cpuid_feature *f = __x86_get_cpuid_feature_leaf(leaf);
        for (unsigned r = 0; r < 8; ++r) {
            unsigned v = r < 4 ? f->cpuid_array[r] : f->active_array[r - 4];
            if (leaf == CPUID_INDEX_1 && r % 4 == 1) v &= 0x00ffffffu;
            *out++ = ' ';
            for (int shift = 28; shift >= 0; shift -= 4) *out++ = "0123456789abcdef"[(v >> shift) & 0xf];
        }
    }
    s.append(words, size_t(out - words));
    return s;
#else
    return std::string();
#endif
}
} // namespace

const TargetInfo &host_target_info() {
    static const TargetInfo info = [] {
        CpuTarget cpu = host_cpu();
        TargetInfo t;
        t.kind = TargetInfo::Kind::CPU;
        t.name = cpu.cpu;
        t.vector_bits = cpu.features.find("+avx512f") != std::string::npos ? 512
                        : cpu.features.find("+avx") != std::string::npos  ? 256
                                                                          : 128;
        const MemoryFacts &m = memory_facts();
        t.l1_bytes = m.l1;
        t.l2_bytes = m.l2;
        t.l3_bytes = m.l3;
        t.cores = m.cores;
        return t;
    }();
    return info;
}

bool host_permutes_bytes() {
    static const bool vbmi = host_target_info().vector_bits >= 512 &&
                             (host_cpu().features + ",").find("+avx512vbmi,") != std::string::npos;
    return vbmi;
}

const std::string &host_cpu_identity() {
    static const std::string id = [] {
        std::string cpu = cpuid_identity();
        if (cpu.empty()) {
            std::string modalias = first_line("/sys/devices/system/cpu/modalias");
            if (modalias.empty()) return std::string();
            cpu = "modalias " + modalias;
        } else cpu = "cpuid " + cpu;
        const MemoryFacts &m = memory_facts();
        return std::string(LLVM_HOST_TRIPLE) + " " + cpu + " l1 " + std::to_string(m.l1) + " l2 " + std::to_string(m.l2) +
               " l3 " + std::to_string(m.l3) + " cores " + std::to_string(m.cores);
    }();
    return id;
}

// It changed not one byte of the code of 19 apps on an AVX-512 machine, and took a sixth of
// their machine code's time (local_laplacian 160 ms, pyramid_blend 140 ms): it runs on every
// function, in time that grows faster than its size. Off as LLVM's own flag turns it off; set
// again whenever lld's driver has reset it (it resets every LLVM option to its default when it
// links, as Tessera's JIT does after each compile). A flag the process set itself is left as
// it is. (Passes read the flag unsynchronized: it is set on the compiling thread, before the
// compile's other threads start.)
void keep_x86_domain_reassignment_off() {
    static std::mutex m;
    std::lock_guard<std::mutex> lock(m);
    llvm::StringMap<llvm::cl::Option *> &options = llvm::cl::getRegisteredOptions();
    auto it = options.find("disable-x86-domain-reassignment");
    if (it != options.end() && it->second->getNumOccurrences() == 0) it->second->addOccurrence(0, it->second->ArgStr, "true");
}

std::unique_ptr<llvm::TargetMachine> make_target_machine(const CpuTarget &t, bool fast_math) {
    initialize_llvm();
    keep_x86_domain_reassignment_off();
    std::string err;
    const llvm::Target *target = llvm::TargetRegistry::lookupTarget(t.triple, err);
    if (!target) internal_error("LLVM has no target for ", t.triple, ": ", err);
    llvm::TargetOptions opts;
    if (fast_math) {
        opts.AllowFPOpFusion = llvm::FPOpFusion::Fast;
        opts.UnsafeFPMath = true;
        opts.NoInfsFPMath = false;
        opts.NoNaNsFPMath = false;
    } else {
        opts.AllowFPOpFusion = llvm::FPOpFusion::Standard;  // only explicit fma
    }
    auto *tm = target->createTargetMachine(t.triple, t.cpu, t.features, opts, llvm::Reloc::PIC_, std::nullopt,
                                           llvm::CodeGenOptLevel::Aggressive);
    if (!tm) internal_error("LLVM could not create a TargetMachine for ", t.triple, " ", t.cpu);
    return std::unique_ptr<llvm::TargetMachine>(tm);
}

void prepare_module(llvm::Module &m, llvm::TargetMachine &tm) {
    m.setTargetTriple(tm.getTargetTriple().str());
    m.setDataLayout(tm.createDataLayout());
    // LLVM's warnings and remarks (e.g. "loop not interleaved" when a vectorization hint cannot
    // be honoured) are about code Tessera generated, not the user's: keep them off stderr.
    // Errors still surface as failures of the passes that report them.
    m.getContext().setDiagnosticHandlerCallBack(
        [](const llvm::DiagnosticInfo *info, void *) {
            if (info->getSeverity() != llvm::DS_Error) return;
            llvm::DiagnosticPrinterRawOStream printer(llvm::errs());
            info->print(printer);
            llvm::errs() << "\n";
        },
        nullptr);
}

size_t instruction_count(const llvm::Module &m) {
    size_t n = 0;
    for (const llvm::Function &f : m) n += f.getInstructionCount();
    return n;
}

int optimization_level_for(size_t instructions) {
    return instructions > kLargeModuleInstructions ? 1 : 2;
}

int optimization_level(const llvm::Module &m) {
    return std::getenv("TESSERA_LLVM_PIPELINE") ? 0 : optimization_level_for(instruction_count(m));
}

void optimize_module(llvm::Module &m, llvm::TargetMachine &tm, int level) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    const char *pipeline = std::getenv("TESSERA_LLVM_PIPELINE");
    llvm::PipelineTuningOptions pto;
    pto.LoopVectorization = true;
    // Not for very large modules: the SLP vectorizer is quadratic in the size of a basic block
    // (it renumbers the block's instructions whenever it compares two of them), and their blocks
    // are huge: a 4,096-term expression of gathered loads spent minutes in it.
    pto.SLPVectorization = level != 1;
    llvm::PassBuilder pb(&tm, pto);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    // LLVM's O2 pipeline, O1 for very large modules (optimization_level_for).
    // TESSERA_LLVM_PIPELINE (a pass pipeline, or "O3") overrides it for experiments.
    llvm::ModulePassManager mpm;
    if (!pipeline) {
        mpm = pb.buildPerModuleDefaultPipeline(level == 1 ? llvm::OptimizationLevel::O1 : llvm::OptimizationLevel::O2);
    } else if (std::string(pipeline) == "O3") mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    else if (auto err = pb.parsePassPipeline(mpm, pipeline))
        user_error("TESSERA_LLVM_PIPELINE is not a pass pipeline LLVM accepts: ", llvm::toString(std::move(err)));
    mpm.run(m, mam);
}

int optimize_module(llvm::Module &m, llvm::TargetMachine &tm) {
    int level = optimization_level(m);
    optimize_module(m, tm, level);
    return level;
}

namespace {
void emit(llvm::Module &m, llvm::TargetMachine &tm, llvm::raw_pwrite_stream &out, llvm::CodeGenFileType type) {
    llvm::legacy::PassManager pm;
    if (tm.addPassesToEmitFile(pm, out, nullptr, type)) internal_error("LLVM cannot emit this file type for the target");
    pm.run(m);
}
} // namespace

std::string emit_assembly(llvm::Module &m, llvm::TargetMachine &tm) {
    llvm::SmallVector<char, 0> buffer;
    llvm::raw_svector_ostream os(buffer);
    emit(m, tm, os, llvm::CodeGenFileType::AssemblyFile);
    return std::string(buffer.begin(), buffer.end());
}

std::string emit_object_code(llvm::Module &m, llvm::TargetMachine &tm) {
    llvm::SmallVector<char, 0> buffer;
    llvm::raw_svector_ostream os(buffer);
    emit(m, tm, os, llvm::CodeGenFileType::ObjectFile);
    return std::string(buffer.begin(), buffer.end());
}

void emit_object(llvm::Module &m, llvm::TargetMachine &tm, const std::string &path) {
    std::error_code ec;
    llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
    if (ec) user_error("Cannot write the object file ", path, ": ", ec.message());
    emit(m, tm, out, llvm::CodeGenFileType::ObjectFile);
}

} // namespace tessera::codegen
