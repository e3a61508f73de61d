// Register tiling (poly/register_tiling.h): which updates get it, the check that lets the code
// generator give each row its own alias scope, and the results at sizes that leave partial
// tiles on every side.
#include "poly_test_util.h"

#include <sys/mman.h>
#include <unistd.h>

#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <nlohmann/json.hpp>

#include <tessera/poly/register_tiling.h>
#include <tessera/poly/tree_transform.h>

using namespace tessera;
using json = nlohmann::json;

namespace {

// C(j, i) = 0; C(j, i) += A(k, i) * B(j, k) (+ `extra`, a term of the update).
struct MatMul {
    Var j{"j"}, i{"i"};
    InputBuffer<float> A{"A", 2}, B{"B", 2};
    Func C{"C"};
    RDom k{0, 33, "k"};
    Pipeline pipeline;
    explicit MatMul(int extra = 0) {
        C(j, i) = 0.f;
        if (extra == 0) C(j, i) += A(k, i) * B(j, k);
        if (extra == 1) C(j, i) += A(k, i) * B(j, k) + C(j + 1, i);  // reads a neighbour of its element
        pipeline = Pipeline(C);
    }
};

// The update's band, reordered (i, k, j) and declared coincident on i and j as the scheduler
// would find them (this checks the aliasing condition alone).
isl::schedule_node update_band(const poly::Model &m) {
    isl::schedule_node n = m.original.root().child(0).child(1).child(0);  // sequence -> update filter -> band
    n = poly::permute_band(poly::set_band_parallel(n), {0, 2, 1});
    return isl::manage(isl_schedule_node_band_member_set_coincident(n.release(), 1, 0));
}

} // namespace

TEST_CASE("a matmul update keeps a block of rows in registers across its reduction loop", "[poly][register_tiling]") {
    auto app = apps::make_app("matmul");
    json j = json::parse(app->pipeline().schedule_json());
    std::string nest = j["loop_nest"];
    CHECK(nest.find("// register_tile:") != std::string::npos);
    CHECK(j["groups"][0]["note"].get<std::string>().find("register tiles of ") != std::string::npos);
    // The block loop is outermost among the point loops, the reduction below the mark, the
    // rows below it and the vector loop innermost.
    size_t mark = nest.find("register_tile"), vec = nest.find("// vector", mark);
    CHECK(mark != std::string::npos);
    CHECK(vec != std::string::npos);

    std::shared_ptr<const poly::Model> m = poly::build_model(app->pipeline());
    poly::ScheduleOptions off;
    off.register_tiling = false;
    CHECK(poly::schedule_model(m, off).ast_c.find("register_tile") == std::string::npos);

    // Triangular nests keep their loops: symm's rows bound its reduction (below > i), and a
    // register tile's full-tile test could not be made once per block.
    auto symm = apps::make_app("pb_symm");
    CHECK(symm->pipeline().schedule_json().find("register_tile") == std::string::npos);
}

TEST_CASE("a register tile's rows leave room in the register file for two vectors a row", "[poly][register_tiling]") {
    // matmul's rows i: 8 rows by 2 vectors take 16 of AVX-512's 32 registers; AVX2's 16 leave
    // room for 8 rows of 1 vector (1 load and 8 broadcasts per 8 multiply-adds) or 4 rows of 2
    // (2 loads and 4 broadcasts per 8): 4 rows, the member tiled by them.
    MatMul mm;
    std::shared_ptr<const poly::Model> m = poly::build_model(mm.pipeline);
    poly::ScheduleOptions avx512, avx2;
    avx512.vector_width = 16;
    avx2.vector_width = 8;
    std::string wide = poly::schedule_model(m, avx512).ast_c, narrow = poly::schedule_model(m, avx2).ast_c;
    CHECK(wide.find("register_tile:8:32") != std::string::npos);
    CHECK(narrow.find("register_tile:4:16") != std::string::npos);
}

