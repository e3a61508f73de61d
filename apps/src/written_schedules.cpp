// Directive-written schedules of apps (written_schedules.h).
#include "tessera_apps/written_schedules.h"

#include <tessera/func_graph.h>

namespace tessera::apps {
namespace {

// The app's Func named `name` (its Vars are matched by name, so fresh Var handles serve).
Func func_named(const App &app, const std::string &name) {
    for (const auto &f : build_pipeline_graph(app.pipeline().outputs()).funcs)
        if (f->name == name) return Func(f);
    internal_error("app ", app.name(), " has no Func ", name);
}

void blur(const App &app) {
    Var x("x"), y("y"), c("c"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
    Func blur_x = func_named(app, "blur_x"), blur_y = func_named(app, "blur_y");
    blur_y.split(y, yo, yi, 256).split(x, xo, xi, 4096).reorder(xi, yi, xo, c, yo).parallel(yo).vectorize(xi);
    blur_x.store_at(blur_y, xo).compute_at(blur_y, yi);
}

void matmul(const App &app) {
    Var j("j"), i("i"), io("io"), ir("ir"), im("im"), ii("ii"), jo("jo"), jr("jr"), jm("jm"), jr2("jr2"), jb("jb"),
        ji("ji"), ko("ko"), kr("kr"), km("km"), ki("ki");
    VarOrRVar k = Var("k.x");
    Func c = func_named(app, app.name());
    c.split(i, io, ii, 8).split(j, jo, ji, 1024).reorder(ji, ii, jo, io).parallel(io).parallel(jo).vectorize(ji);
    c.update(0)
        .split(i, io, ir, 32)
        .split(ir, im, ii, 8)
        .split(k, ko, kr, 128)
        .split(kr, km, ki, 32)
        .split(j, jo, jr, 4096)
        .split(jr, jm, jr2, 1024)
        .split(jr2, jb, ji, 32)
        .reorder({ji, ii, ki, jb, jm, km, im, jo, ko, io})
        .unroll(ii)
        .vectorize(ji)
        .parallel(io);
}

} // namespace

std::vector<std::string> apps_with_written_schedules() { return {"blur_x_blur_y", "matmul", "gemm"}; }

bool apply_written_schedule(App &app) {
    if (app.name() == "blur_x_blur_y") blur(app);
    else if (app.name() == "matmul" || app.name() == "gemm") matmul(app);
    else return false;
    return true;
}

} // namespace tessera::apps
