// Every app, scheduled automatically, checked with isl and run by the AST interpreter against the
// reference interpreter, at odd, prime and smaller-than-a-tile sizes, and with each fusion mode.
#include "poly_test_util.h"

using namespace tessera;
using poly_test::check_app;

namespace {
poly::ScheduleOptions fusion(poly::Fusion f) {
    poly::ScheduleOptions o;
    o.fusion = f;
    return o;
}
} // namespace

TEST_CASE("scheduled blur_x_blur_y matches the reference at awkward sizes", "[poly][schedule]") {
    for (auto f : {poly::Fusion::Smart, poly::Fusion::None, poly::Fusion::Max})
        check_app("blur_x_blur_y", {{5, 5}, {9, 13}, {37, 71}, {263, 41}}, fusion(f));
}

TEST_CASE("scheduled harris matches the reference", "[poly][schedule]") {
    check_app("harris", {{5, 5}, {23, 19}, {270, 37}});
    check_app("harris", {{17, 11}}, fusion(poly::Fusion::None));
}

TEST_CASE("scheduled unsharp_mask matches the reference", "[poly][schedule]") {
    check_app("unsharp_mask", {{5, 5}, {31, 37}, {261, 11}});
    check_app("unsharp_mask", {{13, 17}}, fusion(poly::Fusion::None));
}

TEST_CASE("scheduled histogram matches the reference", "[poly][schedule]") { check_app("histogram", {{1, 1}, {13, 7}, {97, 61}}); }

TEST_CASE("scheduled matmul and gemm (tiled bands) match the reference", "[poly][schedule]") {
    check_app("matmul", {{1, 1, 1}, {7, 5, 3}, {37, 41, 43}, {67, 33, 65}});
    check_app("gemm", {{1, 1, 1}, {13, 11, 9}, {35, 66, 33}});
}

TEST_CASE("scheduled prefix_sum (a scan) matches the reference", "[poly][schedule]") {
    check_app("prefix_sum", {{1}, {2}, {97}, {1031}});
}

TEST_CASE("scheduled jacobi_2d and seidel_2d time loops match the reference", "[poly][schedule]") {
    check_app("jacobi_2d", {{3, 3, 1}, {11, 7, 4}, {37, 23, 9}, {8, 8, 0}});
    check_app("seidel_2d", {{3, 3, 1}, {11, 7, 4}, {37, 23, 9}});
}

TEST_CASE("scheduled bilateral_grid (histogram, blur, data-dependent slice) matches the reference", "[poly][schedule]") {
    check_app("bilateral_grid", {{1, 1}, {9, 17}, {61, 29}});
}

TEST_CASE("scheduled camera_pipe (33 stages, lookup table, integer arithmetic) matches the reference",
          "[poly][schedule][image_suite]") {
    check_app("camera_pipe", {{33, 25}, {61, 45}});
    check_app("camera_pipe", {{47, 31}}, fusion(poly::Fusion::None));
}

TEST_CASE("scheduled pyramid apps (downsampled and upsampled levels in one tiled group) are legal and match the reference",
          "[poly][schedule][image_suite]") {
    check_app("pyramid_blend", {{64, 48}, {37, 29}});
    check_app("interpolate", {{64, 48}});
}

