// Vector code of compiled pipelines: explicit vector loops (strided, halved, clamped and gathered
// loads, byte-table lookups, masked first and last steps, uniform selects), what LLVM may do
// around them, and fused multiply-adds.
#include "../test_util.h"

#include <regex>
#include <sstream>
#include <tuple>

#include <tessera/codegen/cpu_target.h>
#include <tessera/codegen/llvm_lowering.h>
#include <tessera/runtime/compiled_pipeline.h>

#include "tessera_apps/app.h"

using namespace tessera;

namespace {

// Realizes `c` and interprets `p` (the reference interpreter) into buffers of `type` with `sizes`
// from `mins` (zeros when empty), and requires them equal in every element.
void require_as_interpreted(const Callable &c, const Pipeline &p, Type type, const std::vector<int> &sizes,
                            const std::vector<int64_t> &mins = {}) {
    Buffer<void> got(type, sizes), want(type, sizes);
    if (!mins.empty()) {
        got.set_min(mins);
        want.set_min(mins);
    }
    c.realize(got);
    interpret(p, std::vector<Buffer<void>>{want});
    got.for_each_coordinate([&](const std::vector<int64_t> &at) {
        std::ostringstream where;
        for (size_t i = 0; i < at.size(); ++i) where << (i ? ", " : "element (") << at[i];
        INFO(where.str() << ")");
        REQUIRE(apps::element(got, at) == apps::element(want, at));
    });
}

} // namespace

TEST_CASE("the blur's inner loops compile to vector instructions", "[codegen][vector]") {
    auto app = apps::make_app("blur_x_blur_y");
    CompileOptions o;
    o.keep_assembly = true;
    Callable c = app->pipeline().compile(Target::host(), o);
    const std::string &ir = c.report().llvm_ir, &asm_ = c.report().assembly;
    CHECK(std::regex_search(ir, std::regex("<(8|16) x float>")));
    // AVX2 ymm or AVX-512 zmm arithmetic on packed floats.
    CHECK(std::regex_search(asm_, std::regex("v(add|mul|fmadd[0-9]*)ps\\s+[^\\n]*%[yz]mm")));
    // The parallel loop forks the team: a call through the loader's import table (runtime/jit.h).
    CHECK(std::regex_search(ir, std::regex("%__kmpc_fork_call[0-9]* = load ptr")));
}

TEST_CASE("vector loops read every other element, and element x / 2, through whole-vector loads and shuffles",
          "[codegen][vector]") {
    // A deinterleave (in(2x), in(2x + 1)) and an interleave (select on x % 2 of a(x / 2) and
    // b(x / 2)), as a Bayer demosaic has them: without a gather of one element per lane. Output
    // mins even and odd, negative and positive, so that x / 2 starts at both parities and rounds
    // down below zero; the input is exactly as wide as the loads need (valgrind sees a read past
    // it). half_sum in a buffer of its own (fusion "none"), and in a scratchpad of woven's tile,
    // whose local coordinate is x / 2 minus the tile's origin.
    const std::string fusion = GENERATE(as<std::string>{}, "none", "");
    INFO("fusion '" << fusion << "'");
    Var x("x"), y("y");
    InputBuffer<int16_t> in("in", 2);
    Func half_sum("half_sum"), woven("woven");
    half_sum(x, y) = in(2 * x, y) + in(2 * x + 1, y) * int16_t(3);
    woven(x, y) = select(x % 2 == 0, half_sum(x / 2, y), half_sum(x / 2, y) - int16_t(1000));
    Pipeline p(woven);
    CompileOptions o;
    o.keep_assembly = true;
    if (!fusion.empty()) o.fusion = fusion;
    Callable c = p.compile(Target::host(), o);
    const std::string &ir = c.report().llvm_ir;
    if (fusion.empty()) {
        REQUIRE(p.schedule_json().find("\"scratch\"") != std::string::npos);
        // No lane of a vector filled by an element loaded by itself (a splat fills lane 0).
        CHECK_FALSE(std::regex_search(ir, std::regex("insertelement <[0-9]+ x i16> [^\\n]*, i64 [1-9]")));
    }
    // Even elements of two whole vectors; and the doubled elements of two half vectors.
    CHECK(std::regex_search(ir, std::regex("shufflevector <[0-9]+ x i16> %[^,]+, <[0-9]+ x i16> %[^,]+, <[0-9]+ x i32> <i32 0, i32 2, i32 4, i32 6")));
    CHECK(std::regex_search(ir, std::regex("shufflevector <[0-9]+ x i16> %[^,]+, <[0-9]+ x i16> %[^,]+, <[0-9]+ x i32> <i32 0, i32 (0, i32 1, i32 1|1, i32 1, i32 2)")));
    for (int mx : {-37, -6, 0, 5, 64}) {
        for (int w : {1, 2, 7, 16, 33, 130}) {
            int lo = mx >= 0 ? mx / 2 : -((1 - mx) / 2);  // floor(mx / 2)
            int hi = (mx + w - 1) >= 0 ? (mx + w - 1) / 2 : -((-(mx + w - 1) + 1) / 2);
            Buffer<int16_t> data(std::vector<int>{2 * (hi - lo + 1), 3});
            data.set_min({2 * lo, 0});
            for (int j = 0; j < 3; ++j)
                for (int i = 2 * lo; i < 2 * (hi + 1); ++i) data(i, j) = int16_t(i * 13 - j * 7);
            in.set(data);
            INFO("min " << mx << " width " << w);
            require_as_interpreted(c, p, Int(16), {w, 3}, {mx, 0});
        }
    }
}

