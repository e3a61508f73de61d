// tessera-report: the HTML report of a named app's pipeline (Callable::write_report).
//
//   tessera-report <app> [--out FILE] [--gpu SM]
//
// Compiles the app with the automatic schedule (for Target::cuda(SM).emulated() with --gpu) and
// writes one self-contained page: the Func graph with its fusion groups, the groups' tiles and
// scratchpads, GPU kernels, the loop nest, compile time by phase and the cache status. FILE
// defaults to <app>.html.
#include <cstdio>
#include <string>

#include "tessera_apps/app.h"

using namespace tessera;

int main(int argc, char **argv) {
    try {
        if (argc < 2 || argv[1][0] == '-') {
            std::fprintf(stderr, "usage: %s <app> [--out FILE] [--gpu SM]\napps:", argv[0]);
            for (const auto &n : apps::app_names()) std::fprintf(stderr, " %s", n.c_str());
            std::fprintf(stderr, "\n");
            return 2;
        }
        std::string app_name = argv[1], out = app_name + ".html";
        int gpu_sm = 0;
        for (int i = 2; i < argc; ++i) {
            std::string a = argv[i];
            if (a == "--out" && i + 1 < argc) out = argv[++i];
            else if (a == "--gpu" && i + 1 < argc) gpu_sm = std::stoi(argv[++i]);
            else user_error("tessera-report: unknown option '", a, "'.");
        }
        auto app = apps::make_app(app_name);
        Callable c = app->pipeline().compile(gpu_sm ? Target::cuda(gpu_sm).emulated() : Target::host());
        c.write_report(out);
        std::printf("%s\n", out.c_str());
        return 0;
    } catch (const tessera::Error &e) {
        std::fprintf(stderr, "tessera-report: %s\n", e.what());
        return 1;
    }
}
