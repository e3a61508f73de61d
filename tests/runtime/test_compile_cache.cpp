// The persistent compile cache (runtime/compile_cache.h, docs/cache.md): hits and misses, what
// the key tells apart, least-recently-used eviction, corrupt and truncated entries, refused
// directories, turning it off, eight processes compiling the same pipeline at once, and one
// entry loaded twice in a process.
#include "../test_util.h"

#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <ctime>
#include <unistd.h>

#include <tessera/pipeline_text.h>
#include <tessera/runtime/compile_cache.h>

#include "cache_test_pipeline.h"
#include "tessera_apps/app.h"

extern char **environ;

using namespace tessera;
namespace fs = std::filesystem;

namespace {

// A fresh cache directory in TESSERA_CACHE_DIR for the test case, with the cache on and the
// environment restored afterwards (the other tests run with TESSERA_CACHE=0).
class ScopedCache {
public:
    explicit ScopedCache(const std::string &name)
        : dir_(fs::temp_directory_path() / ("tessera-cache-test-" + name + "-" + std::to_string(getpid()))),
          cache_dir_("TESSERA_CACHE_DIR", dir_.c_str()) {
        fs::remove_all(dir_);
    }
    ~ScopedCache() {
        std::error_code ec;
        fs::permissions(dir_, fs::perms::owner_all, ec);
        fs::remove_all(dir_, ec);
    }
    const fs::path &dir() const { return dir_; }
    std::vector<fs::path> entries() const {
        std::vector<fs::path> v;
        if (fs::exists(dir_))
            for (const auto &e : fs::directory_iterator(dir_))
                if (e.path().extension() == ".tobj") v.push_back(e.path());
        return v;
    }
    size_t files() const {
        size_t n = 0;
        if (fs::exists(dir_))
            for ([[maybe_unused]] const auto &e : fs::directory_iterator(dir_)) ++n;
        return n;
    }

private:
    fs::path dir_;
    test_util::ScopedEnvironment cache_{"TESSERA_CACHE", nullptr}, size_{"TESSERA_CACHE_SIZE", nullptr}, cache_dir_;
};

// Compiles a new blur (a Pipeline of its own, as a new process would build it) and checks its
// result on odd sizes against plain loops; returns the report.
CompileReport compile_and_check(float divisor = 3.0f, const CompileOptions &o = {}) {
    cache_test::Blur blur(divisor);
    Callable c = blur.pipeline.compile(Target::host(), o);
    Buffer<float> in = cache_test::random_input(37, 29, 11);
    Buffer<float> out(37, 29);
    c.run(Bindings().set(blur.input, in), {out});
    CHECK(cache_test::max_error(in, out, divisor) < 1e-5);
    return c.report();
}

bool has_phase(const CompileReport &r, const std::string &phase) {
    for (const auto &[name, ms] : r.phase_ms)
        if (name == phase) return true;
    return false;
}

std::string read_file(const fs::path &p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

void write_file(const fs::path &p, const std::string &bytes) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f << bytes;
}

} // namespace

TEST_CASE("a pipeline compiled before is loaded from the cache, skipping scheduling and LLVM", "[cache]") {
    ScopedCache cache("hit");
    CompileReport first = compile_and_check();
    CHECK(first.cache == "miss");
    CHECK(has_phase(first, "schedule"));
    REQUIRE(cache.entries().size() == 1);
    // The entry's file is private to its owner.
    CHECK((fs::status(cache.dir()).permissions() & fs::perms::all) == fs::perms::owner_all);
    CHECK((fs::status(cache.entries()[0]).permissions() & (fs::perms::group_all | fs::perms::others_all)) == fs::perms::none);

    runtime::CacheCounters before = runtime::compile_cache_counters();
    CompileReport second = compile_and_check();
    CHECK(second.cache == "hit");
    CHECK_FALSE(has_phase(second, "model"));
    CHECK_FALSE(has_phase(second, "schedule"));
    CHECK_FALSE(has_phase(second, "LLVM optimization"));
    CHECK(has_phase(second, "load"));
    CHECK(second.llvm_instructions == first.llvm_instructions);
    CHECK(runtime::compile_cache_counters().hits == before.hits + 1);
    CHECK(cache.entries().size() == 1);
}