TEST_CASE("a select whose condition is the same in every lane computes only the chosen value, behind a branch",
          "[codegen][vector]") {
    // mixed(x, y, c) picks one of three formulas by c, outside the vector loop over x (as
    // camera_pipe's colour matrix picks its row): the vector loop branches on c rather than
    // computing all three in every lane and blending them. Odd and negative regions; values
    // that overflow int16 so that every formula's wrapping shows.
    Var x("x"), y("y"), c("c");
    InputBuffer<int16_t> in("in", 2);
    Func mixed("mixed");
    mixed(x, y, c) = select(c == 0, in(x, y) * int16_t(301) + in(x + 1, y),
                            select(c == 1, in(x, y) - in(x + 2, y) * int16_t(7), in(x, y) / int16_t(3) + int16_t(11)));
    Pipeline p(mixed);
    CompileOptions o;
    o.keep_assembly = true;
    Callable compiled = p.compile(Target::host(), o);
    const std::string unoptimized = compiled.compiler_ir("llvm_unoptimized");
    CHECK(unoptimized.find("select.true") != std::string::npos);
    CHECK(unoptimized.find("select.false") != std::string::npos);
    for (auto [mx, w] : std::vector<std::pair<int, int>>{{0, 1}, {-7, 13}, {3, 64}, {-40, 131}}) {
        Buffer<int16_t> data(std::vector<int>{w + 2, 5});
        data.set_min({mx, -1});
        for (int j = -1; j < 4; ++j)
            for (int i = mx; i < mx + w + 2; ++i) data(i, j) = int16_t((i * 977 + j * 131) % 30011 - 15000);
        in.set(data);
        INFO("min " << mx << " width " << w);
        require_as_interpreted(compiled, p, Int(16), {w, 5, 3}, {mx, -1, 0});
    }
}