TEST_CASE("register tiling applies only where rows never share an element", "[poly][register_tiling]") {
    MatMul plain;
    std::shared_ptr<const poly::Model> m = poly::build_model(plain.pipeline);
    poly::RegisterTiling ok = poly::register_tile(*m, update_band(*m), 0, 8, 32, update_band(*m));
    INFO(ok.why_not);
    CHECK(ok.band);

    MatMul neighbour(1);
    std::shared_ptr<const poly::Model> m2 = poly::build_model(neighbour.pipeline);
    poly::RegisterTiling no = poly::register_tile(*m2, update_band(*m2), 0, 8, 32, update_band(*m2));
    CHECK_FALSE(no.band);
    CHECK(no.why_not.find("reads the array it writes at another element") != std::string::npos);

    // A band whose unrolled member is not coincident is not register tiled either.
    isl::schedule_node serial = m->original.root().child(0).child(1).child(0);
    CHECK_FALSE(poly::register_tile(*m, serial, 0, 8, 32, serial).band);
}

TEST_CASE("register-tiled matmul matches plain loops with partial tiles on every side", "[poly][register_tiling][codegen]") {
    MatMul mm;
    // Output extents around the 8-row and 32-element register tiles and the 1024 tile, mins not
    // multiples of either (partial tiles at both ends), K odd.
    // With AVX-512 (blocks of 32 floats, two steps of 16): partial blocks of 24 (56, 88), 17
    // (49), 27 (59), 28 and 31 run two masked steps; 8 (40), 16 (48), 1 (33), 7 and 15 one.
    // With AVX2 (blocks of 16, two steps of 8): 12 (28, 60), 8 (56, 88, 40) and so on. Rows
    // short of a tile's 8 (AVX-512: M = 7, 9, 17) or 4 (AVX2: M = 3, 5, 6, 7, 9) go the edge's way.
    for (auto [M, N, min_i, min_j] : std::vector<std::array<int, 4>>{
             {8, 32, 0, 0}, {9, 33, 3, 5}, {17, 1091, -5, 1000}, {7, 31, 1, 1}, {40, 96, 8, 32}, {8, 56, 0, 0}, {16, 88, 8, 32},
             {9, 40, 0, 0}, {8, 59, 0, 5}, {8, 28, 0, 3}, {16, 60, -8, 0}, {8, 49, 0, 0}, {16, 48, 0, 0}, {8, 7, 0, 0},
             {8, 15, 0, 2}, {24, 31, 0, 0}, {8, 1, 0, 0}, {8, 33, 0, 0}, {4, 16, 0, 0}, {3, 17, 1, 0}, {6, 20, -2, 3},
             {5, 48, 0, 0}}) {
        int K = 33;
        Buffer<float> a(K, M), b(N, K);
        a.set_min({0, min_i});
        b.set_min({min_j, 0});
        std::mt19937 rng(uint32_t(M * 131 + N));
        std::uniform_real_distribution<float> u(-1.f, 1.f);
        for (int y = 0; y < M; ++y)
            for (int x = 0; x < K; ++x) a(x, y + min_i) = u(rng);
        for (int y = 0; y < K; ++y)
            for (int x = 0; x < N; ++x) b(x + min_j, y) = u(rng);
        mm.A.set(a);
        mm.B.set(b);
        Buffer<float> out(N, M);
        out.set_min({min_j, min_i});
        mm.pipeline.realize({out});
        int wrong = 0;
        for (int y = min_i; y < min_i + M; ++y)
            for (int x = min_j; x < min_j + N; ++x) {
                float acc = 0.f;
                for (int r = 0; r < K; ++r) acc = acc + a(r, y) * b(x, r);
                wrong += out(x, y) != acc;
            }
        INFO("M " << M << " N " << N << " mins " << min_i << ", " << min_j);
        CHECK(wrong == 0);
    }
    CHECK(mm.pipeline.schedule_json().find("register_tile") != std::string::npos);
}