TEST_CASE("the cache key tells apart definitions, options, schedules and sizes", "[cache]") {
    ScopedCache cache("key");
    CHECK(compile_and_check(3.0f).cache == "miss");
    CHECK(compile_and_check(4.0f).cache == "miss");  // another constant
    CompileOptions fast;
    fast.fast_math = true;
    CHECK(compile_and_check(3.0f, fast).cache == "miss");
    CompileOptions tiles;
    tiles.tile_sizes = {16, 8};
    CHECK(compile_and_check(3.0f, tiles).cache == "miss");
    CompileOptions sizes;
    sizes.specialize_sizes = {37, 29};
    CHECK(compile_and_check(3.0f, sizes).cache == "miss");
    CHECK(cache.entries().size() == 5);
    CHECK(compile_and_check(4.0f).cache == "hit");
    CHECK(compile_and_check(3.0f, tiles).cache == "hit");

    // An imported schedule is part of the key.
    cache_test::Blur blur;
    std::string json = blur.pipeline.schedule_json();
    blur.pipeline.set_schedule_json(json);
    CHECK(blur.pipeline.compile().report().cache == "miss");
    cache_test::Blur again;
    again.pipeline.set_schedule_json(json);
    CHECK(again.pipeline.compile().report().cache == "hit");

    // Two Funcs of the same name are told apart in the key's text.
    Var x("x");
    Func a("f"), b("f"), c("g");
    a(x) = x * 2;
    b(x) = x * 3;
    c(x) = a(x) + b(x + 1);
    std::string text = pipeline_text(Pipeline(c));
    CHECK(text.find("f#0") != std::string::npos);
    CHECK(text.find("f#1") != std::string::npos);
}

// An entry's modification time: its last-use mark.
int64_t modified_seconds(const fs::path &p) {
    struct stat st;
    REQUIRE(stat(p.c_str(), &st) == 0);
    return int64_t(st.st_mtime);
}

// Sets an entry's last-use mark `seconds_ago`.
void mark_used(const fs::path &p, int64_t seconds_ago) {
    struct timespec times[2];
    times[0].tv_sec = times[1].tv_sec = time(nullptr) - seconds_ago;
    times[0].tv_nsec = times[1].tv_nsec = 0;
    REQUIRE(utimensat(AT_FDCWD, p.c_str(), times, 0) == 0);
}

TEST_CASE("the cache evicts the least recently used entries beyond its size bound", "[cache]") {
    ScopedCache cache("evict");
    compile_and_check(3.0f);
    REQUIRE(cache.entries().size() == 1);
    fs::path first = cache.entries()[0];
    auto one = int64_t(fs::file_size(first));
    // Room for two entries of about this size, not three.
    setenv("TESSERA_CACHE_SIZE", std::to_string(one * 5 / 2).c_str(), 1);
    compile_and_check(4.0f);
    REQUIRE(cache.entries().size() == 2);
    fs::path second = cache.entries()[0] == first ? cache.entries()[1] : cache.entries()[0];
    // Marked used three and two minutes ago: using the first makes the second the least
    // recently used.
    mark_used(first, 180);
    mark_used(second, 120);
    CHECK(compile_and_check(3.0f).cache == "hit");
    CHECK(modified_seconds(first) >= time(nullptr) - 5);
    uint64_t evictions = runtime::compile_cache_counters().evictions;
    compile_and_check(5.0f);
    CHECK(cache.entries().size() == 2);
    CHECK(runtime::compile_cache_counters().evictions == evictions + 1);
    CHECK(compile_and_check(3.0f).cache == "hit");
    CHECK(compile_and_check(4.0f).cache == "miss");  // the one evicted
}

TEST_CASE("a hit marks its entry used to the minute, so a burst of hits writes the entry once", "[cache]") {
    ScopedCache cache("use-mark");
    compile_and_check();
    REQUIRE(cache.entries().size() == 1);
    fs::path entry = cache.entries()[0];
    // Marked 30 seconds ago: within the minute, a hit leaves the mark as it is.
    mark_used(entry, 30);
    int64_t mark = modified_seconds(entry);
    CHECK(compile_and_check().cache == "hit");
    CHECK(modified_seconds(entry) == mark);
    // Marked 90 seconds ago: a hit marks it used now.
    mark_used(entry, 90);
    CHECK(compile_and_check().cache == "hit");
    CHECK(modified_seconds(entry) >= time(nullptr) - 5);
}

