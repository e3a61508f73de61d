// The persistent compile cache (docs/cache.md): machine code of compiled pipelines, kept on disk
// across processes, so that a process that compiles a pipeline compiled before loads its object
// instead of scheduling it and running LLVM.
//
//   key    SHA-256 of the pipeline's text (pipeline_text.h: every definition, and an imported
//          schedule), the target, the host CPU and its features, the compile options, and the
//          Tessera, LLVM and build identities (cache_key).
//   entry  `<directory>/<key>.tobj`: a header with the key and the XXH3-128 digest of the rest, the
//          entry function's name and metadata, and the relocatable objects. Written to a
//          temporary file and renamed into place, so that readers see a whole entry or none and
//          a writer killed mid-write leaves nothing that loads. Verified against its digest
//          before its code is linked; a corrupt entry is reported once, removed and recompiled.
//   size   bounded (TESSERA_CACHE_SIZE, default 1 GiB): least recently used entries go first.
//   place  $TESSERA_CACHE_DIR, else $XDG_CACHE_HOME/tessera, else ~/.cache/tessera; created
//          0700. A directory owned by another user or writable by group or others is refused
//          with a warning, and Tessera compiles without the cache.
//   off    CompileOptions::cache = false, or TESSERA_CACHE=0 (or off / false / no).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tessera/callable.h>
#include <tessera/pipeline.h>
#include <tessera/runtime/jit.h>

namespace tessera::runtime {

constexpr int64_t kDefaultCacheBytes = int64_t(1) << 30;

// The cache's settings from the environment.
struct CacheSettings {
    bool enabled = true;
    std::string off_reason;  // why not, when !enabled
    std::string directory;
    int64_t max_bytes = kDefaultCacheBytes;
    bool operator==(const CacheSettings &) const = default;
};
CacheSettings cache_settings_from_environment();

// What an entry holds besides its key.
struct CacheEntry {
    std::string symbol;                    // the entry function, in one of `objects`
    std::string shared_object;             // what jit_link_objects made of the compile's objects
    // CompileCache::load: the entry's file, open, which begins with `shared_object` (verified):
    // the loader maps it from there (jit_load_shared_object).
    std::shared_ptr<const OpenFile> file;
    int partitions = 1;                    // how many objects (CompileReport::llvm_partitions)
    std::vector<std::string> outputs;      // the pipeline's output Funcs (for listing)
    std::vector<std::string> array_names;  // poly::Model::arrays' names, for run-time errors
    size_t llvm_instructions = 0;
    int llvm_optimization_level = 0;
    double compile_ms = 0;                 // what compiling it took
    // GPU targets: the kernels' launches outside loops, and for a CUDA GPU the PTX and each
    // kernel's function name and groups (codegen::KernelName).
    int kernels = 0;
    std::string ptx;
    std::vector<std::pair<std::string, std::string>> kernel_names;
};

struct CacheListing {
    std::string key;
    std::vector<std::string> outputs;
    int64_t bytes = 0;
    int64_t last_used_unix_s = 0;
};

struct CacheStats {
    std::string directory;
    bool usable = false;
    std::string refused_reason;  // when not usable
    int64_t entries = 0, bytes = 0, max_bytes = 0;
};

// Counters of this process's cache events (docs/cache.md); compile_cache_counters() reads them.
struct CacheCounters {
    uint64_t hits = 0, misses = 0, stores = 0, corrupt = 0, evictions = 0, refused = 0;
};

class CompileCache {
public:
    explicit CompileCache(CacheSettings settings);

    const CacheSettings &settings() const { return settings_; }
    // Whether the directory exists (it is created) and is safe to use; else why not.
    bool usable() const { return usable_; }
    const std::string &refused_reason() const { return refused_; }

    // The entry for `key`, verified; nullopt when there is none or it is corrupt (then
    // reported once and removed). A hit marks the entry as used now.
    std::optional<CacheEntry> load(const std::string &key);
    // Writes the entry atomically, then evicts least recently used entries beyond the size bound.
    void store(const std::string &key, const CacheEntry &entry);
    // Removes an entry that verified but could not be used.
    void remove(const std::string &key);

    CacheStats stats() const;
    std::vector<CacheListing> list() const;
    // Removes every entry; returns how many.
    int64_t clear();

    std::string entry_path(const std::string &key) const;

    // Whether the directory is still the one this cache checked: the same file, owner and mode.
    bool same_directory() const;

private:
    void evict();

    CacheSettings settings_;
    bool usable_ = false;
    std::string refused_;
    struct DirectoryIdentity {
        dev_t device = 0;
        ino_t inode = 0;
        uid_t owner = 0;
        mode_t mode = 0;
    };
    std::optional<DirectoryIdentity> checked_;  // the directory as the constructor saw it
};

// The cache compile() uses: the environment's settings, re-read on each call so that a change
// of TESSERA_CACHE_DIR or TESSERA_CACHE takes effect.
std::shared_ptr<CompileCache> process_compile_cache();

// The key of compiling `p` for `t` with `o` (64 hex digits); the same from `p`'s pipeline_text
// when the caller has it already.
std::string cache_key(const Pipeline &p, const Target &t, const CompileOptions &o);
std::string cache_key(const std::string &pipeline_text, const Target &t, const CompileOptions &o);

CacheCounters compile_cache_counters();

} // namespace tessera::runtime
