#include "tessera/codegen/parallel_compile.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <numeric>
#include <system_error>
#include <thread>

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <tessera/error.h>

#include "tessera/codegen/cpu_target.h"

namespace tessera::codegen {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Function clusters that must share a partition: a function and every function it calls
// directly (so that inlining sees the same callees as in the whole module), unless the callee
// is never inlined. Taking a function's address (the entry handing a body to the OpenMP runtime)
// does not tie them, nor does the entry's direct call of a body (noinline) where the loop has one
// iteration.
class Clusters {
public:
    explicit Clusters(const std::vector<const llvm::Function *> &functions) : parent_(functions.size()) {
        std::iota(parent_.begin(), parent_.end(), size_t(0));
        for (size_t i = 0; i < functions.size(); ++i) index_[functions[i]] = i;
        for (size_t i = 0; i < functions.size(); ++i)
            for (const llvm::Instruction &inst : llvm::instructions(*functions[i]))
                if (const auto *call = llvm::dyn_cast<llvm::CallBase>(&inst))
                    if (const llvm::Function *callee = call->getCalledFunction();
                        callee && index_.count(callee) && !callee->hasFnAttribute(llvm::Attribute::NoInline))
                        unite(i, index_.at(callee));
    }
    size_t root(size_t i) {
        while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
        return i;
    }

private:
    void unite(size_t a, size_t b) { parent_[root(a)] = root(b); }
    std::vector<size_t> parent_;
    std::map<const llvm::Function *, size_t> index_;
};

// An instruction inside a loop costs LLVM this many times one outside: loops are what it
// vectorizes, unrolls and strength-reduces. Measured on the unoptimized functions of pb_heat_3d
// (opt -O3 and llc, each alone): the entry, 2,600 instructions nearly all outside loops
// (argument checks, each with a block of its own then), 58 ms; its time-tiled body, 850
// instructions in a nest of seven loops, 79 ms; its first planes' body, 300 in four loops, 40 ms. Balanced by instructions alone, the
// entry had a partition to itself and the bodies took three times as long in the other.
constexpr size_t kLoopInstructionCost = 4;

// A function LLVM does not optimize (optnone: the entry's setup, host_entry.cpp) costs it this
// fraction of one it does, per instruction: heat-3d's entry (before its setup was split off)
// took 41 ms of optimization and 30 of machine code, and 8 and 15 marked optnone (opt -O2 and
// llc -O3, each alone).
constexpr size_t kUnoptimizedCostDivisor = 3;

// LLVM's work on `f`, in instructions outside loops (see kLoopInstructionCost).
size_t compile_cost(const llvm::Function &f) {
    llvm::DominatorTree dominators(const_cast<llvm::Function &>(f));
    llvm::LoopInfo loops(dominators);
    size_t cost = 0;
    for (const llvm::BasicBlock &block : f) cost += block.size() * (loops.getLoopFor(&block) ? kLoopInstructionCost : 1);
    return f.hasOptNone() ? cost / kUnoptimizedCostDivisor : cost;
}

// Which partition each defined function goes to: clusters by decreasing cost (compile_cost),
// each to the partition with the least cost so far (largest first: within 4/3 of the best
// balance). Fewer partitions than asked when there are fewer clusters.
std::map<const llvm::Function *, int> partition_functions(const llvm::Module &m, int parts, int &used) {
    std::vector<const llvm::Function *> functions;
    for (const llvm::Function &f : m)
        if (!f.isDeclaration()) functions.push_back(&f);
    Clusters clusters(functions);
    std::map<size_t, size_t> cluster_cost;
    for (size_t i = 0; i < functions.size(); ++i) cluster_cost[clusters.root(i)] += compile_cost(*functions[i]);
    std::vector<std::pair<size_t, size_t>> by_cost;  // (cost, root)
    for (auto [root, cost] : cluster_cost) by_cost.emplace_back(cost, root);
    std::sort(by_cost.begin(), by_cost.end(), [](auto a, auto b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
    used = std::min<int>(parts, int(by_cost.size()));
    std::vector<size_t> load(size_t(std::max(used, 1)), 0);
    std::map<size_t, int> cluster_partition;
    for (auto [cost, root] : by_cost) {
        int p = int(std::min_element(load.begin(), load.end()) - load.begin());
        cluster_partition[root] = p;
        load[size_t(p)] += cost;
    }
    std::map<const llvm::Function *, int> partition;
    for (size_t i = 0; i < functions.size(); ++i) partition[functions[i]] = cluster_partition.at(clusters.root(i));
    return partition;
}

// A constant of local linkage is copied into every partition that reads it (its loads still
// fold); any other global variable is defined in partition 0 alone.
bool copied_into_every_partition(const llvm::GlobalVariable &g) { return g.hasLocalLinkage() && g.isConstant(); }

// Gives local functions and variables (but the copied constants) external linkage under their
// own names, so that a partition can refer to what another defines. References to them then go
// through the GOT like any external symbol (not dso_local), which the loader resolves across
// the objects of one pipeline.
void externalize(llvm::Module &m) {
    auto make_external = [](llvm::GlobalValue &v) {
        if (!v.hasLocalLinkage()) return;
        if (!v.hasName()) v.setName("tessera_unnamed");
        v.setLinkage(llvm::GlobalValue::ExternalLinkage);
        v.setVisibility(llvm::GlobalValue::DefaultVisibility);
        v.setDSOLocal(false);
    };
    for (llvm::Function &f : m)
        if (!f.isDeclaration()) make_external(f);
    for (llvm::GlobalVariable &g : m.globals())
        if (!copied_into_every_partition(g)) make_external(g);
}

// Whether the module can be split as above: no appending globals (llvm.used and the like), no
// aliases or ifuncs, no comdats.
bool splittable(const llvm::Module &m) {
    for (const llvm::GlobalVariable &g : m.globals())
        if (g.hasAppendingLinkage() || g.hasComdat()) return false;
    for (const llvm::Function &f : m)
        if (f.hasComdat()) return false;
    return m.alias_empty() && m.ifunc_empty();
}

std::string bitcode_of(const llvm::Module &m) {
    std::string bytes;
    llvm::raw_string_ostream os(bytes);
    llvm::WriteBitcodeToFile(m, os);
    os.flush();
    return bytes;
}

// One partition's module in a context of its own (partition 0 of an unsplit module: the
// caller's), and its TargetMachine.
struct Partition {
    std::unique_ptr<llvm::LLVMContext> context;
    std::unique_ptr<llvm::Module> module;
    std::unique_ptr<llvm::TargetMachine> own_tm;
    llvm::TargetMachine *tm = nullptr;
};

// Runs `work` on every partition: partition 0 on the calling thread, each other on a thread of
// its own (on the calling thread after partition 0 where the system gives no more threads).
// Rethrows the first failure once all are done.
void run_on_threads(std::vector<Partition> &parts, const std::function<void(Partition &)> &work) {
    std::vector<std::thread> threads;
    std::vector<std::exception_ptr> failures(parts.size());
    auto run = [&](size_t i) {
        try {
            work(parts[i]);
        } catch (...) {
            failures[i] = std::current_exception();
        }
    };
    size_t spawned = 1;
    try {
        for (; spawned < parts.size(); ++spawned) threads.emplace_back(run, spawned);
    } catch (const std::system_error &) {
        // (no more threads: the rest run below, in this thread)
    }
    run(0);
    for (size_t i = spawned; i < parts.size(); ++i) run(i);
    for (std::thread &t : threads) t.join();
    for (const std::exception_ptr &f : failures)
        if (f) std::rethrow_exception(f);
}

// Partition i's optimized IR and assembly, as MachineCode::optimized_ir and assembly hold them
// (each partition's under a header line when there are several).
void keep_text(const Partition &part, size_t i, size_t n, std::string &ir_text, std::string &assembly) {
    llvm::raw_string_ostream ir(ir_text);
    if (n > 1) ir << "; partition " << i << " of " << n << "\n";
    part.module->print(ir, nullptr);
    ir.flush();
    auto copy = llvm::CloneModule(*part.module);
    assembly = (n > 1 ? "# partition " + std::to_string(i) + "\n" : "") + emit_assembly(*copy, *part.tm);
}

} // namespace

int compile_threads() {
    static const int threads = [] {
        if (const char *v = std::getenv("TESSERA_COMPILE_THREADS")) {
            char *end = nullptr;
            long n = std::strtol(v, &end, 10);
            if (end == v || *end != '\0' || n < 1 || n > 256)
                user_error("TESSERA_COMPILE_THREADS=", v, ": give the number of threads to compile with, 1 to 256.");
            return int(n);
        }
        return int(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
    }();
    return threads;
}

MachineCode compile_module(std::unique_ptr<llvm::Module> module, llvm::TargetMachine &tm,
                           const std::function<std::unique_ptr<llvm::TargetMachine>()> &make_target_machine, int threads,
                           bool keep) {
    keep_x86_domain_reassignment_off();
    MachineCode out;
    out.optimization_level = optimization_level(*module);
    int used = 1;
    std::map<const llvm::Function *, int> partition;
    if (threads > 1 && instruction_count(*module) >= kParallelCompileInstructions && splittable(*module))
        partition = partition_functions(*module, threads, used);
    std::vector<Partition> parts(size_t(std::max(used, 1)));
    std::vector<std::string> ir_text(parts.size()), assembly(parts.size());
    out.objects.resize(parts.size());
    auto t0 = std::chrono::steady_clock::now();
    if (used <= 1) {
        parts[0].module = std::move(module);
        parts[0].tm = &tm;
        optimize_module(*parts[0].module, *parts[0].tm, out.optimization_level);
        out.optimization_ms = ms_since(t0);
        if (keep) keep_text(parts[0], 0, 1, ir_text[0], assembly[0]);
        t0 = std::chrono::steady_clock::now();
        out.objects[0] = emit_object_code(*parts[0].module, *parts[0].tm);
        out.machine_code_ms = ms_since(t0);
    } else {
        externalize(*module);
        std::vector<std::string> bitcode;
        for (int p = 0; p < used; ++p) {
            llvm::ValueToValueMapTy map;
            auto part = llvm::CloneModule(*module, map, [&](const llvm::GlobalValue *v) {
                if (const auto *f = llvm::dyn_cast<llvm::Function>(v)) return partition.at(f) == p;
                const auto *g = llvm::dyn_cast<llvm::GlobalVariable>(v);
                return p == 0 || (g && copied_into_every_partition(*g));
            });
            bitcode.push_back(bitcode_of(*part));
        }
        module.reset();
        for (int p = 0; p < used; ++p) parts[size_t(p)].context = std::make_unique<llvm::LLVMContext>();
        // Each partition goes on to its machine code as soon as it is optimized: the partitions
        // that take longest in optimization are not those that take longest in code generation
        // (pb_heat_3d: the entry's checks 70 ms of optimization and 62 of machine code, the
        // time-tiled body 30 and 99), and waiting for all of them in between left each thread
        // idle in turn (its LLVM 166-180 -> 155-166 ms; local_laplacian's 1009-1024 -> 942-948).
        // The reported optimization time is then until the last partition is optimized, the
        // machine code time the rest.
        std::vector<double> optimized_at(parts.size(), 0);
        run_on_threads(parts, [&](Partition &part) {
            size_t p = size_t(&part - parts.data());
            auto buffer = llvm::MemoryBuffer::getMemBuffer(bitcode[p], "partition", false);
            auto parsed = llvm::parseBitcodeFile(buffer->getMemBufferRef(), *part.context);
            if (!parsed) {
                std::string why = llvm::toString(parsed.takeError());
                internal_error("a partition of the module could not be read back from bitcode: ", why);
            }
            part.module = std::move(*parsed);
            if (p == 0) part.tm = &tm;
            else {
                part.own_tm = make_target_machine();
                part.tm = part.own_tm.get();
            }
            prepare_module(*part.module, *part.tm);
            optimize_module(*part.module, *part.tm, out.optimization_level);
            optimized_at[p] = ms_since(t0);
            if (keep) keep_text(part, p, parts.size(), ir_text[p], assembly[p]);
            out.objects[p] = emit_object_code(*part.module, *part.tm);
        });
        out.optimization_ms = *std::max_element(optimized_at.begin(), optimized_at.end());
        out.machine_code_ms = std::max(0.0, ms_since(t0) - out.optimization_ms);
    }
    out.partitions = int(parts.size());
    for (size_t i = 0; keep && i < parts.size(); ++i) {
        out.optimized_ir += ir_text[i];
        out.assembly += assembly[i];
    }
    return out;
}

} // namespace tessera::codegen