TEST_CASE("a corrupt or truncated cache entry is detected, never loaded, and compiled again", "[cache]") {
    ScopedCache cache("corrupt");
    compile_and_check();
    REQUIRE(cache.entries().size() == 1);
    fs::path entry = cache.entries()[0];
    std::string good = read_file(entry);

    SECTION("a flipped byte in the machine code") {
        std::string bad = good;  // the entry begins with the shared object
        bad[bad.size() / 4] = char(bad[bad.size() / 4] ^ 0x01);
        write_file(entry, bad);
    }
    SECTION("a truncated entry") { write_file(entry, good.substr(0, good.size() / 2)); }
    SECTION("a header that is not Tessera's") { write_file(entry, "garbage\n"); }
    SECTION("an entry renamed to another key") {
        cache_test::Blur other(4.0f);
        std::string key = runtime::cache_key(other.pipeline, Target::host(), CompileOptions{});
        fs::rename(entry, cache.dir() / (key + ".tobj"));
        CompileReport r = compile_and_check(4.0f);
        CHECK(r.cache == "miss");
        CHECK(runtime::compile_cache_counters().corrupt >= 1);
        return;
    }
    uint64_t corrupt = runtime::compile_cache_counters().corrupt;
    CompileReport r = compile_and_check();
    CHECK(r.cache == "miss");
    CHECK(runtime::compile_cache_counters().corrupt == corrupt + 1);
    // The entry was written again, and loads.
    CHECK(fs::exists(entry));
    CHECK(compile_and_check().cache == "hit");
}

TEST_CASE("a writer killed before renaming its entry into place leaves nothing that loads", "[cache]") {
    ScopedCache cache("killed");
    compile_and_check();
    REQUIRE(cache.entries().size() == 1);
    fs::path entry = cache.entries()[0];
    std::string good = read_file(entry);
    // What such a writer leaves: half a temporary file, and no entry.
    fs::path temp = cache.dir() / (".tmp." + entry.stem().string() + ".99999.0.1");
    write_file(temp, good.substr(0, good.size() / 2));
    fs::remove(entry);
    CHECK(compile_and_check().cache == "miss");
    CHECK(compile_and_check().cache == "hit");
    // A temporary file older than ten minutes is removed by the next store.
    fs::last_write_time(temp, fs::file_time_type::clock::now() - std::chrono::hours(1));
    compile_and_check(7.0f);
    CHECK_FALSE(fs::exists(temp));
}

TEST_CASE("a cache directory writable by others or owned by another user is refused with a warning", "[cache]") {
    ScopedCache cache("refused");
    fs::create_directories(cache.dir());
    fs::permissions(cache.dir(), fs::perms::all);  // 0777
    CompileReport r = compile_and_check();
    CHECK(r.cache.rfind("off: ", 0) == 0);
    CHECK(r.cache.find("writable by others") != std::string::npos);
    CHECK(cache.entries().empty());

    fs::permissions(cache.dir(), fs::perms::owner_all | fs::perms::group_write);  // 0720
    r = compile_and_check();
    CHECK(r.cache.find("writable by its group") != std::string::npos);

    fs::permissions(cache.dir(), fs::perms::owner_all);
    if (geteuid() == 0) {  // only root can give a directory away
        REQUIRE(chown(cache.dir().c_str(), 12345, 12345) == 0);
        r = compile_and_check();
        CHECK(r.cache.find("belongs to another user") != std::string::npos);
        REQUIRE(chown(cache.dir().c_str(), 0, 0) == 0);
    }
    CHECK(compile_and_check().cache == "miss");
}

TEST_CASE("a TMPDIR that cannot be written is a clear error naming it, not a crash", "[cache]") {
    // The JIT links each compile in a private directory under TMPDIR (runtime/jit.h).
    struct RestoreTmpdir {
        std::optional<std::string> old;
        ~RestoreTmpdir() {
            if (old) setenv("TMPDIR", old->c_str(), 1);
            else unsetenv("TMPDIR");
        }
    } restore{std::getenv("TMPDIR") ? std::optional<std::string>(std::getenv("TMPDIR")) : std::nullopt};
    setenv("TMPDIR", "/nonexistent-tessera-tmpdir", 1);
    CompileOptions o;
    o.cache = false;
    cache_test::Blur blur(3.0f);
    REQUIRE_USER_ERROR(blur.pipeline.compile(Target::host(), o), "TMPDIR", "/nonexistent-tessera-tmpdir");
    if (restore.old) setenv("TMPDIR", restore.old->c_str(), 1);
    else unsetenv("TMPDIR");
    CHECK(compile_and_check(3.0f, o).cache.rfind("off: ", 0) == 0);
}

