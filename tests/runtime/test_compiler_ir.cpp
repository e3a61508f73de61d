// Inspection: Callable::compiler_ir's stages, TESSERA_DUMP's files (the same text), and
// Callable::write_report's page.
#include "../test_util.h"

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <tessera/runtime/compiler_ir.h>

#include "cache_test_pipeline.h"

using namespace tessera;
namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path &p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
}

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

CompileOptions kept() {
    CompileOptions o;
    o.keep_assembly = true;
    return o;
}

} // namespace

TEST_CASE("compiler_ir returns every stage of a host compile that kept its assembly", "[inspection]") {
    cache_test::Blur blur;
    Callable c = blur.pipeline.compile(Target::host(), kept());
    CHECK(contains(c.compiler_ir("pipeline"), "func blur_x(x, y) : float32"));
    CHECK(contains(c.compiler_ir("pipeline"), "output blur_y"));
    std::string model = c.compiler_ir("model");
    CHECK(contains(model, "statement S_blur_x_0"));
    CHECK(contains(model, "domain:"));
    CHECK(contains(model, "read:   "));
    CHECK(contains(model, "array I_input"));
    std::string deps = c.compiler_ir("dependences");
    CHECK(contains(deps, "flow (read after write):"));
    CHECK(contains(deps, "S_blur_x_0[") );
    CHECK(contains(deps, "S_blur_y_0["));
    nlohmann::json schedule = nlohmann::json::parse(c.compiler_ir("schedule"));
    CHECK(schedule.contains("groups"));
    std::string nest = c.compiler_ir("loop_nest");
    CHECK(contains(nest, "for ("));
    CHECK(contains(nest, "vectorized for"));
    CHECK(contains(c.compiler_ir("llvm_unoptimized"), "define "));
    CHECK(contains(c.compiler_ir("llvm"), "define "));
    CHECK(c.compiler_ir("llvm") == c.report().llvm_ir);
    CHECK(contains(c.compiler_ir("asm"), "ret"));
    REQUIRE_USER_ERROR(c.compiler_ir("ptx"), "stage 'ptx' exists for GPU targets");
    REQUIRE_USER_ERROR(c.compiler_ir("bytecode"), "no stage 'bytecode'", "pipeline, model, dependences");
}

TEST_CASE("compiler_ir says how to keep the LLVM IR when a compile did not keep it", "[inspection]") {
    cache_test::Blur blur;
    CompileOptions o;
    o.cache = false;
    Callable c = blur.pipeline.compile(Target::host(), o);
    CHECK(contains(c.compiler_ir("loop_nest"), "for ("));
    REQUIRE_USER_ERROR(c.compiler_ir("llvm"), "stage 'llvm' was not kept", "keep_assembly", "TESSERA_DUMP");
}

TEST_CASE("a GPU target's compiler_ir has the kernels' PTX", "[inspection][gpu]") {
    cache_test::Blur blur;
    Callable c = blur.pipeline.compile(Target::cuda(80).emulated(), kept());
    CHECK(contains(c.compiler_ir("ptx"), ".entry"));
    CHECK(contains(c.compiler_ir("loop_nest"), "for ("));
    REQUIRE_USER_ERROR(c.compiler_ir("asm"), "stage 'asm' is the host's assembly");
}

TEST_CASE("TESSERA_DUMP writes every stage of each compile into consistently named files", "[inspection]") {
    fs::path dir = fs::temp_directory_path() / ("tessera-dump-test-" + std::to_string(getpid()));
    fs::remove_all(dir);
    setenv("TESSERA_DUMP", dir.c_str(), 1);
    cache_test::Blur blur;
    Callable host = blur.pipeline.compile();
    Callable gpu = blur.pipeline.compile(Target::cuda(80).emulated());
    unsetenv("TESSERA_DUMP");
    CHECK(contains(host.report().cache, "off: TESSERA_DUMP"));
    std::vector<fs::path> runs;
    for (const auto &e : fs::directory_iterator(dir)) runs.push_back(e.path());
    // <outputs>-<pid>-<count>: in the order compiled.
    auto count = [](const fs::path &p) { return std::stoi(p.filename().string().substr(p.filename().string().rfind('-') + 1)); };
    std::sort(runs.begin(), runs.end(), [&](const fs::path &a, const fs::path &b) { return count(a) < count(b); });
    REQUIRE(runs.size() == 2);
    CHECK(runs[0].filename().string().rfind("blur_y-", 0) == 0);
    std::vector<std::string> host_files{"01-pipeline.txt", "02-model.txt", "03-dependences.txt", "04-schedule.json",
                                        "05-loop_nest.c", "06-llvm_unoptimized.ll", "07-llvm.ll", "08-asm.s"};
    for (const std::string &name : host_files) {
        INFO(name);
        REQUIRE(fs::exists(runs[0] / name));
        std::string stage = name.substr(3, name.find('.') - 3);
        CHECK(read_file(runs[0] / name) == host.compiler_ir(stage));
    }
    CHECK_FALSE(fs::exists(runs[0] / "09-ptx.ptx"));
    CHECK(read_file(runs[1] / "09-ptx.ptx") == gpu.compiler_ir("ptx"));
    CHECK_FALSE(fs::exists(runs[1] / "08-asm.s"));
    fs::remove_all(dir);
}

TEST_CASE("write_report writes a self-contained page with the graph, groups, loop nest and phases", "[inspection]") {
    cache_test::Blur blur;
    Callable c = blur.pipeline.compile();
    fs::path page = fs::temp_directory_path() / ("tessera-report-test-" + std::to_string(getpid()) + ".html");
    c.write_report(page.string());
    std::string html = read_file(page);
    fs::remove(page);
    CHECK(contains(html, "<svg id=\"func-graph\""));
    CHECK(contains(html, "<g class=\"group\">"));
    CHECK(contains(html, ">blur_x</text>"));
    CHECK(contains(html, ">blur_y</text>"));
    CHECK(contains(html, ">input</text>"));
    CHECK(contains(html, "id=\"loop-nest\""));
    CHECK(contains(html, "id=\"phases\""));
    CHECK(contains(html, "id=\"cache-status\""));
    // Self-contained: no outside resource and no script.
    CHECK_FALSE(contains(html, "<script"));
    CHECK_FALSE(contains(html, "src=\"http"));
    CHECK_FALSE(contains(html, "href=\"http"));
    REQUIRE_USER_ERROR(c.write_report("/nonexistent-directory/report.html"), "cannot write /nonexistent-directory/report.html");
}
