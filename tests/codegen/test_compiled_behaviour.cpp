// Behaviour of compiled pipelines: argument checks, concurrency, strided buffers,
// specialization, the compile report.
#include "../test_util.h"

#include <filesystem>
#include <functional>
#include <limits>
#include <random>
#include <regex>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include <tessera/codegen/cpu_target.h>
#include <tessera/runtime/aot.h>
#include <tessera/runtime/buffer_pool.h>
#include <tessera/runtime/compiled_pipeline.h>

#include "tessera_apps/app.h"

using namespace tessera;

TEST_CASE("compiled code rejects an input smaller than the region it reads", "[codegen][errors]") {
    Var x("x"), y("y");
    InputBuffer<float> in("input", 2);
    Func blur("blur");
    blur(x, y) = in(x - 1, y) + in(x + 1, y + 2);
    Callable c = Pipeline(blur).compile();
    in.set(Buffer<float>(10, 10));
    REQUIRE_USER_ERROR(c.realize({10, 6}), "InputBuffer input", "too small", "dimension 0", "needs [-1, 10]",
                       "covers [0, 9]");
    Buffer<float> shifted(12, 10);
    shifted.set_min({-1, 0});
    in.set(shifted);
    CHECK_NOTHROW(c.realize({10, 6}));
    REQUIRE_USER_ERROR(c.realize({10, 9}), "InputBuffer input", "dimension 1", "needs [0, 10]", "covers [0, 9]");
}

TEST_CASE("the entry's checks and parameters are a function LLVM does not optimize, with the same outcomes",
          "[codegen][errors]") {
    // (host_entry.cpp: optimized, they were most of the entry's LLVM time.)
    Var x("x"), y("y");
    InputBuffer<float> in("input", 2);
    Func blur("blur_setup");
    blur(x, y) = in(x - 1, y) + in(x + 1, y + 2);
    CompileOptions o;
    o.keep_assembly = true;
    o.cache = false;
    Callable c = Pipeline(blur).compile(Target::host(), o);
    const std::string ir = c.compiler_ir("llvm_unoptimized");
    std::smatch setup, attributes;
    REQUIRE(std::regex_search(ir, setup, std::regex("define internal i32 @\"?[A-Za-z0-9_.$]+\\.setup\"?\\([^)]*\\) #([0-9]+)")));
    REQUIRE(std::regex_search(ir, attributes, std::regex("attributes #" + setup[1].str() + " = \\{([^}]*)\\}")));
    CHECK(attributes[1].str().find("optnone") != std::string::npos);
    // A failed check reaches the caller with its record.
    Buffer<float> small(10, 10);
    in.set(small);
    REQUIRE_USER_ERROR(c.realize({10, 6}), "InputBuffer input", "too small", "dimension 0", "needs [-1, 10]",
                       "covers [0, 9]");
    // An empty output computes nothing and checks nothing else: the input could not cover a row.
    Buffer<float> none(std::vector<int>{10, 0});
    CHECK_NOTHROW(c.realize(none));
    // A call that passes computes what the interpreter does, the parameters back from the setup.
    for (auto [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {7, 3}, {33, 17}}) {
        Buffer<float> data(std::vector<int>{w + 2, h + 2});
        data.set_min({-1, 0});
        for (int j = 0; j < h + 2; ++j)
            for (int i = -1; i <= w; ++i) data(i, j) = float((i * 37 + j * 101) % 89) - 40.0f;
        in.set(data);
        Buffer<float> got(w, h), want(w, h);
        c.realize(got);
        interpret(Pipeline(blur), {want});
        apps::Comparison cmp = apps::compare(got, want, 0);
        INFO(w << " x " << h << ": " << cmp.first_mismatch);
        CHECK(cmp.ok);
    }
}

