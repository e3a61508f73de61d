"""Halide's side of the blur_x_blur_y benchmark (PyPI halide 21), in its own process.

Variants: the hand schedule of Halide's blur app (tile 256x32, vectorize 8, parallel), and the
Adams2019 and Mullapudi2016 autoschedulers. Each output is checked against numpy. Prints one
JSON object: {variant: {"compile_ms": ..., "run_ms": [...], "check": "ok"}}.

    python halide_blur.py <width> <height> <runs>
"""
import json
import os
import sys
import time

import halide as hl
import numpy as np


def pipeline():
    inp = hl.ImageParam(hl.Float(32), 3, "input")
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    blur_x, blur_y = hl.Func("blur_x"), hl.Func("blur_y")
    blur_x[x, y, c] = (inp[x, y, c] + 4.0 * inp[x + 1, y, c] + 6.0 * inp[x + 2, y, c] +
                       4.0 * inp[x + 3, y, c] + inp[x + 4, y, c]) / 16.0
    blur_y[x, y, c] = (blur_x[x, y, c] + 4.0 * blur_x[x, y + 1, c] + 6.0 * blur_x[x, y + 2, c] +
                       4.0 * blur_x[x, y + 3, c] + blur_x[x, y + 4, c]) / 16.0
    return inp, blur_x, blur_y, (x, y, c)


def run(variant, W, H, runs, data, expected):
    inp, blur_x, blur_y, (x, y, c) = pipeline()
    target = hl.get_host_target()
    p = hl.Pipeline(blur_y)
    if variant == "hand":
        xo, yo, xi, yi, t = hl.Var("xo"), hl.Var("yo"), hl.Var("xi"), hl.Var("yi"), hl.Var("t")
        blur_y.reorder(x, y, c).tile(x, y, xo, yo, xi, yi, 256, 32).fuse(yo, c, t).parallel(t).vectorize(xi, 8)
        blur_x.compute_at(blur_y, xo).vectorize(x, 8)
    else:
        inp.set_estimates([(0, W), (0, H), (0, 3)])
        blur_y.set_estimates([(0, W - 4), (0, H - 4), (0, 3)])
        p.apply_autoscheduler(target, hl.AutoschedulerParams(variant, {"parallelism": str(os.cpu_count() or 1)}))
    start = time.perf_counter()
    p.compile_jit(target)
    compile_ms = (time.perf_counter() - start) * 1e3
    in_buf = hl.Buffer(data)  # numpy (c, y, x) → Halide (x, y, c)
    inp.set(in_buf)
    out = hl.Buffer(hl.Float(32), [W - 4, H - 4, 3])
    times = []
    for _ in range(runs):
        s = time.perf_counter()
        p.realize(out)
        times.append((time.perf_counter() - s) * 1e3)
    got = np.asarray(out)
    check = "ok" if np.allclose(got, expected, rtol=1e-5, atol=1e-6) else "MISMATCH"
    return {"compile_ms": compile_ms, "run_ms": times, "check": check}


def main():
    W, H, runs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    lib = os.path.join(os.path.dirname(hl.__file__), "lib64")
    hl.load_plugin(os.path.join(lib, "libautoschedule_adams2019.so"))
    hl.load_plugin(os.path.join(lib, "libautoschedule_mullapudi2016.so"))
    rng = np.random.default_rng(7)
    data = rng.random((3, H, W), dtype=np.float32)
    bx = (data[:, :, 0:W - 4] + 4 * data[:, :, 1:W - 3] + 6 * data[:, :, 2:W - 2] + 4 * data[:, :, 3:W - 1] +
          data[:, :, 4:W]) / 16
    by = (bx[:, 0:H - 4] + 4 * bx[:, 1:H - 3] + 6 * bx[:, 2:H - 2] + 4 * bx[:, 3:H - 1] + bx[:, 4:H]) / 16
    result = {"halide_version": getattr(hl, "__version__", "21")}
    for variant in ["hand", "Adams2019", "Mullapudi2016"]:
        result[variant] = run(variant, W, H, runs, data, by)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
