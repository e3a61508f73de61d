// The groups' ASTs generated on several threads, each in an isl context of its own
// (AstQuota::threads): the loops are those of one thread, and they compute the same values.
#include "poly_test_util.h"

using namespace tessera;

namespace {

// `name` scheduled with `o` on one thread and on four.
void check_threads_agree(const std::string &name, const std::vector<int> &sizes, poly::ScheduleOptions o = {}) {
    auto app = apps::make_app(name);
    std::shared_ptr<const poly::Model> m = poly::build_model(app->pipeline());
    o.ast_threads = 1;
    poly::Program one = poly::schedule_model(m, o);
    o.ast_threads = 4;
    poly::Program four = poly::schedule_model(m, o);
    INFO(name << (o.gpu ? " (GPU)" : ""));
    REQUIRE(one.nest);
    REQUIRE(four.nest);
    CHECK(four.ast_c == one.ast_c);
    if (o.gpu) return;  // (the AST interpreter runs host loops)
    app->prepare(sizes, 5);
    poly_test::check_runs(four, *app, name + " on four threads");
}

} // namespace

TEST_CASE("groups' ASTs generated on several threads are the loops of one thread", "[poly][ast]") {
    // Several register-tiled groups (and their marks read back from the printed trees).
    check_threads_agree("pb_3mm", {7, 13, 37, 1, 31});
    check_threads_agree("pb_covariance", {33, 65});
    // A folded time loop: the AST versioned on the parameters, each case in parts.
    check_threads_agree("pb_heat_3d", {7, 13});
    check_threads_agree("pb_jacobi_2d", {7, 33});
    // Overlapped tiles with scratchpads, many groups.
    check_threads_agree("camera_pipe", {70, 58});
    check_threads_agree("pyramid_blend", {64, 48});
    // GPU marks: kernels, threads, barriers.
    poly::ScheduleOptions gpu;
    gpu.gpu = true;  // (as the runtime asks for an sm_80 GPU)
    gpu.sliding_window = false;
    gpu.register_tiling = false;
    gpu.vector_width = 32;
    check_threads_agree("harris", {37, 29}, gpu);
    check_threads_agree("pb_2mm", {7, 13, 1, 37}, gpu);
}