TEST_CASE("compiled code rejects unbound inputs and params", "[codegen][errors]") {
    Var x("x");
    InputBuffer<int> in("image", 1);
    Param<int> gain("gain");
    Func f("f");
    f(x) = in(x) * gain;
    Callable c = Pipeline(f).compile();
    REQUIRE_USER_ERROR(c.realize({4}), "InputBuffer image", "not bound");
    in.set(Buffer<int>(4));
    REQUIRE_USER_ERROR(c.realize({4}), "Param gain", "no value");
}

TEST_CASE("code specialized for a size rejects other sizes", "[codegen][errors]") {
    Var x("x");
    Func f("f");
    f(x) = x * 3;
    CompileOptions o;
    o.specialize_sizes = {16};
    Callable c = Pipeline(f).compile(Target::host(), o);
    Buffer<int> out = c.realize({16})[0];
    CHECK(out(15) == 45);
    REQUIRE_USER_ERROR(c.realize({17}), "specialize_sizes", "extent 17");
    // JIT and AOT read the specialization alike.
    o.specialize_sizes = {16, 16};
    REQUIRE_USER_ERROR(Pipeline(f).compile(Target::host(), o), "specialize_sizes has 2 sizes", "output f");
    std::string stem = (std::filesystem::temp_directory_path() / "tessera_aot_specialized").string();
    REQUIRE_USER_ERROR(runtime::compile_to_files(Pipeline(f), stem, "specialized", o), "specialize_sizes has 2 sizes",
                       "output f");
}

TEST_CASE("one compiled callable runs from several threads at once", "[codegen][threads]") {
    auto app = apps::make_app("blur_x_blur_y");
    InputBuffer<float> input("input", 3);
    // The app's pipeline reads its own InputBuffer; rebuild an equivalent one we can bind.
    Var x("x"), y("y"), c("c");
    Func bx("bx"), by("by");
    bx(x, y, c) = (input(x, y, c) + 2.f * input(x + 1, y, c) + input(x + 2, y, c)) / 4.f;
    by(x, y, c) = (bx(x, y, c) + 2.f * bx(x, y + 1, c) + bx(x, y + 2, c)) / 4.f;
    Pipeline p(by);
    Callable callable = p.compile();
    std::vector<std::thread> threads;
    std::vector<int> ok(6, 0);
    for (int t = 0; t < 6; ++t)
        threads.emplace_back([&, t] {
            int w = 40 + 7 * t, h = 30 + 5 * t;
            Buffer<float> in(w, h, 3);
            for (int k = 0; k < 3; ++k)
                for (int j = 0; j < h; ++j)
                    for (int i = 0; i < w; ++i) in(i, j, k) = float((i * 13 + j * 7 + k * 3 + t) % 17);
            Buffer<float> out(w - 2, h - 2, 3);
            for (int rep = 0; rep < 5; ++rep) callable.run(Bindings().set(input, in), {out});
            bool good = true;
            for (int k = 0; k < 3; ++k)
                for (int j = 0; j < h - 2; ++j)
                    for (int i = 0; i < w - 2; ++i) {
                        auto bxv = [&](int ii, int jj) { return (in(ii, jj, k) + 2.f * in(ii + 1, jj, k) + in(ii + 2, jj, k)) / 4.f; };
                        float want = (bxv(i, j) + 2.f * bxv(i, j + 1) + bxv(i, j + 2)) / 4.f;
                        good &= out(i, j, k) == want;
                    }
            ok[size_t(t)] = good;
        });
    for (auto &t : threads) t.join();
    for (int t = 0; t < 6; ++t) CHECK(ok[size_t(t)] == 1);
}

