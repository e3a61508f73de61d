#include "tessera/runtime/compile_cache.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <random>
#include <sstream>

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <llvm/ADT/StringExtras.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/xxhash.h>

#include <tessera/codegen/cpu_target.h>
#include <tessera/pipeline_text.h>
#include <tessera/text_builder.h>

#include "file_io.h"
#include "tessera/runtime/log.h"

namespace tessera::runtime {
namespace {

constexpr const char *kMagic = "TESSERA-CACHE-ENTRY 6";
constexpr const char *kSuffix = ".tobj";
constexpr const char *kTempPrefix = ".tmp.";
// A temporary file this old is a writer's that died: eviction removes it.
constexpr int64_t kStaleTempSeconds = 600;
// How exact an entry's last-use mark (its modification time) is, which orders eviction.
constexpr int64_t kUseMarkSeconds = 60;

struct Counters {
    std::atomic<uint64_t> hits{0}, misses{0}, stores{0}, corrupt{0}, evictions{0}, refused{0};
} g_counters;

// The key's digest (of its text, a few kilobytes).
std::string sha256_hex(std::string_view a) {
    llvm::SHA256 h;
    h.update(llvm::StringRef(a.data(), a.size()));
    std::array<uint8_t, 32> d = h.final();
    return llvm::toHex(d, /*LowerCase=*/true);
}

// An entry's digest: XXH3-128 (LLVM's) of its body. With the key its last line also holds
// (which must be the key looked up), it detects a corrupt, truncated or renamed entry. It is no
// defence against someone who can write the directory, who could rewrite the digest as well:
// the directory's checks are that defence (only its owner may write it). A cryptographic hash
// would add nothing here and costs a new process's first hit dearly: BLAKE3 took 70-80 us on
// its first 10 KB in a process (its CPU dispatch and cold SIMD code), XXH3 3 us.
std::string entry_digest_hex(std::string_view body) {
    llvm::XXH128_hash_t d = llvm::xxh3_128bits(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(body.data()), body.size()));
    std::array<uint8_t, 16> bytes;
    for (int i = 0; i < 8; ++i) {
        bytes[size_t(i)] = uint8_t(d.high64 >> (56 - 8 * i));
        bytes[size_t(8 + i)] = uint8_t(d.low64 >> (56 - 8 * i));
    }
    return llvm::toHex(bytes, /*LowerCase=*/true);  // not printf, cold code in a new process
}

bool is_key(const std::string &s) {
    return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) && !std::isupper(static_cast<unsigned char>(c)); });
}

// "512M", "2G", "1048576" → bytes; nullopt when unreadable.
std::optional<int64_t> parse_size(const std::string &s) {
    char *end = nullptr;
    errno = 0;
    double v = std::strtod(s.c_str(), &end);
    if (errno || end == s.c_str() || v < 0) return std::nullopt;
    std::string unit(end);
    double scale = 1;
    if (unit == "K" || unit == "k" || unit == "KiB") scale = 1024.0;
    else if (unit == "M" || unit == "MiB") scale = 1024.0 * 1024;
    else if (unit == "G" || unit == "GiB") scale = 1024.0 * 1024 * 1024;
    else if (!unit.empty()) return std::nullopt;
    return int64_t(v * scale);
}

// Creates `dir` and its missing parents, 0700.
bool make_directories(const std::string &dir, std::string &error) {
    std::string path;
    std::stringstream parts(dir);
    std::string part;
    if (!dir.empty() && dir[0] == '/') path = "/";
    while (std::getline(parts, part, '/')) {
        if (part.empty()) continue;
        path += part;
        if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
            error = "cannot create " + path + ": " + std::strerror(errno);
            return false;
        }
        path += "/";
    }
    return true;
}

