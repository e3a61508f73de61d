#include "tessera/runtime/jit.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>
#include <optional>
#include <set>

#include <lld/Common/Driver.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/SubtargetFeature.h>

#include <tessera/codegen/cpu_target.h>
#include <tessera/codegen/llvm_lowering.h>
#include <tessera/error.h>

#include "file_io.h"
#include "mapped_object.h"
#include "tessera/runtime/buffer_pool.h"
#include "tessera/runtime/log.h"

LLD_HAS_DRIVER(elf)

// The OpenMP runtime's entry points that generated parallel loops call (codegen/src/cpu), from
// libomp, which the runtime links (their signatures as libomp defines them; only their
// addresses are taken here).
extern "C" {
void __kmpc_fork_call(void *location, int32_t argc, void *microtask, ...);
int32_t __kmpc_global_thread_num(void *location);
void __kmpc_push_num_threads(void *location, int32_t thread, int32_t threads);
void __kmpc_dispatch_init_8(void *location, int32_t thread, int32_t schedule, int64_t lower, int64_t upper, int64_t stride,
                            int64_t chunk);
int32_t __kmpc_dispatch_next_8(void *location, int32_t thread, int32_t *last, int64_t *lower, int64_t *upper, int64_t *stride);
void __kmpc_serialized_parallel(void *location, int32_t thread);
void __kmpc_end_serialized_parallel(void *location, int32_t thread);
}

namespace tessera::runtime {
namespace {

std::string message(llvm::Error e) {
    std::string s;
    llvm::handleAllErrors(std::move(e), [&](const llvm::ErrorInfoBase &info) { s = info.message(); });
    return s;
}

// The functions generated code calls through the import table, in the table's order, with the
// addresses this library was linked with. The order is part of the code: the compile cache's
// key names the build, so an entry is only ever loaded by the build that wrote it.
struct Import {
    const char *name;
    void *address;
};
const Import kImports[] = {
    {codegen::kBufferPoolAllocSymbol, reinterpret_cast<void *>(&buffer_pool_alloc)},
    {codegen::kBufferPoolFreeSymbol, reinterpret_cast<void *>(&buffer_pool_free)},
    {"__kmpc_fork_call", reinterpret_cast<void *>(&__kmpc_fork_call)},
    {"__kmpc_global_thread_num", reinterpret_cast<void *>(&__kmpc_global_thread_num)},
    {"__kmpc_push_num_threads", reinterpret_cast<void *>(&__kmpc_push_num_threads)},
    {"__kmpc_dispatch_init_8", reinterpret_cast<void *>(&__kmpc_dispatch_init_8)},
    {"__kmpc_dispatch_next_8", reinterpret_cast<void *>(&__kmpc_dispatch_next_8)},
    {"__kmpc_serialized_parallel", reinterpret_cast<void *>(&__kmpc_serialized_parallel)},
    {"__kmpc_end_serialized_parallel", reinterpret_cast<void *>(&__kmpc_end_serialized_parallel)},
};
constexpr size_t kImportCount = std::size(kImports);
constexpr const char *kImportTable = "tessera_jit_imports";

// The files (device and inode) that loaded code was mapped from and still lives in. glibc hands
// a dlopen of a file it has loaded already the code loaded before, and adds the new path to that
// code's names: /proc/self/fd/N would then name it after N is closed and reused by another load.
// So a file is mapped by one live code at a time; a second load of it copies it to a memory file.
struct LoadedFiles {
    std::mutex mutex;
    std::set<std::pair<dev_t, ino_t>> files;
};
LoadedFiles &loaded_files() {
    static LoadedFiles *f = new LoadedFiles;  // never destroyed: code may outlive static destructors
    return *f;
}

// Code loaded by dlopen; dlclose'd when destroyed, and then the file it was loaded from closed
// (and forgotten by loaded_files). That file stays open meanwhile because glibc takes a library
// whose path names one already loaded for that one: /proc/self/fd/N must name no other live code.
class SharedObject : public JitCode {
public:
    SharedObject(void *handle, std::shared_ptr<const OpenFile> file, std::optional<std::pair<dev_t, ino_t>> file_id)
        : handle_(handle), file_(std::move(file)), file_id_(file_id) {}
    ~SharedObject() override {
        dlclose(handle_);
        file_.reset();
        if (file_id_) {
            std::lock_guard<std::mutex> lock(loaded_files().mutex);
            loaded_files().files.erase(*file_id_);
        }
    }

