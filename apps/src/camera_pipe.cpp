// The camera pipeline of FCam as Halide's and PolyMage's benchmark suites run it: a raw Bayer
// mosaic (GRBG, 10-bit values in uint16) goes through hot-pixel suppression, deinterleaving into
// four half-resolution channels, edge-aware demosaicking (green by the smaller gradient, red and
// blue corrected by green's second derivative, diagonals for red at blue and blue at red),
// re-interleaving, a colour matrix interpolated between two calibrations by colour temperature
// (Q8.8 fixed point), a tone curve as a 1024-entry lookup table (gamma and contrast), and an
// unsharp-mask sharpening in 8-bit arithmetic: about 32 stages, uint8 RGB out.
//
// The output of a W x H raw image is (W - 32) x (H - 24) x 3: the raw image is shifted by
// (16, 12) so that every stage reads inside it without a boundary condition, as in Halide's app.
// All arithmetic except the lookup table is integer, and the table is computed in float32 with
// the same operations in the same order as the plain loops, so the output matches exactly.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "pyramid_reference.h"
#include "tessera_apps/app.h"

namespace tessera::apps {
namespace {

// Colour matrices (4 columns: r, g, b weights and an offset; 3 rows: r, g, b out) calibrated at
// 3200 K and 7000 K, the values of the FCam and Halide camera pipelines.
const float kMatrix3200[3][4] = {{1.6697f, -0.2693f, -0.4004f, -42.4346f},
                                 {-0.3576f, 1.0615f, 1.5949f, -37.1158f},
                                 {-0.2175f, -1.8751f, 6.9640f, -26.6970f}};
const float kMatrix7000[3][4] = {{2.2997f, -0.4478f, 0.1706f, -39.0923f},
                                 {-0.3826f, 1.5906f, -0.2080f, -25.4311f},
                                 {-0.0888f, -0.7344f, 2.2832f, -20.0826f}};

constexpr int kShiftX = 16, kShiftY = 12;  // where output (0, 0) sits in the raw image
constexpr int kLutSize = 1024;

// The average of two values of a 16-bit (or 8-bit) type, rounding up, computed in the type of
// twice the width: Halide's camera pipe `avg`.
Expr avg(const Expr &a, const Expr &b) {
    Type t = a.type();
    Type wider(t.code, t.bits * 2);
    return cast(t, (cast(wider, a) + b + 1) / 2);
}

// |a - b| of two 16-bit values, computed in int32 so that it never wraps.
Expr absolute_difference(const Expr &a, const Expr &b) { return abs(cast<int32_t>(a) - cast<int32_t>(b)); }

class CameraPipe : public App {
public:
    CameraPipe() : App("camera_pipe") {
        Var x("x"), y("y"), c("c");
        Func shifted("shifted");
        shifted(x, y) = cast<int16_t>(raw_(x + kShiftX, y + kShiftY));

        // Hot pixels: no value above the largest of its four same-colour neighbours.
        Func denoised("denoised");
        Expr brightest_neighbour =
            max(max(shifted(x - 2, y), shifted(x + 2, y)), max(shifted(x, y - 2), shifted(x, y + 2)));
        denoised(x, y) = clamp(shifted(x, y), cast<int16_t>(0), brightest_neighbour);

        Func deinterleaved("deinterleaved");
        deinterleaved(x, y, c) = select(c == 0, denoised(2 * x, 2 * y), c == 1, denoised(2 * x + 1, 2 * y), c == 2,
                                        denoised(2 * x, 2 * y + 1), denoised(2 * x + 1, 2 * y + 1));

        // Demosaic. v_s: the value of colour v at the sites of colour s (gr: green in red rows,
        // gb: green in blue rows), all at half resolution.
        Func g_gr("g_gr"), r_r("r_r"), b_b("b_b"), g_gb("g_gb");
        g_gr(x, y) = deinterleaved(x, y, 0);
        r_r(x, y) = deinterleaved(x, y, 1);
        b_b(x, y) = deinterleaved(x, y, 2);
        g_gb(x, y) = deinterleaved(x, y, 3);

        // Green at red and blue sites: interpolate along the direction of the smaller difference.
        Func g_r("g_r"), g_b("g_b");
        g_r(x, y) = select(absolute_difference(g_gr(x + 1, y), g_gr(x, y)) < absolute_difference(g_gb(x, y - 1), g_gb(x, y)),
                           avg(g_gr(x + 1, y), g_gr(x, y)), avg(g_gb(x, y - 1), g_gb(x, y)));
        g_b(x, y) = select(absolute_difference(g_gb(x - 1, y), g_gb(x, y)) < absolute_difference(g_gr(x, y + 1), g_gr(x, y)),
                           avg(g_gb(x - 1, y), g_gb(x, y)), avg(g_gr(x, y + 1), g_gr(x, y)));

        // Red and blue at green sites: the neighbours' average, corrected by the error green's
        // own interpolation would have made there.
        Func r_gr("r_gr"), b_gr("b_gr"), r_gb("r_gb"), b_gb("b_gb");
        r_gr(x, y) = g_gr(x, y) - avg(g_r(x, y), g_r(x - 1, y)) + avg(r_r(x - 1, y), r_r(x, y));
        b_gr(x, y) = g_gr(x, y) - avg(g_b(x, y), g_b(x, y - 1)) + avg(b_b(x, y), b_b(x, y - 1));
        r_gb(x, y) = g_gb(x, y) - avg(g_r(x, y), g_r(x, y + 1)) + avg(r_r(x, y), r_r(x, y + 1));
        b_gb(x, y) = g_gb(x, y) - avg(g_b(x, y), g_b(x + 1, y)) + avg(b_b(x, y), b_b(x + 1, y));

        // Red at blue and blue at red: the same along the diagonal of the smaller difference.
        Func r_b("r_b"), b_r("b_r");
        {
            Expr positive = g_b(x, y) - avg(g_r(x, y), g_r(x - 1, y + 1)) + avg(r_r(x, y), r_r(x - 1, y + 1));
            Expr negative = g_b(x, y) - avg(g_r(x - 1, y), g_r(x, y + 1)) + avg(r_r(x - 1, y), r_r(x, y + 1));
            r_b(x, y) = select(absolute_difference(r_r(x, y), r_r(x - 1, y + 1)) <
                                   absolute_difference(r_r(x - 1, y), r_r(x, y + 1)),
                               positive, negative);
        }
        {
            Expr positive = g_r(x, y) - avg(g_b(x, y), g_b(x + 1, y - 1)) + avg(b_b(x, y), b_b(x + 1, y - 1));
            Expr negative = g_r(x, y) - avg(g_b(x + 1, y), g_b(x, y - 1)) + avg(b_b(x + 1, y), b_b(x, y - 1));
            b_r(x, y) = select(absolute_difference(b_b(x, y), b_b(x + 1, y - 1)) <
                                   absolute_difference(b_b(x + 1, y), b_b(x, y - 1)),
                               positive, negative);
        }

        // Back to full resolution: even columns of red rows hold gr sites, odd ones r, and so on.
        auto interleave_x = [&](const Func &even, const Func &odd, const std::string &name) {
            Func f(name);
            f(x, y) = select(x % 2 == 0, even(x / 2, y), odd(x / 2, y));
            return f;
        };
        auto interleave_y = [&](const Func &even, const Func &odd, const std::string &name) {
            Func f(name);
            f(x, y) = select(y % 2 == 0, even(x, y / 2), odd(x, y / 2));
            return f;
        };
        Func red = interleave_y(interleave_x(r_gr, r_r, "red_even_rows"), interleave_x(r_b, r_gb, "red_odd_rows"), "red");
        Func green = interleave_y(interleave_x(g_gr, g_r, "green_even_rows"), interleave_x(g_b, g_gb, "green_odd_rows"),
                                  "green");
        Func blue = interleave_y(interleave_x(b_gr, b_r, "blue_even_rows"), interleave_x(b_b, b_gb, "blue_odd_rows"),
                                 "blue");
        Func demosaiced("demosaiced");
        demosaiced(x, y, c) = select(c == 0, red(x, y), c == 1, green(x, y), blue(x, y));

        // Colour correction: the matrix for this colour temperature, in Q8.8.
        Func matrix("matrix");
        Expr alpha = (1.0f / color_temp_ - 1.0f / 3200) / (1.0f / 7000 - 1.0f / 3200);
        matrix(x, y) = cast<int16_t>((matrix_3200_(x, y) * alpha + matrix_7000_(x, y) * (1 - alpha)) * 256.0f);
        Func corrected("corrected");
        {
            Expr ir = cast<int32_t>(demosaiced(x, y, 0));
            Expr ig = cast<int32_t>(demosaiced(x, y, 1));
            Expr ib = cast<int32_t>(demosaiced(x, y, 2));
            auto row = [&](int r) {
                return cast<int16_t>((matrix(3, r) + matrix(0, r) * ir + matrix(1, r) * ig + matrix(2, r) * ib) / 256);
            };
            corrected(x, y, c) = select(c == 0, row(0), c == 1, row(1), row(2));
        }

        // The tone curve (FCam's makeLUT): linear in [black, white], gamma, then a piecewise
        // quadratic contrast curve, to 8 bits.
        Func curve("curve");
        {
            Expr inverse_range = 1.0f / (white_level_ - black_level_);
            Expr b = 2.0f - pow(2.0f, contrast_ / 100.0f);
            Expr a = 2.0f - 2.0f * b;
            Expr xf = clamp(cast<float>(x - black_level_) * inverse_range, 0.0f, 1.0f);
            Expr g = pow(xf, 1.0f / gamma_);
            Expr z = select(g > 0.5f, 1.0f - (a * (1.0f - g) * (1.0f - g) + b * (1.0f - g)), a * g * g + b * g);
            Expr value = cast<uint8_t>(clamp(z * 255.0f + 0.5f, 0.0f, 255.0f));
            curve(x) = select(x <= black_level_, cast<uint8_t>(0), select(x > white_level_, cast<uint8_t>(255), value));
        }
        Func curved("curved");
        curved(x, y, c) = curve(clamp(cast<int32_t>(corrected(x, y, c)), 0, kLutSize - 1));

        // Sharpening: a [1 2 1] blur in y and in x (rounding 8-bit averages), and the image plus
        // the difference to it weighted by the strength in 3.5 fixed point.
        auto blur121 = [](const Expr &a, const Expr &b, const Expr &c) { return avg(avg(a, c), b); };
        Func unsharp_y("unsharp_y"), unsharp("unsharp"), mask("mask"), sharpened("camera_pipe");
        unsharp_y(x, y, c) = blur121(curved(x, y - 1, c), curved(x, y, c), curved(x, y + 1, c));
        unsharp(x, y, c) = blur121(unsharp_y(x - 1, y, c), unsharp_y(x, y, c), unsharp_y(x + 1, y, c));
        mask(x, y, c) = cast<int16_t>(curved(x, y, c)) - cast<int16_t>(unsharp(x, y, c));
        Expr strength_x32 = cast<int32_t>(cast<uint8_t>(clamp(sharpen_strength_ * 32.0f, 0.0f, 255.0f)));
        sharpened(x, y, c) =
            cast<uint8_t>(clamp(cast<int32_t>(curved(x, y, c)) + cast<int32_t>(mask(x, y, c)) * strength_x32 / 32, 0, 255));
        pipeline_ = Pipeline(sharpened);
    }