// An entry file: the body, which is the shared object (runtime/jit.h) followed by records, each
// `name length\nvalue\n`, then one line naming the format, the key, the body's digest, the shared
// object's length and the body's:
//
//   <ELF bytes>symbol 18\ntessera_pipeline_0\noutput 6\nblur_y\n...
//   TESSERA-CACHE-ENTRY 6 <key> <digest> 8872 9129\n
//
// The shared object comes first so that the loader maps it from the entry's file itself, the
// very file whose bytes were verified (jit_load_shared_object), with no copy. Lengths, not a
// JSON parser: a new process's first hit parsed JSON metadata in about 30 us of cold code.
struct EntryFile {
    std::string_view key, digest, object_length, body_length;
    std::string_view body;  // what the file holds before its last line
};

struct Record {
    std::string_view name, value;
};

void put_record(std::string &out, std::string_view name, std::string_view value) {
    out.append(name).append(" ").append(std::to_string(value.size())).append("\n").append(value).append("\n");
}

// The records of `body` in order; nullopt when they do not fill it exactly.
std::optional<std::vector<Record>> records_of(std::string_view body) {
    std::vector<Record> out;
    while (!body.empty()) {
        size_t space = body.find(' '), nl = body.find('\n');
        if (space == std::string_view::npos || nl == std::string_view::npos || space > nl) return std::nullopt;
        size_t length = 0;
        auto [end, error] = std::from_chars(body.data() + space + 1, body.data() + nl, length);
        if (error != std::errc() || end != body.data() + nl || length > body.size() - nl - 1 ||
            body.size() - nl - 1 - length < 1 || body[nl + 1 + length] != '\n')
            return std::nullopt;
        out.push_back({body.substr(0, space), body.substr(nl + 1, length)});
        body.remove_prefix(nl + 2 + length);
    }
    return out;
}

template <typename T>
bool number(std::string_view text, T &out) {
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
    return error == std::errc() && end == text.data() + text.size();
}

// The entry `records` describe, or the name of the record that does not read.
std::optional<std::string> read_records(const std::vector<Record> &records, CacheEntry &e) {
    bool symbol = false;
    for (size_t i = 0; i < records.size(); ++i) {
        const auto &[name, value] = records[i];
        bool ok = true;
        if (name == "symbol") symbol = true, e.symbol = value;
        else if (name == "output") e.outputs.emplace_back(value);
        else if (name == "array") e.array_names.emplace_back(value);
        else if (name == "llvm_instructions") ok = number(value, e.llvm_instructions);
        else if (name == "llvm_optimization_level") ok = number(value, e.llvm_optimization_level);
        else if (name == "compile_us") {  // an integer: parsing a double is cold library code
            int64_t us = 0;
            ok = number(value, us);
            e.compile_ms = double(us) / 1000;
        }
        else if (name == "partitions") ok = number(value, e.partitions);
        else if (name == "kernels") ok = number(value, e.kernels);
        else if (name == "ptx") e.ptx = value;
        else if (name == "kernel_function" && i + 1 < records.size() && records[i + 1].name == "kernel_groups")
            e.kernel_names.emplace_back(std::string(value), std::string(records[++i].value));
        else ok = false;
        if (!ok) return std::string(name);
    }
    if (!symbol) return std::string("symbol");
    return std::nullopt;
}

// The entry's parts, from its last line; nullopt when that line is not Tessera's (a truncated
// entry has lost it). Nothing is checked beyond the format's name.
std::optional<EntryFile> split_entry(std::string_view bytes) {
    if (bytes.size() < 2 || bytes.back() != '\n') return std::nullopt;
    size_t start = bytes.rfind('\n', bytes.size() - 2);
    start = start == std::string_view::npos ? 0 : start + 1;
    std::string_view line = bytes.substr(start, bytes.size() - 1 - start);
    std::string_view magic = kMagic;
    if (line.substr(0, magic.size()) != magic || line.size() == magic.size() || line[magic.size()] != ' ') return std::nullopt;
    line.remove_prefix(magic.size() + 1);
    EntryFile f;
    std::string_view *fields[] = {&f.key, &f.digest, &f.object_length, &f.body_length};
    for (size_t k = 0; k < 4; ++k) {
        size_t space = line.find(' ');
        if ((space == std::string_view::npos) != (k == 3)) return std::nullopt;
        *fields[k] = line.substr(0, space);
        line.remove_prefix(k == 3 ? line.size() : space + 1);
    }
    f.body = bytes.substr(0, start);
    return f;
}