    void *address() const override { return address_; }
    void *find(const std::string &symbol) const override { return dlsym(handle_, symbol.c_str()); }
    std::string_view loader() const override { return "dlopen"; }
    void set_address(const std::string &symbol) { address_ = lookup(symbol); }

private:
    void *handle_;
    std::shared_ptr<const OpenFile> file_;  // what it was loaded from, when a file
    std::optional<std::pair<dev_t, ino_t>> file_id_;
    void *address_ = nullptr;
};

// Code the JIT mapped itself (mapped_object.h); unmapped when destroyed. The mappings hold the
// file: it need not stay open.
class MappedCode : public JitCode {
public:
    explicit MappedCode(std::unique_ptr<MappedObject> object) : object_(std::move(object)) {}

    void *address() const override { return address_; }
    void *find(const std::string &symbol) const override { return object_->symbol(symbol); }
    std::string_view loader() const override { return "mapped"; }
    void set_address(const std::string &symbol) { address_ = lookup(symbol); }

private:
    std::unique_ptr<MappedObject> object_;
    void *address_ = nullptr;
};

// Whether TESSERA_JIT_LOADER leaves the loading to the JIT (unset) or asks for dlopen, whose
// code a debugger sees.
bool jit_maps_itself() {
    const char *loader = std::getenv("TESSERA_JIT_LOADER");
    if (!loader || !*loader) return true;
    if (std::string_view(loader) == "dlopen") return false;
    user_error("TESSERA_JIT_LOADER=", loader, " is not a loader: set it to dlopen (the system's loader, whose code a debugger ",
               "sees), or unset it.");
}

// Fills `code`'s import table and finds its entry.
template <class Code>
std::unique_ptr<JitCode> with_imports(std::unique_ptr<Code> code, const std::string &symbol) {
    if (auto *table = static_cast<void **>(code->find(kImportTable)))
        for (size_t k = 0; k < kImportCount; ++k) table[k] = kImports[k].address;
    code->set_address(symbol);
    return code;
}

// The host CPU as codegen sees it (codegen::host_cpu also initializes LLVM's native target).
// Machine code at level Default (AOT objects use Aggressive): JIT compile time counts.
// Position-independent code in the small code model, as in any shared library: calls into libc
// and libm go through the procedure linkage table the linker makes, wherever those lie.
llvm::orc::JITTargetMachineBuilder jit_machine_builder() {
    codegen::CpuTarget host = codegen::host_cpu();
    llvm::orc::JITTargetMachineBuilder b{llvm::Triple(host.triple)};
    b.setCPU(host.cpu);
    llvm::SubtargetFeatures features(host.features);
    b.addFeatures(features.getFeatures());
    b.setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
    b.setRelocationModel(llvm::Reloc::PIC_);
    b.setCodeModel(llvm::CodeModel::Small);
    b.getOptions().AllowFPOpFusion = llvm::FPOpFusion::Standard;
    return b;
}

// A private directory for one link's files, removed with them.
class LinkDirectory {
public:
    explicit LinkDirectory(const std::string &symbol) {
        const char *tmp = std::getenv("TMPDIR");
        std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/tessera-link-XXXXXX";
        if (!mkdtemp(pattern.data()))  // the environment's, not a bug: said as a user error
            user_error("the JIT cannot create a directory to link ", symbol, " in (", pattern, "): ", std::strerror(errno),
                       ". Set TMPDIR to a directory you can write.");
        path_ = pattern;
    }
    ~LinkDirectory() {
        for (const std::string &f : files_) ::unlink(f.c_str());
        ::rmdir(path_.c_str());
    }
    std::string file(const std::string &name) { return files_.emplace_back(path_ + "/" + name); }

private:
    std::string path_;
    std::vector<std::string> files_;
};

void write_file(const std::string &path, std::string_view bytes, const std::string &symbol) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    bool ok = fd >= 0 && write_all(fd, bytes);
    if (fd >= 0) ok = (::close(fd) == 0) && ok;
    if (!ok) internal_error("cannot write ", path, " to link ", symbol, ": ", std::strerror(errno));
}

std::string read_file(const std::string &path, const std::string &symbol) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    std::string out;
    bool ok = fd >= 0 && read_all(fd, out);
    if (fd >= 0) ::close(fd);
    if (!ok) internal_error("cannot read the shared object lld wrote for ", symbol, " at ", path, ": ", std::strerror(errno));
    return out;
}