TEST_CASE("a vector loop gathers at each lane's int32 offsets from the mins of its varying coordinates", "[codegen][vector]") {
    // table(v) over [-5, 300) read at clamp(in(x, y), -5, 299): each lane's offset is its
    // coordinate minus the table's min in int32 lanes, zero extended (not an int64 vector that
    // LLVM's SLP vectorizer built and extracted lane by lane). grid(u, v) read at two
    // data-dependent coordinates, both varying: the lanes' offsets in one int64 vector, each
    // dimension's scaled by its stride, extracted once per lane.
    // (16-bit values: a table of bytes may be looked up with permutes instead, below.)
    Var x("x"), y("y"), v("v");
    InputBuffer<int32_t> in("in", 2);
    Func table("table"), looked("looked");
    table(v) = cast<uint16_t>(v * 37 + 5);
    looked(x, y) = table(clamp(in(x, y), -5, 299)) + cast<uint16_t>(y);
    Pipeline p(looked);
    CompileOptions o;
    o.keep_assembly = true;
    Callable compiled = p.compile(Target::host(), o);
    const std::string unoptimized = compiled.compiler_ir("llvm_unoptimized");
    CHECK(std::regex_search(unoptimized, std::regex("sub <[0-9]+ x i32> [^\\n]*\\n(.*\\n){0,3}.*extractelement <[0-9]+ x i32>[^\\n]*\\n.*zext i32")));
    for (auto [mx, w] : std::vector<std::pair<int, int>>{{0, 1}, {-7, 13}, {5, 64}, {-33, 131}}) {
        Buffer<int32_t> data(std::vector<int>{w, 3});
        data.set_min({mx, 0});
        for (int j = 0; j < 3; ++j)
            for (int i = mx; i < mx + w; ++i) data(i, j) = (i * 7919 + j * 104729) % 331 - 16;  // -16 .. 314: clamped both ways
        in.set(data);
        INFO("min " << mx << " width " << w);
        require_as_interpreted(compiled, p, UInt(16), {w, 3}, {mx, 0});
    }
    SECTION("two varying coordinates") {
        Var u("u");
        Func grid("grid"), sliced("sliced");
        grid(u, v) = cast<float>(u * 31 - v * 7) * 0.5f;
        sliced(x, y) = grid(clamp(in(x, y), -3, 19), clamp(in(x + 1, y) / 3, -2, 8)) + cast<float>(y);
        Pipeline q(sliced);
        Callable c2 = q.compile(Target::host(), o);
        CHECK(std::regex_search(c2.compiler_ir("llvm_unoptimized"),
                                std::regex("zext <[0-9]+ x i32> %[^\\n]* to <[0-9]+ x i64>\\n(.*\\n){0,6}.*mul <[0-9]+ x i64> [^\\n]*\\n.*add <[0-9]+ x i64>")));
        for (auto [mx, w] : std::vector<std::pair<int, int>>{{0, 1}, {-7, 13}, {5, 64}, {-33, 131}}) {
            Buffer<int32_t> data(std::vector<int>{w + 1, 3});
            data.set_min({mx, 0});
            for (int j = 0; j < 3; ++j)
                for (int i = mx; i <= mx + w; ++i) data(i, j) = (i * 7919 + j * 104729) % 41 - 8;  // -8 .. 32
            in.set(data);
            Buffer<float> got(std::vector<int>{w, 3}), want(std::vector<int>{w, 3});
            got.set_min({mx, 0});
            want.set_min({mx, 0});
            c2.realize(got);
            interpret(q, std::vector<Buffer<void>>{want});
            INFO("min " << mx << " width " << w);
            for (int j = 0; j < 3; ++j)
                for (int i = mx; i < mx + w; ++i) REQUIRE(got(i, j) == want(i, j));
        }
    }
}

TEST_CASE("lookups in tables of bytes match the interpreter at every table size", "[codegen][vector]") {
    // table(v) of `entries` bytes from `first` on, read at a clamped data-dependent index: with
    // AVX-512 VBMI (CodegenOptions::byte_table_permutes) a 64-lane loop of permutes of the table
    // held in registers, one per 128 entries, the last block loaded masked; sizes around the
    // blocks and the limit (1,024), signed and unsigned, odd and short rows (a loop's remainder).
    const bool permutes = codegen::host_permutes_bytes();
    Var x("x"), y("y"), v("v");
    InputBuffer<int32_t> in("in", 2);
    for (auto [entries, first, is_signed] : std::vector<std::tuple<int, int, bool>>{
             {1, 0, false}, {5, -2, true}, {64, 0, false}, {100, 7, true}, {128, 0, false}, {129, -64, false},
             {256, 0, true}, {700, 3, false}, {1000, -500, true}, {1024, 0, false}, {1025, 0, false}}) {
        Func table("table"), looked("looked");
        Expr value = v * 37 + (v / 3) * 11 + 5;
        table(v) = is_signed ? cast<int8_t>(value) : cast<uint8_t>(value);
        looked(x, y) = table(clamp(in(x, y) + y, first, first + entries - 1));
        Pipeline p(looked);
        CompileOptions o;
        o.keep_assembly = true;
        o.cache = false;
        Callable compiled = p.compile(Target::host(), o);
        INFO("entries " << entries << " from " << first << (is_signed ? ", int8" : ", uint8"));
        const bool permuted = compiled.compiler_ir("llvm_unoptimized").find("vpermi2var") != std::string::npos;
        CHECK(permuted == (permutes && entries <= codegen::kByteTableEntries));
        for (int w : {1, 63, 64, 67, 131, 200}) {
            Buffer<int32_t> data(std::vector<int>{w, 3});
            for (int j = 0; j < 3; ++j)
                for (int i = 0; i < w; ++i) data(i, j) = (i * 7919 + j * 104729) % (entries + 40) + first - 20;  // clamped both ways
            in.set(data);
            INFO("width " << w);
            require_as_interpreted(compiled, p, is_signed ? Int(8) : UInt(8), {w, 3});
        }
    }
}

