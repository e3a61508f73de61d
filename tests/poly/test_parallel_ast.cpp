// The groups' ASTs generated on several threads, each in an isl context of its own
// (AstQuota::threads): the loops are those of one thread, and they compute the same values.
#include "poly_test_util.h"

using namespace tessera;

namespace {

// `pipeline` scheduled with `o` on one thread and on four: the loops of four threads.
poly::Program on_threads_agreeing(const Pipeline &pipeline, poly::ScheduleOptions o) {
    std::shared_ptr<const poly::Model> m = poly::build_model(pipeline);
    o.ast_threads = 1;
    poly::Program one = poly::schedule_model(m, o);
    o.ast_threads = 4;
    poly::Program four = poly::schedule_model(m, o);
    REQUIRE(one.nest);
    REQUIRE(four.nest);
    CHECK(four.ast_c == one.ast_c);
    return four;
}

// The app `name`, as above, and run on four threads' loops at `sizes` (host schedules).
void check_threads_agree(const std::string &name, const std::vector<int> &sizes, poly::ScheduleOptions o = {}) {
    auto app = apps::make_app(name);
    INFO(name << (o.gpu ? " (GPU)" : ""));
    poly::Program four = on_threads_agreeing(app->pipeline(), o);
    if (o.gpu) return;  // (the AST interpreter runs host loops)
    app->prepare(sizes, 5);
    poly_test::check_runs(four, *app, name + " on four threads");
}

poly::ScheduleOptions gpu_options() {
    poly::ScheduleOptions gpu;
    gpu.gpu = true;  // (as the runtime asks for an sm_80 GPU)
    gpu.sliding_window = false;
    gpu.register_tiling = false;
    gpu.vector_width = 32;
    return gpu;
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
    check_threads_agree("harris", {37, 29}, gpu_options());
    check_threads_agree("pb_2mm", {7, 13, 1, 37}, gpu_options());
}

TEST_CASE("a group whose printed tree isl cannot read back gets its AST on the calling thread", "[poly][ast]") {
    // A sum that depends on no Var: a statement without loops, on a GPU a kernel of one block
    // (a mark "kernel:0" above a leaf, which isl prints and does not read back).
    InputBuffer<float> in("in", 1);
    RDom r(0, 4, "r");
    Var x("x"), y("y");
    Func f("f");
    f(x, y) = sum(in(r.x)) + cast<float>(x);
    poly::Program p = on_threads_agreeing(Pipeline(f), gpu_options());
    CHECK(p.ast_c.find("kernel:0") != std::string::npos);
}