// The file of the libm this process uses, so that loaded code finds it where the process does
// not make it global (a library loaded RTLD_LOCAL that alone links libm); empty if unknown.
const std::string &libm_path() {
    static const std::string path = [] {
        Dl_info info{};
        double (*cosine)(double) = &::cos;
        return dladdr(reinterpret_cast<void *>(cosine), &info) && info.dli_fname ? std::string(info.dli_fname) : std::string();
    }();
    return path;
}

// A memory file holding `bytes`, sealed against any change, executable where the kernel asks
// (MFD_EXEC, Linux 6.3); -1 where memory files are refused.
int sealed_memory_file(std::string_view bytes) {
    constexpr unsigned kExec = 0x10;  // MFD_EXEC, which older headers lack
    int fd = memfd_create("tessera-jit", MFD_CLOEXEC | MFD_ALLOW_SEALING | kExec);
    if (fd < 0 && errno == EINVAL) fd = memfd_create("tessera-jit", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    bool ok = write_all(fd, bytes);
    if (ok) ok = fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) == 0;
    if (!ok) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// dlopen of the open file `fd` by /proc/self/fd/`fd`; on failure, `why` says why.
void *dlopen_descriptor(int fd, std::string &why) {
    std::string path = "/proc/self/fd/" + std::to_string(fd);
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) why = dlerror();
    return handle;
}

} // namespace

void *JitCode::lookup(const std::string &symbol) const {
    void *p = find(symbol);
    if (!p) internal_error("the loaded code has no symbol ", symbol);
    return p;
}

std::unique_ptr<llvm::TargetMachine> jit_target_machine() {
    static const llvm::orc::JITTargetMachineBuilder builder = jit_machine_builder();
    auto tm = llvm::orc::JITTargetMachineBuilder(builder).createTargetMachine();
    if (!tm) internal_error("could not create the JIT's TargetMachine: ", message(tm.takeError()));
    return std::move(*tm);
}

void jit_route_imports(llvm::Module &module) {
    llvm::LLVMContext &context = module.getContext();
    llvm::ArrayType *table_type = llvm::ArrayType::get(llvm::PointerType::get(context, 0), kImportCount);
    llvm::GlobalVariable *table = nullptr;
    for (size_t k = 0; k < kImportCount; ++k) {
        llvm::Function *f = module.getFunction(kImports[k].name);
        if (!f) continue;
        if (!f->isDeclaration()) internal_error("the module defines ", kImports[k].name, ", which the runtime provides");
        if (!table)
            table = new llvm::GlobalVariable(module, table_type, /*isConstant=*/false, llvm::GlobalValue::ExternalLinkage,
                                             llvm::Constant::getNullValue(table_type), kImportTable);
        std::vector<llvm::CallBase *> calls;
        for (llvm::User *u : f->users()) {
            auto *call = llvm::dyn_cast<llvm::CallBase>(u);
            if (!call || call->getCalledOperand() != f)
                internal_error("the module takes the address of ", kImports[k].name, " instead of calling it");
            calls.push_back(call);
        }
        for (llvm::CallBase *call : calls) {
            llvm::IRBuilder<> b(call);
            llvm::Value *slot = b.CreateConstInBoundsGEP2_64(table_type, table, 0, k);
            call->setCalledOperand(b.CreateLoad(b.getPtrTy(), slot, kImports[k].name));
        }
        f->eraseFromParent();
    }
}

