// tessera-cache: the persistent compile cache (docs/cache.md) from the command line.
//
//   tessera-cache stats    where it is, whether it is usable, entries and bytes against the bound
//   tessera-cache list     every entry, most recently used first: key, outputs, size, last use
//   tessera-cache clear    removes every entry
//
// It reads the same environment as compile(): TESSERA_CACHE_DIR, XDG_CACHE_HOME, HOME,
// TESSERA_CACHE_SIZE and TESSERA_CACHE.
#include <cstdio>
#include <ctime>
#include <string>

#include <tessera/runtime/compile_cache.h>

using namespace tessera::runtime;

namespace {

int usage(FILE *out) {
    std::fprintf(out, "usage: tessera-cache stats | list | clear\n"
                      "The cache directory is $TESSERA_CACHE_DIR, else $XDG_CACHE_HOME/tessera, else ~/.cache/tessera.\n");
    return out == stdout ? 0 : 2;
}

std::string human(int64_t bytes) {
    char buf[32];
    if (bytes >= (int64_t(1) << 30)) std::snprintf(buf, sizeof buf, "%.1f GiB", double(bytes) / double(int64_t(1) << 30));
    else if (bytes >= (1 << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / double(1 << 20));
    else if (bytes >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", double(bytes) / 1024.0);
    else std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
    return buf;
}

} // namespace

int main(int argc, char **argv) {
    if (argc != 2) return usage(stderr);
    std::string command = argv[1];
    if (command == "--help" || command == "-h") return usage(stdout);
    CacheSettings settings = cache_settings_from_environment();
    // The CLI inspects the directory even where compiles are told not to use it.
    bool off = !settings.enabled;
    std::string off_reason = settings.off_reason;
    settings.enabled = !settings.directory.empty();
    CompileCache cache(settings);
    if (command == "stats") {
        CacheStats s = cache.stats();
        std::printf("directory: %s\n", s.directory.c_str());
        if (off) std::printf("compiles use it: no (%s)\n", off_reason.c_str());
        if (!s.usable) {
            std::printf("usable: no (%s)\n", s.refused_reason.c_str());
            return 1;
        }
        std::printf("usable: yes\nentries: %lld\nsize: %s of %s\n", static_cast<long long>(s.entries), human(s.bytes).c_str(),
                    human(s.max_bytes).c_str());
        return 0;
    }
    if (!cache.usable()) {
        std::fprintf(stderr, "tessera-cache: the cache directory is not usable: %s\n", cache.refused_reason().c_str());
        return 1;
    }
    if (command == "list") {
        for (const CacheListing &l : cache.list()) {
            char when[32];
            std::time_t t = std::time_t(l.last_used_unix_s);
            std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", std::localtime(&t));
            std::string outputs;
            for (const auto &o : l.outputs) outputs += (outputs.empty() ? "" : ",") + o;
            std::printf("%s  %-24s %10s  %s\n", l.key.substr(0, 16).c_str(), outputs.empty() ? "?" : outputs.c_str(),
                        human(l.bytes).c_str(), when);
        }
        return 0;
    }
    if (command == "clear") {
        std::printf("removed %lld entries from %s\n", static_cast<long long>(cache.clear()), settings.directory.c_str());
        return 0;
    }
    return usage(stderr);
}
