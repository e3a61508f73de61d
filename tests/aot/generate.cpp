// Writes <stem>.o and <stem>.h: the blur_x_blur_y app compiled ahead of time.
#include <cstdio>

#include <tessera/runtime/aot.h>

#include "tessera_apps/app.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <output stem>\n", argv[0]);
        return 2;
    }
    auto app = tessera::apps::make_app("blur_x_blur_y");
    tessera::runtime::compile_to_files(app->pipeline(), argv[1], "aot_blur");
    return 0;
}
