// Funcs recomputed by the consumers that read a few of their levels chosen per point, and stored
// for their other consumers (poly/recomputed_reads.h): local_laplacian's remapped planes.
#include "../test_util.h"

#include <algorithm>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

using namespace tessera;

namespace {

// A local_laplacian in miniature: `levels` (5 levels of the input through a lookup table) is
// read at 4 points by `down` (a downsample along x) and, through `detail` (inlined into `pick`,
// which reads each point of it once), at the levels li and li + 1 computed from the input.
// `up` reads down at x / 2, so it is inlined nowhere.
struct Levels {
    Var x{"x"}, y{"y"}, k{"k"}, i{"i"};
    InputBuffer<int> in{"in", 2};
    Func lut{"lut"}, levels{"levels"}, down{"down"}, up{"up"}, detail{"detail"}, pick{"pick"}, out{"out"};
    Levels() {
        Func clamped = BoundaryConditions::repeat_edge(in);
        lut(i) = i * i - 3 * i;
        Expr idx = clamp(clamped(x, y), 0, 63);
        levels(x, y, k) = clamped(x, y) * (k + 1) + lut(idx - 8 * k);
        down(x, y, k) = levels(2 * x - 1, y, k) + levels(2 * x, y, k) * 3 + levels(2 * x + 1, y, k) * 3 + levels(2 * x + 2, y, k);
        up(x, y, k) = down(x / 2, y, k);
        detail(x, y, k) = levels(x, y, k) - up(x, y, k);
        Expr li = clamp(in(x, y) / 16, 0, 3);
        pick(x, y) = detail(x, y, li) * 2 + detail(x, y, li + 1);
        out(x, y) = pick(x, y) + in(x, y);
    }
};

int want_at(const Buffer<int> &data, int x, int y) {
    int w = data.dim(0).extent, h = data.dim(1).extent;
    auto in = [&](int i, int j) { return data(std::clamp(i, 0, w - 1), std::clamp(j, 0, h - 1)); };
    auto levels = [&](int i, int j, int k) {
        int idx = std::clamp(in(i, j), 0, 63) - 8 * k;
        return in(i, j) * (k + 1) + idx * idx - 3 * idx;
    };
    auto down = [&](int i, int j, int k) {
        return levels(2 * i - 1, j, k) + levels(2 * i, j, k) * 3 + levels(2 * i + 1, j, k) * 3 + levels(2 * i + 2, j, k);
    };
    auto floor_div = [](int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
    auto detail = [&](int k) { return levels(x, y, k) - down(floor_div(x, 2), y, k); };
    int li = std::clamp(in(x, y) / 16, 0, 3);
    return detail(li) * 2 + detail(li + 1) + in(x, y);
}

} // namespace

TEST_CASE("a Func read at levels chosen per point by one consumer is recomputed there and stored for the others",
          "[poly][inlining]") {
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> value(0, 70);
    for (auto [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {2, 3}, {7, 5}, {37, 41}, {130, 9}}) {
        Levels a;
        Buffer<int> data(std::vector<int>{w, h});
        for (int j = 0; j < h; ++j)
            for (int i = 0; i < w; ++i) data(i, j) = value(rng);
        a.in.set(data);
        Pipeline p(a.out);
        INFO(w << " x " << h);
        // The schedule says which consumer recomputes levels; pick has no statement reading it.
        nlohmann::json j = nlohmann::json::parse(p.schedule_json());
        REQUIRE(j["pipeline"]["recomputed"].size() == 1);
        CHECK(j["pipeline"]["recomputed"][0]["func"] == "levels");
        CHECK(j["pipeline"]["recomputed"][0]["by"] == nlohmann::json::array({"pick"}));
        for (const char *way : {"cpu", "gpu emulator", "interpreter", "imported"}) {
            Buffer<int> got(std::vector<int>{w, h});
            std::string how = way;
            if (how == "cpu") p.compile(Target::host(), {}).realize(got);
            else if (how == "gpu emulator") p.compile(Target::cuda(80).emulated(), {}).realize(got);
            else if (how == "interpreter") interpret(p, std::vector<Buffer<void>>{Buffer<void>(got)});
            else {
                Levels b;
                b.in.set(data);
                Pipeline q(b.out);
                q.set_schedule_json(p.schedule_json());
                q.compile(Target::host(), {}).realize(got);
            }
            INFO(way);
            for (int y = 0; y < h; ++y)
                for (int x = 0; x < w; ++x) {
                    INFO("at " << x << ", " << y);
                    REQUIRE(got(x, y) == want_at(data, x, y));
                }
        }
    }
}
