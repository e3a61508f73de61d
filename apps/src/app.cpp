#include "tessera_apps/app.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <tessera/eval.h>

namespace tessera::apps {

std::unique_ptr<App> make_blur_x_blur_y();
std::unique_ptr<App> make_harris();
std::unique_ptr<App> make_unsharp_mask();
std::unique_ptr<App> make_histogram();
std::unique_ptr<App> make_matmul();
std::unique_ptr<App> make_gemm();
std::unique_ptr<App> make_conv2d();
std::unique_ptr<App> make_batched_matmul();
std::unique_ptr<App> make_prefix_sum();
std::unique_ptr<App> make_jacobi_2d();
std::unique_ptr<App> make_seidel_2d();
std::unique_ptr<App> make_bilateral_grid();
// The PolyMage/Halide image-pipeline suite.
std::unique_ptr<App> make_camera_pipe();
std::unique_ptr<App> make_pyramid_blend();
std::unique_ptr<App> make_interpolate();
std::unique_ptr<App> make_local_laplacian();
// PolyBench 4.2 (polybench.cpp).
std::unique_ptr<App> make_pb_atax();
std::unique_ptr<App> make_pb_bicg();
std::unique_ptr<App> make_pb_mvt();
std::unique_ptr<App> make_pb_2mm();
std::unique_ptr<App> make_pb_3mm();
std::unique_ptr<App> make_pb_doitgen();
std::unique_ptr<App> make_pb_gemver();
std::unique_ptr<App> make_pb_gesummv();
std::unique_ptr<App> make_pb_syrk();
std::unique_ptr<App> make_pb_syr2k();
std::unique_ptr<App> make_pb_covariance();
std::unique_ptr<App> make_pb_jacobi_1d();
std::unique_ptr<App> make_pb_jacobi_2d();
std::unique_ptr<App> make_pb_heat_3d();
std::unique_ptr<App> make_pb_seidel_2d();
std::unique_ptr<App> make_pb_gemm();
std::unique_ptr<App> make_pb_trmm();
std::unique_ptr<App> make_pb_symm();
std::unique_ptr<App> make_pb_correlation();
std::unique_ptr<App> make_pb_lu();
std::unique_ptr<App> make_pb_cholesky();
std::unique_ptr<App> make_pb_trisolv();
std::unique_ptr<App> make_pb_floyd_warshall();

namespace {
struct Entry {
    const char *name;
    std::unique_ptr<App> (*make)();
};
const Entry kApps[] = {
    {"blur_x_blur_y", make_blur_x_blur_y}, {"harris", make_harris},     {"unsharp_mask", make_unsharp_mask},
    {"histogram", make_histogram},         {"matmul", make_matmul},     {"gemm", make_gemm},
    {"prefix_sum", make_prefix_sum},       {"jacobi_2d", make_jacobi_2d}, {"seidel_2d", make_seidel_2d},
    {"bilateral_grid", make_bilateral_grid},
    {"camera_pipe", make_camera_pipe},
    {"pyramid_blend", make_pyramid_blend},
    {"interpolate", make_interpolate},
    {"local_laplacian", make_local_laplacian},
    {"conv2d", make_conv2d},
    {"batched_matmul", make_batched_matmul},
    {"pb_atax", make_pb_atax},
    {"pb_bicg", make_pb_bicg},
    {"pb_mvt", make_pb_mvt},
    {"pb_2mm", make_pb_2mm},
    {"pb_3mm", make_pb_3mm},
    {"pb_doitgen", make_pb_doitgen},
    {"pb_gemver", make_pb_gemver},
    {"pb_gesummv", make_pb_gesummv},
    {"pb_syrk", make_pb_syrk},
    {"pb_syr2k", make_pb_syr2k},
    {"pb_covariance", make_pb_covariance},
    {"pb_jacobi_1d", make_pb_jacobi_1d},
    {"pb_jacobi_2d", make_pb_jacobi_2d},
    {"pb_heat_3d", make_pb_heat_3d},
    {"pb_seidel_2d", make_pb_seidel_2d},
    {"pb_gemm", make_pb_gemm},
    {"pb_trmm", make_pb_trmm},
    {"pb_symm", make_pb_symm},
    {"pb_correlation", make_pb_correlation},
    {"pb_lu", make_pb_lu},
    {"pb_cholesky", make_pb_cholesky},
    {"pb_trisolv", make_pb_trisolv},
    {"pb_floyd_warshall", make_pb_floyd_warshall},
};
} // namespace

std::vector<std::string> app_names() {
    std::vector<std::string> v;
    for (const Entry &e : kApps) v.push_back(e.name);
    return v;
}

std::unique_ptr<App> make_app(const std::string &name) {
    for (const Entry &e : kApps)
        if (name == e.name) return e.make();
    std::string known;
    for (const Entry &e : kApps) known += std::string(known.empty() ? "" : ", ") + e.name;
    user_error("Unknown app '", name, "'. Known apps: ", known, ".");
}

double element(const Buffer<void> &b, const std::vector<int64_t> &c) {
    Value v = load_scalar(b.type(), static_cast<const uint8_t *>(b.address_of(c)));
    return ir::value_as_double(b.type(), v);
}

void set_element(const Buffer<void> &b, const std::vector<int64_t> &c, double v) {
    store_scalar(b.type(), static_cast<uint8_t *>(b.address_of(c)), ir::value_from_double(b.type(), v));
}


Buffer<float> read_ppm(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) user_error("read_ppm: cannot open '", path, "'.");
    auto token = [&]() {
        std::string t;
        while (in >> std::ws && in.peek() == '#') std::getline(in, t);
        in >> t;
        return t;
    };
    std::string magic = token(), w = token(), h = token(), maxval = token();
    int width = std::atoi(w.c_str()), height = std::atoi(h.c_str()), max = std::atoi(maxval.c_str());
    if (magic != "P6" || width <= 0 || height <= 0 || max <= 0 || max > 65535)
        user_error("read_ppm: '", path, "' is not a binary PPM (P6) image.");
    in.get();  // the single whitespace after the header
    const int bytes = max > 255 ? 2 : 1;
    std::vector<unsigned char> data(size_t(width) * size_t(height) * 3 * size_t(bytes));
    if (!in.read(reinterpret_cast<char *>(data.data()), std::streamsize(data.size())))
        user_error("read_ppm: '", path, "' ends before its ", width, " x ", height, " pixels.");
    Buffer<float> rgb(width, height, 3);
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x)
            for (int c = 0; c < 3; ++c) {
                size_t i = ((size_t(y) * size_t(width) + size_t(x)) * 3 + size_t(c)) * size_t(bytes);
                int v = bytes == 2 ? (data[i] << 8 | data[i + 1]) : data[i];
                rgb(x, y, c) = float(v) / float(max);
            }
    return rgb;
}