TEST_CASE("a partial register block runs masked vector steps with its elements in registers across the reduction",
          "[poly][register_tiling][codegen]") {
    // A row's last block of 28 (of 32) columns: two vector steps, the second masked, not the
    // edge's scalar loops. Its accesses are masked intrinsics, which LLVM does not keep in
    // registers itself: the block's elements go to stack slots around the reduction loop, and
    // LLVM makes the slots registers (none is left in the optimized code).
    MatMul mm;
    CompileOptions o;
    o.keep_assembly = true;
    o.cache = false;
    Callable c = mm.pipeline.compile(Target::host(), o);
    std::string unoptimized = c.compiler_ir("llvm_unoptimized"), optimized = c.report().llvm_ir;
    CHECK(unoptimized.find("register_tile_masked") != std::string::npos);
    CHECK(unoptimized.find("%tile_slot = alloca") != std::string::npos);
    CHECK(optimized.find("@llvm.masked.load") != std::string::npos);
    CHECK(optimized.find("@llvm.masked.store") != std::string::npos);
    CHECK(optimized.find("%tile_slot = alloca") == std::string::npos);
}

// `n` int32 values that end where a page no access is allowed begins: a read past their end
// faults.
struct IntsBeforeGuardPage {
    size_t bytes = 0;
    char *map = nullptr;
    int32_t *data = nullptr;
    explicit IntsBeforeGuardPage(int n) {
        size_t page = size_t(sysconf(_SC_PAGESIZE)), used = (size_t(n) * 4 + page - 1) / page * page;
        bytes = used + page;
        map = static_cast<char *>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        REQUIRE(map != MAP_FAILED);
        REQUIRE(mprotect(map + used, page, PROT_NONE) == 0);
        data = reinterpret_cast<int32_t *>(map + used) - n;
    }
    IntsBeforeGuardPage(const IntsBeforeGuardPage &) = delete;
    IntsBeforeGuardPage &operator=(const IntsBeforeGuardPage &) = delete;
    ~IntsBeforeGuardPage() { munmap(map, bytes); }
};

TEST_CASE("a register tile's masked block gathers an operand read through a table only in its lanes",
          "[poly][register_tiling][codegen]") {
    // C(j, i) += A(k, i) * B(perm(j), k): B's lanes are gathered through perm, loaded contiguous.
    // A masked step's lanes past the row's end are neither loaded from perm, which ends where a
    // guard page begins (a whole vector there would fault), nor gathered from B.
    Var j("j"), i("i");
    InputBuffer<float> A("A", 2), B("B", 2);
    InputBuffer<int32_t> perm("perm", 1);
    Func C("C");
    RDom k(0, 19, "k");
    C(j, i) = 0.f;
    C(j, i) += A(k, i) * B(clamp(perm(j), 0, 63), k);
    Pipeline p(C);
    CHECK(p.schedule_json().find("register_tile") != std::string::npos);
    CompileOptions o;
    o.keep_assembly = true;
    o.cache = false;
    CHECK(p.compile(Target::host(), o).report().llvm_ir.find("@llvm.masked.gather") != std::string::npos);
    for (int N : {28, 45, 64, 7}) {
        Buffer<float> a(19, 16), b(64, 19);
        IntsBeforeGuardPage guarded(N);
        Buffer<int32_t> pm(guarded.data, std::vector<int>{N});
        std::mt19937 rng{uint32_t(N)};
        std::uniform_real_distribution<float> u(-1.f, 1.f);
        for (int y = 0; y < 16; ++y)
            for (int x = 0; x < 19; ++x) a(x, y) = u(rng);
        for (int y = 0; y < 19; ++y)
            for (int x = 0; x < 64; ++x) b(x, y) = u(rng);
        for (int x = 0; x < N; ++x) pm(x) = int32_t((x * 37 + 5) % 64);
        A.set(a);
        B.set(b);
        perm.set(pm);
        Buffer<float> got(N, 16), want(N, 16);
        p.realize({got});
        interpret(p, std::vector<Buffer<void>>{want});
        int wrong = 0;
        for (int y = 0; y < 16; ++y)
            for (int x = 0; x < N; ++x) wrong += got(x, y) != want(x, y);
        INFO("N " << N);
        CHECK(wrong == 0);
    }
}

