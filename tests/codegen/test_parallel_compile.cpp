// A module's functions compiled on several threads (codegen/parallel_compile.h,
// CompileOptions::compile_threads): the split module computes exactly what the whole one does.
#include "compiled_app_check.h"

using namespace tessera;

namespace {

// Compiles `name` on one thread and on `threads`, checks how many parts each was compiled in,
// and runs both at each size: bit-identical to each other, and to the app's plain loops within
// its tolerance.
void check_split_compile(const std::string &name, int threads, int min_parts, const std::vector<std::vector<int>> &sizes) {
    auto app = apps::make_app(name);
    CompileOptions one, several;
    one.compile_threads = 1;
    several.compile_threads = threads;
    Callable whole = app->pipeline().compile(Target::host(), one);
    Callable split = app->pipeline().compile(Target::host(), several);
    INFO(name);
    CHECK(whole.report().llvm_partitions == 1);
    CHECK(split.report().llvm_partitions >= min_parts);
    CHECK(split.report().llvm_partitions <= threads);
    CHECK(split.report().llvm_optimization_level == whole.report().llvm_optimization_level);
    uint32_t seed = 11;
    for (const auto &s : sizes) {
        app->prepare(s, seed++);
        std::vector<Buffer<void>> got_whole = app->make_outputs(), got_split = app->make_outputs(), want = app->make_outputs();
        whole.realize(got_whole);
        split.realize(got_split);
        app->reference(want);
        for (size_t i = 0; i < want.size(); ++i) {
            INFO("sizes " << Catch::Detail::stringify(s) << ", output " << i);
            apps::Comparison same = apps::compare(got_split[i], got_whole[i], 0);
            INFO(same.first_mismatch);
            CHECK(same.ok);
            apps::Comparison right = apps::compare(got_split[i], want[i], app->tolerance());
            INFO(right.first_mismatch);
            CHECK(right.ok);
        }
    }
}

} // namespace

TEST_CASE("a module split over threads computes bit for bit what the whole module computes", "[codegen][parallel_compile]") {
    // Six parallel bodies and the entry, in three parts; sizes below, at and around the tiles.
    check_split_compile("pb_3mm", 3, 3, {{16, 18, 20, 22, 24}, {1, 1, 1, 1, 1}, {33, 7, 65, 9, 31}});
    // Mean, centering and the triangular product with its mirror.
    check_split_compile("pb_covariance", 2, 2, {{7, 13}, {37, 2}, {33, 65}});
    // One body and the entry: two parts.
    check_split_compile("harris", 4, 2, {{5, 5}, {23, 19}, {270, 37}});
}

TEST_CASE("a small module is compiled whole", "[codegen][parallel_compile]") {
    // Splitting costs a bitcode round trip per part: not worth it below
    // kParallelCompileInstructions (a one-stage pipeline is far below it).
    InputBuffer<float> in("in", 1);
    Func f("f");
    Var x("x");
    f(x) = in(x) * 2.0f;
    CompileOptions o;
    o.compile_threads = 8;
    Callable c = Pipeline(f).compile(Target::host(), o);
    CHECK(c.report().llvm_partitions == 1);
}

TEST_CASE("the IR and assembly of a split compile are kept part by part", "[codegen][parallel_compile]") {
    auto app = apps::make_app("pb_3mm");
    CompileOptions o;
    o.compile_threads = 2;
    o.keep_assembly = true;
    Callable c = app->pipeline().compile(Target::host(), o);
    REQUIRE(c.report().llvm_partitions == 2);
    const std::string &ir = c.report().llvm_ir;
    CHECK(ir.find("; partition 0 of 2") != std::string::npos);
    CHECK(ir.find("; partition 1 of 2") != std::string::npos);
    // Every function is defined in exactly one part (the entry, its setup and six bodies).
    CHECK(test_util::ir_functions(ir).size() == 8);
    CHECK(c.report().assembly.find("# partition 1") != std::string::npos);
}

TEST_CASE("compile_threads out of range is an error naming the option", "[codegen][parallel_compile][errors]") {
    InputBuffer<float> in("in", 1);
    Func f("f");
    Var x("x");
    f(x) = in(x) + 1.0f;
    CompileOptions o;
    o.compile_threads = -1;
    REQUIRE_USER_ERROR(Pipeline(f).compile(Target::host(), o), "CompileOptions::compile_threads is -1", "1 to 256");
}