TEST_CASE("the cache is off by option and by environment variable", "[cache]") {
    ScopedCache cache("off");
    CompileOptions o;
    o.cache = false;
    CHECK(compile_and_check(3.0f, o).cache == "off: CompileOptions::cache is false");
    setenv("TESSERA_CACHE", "0", 1);
    CHECK(compile_and_check().cache == "off: TESSERA_CACHE=0");
    CHECK(cache.entries().empty());
    unsetenv("TESSERA_CACHE");
    CHECK(compile_and_check().cache == "miss");
}

namespace {

// Runs `n` processes of the cache's worker (cache_race_worker.cpp) by the path `program`, each
// compiling the test blur at `start` (ns since the epoch; 0: at once); their cache statuses.
std::vector<std::string> run_cache_workers(const std::string &program, int n, int64_t start) {
    std::string start_arg = std::to_string(start);
    std::vector<std::pair<pid_t, fs::path>> workers;
    for (int i = 0; i < n; ++i) {
        fs::path out = fs::temp_directory_path() / ("tessera-cache-race-" + std::to_string(getpid()) + "-" + std::to_string(i));
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        pid_t pid;
        char *argv[] = {const_cast<char *>(program.c_str()), start_arg.data(), nullptr};
        REQUIRE(posix_spawn(&pid, program.c_str(), &actions, nullptr, argv, environ) == 0);
        posix_spawn_file_actions_destroy(&actions);
        workers.emplace_back(pid, out);
    }
    std::vector<std::string> statuses;
    for (auto &[pid, out] : workers) {
        int status = 0;
        REQUIRE(waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);  // the worker's result matched plain loops
        std::string text = read_file(out);
        fs::remove(out);
        statuses.push_back(text.substr(0, text.find(' ')));
    }
    return statuses;
}

} // namespace

TEST_CASE("eight processes compiling the same pipeline at once all get correct code and one entry", "[cache]") {
    ScopedCache cache("race");
    auto run_workers = [](int n, int64_t start) { return run_cache_workers(TESSERA_CACHE_RACE_WORKER, n, start); };
    auto start = std::chrono::duration_cast<std::chrono::nanoseconds>(
                     (std::chrono::system_clock::now() + std::chrono::milliseconds(500)).time_since_epoch())
                     .count();
    for (const std::string &s : run_workers(8, int64_t(start))) CHECK((s == "miss" || s == "hit"));
    // One entry and no temporary file left; a new process loads it.
    CHECK(cache.entries().size() == 1);
    CHECK(cache.files() == 1);
    std::vector<std::string> after = run_workers(1, 0);
    REQUIRE(after.size() == 1);
    CHECK(after[0] == "hit");
}

TEST_CASE("one build run by another path loads the entries it stored", "[cache]") {
    ScopedCache cache("path");
    // The build's identity in the key is its build id, not the path it was run by (once, a
    // program run by a relative path from another directory missed every entry).
    fs::path link = fs::temp_directory_path() / ("tessera-cache-worker-link-" + std::to_string(getpid()));
    fs::remove(link);
    fs::create_symlink(TESSERA_CACHE_RACE_WORKER, link);
    std::vector<std::string> first = run_cache_workers(TESSERA_CACHE_RACE_WORKER, 1, 0);
    std::vector<std::string> again = run_cache_workers(link.string(), 1, 0);
    fs::remove(link);
    REQUIRE(first.size() == 1);
    REQUIRE(again.size() == 1);
    CHECK(first[0] == "miss");
    CHECK(again[0] == "hit");
    CHECK(cache.entries().size() == 1);
}

TEST_CASE("a Callable loaded from the cache shows the schedule it was compiled with", "[cache][inspection]") {
    ScopedCache cache("inspect");
    cache_test::Blur first;
    Callable miss = first.pipeline.compile();
    REQUIRE(miss.report().cache == "miss");
    cache_test::Blur second;
    Callable hit = second.pipeline.compile();
    REQUIRE(hit.report().cache == "hit");
    CHECK(hit.compiler_ir("schedule") == miss.compiler_ir("schedule"));
    CHECK(hit.compiler_ir("loop_nest") == miss.compiler_ir("loop_nest"));
    CHECK(hit.compiler_ir("pipeline") == miss.compiler_ir("pipeline"));
}