// The GNU build id of the loaded file that holds `address`: the note the linker writes
// (--build-id, on by default in Debian's toolchain), a digest of the linked file's contents.
// Read from the mapped program headers, with no system call. Empty when the file has none.
std::string build_id_of(const void *address) {
    struct Search {
        uintptr_t address;
        std::string id;
    } search{reinterpret_cast<uintptr_t>(address), {}};
    dl_iterate_phdr(
        [](dl_phdr_info *info, size_t, void *data) -> int {
            auto *s = static_cast<Search *>(data);
            bool holds = false;
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const ElfW(Phdr) &ph = info->dlpi_phdr[i];
                uintptr_t start = info->dlpi_addr + ph.p_vaddr;
                holds |= ph.p_type == PT_LOAD && s->address >= start && s->address < start + ph.p_memsz;
            }
            if (!holds) return 0;
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const ElfW(Phdr) &ph = info->dlpi_phdr[i];
                if (ph.p_type != PT_NOTE) continue;
                // Notes: a header, the name and the description, each padded to the segment's
                // alignment (4, or 8 for some 64-bit notes).
                size_t align = ph.p_align == 8 ? 8 : 4;
                auto pad = [align](size_t n) { return (n + align - 1) & ~(align - 1); };
                const char *p = reinterpret_cast<const char *>(info->dlpi_addr + ph.p_vaddr);
                const char *end = p + ph.p_memsz;
                while (p + sizeof(ElfW(Nhdr)) <= end) {
                    const auto *note = reinterpret_cast<const ElfW(Nhdr) *>(p);
                    const char *name = p + sizeof(ElfW(Nhdr));
                    const char *desc = name + pad(note->n_namesz);
                    if (desc + note->n_descsz > end) break;
                    if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
                        s->id = llvm::toHex(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(desc), note->n_descsz),
                                            /*LowerCase=*/true);
                        return 1;
                    }
                    p = desc + pad(note->n_descsz);
                }
            }
            return 1;
        },
        &search);
    return search.id;
}

// The identity of the code that compiles, so that a rebuilt Tessera never loads what an older
// build compiled: the build id of the file this function was linked into (the executable or
// the Python module), else that file's size and modification time. Not its path: one build
// run by another path (a relative one from another directory) is the same build.
const std::string &build_identity() {
    static const std::string id = [] {
        if (std::string build_id = build_id_of(reinterpret_cast<void *>(&build_identity)); !build_id.empty())
            return "build-id " + build_id;
        Dl_info info{};
        std::string s = "unknown build";
        if (dladdr(reinterpret_cast<void *>(&build_identity), &info) && info.dli_fname) {
            struct stat st;
            if (stat(info.dli_fname, &st) == 0)
                s = "file of " + std::to_string(st.st_size) + " bytes modified " + std::to_string(int64_t(st.st_mtim.tv_sec)) + "." +
                    std::to_string(int64_t(st.st_mtim.tv_nsec));
        }
        return s;
    }();
    return id;
}

// The host CPU and its features, with the facts scheduling reads: the kernel's description of
// them where it gives one (codegen::host_cpu_identity: a few sysfs reads), else LLVM's CPU name
// and sorted features (about 0.2 ms of cpuid queries in a new process).
const std::string &host_identity() {
    static const std::string id = [] {
        if (const std::string &kernel = codegen::host_cpu_identity(); !kernel.empty()) return "kernel " + kernel;
        codegen::CpuTarget cpu = codegen::host_cpu();
        std::vector<std::string> features;
        std::stringstream fs(cpu.features);
        std::string f;
        while (std::getline(fs, f, ',')) features.push_back(f);
        std::sort(features.begin(), features.end());
        const TargetInfo &info = codegen::host_target_info();
        std::ostringstream s;
        s << cpu.triple << " " << cpu.cpu << " vector " << info.vector_bits << " l1 " << info.l1_bytes << " l2 "
          << info.l2_bytes << " l3 " << info.l3_bytes << " cores " << info.cores << "\n";
        for (const auto &x : features) s << x << ",";
        return s.str();
    }();
    return id;
}

} // namespace