TEST_CASE("compiled pipelines accept strided buffers", "[codegen][buffers]") {
    Var x("x"), y("y");
    InputBuffer<int> in("in", 2);
    Func f("f");
    f(x, y) = in(x, y) * 10 + in(x + 1, y);
    std::vector<int> storage(9 * 8);
    for (size_t i = 0; i < storage.size(); ++i) storage[i] = int(i);
    // A transposed view: x steps 8 elements.
    Buffer<int> t(storage.data(), std::vector<BufferDim>{{0, 9, 8}, {0, 8, 1}});
    in.set(t);
    std::vector<int> out_storage(8 * 8, 0);
    Buffer<int> out(out_storage.data(), std::vector<BufferDim>{{0, 8, 8}, {0, 8, 1}});
    Callable c = Pipeline(f).compile();
    c.realize(out);
    for (int yy = 0; yy < 8; ++yy)
        for (int xx = 0; xx < 8; ++xx) CHECK(out(xx, yy) == t(xx, yy) * 10 + t(xx + 1, yy));
}

TEST_CASE("the compile report splits the time by phase", "[codegen][report]") {
    auto app = apps::make_app("blur_x_blur_y");
    Callable c = app->pipeline().compile();
    const CompileReport &r = c.report();
    std::vector<std::string> phases;
    for (const auto &p : r.phase_ms) phases.push_back(p.first);
    CHECK(phases == std::vector<std::string>{"model", "schedule", "AST", "LLVM IR", "LLVM optimization", "machine code", "link"});
    CHECK(r.total_ms > 0);
}

TEST_CASE("realize compiles once and reuses the code until a definition changes", "[codegen][cache]") {
    Var x("x");
    Func f("f");
    f(x) = x + 1;
    Pipeline p(f);
    Buffer<int> a = p.realize({4})[0];
    CHECK(a(3) == 4);
    RDom r(0, 4);
    f(r) = f(r) * 2;  // a new definition: the next realize recompiles
    Buffer<int> b = p.realize({4})[0];
    CHECK(b(3) == 8);
}

TEST_CASE("one TargetInfo carries the hardware facts that scheduling and code generation read", "[codegen][target]") {
    const TargetInfo &host = codegen::host_target_info();
    CHECK(host.kind == TargetInfo::Kind::CPU);
    CHECK((host.vector_bits == 128 || host.vector_bits == 256 || host.vector_bits == 512));
    CHECK(host.lanes(4) == host.vector_bits / 32);
    CHECK(host.l2_bytes > 0);
    bool avx512 = codegen::host_cpu().features.find("+avx512f") != std::string::npos;
    CHECK((host.vector_bits == 512) == avx512);
    // The automatic schedule is made for those facts.
    poly::ScheduleOptions s = runtime::schedule_options(CompileOptions{});
    CHECK(s.cache_bytes == host.l2_bytes);
    CHECK(s.vector_width == host.lanes(4));

    TargetInfo a100 = TargetInfo::nvidia_gpu(80), h100 = TargetInfo::nvidia_gpu(90);
    CHECK(a100.warp_size == 32);
    CHECK(a100.max_threads_per_block == 1024);
    CHECK(a100.shared_bytes_per_block == 48 * 1024);
    CHECK(a100.max_shared_bytes_per_block == 163 * 1024);
    CHECK(h100.max_shared_bytes_per_block == 227 * 1024);
    // The opt-in maximum differs within a generation: sm_86 and sm_89 have 99 KiB.
    CHECK(TargetInfo::nvidia_gpu(86).max_shared_bytes_per_block == 99 * 1024);
    CHECK(TargetInfo::nvidia_gpu(75).max_shared_bytes_per_block == 64 * 1024);
    CHECK(TargetInfo::nvidia_gpu(80, true).shared_bytes_per_block == 163 * 1024);
    CHECK(TargetInfo::nvidia_gpu(90, true).shared_bytes_per_block == 227 * 1024);
    REQUIRE_USER_ERROR(TargetInfo::nvidia_gpu(61, true), "sm_61", "48 KiB");
    CHECK(TargetInfo::amd_gpu("gfx90a").warp_size == 64);
    CHECK_THROWS_AS(TargetInfo::nvidia_gpu(35), UserError);
    CHECK_THROWS_AS(TargetInfo::amd_gpu("sm_80"), UserError);
}