TEST_CASE("a GPU pipeline run by the emulator is cached like a host one", "[cache][gpu]") {
    ScopedCache cache("gpu");
    auto compile_and_run = [](const char *expect) {
        cache_test::Blur blur;
        Callable c = blur.pipeline.compile(Target::cuda(80).emulated());
        CHECK(c.report().cache == expect);
        CHECK(c.report().kernels >= 1);
        Buffer<float> in = cache_test::random_input(45, 19, 5);
        Buffer<float> out(45, 19);
        c.run(Bindings().set(blur.input, in), {out});
        CHECK(cache_test::max_error(in, out, 3.0f) < 1e-5);
        return c.report().kernels;
    };
    int kernels = compile_and_run("miss");
    CHECK(compile_and_run("hit") == kernels);
    // The host and the GPU targets have keys of their own.
    CHECK(compile_and_check().cache == "miss");
    CHECK(cache.entries().size() == 2);
}

TEST_CASE("a pipeline compiled in several parts is stored as one shared object and loads from it", "[cache][parallel_compile]") {
    ScopedCache cache("parts");
    auto app = apps::make_app("pb_3mm");
    CompileOptions o;
    o.compile_threads = 3;
    Callable miss = app->pipeline().compile(Target::host(), o);
    CHECK(miss.report().cache == "miss");
    REQUIRE(miss.report().llvm_partitions == 3);
    Callable hit = app->pipeline().compile(Target::host(), o);
    CHECK(hit.report().cache == "hit");
    // compile_threads is not in the key: the code is the same however it was compiled.
    o.compile_threads = 1;
    CHECK(app->pipeline().compile(Target::host(), o).report().cache == "hit");
    CHECK(cache.entries().size() == 1);
    app->prepare({33, 7, 65, 9, 31}, 4);
    std::vector<Buffer<void>> got = app->make_outputs(), want = app->make_outputs();
    hit.realize(got);
    app->reference(want);
    apps::Comparison c = apps::compare(got[0], want[0], app->tolerance());
    INFO(c.first_mismatch);
    CHECK(c.ok);
}

TEST_CASE("the same cache entry loaded twice in one process gives two codes that each outlive the other", "[cache]") {
    // A hit maps the entry's file itself; glibc would hand a second load of that file the first
    // one's code, and name it by the first one's descriptor, which a later load may reuse once
    // the first is gone (runtime/jit.h). Each must run its own code all along.
    ScopedCache cache("twice");
    compile_and_check();
    auto run = [](cache_test::Blur &blur, const Callable &c, float divisor) {
        Buffer<float> in = cache_test::random_input(23, 31, 5);
        Buffer<float> out(23, 31);
        c.run(Bindings().set(blur.input, in), {out});
        CHECK(cache_test::max_error(in, out, divisor) < 1e-5);
    };
    cache_test::Blur a(3.0f), b(3.0f), c(5.0f), e(7.0f), d(3.0f);
    std::optional<Callable> first = a.pipeline.compile();
    Callable second = b.pipeline.compile();
    CHECK(first->report().cache == "hit");
    CHECK(second.report().cache == "hit");
    run(a, *first, 3.0f);
    first.reset();  // its descriptor's number is free again
    // Misses, loaded from new descriptors, one of which takes the first one's number.
    Callable third = c.pipeline.compile(), fifth = e.pipeline.compile();
    Callable fourth = d.pipeline.compile();
    CHECK(third.report().cache == "miss");
    CHECK(fifth.report().cache == "miss");
    CHECK(fourth.report().cache == "hit");
    run(b, second, 3.0f);
    run(c, third, 5.0f);
    run(e, fifth, 7.0f);
    run(d, fourth, 3.0f);
}

TEST_CASE("Pipeline::realize loads from the cache what an earlier process compiled", "[cache]") {
    ScopedCache cache("realize");
    auto realize_and_check = [] {
        cache_test::Blur blur;
        Buffer<float> in = cache_test::random_input(23, 31, 9);
        blur.input.set(in);
        Buffer<float> out(23, 31);
        blur.pipeline.realize(out);
        CHECK(cache_test::max_error(in, out, 3.0f) < 1e-5);
        return blur.pipeline.schedule_json();
    };
    runtime::CacheCounters before = runtime::compile_cache_counters();
    std::string first = realize_and_check();
    CHECK(runtime::compile_cache_counters().stores == before.stores + 1);
    std::string second = realize_and_check();
    CHECK(runtime::compile_cache_counters().hits == before.hits + 1);
    // The schedule shown is the one compiled, both times.
    CHECK(first == second);
    // compile() with the default options shares the entry.
    CHECK(compile_and_check().cache == "hit");
    CHECK(cache.entries().size() == 1);
}