std::string jit_link_objects(const std::vector<std::string> &objects, const std::string &symbol) {
    LinkDirectory dir(symbol);
    std::vector<std::string> inputs;
    for (size_t k = 0; k < objects.size(); ++k) {
        inputs.push_back(dir.file("part" + std::to_string(k) + ".o"));
        write_file(inputs.back(), objects[k], symbol);
    }
    std::string output = dir.file(symbol + ".so");
    // -Bsymbolic: the code's references to its own functions and variables bind to them, never
    // to a same-named symbol of the process. -z now: everything is resolved when it loads.
    // --no-rosegment and -z norelro: two segments (code and constants; data), so that dlopen
    // maps two ranges and protects none again: each system call counts in a new process's first
    // hit. (Read-only relocations would protect nothing here: the import table is data the
    // loader writes.)
    std::vector<const char *> args = {"ld.lld", "-shared", "-Bsymbolic", "-z", "now", "-z", "norelro", "--no-rosegment",
                                      "--eh-frame-hdr", "--hash-style=gnu", "--build-id=none", "--threads=1", "-o",
                                      output.c_str()};
    for (const std::string &in : inputs) args.push_back(in.c_str());
    // libm as needed: named only by code that calls it (exp, pow...), so that loading the rest
    // sets up no dependency.
    if (!libm_path().empty()) {
        args.push_back("--as-needed");
        args.push_back(libm_path().c_str());
    }
    std::string errors;
    llvm::raw_string_ostream out(errors), err(errors);
    static std::mutex lld_mutex;  // lld keeps its state in globals
    lld::Result r;
    {
        std::lock_guard<std::mutex> lock(lld_mutex);
        r = lld::lldMain(args, out, err, {{lld::Gnu, &lld::elf::link}});
    }
    if (r.retCode != 0) internal_error("lld could not link the objects of ", symbol, ": ", errors);
    return read_file(output, symbol);
}

OpenFile::~OpenFile() {
    if (fd_ >= 0) ::close(fd_);
}

std::unique_ptr<JitCode> jit_load_shared_object(std::string_view shared_object, const std::string &symbol,
                                                std::shared_ptr<const OpenFile> file) {
    std::string why, refused;
#if defined(__x86_64__)
    // Mapped by the JIT (mapped_object.h) from `file`, or where that is mounted noexec or there is
    // none, from a sealed memory file the bytes are copied into. Its bytes were verified, and
    // nothing writes a cache entry in place (a new one is renamed over it).
    if (jit_maps_itself()) {
        std::unique_ptr<MappedObject> mapped;
        if (file) mapped = map_shared_object(file->fd(), shared_object, refused);
        if (!mapped)
            if (int fd = sealed_memory_file(shared_object); fd >= 0) {
                OpenFile memory(fd, dev_t(0), ino_t(0));
                mapped = map_shared_object(fd, shared_object, refused);
            }
        if (mapped) return with_imports(std::make_unique<MappedCode>(std::move(mapped)), symbol);
        log_line(LogTopic::Compile, "the JIT's loader refused the code of " + symbol + " (" + refused + "): dlopen loads it");
    }
#endif
    void *handle = nullptr;
    // By dlopen: from `file`, by its own descriptor, which the code keeps open while it lives (the
    // path it is loaded by must stay unique meanwhile, as above), unless live code was loaded from
    // that file already (the same entry twice in one process; sharing that code would share its
    // globals, a GPU entry's runtime pointer).
    std::optional<std::pair<dev_t, ino_t>> file_id;
    if (file) {
        std::lock_guard<std::mutex> lock(loaded_files().mutex);
        if (loaded_files().files.insert({file->device(), file->inode()}).second) file_id = std::pair(file->device(), file->inode());
    }
    // It may not map where the cache's file system is mounted noexec.
    if (file_id) handle = dlopen_descriptor(file->fd(), why);
    if (!handle && file_id) {
        std::lock_guard<std::mutex> lock(loaded_files().mutex);
        loaded_files().files.erase(*file_id);
        file_id.reset();
    }
    // The memory file is sealed before it is mapped: what dlopen maps is the bytes linked or
    // verified here. Where the kernel refuses executable memory files (vm.memfd_noexec), a
    // private temporary file serves instead.
    if (!handle) {
        file.reset();
        if (int fd = sealed_memory_file(shared_object); fd >= 0) {
            file = std::make_shared<OpenFile>(fd, dev_t(0), ino_t(0));
            handle = dlopen_descriptor(fd, why);
            if (!handle) file.reset();
        }
    }
    if (!handle) {
        LinkDirectory dir(symbol);
        std::string path = dir.file(symbol + ".so");
        write_file(path, shared_object, symbol);
        handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle)
            internal_error("the code of ", symbol, " could not be loaded: ", dlerror(), why.empty() ? "" : " (and from memory: " + why + ")",
                           refused.empty() ? "" : " (and by the JIT's loader: " + refused + ")");
    }
    return with_imports(std::make_unique<SharedObject>(handle, std::move(file), file_id), symbol);
}

} // namespace tessera::runtime
