"""The image apps as Halide 21 pipelines, for bench/halide_suite.py: each app's algorithm as the
C++ DSL app writes it (apps/src/), stage for stage, with Halide's own hand schedule where Halide
ships one; the helpers they share; and random inputs of each app's shapes and ranges."""
import types

import halide as hl
import numpy as np

f32, i16, i32, u8, u16 = hl.Float(32), hl.Int(16), hl.Int(32), hl.UInt(8), hl.UInt(16)
GUARD = hl.TailStrategy.GuardWithIf
AUTO = hl.TailStrategy.Auto
ROUNDUP = hl.TailStrategy.RoundUp


def F(v):
    """A float32 constant (the C++ float literal v, rounded to float32 once)."""
    return hl.f32(float(np.float32(v)))


def fdiv(a, b):
    """a / b in float32, as C++ folds `1.0f / 12` (one correctly rounded float division)."""
    return float(np.float32(a) / np.float32(b))


def E(e):
    return e if isinstance(e, hl.Expr) else hl.Expr(e)


def tail(extent, factor):
    """The default tail for a split of an output dimension, or GuardWithIf when the output is smaller
    than the split factor (ShiftInwards would then reach outside the output buffer)."""
    return AUTO if extent >= factor else GUARD


def V(*names):
    return [hl.Var(n) for n in names]


def new_app(output, inputs, params, out_type, out_sizes, hand, estimate):
    return types.SimpleNamespace(output=output, inputs=inputs, params=params, out_type=out_type,
                                 out_sizes=out_sizes, hand=hand, estimate=estimate)


def set_param_estimates(params):
    for p, v in params:
        p.set_estimate(v)


# ---------------------------------------------------------------------------------------------------
# blur_x_blur_y (apps/src/blur_x_blur_y.cpp; schedule and algorithm of bench/halide_blur.py)

def build_blur_x_blur_y(arrays):
    C, H, W = arrays["input"].shape
    inp = hl.ImageParam(f32, 3, "input")
    x, y, c = V("x", "y", "c")
    blur_x, blur_y = hl.Func("blur_x"), hl.Func("blur_y")
    blur_x[x, y, c] = (inp[x, y, c] + F(4) * inp[x + 1, y, c] + F(6) * inp[x + 2, y, c] +
                       F(4) * inp[x + 3, y, c] + inp[x + 4, y, c]) / F(16)
    blur_y[x, y, c] = (blur_x[x, y, c] + F(4) * blur_x[x, y + 1, c] + F(6) * blur_x[x, y + 2, c] +
                       F(4) * blur_x[x, y + 3, c] + blur_x[x, y + 4, c]) / F(16)
    ow, oh = W - 4, H - 4

    def hand(target):
        xo, yo, xi, yi, t = V("xo", "yo", "xi", "yi", "t")
        tl = AUTO if (ow >= 256 and oh >= 32) else GUARD
        blur_y.reorder(x, y, c).tile(x, y, xo, yo, xi, yi, 256, 32, tl).fuse(yo, c, t).parallel(t).vectorize(xi, 8)
        blur_x.compute_at(blur_y, xo).vectorize(x, 8)

    def estimate():
        inp.set_estimates([hl.Range(0, W), hl.Range(0, H), hl.Range(0, 3)])
        blur_y.set_estimates([hl.Range(0, ow), hl.Range(0, oh), hl.Range(0, 3)])

    return new_app(blur_y, [(inp, arrays["input"])], [], f32, [ow, oh, 3], hand, estimate)


# ---------------------------------------------------------------------------------------------------
# harris (apps/src/harris.cpp; hand schedule: Halide's apps/harris CPU schedule, without its gray stage)

def build_harris(arrays):
    H, W = arrays["input"].shape
    inp = hl.ImageParam(f32, 2, "input")
    x, y = V("x", "y")
    Ix, Iy, Ixx, Ixy, Iyy = (hl.Func(n) for n in ("Ix", "Iy", "Ixx", "Ixy", "Iyy"))
    Sxx, Sxy, Syy, det, trace, harris = (hl.Func(n) for n in ("Sxx", "Sxy", "Syy", "det", "trace", "harris"))
    m1, p1, m2, p2 = F(fdiv(-1, 12)), F(fdiv(1, 12)), F(fdiv(-2, 12)), F(fdiv(2, 12))
    Iy[x, y] = (inp[x - 1, y - 1] * m1 + inp[x - 1, y + 1] * p1 + inp[x, y - 1] * m2 +
                inp[x, y + 1] * p2 + inp[x + 1, y - 1] * m1 + inp[x + 1, y + 1] * p1)
    Ix[x, y] = (inp[x - 1, y - 1] * m1 + inp[x + 1, y - 1] * p1 + inp[x - 1, y] * m2 +
                inp[x + 1, y] * p2 + inp[x - 1, y + 1] * m1 + inp[x + 1, y + 1] * p1)
    Ixx[x, y] = Ix[x, y] * Ix[x, y]
    Iyy[x, y] = Iy[x, y] * Iy[x, y]
    Ixy[x, y] = Ix[x, y] * Iy[x, y]

    def box(f):
        return (f[x - 1, y - 1] + f[x - 1, y] + f[x - 1, y + 1] + f[x, y - 1] + f[x, y] + f[x, y + 1] +
                f[x + 1, y - 1] + f[x + 1, y] + f[x + 1, y + 1])

    Sxx[x, y] = box(Ixx)
    Syy[x, y] = box(Iyy)
    Sxy[x, y] = box(Ixy)
    det[x, y] = Sxx[x, y] * Syy[x, y] - Sxy[x, y] * Sxy[x, y]
    trace[x, y] = Sxx[x, y] + Syy[x, y]
    harris[x, y] = det[x + 2, y + 2] - F(0.04) * trace[x + 2, y + 2] * trace[x + 2, y + 2]
    ow, oh = W - 4, H - 4

    def hand(target):
        vec = target.natural_vector_size(f32)
        yi = hl.Var("yi")
        harris.split(y, y, yi, 32, tail(oh, 32)).parallel(y).vectorize(x, vec)
        Ix.store_at(harris, y).compute_at(harris, yi).vectorize(x, vec)
        Iy.store_at(harris, y).compute_at(harris, yi).vectorize(x, vec)
        Ix.compute_with(Iy, x)

    def estimate():
        inp.set_estimates([hl.Range(0, W), hl.Range(0, H)])
        harris.set_estimates([hl.Range(0, ow), hl.Range(0, oh)])

    return new_app(harris, [(inp, arrays["input"])], [], f32, [ow, oh], hand, estimate)


