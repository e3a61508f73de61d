#include "mapped_object.h"

#include <dlfcn.h>
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>

namespace tessera::runtime {
namespace {

constexpr uint64_t kPage = 4096;  // x86-64's, and lld's page size for it
uint64_t page_down(uint64_t x) { return x & ~(kPage - 1); }
uint64_t page_up(uint64_t x) { return page_down(x + kPage - 1); }

// A `T` read from `bytes` at `offset`; nullopt when it does not lie wholly inside.
template <class T>
std::optional<T> read_at(std::string_view bytes, uint64_t offset) {
    if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return std::nullopt;
    T t;
    std::memcpy(&t, bytes.data() + offset, sizeof(T));
    return t;
}

int protection(const Elf64_Phdr &p) {
    return (p.p_flags & PF_R ? PROT_READ : 0) | (p.p_flags & PF_W ? PROT_WRITE : 0) | (p.p_flags & PF_X ? PROT_EXEC : 0);
}

// What the object says of itself, read from its bytes (hot in the cache, where the mapped pages
// would each fault in).
struct Layout {
    std::vector<Elf64_Phdr> loads;  // ascending addresses, no overlap
    std::optional<Elf64_Phdr> dynamic, relro;

    // The file offset of the `size` bytes at address `address`, when the file holds them.
    std::optional<uint64_t> offset_of(uint64_t address, uint64_t size) const {
        for (const Elf64_Phdr &p : loads)
            if (address >= p.p_vaddr && address - p.p_vaddr <= p.p_filesz && p.p_filesz - (address - p.p_vaddr) >= size)
                return p.p_offset + (address - p.p_vaddr);
        return std::nullopt;
    }
    // Whether the 8 bytes at `address` lie in a writable segment (a relocation's target).
    bool writable(uint64_t address) const {
        return std::any_of(loads.begin(), loads.end(), [&](const Elf64_Phdr &p) {
            return (p.p_flags & PF_W) && address >= p.p_vaddr && address - p.p_vaddr <= p.p_memsz && p.p_memsz - (address - p.p_vaddr) >= 8;
        });
    }
};

// The dynamic section's entries that matter here.
struct Dynamic {
    uint64_t rela = 0, rela_size = 0, rela_entry = sizeof(Elf64_Rela);
    uint64_t plt_rela = 0, plt_rela_size = 0, plt_rela_kind = DT_RELA;
    uint64_t symbols = 0, symbol_entry = sizeof(Elf64_Sym), strings = 0, strings_size = 0;
    uint64_t versions = 0, version_needs = 0, version_need_count = 0;
    std::vector<uint64_t> needed;  // offsets of library names in the string table
};

} // namespace

MappedObject::~MappedObject() {
    if (mapping_) ::munmap(mapping_, span_);
    for (void *library : libraries_) dlclose(library);
}

void *MappedObject::symbol(std::string_view name) const {
    for (const auto &[n, address] : symbols_)
        if (n == name) return address;
    return nullptr;
}

std::unique_ptr<MappedObject> map_shared_object(int fd, std::string_view bytes, std::string &why) {
    auto refuse = [&](std::string reason) {
        why = std::move(reason);
        return std::unique_ptr<MappedObject>();
    };
#if !defined(__x86_64__)
    (void)fd;
    (void)bytes;
    return refuse("the JIT maps shared objects itself on x86-64 only");
#else
    std::optional<Elf64_Ehdr> header = read_at<Elf64_Ehdr>(bytes, 0);
    if (!header || std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 || header->e_ident[EI_CLASS] != ELFCLASS64 ||
        header->e_ident[EI_DATA] != ELFDATA2LSB || header->e_type != ET_DYN || header->e_machine != EM_X86_64 ||
        header->e_phentsize != sizeof(Elf64_Phdr) || header->e_phoff > bytes.size())
        return refuse("it is not an x86-64 ELF shared object");

    // Segments.
    Layout layout;
    for (uint64_t k = 0; k < header->e_phnum; ++k) {
        std::optional<Elf64_Phdr> p = read_at<Elf64_Phdr>(bytes, header->e_phoff + k * sizeof(Elf64_Phdr));
        if (!p) return refuse("its program headers are cut off");
        switch (p->p_type) {
        case PT_LOAD:
            if (p->p_filesz > p->p_memsz || p->p_offset > bytes.size() || bytes.size() - p->p_offset < p->p_filesz ||
                (p->p_vaddr - p->p_offset) % kPage != 0 || p->p_memsz > (uint64_t(1) << 32) ||
                (!layout.loads.empty() && p->p_vaddr < layout.loads.back().p_vaddr + layout.loads.back().p_memsz))
                return refuse("a loadable segment lies outside the file or out of order");
            if ((p->p_flags & PF_W) && (p->p_flags & PF_X)) return refuse("a segment is both writable and executable");
            if (p->p_memsz > p->p_filesz && !(p->p_flags & PF_W)) return refuse("a read-only segment has zero-filled memory");
            layout.loads.push_back(*p);
            break;
        case PT_DYNAMIC: layout.dynamic = p; break;
        case PT_GNU_RELRO: layout.relro = p; break;
        case PT_GNU_STACK:
            if (p->p_flags & PF_X) return refuse("it asks for an executable stack");
            break;
        case PT_TLS: return refuse("it has thread-local storage");
        case PT_INTERP: return refuse("it names an interpreter");
        default: break;  // PT_PHDR, PT_GNU_EH_FRAME, PT_NOTE: nothing to do
        }
    }
    if (layout.loads.empty() || !layout.dynamic) return refuse("it has no loadable or no dynamic segment");

    // The dynamic section.
    Dynamic d;
    for (uint64_t at = layout.dynamic->p_offset;; at += sizeof(Elf64_Dyn)) {
        if (at - layout.dynamic->p_offset >= layout.dynamic->p_filesz) return refuse("its dynamic section has no end");
        std::optional<Elf64_Dyn> e = read_at<Elf64_Dyn>(bytes, at);
        if (!e) return refuse("its dynamic section is cut off");
        uint64_t v = e->d_un.d_val;
        bool end = false;
        switch (e->d_tag) {
        case DT_NULL: end = true; break;
        case DT_NEEDED: d.needed.push_back(v); break;
        case DT_RELA: d.rela = v; break;
        case DT_RELASZ: d.rela_size = v; break;
        case DT_RELAENT: d.rela_entry = v; break;
        case DT_JMPREL: d.plt_rela = v; break;
        case DT_PLTRELSZ: d.plt_rela_size = v; break;
        case DT_PLTREL: d.plt_rela_kind = v; break;
        case DT_SYMTAB: d.symbols = v; break;
        case DT_SYMENT: d.symbol_entry = v; break;
        case DT_STRTAB: d.strings = v; break;
        case DT_STRSZ: d.strings_size = v; break;
        case DT_VERSYM: d.versions = v; break;
        case DT_VERNEED: d.version_needs = v; break;
        case DT_VERNEEDNUM: d.version_need_count = v; break;
        case DT_FLAGS:
            if (v & (DF_TEXTREL | DF_STATIC_TLS)) return refuse("it relocates its code or uses static TLS");
            break;
        // What a loader that runs no initializer and binds every symbol before the code runs
        // may pass over (DT_PLTGOT: the table lazy binding would fill).
        case DT_PLTGOT: case DT_FLAGS_1: case DT_RELACOUNT: case DT_GNU_HASH: case DT_HASH: case DT_SYMBOLIC: case DT_BIND_NOW:
        case DT_DEBUG: case DT_SONAME: case DT_VERDEF: case DT_VERDEFNUM: break;
        default:
            return refuse("its dynamic section has tag " + std::to_string(e->d_tag) +
                          " (initializers, finalizers, or another feature this loader lacks)");
        }
        if (end) break;
    }
    if (d.rela_entry != sizeof(Elf64_Rela) || d.plt_rela_kind != DT_RELA || d.symbol_entry != sizeof(Elf64_Sym))
        return refuse("it has relocations without addends or entries of unusual size");
    std::optional<uint64_t> strings = layout.offset_of(d.strings, d.strings_size);
    std::optional<uint64_t> symbols = layout.offset_of(d.symbols, 0);
    if (!strings || !symbols) return refuse("its symbol or string table lies outside the file");
    // The number of dynamic symbols, from the section header of .dynsym (lld writes section
    // headers; the dynamic section does not say it).
    uint64_t symbol_count = 0;
    if (header->e_shentsize != sizeof(Elf64_Shdr) || header->e_shoff > bytes.size())
        return refuse("it has no section headers to count its symbols by");
    for (uint64_t k = 0; k < header->e_shnum; ++k) {
        std::optional<Elf64_Shdr> s = read_at<Elf64_Shdr>(bytes, header->e_shoff + k * sizeof(Elf64_Shdr));
        if (!s) return refuse("its section headers are cut off");
        if (s->sh_type == SHT_DYNSYM && s->sh_offset == *symbols) symbol_count = s->sh_size / sizeof(Elf64_Sym);
    }
    if (!layout.offset_of(d.symbols, symbol_count * sizeof(Elf64_Sym))) return refuse("its symbol table lies outside the file");
    auto string_at = [&](uint64_t offset) -> std::optional<std::string_view> {
        if (offset >= d.strings_size) return std::nullopt;
        std::string_view table = bytes.substr(*strings, d.strings_size);
        size_t end = table.find('\0', offset);
        if (end == std::string_view::npos) return std::nullopt;
        return table.substr(offset, end - offset);
    };
    auto symbol_at = [&](uint64_t index) { return read_at<Elf64_Sym>(bytes, *symbols + index * sizeof(Elf64_Sym)); };

    // The version a symbol was linked against (log@GLIBC_2.29), from .gnu.version and
    // .gnu.version_r; nullopt when it names none.
    auto version_of = [&](uint64_t index) -> std::optional<std::string_view> {
        if (!d.versions) return std::nullopt;
        std::optional<uint64_t> at = layout.offset_of(d.versions + index * 2, 2);
        std::optional<uint16_t> version = at ? read_at<uint16_t>(bytes, *at) : std::nullopt;
        if (!version || (*version & 0x7fff) <= 1) return std::nullopt;  // local or global: unversioned
        std::optional<uint64_t> need_at = layout.offset_of(d.version_needs, sizeof(Elf64_Verneed));
        for (uint64_t n = 0; need_at && n < d.version_need_count; ++n) {
            std::optional<Elf64_Verneed> need = read_at<Elf64_Verneed>(bytes, *need_at);
            if (!need) return std::nullopt;
            uint64_t aux_at = *need_at + need->vn_aux;
            for (uint64_t a = 0; a < need->vn_cnt; ++a) {
                std::optional<Elf64_Vernaux> aux = read_at<Elf64_Vernaux>(bytes, aux_at);
                if (!aux) return std::nullopt;
                if (aux->vna_other == (*version & 0x7fff)) return string_at(aux->vna_name);
                aux_at += aux->vna_next;
            }
            if (!need->vn_next) break;
            *need_at += need->vn_next;
        }
        return std::nullopt;
    };

    // The mappings: the whole span from the file with the first segment's protection, then each
    // further segment over its part of it, as glibc's loader does.
    auto object = std::unique_ptr<MappedObject>(new MappedObject);
    const Elf64_Phdr &first = layout.loads.front(), &last = layout.loads.back();
    uint64_t low = page_down(first.p_vaddr), high = page_up(last.p_vaddr + last.p_memsz);
    void *mapping = ::mmap(nullptr, high - low, protection(first), MAP_PRIVATE, fd, off_t(page_down(first.p_offset)));
    if (mapping == MAP_FAILED) return refuse(std::string("the file cannot be mapped executable: ") + std::strerror(errno));
    object->mapping_ = mapping;
    object->span_ = high - low;
    char *base = static_cast<char *>(mapping) - low;
    for (size_t k = 0; k < layout.loads.size(); ++k) {
        const Elf64_Phdr &p = layout.loads[k];
        uint64_t start = page_down(p.p_vaddr), file_end = p.p_vaddr + p.p_filesz, end = page_up(p.p_vaddr + p.p_memsz);
        if (k > 0) {
            // A hole between segments maps nothing.
            uint64_t previous_end = page_up(layout.loads[k - 1].p_vaddr + layout.loads[k - 1].p_memsz);
            if (start > previous_end && ::mprotect(base + previous_end, start - previous_end, PROT_NONE) != 0)
                return refuse(std::string("protecting a hole: ") + std::strerror(errno));
            if (p.p_filesz > 0 && ::mmap(base + start, page_up(file_end) - start, protection(p), MAP_PRIVATE | MAP_FIXED, fd,
                                          off_t(page_down(p.p_offset))) == MAP_FAILED)
                return refuse(std::string("mapping a segment: ") + std::strerror(errno));
        }
        if (p.p_memsz > p.p_filesz) {
            // Zero-filled memory (.bss): the rest of the last page the file fills, then pages of zeros.
            uint64_t zero_from = p.p_filesz > 0 ? page_up(file_end) : start;
            if (p.p_filesz > 0) std::memset(base + file_end, 0, zero_from - file_end);
            if (end > zero_from && ::mmap(base + zero_from, end - zero_from, protection(p), MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1,
                                          0) == MAP_FAILED)
                return refuse(std::string("mapping zero-filled memory: ") + std::strerror(errno));
        }
    }

    // Its symbols: what it defines binds to itself (it is linked -Bsymbolic); what it does not,
    // in the process's global scope, then in the libraries it names, as for code dlopen'd
    // RTLD_LOCAL. Resolved once each.
    std::vector<std::optional<uint64_t>> resolved(symbol_count);
    auto value_of = [&](uint64_t index) -> std::optional<uint64_t> {
        if (index == 0) return 0;
        if (index >= symbol_count) return std::nullopt;
        if (resolved[index]) return resolved[index];
        std::optional<Elf64_Sym> s = symbol_at(index);
        std::optional<std::string_view> name = s ? string_at(s->st_name) : std::nullopt;
        if (!s || !name) return std::nullopt;
        int type = ELF64_ST_TYPE(s->st_info);
        if (type == STT_TLS || type == STT_GNU_IFUNC) {
            why = "symbol " + std::string(*name) + " is thread-local or an indirect function";
            return std::nullopt;
        }
        if (s->st_shndx != SHN_UNDEF) return resolved[index] = s->st_shndx == SHN_ABS ? s->st_value : uint64_t(base) + s->st_value;
        std::string text(*name);
        std::optional<std::string_view> version = version_of(index);
        std::string version_text(version ? *version : std::string_view());
        auto find = [&](void *scope) { return version ? dlvsym(scope, text.c_str(), version_text.c_str()) : dlsym(scope, text.c_str()); };
        void *address = find(RTLD_DEFAULT);
        for (size_t k = 0; !address && k < d.needed.size(); ++k) {
            if (object->libraries_.size() <= k) {
                std::optional<std::string_view> library = string_at(d.needed[k]);
                object->libraries_.push_back(library ? dlopen(std::string(*library).c_str(), RTLD_NOW | RTLD_LOCAL) : nullptr);
            }
            if (object->libraries_[k]) address = find(object->libraries_[k]);
        }
        if (!address && ELF64_ST_BIND(s->st_info) != STB_WEAK) {
            why = "undefined symbol " + text + (version ? "@" + version_text : "");
            return std::nullopt;
        }
        return resolved[index] = uint64_t(address);
    };

    // The relocations, written into the writable segments.
    for (auto [table, size] : {std::pair(d.rela, d.rela_size), std::pair(d.plt_rela, d.plt_rela_size)}) {
        if (!size) continue;
        std::optional<uint64_t> at = layout.offset_of(table, size);
        if (!at) return refuse("its relocations lie outside the file");
        for (uint64_t r = 0; r < size / sizeof(Elf64_Rela); ++r) {
            std::optional<Elf64_Rela> rela = read_at<Elf64_Rela>(bytes, *at + r * sizeof(Elf64_Rela));
            if (!rela) return refuse("its relocations are cut off");
            uint32_t type = ELF64_R_TYPE(rela->r_info);
            if (type == R_X86_64_NONE) continue;
            if (!layout.writable(rela->r_offset)) return refuse("a relocation writes outside its writable segments");
            uint64_t value = 0;
            if (type == R_X86_64_RELATIVE) {
                value = uint64_t(base) + uint64_t(rela->r_addend);
            } else if (type == R_X86_64_64 || type == R_X86_64_GLOB_DAT || type == R_X86_64_JUMP_SLOT) {
                why.clear();
                std::optional<uint64_t> s = value_of(ELF64_R_SYM(rela->r_info));
                if (!s) return refuse(why.empty() ? "a relocation names a symbol it does not have" : why);
                value = type == R_X86_64_64 ? *s + uint64_t(rela->r_addend) : *s;  // psABI: S + A, S, S
            } else {
                return refuse("relocation type " + std::to_string(type) + " is not one this loader applies");
            }
            std::memcpy(base + rela->r_offset, &value, sizeof(value));
        }
    }
    if (layout.relro) {
        uint64_t from = page_down(layout.relro->p_vaddr), to = page_down(layout.relro->p_vaddr + layout.relro->p_memsz);
        if (to > from && ::mprotect(base + from, to - from, PROT_READ) != 0)
            return refuse(std::string("protecting relocated constants: ") + std::strerror(errno));
    }

    // The symbols it defines, for symbol().
    for (uint64_t k = 1; k < symbol_count; ++k) {
        std::optional<Elf64_Sym> s = symbol_at(k);
        std::optional<std::string_view> name = s ? string_at(s->st_name) : std::nullopt;
        if (s && name && !name->empty() && s->st_shndx != SHN_UNDEF && ELF64_ST_BIND(s->st_info) != STB_LOCAL)
            object->symbols_.emplace_back(std::string(*name), s->st_shndx == SHN_ABS ? reinterpret_cast<void *>(s->st_value)
                                                                                     : base + s->st_value);
    }
    return object;
#endif
}

} // namespace tessera::runtime
