// PolyBench 4.2 kernels written in the DSL (apps/src/polybench.cpp, polybench_stencils.cpp), compiled for the host with 1
// and 2 threads, against PolyBench's own loop nests at the MINI and SMALL dataset sizes and at
// awkward sizes: 1, primes, and sizes around the tile size 32. The reference interpreter is
// checked against the same loops, so that a compiled mismatch points at the compiler.
#include "compiled_app_check.h"

using namespace tessera;

namespace {

using Sizes = std::vector<int>;

void check_polybench(const std::string &name, const Sizes &mini, const Sizes &small, const std::vector<Sizes> &awkward) {
    CHECK(apps::make_app(name)->default_sizes() == small);
    std::vector<Sizes> sizes = {mini, small};
    sizes.insert(sizes.end(), awkward.begin(), awkward.end());
    compiled_app_check::check_interpreted(name, sizes);
    compiled_app_check::check_compiled(name, sizes);
}

} // namespace

TEST_CASE("compiled PolyBench atax matches PolyBench's loops at MINI, SMALL and awkward sizes", "[codegen][polybench]") {
    check_polybench("pb_atax", {38, 42}, {116, 124}, {{1, 1}, {1, 7}, {13, 1}, {7, 13}, {31, 33}, {65, 37}});
}

TEST_CASE("compiled PolyBench bicg matches PolyBench's loops at MINI, SMALL and awkward sizes", "[codegen][polybench]") {
    check_polybench("pb_bicg", {38, 42}, {116, 124}, {{1, 1}, {1, 7}, {13, 1}, {7, 13}, {31, 33}, {65, 37}});
}

TEST_CASE("compiled PolyBench mvt matches PolyBench's loops at MINI, SMALL and awkward sizes", "[codegen][polybench]") {
    check_polybench("pb_mvt", {40}, {120}, {{1}, {7}, {13}, {31}, {33}, {37}, {65}});
}

TEST_CASE("compiled PolyBench 2mm matches PolyBench's loops at MINI, SMALL and awkward sizes", "[codegen][polybench]") {
    check_polybench("pb_2mm", {16, 18, 22, 24}, {40, 50, 70, 80},
                    {{1, 1, 1, 1}, {7, 13, 1, 37}, {31, 33, 65, 7}, {33, 31, 13, 65}});
}

TEST_CASE("compiled PolyBench 3mm matches PolyBench's loops at MINI, SMALL and awkward sizes", "[codegen][polybench]") {
    check_polybench("pb_3mm", {16, 18, 20, 22, 24}, {40, 50, 60, 70, 80},
                    {{1, 1, 1, 1, 1}, {7, 13, 37, 1, 31}, {33, 31, 65, 13, 7}, {65, 33, 7, 31, 37}});
}

TEST_CASE("compiled PolyBench doitgen matches PolyBench's loops at MINI, SMALL and awkward sizes", "[codegen][polybench]") {
    check_polybench("pb_doitgen", {8, 10, 12}, {20, 25, 30}, {{1, 1, 1}, {7, 13, 37}, {31, 1, 33}, {13, 7, 65}});
}

TEST_CASE("compiled PolyBench gemver matches PolyBench's loops at MINI, SMALL and awkward sizes", "[codegen][polybench]") {
    check_polybench("pb_gemver", {40}, {120}, {{1}, {7}, {13}, {31}, {33}, {37}, {65}});
}

TEST_CASE("compiled PolyBench gesummv matches PolyBench's loops at MINI, SMALL and awkward sizes", "[codegen][polybench]") {
    check_polybench("pb_gesummv", {30}, {90}, {{1}, {7}, {13}, {31}, {33}, {37}, {65}});
}

TEST_CASE("compiled PolyBench syrk (lower triangle through RDom::where) matches PolyBench's loops at MINI, SMALL and "
          "awkward sizes",
          "[codegen][polybench]") {
    check_polybench("pb_syrk", {20, 30}, {60, 80}, {{1, 1}, {7, 13}, {13, 7}, {1, 33}, {37, 31}, {33, 65}});
}

TEST_CASE("compiled PolyBench syr2k (lower triangle through RDom::where) matches PolyBench's loops at MINI, SMALL and "
          "awkward sizes",
          "[codegen][polybench]") {
    check_polybench("pb_syr2k", {20, 30}, {60, 80}, {{1, 1}, {7, 13}, {13, 7}, {1, 33}, {37, 31}, {33, 65}});
}

TEST_CASE("compiled PolyBench covariance (upper triangle, mirrored) matches PolyBench's loops at MINI, SMALL and "
          "awkward sizes",
          "[codegen][polybench]") {
    // N = 1 divides 0 by float_n - 1 = 0: NaN in both, which compares equal.
    check_polybench("pb_covariance", {28, 32}, {80, 100}, {{1, 1}, {7, 13}, {13, 7}, {37, 2}, {31, 33}, {33, 65}});
}