void fill_random(const Buffer<void> &b, std::mt19937 &rng, double lo, double hi) {
    Type t = b.type();
    b.for_each_coordinate([&](const std::vector<int64_t> &c) {
        double v;
        if (t.is_float()) v = std::uniform_real_distribution<double>(lo, hi)(rng);
        else v = double(std::uniform_int_distribution<int64_t>(int64_t(lo), int64_t(hi))(rng));
        set_element(b, c, v);
    });
}

Comparison compare(const Buffer<void> &got, const Buffer<void> &want, double tolerance) {
    Comparison r;
    if (got.type() != want.type() || got.dimensions() != want.dimensions()) {
        r.ok = false;
        r.first_mismatch = "type or dimensionality differs";
        return r;
    }
    for (int i = 0; i < got.dimensions(); ++i)
        if (got.min(i) != want.min(i) || got.extent(i) != want.extent(i)) {
            r.ok = false;
            r.first_mismatch = "shape differs in dimension " + std::to_string(i);
            return r;
        }
    want.for_each_coordinate([&](const std::vector<int64_t> &c) {
        double a = element(got, c), b = element(want, c);
        double err;
        if (std::isnan(a) || std::isnan(b)) err = (std::isnan(a) && std::isnan(b)) ? 0 : INFINITY;
        else if (a == b) err = 0;
        else err = std::fabs(a - b) / std::max(1.0, std::fabs(b));
        if (err > r.max_error) r.max_error = err;
        if (err > tolerance && r.ok) {
            r.ok = false;
            std::ostringstream s;
            s << "at (";
            for (size_t i = 0; i < c.size(); ++i) s << (i ? ", " : "") << c[i];
            s << "): got " << a << ", expected " << b;
            r.first_mismatch = s.str();
        }
    });
    return r;
}

} // namespace tessera::apps