    std::vector<std::string> size_names() const override { return {"raw width", "raw height"}; }
    std::vector<int> default_sizes() const override { return {2592, 1968}; }
    std::vector<int> minimum_sizes() const override { return {33, 25}; }

    void prepare(const std::vector<int> &sizes, uint32_t seed) override {
        int W = sizes.at(0), H = sizes.at(1);
        if (W < 33 || H < 25)
            user_error("camera_pipe: the raw image must be at least 33 x 25 (the output is (W - 32) x (H - 24)); got ",
                       W, " x ", H, ".");
        std::mt19937 rng(seed);
        raw_buffer_ = Buffer<uint16_t>(W, H);
        fill_random(raw_buffer_, rng, 0, 1023);
        bind_parameters();
    }

    // The raw mosaic a sensor would have recorded of the photograph: GRBG sites (green at even
    // x of even rows, red at odd x; blue at even x of odd rows, green at odd x), the sRGB
    // values linearized by a 2.0 power (the pipeline's gamma) between the black and white levels.
    bool prepare_photo(const Buffer<float> &rgb, uint32_t) override {
        const int W = rgb.width(), H = rgb.height();
        if (W < 33 || H < 25)
            user_error("camera_pipe: the photograph must be at least 33 x 25 pixels; got ", W, " x ", H, ".");
        raw_buffer_ = Buffer<uint16_t>(W, H);
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) {
                int c = (y % 2 == 0) ? (x % 2 == 0 ? 1 : 0) : (x % 2 == 0 ? 2 : 1);
                float v = std::clamp(rgb(x, y, c), 0.0f, 1.0f);
                raw_buffer_(x, y) = uint16_t(25.0f + v * v * 998.0f + 0.5f);
            }
        bind_parameters();
        return true;
    }