TEST_CASE("a vector loop reads a clamped row, or every other element of one, as whole vectors inside it, one broadcast "
          "element wholly past either end, and gathers only across its edges",
          "[codegen][vector]") {
    // edged(x, y) reads in at clamp(x - 3, 2, row_hi) (a repeat_edge of part of the row), and
    // halved(x, y) at clamp(2x - 3, 2, row_hi) (a repeat_edge read by a downsample, inlined), over
    // regions wider than the row on both sides: vectors wholly inside, wholly outside and across
    // either edge, at odd widths and mins, against the interpreter.
    Var x("x"), y("y");
    InputBuffer<int16_t> in("in", 2);
    Param<int> row_hi("row_hi");
    Func edged("edged"), halved("halved");
    edged(x, y) = in(clamp(x - 3, 2, row_hi), y) * int16_t(3) + cast<int16_t>(x);
    halved(x, y) = in(clamp(2 * x - 3, 2, row_hi), y) * int16_t(5) - cast<int16_t>(x);
    for (const Func &f : {edged, halved}) {
        Pipeline p(f);
        CompileOptions o;
        o.keep_assembly = true;
        Callable compiled = p.compile(Target::host(), o);
        std::string ir = compiled.compiler_ir("llvm_unoptimized");
        CHECK(ir.find("clamp.interior") != std::string::npos);
        CHECK(ir.find("clamp.below") != std::string::npos);
        CHECK(ir.find("clamp.above") != std::string::npos);
        for (auto [mx, w, hi] : std::vector<std::tuple<int, int, int>>{{0, 1, 2}, {-9, 13, 5}, {-20, 71, 40}, {7, 130, 97}, {-40, 200, 2}}) {
            Buffer<int16_t> data(std::vector<int>{hi - 1, 2});
            data.set_min({2, 0});
            for (int j = 0; j < 2; ++j)
                for (int i = 2; i <= hi; ++i) data(i, j) = int16_t(i * 211 - j * 97);
            in.set(data);
            row_hi.set(hi);
            INFO(f.name() << ": min " << mx << " width " << w << " row [2, " << hi << "]");
            require_as_interpreted(compiled, p, Int(16), {w, 2}, {mx, 0});
        }
    }
}

