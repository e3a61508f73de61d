// The model's original (sequential) schedule, through isl's AST and the AST interpreter,
// against the reference interpreter.
#include "../test_util.h"

#include <tessera/poly/ast_interpreter.h>
#include <tessera/poly/program.h>

#include "tessera_apps/app.h"

using namespace tessera;

TEST_CASE("the sequential program of every app matches the reference interpreter", "[poly][ast]") {
    for (const std::string &name : apps::app_names()) {
        auto app = apps::make_app(name);
        std::vector<int> sizes = app->small_sizes(23);
        app->prepare(sizes, 5);
        auto model = std::shared_ptr<const poly::Model>(poly::build_model(app->pipeline()));
        poly::Program prog = poly::sequential_program(model);
        std::vector<Buffer<void>> got = app->make_outputs(), want = app->make_outputs();
        poly::execute(prog, got);
        interpret(app->pipeline(), want);
        for (size_t i = 0; i < got.size(); ++i) {
            apps::Comparison c = apps::compare(got[i], want[i], 0);
            INFO(name << ": " << c.first_mismatch << "\n" << prog.ast_c);
            CHECK(c.ok);
        }
    }
}