# ---------------------------------------------------------------------------------------------------
# unsharp_mask (apps/src/unsharp_mask.cpp, PolyMage's version; hand schedule: the strip schedule of
# Halide's apps/unsharp CPU schedule applied to these stages)

def build_unsharp_mask(arrays):
    C, H, W = arrays["input"].shape
    inp = hl.ImageParam(f32, 3, "input")
    weight = hl.Param(f32, "weight", 3.0)
    threshold = hl.Param(f32, "threshold", float(np.float32(0.02)))
    w, th = E(weight), E(threshold)
    x, y, c = V("x", "y", "c")
    blurx, blury, sharpen, masked = (hl.Func(n) for n in ("blurx", "blury", "sharpen", "masked"))
    blurx[x, y, c] = (inp[x - 2, y, c] + F(4) * inp[x - 1, y, c] + F(6) * inp[x, y, c] +
                      F(4) * inp[x + 1, y, c] + inp[x + 2, y, c]) * F(0.0625)
    blury[x, y, c] = (blurx[x, y - 2, c] + F(4) * blurx[x, y - 1, c] + F(6) * blurx[x, y, c] +
                      F(4) * blurx[x, y + 1, c] + blurx[x, y + 2, c]) * F(0.0625)
    sharpen[x, y, c] = inp[x, y, c] * (F(1) + w) - blury[x, y, c] * w
    masked[x, y, c] = hl.select(hl.abs(inp[x + 2, y + 2, c] - blury[x + 2, y + 2, c]) < th,
                                inp[x + 2, y + 2, c], sharpen[x + 2, y + 2, c])
    ow, oh = W - 4, H - 4

    def hand(target):
        vec = target.natural_vector_size(f32)
        yo, yi = V("yo", "yi")
        masked.split(y, yo, yi, 32, tail(oh, 32)).vectorize(x, vec).parallel(yo).reorder(x, c, yi, yo)
        blurx.compute_at(masked, yi).store_at(masked, yo).vectorize(x, vec)
        blury.compute_at(masked, yi).store_at(masked, yo).vectorize(x, vec)

    def estimate():
        inp.set_estimates([hl.Range(0, W), hl.Range(0, H), hl.Range(0, 3)])
        masked.set_estimates([hl.Range(0, ow), hl.Range(0, oh), hl.Range(0, 3)])
        set_param_estimates([(weight, 3.0), (threshold, float(np.float32(0.02)))])

    return new_app(masked, [(inp, arrays["input"])], [], f32, [ow, oh, 3], hand, estimate)


# ---------------------------------------------------------------------------------------------------
# bilateral_grid (apps/src/bilateral_grid.cpp; hand schedule: Halide's apps/bilateral_grid CPU schedule)