CacheSettings cache_settings_from_environment() {
    CacheSettings s;
    if (const char *v = std::getenv("TESSERA_CACHE")) {
        std::string x(v);
        std::transform(x.begin(), x.end(), x.begin(), [](unsigned char c) { return char(std::tolower(c)); });
        if (x == "0" || x == "off" || x == "false" || x == "no") {
            s.enabled = false;
            s.off_reason = "TESSERA_CACHE=" + std::string(v);
        }
    }
    if (const char *d = std::getenv("TESSERA_CACHE_DIR"); d && *d) s.directory = d;
    else if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x) s.directory = std::string(x) + "/tessera";
    else if (const char *h = std::getenv("HOME"); h && *h) s.directory = std::string(h) + "/.cache/tessera";
    else {
        s.enabled = false;
        s.off_reason = "no cache directory: set TESSERA_CACHE_DIR (or HOME)";
    }
    while (s.directory.size() > 1 && s.directory.back() == '/') s.directory.pop_back();
    if (const char *z = std::getenv("TESSERA_CACHE_SIZE"); z && *z) {
        if (auto bytes = parse_size(z)) s.max_bytes = *bytes;
        else warn_once("TESSERA_CACHE_SIZE=" + std::string(z) + " is not a size (e.g. 512M or 2G); the cache keeps its default bound of 1G.");
    }
    return s;
}

CompileCache::CompileCache(CacheSettings settings) : settings_(std::move(settings)) {
    if (!settings_.enabled) {
        refused_ = settings_.off_reason;
        return;
    }
    const std::string &dir = settings_.directory;
    std::string error;
    struct stat st;
    // Created (with any missing parents) only when it does not exist yet: a new process's first
    // compile otherwise pays a failing mkdir for every component of the path.
    bool exists = stat(dir.c_str(), &st) == 0;
    if (!exists && !make_directories(dir, error)) {
        refused_ = error;
    } else if (!exists && stat(dir.c_str(), &st) != 0) {
        refused_ = "cannot read " + dir + ": " + std::strerror(errno);
    } else {
        checked_ = DirectoryIdentity{st.st_dev, st.st_ino, st.st_uid, st.st_mode};
        if (!S_ISDIR(st.st_mode)) refused_ = dir + " is not a directory";
        else if (st.st_uid != geteuid())
            refused_ = dir + " belongs to another user (uid " + std::to_string(st.st_uid) + ")";
        else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
            char mode[8];
            std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
            refused_ = dir + " is writable by " + ((st.st_mode & S_IWOTH) ? "others" : "its group") + " (mode " + mode + ")";
        }
    }
    if (!refused_.empty()) {
        g_counters.refused++;
        warn_once("the compile cache directory is refused: " + refused_ +
                  ". Tessera compiles without the cache. Use a directory of your own that only you can write "
                  "(chmod 700), or set TESSERA_CACHE_DIR to one.");
        return;
    }
    usable_ = true;
}

bool CompileCache::same_directory() const {
    struct stat now;
    return checked_ && stat(settings_.directory.c_str(), &now) == 0 && now.st_dev == checked_->device &&
           now.st_ino == checked_->inode && now.st_uid == checked_->owner && now.st_mode == checked_->mode;
}

std::string CompileCache::entry_path(const std::string &key) const { return settings_.directory + "/" + key + kSuffix; }