    std::vector<Buffer<void>> make_outputs() const override {
        return {Buffer<uint8_t>(raw_buffer_.width() - 32, raw_buffer_.height() - 24, 3)};
    }

    void reference(const std::vector<Buffer<void>> &outputs) const override;

    double minimum_bytes() const override {
        double pixels = double(raw_buffer_.width()) * raw_buffer_.height();
        return 2.0 * pixels + 3.0 * double(raw_buffer_.width() - 32) * (raw_buffer_.height() - 24);
    }

private:
    void bind_parameters() {
        raw_.set(raw_buffer_);
        for (int r = 0; r < 3; ++r)
            for (int k = 0; k < 4; ++k) {
                m3200_(k, r) = kMatrix3200[r][k];
                m7000_(k, r) = kMatrix7000[r][k];
            }
        matrix_3200_.set(m3200_);
        matrix_7000_.set(m7000_);
        color_temp_.set(3700.f);
        gamma_.set(2.0f);
        contrast_.set(50.f);
        black_level_.set(25);
        white_level_.set(1023);
        sharpen_strength_.set(1.0f);
    }

    InputBuffer<uint16_t> raw_{"raw", 2};
    InputBuffer<float> matrix_3200_{"matrix_3200", 2}, matrix_7000_{"matrix_7000", 2};
    Param<float> color_temp_{"color_temp"}, gamma_{"gamma"}, contrast_{"contrast"}, sharpen_strength_{"sharpen_strength"};
    Param<int32_t> black_level_{"black_level"}, white_level_{"white_level"};
    Buffer<uint16_t> raw_buffer_;
    Buffer<float> m3200_{4, 3}, m7000_{4, 3};
};

using Plane = Image<int32_t>;

int16_t avg16(int a, int b) { return int16_t(floor_div(a + b + 1, 2)); }
uint8_t avg8(int a, int b) { return uint8_t((a + b + 1) / 2); }

void CameraPipe::reference(const std::vector<Buffer<void>> &outputs) const {
    Buffer<uint8_t> out = outputs.at(0);
    const int W = out.width(), H = out.height();
    // The output needs the demosaicked image over [-1, W] x [-1, H]; that needs half-resolution
    // values within 3 of [-1, W / 2], and those need denoised raw values within 2 of twice that.
    const int hx0 = -4, hy0 = -4, hw = W / 2 + 9, hh = H / 2 + 9;
    Plane denoised(2 * hx0, 2 * hy0, 2 * hw, 2 * hh);
    auto shifted = [&](int x, int y) { return int(int16_t(raw_buffer_(x + kShiftX, y + kShiftY))); };
    denoised.fill([&](int x, int y, int) {
        int a = std::max(std::max(shifted(x - 2, y), shifted(x + 2, y)), std::max(shifted(x, y - 2), shifted(x, y + 2)));
        return std::clamp(shifted(x, y), 0, a);
    });
    Plane g_gr(hx0, hy0, hw, hh), r_r = g_gr, b_b = g_gr, g_gb = g_gr, g_r = g_gr, g_b = g_gr, r_gr = g_gr,
                                  b_gr = g_gr, r_gb = g_gr, b_gb = g_gr, r_b = g_gr, b_r = g_gr;
    g_gr.fill([&](int x, int y, int) { return denoised(2 * x, 2 * y); });
    r_r.fill([&](int x, int y, int) { return denoised(2 * x + 1, 2 * y); });
    b_b.fill([&](int x, int y, int) { return denoised(2 * x, 2 * y + 1); });
    g_gb.fill([&](int x, int y, int) { return denoised(2 * x + 1, 2 * y + 1); });
    auto absd = [](int a, int b) { return std::abs(a - b); };
    g_r.fill([&](int x, int y, int) {
        return absd(g_gr(x + 1, y), g_gr(x, y)) < absd(g_gb(x, y - 1), g_gb(x, y)) ? avg16(g_gr(x + 1, y), g_gr(x, y))
                                                                                     : avg16(g_gb(x, y - 1), g_gb(x, y));
    });
    g_b.fill([&](int x, int y, int) {
        return absd(g_gb(x - 1, y), g_gb(x, y)) < absd(g_gr(x, y + 1), g_gr(x, y)) ? avg16(g_gb(x - 1, y), g_gb(x, y))
                                                                                     : avg16(g_gr(x, y + 1), g_gr(x, y));
    });
    // int16 arithmetic wraps; the values here never leave int16, but the cast keeps it honest.
    auto corrected_at = [](int g, int ga, int va) { return int(int16_t(g - ga + va)); };
    r_gr.fill([&](int x, int y, int) {
        return corrected_at(g_gr(x, y), avg16(g_r(x, y), g_r(x - 1, y)), avg16(r_r(x - 1, y), r_r(x, y)));
    });
    b_gr.fill([&](int x, int y, int) {
        return corrected_at(g_gr(x, y), avg16(g_b(x, y), g_b(x, y - 1)), avg16(b_b(x, y), b_b(x, y - 1)));
    });
    r_gb.fill([&](int x, int y, int) {
        return corrected_at(g_gb(x, y), avg16(g_r(x, y), g_r(x, y + 1)), avg16(r_r(x, y), r_r(x, y + 1)));
    });
    b_gb.fill([&](int x, int y, int) {
        return corrected_at(g_gb(x, y), avg16(g_b(x, y), g_b(x + 1, y)), avg16(b_b(x, y), b_b(x + 1, y)));
    });
    r_b.fill([&](int x, int y, int) {
        int p = corrected_at(g_b(x, y), avg16(g_r(x, y), g_r(x - 1, y + 1)), avg16(r_r(x, y), r_r(x - 1, y + 1)));
        int n = corrected_at(g_b(x, y), avg16(g_r(x - 1, y), g_r(x, y + 1)), avg16(r_r(x - 1, y), r_r(x, y + 1)));
        return absd(r_r(x, y), r_r(x - 1, y + 1)) < absd(r_r(x - 1, y), r_r(x, y + 1)) ? p : n;
    });
    b_r.fill([&](int x, int y, int) {
        int p = corrected_at(g_r(x, y), avg16(g_b(x, y), g_b(x + 1, y - 1)), avg16(b_b(x, y), b_b(x + 1, y - 1)));
        int n = corrected_at(g_r(x, y), avg16(g_b(x + 1, y), g_b(x, y - 1)), avg16(b_b(x + 1, y), b_b(x, y - 1)));
        return absd(b_b(x, y), b_b(x + 1, y - 1)) < absd(b_b(x + 1, y), b_b(x, y - 1)) ? p : n;
    });
    // Full resolution over [-1, W] x [-1, H]: which half-resolution plane a site takes its value from.
    auto site = [&](const Plane &even_even, const Plane &odd_even, const Plane &even_odd, const Plane &odd_odd, int x,
                    int y) {
        int hx = floor_div(x, 2), hy = floor_div(y, 2);
        bool odd_x = (x - 2 * hx) == 1, odd_y = (y - 2 * hy) == 1;
        const Plane &p = odd_y ? (odd_x ? odd_odd : even_odd) : (odd_x ? odd_even : even_even);
        return p(hx, hy);
    };
    int16_t matrix[3][4];
    {
        float kelvin = color_temp_.get();
        float alpha = (1.0f / kelvin - 1.0f / 3200) / (1.0f / 7000 - 1.0f / 3200);
        for (int r = 0; r < 3; ++r)
            for (int k = 0; k < 4; ++k) {
                float v = (kMatrix3200[r][k] * alpha + kMatrix7000[r][k] * (1 - alpha)) * 256.0f;
                matrix[r][k] = int16_t(std::clamp(std::trunc(v), -32768.f, 32767.f));
            }
    }
    uint8_t curve[kLutSize];
    {
        const int black = black_level_.get(), white = white_level_.get();
        const float inverse_range = 1.0f / float(white - black);
        const float b = 2.0f - std::pow(2.0f, contrast_.get() / 100.0f);
        const float a = 2.0f - 2.0f * b;
        for (int i = 0; i < kLutSize; ++i) {
            float xf = std::clamp(float(i - black) * inverse_range, 0.0f, 1.0f);
            float g = std::pow(xf, 1.0f / gamma_.get());
            float z = g > 0.5f ? 1.0f - (a * (1.0f - g) * (1.0f - g) + b * (1.0f - g)) : a * g * g + b * g;
            uint8_t value = uint8_t(std::clamp(z * 255.0f + 0.5f, 0.0f, 255.0f));
            curve[i] = i <= black ? 0 : i > white ? 255 : value;
        }
    }
    std::vector<Plane> curved(3, Plane(-1, -1, W + 2, H + 2));
    TESSERA_REFERENCE_PARALLEL_FOR
    for (int y = -1; y <= H; ++y)
        for (int x = -1; x <= W; ++x) {
            int rgb[3] = {site(r_gr, r_r, r_b, r_gb, x, y), site(g_gr, g_r, g_b, g_gb, x, y),
                          site(b_gr, b_r, b_b, b_gb, x, y)};
            for (int c = 0; c < 3; ++c) {
                int v = matrix[c][3] + matrix[c][0] * rgb[0] + matrix[c][1] * rgb[1] + matrix[c][2] * rgb[2];
                int corrected = int16_t(floor_div(v, 256));
                curved[c].at(x, y) = curve[std::clamp(corrected, 0, kLutSize - 1)];
            }
        }
    const int strength_x32 = int(uint8_t(std::clamp(sharpen_strength_.get() * 32.0f, 0.0f, 255.0f)));
    for (int c = 0; c < 3; ++c) {
        Plane unsharp_y(-1, 0, W + 2, H);
        const Plane &in = curved[c];
        unsharp_y.fill([&](int x, int y, int) { return avg8(avg8(in(x, y - 1), in(x, y + 1)), in(x, y)); });
        TESSERA_REFERENCE_PARALLEL_FOR
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) {
                int unsharp = avg8(avg8(unsharp_y(x - 1, y), unsharp_y(x + 1, y)), unsharp_y(x, y));
                int mask = int16_t(in(x, y) - unsharp);
                out(x, y, c) = uint8_t(std::clamp(in(x, y) + floor_div(mask * strength_x32, 32), 0, 255));
            }
    }
}

} // namespace

std::unique_ptr<App> make_camera_pipe() { return std::make_unique<CameraPipe>(); }

} // namespace tessera::apps