def build_bilateral_grid(arrays):
    H, W = arrays["input"].shape
    inp = hl.ImageParam(f32, 2, "input")
    x, y, z, c = V("x", "y", "z", "c")
    s = 8
    inv_r = F(10)
    clamped = hl.BoundaryConditions.repeat_edge(inp)
    r = hl.RDom([hl.Range(0, s), hl.Range(0, s)], "r")
    val = hl.clamp(clamped[x * s + r.x - s // 2, y * s + r.y - s // 2], F(0), F(1))
    zi = hl.cast(i32, val * inv_r + F(0.5))
    grid = hl.Func("grid")
    grid[x, y, z, c] = F(0)
    grid[x, y, zi, c] += hl.select(c == 0, val, F(1))
    blurz, blurx, blury = hl.Func("blurz"), hl.Func("blurx"), hl.Func("blury")
    blurz[x, y, z, c] = (grid[x, y, z - 2, c] + grid[x, y, z - 1, c] * 4 + grid[x, y, z, c] * 6 +
                         grid[x, y, z + 1, c] * 4 + grid[x, y, z + 2, c])
    blurx[x, y, z, c] = (blurz[x - 2, y, z, c] + blurz[x - 1, y, z, c] * 4 + blurz[x, y, z, c] * 6 +
                         blurz[x + 1, y, z, c] * 4 + blurz[x + 2, y, z, c])
    blury[x, y, z, c] = (blurx[x, y - 2, z, c] + blurx[x, y - 1, z, c] * 4 + blurx[x, y, z, c] * 6 +
                         blurx[x, y + 1, z, c] * 4 + blurx[x, y + 2, z, c])
    v = hl.clamp(inp[x, y], F(0), F(1))
    zv = v * inv_r
    zs = hl.cast(i32, zv)
    zf = zv - hl.cast(f32, zs)
    xf = hl.cast(f32, x % s) / F(s)
    yf = hl.cast(f32, y % s) / F(s)
    xi, yi = x / s, y / s
    interpolated = hl.Func("interpolated")
    interpolated[x, y, c] = hl.lerp(
        hl.lerp(hl.lerp(blury[xi, yi, zs, c], blury[xi + 1, yi, zs, c], xf),
                hl.lerp(blury[xi, yi + 1, zs, c], blury[xi + 1, yi + 1, zs, c], xf), yf),
        hl.lerp(hl.lerp(blury[xi, yi, zs + 1, c], blury[xi + 1, yi, zs + 1, c], xf),
                hl.lerp(blury[xi, yi + 1, zs + 1, c], blury[xi + 1, yi + 1, zs + 1, c], xf), yf),
        zf)
    out = hl.Func("bilateral_grid")
    out[x, y] = interpolated[x, y, 0] / interpolated[x, y, 1]

    def hand(target):
        blurz.compute_root().reorder(c, z, x, y).parallel(y).vectorize(x, 8).unroll(c)
        grid.compute_at(blurz, y)
        grid.update(0).reorder(c, r.x, r.y, x, y).unroll(c)
        blurx.compute_root().reorder(c, x, y, z).parallel(z).vectorize(x, 8).unroll(c)
        blury.compute_root().reorder(c, x, y, z).parallel(z).vectorize(x, 8).unroll(c)
        out.compute_root().parallel(y).vectorize(x, 8)

    def estimate():
        inp.set_estimates([hl.Range(0, W), hl.Range(0, H)])
        out.set_estimates([hl.Range(0, W), hl.Range(0, H)])
        # The grid's z extent depends on the data; Halide's app gives these estimates too.
        grid.set_estimate(z, -2, 16)
        blurz.set_estimate(z, 0, 12)
        blurx.set_estimate(z, 0, 12)
        blury.set_estimate(z, 0, 12)

    return new_app(out, [(inp, arrays["input"])], [], f32, [W, H], hand, estimate)


# ---------------------------------------------------------------------------------------------------
# camera_pipe (apps/src/camera_pipe.cpp; hand schedule: Halide's apps/camera_pipe CPU schedule)

MATRIX_3200 = np.array([[1.6697, -0.2693, -0.4004, -42.4346],
                        [-0.3576, 1.0615, 1.5949, -37.1158],
                        [-0.2175, -1.8751, 6.9640, -26.6970]], dtype=np.float32)
MATRIX_7000 = np.array([[2.2997, -0.4478, 0.1706, -39.0923],
                        [-0.3826, 1.5906, -0.2080, -25.4311],
                        [-0.0888, -0.7344, 2.2832, -20.0826]], dtype=np.float32)
CAMERA = dict(color_temp=3700.0, gamma=2.0, contrast=50.0, black_level=25, white_level=1023, sharpen_strength=1.0)


def build_camera_pipe(arrays):
    H, W = arrays["raw"].shape
    raw = hl.ImageParam(u16, 2, "raw")
    m3200 = hl.ImageParam(f32, 2, "matrix_3200")
    m7000 = hl.ImageParam(f32, 2, "matrix_7000")
    p_temp = hl.Param(f32, "color_temp", CAMERA["color_temp"])
    p_gamma = hl.Param(f32, "gamma", CAMERA["gamma"])
    p_contrast = hl.Param(f32, "contrast", CAMERA["contrast"])
    p_sharpen = hl.Param(f32, "sharpen_strength", CAMERA["sharpen_strength"])
    p_black = hl.Param(i32, "black_level", CAMERA["black_level"])
    p_white = hl.Param(i32, "white_level", CAMERA["white_level"])
    params = [(p_temp, CAMERA["color_temp"]), (p_gamma, CAMERA["gamma"]), (p_contrast, CAMERA["contrast"]),
              (p_sharpen, CAMERA["sharpen_strength"]), (p_black, CAMERA["black_level"]),
              (p_white, CAMERA["white_level"])]
    color_temp, gamma, contrast, sharpen_strength = E(p_temp), E(p_gamma), E(p_contrast), E(p_sharpen)
    black_level, white_level = E(p_black), E(p_white)
    x, y, c = V("x", "y", "c")

    def avg(a, b):
        a, b = E(a), E(b)
        t = a.type()
        return hl.cast(t, (hl.cast(t.with_bits(t.bits() * 2), a) + b + 1) / 2)

    def absd(a, b):
        return hl.abs(hl.cast(i32, a) - hl.cast(i32, b))

    shifted = hl.Func("shifted")
    shifted[x, y] = hl.cast(i16, raw[x + 16, y + 12])
    denoised = hl.Func("denoised")
    brightest = hl.max(hl.max(shifted[x - 2, y], shifted[x + 2, y]), hl.max(shifted[x, y - 2], shifted[x, y + 2]))
    denoised[x, y] = hl.clamp(shifted[x, y], hl.i16(0), brightest)
    deinterleaved = hl.Func("deinterleaved")
    deinterleaved[x, y, c] = hl.select(c == 0, denoised[2 * x, 2 * y], c == 1, denoised[2 * x + 1, 2 * y],
                                       c == 2, denoised[2 * x, 2 * y + 1], denoised[2 * x + 1, 2 * y + 1])
    g_gr, r_r, b_b, g_gb = (hl.Func(n) for n in ("g_gr", "r_r", "b_b", "g_gb"))
    g_gr[x, y] = deinterleaved[x, y, 0]
    r_r[x, y] = deinterleaved[x, y, 1]
    b_b[x, y] = deinterleaved[x, y, 2]
    g_gb[x, y] = deinterleaved[x, y, 3]
    g_r, g_b = hl.Func("g_r"), hl.Func("g_b")
    g_r[x, y] = hl.select(absd(g_gr[x + 1, y], g_gr[x, y]) < absd(g_gb[x, y - 1], g_gb[x, y]),
                          avg(g_gr[x + 1, y], g_gr[x, y]), avg(g_gb[x, y - 1], g_gb[x, y]))
    g_b[x, y] = hl.select(absd(g_gb[x - 1, y], g_gb[x, y]) < absd(g_gr[x, y + 1], g_gr[x, y]),
                          avg(g_gb[x - 1, y], g_gb[x, y]), avg(g_gr[x, y + 1], g_gr[x, y]))
    r_gr, b_gr, r_gb, b_gb = (hl.Func(n) for n in ("r_gr", "b_gr", "r_gb", "b_gb"))
    r_gr[x, y] = g_gr[x, y] - avg(g_r[x, y], g_r[x - 1, y]) + avg(r_r[x - 1, y], r_r[x, y])
    b_gr[x, y] = g_gr[x, y] - avg(g_b[x, y], g_b[x, y - 1]) + avg(b_b[x, y], b_b[x, y - 1])
    r_gb[x, y] = g_gb[x, y] - avg(g_r[x, y], g_r[x, y + 1]) + avg(r_r[x, y], r_r[x, y + 1])
    b_gb[x, y] = g_gb[x, y] - avg(g_b[x, y], g_b[x + 1, y]) + avg(b_b[x, y], b_b[x + 1, y])
    r_b, b_r = hl.Func("r_b"), hl.Func("b_r")
    positive = g_b[x, y] - avg(g_r[x, y], g_r[x - 1, y + 1]) + avg(r_r[x, y], r_r[x - 1, y + 1])
    negative = g_b[x, y] - avg(g_r[x - 1, y], g_r[x, y + 1]) + avg(r_r[x - 1, y], r_r[x, y + 1])
    r_b[x, y] = hl.select(absd(r_r[x, y], r_r[x - 1, y + 1]) < absd(r_r[x - 1, y], r_r[x, y + 1]), positive, negative)
    positive = g_r[x, y] - avg(g_b[x, y], g_b[x + 1, y - 1]) + avg(b_b[x, y], b_b[x + 1, y - 1])
    negative = g_r[x, y] - avg(g_b[x + 1, y], g_b[x, y - 1]) + avg(b_b[x + 1, y], b_b[x, y - 1])
    b_r[x, y] = hl.select(absd(b_b[x, y], b_b[x + 1, y - 1]) < absd(b_b[x + 1, y], b_b[x, y - 1]), positive, negative)

    def interleave_x(even, odd, name):
        f = hl.Func(name)
        f[x, y] = hl.select(x % 2 == 0, even[x / 2, y], odd[x / 2, y])
        return f

    def interleave_y(even, odd, name):
        f = hl.Func(name)
        f[x, y] = hl.select(y % 2 == 0, even[x, y / 2], odd[x, y / 2])
        return f

    red = interleave_y(interleave_x(r_gr, r_r, "red_even_rows"), interleave_x(r_b, r_gb, "red_odd_rows"), "red")
    green = interleave_y(interleave_x(g_gr, g_r, "green_even_rows"), interleave_x(g_b, g_gb, "green_odd_rows"),
                         "green")
    blue = interleave_y(interleave_x(b_gr, b_r, "blue_even_rows"), interleave_x(b_b, b_gb, "blue_odd_rows"), "blue")
    demosaiced = hl.Func("demosaiced")
    demosaiced[x, y, c] = hl.select(c == 0, red[x, y], c == 1, green[x, y], blue[x, y])

    matrix = hl.Func("matrix")
    inv3200, inv7000 = np.float32(1) / np.float32(3200), np.float32(1) / np.float32(7000)
    alpha = (F(1) / color_temp - F(inv3200)) / F(inv7000 - inv3200)
    matrix[x, y] = hl.cast(i16, (m3200[x, y] * alpha + m7000[x, y] * (1 - alpha)) * F(256))
    corrected = hl.Func("corrected")
    ir, ig, ib = (hl.cast(i32, demosaiced[x, y, k]) for k in range(3))

    def row(r):
        return hl.cast(i16, (matrix[3, r] + matrix[0, r] * ir + matrix[1, r] * ig + matrix[2, r] * ib) / 256)

    corrected[x, y, c] = hl.select(c == 0, row(0), c == 1, row(1), row(2))

    curve = hl.Func("curve")
    inverse_range = F(1) / (white_level - black_level)
    b = F(2) - hl.pow(F(2), contrast / F(100))
    a = F(2) - F(2) * b
    xf = hl.clamp(hl.cast(f32, x - black_level) * inverse_range, F(0), F(1))
    g = hl.pow(xf, F(1) / gamma)
    zc = hl.select(g > F(0.5), F(1) - (a * (F(1) - g) * (F(1) - g) + b * (F(1) - g)), a * g * g + b * g)
    value = hl.cast(u8, hl.clamp(zc * F(255) + F(0.5), F(0), F(255)))
    curve[x] = hl.select(x <= black_level, hl.u8(0), hl.select(x > white_level, hl.u8(255), value))
    curved = hl.Func("curved")
    curved[x, y, c] = curve[hl.clamp(hl.cast(i32, corrected[x, y, c]), 0, 1023)]

    def blur121(p, q, r_):
        return avg(avg(p, r_), q)

    unsharp_y, unsharp, mask = hl.Func("unsharp_y"), hl.Func("unsharp"), hl.Func("mask")
    sharpened = hl.Func("camera_pipe")
    unsharp_y[x, y, c] = blur121(curved[x, y - 1, c], curved[x, y, c], curved[x, y + 1, c])
    unsharp[x, y, c] = blur121(unsharp_y[x - 1, y, c], unsharp_y[x, y, c], unsharp_y[x + 1, y, c])
    mask[x, y, c] = hl.cast(i16, curved[x, y, c]) - hl.cast(i16, unsharp[x, y, c])
    strength_x32 = hl.cast(i32, hl.cast(u8, hl.clamp(sharpen_strength * F(32), F(0), F(255))))
    sharpened[x, y, c] = hl.cast(u8, hl.clamp(hl.cast(i32, curved[x, y, c]) +
                                              hl.cast(i32, mask[x, y, c]) * strength_x32 / 32, 0, 255))
    ow, oh = W - 32, H - 24

    def hand(target):
        # Halide's CPU schedule: 32-row strips in parallel, every stage computed per pair of rows of
        # the strip into folded storage; unsharp_y, unsharp and mask inlined into the output. The
        # output's RoundUp tails are kept only where the output size is a multiple of them.
        vec = target.natural_vector_size(u16)
        strip = 32
        # Halide's fold factor 4 needs the pairs of rows to start at even rows; an odd output height
        # (ShiftInwards on the last pair) needs a larger one.
        fold = 4 if oh % 2 == 0 else 16
        xi, yi, yii, yo = V("xi", "yi", "yii", "yo")
        x_div = ow % (2 * vec) == 0
        processed = sharpened
        (processed.compute_root().reorder(c, x, y)
         .split(y, yi, yii, 2, ROUNDUP if oh % 2 == 0 else tail(oh, 2))
         .split(yi, yo, yi, strip // 2, tail((oh + 1) // 2, strip // 2))
         .vectorize(x, 2 * vec, ROUNDUP if x_div else tail(ow, 2 * vec))
         .unroll(c).parallel(yo))
        (denoised.compute_at(processed, yi).store_at(processed, yo)
         .prefetch(raw, y, y, 2)
         .fold_storage(y, fold)
         .tile(x, y, x, y, xi, yi, 2 * vec, 2).vectorize(xi).unroll(yi))
        (deinterleaved.compute_at(processed, yi).store_at(processed, yo).fold_storage(y, fold)
         .reorder(c, x, y).vectorize(x, 2 * vec, ROUNDUP).unroll(c))
        (curved.compute_at(processed, yi).store_at(processed, yo).reorder(c, x, y)
         .tile(x, y, x, y, xi, yi, 2 * vec, 2, ROUNDUP).vectorize(xi).unroll(yi).unroll(c))
        corrected.compute_at(curved, x).reorder(c, x, y).vectorize(x).unroll(c)
        for f in (g_r, g_b):
            f.compute_at(processed, yi).store_at(processed, yo).vectorize(x, 2 * vec, ROUNDUP).fold_storage(y, fold)
        g_b.compute_with(g_r, x, [(x, hl.LoopAlignStrategy.AlignStart), (y, hl.LoopAlignStrategy.AlignStart)])
        demosaiced.compute_at(curved, x).vectorize(x).unroll(y).reorder(c, x, y).unroll(c)
        matrix.compute_root()
        curve.compute_root()
        # Halide's app bounds x and y to the (strip-rounded) output size; the exact output size here.
        # Without a known even y min the fold factors above would not hold.
        processed.bound(c, 0, 3).bound(x, 0, ow).bound(y, 0, oh)

    def estimate():
        raw.set_estimates([hl.Range(0, W), hl.Range(0, H)])
        m3200.set_estimates([hl.Range(0, 4), hl.Range(0, 3)])
        m7000.set_estimates([hl.Range(0, 4), hl.Range(0, 3)])
        set_param_estimates(params)
        sharpened.set_estimates([hl.Range(0, ow), hl.Range(0, oh), hl.Range(0, 3)])

    inputs = [(raw, arrays["raw"]), (m3200, MATRIX_3200), (m7000, MATRIX_7000)]
    return new_app(sharpened, inputs, params, u8, [ow, oh, 3], hand, estimate)


# ---------------------------------------------------------------------------------------------------
# pyramid_blend (apps/src/pyramid_blend.cpp; Halide has no such app: the hand schedule computes every
# pyramid level at root in parallel 8-row strips, vectorized by 8, with the x pass of each separable
# down/upsampling computed per row of its consumer's strip)

def build_pyramid_blend(arrays):
    C, H, W = arrays["image_a"].shape
    levels = 4
    image_a = hl.ImageParam(f32, 3, "image_a")
    image_b = hl.ImageParam(f32, 3, "image_b")
    mask_in = hl.ImageParam(f32, 2, "mask")
    x, y, c = V("x", "y", "c")
    pairs = []  # (separable x pass, its consumer)

    def lvars(dims):
        return [x, y] + ([c] if dims == 3 else [])

    def downsample(f, name):
        v = lvars(f.dimensions())
        r = v[2:]
        dx, dy = hl.Func(name + "_down_x"), hl.Func(name)
        dx[v] = (f[(2 * x - 2, y, *r)] + f[(2 * x - 1, y, *r)] * F(4) + f[(2 * x, y, *r)] * F(6) +
                 f[(2 * x + 1, y, *r)] * F(4) + f[(2 * x + 2, y, *r)]) * F(0.0625)
        dy[v] = (dx[(x, 2 * y - 2, *r)] + dx[(x, 2 * y - 1, *r)] * F(4) + dx[(x, 2 * y, *r)] * F(6) +
                 dx[(x, 2 * y + 1, *r)] * F(4) + dx[(x, 2 * y + 2, *r)]) * F(0.0625)
        pairs.append((dx, dy))
        return dy

    def upsample(f, name):
        v = lvars(f.dimensions())
        r = v[2:]
        ux, uy = hl.Func(name + "_up_x"), hl.Func(name)
        ux[v] = hl.select(x % 2 == 0,
                          (f[(x / 2 - 1, y, *r)] + f[(x / 2, y, *r)] * F(6) + f[(x / 2 + 1, y, *r)]) * F(0.125),
                          (f[(x / 2, y, *r)] * F(4) + f[(x / 2 + 1, y, *r)] * F(4)) * F(0.125))
        uy[v] = hl.select(y % 2 == 0,
                          (ux[(x, y / 2 - 1, *r)] + ux[(x, y / 2, *r)] * F(6) + ux[(x, y / 2 + 1, *r)]) * F(0.125),
                          (ux[(x, y / 2, *r)] * F(4) + ux[(x, y / 2 + 1, *r)] * F(4)) * F(0.125))
        return ux, uy

    gauss_a = [hl.BoundaryConditions.repeat_edge(image_a)]
    gauss_b = [hl.BoundaryConditions.repeat_edge(image_b)]
    gauss_m = [hl.BoundaryConditions.repeat_edge(mask_in)]
    for l in range(1, levels):
        gauss_a.append(downsample(gauss_a[l - 1], f"gauss_a_{l}"))
        gauss_b.append(downsample(gauss_b[l - 1], f"gauss_b_{l}"))
        gauss_m.append(downsample(gauss_m[l - 1], f"gauss_mask_{l}"))
    blended = []
    for l in range(levels):
        la, lb = gauss_a[l], gauss_b[l]
        bl = hl.Func(f"blended_{l}")
        if l < levels - 1:
            ux_a, up_a = upsample(gauss_a[l + 1], f"gauss_a_up_{l}")
            ux_b, up_b = upsample(gauss_b[l + 1], f"gauss_b_up_{l}")
            la, lb = hl.Func(f"laplace_a_{l}"), hl.Func(f"laplace_b_{l}")
            la[x, y, c] = gauss_a[l][x, y, c] - up_a[x, y, c]
            lb[x, y, c] = gauss_b[l][x, y, c] - up_b[x, y, c]
            pairs.append((ux_a, bl))
            pairs.append((ux_b, bl))
        bl[x, y, c] = la[x, y, c] * gauss_m[l][x, y] + lb[x, y, c] * (F(1) - gauss_m[l][x, y])
        blended.append(bl)
    collapsed = blended[levels - 1]
    collapsed_levels = []
    for l in range(levels - 2, -1, -1):
        ux, up = upsample(collapsed, f"collapsed_up_{l}")
        nxt = hl.Func("pyramid_blend" if l == 0 else f"collapsed_{l}")
        nxt[x, y, c] = up[x, y, c] + blended[l][x, y, c]
        pairs.append((ux, nxt))
        collapsed = nxt
        collapsed_levels.append(nxt)
    output = collapsed

    def hand(target):
        yo, yi = V("yo", "yi")
        roots = [f for l in range(1, levels) for f in (gauss_a[l], gauss_b[l], gauss_m[l])]
        roots += blended + collapsed_levels
        for f in roots:
            tl = tail(H, 8) if f.name() == output.name() else AUTO
            f.compute_root().split(y, yo, yi, 8, tl).parallel(yo).vectorize(x, 8)
        for px, consumer in pairs:
            px.store_at(consumer, yo).compute_at(consumer, yi).vectorize(x, 8)

    def estimate():
        image_a.set_estimates([hl.Range(0, W), hl.Range(0, H), hl.Range(0, 3)])
        image_b.set_estimates([hl.Range(0, W), hl.Range(0, H), hl.Range(0, 3)])
        mask_in.set_estimates([hl.Range(0, W), hl.Range(0, H)])
        output.set_estimates([hl.Range(0, W), hl.Range(0, H), hl.Range(0, 3)])

    inputs = [(image_a, arrays["image_a"]), (image_b, arrays["image_b"]), (mask_in, arrays["mask"])]
    return new_app(output, inputs, [], f32, [W, H, 3], hand, estimate)


# ---------------------------------------------------------------------------------------------------
# interpolate (apps/src/interpolate.cpp: Halide's app without its extra clamp at level 4; hand schedule:
# Halide's apps/interpolate CPU schedule)

def build_interpolate(arrays):
    C, H, W = arrays["input"].shape
    levels = 10
    inp = hl.ImageParam(f32, 3, "input")
    x, y, c = V("x", "y", "c")
    clamped = hl.BoundaryConditions.repeat_edge(inp)
    downsampled = [hl.Func("premultiplied")]
    downx = [None]
    downsampled[0][x, y, c] = hl.select(c < 3, clamped[x, y, c] * clamped[x, y, 3], clamped[x, y, 3])
    for l in range(1, levels):
        prev = downsampled[l - 1]
        dx = hl.Func(f"downsampled_x_{l}")
        dx[x, y, c] = (prev[2 * x - 1, y, c] + F(2) * prev[2 * x, y, c] + prev[2 * x + 1, y, c]) * F(0.25)
        d = hl.Func(f"downsampled_{l}")
        d[x, y, c] = (dx[x, 2 * y - 1, c] + F(2) * dx[x, 2 * y, c] + dx[x, 2 * y + 1, c]) * F(0.25)
        downx.append(dx)
        downsampled.append(d)
    interpolated = [None] * levels
    interpolated[levels - 1] = downsampled[levels - 1]
    for l in range(levels - 2, -1, -1):
        up_x, up = hl.Func(f"upsampled_x_{l}"), hl.Func(f"upsampled_{l}")
        coarse = interpolated[l + 1]
        up_x[x, y, c] = (coarse[x / 2, y, c] + coarse[(x + 1) / 2, y, c]) / F(2)
        up[x, y, c] = (up_x[x, y / 2, c] + up_x[x, (y + 1) / 2, c]) / F(2)
        it = hl.Func(f"interpolated_{l}")
        it[x, y, c] = downsampled[l][x, y, c] + (F(1) - downsampled[l][x, y, 3]) * up[x, y, c]
        interpolated[l] = it
    normalized = hl.Func("interpolate")
    normalized[x, y, c] = interpolated[0][x, y, c] / interpolated[0][x, y, 3]

    def hand(target):
        vec = target.natural_vector_size(f32)
        xo, xi, yo, yi = V("xo", "xi", "yo", "yi")
        for l in range(1, levels - 1):
            (downsampled[l].compute_root().never_partition([x]).reorder(x, c, y)
             .split(y, yo, yi, 8).parallel(yo).vectorize(x, vec))
        (downsampled[0].clone_in(downx[1]).store_at(downsampled[1], yo).compute_at(downsampled[1], yi)
         .reorder(c, x, y).unroll(c).vectorize(x, vec).never_partition([y]))
        (normalized.bound(x, 0, W).bound(y, 0, H).bound(c, 0, 3).never_partition([y])
         .split(x, xo, xi, vec, tail(W, vec)).split(y, yo, yi, 32, tail(H, 32))
         .reorder(xi, c, xo, yi, yo).unroll(c).vectorize(xi).parallel(yo))
        for l in range(1, levels):
            # (interpolated[levels - 1] is downsampled[levels - 1] itself here)
            interpolated[l].store_at(normalized, yo).compute_at(normalized, yi).never_partition_all().vectorize(x, vec)

    def estimate():
        inp.set_estimates([hl.Range(0, W), hl.Range(0, H), hl.Range(0, 4)])
        normalized.set_estimates([hl.Range(0, W), hl.Range(0, H), hl.Range(0, 3)])

    return new_app(normalized, [(inp, arrays["input"])], [], f32, [W, H, 3], hand, estimate)


# ---------------------------------------------------------------------------------------------------
# local_laplacian (apps/src/local_laplacian.cpp; hand schedule: Halide's apps/local_laplacian CPU schedule)

def build_local_laplacian(arrays):
    C, H, W = arrays["input"].shape
    J, L = 8, 8
    k_alpha, k_beta = F(1), F(1)
    inp = hl.ImageParam(u16, 3, "input")
    x, y, c, k = V("x", "y", "c", "k")

    def pvars(dims):
        return [x, y] + ([k] if dims == 3 else [])

    def downsample(f, name):
        v = pvars(f.dimensions())
        r = v[2:]
        dx, dy = hl.Func(name + "_down_x"), hl.Func(name)
        dx[v] = (f[(2 * x - 1, y, *r)] + F(3) * (f[(2 * x, y, *r)] + f[(2 * x + 1, y, *r)]) +
                 f[(2 * x + 2, y, *r)]) / F(8)
        dy[v] = (dx[(x, 2 * y - 1, *r)] + F(3) * (dx[(x, 2 * y, *r)] + dx[(x, 2 * y + 1, *r)]) +
                 dx[(x, 2 * y + 2, *r)]) / F(8)
        return dy

    def upsample(f, name):
        v = pvars(f.dimensions())
        r = v[2:]
        ux, uy = hl.Func(name + "_up_x"), hl.Func(name)
        ux[v] = hl.lerp(f[((x + 1) / 2, y, *r)], f[((x - 1) / 2, y, *r)], hl.cast(f32, (x % 2) * 2 + 1) / F(4))
        uy[v] = hl.lerp(ux[(x, (y + 1) / 2, *r)], ux[(x, (y - 1) / 2, *r)], hl.cast(f32, (y % 2) * 2 + 1) / F(4))
        return uy

    clamped = hl.BoundaryConditions.repeat_edge(inp)
    floating = hl.Func("floating")
    floating[x, y, c] = hl.cast(f32, clamped[x, y, c]) / F(65535)
    gray = hl.Func("gray")
    gray[x, y] = F(0.299) * floating[x, y, 0] + F(0.587) * floating[x, y, 1] + F(0.114) * floating[x, y, 2]
    remap = hl.Func("remap")
    fx = hl.cast(f32, x) / F(256)
    remap[x] = k_alpha * fx * hl.exp(-fx * fx / F(2))
    gauss, laplace, in_gauss, out_laplace, out_gauss = ([None] * J for _ in range(5))
    level = hl.cast(f32, k) * F(fdiv(1, L - 1))
    idx = hl.clamp(hl.cast(i32, gray[x, y] * F(L - 1) * F(256)), 0, (L - 1) * 256)
    gauss[0] = hl.Func("remapped")
    gauss[0][x, y, k] = k_beta * (gray[x, y] - level) + level + remap[idx - 256 * k]
    for j in range(1, J):
        gauss[j] = downsample(gauss[j - 1], f"gauss_{j}")
    laplace[J - 1] = gauss[J - 1]
    for j in range(J - 2, -1, -1):
        up = upsample(gauss[j + 1], f"gauss_up_{j}")
        laplace[j] = hl.Func(f"laplace_{j}")
        laplace[j][x, y, k] = gauss[j][x, y, k] - up[x, y, k]
    in_gauss[0] = gray
    for j in range(1, J):
        in_gauss[j] = downsample(in_gauss[j - 1], f"in_gauss_{j}")
    for j in range(J):
        lv = in_gauss[j][x, y] * F(L - 1)
        li = hl.clamp(hl.cast(i32, lv), 0, L - 2)
        lf = lv - hl.cast(f32, li)
        out_laplace[j] = hl.Func(f"out_laplace_{j}")
        out_laplace[j][x, y] = (F(1) - lf) * laplace[j][x, y, li] + lf * laplace[j][x, y, li + 1]
    out_gauss[J - 1] = out_laplace[J - 1]
    for j in range(J - 2, -1, -1):
        up = upsample(out_gauss[j + 1], f"out_gauss_up_{j}")
        out_gauss[j] = hl.Func(f"out_gauss_{j}")
        out_gauss[j][x, y] = up[x, y] + out_laplace[j][x, y]
    color = hl.Func("color")
    color[x, y, c] = out_gauss[0][x, y] * (floating[x, y, c] + F(0.01)) / (gray[x, y] + F(0.01))
    output = hl.Func("local_laplacian")
    output[x, y, c] = hl.cast(u16, hl.clamp(color[x, y, c], F(0), F(1)) * F(65535))

    def hand(target):
        yo = hl.Var("yo")
        remap.compute_root()
        output.reorder(c, x, y).split(y, yo, y, 64, tail(H, 64)).parallel(yo).vectorize(x, 8, tail(W, 8))
        gray.compute_root().parallel(y, 32).vectorize(x, 8)
        for j in range(1, 5):
            in_gauss[j].compute_root().parallel(y, 32).vectorize(x, 8)
            gauss[j].compute_root().reorder_storage(x, k, y).reorder(k, y).parallel(y, 8).vectorize(x, 8)
            out_gauss[j].store_at(output, yo).compute_at(output, y).fold_storage(y, 4).vectorize(x, 8)
        out_gauss[0].compute_at(output, y).vectorize(x, 8)
        for j in range(5, J):
            in_gauss[j].compute_root()
            gauss[j].compute_root().parallel(k)
            out_gauss[j].compute_root()

    def estimate():
        inp.set_estimates([hl.Range(0, W), hl.Range(0, H), hl.Range(0, 3)])
        output.set_estimates([hl.Range(0, W), hl.Range(0, H), hl.Range(0, 3)])

    return new_app(output, [(inp, arrays["input"])], [], u16, [W, H, 3], hand, estimate)


BUILDERS = {
    "blur_x_blur_y": build_blur_x_blur_y,
    "harris": build_harris,
    "unsharp_mask": build_unsharp_mask,
    "bilateral_grid": build_bilateral_grid,
    "camera_pipe": build_camera_pipe,
    "pyramid_blend": build_pyramid_blend,
    "interpolate": build_interpolate,
    "local_laplacian": build_local_laplacian,
}

# Default sizes (default_sizes() of each C++ app; camera_pipe: the raw image) and self-test sizes.
DEFAULT_SIZES = {"blur_x_blur_y": (4096, 4096), "harris": (1024, 1024), "unsharp_mask": (1024, 1024),
                 "bilateral_grid": (512, 512), "camera_pipe": (2592, 1968), "pyramid_blend": (2048, 2048),
                 "interpolate": (2560, 1536), "local_laplacian": (2560, 1536)}
SELFTEST_SIZES = {"camera_pipe": [(101, 77), (101, 78)],  # odd and even output heights (1944 is even)
                  "blur_x_blur_y": [(263, 45)]}  # (output wide enough for its hand schedule's 256-wide tiles)


def make_inputs(app, W, H, seed=1):
    """Random inputs with the ranges of the C++ prepare() (not its random sequence)."""
    rng = np.random.default_rng(seed)

    def unit(*shape):
        return rng.random(shape, dtype=np.float32)

    if app in ("blur_x_blur_y", "unsharp_mask"):
        return {"input": unit(3, H, W)}
    if app in ("harris", "bilateral_grid"):
        return {"input": unit(H, W)}
    if app == "camera_pipe":
        return {"raw": rng.integers(0, 1024, size=(H, W), dtype=np.uint16)}
    if app == "pyramid_blend":
        return {"image_a": unit(3, H, W), "image_b": unit(3, H, W), "mask": unit(H, W)}
    if app == "interpolate":
        return {"input": unit(4, H, W)}
    if app == "local_laplacian":
        return {"input": rng.integers(0, 65536, size=(3, H, W), dtype=np.uint16)}
    raise KeyError(app)
