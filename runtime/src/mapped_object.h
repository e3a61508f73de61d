// Maps a shared object that jit_link_objects linked, without the system's loader: its segments
// from an open file that begins with its bytes, its relocations applied, its symbols looked up in
// a table made of its dynamic symbols.
//
//   entry file (fd) ──map_shared_object(fd, verified bytes)──▶ MappedObject
//     mmap  base         .. +0x2000   R X   (the file from offset 0: headers, constants, code)
//     mmap  base+0x2000  .. +0x3000   RW    (the file from 0x1000: the import table, libomp's
//                                            source locations; the rest of the page zeroed)
//     R_X86_64_RELATIVE  *(base+0x2c40) = base + 0x380
//     symbol("tessera_pipeline_0") = base + 0x12c0
//
// Why not dlopen: a new process's first cache hit is what a framework user waits for in every
// worker, and dlopen spent 76 us of blur's ~0.2 ms hit there, most of it on what this object
// does not need: opening the file again by /proc/self/fd/N (27 us in a process that has loaded
// libLLVM), a link map, the debugger's notification, the unwinder's table of objects. The
// objects jit_link_objects makes have a narrow form, and what falls outside it is refused
// (nullptr and a reason), for the caller to load with dlopen:
// - ELF64, little-endian, x86-64 (the only host this loader is tested on), a shared object;
// - loadable segments, a dynamic one; no TLS, no interpreter, no executable stack;
// - relocations with addends: RELATIVE, 64, GLOB_DAT, JUMP_SLOT (lld's -z now), none in a
//   read-only segment;
// - no initializers or finalizers (generated code has none: it is run only through its entry);
// - its undefined symbols (memset, expf...) resolved as RTLD_LOCAL code's are: in the
//   process's global scope, then in the libraries it names (DT_NEEDED, opened as dlopen would).
// Code mapped this way is not in the system loader's list: a debugger does not see its symbols
// and an exception cannot unwind through it (nothing generated code calls throws). Set
// TESSERA_JIT_LOADER=dlopen to load with dlopen for a debugger (runtime/jit.h).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::runtime {

class MappedObject {
public:
    MappedObject(const MappedObject &) = delete;
    MappedObject &operator=(const MappedObject &) = delete;
    ~MappedObject();  // unmaps it, and closes the libraries it opened

    // The address of a symbol it defines; nullptr when it defines none of that name.
    void *symbol(std::string_view name) const;

private:
    friend std::unique_ptr<MappedObject> map_shared_object(int fd, std::string_view bytes, std::string &why);
    MappedObject() = default;

    void *mapping_ = nullptr;  // what the mappings cover: span_ bytes
    size_t span_ = 0;
    std::vector<std::pair<std::string, void *>> symbols_;
    std::vector<void *> libraries_;  // dlopen handles of the DT_NEEDED libraries it opened
};

// Maps the shared object `bytes`, which the open file `fd` begins with (the bytes are what was
// verified; the mapping is of the file, which nothing writes in place). nullptr, with `why`
// saying why, when `bytes` falls outside the form above or the file cannot be mapped executable
// (a file system mounted noexec).
std::unique_ptr<MappedObject> map_shared_object(int fd, std::string_view bytes, std::string &why);

} // namespace tessera::runtime