std::optional<CacheEntry> CompileCache::load(const std::string &key) {
    if (!usable_) return std::nullopt;
    std::string path = entry_path(key);
    int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        g_counters.misses++;
        return std::nullopt;
    }
    std::string bytes;
    struct stat st;
    // Owned by the directory's owner, whom the constructor found to be this process's user.
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == checked_->owner && !(st.st_mode & (S_IWGRP | S_IWOTH)) &&
              read_all(fd, bytes, int64_t(st.st_size));
    std::string problem = ok ? "" : "is not a regular file of yours that only you can write, or cannot be read";
    CacheEntry e;
    if (ok) {
        std::optional<EntryFile> f = split_entry(bytes);
        size_t object_length = 0;
        if (!f) problem = "has no valid last line (it is truncated, or not Tessera's)";
        else if (f->key != key) problem = "holds another key";
        else if (std::to_string(f->body.size()) != f->body_length)
            problem = "has the wrong length (" + std::to_string(f->body.size()) + " of " + std::string(f->body_length) + " bytes)";
        else if (entry_digest_hex(f->body) != f->digest) problem = "does not match its digest";
        else if (!number(f->object_length, object_length) || object_length > f->body.size())
            problem = "has unreadable metadata (the shared object's length)";
        else if (std::optional<std::vector<Record>> records = records_of(f->body.substr(object_length)); !records)
            problem = "has unreadable metadata (malformed records)";
        else if (std::optional<std::string> bad = read_records(*records, e))
            problem = "has unreadable metadata (the record " + *bad + ")";
        else {
            bytes.resize(object_length);  // the shared object, which the file begins with
            e.shared_object = std::move(bytes);
        }
    }
    if (!problem.empty()) {
        // Removed only if it is still the file read: another process may have renamed a good
        // entry into place meanwhile.
        struct stat now;
        bool same = fstat(fd, &st) == 0 && lstat(path.c_str(), &now) == 0 && now.st_ino == st.st_ino && now.st_dev == st.st_dev;
        ::close(fd);
        g_counters.corrupt++;
        warn_once("the compile cache entry " + path + " " + problem + ". It was removed and the pipeline is compiled again.");
        if (same) ::unlink(path.c_str());
        return std::nullopt;
    }
    // Used now: least recently used entries are evicted first. Marked to the minute: a hit
    // writes the entry's inode (a journalled write, a tenth of a new process's hit) only when
    // its mark is older than that, so that a burst of processes loading one entry writes it once.
    if (int64_t(time(nullptr)) - int64_t(st.st_mtime) >= kUseMarkSeconds) futimens(fd, nullptr);
    e.file = std::make_shared<OpenFile>(fd, st.st_dev, st.st_ino);  // the loader maps the shared object from it
    g_counters.hits++;
    return e;
}

void CompileCache::store(const std::string &key, const CacheEntry &e) {
    if (!usable_) return;
    std::string body;
    put_record(body, "symbol", e.symbol);
    for (const std::string &o : e.outputs) put_record(body, "output", o);
    for (const std::string &a : e.array_names) put_record(body, "array", a);
    put_record(body, "llvm_instructions", std::to_string(e.llvm_instructions));
    put_record(body, "llvm_optimization_level", std::to_string(e.llvm_optimization_level));
    put_record(body, "compile_us", std::to_string(int64_t(std::llround(e.compile_ms * 1000))));
    put_record(body, "partitions", std::to_string(e.partitions));
    put_record(body, "kernels", std::to_string(e.kernels));
    put_record(body, "ptx", e.ptx);
    for (const auto &[function, groups] : e.kernel_names) {
        put_record(body, "kernel_function", function);
        put_record(body, "kernel_groups", groups);
    }
    body.insert(0, e.shared_object);
    std::string data = body + kMagic + " " + key + " " + entry_digest_hex(body) + " " + std::to_string(e.shared_object.size()) +
                       " " + std::to_string(body.size()) + "\n";
    // A temporary file of this writer's own, renamed over the entry when complete: rename is
    // atomic, so a reader sees the old entry, the new one or none, never a part.
    static std::atomic<uint64_t> counter{0};
    std::random_device rd;
    std::string temp = settings_.directory + "/" + kTempPrefix + key + "." + std::to_string(getpid()) + "." +
                       std::to_string(counter++) + "." + std::to_string(rd());
    int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        warn_once("cannot write the compile cache entry " + temp + ": " + std::strerror(errno) + ". Compiled code is not cached.");
        return;
    }
    bool ok = write_all(fd, data);
    ok = (::close(fd) == 0) && ok;
    if (!ok || ::rename(temp.c_str(), entry_path(key).c_str()) != 0) {
        warn_once("cannot write the compile cache entry " + entry_path(key) + ": " + std::strerror(errno) + ". Compiled code is not cached.");
        ::unlink(temp.c_str());
        return;
    }
    g_counters.stores++;
    evict();
}