TEST_CASE("a vector loop's last partial step is one masked step on AVX-512, unless it would gather or scatter",
          "[codegen][vector]") {
    // shifted(x, y) reads rows contiguously, and through a constant_exterior boundary (a clamp
    // and a select, as a zero-padded convolution's input copy): its rows' last W - 1 elements at
    // most run as one step with masked loads and stores. looked(x, y) gathers from a table at
    // data-dependent coordinates: a masked gather runs lane by lane on x86, so its tail stays a
    // scalar loop. Values against the interpreter at widths around multiples of the vector.
    Var x("x"), y("y");
    InputBuffer<float> in("in", 2), table("table", 1);
    InputBuffer<int32_t> index("index", 2);
    Func padded = BoundaryConditions::constant_exterior(in, 0.0f);
    Func shifted("shifted"), looked("looked");
    shifted(x, y) = padded(x - 1, y) * 2.0f + padded(x + 1, y) + in(clamp(x, 0, 3), y);
    looked(x, y) = table(clamp(index(x, y), 0, 99)) + cast<float>(x);
    bool masked = codegen::host_target_info().vector_bits >= 512;
    Buffer<float> entries(100);
    for (int i = 0; i < 100; ++i) entries(i) = float(i) * 0.5f - 3.0f;
    table.set(entries);
    for (const Func &f : {shifted, looked}) {
        Pipeline p(f);
        CompileOptions o;
        o.keep_assembly = true;
        Callable compiled = p.compile(Target::host(), o);
        bool tail = compiled.compiler_ir("llvm_unoptimized").find(".vtail") != std::string::npos;
        INFO(f.name());
        CHECK(tail == (masked && f.name() == "shifted"));
        for (int w : {1, 5, 15, 16, 17, 31, 33, 58, 63, 64, 65, 100}) {
            Buffer<float> data(std::vector<int>{std::max(w, 4), 3});
            Buffer<int32_t> at(std::vector<int>{w, 3});
            for (int j = 0; j < 3; ++j) {
                for (int i = 0; i < data.width(); ++i) data(i, j) = float(i * 31 + j * 7) * 0.25f;
                for (int i = 0; i < w; ++i) at(i, j) = (i * 7919 + j * 104729) % 130 - 15;
            }
            in.set(data);
            index.set(at);
            INFO("width " << w);
            require_as_interpreted(compiled, p, Float(32), {w, 3});
        }
    }
}

TEST_CASE("vectorize = false leaves every loop scalar, also one that LLVM's unrolling makes innermost", "[codegen][vector]") {
    // g's two inner loops run 9 times each: LLVM unrolls them fully, which leaves the loop over z
    // innermost. Unmarked, the loop vectorizer widened it to 64 lanes of byte gathers (z % 5)
    // times 81 bodies, and compiling took 16 s, nearly all of it in instruction scheduling.
    Var x("x"), y("y"), z("z");
    Buffer<uint8_t> data({16, 24});
    for (int j = 0; j < 24; ++j)
        for (int i = 0; i < 16; ++i) data(i, j) = uint8_t(i * 7 + j);
    InputBuffer<uint8_t> in("in", 2);
    in.set(data);
    Func g("g"), f("f");
    g(x, y, z) = (in(z % 5, y + 2) - in(5, 2 * x + 1)) * cast<uint8_t>(z);
    RDom r(0, 9, 0, 9);
    f(z) = sum(cast<int>(g(r.x, r.y, z)));
    Pipeline p(f);
    CompileOptions o;
    o.vectorize = false;
    o.fusion = "none";
    o.keep_assembly = true;
    Callable c = p.compile(Target::host(), o);
    CHECK(c.report().llvm_ir.find("vector.body") == std::string::npos);
    require_as_interpreted(c, p, Int(32), {203});
}

TEST_CASE("loops around a vector loop are not unrolled by LLVM, so a zero-initialized block stays a loop of memsets",
          "[codegen][vector]") {
    // A batched matmul's pure definition zeroes rows of 128 floats: the vector loop becomes one
    // 512-byte memset, and the tile loops around it run a constant number of times (the bounds
    // are constants, as in a traced PyTorch graph). LLVM unrolled them fully into blocks of 64
    // memsets, a thousand vector stores, which its instruction schedulers took 60 ms over (a
    // transformer layer had three such blocks).
    Var i("i"), j("j"), b("b");
    InputBuffer<float> a_in("a", 3), b_in("b", 3);
    Func bmm("bmm");
    RDom k(0, 16, "k");
    bmm(j, i, b) = 0.f;
    bmm(j, i, b) += a_in(k, i, b) * b_in(j, k, b);
    bmm.bound(j, 0, 128).bound(i, 0, 64).bound(b, 0, 8);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    Buffer<float> a_data({16, 64, 8}), b_data({128, 16, 8});
    for (int z = 0; z < 8; ++z)
        for (int y = 0; y < 64; ++y)
            for (int x = 0; x < 16; ++x) a_data(x, y, z) = u(rng);
    for (int z = 0; z < 8; ++z)
        for (int y = 0; y < 16; ++y)
            for (int x = 0; x < 128; ++x) b_data(x, y, z) = u(rng);
    a_in.set(a_data);
    b_in.set(b_data);
    Pipeline p(bmm);
    CompileOptions o;
    o.keep_assembly = true;
    Callable c = p.compile(Target::host(), o);
    const std::string &ir = c.report().llvm_ir;
    size_t memsets = 0;
    for (size_t at = ir.find("call void @llvm.memset"); at != std::string::npos; at = ir.find("call void @llvm.memset", at + 1)) ++memsets;
    INFO(memsets << " memsets");
    CHECK(memsets <= 4);
    require_as_interpreted(c, p, Float(32), {128, 64, 8});
}