TEST_CASE("a parallel loop's context carries only the values its body reads", "[codegen][openmp]") {
    // Two outputs, each its own parallel loop: f's body reads in0 and f's buffer, not the views
    // of in1, in2, in3 and g, which the context of every loop carried before (a fuzzer pipeline
    // stored 185 words before each of its 19 parallel loops, and its IR doubled).
    Var x("x"), y("y");
    InputBuffer<int> in0("in0", 2), in1("in1", 2), in2("in2", 2), in3("in3", 2);
    Func f("f"), g("g");
    f(x, y) = in0(x, y) + 1;
    g(x, y) = in1(x, y) * in2(x, y) + in3(x, y);
    std::vector<Buffer<int>> data;
    for (int k = 0; k < 4; ++k) {
        data.emplace_back(37, 29);
        for (int j = 0; j < 29; ++j)
            for (int i = 0; i < 37; ++i) data[size_t(k)](i, j) = i * 3 + j * (k + 1) - 7 * k;
    }
    in0.set(data[0]);
    in1.set(data[1]);
    in2.set(data[2]);
    in3.set(data[3]);
    CompileOptions o;
    o.keep_assembly = true;
    // The IR as lowered: LLVM's optimizations would fold the context's words into vectors.
    setenv("TESSERA_LLVM_PIPELINE", "verify", 1);
    Callable c;
    try {
        c = Pipeline({f, g}).compile(Target::host(), o);
    } catch (...) {
        unsetenv("TESSERA_LLVM_PIPELINE");
        throw;
    }
    unsetenv("TESSERA_LLVM_PIPELINE");
    const std::string &ir = c.report().llvm_ir;
    std::smatch m;
    // Words stored into each context array, against its size.
    std::regex alloca_re("%(omp\\.context[0-9]*) = alloca \\[([0-9]+) x i64\\]");
    int contexts = 0, stored = 0, loaded = 0;
    for (auto it = std::sregex_iterator(ir.begin(), ir.end(), alloca_re); it != std::sregex_iterator(); ++it) {
        ++contexts;
        std::string name = (*it)[1];
        int size = std::stoi((*it)[2]);
        std::regex gep("getelementptr inbounds \\[" + std::to_string(size) + " x i64\\], ptr %" +
                       std::regex_replace(name, std::regex("\\."), "\\.") + ", i64 0, i64 [0-9]+");
        int words = int(std::distance(std::sregex_iterator(ir.begin(), ir.end(), gep), std::sregex_iterator()));
        INFO(name << ": " << words << " of " << size << " words stored");
        CHECK(words > 0);
        CHECK(words < size);
        stored += words;
    }
    CHECK(contexts >= 2);
    // Every word stored is loaded by the outlined bodies (their third argument, %2), and no other.
    std::regex load_re("getelementptr inbounds i64, ptr %2, i64 [0-9]+");
    for (const std::string &function : test_util::ir_functions(ir)) {
        if (function.substr(0, function.find('(')).find(".par.") == std::string::npos) continue;
        loaded += int(std::distance(std::sregex_iterator(function.begin(), function.end(), load_re), std::sregex_iterator()));
    }
    CHECK(loaded == stored);
    Buffer<int> got_f(37, 29), got_g(37, 29);
    c.realize(std::vector<Buffer<void>>{got_f, got_g});
    for (int j = 0; j < 29; ++j)
        for (int i = 0; i < 37; ++i) {
            REQUIRE(got_f(i, j) == data[0](i, j) + 1);
            REQUIRE(got_g(i, j) == data[1](i, j) * data[2](i, j) + data[3](i, j));
        }
}