TEST_CASE("scheduled PolyBench kernels match the reference at MINI and awkward sizes, with each fusion mode",
          "[poly][schedule][polybench]") {
    const std::vector<std::pair<std::string, std::vector<std::vector<int>>>> kernels = {
        {"pb_atax", {{38, 42}, {7, 13}, {65, 37}}},
        {"pb_bicg", {{38, 42}, {7, 13}, {65, 37}}},
        {"pb_mvt", {{40}, {7}, {65}}},
        {"pb_2mm", {{16, 18, 22, 24}, {7, 13, 1, 37}, {33, 31, 13, 65}}},
        {"pb_3mm", {{16, 18, 20, 22, 24}, {7, 13, 37, 1, 31}, {65, 33, 7, 31, 37}}},
        {"pb_doitgen", {{8, 10, 12}, {7, 13, 37}, {13, 7, 65}}},
        {"pb_gemver", {{40}, {7}, {65}}},
        {"pb_gesummv", {{30}, {7}, {65}}},
        {"pb_syrk", {{20, 30}, {7, 13}, {33, 65}}},
        {"pb_syr2k", {{20, 30}, {7, 13}, {33, 65}}},
        {"pb_covariance", {{28, 32}, {13, 7}, {33, 65}}},
        {"pb_jacobi_1d", {{20, 30}, {7, 2}, {5, 65}}},
        {"pb_jacobi_2d", {{20, 30}, {7, 2}, {5, 33}}},
        {"pb_heat_3d", {{5, 10}, {7, 2}, {3, 13}}},
        {"pb_seidel_2d", {{20, 40}, {7, 2}, {5, 33}}},
        {"pb_gemm", {{20, 25, 30}, {7, 13, 1}, {33, 31, 65}}},
        {"pb_trmm", {{20, 30}, {7, 13}, {33, 65}}},
        {"pb_symm", {{20, 30}, {13, 7}, {33, 65}}},
        {"pb_correlation", {{28, 32}, {13, 7}, {33, 65}}},
        {"pb_lu", {{40}, {7}, {33}}},
        {"pb_cholesky", {{40}, {7}, {33}}},
        {"pb_trisolv", {{40}, {7}, {65}}},
        {"pb_floyd_warshall", {{60}, {7}, {33}}},
    };
    for (const auto &[name, sizes] : kernels) {
        check_app(name, sizes);
        check_app(name, {sizes.front()}, fusion(poly::Fusion::None));
        check_app(name, {sizes.front()}, fusion(poly::Fusion::Max));
    }
}

TEST_CASE("an AST over both its quotas is not built, and the caller is told", "[poly][schedule]") {
    // The automatic scheduler then falls back to the sequential program (fuzzer seed 2103434,
    // in the regression tests: 17 s in isl's atomic AST, which had no quota).
    auto app = apps::make_app("harris");
    std::shared_ptr<const poly::Model> m = poly::build_model(app->pipeline());
    poly::Program p = poly::schedule_model(m, {});
    REQUIRE(p.nest);
    CHECK_FALSE(poly::build_loop_nest(p, {1, 1}));
    CHECK_FALSE(p.nest);
    CHECK(poly::build_loop_nest(p));
    CHECK(p.nest);
}

TEST_CASE("an AST over its operation quota is generated atomic and computes the same", "[poly][schedule]") {
    // A quota of one operation for the separated AST: isl gives up at once and every band is
    // generated atomic, each statement once per loop with its guards inside (where it would
    // split the loop's range).
    // (pb_jacobi_1d's storage is folded: isl cannot build the atomic AST of the case where its
    // updates never run, which is then separated after all.)
    for (const std::string name : {"blur_x_blur_y", "harris", "pb_lu", "pb_floyd_warshall", "seidel_2d", "pb_jacobi_1d"}) {
        auto app = apps::make_app(name);
        std::shared_ptr<const poly::Model> m = poly::build_model(app->pipeline());
        poly::Program p = poly::schedule_model(m, {});
        const std::string separated = p.ast_c;
        CHECK(poly::build_loop_nest(p, {1, 0}));
        INFO(name << "\n" << p.ast_c);
        CHECK(p.ast_c.find("// isl's AST generator exceeded its operation quota") != std::string::npos);
        CHECK(separated.find("operation quota") == std::string::npos);
        std::vector<int> sizes = app->default_sizes();
        for (int &s : sizes) s = std::min(s, 19);
        app->prepare(sizes, 3);
        poly_test::check_program(p, *app, name + " atomic");
    }
}