TEST_CASE("compiled PolyBench jacobi-1d (a plane per half step) matches PolyBench's loops at MINI, SMALL and awkward "
          "sizes",
          "[codegen][polybench]") {
    // (And around its time tiles, 128 planes (64 steps) by 1024 points of the row.)
    check_polybench("pb_jacobi_1d", {20, 30}, {40, 120},
                    {{0, 7}, {1, 3}, {13, 1}, {7, 2}, {37, 31}, {3, 33}, {5, 65}, {64, 1023}, {65, 1025}, {129, 2049}});
}

TEST_CASE("compiled PolyBench jacobi-2d (time planes folded to two) matches PolyBench's loops at MINI, SMALL and "
          "awkward sizes",
          "[codegen][polybench]") {
    check_polybench("pb_jacobi_2d", {20, 30}, {40, 90}, {{0, 7}, {1, 3}, {13, 1}, {7, 2}, {17, 33}, {3, 65}});
}

TEST_CASE("compiled PolyBench heat-3d (time planes folded to two) matches PolyBench's loops at MINI, SMALL and awkward "
          "sizes",
          "[codegen][polybench]") {
    check_polybench("pb_heat_3d", {20, 10}, {40, 20}, {{0, 5}, {1, 3}, {7, 2}, {5, 13}, {3, 33}});
}

TEST_CASE("compiled PolyBench seidel-2d (in place, wavefront time tiles) matches PolyBench's loops at MINI, SMALL and "
          "awkward sizes",
          "[codegen][polybench]") {
    check_polybench("pb_seidel_2d", {20, 40}, {40, 120}, {{0, 7}, {1, 3}, {13, 1}, {7, 2}, {17, 33}, {3, 65}});
}

TEST_CASE("compiled PolyBench gemm matches PolyBench's loops at MINI, SMALL and awkward sizes", "[codegen][polybench]") {
    check_polybench("pb_gemm", {20, 25, 30}, {60, 70, 80}, {{1, 1, 1}, {7, 13, 37}, {33, 31, 65}, {13, 65, 1}});
}

TEST_CASE("compiled PolyBench trmm (rows below through RDom::where) matches PolyBench's loops at MINI, SMALL and "
          "awkward sizes",
          "[codegen][polybench]") {
    check_polybench("pb_trmm", {20, 30}, {60, 80}, {{1, 1}, {7, 13}, {13, 7}, {1, 33}, {37, 31}, {33, 65}});
}

TEST_CASE("compiled PolyBench symm (rows above and below gathered) matches PolyBench's loops at MINI, SMALL and "
          "awkward sizes",
          "[codegen][polybench]") {
    check_polybench("pb_symm", {20, 30}, {60, 80}, {{1, 1}, {7, 13}, {13, 7}, {1, 33}, {37, 31}, {33, 65}});
}

TEST_CASE("compiled PolyBench correlation (upper triangle, mirrored, unit diagonal) matches PolyBench's loops at MINI, "
          "SMALL and awkward sizes",
          "[codegen][polybench]") {
    check_polybench("pb_correlation", {28, 32}, {80, 100}, {{1, 1}, {7, 13}, {13, 7}, {37, 2}, {31, 33}, {33, 65}});
}

TEST_CASE("compiled PolyBench lu (in place, right-looking steps) matches PolyBench's loops at MINI, SMALL and awkward "
          "sizes",
          "[codegen][polybench]") {
    check_polybench("pb_lu", {40}, {120}, {{1}, {2}, {7}, {13}, {31}, {33}, {65}});
}

TEST_CASE("compiled PolyBench cholesky (in place, right-looking steps) matches PolyBench's loops at MINI, SMALL and "
          "awkward sizes",
          "[codegen][polybench]") {
    check_polybench("pb_cholesky", {40}, {120}, {{1}, {2}, {7}, {8}, {9}, {13}, {17}, {31}, {33}, {65}});
}

TEST_CASE("compiled PolyBench trisolv (forward substitution in place) matches PolyBench's loops at MINI, SMALL and "
          "awkward sizes",
          "[codegen][polybench]") {
    check_polybench("pb_trisolv", {40}, {120}, {{1}, {2}, {7}, {13}, {31}, {33}, {65}, {127}, {128}, {129}, {257}, {521}});
}

TEST_CASE("compiled PolyBench floyd-warshall (int paths, in place) matches PolyBench's loops at MINI, SMALL and "
          "awkward sizes",
          "[codegen][polybench]") {
    check_polybench("pb_floyd_warshall", {60}, {180}, {{1}, {2}, {7}, {31}, {33}, {65}});
}