TEST_CASE("a very large module gets LLVM's O1 pipeline, the apps' modules O2", "[codegen][report]") {
    // The apps' largest module (bilateral_grid) is well below the threshold.
    for (const char *name : {"blur_x_blur_y", "bilateral_grid"}) {
        auto app = apps::make_app(name);
        Callable compiled = app->pipeline().compile();
        const CompileReport &r = compiled.report();
        INFO(name << ": " << r.llvm_instructions << " instructions");
        CHECK(r.llvm_instructions > 0);
        CHECK(r.llvm_instructions < codegen::kLargeModuleInstructions);
        CHECK(r.llvm_optimization_level == 2);
    }
    CHECK(codegen::optimization_level_for(1) == 2);
    CHECK(codegen::optimization_level_for(codegen::kLargeModuleInstructions) == 2);
    CHECK(codegen::optimization_level_for(codegen::kLargeModuleInstructions + 1) == 1);

    // One Func whose value sums a thousand selects on a Param (as a balanced tree, 12 levels
    // deep): past the threshold, optimized at O1, and still exact.
    Var x("x");
    Param<int> p("p");
    std::vector<Expr> terms;
    for (int k = 0; k < 1100; ++k) terms.push_back(select(p > k % 97, x * 3 + k, x - (k ^ 5)));
    while (terms.size() > 1) {
        std::vector<Expr> sums;
        for (size_t i = 0; i + 1 < terms.size(); i += 2) sums.push_back(terms[i] + terms[i + 1]);
        if (terms.size() % 2) sums.push_back(terms.back());
        terms = sums;
    }
    Expr e = terms[0];
    Func f("f");
    f(x) = e;
    Pipeline pipeline(f);
    p.set(40);
    Callable c = pipeline.compile();
    const CompileReport &r = c.report();
    INFO(r.llvm_instructions << " instructions");
    CHECK(r.llvm_instructions > codegen::kLargeModuleInstructions);
    CHECK(r.llvm_optimization_level == 1);
    for (int n : {1, 7, 67}) {
        Buffer<int> got(n), want(n);
        c.realize({got});
        interpret(pipeline, {want});
        INFO("extent " << n);
        CHECK(apps::compare(got, want, 0).ok);
    }
}

namespace {

// Calls `call` (a pipeline's run, checking its outputs) three times: the first allocates from
// the buffer pool, the others take what it gave back; after each, the pool holds at least
// `cached` bytes again. In all, the calls allocate no more than the first did, or than
// `most_allocated` where more may be live at once than the first call had (each thread's
// scratchpad: a thread that finished its tiles and gave its buffer back before another started
// lets that one reuse it, so the first call may allocate one where a later one needs two).
void check_calls_reuse_pooled_buffers(const std::function<void()> &call, int64_t cached, uint64_t most_allocated = 0) {
    runtime::buffer_pool_release();
    const uint64_t start = runtime::buffer_pool_stats().allocated;
    uint64_t first = 0;
    for (int k = 0; k < 3; ++k) {
        runtime::BufferPoolStats before = runtime::buffer_pool_stats();
        call();
        runtime::BufferPoolStats after = runtime::buffer_pool_stats();
        INFO("call " << k);
        if (k == 0) {
            CHECK(after.allocated > before.allocated);
            first = after.allocated - start;
        } else {
            CHECK(after.reused > before.reused);
        }
        CHECK(after.cached_bytes >= cached);  // given back on return
    }
    CHECK(runtime::buffer_pool_stats().allocated - start <= std::max(first, most_allocated));
    runtime::buffer_pool_release();
    CHECK(runtime::buffer_pool_stats().cached_bytes == 0);
}

} // namespace

TEST_CASE("a second call reuses the first call's large buffers instead of mapping new ones", "[codegen][buffers]") {
    // gemver's A_hat is a full buffer of 600 x 600 doubles (2.9 MB): allocated by the first call,
    // then taken from the pool by the others, which compute the same values in it.
    auto app = apps::make_app("pb_gemver");
    app->prepare({600}, 5);
    Callable c = app->pipeline().compile();
    std::vector<Buffer<void>> want = app->make_outputs();
    app->reference(want);
    check_calls_reuse_pooled_buffers(
        [&] {
            std::vector<Buffer<void>> got = app->make_outputs();
            c.realize(got);
            for (size_t i = 0; i < got.size(); ++i) CHECK(apps::compare(got[i], want[i], 0).ok);
        },
        int64_t(600 * 600 * sizeof(double)));
}

