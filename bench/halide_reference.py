"""numpy transcriptions of the apps' plain C++ reference loops (apps/src/*.cpp, reference()),
for bench/halide_suite.py --selftest: they catch a Halide pipeline read with the wrong axis order
or a stage transcribed wrongly."""
import ctypes

import numpy as np

from halide_pipelines import *  # noqa: F401,F403 (the constants and sizes the apps share)

# ---------------------------------------------------------------------------------------------------
# numpy transcriptions of the C++ reference() loops (for the self-test)

class Img:
    """The Image of apps/src/pyramid_reference.h: a region [x0, x0 + w) x [y0, y0 + h) of `ch` channels,
    stored [c][y][x]; reads outside it are clamped to its edge."""

    def __init__(self, x0, y0, w, h, ch=1, dtype=np.float32):
        self.x0, self.y0, self.w, self.h, self.ch = x0, y0, w, h, ch
        self.v = np.zeros((ch, h, w), dtype=dtype)

    @staticmethod
    def with_margin(ex, ey, m, ch=1, dtype=np.float32):
        return Img(-m, -m, ex + 2 * m, ey + 2 * m, ch, dtype)

    def like(self, ch=None, dtype=None):
        return Img(self.x0, self.y0, self.w, self.h, self.ch if ch is None else ch,
                   self.v.dtype if dtype is None else dtype)

    def __call__(self, X, Y, C=0):
        xi = np.clip(X, self.x0, self.x0 + self.w - 1) - self.x0
        yi = np.clip(Y, self.y0, self.y0 + self.h - 1) - self.y0
        return self.v[C, yi, xi]

    def grid(self):
        C, Y, X = np.meshgrid(np.arange(self.ch), np.arange(self.y0, self.y0 + self.h),
                              np.arange(self.x0, self.x0 + self.w), indexing="ij")
        return X, Y, C

    def fill(self, f):
        X, Y, C = self.grid()
        self.v[...] = f(X, Y, C)
        return self


def libm_f32(name):
    fn = getattr(ctypes.CDLL("libm.so.6"), name)
    fn.restype = ctypes.c_float
    return fn


def level_extent(e, l):
    return (e + (1 << l) - 1) >> l


def wrap16(v):
    return ((v + 32768) % 65536) - 32768