TEST_CASE("loops around a vector loop are not unrolled at run-time trip counts, which would copy the nest inside",
          "[codegen][vector]") {
    // heat-3d's first planes and time tiles: loops over rows around each row's vector loop, with
    // trip counts known only at run time. LLVM unrolled such loops by 2 with a prologue for the
    // odd row, copying the vector loop and its remainder twice over (its runtime unrolling names
    // the copies' blocks ".prol" and ".epil": 48 of them), for no speed and 10% of the module's
    // machine code.
    auto app = apps::make_app("pb_heat_3d");
    app->prepare({3, 19}, 7);
    CompileOptions o;
    o.keep_assembly = true;
    Callable c = app->pipeline().compile(Target::host(), o);
    const std::string &ir = c.report().llvm_ir;
    CHECK(ir.find("llvm.loop.unroll.runtime.disable") != std::string::npos);
    CHECK(ir.find(".prol") == std::string::npos);
    CHECK(ir.find(".epil") == std::string::npos);
    std::vector<Buffer<void>> got = app->make_outputs(), want = app->make_outputs();
    c.realize(got);
    app->reference(want);
    CHECK(apps::compare(got[0], want[0], 0).ok);
}

TEST_CASE("fast_math lets float arithmetic contract into fused multiply-adds", "[codegen][vector]") {
    auto app = apps::make_app("blur_x_blur_y");
    app->prepare({37, 29}, 5);
    CompileOptions o;
    o.keep_assembly = true;
    Callable exact = app->pipeline().compile(Target::host(), o);
    o.fast_math = true;
    Callable fast = app->pipeline().compile(Target::host(), o);
    CHECK(exact.report().llvm_ir.find("fmul contract") == std::string::npos);
    CHECK(fast.report().llvm_ir.find("reassoc contract") != std::string::npos);
    if (codegen::host_cpu().features.find("+fma") != std::string::npos) {
        CHECK(exact.report().assembly.find("vfmadd") == std::string::npos);
        CHECK(fast.report().assembly.find("vfmadd") != std::string::npos);
    }
    std::vector<Buffer<void>> got = app->make_outputs(), want = app->make_outputs();
    fast.realize(got);
    app->reference(want);
    apps::Comparison c = apps::compare(got[0], want[0], 1e-5);
    INFO(c.first_mismatch);
    CHECK(c.ok);
}

TEST_CASE("on AMD's Zen cores the interleaved rows of a matrix-vector product are loaded without gathers", "[codegen][vector]") {
    CHECK(codegen::tuned_features("znver5", "+avx512f,+fma") == "+avx512f,+fma,+prefer-no-gather");
    CHECK(codegen::tuned_features("znver3", "") == "+prefer-no-gather");
    CHECK(codegen::tuned_features("skylake-avx512", "+avx512f,+fma") == "+avx512f,+fma");
    CHECK(codegen::tuned_features("sapphirerapids", "") == "");
    // gesummv: y = alpha A x + beta B x, its rows' reductions interleaved 8 at a time. Bit-exact
    // either way (no reassociation); on a Zen host, with no gather in its code.
    auto app = apps::make_app("pb_gesummv");
    app->prepare({203}, 7);
    CompileOptions o;
    o.keep_assembly = true;
    Callable c = app->pipeline().compile(Target::host(), o);
    CHECK_THAT(app->pipeline().schedule_json(), Catch::Contains("reductions interleaved"));
    if (codegen::host_cpu().cpu.rfind("znver", 0) == 0) CHECK(c.report().assembly.find("vgather") == std::string::npos);
    std::vector<Buffer<void>> got = app->make_outputs(), want = app->make_outputs();
    c.realize(got);
    app->reference(want);
    for (size_t i = 0; i < got.size(); ++i) CHECK(apps::compare(got[i], want[i], 0).ok);
}