TEST_CASE("a tile's scratchpads on the heap come from the buffer pool, so calls after the first take no new pages",
          "[codegen][buffers]") {
    // An upsampling consumer of a stencil, as a pyramid's levels are: the stencil's scratchpad
    // per tile of 4096 x 128 points holds about 2049 x 65 floats (over the 256 KiB kept on the
    // stack), which each thread running the tiles allocates on every call; nothing else is
    // allocated. From malloc, which maps such a block anew and unmaps it on free, every call
    // faulted its pages in again (local_laplacian: 4,000 page faults a call, 6% of its time).
    Var x("x"), y("y");
    InputBuffer<float> in("in", 2);
    Func coarse("coarse"), up("up");
    coarse(x, y) = in(x, y) + in(x + 1, y + 1) * 2.f;
    up(x, y) = coarse(x / 2, y / 2) + coarse(x / 2 + 1, y / 2 + 1);
    Pipeline p(up);
    CompileOptions o;
    o.tile_sizes = {4096, 128};
    o.threads = 2;  // at most 2 scratchpads live at once
    Callable c = p.compile(Target::host(), o);
    REQUIRE(p.schedule_json().find("\"scratch\"") != std::string::npos);
    const int w = 4101, h = 259;  // tiles cut at both ends
    Buffer<float> data(w / 2 + 3, h / 2 + 3);
    std::mt19937 rng(7);
    apps::fill_random(data, rng, -1.0, 1.0);
    in.set(data);
    Buffer<float> want(w, h);
    interpret(p, std::vector<Buffer<void>>{want});
    check_calls_reuse_pooled_buffers(
        [&] {
            Buffer<float> got(w, h);
            c.realize(got);
            CHECK(apps::compare(got, want, 0).ok);
        },
        int64_t(256 * 1024) + 64, 2);  // given back at the end of each thread's body
}

TEST_CASE("the buffer pool serves a freed buffer again only for the same size", "[codegen][buffers]") {
    runtime::buffer_pool_release();
    const int64_t mib = int64_t(1) << 20;
    runtime::BufferPoolStats start = runtime::buffer_pool_stats();
    void *a = runtime::buffer_pool_alloc(2 * mib);
    void *small = runtime::buffer_pool_alloc(4096);  // below kPooledBytes: malloc's, not pooled
    REQUIRE(a);
    REQUIRE(small);
    CHECK(reinterpret_cast<uintptr_t>(a) % 64 == 0);
    runtime::buffer_pool_free(a, 2 * mib);
    runtime::buffer_pool_free(small, 4096);
    CHECK(runtime::buffer_pool_stats().cached_bytes == 2 * mib);
    void *other = runtime::buffer_pool_alloc(3 * mib);  // another size: a new buffer
    CHECK(runtime::buffer_pool_stats().reused == start.reused);
    void *again = runtime::buffer_pool_alloc(2 * mib);
    CHECK(again == a);
    CHECK(runtime::buffer_pool_stats().reused == start.reused + 1);
    CHECK(runtime::buffer_pool_stats().cached_bytes == 0);
    runtime::buffer_pool_free(again, 2 * mib);
    runtime::buffer_pool_free(other, 3 * mib);
    runtime::buffer_pool_release();
    CHECK(runtime::buffer_pool_stats().cached_bytes == 0);
}

