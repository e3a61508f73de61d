// Every app compiled for the host, with 1 and 2 threads, against its plain C++ loops at odd,
// prime and smaller-than-a-tile sizes.
#include "compiled_app_check.h"

#include <nlohmann/json.hpp>

using namespace tessera;
using compiled_app_check::check_compiled;

TEST_CASE("compiled blur_x_blur_y matches plain loops", "[codegen][apps]") {
    check_compiled("blur_x_blur_y", {{5, 5}, {9, 13}, {37, 71}, {263, 41}, {1031, 67}});
    CompileOptions none;
    none.fusion = "none";
    check_compiled("blur_x_blur_y", {{37, 29}}, none);
}
TEST_CASE("compiled harris matches plain loops", "[codegen][apps]") { check_compiled("harris", {{5, 5}, {23, 19}, {270, 37}}); }
TEST_CASE("compiled unsharp_mask matches plain loops", "[codegen][apps]") {
    check_compiled("unsharp_mask", {{5, 5}, {31, 37}, {261, 11}});
}
TEST_CASE("compiled histogram matches plain loops", "[codegen][apps]") { check_compiled("histogram", {{1, 1}, {13, 7}, {301, 97}}); }
TEST_CASE("compiled matmul and gemm match plain loops", "[codegen][apps]") {
    check_compiled("matmul", {{1, 1, 1}, {7, 5, 3}, {37, 41, 43}, {129, 67, 65}});
    check_compiled("gemm", {{1, 1, 1}, {13, 11, 9}, {35, 66, 33}});
}
TEST_CASE("compiled prefix_sum matches plain loops", "[codegen][apps]") { check_compiled("prefix_sum", {{1}, {2}, {97}, {10007}}); }
TEST_CASE("compiled jacobi_2d and seidel_2d match plain loops", "[codegen][apps]") {
    check_compiled("jacobi_2d", {{3, 3, 1}, {11, 7, 4}, {37, 23, 9}, {8, 8, 0}});
    check_compiled("seidel_2d", {{3, 3, 1}, {11, 7, 4}, {37, 23, 9}});
}
TEST_CASE("compiled bilateral_grid matches plain loops", "[codegen][apps]") {
    check_compiled("bilateral_grid", {{1, 1}, {9, 17}, {61, 29}, {130, 67}});
}
TEST_CASE("compiled conv2d (3x3, zero padding, bias, ReLU) matches plain loops", "[codegen][apps]") {
    // Images smaller than the kernel, primes, and sizes around the tile sizes 8 and 32.
    check_compiled("conv2d", {{1, 1, 1, 1}, {2, 3, 1, 2}, {23, 19, 5, 7}, {33, 9, 3, 17}, {65, 31, 2, 4}});
    compiled_app_check::check_interpreted("conv2d", {{2, 3, 1, 2}, {23, 19, 5, 7}});
}
TEST_CASE("compiled batched_matmul matches plain loops", "[codegen][apps]") {
    check_compiled("batched_matmul", {{1, 1, 1, 1}, {3, 29, 37, 31}, {2, 33, 17, 65}, {5, 8, 129, 7}});
    compiled_app_check::check_interpreted("batched_matmul", {{1, 1, 1, 1}, {3, 29, 37, 31}});
}

// Smart fusion's thresholds (CompileOptions::max_recompute, cache_bytes), which tessera-tune
// searches: each bounds a merge, the schedule's groups say which one stopped it, and every
// grouping computes what the plain loops compute.
TEST_CASE("smart fusion's thresholds are options: tighter ones split unsharp_mask's group, every grouping matches plain loops",
          "[codegen][apps][fusion]") {
    auto app = apps::make_app("unsharp_mask");
    auto groups = [&](const CompileOptions &o) {
        return nlohmann::json::parse(app->pipeline().compile(Target::host(), o).compiler_ir("schedule"))["groups"];
    };
    nlohmann::json automatic = groups({});
    CompileOptions no_recompute;
    no_recompute.max_recompute = 0.0;
    nlohmann::json split = groups(no_recompute);
    CHECK(split.size() > automatic.size());
    CHECK(split.dump().find("over max_recompute (0%)") != std::string::npos);
    CompileOptions small_cache;
    small_cache.cache_bytes = 4096;
    nlohmann::json small = groups(small_cache);
    CHECK(small.size() > automatic.size());
    CHECK(small.dump().find("over cache_bytes (4096)") != std::string::npos);
    // The schedule records the thresholds it was made with.
    CHECK(nlohmann::json::parse(app->pipeline().compile(Target::host(), small_cache).compiler_ir("schedule"))["options"]["cache_bytes"] ==
          4096);
    for (const CompileOptions &o : {no_recompute, small_cache})
        compiled_app_check::check_callable(*app, app->pipeline().compile(Target::host(), o), {{5, 5}, {31, 37}, {261, 11}}, 3,
                                           "thresholds");

    CompileOptions negative;
    negative.max_recompute = -0.5;
    REQUIRE_USER_ERROR(app->pipeline().compile(Target::host(), negative), "max_recompute", "leave it unset");
    CompileOptions empty_cache;
    empty_cache.cache_bytes = 0;
    REQUIRE_USER_ERROR(app->pipeline().compile(Target::host(), empty_cache), "cache_bytes", "leave it unset");
    CompileOptions gpu_cache;
    gpu_cache.cache_bytes = 1 << 20;
    REQUIRE_USER_ERROR(app->pipeline().compile(Target::cuda(80).emulated(), gpu_cache), "cache_bytes", "GPU target");
}