def reference_camera_pipe(arrays):
    raw = arrays["raw"]
    Hr, Wr = raw.shape
    W, H = Wr - 32, Hr - 24
    raw16 = raw.astype(np.int16).astype(np.int64)
    hx0, hy0, hw, hh = -4, -4, W // 2 + 9, H // 2 + 9
    I64 = np.int64

    def shifted(X, Y):
        return raw16[Y + 12, X + 16]

    denoised = Img(2 * hx0, 2 * hy0, 2 * hw, 2 * hh, 1, I64).fill(lambda X, Y, C: np.clip(
        shifted(X, Y), 0, np.maximum(np.maximum(shifted(X - 2, Y), shifted(X + 2, Y)),
                                     np.maximum(shifted(X, Y - 2), shifted(X, Y + 2)))))
    P = lambda: Img(hx0, hy0, hw, hh, 1, I64)  # noqa: E731
    g_gr = P().fill(lambda X, Y, C: denoised(2 * X, 2 * Y))
    r_r = P().fill(lambda X, Y, C: denoised(2 * X + 1, 2 * Y))
    b_b = P().fill(lambda X, Y, C: denoised(2 * X, 2 * Y + 1))
    g_gb = P().fill(lambda X, Y, C: denoised(2 * X + 1, 2 * Y + 1))
    absd = lambda a, b: np.abs(a - b)  # noqa: E731
    avg16 = lambda a, b: wrap16((a + b + 1) // 2)  # noqa: E731
    g_r = P().fill(lambda X, Y, C: np.where(absd(g_gr(X + 1, Y), g_gr(X, Y)) < absd(g_gb(X, Y - 1), g_gb(X, Y)),
                                            avg16(g_gr(X + 1, Y), g_gr(X, Y)), avg16(g_gb(X, Y - 1), g_gb(X, Y))))
    g_b = P().fill(lambda X, Y, C: np.where(absd(g_gb(X - 1, Y), g_gb(X, Y)) < absd(g_gr(X, Y + 1), g_gr(X, Y)),
                                            avg16(g_gb(X - 1, Y), g_gb(X, Y)), avg16(g_gr(X, Y + 1), g_gr(X, Y))))
    cat = lambda g, ga, va: wrap16(g - ga + va)  # noqa: E731
    r_gr = P().fill(lambda X, Y, C: cat(g_gr(X, Y), avg16(g_r(X, Y), g_r(X - 1, Y)), avg16(r_r(X - 1, Y), r_r(X, Y))))
    b_gr = P().fill(lambda X, Y, C: cat(g_gr(X, Y), avg16(g_b(X, Y), g_b(X, Y - 1)), avg16(b_b(X, Y), b_b(X, Y - 1))))
    r_gb = P().fill(lambda X, Y, C: cat(g_gb(X, Y), avg16(g_r(X, Y), g_r(X, Y + 1)), avg16(r_r(X, Y), r_r(X, Y + 1))))
    b_gb = P().fill(lambda X, Y, C: cat(g_gb(X, Y), avg16(g_b(X, Y), g_b(X + 1, Y)), avg16(b_b(X, Y), b_b(X + 1, Y))))

    def rb(X, Y, C):
        p = cat(g_b(X, Y), avg16(g_r(X, Y), g_r(X - 1, Y + 1)), avg16(r_r(X, Y), r_r(X - 1, Y + 1)))
        n = cat(g_b(X, Y), avg16(g_r(X - 1, Y), g_r(X, Y + 1)), avg16(r_r(X - 1, Y), r_r(X, Y + 1)))
        return np.where(absd(r_r(X, Y), r_r(X - 1, Y + 1)) < absd(r_r(X - 1, Y), r_r(X, Y + 1)), p, n)

    def br(X, Y, C):
        p = cat(g_r(X, Y), avg16(g_b(X, Y), g_b(X + 1, Y - 1)), avg16(b_b(X, Y), b_b(X + 1, Y - 1)))
        n = cat(g_r(X, Y), avg16(g_b(X + 1, Y), g_b(X, Y - 1)), avg16(b_b(X + 1, Y), b_b(X, Y - 1)))
        return np.where(absd(b_b(X, Y), b_b(X + 1, Y - 1)) < absd(b_b(X + 1, Y), b_b(X, Y - 1)), p, n)

    r_b, b_r = P().fill(rb), P().fill(br)

    def site(ee, oe, eo, oo, X, Y):
        hx, hy = X // 2, Y // 2
        odd_x, odd_y = (X - 2 * hx) == 1, (Y - 2 * hy) == 1
        return np.where(odd_y, np.where(odd_x, oo(hx, hy), eo(hx, hy)), np.where(odd_x, oe(hx, hy), ee(hx, hy)))

    f = np.float32
    kelvin = f(CAMERA["color_temp"])
    alpha = (f(1) / kelvin - f(1) / f(3200)) / (f(1) / f(7000) - f(1) / f(3200))
    v = (MATRIX_3200 * alpha + MATRIX_7000 * (f(1) - alpha)) * f(256)
    matrix = np.clip(np.trunc(v), -32768, 32767).astype(np.int64)  # [r][k]
    powf = libm_f32("powf")
    powf.argtypes = [ctypes.c_float, ctypes.c_float]
    black, white = CAMERA["black_level"], CAMERA["white_level"]
    inverse_range = f(1) / f(white - black)
    b = f(2) - f(powf(f(2), f(CAMERA["contrast"]) / f(100)))
    a = f(2) - f(2) * b
    curve = np.zeros(1024, dtype=np.int64)
    inv_gamma = f(1) / f(CAMERA["gamma"])
    for i in range(1024):
        xf = min(max(f(i - black) * inverse_range, f(0)), f(1))
        g = f(powf(xf, inv_gamma))
        z = f(1) - (a * (f(1) - g) * (f(1) - g) + b * (f(1) - g)) if g > f(0.5) else a * g * g + b * g
        value = int(min(max(f(z * f(255) + f(0.5)), f(0)), f(255)))
        curve[i] = 0 if i <= black else 255 if i > white else value
    Y, X = np.meshgrid(np.arange(-1, H + 1), np.arange(-1, W + 1), indexing="ij")
    rgb = [site(r_gr, r_r, r_b, r_gb, X, Y), site(g_gr, g_r, g_b, g_gb, X, Y), site(b_gr, b_r, b_b, b_gb, X, Y)]
    curved = []
    for ch in range(3):
        vv = matrix[ch][3] + matrix[ch][0] * rgb[0] + matrix[ch][1] * rgb[1] + matrix[ch][2] * rgb[2]
        corrected = wrap16(vv // 256)
        curved.append(Img(-1, -1, W + 2, H + 2, 1, np.int64))
        curved[-1].v[0] = curve[np.clip(corrected, 0, 1023)]
    strength_x32 = int(min(max(f(CAMERA["sharpen_strength"]) * f(32), f(0)), f(255)))
    avg8 = lambda p, q: (p + q + 1) // 2  # noqa: E731
    out = np.zeros((3, H, W), dtype=np.uint8)
    for ch in range(3):
        cin = curved[ch]
        uy = Img(-1, 0, W + 2, H, 1, np.int64).fill(lambda X, Y, C: avg8(avg8(cin(X, Y - 1), cin(X, Y + 1)), cin(X, Y)))
        Y, X = np.meshgrid(np.arange(H), np.arange(W), indexing="ij")
        unsharp = avg8(avg8(uy(X - 1, Y), uy(X + 1, Y)), uy(X, Y))
        mask = wrap16(cin(X, Y) - unsharp)
        out[ch] = np.clip(cin(X, Y) + (mask * strength_x32) // 32, 0, 255)
    return out


def reference_local_laplacian(arrays):
    rgb = arrays["input"]
    _, H, W = rgb.shape
    J, L = 8, 8
    f = np.float32
    margin = lambda j: 4 * (1 << (J - 1 - j)) + 4  # noqa: E731
    shape = lambda j, ch: Img.with_margin(level_extent(W, j), level_extent(H, j), margin(j), ch)  # noqa: E731
    floating = shape(0, 3).fill(lambda X, Y, C: rgb[C, np.clip(Y, 0, H - 1), np.clip(X, 0, W - 1)].astype(f) / f(65535))
    gray = shape(0, 1).fill(lambda X, Y, C: f(0.299) * floating(X, Y, 0) + f(0.587) * floating(X, Y, 1) +
                            f(0.114) * floating(X, Y, 2))
    expf = libm_f32("expf")
    expf.argtypes = [ctypes.c_float]
    remap_table = np.zeros(2 * 1792 + 1, dtype=f)
    for i in range(-1792, 1793):
        fx = f(i) / f(256)
        remap_table[i + 1792] = f(1) * fx * f(expf(-fx * fx / f(2)))

    def down(src, like):
        dx = Img(like.x0, src.y0, like.w, src.h, src.ch)
        dx.fill(lambda X, Y, C: (src(2 * X - 1, Y, C) + f(3) * (src(2 * X, Y, C) + src(2 * X + 1, Y, C)) +
                                 src(2 * X + 2, Y, C)) / f(8))
        return like.fill(lambda X, Y, C: (dx(X, 2 * Y - 1, C) + f(3) * (dx(X, 2 * Y, C) + dx(X, 2 * Y + 1, C)) +
                                          dx(X, 2 * Y + 2, C)) / f(8))

    lerp = lambda a, b, w: a * (f(1) - w) + b * w  # noqa: E731

    def up(src, like):
        ux = Img(like.x0, src.y0, like.w, src.h, src.ch)
        ux.fill(lambda X, Y, C: lerp(src((X + 1) // 2, Y, C), src((X - 1) // 2, Y, C), ((X % 2) * 2 + 1).astype(f) / f(4)))
        return like.like().fill(lambda X, Y, C: lerp(ux(X, (Y + 1) // 2, C), ux(X, (Y - 1) // 2, C),
                                                     ((Y % 2) * 2 + 1).astype(f) / f(4)))

    def g0(X, Y, K):
        level = K.astype(f) * (f(1) / f(L - 1))
        scaled = gray(X, Y) * f(L - 1) * f(256)
        idx = np.clip(scaled.astype(np.int64), 0, (L - 1) * 256)
        return f(1) * (gray(X, Y) - level) + level + remap_table[idx - 256 * K + 1792]

    gauss, in_gauss = [shape(0, L).fill(g0)], [gray]
    for j in range(1, J):
        gauss.append(down(gauss[j - 1], shape(j, L)))
        in_gauss.append(down(in_gauss[j - 1], shape(j, 1)))
    out_laplace = []
    for j in range(J):
        lap = gauss[j]
        if j < J - 1:
            u = up(gauss[j + 1], gauss[j])
            lap = gauss[j].like().fill(lambda X, Y, C: gauss[j](X, Y, C) - u(X, Y, C))

        def ol(X, Y, C, lap=lap, j=j):
            level = in_gauss[j](X, Y) * f(L - 1)
            li = np.clip(level.astype(np.int64), 0, L - 2)
            lf = level - li.astype(f)
            return (f(1) - lf) * lap(X, Y, li) + lf * lap(X, Y, li + 1)

        out_laplace.append(shape(j, 1).fill(ol))
    og = out_laplace[J - 1]
    for j in range(J - 2, -1, -1):
        u = up(og, out_laplace[j])
        og = out_laplace[j].like().fill(lambda X, Y, C: u(X, Y) + out_laplace[j](X, Y))
    C, Y, X = np.meshgrid(np.arange(3), np.arange(H), np.arange(W), indexing="ij")
    color = og(X, Y) * (floating(X, Y, C) + f(0.01)) / (gray(X, Y) + f(0.01))
    return (np.clip(color, f(0), f(1)) * f(65535)).astype(np.uint16)


def reference_blur_x_blur_y(arrays):
    i = arrays["input"]
    f = np.float32
    bx = (i[:, :, 0:-4] + f(4) * i[:, :, 1:-3] + f(6) * i[:, :, 2:-2] + f(4) * i[:, :, 3:-1] + i[:, :, 4:]) / f(16)
    return (bx[:, 0:-4] + f(4) * bx[:, 1:-3] + f(6) * bx[:, 2:-2] + f(4) * bx[:, 3:-1] + bx[:, 4:]) / f(16)


def reference_harris(arrays):
    i = arrays["input"]
    H, W = i.shape
    f = np.float32
    m1, p1, m2, p2 = f(-1) / f(12), f(1) / f(12), f(-2) / f(12), f(2) / f(12)
    s = lambda dx, dy: i[1 + dy:H - 1 + dy, 1 + dx:W - 1 + dx]  # noqa: E731  (x, y in [1, W-1) x [1, H-1))
    vy = s(-1, -1) * m1 + s(-1, 1) * p1 + s(0, -1) * m2 + s(0, 1) * p2 + s(1, -1) * m1 + s(1, 1) * p1
    vx = s(-1, -1) * m1 + s(1, -1) * p1 + s(-1, 0) * m2 + s(1, 0) * p2 + s(-1, 1) * m1 + s(1, 1) * p1

    def box(a):  # a over [1, W-1) x [1, H-1); the box at x + 2 for x in [0, W-4)
        b = lambda dx, dy: a[dy:dy + H - 4, dx:dx + W - 4]  # noqa: E731
        return b(0, 0) + b(0, 1) + b(0, 2) + b(1, 0) + b(1, 1) + b(1, 2) + b(2, 0) + b(2, 1) + b(2, 2)

    sxx, syy, sxy = box(vx * vx), box(vy * vy), box(vx * vy)
    det = sxx * syy - sxy * sxy
    trace = sxx + syy
    return det - f(0.04) * trace * trace


def reference_unsharp_mask(arrays):
    i = arrays["input"]
    f = np.float32
    w, th = f(3), f(0.02)
    bx = (i[:, :, 0:-4] + f(4) * i[:, :, 1:-3] + f(6) * i[:, :, 2:-2] + f(4) * i[:, :, 3:-1] + i[:, :, 4:]) * f(0.0625)
    by = (bx[:, 0:-4] + f(4) * bx[:, 1:-3] + f(6) * bx[:, 2:-2] + f(4) * bx[:, 3:-1] + bx[:, 4:]) * f(0.0625)
    v = i[:, 2:-2, 2:-2]
    sharp = v * (f(1) + w) - by * w
    return np.where(np.abs(v - by) < th, v, sharp)


def reference_bilateral_grid(arrays):
    i = arrays["input"]
    H, W = i.shape
    f = np.float32
    gw, gh, gd = (W - 1) // 8 + 6, (H - 1) // 8 + 6, 16
    grid = np.zeros((2, gd, gh, gw), dtype=f)  # [c][z + 2][y + 2][x + 2]
    GY, GX = np.meshgrid(np.arange(-2, gh - 2), np.arange(-2, gw - 2), indexing="ij")
    for ry in range(8):
        for rx in range(8):
            val = np.clip(i[np.clip(GY * 8 + ry - 4, 0, H - 1), np.clip(GX * 8 + rx - 4, 0, W - 1)], f(0), f(1))
            zi = (val * f(10) + f(0.5)).astype(np.int64)
            # (the reference adds the samples one by one in this order: rx fastest, then ry)
            np.add.at(grid[0], (zi + 2, GY + 2, GX + 2), val)
            np.add.at(grid[1], (zi + 2, GY + 2, GX + 2), f(1))

    def blur(src, axis):
        dst = np.zeros_like(src)
        n = src.shape[axis]
        sl = lambda a, b: tuple(slice(a, b) if d == axis else slice(None) for d in range(4))  # noqa: E731
        dst[sl(2, n - 2)] = (src[sl(0, n - 4)] + src[sl(1, n - 3)] * f(4) + src[sl(2, n - 2)] * f(6) +
                             src[sl(3, n - 1)] * f(4) + src[sl(4, n)])
        return dst

    by = blur(blur(blur(grid, 1), 3), 2)
    Y, X = np.meshgrid(np.arange(H), np.arange(W), indexing="ij")
    v = np.clip(i, f(0), f(1))
    zv = v * f(10)
    zs = zv.astype(np.int64)
    zf = zv - zs.astype(f)
    xf, yf = (X % 8).astype(f) / f(8), (Y % 8).astype(f) / f(8)
    xi, yi = X // 8, Y // 8
    lerp = lambda a, b, w: a * (f(1) - w) + b * w  # noqa: E731
    res = []
    for ch in range(2):
        bb = lambda gx, gy, gz: by[ch, gz + 2, gy + 2, gx + 2]  # noqa: E731
        res.append(lerp(lerp(lerp(bb(xi, yi, zs), bb(xi + 1, yi, zs), xf), lerp(bb(xi, yi + 1, zs), bb(xi + 1, yi + 1, zs), xf), yf),
                        lerp(lerp(bb(xi, yi, zs + 1), bb(xi + 1, yi, zs + 1), xf),
                             lerp(bb(xi, yi + 1, zs + 1), bb(xi + 1, yi + 1, zs + 1), xf), yf), zf))
    return res[0] / res[1]


def reference_pyramid_blend(arrays):
    A, B, M = arrays["image_a"], arrays["image_b"], arrays["mask"]
    _, H, W = A.shape
    levels = 4
    f = np.float32
    margin = lambda l: 4 * (1 << (levels - l)) + 8  # noqa: E731
    shape = lambda l, ch: Img.with_margin(level_extent(W, l), level_extent(H, l), margin(l), ch)  # noqa: E731

    def down(src, like):
        dx = Img(like.x0, src.y0, like.w, src.h, src.ch)
        dx.fill(lambda X, Y, C: (src(2 * X - 2, Y, C) + src(2 * X - 1, Y, C) * f(4) + src(2 * X, Y, C) * f(6) +
                                 src(2 * X + 1, Y, C) * f(4) + src(2 * X + 2, Y, C)) * f(0.0625))
        return like.fill(lambda X, Y, C: (dx(X, 2 * Y - 2, C) + dx(X, 2 * Y - 1, C) * f(4) + dx(X, 2 * Y, C) * f(6) +
                                          dx(X, 2 * Y + 1, C) * f(4) + dx(X, 2 * Y + 2, C)) * f(0.0625))

    def up(src, like):
        ux = Img(like.x0, src.y0, like.w, src.h, src.ch)
        ux.fill(lambda X, Y, C: np.where(X % 2 == 0, (src(X // 2 - 1, Y, C) + src(X // 2, Y, C) * f(6) + src(X // 2 + 1, Y, C)) * f(0.125),
                                         (src(X // 2, Y, C) * f(4) + src(X // 2 + 1, Y, C) * f(4)) * f(0.125)))
        return like.like().fill(lambda X, Y, C: np.where(
            Y % 2 == 0, (ux(X, Y // 2 - 1, C) + ux(X, Y // 2, C) * f(6) + ux(X, Y // 2 + 1, C)) * f(0.125),
            (ux(X, Y // 2, C) * f(4) + ux(X, Y // 2 + 1, C) * f(4)) * f(0.125)))

    def clamped(b, ch):
        return shape(0, ch).fill(lambda X, Y, C: (b if ch == 3 else b[None])[C, np.clip(Y, 0, H - 1), np.clip(X, 0, W - 1)])

    ga, gb, gm = [clamped(A, 3)], [clamped(B, 3)], [clamped(M, 1)]
    for l in range(1, levels):
        ga.append(down(ga[l - 1], shape(l, 3)))
        gb.append(down(gb[l - 1], shape(l, 3)))
        gm.append(down(gm[l - 1], shape(l, 1)))
    blended = []
    for l in range(levels):
        la, lb = ga[l], gb[l]
        if l < levels - 1:
            ua, ub = up(ga[l + 1], la), up(gb[l + 1], lb)
            la = ga[l].like().fill(lambda X, Y, C: ga[l](X, Y, C) - ua(X, Y, C))
            lb = gb[l].like().fill(lambda X, Y, C: gb[l](X, Y, C) - ub(X, Y, C))
        blended.append(la.like().fill(lambda X, Y, C: la(X, Y, C) * gm[l](X, Y) + lb(X, Y, C) * (f(1) - gm[l](X, Y))))
    col = blended[levels - 1]
    for l in range(levels - 2, -1, -1):
        u = up(col, blended[l])
        col = blended[l].like().fill(lambda X, Y, C: u(X, Y, C) + blended[l](X, Y, C))
    return col.v[:, -col.y0:-col.y0 + H, -col.x0:-col.x0 + W]


def reference_interpolate(arrays):
    rgba = arrays["input"]
    _, H, W = rgba.shape
    levels = 10
    f = np.float32
    margin = lambda l: (1 << (levels - 1 - l)) + 4  # noqa: E731
    shape = lambda l: Img.with_margin(level_extent(W, l), level_extent(H, l), margin(l), 4)  # noqa: E731
    inp = lambda X, Y, C: rgba[C, np.clip(Y, 0, H - 1), np.clip(X, 0, W - 1)]  # noqa: E731
    ds = [shape(0).fill(lambda X, Y, C: np.where(C < 3, inp(X, Y, C) * inp(X, Y, 3), inp(X, Y, 3)))]
    for l in range(1, levels):
        prev, sh = ds[l - 1], shape(l)
        dx = Img(sh.x0, prev.y0, sh.w, prev.h, 4)
        dx.fill(lambda X, Y, C: (prev(2 * X - 1, Y, C) + f(2) * prev(2 * X, Y, C) + prev(2 * X + 1, Y, C)) * f(0.25))
        ds.append(sh.fill(lambda X, Y, C: (dx(X, 2 * Y - 1, C) + f(2) * dx(X, 2 * Y, C) + dx(X, 2 * Y + 1, C)) * f(0.25)))
    it = ds[levels - 1]
    for l in range(levels - 2, -1, -1):
        coarse, dn = it, ds[l]
        ux = Img(dn.x0, coarse.y0, dn.w, coarse.h, 4)
        ux.fill(lambda X, Y, C: (coarse(X // 2, Y, C) + coarse((X + 1) // 2, Y, C)) / f(2))
        it = dn.like().fill(lambda X, Y, C: dn(X, Y, C) + (f(1) - dn(X, Y, 3)) *
                            ((ux(X, Y // 2, C) + ux(X, (Y + 1) // 2, C)) / f(2)))
    v = it.v[:, -it.y0:-it.y0 + H, -it.x0:-it.x0 + W]
    return v[0:3] / v[3:4]


REFERENCES = {
    "camera_pipe": reference_camera_pipe, "local_laplacian": reference_local_laplacian,
    "blur_x_blur_y": reference_blur_x_blur_y, "harris": reference_harris, "unsharp_mask": reference_unsharp_mask,
    "bilateral_grid": reference_bilateral_grid, "pyramid_blend": reference_pyramid_blend,
    "interpolate": reference_interpolate,
}


# Apps whose integer output goes through float arithmetic: their variants may differ by one unit where
# LLVM fuses a multiply and an add in one schedule and not in another; compiled with strict_float
# they must agree exactly.
