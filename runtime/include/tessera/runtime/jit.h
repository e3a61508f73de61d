// The JIT's linker and loader. A compile's relocatable objects (made by jit_target_machine()'s
// TargetMachines: position-independent code) are linked by lld, in this process, into one shared
// object; the shared object is what the compile cache stores, and the JIT maps it itself
// (runtime/src/mapped_object.h), from the very bytes that were linked or verified:
//
//   compile:   module --jit_route_imports--> objects --jit_link_objects--> shared object
//   miss, hit: shared object --jit_load_shared_object--> JitCode (mapped, imports filled)
//
// A miss maps it from a sealed memory file; a hit from the cache entry's own file, which begins
// with it (a copy into a memory file took 35 us of a new process's first hit).
//
// Why a loader of its own, and not glibc's dlopen, LLVM's RuntimeDyld or ORC: a new process's
// first cache hit is what a framework user waits for in every worker. There RuntimeDyld took
// 0.2-0.3 ms (the first touches of its code in libLLVM), ORC's LLJIT 0.6 ms more to set up, and
// dlopen 76 us of blur's 0.2 ms hit, most of it on what these objects do not need (opening the
// file again by /proc/self/fd/N, a link map, the debugger's and unwinder's lists); with the JIT's
// own mapping the hit's load phase took half as long (docs/cache.md). Objects it refuses (an initializer, say) are loaded by
// dlopen, and so is everything when TESSERA_JIT_LOADER=dlopen (for a debugger). The link runs
// once per compile, on a miss.
//
// Generated code calls the runtime's buffer pool and the OpenMP runtime through a table of
// pointers the loader fills (jit_route_imports), not by name: a Python module loaded
// RTLD_LOCAL does not show them to a library loaded later, and a cached object must hold no
// address of the process that compiled it. libc's and libm's functions are called by name.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace tessera::runtime {

// Loaded code; unloaded when destroyed.
class JitCode {
public:
    virtual ~JitCode() = default;
    virtual void *address() const = 0;
    // The address of another symbol the code defines (e.g. the entry's `_gpu_runtime` global,
    // which the loader sets); nullptr when it has none.
    virtual void *find(const std::string &symbol) const = 0;
    // find(symbol), or an InternalError when it has none.
    void *lookup(const std::string &symbol) const;
    // Which loader mapped it: "mapped" (the JIT itself) or "dlopen" (jit_load_shared_object).
    virtual std::string_view loader() const = 0;
};

// A TargetMachine matching the JIT's (host CPU and features, machine-code level Default,
// position-independent code for a shared object).
std::unique_ptr<llvm::TargetMachine> jit_target_machine();

// Makes `module`'s calls of the runtime's and libomp's functions (codegen::kBufferPoolAllocSymbol,
// __kmpc_fork_call, ...) indirect, through the table jit_load_shared_object fills:
//
//   call void @__kmpc_fork_call(ptr @loc, i32 2, ptr @body, ...)
//     =>  %f = load ptr, ptr getelementptr ([9 x ptr], ptr @tessera_jit_imports, i64 0, i64 K)
//         call void %f(ptr @loc, i32 2, ptr @body, ...)
//
// Run before the module is optimized and split (the table is defined in partition 0).
void jit_route_imports(llvm::Module &module);

// Links the objects of one compile into a shared object (its bytes): what one object defines
// resolves the others' references to it. `symbol` names the compile in errors. lld runs in this
// process under a lock of its own (it keeps global state); machine code is generated before,
// by the caller's threads, with no lock held.
std::string jit_link_objects(const std::vector<std::string> &objects, const std::string &symbol);

// A file kept open, closed when its last owner goes, with the device and inode fstat gave.
class OpenFile {
public:
    OpenFile(int fd, dev_t device, ino_t inode) : fd_(fd), device_(device), inode_(inode) {}
    ~OpenFile();
    OpenFile(const OpenFile &) = delete;
    OpenFile &operator=(const OpenFile &) = delete;
    int fd() const { return fd_; }
    dev_t device() const { return device_; }
    ino_t inode() const { return inode_; }

private:
    int fd_;
    dev_t device_;
    ino_t inode_;
};

// Loads a shared object made by jit_link_objects and returns the code at `symbol`: the JIT maps
// it (its symbols its own: two compiles may define the same ones) from `file`, an open file that
// begins with these very bytes (a compile cache entry, verified); else from a sealed memory file
// they are copied into; dlopen (RTLD_LOCAL) where the JIT's loader refuses it. Then the import
// table is filled. A UserError for a TESSERA_JIT_LOADER that names no loader; an InternalError,
// saying why, when it does not load.
std::unique_ptr<JitCode> jit_load_shared_object(std::string_view shared_object, const std::string &symbol,
                                                std::shared_ptr<const OpenFile> file = nullptr);

} // namespace tessera::runtime