void CompileCache::remove(const std::string &key) {
    if (usable_) ::unlink(entry_path(key).c_str());
}

namespace {

struct DirEntry {
    std::string name, path;
    int64_t bytes = 0;
    struct timespec mtime {};
    bool temp = false;
};

std::vector<DirEntry> scan(const std::string &dir) {
    std::vector<DirEntry> out;
    DIR *d = opendir(dir.c_str());
    if (!d) return out;
    while (dirent *ent = readdir(d)) {
        std::string name = ent->d_name;
        bool temp = name.rfind(kTempPrefix, 0) == 0;
        bool entry = name.size() == 64 + std::strlen(kSuffix) && name.compare(64, std::string::npos, kSuffix) == 0 && is_key(name.substr(0, 64));
        if (!temp && !entry) continue;
        DirEntry e;
        e.name = name;
        e.path = dir + "/" + name;
        e.temp = temp;
        struct stat st;
        if (lstat(e.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
        e.bytes = int64_t(st.st_size);
        e.mtime = st.st_mtim;
        out.push_back(e);
    }
    closedir(d);
    return out;
}

} // namespace

void CompileCache::evict() {
    std::vector<DirEntry> entries = scan(settings_.directory);
    int64_t now = int64_t(std::time(nullptr));
    int64_t total = 0;
    std::vector<DirEntry> live;
    for (const DirEntry &e : entries) {
        if (e.temp) {
            if (now - int64_t(e.mtime.tv_sec) > kStaleTempSeconds) ::unlink(e.path.c_str());
            continue;
        }
        total += e.bytes;
        live.push_back(e);
    }
    if (total <= settings_.max_bytes) return;
    std::sort(live.begin(), live.end(), [](const DirEntry &a, const DirEntry &b) {
        return a.mtime.tv_sec != b.mtime.tv_sec ? a.mtime.tv_sec < b.mtime.tv_sec : a.mtime.tv_nsec < b.mtime.tv_nsec;
    });
    for (const DirEntry &e : live) {
        if (total <= settings_.max_bytes) break;
        if (::unlink(e.path.c_str()) == 0) {
            total -= e.bytes;
            g_counters.evictions++;
            log_line(LogTopic::Cache, "evicted " + e.name.substr(0, 16) + " (" + std::to_string(e.bytes) + " bytes, least recently used)");
        }
    }
}

CacheStats CompileCache::stats() const {
    CacheStats s;
    s.directory = settings_.directory;
    s.usable = usable_;
    s.refused_reason = refused_;
    s.max_bytes = settings_.max_bytes;
    if (!usable_) return s;
    for (const DirEntry &e : scan(settings_.directory))
        if (!e.temp) {
            s.entries++;
            s.bytes += e.bytes;
        }
    return s;
}

std::vector<CacheListing> CompileCache::list() const {
    std::vector<CacheListing> out;
    if (!usable_) return out;
    for (const DirEntry &e : scan(settings_.directory)) {
        if (e.temp) continue;
        CacheListing l;
        l.key = e.name.substr(0, 64);
        l.bytes = e.bytes;
        l.last_used_unix_s = int64_t(e.mtime.tv_sec);
        // The outputs, from the records (the entry is not verified for listing).
        int fd = ::open(e.path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        std::string bytes;
        if (fd >= 0) {
            if (!read_all(fd, bytes)) bytes.clear();
            ::close(fd);
        }
        CacheEntry entry;
        size_t object_length = 0;
        if (std::optional<EntryFile> f = split_entry(bytes); f && number(f->object_length, object_length) && object_length <= f->body.size())
            if (std::optional<std::vector<Record>> records = records_of(f->body.substr(object_length));
                records && !read_records(*records, entry))
                l.outputs = std::move(entry.outputs);
        out.push_back(l);
    }
    std::sort(out.begin(), out.end(), [](const CacheListing &a, const CacheListing &b) { return a.last_used_unix_s > b.last_used_unix_s; });
    return out;
}

int64_t CompileCache::clear() {
    int64_t n = 0;
    if (!usable_) return 0;
    for (const DirEntry &e : scan(settings_.directory))
        if (::unlink(e.path.c_str()) == 0 && !e.temp) ++n;
    return n;
}

std::shared_ptr<CompileCache> process_compile_cache() {
    static std::mutex mutex;
    static std::shared_ptr<CompileCache> cache;
    CacheSettings s = cache_settings_from_environment();
    // The directory is checked again when it is no longer the one checked, or its owner or mode
    // changed: a stat per compile, and on the first only the constructor's.
    std::lock_guard<std::mutex> lock(mutex);
    if (!cache || !(cache->settings() == s) || (s.enabled && !cache->same_directory())) cache = std::make_shared<CompileCache>(s);
    return cache;
}

std::string cache_key(const Pipeline &p, const Target &t, const CompileOptions &o) { return cache_key(pipeline_text(p), t, o); }

std::string cache_key(const std::string &text, const Target &t, const CompileOptions &o) {
    TextBuilder s;
    s << "tessera " << TESSERA_VERSION_STRING << "\nllvm " << LLVM_VERSION_STRING << "\nbuild " << build_identity()
      << "\nhost " << host_identity() << "\n";
    s << "target " << int(t.arch) << " cpu " << t.cpu << " features " << t.features << " sm " << t.sm << " emulate "
      << t.emulate << " opt-in " << t.shared_memory_opt_in << "\n";
    s << "options threads " << o.threads << " fast_math " << o.fast_math << " fusion " << o.fusion << " parallel " << o.parallel
      << " vectorize " << o.vectorize << " keep_assembly " << o.keep_assembly << " gpu_unroll_rows " << o.gpu_unroll_rows
      << " gpu_align_warps " << o.gpu_align_warps << " gpu_stage_inputs " << o.gpu_stage_inputs << " gpu_column_windows " << o.gpu_column_windows
      << " max_recompute " << (o.max_recompute ? std::to_string(*o.max_recompute) : "default") << " cache_bytes "
      << (o.cache_bytes ? std::to_string(*o.cache_bytes) : "default") << " tiles";
    for (int x : o.tile_sizes) s << " " << x;
    s << " sizes";
    for (int x : o.specialize_sizes) s << " " << x;
    s << "\n";
    // Environment that changes the code (codegen/cpu_target.h).
    if (const char *llvm_pipeline = std::getenv("TESSERA_LLVM_PIPELINE")) s << "llvm pipeline " << llvm_pipeline << "\n";
    s << text;
    return sha256_hex(s.str());
}

CacheCounters compile_cache_counters() {
    CacheCounters c;
    c.hits = g_counters.hits;
    c.misses = g_counters.misses;
    c.stores = g_counters.stores;
    c.corrupt = g_counters.corrupt;
    c.evictions = g_counters.evictions;
    c.refused = g_counters.refused;
    return c;
}

} // namespace tessera::runtime