TEST_CASE("every tile of a collapsed parallel loop runs, however many threads share the chunks", "[codegen]") {
    // Threads take guided chunks of the collapsed (tile row, tile column) space
    // (cpu/openmp_loops.cpp): chunks start and end inside a row of tiles. The output starts
    // poisoned, so a tile no thread ran shows.
    InputBuffer<float> in("in", 2);
    Var x("x"), y("y");
    Func blur_x("blur_x"), blur_y("blur_y");
    blur_x(x, y) = in(x, y) + in(x + 1, y) * 2.f + in(x + 2, y);
    blur_y(x, y) = blur_x(x, y) + blur_x(x, y + 1) - blur_x(x, y + 2) * 0.5f;
    Pipeline p(blur_y);
    std::mt19937 rng(41);
    for (auto [w, h] : std::vector<std::pair<int, int>>{{67, 45}, {8, 8}, {129, 3}, {3, 131}}) {
        Buffer<float> input(w + 2, h + 2);
        apps::fill_random(input, rng, -1.0, 1.0);
        in.set(input);
        Buffer<float> want(w, h);
        interpret(p, {want});
        for (int threads : {1, 2, 3, 7}) {
            CompileOptions o;
            o.threads = threads;
            o.tile_sizes = {8, 8};
            Buffer<float> got(w, h);
            for (int j = 0; j < h; ++j)
                for (int i = 0; i < w; ++i) got(i, j) = std::numeric_limits<float>::quiet_NaN();
            p.compile(Target::host(), o).realize(got);
            apps::Comparison c = apps::compare(got, want, 0);
            INFO(w << " x " << h << ", " << threads << " threads: " << c.first_mismatch);
            CHECK(c.ok);
        }
    }
}

namespace {
// The threads of this process (its entries in /proc/self/task).
int threads_of_this_process() {
    int n = 0;
    for ([[maybe_unused]] const auto &entry : std::filesystem::directory_iterator("/proc/self/task")) ++n;
    return n;
}
} // namespace

TEST_CASE("a parallel loop of one iteration runs on the calling thread, without starting the team", "[codegen][openmp]") {
    // Rows in parallel; an output of one row has one iteration. In a child process forked after
    // compiling (libomp starts afresh after fork; no other thread runs there), one-row outputs
    // must leave the process with its one thread, and a tall output must start the team (which
    // shows that the count would see it).
    Var x("x"), y("y");
    InputBuffer<float> in("in", 2);
    Func f("f");
    f(x, y) = in(x, y) * 2.0f + 1.0f;
    CompileOptions o;
    o.threads = 2;
    o.keep_assembly = true;
    Callable c = Pipeline(f).compile(Target::host(), o);
    // Both calls, through the loader's import table (runtime/jit.h).
    CHECK(std::regex_search(c.report().llvm_ir, std::regex("%__kmpc_serialized_parallel[0-9]* = load ptr")));
    CHECK(std::regex_search(c.report().llvm_ir, std::regex("%__kmpc_fork_call[0-9]* = load ptr")));
    Buffer<float> input(300, 300);
    for (int j = 0; j < 300; ++j)
        for (int i = 0; i < 300; ++i) input(i, j) = float(i - j);
    in.set(input);
    pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        int code = 0;
        for (int row : {0, 1, 299}) {
            Buffer<float> one(300, 1);
            one.set_min({0, row});
            c.run(Bindings().set(in, input), {one});
            for (int i = 0; i < 300; ++i)
                if (one(i, row) != float(i - row) * 2.0f + 1.0f) code |= 1;
        }
        if (threads_of_this_process() != 1) code |= 2;
        Buffer<float> tall(300, 300);
        c.run(Bindings().set(in, input), {tall});
        if (tall(7, 250) != float(7 - 250) * 2.0f + 1.0f) code |= 1;
        if (threads_of_this_process() < 2) code |= 4;
        _exit(code);
    }
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    INFO("1: a wrong value; 2: a one-row output started threads; 4: a tall one did not");
    CHECK(WEXITSTATUS(status) == 0);
}