TEST_CASE("an update whose write is strided along the vector loop is not register tiled", "[poly][register_tiling][codegen]") {
    // C(j, i) += A(i, k) * E(i, k) * B(i, j) * D(i, j): the four reads are contiguous along i,
    // two are strided along j and two along k, so i becomes the vector loop while C is
    // contiguous along j. A register tile would keep
    // no whole vector of C in a register: it would unroll one scalar store per lane and row
    // (fuzzer seed 2427171: 20,000 instructions in one block, 4 s in LLVM's SLP vectorizer).
    Var j("j"), i("i");
    InputBuffer<float> A("A", 2), B("B", 2), D("D", 2), E("E", 2);
    RDom k(0, 33, "k");
    Func C("C");
    C(j, i) = 0.f;
    C(j, i) += A(i, k) * E(i, k) * B(i, j) * D(i, j);
    Pipeline p(C);
    std::string nest = json::parse(p.schedule_json())["loop_nest"];
    INFO(nest);
    CHECK(nest.find("register_tile") == std::string::npos);
    CHECK(nest.find("// vector") != std::string::npos);

    const int N = 37, M = 70;
    Buffer<float> a(M, 33), e(M, 33), b(M, N), d(M, N);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (int y = 0; y < 33; ++y)
        for (int x = 0; x < M; ++x) {
            a(x, y) = u(rng);
            e(x, y) = u(rng);
        }
    for (int y = 0; y < N; ++y)
        for (int x = 0; x < M; ++x) {
            b(x, y) = u(rng);
            d(x, y) = u(rng);
        }
    A.set(a);
    B.set(b);
    D.set(d);
    E.set(e);
    Buffer<float> out(N, M), want(N, M);
    p.realize({out});
    interpret(p, {want});
    apps::Comparison c = apps::compare(out, want, 0);
    INFO(c.first_mismatch);
    CHECK(c.ok);
}

TEST_CASE("a convolution's register tile unrolls output channels below its window and channel loops",
          "[poly][register_tiling][codegen]") {
    // conv(x, y, co) += w(r.x, r.y, r.z, co) * in(x + r.x - 1, y + r.y - 1, r.z): along the
    // output channel the input is invariant (one vector load for every row), along the image
    // rows the weights are (one broadcast for every row): unrolling the channels loads less. The
    // window loops, in bands of their own below the channel reduction, go outside the block.
    auto app = apps::make_app("conv2d");
    json j = json::parse(app->pipeline().schedule_json());
    std::string nest = j["loop_nest"];
    INFO(nest);
    size_t mark = nest.find("// register_tile:");  // 8 rows x 32 with AVX-512, 4 x 16 with AVX2
    REQUIRE(mark != std::string::npos);
    size_t vec = nest.find("// vector", mark), window = nest.find(" <= 2; c", mark);
    REQUIRE(vec != std::string::npos);
    CHECK(window < vec);  // the 3 x 3 window loops run around the block
    // The rows: the loop just above the vector mark runs over the output channel (co, the
    // statement's first dimension).
    size_t rows = nest.rfind("for (", vec);
    CHECK(nest.substr(rows, vec - rows).find("out_relu_min_2") != std::string::npos);
    // Widths that leave partial blocks of 24, 23, 8, 28, 7 and 13 (masked steps: a ResNet layer's
    // rows of 28, 14 and 7 columns are all partial blocks).
    for (std::vector<int> sizes : {std::vector<int>{56, 9, 5, 16}, std::vector<int>{23, 7, 3, 9}, std::vector<int>{40, 5, 4, 8},
                                   std::vector<int>{28, 6, 6, 8}, std::vector<int>{7, 7, 3, 16}, std::vector<int>{13, 4, 2, 8}}) {
        app->prepare(sizes, 11);
        std::vector<Buffer<void>> got = app->make_outputs(), want = app->make_outputs();
        app->pipeline().realize(got);
        app->reference(want);
        INFO(sizes[0] << " x " << sizes[1] << ", " << sizes[2] << " -> " << sizes[3] << " channels");
        CHECK(apps::compare(got[0], want[0], app->tolerance()).ok);
    }
}
