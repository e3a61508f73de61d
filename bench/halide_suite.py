"""Halide's side of the image-pipeline benchmark (PyPI halide 21): one app per process.

The apps are transcriptions of Tessera's DSL apps (apps/src/<app>.cpp): the same stages, constants,
arithmetic order and boundary conditions (`repeat_edge` where the C++ uses it; Halide's integer
division and modulo round to minus infinity like the DSL's). For each requested variant the pipeline
is built afresh, scheduled (the "hand" schedule, or one of Halide's autoschedulers), compiled with
compile_jit for the host target, and realized `runs` times into a preallocated output buffer.

    python halide_suite.py <app> <runs> <input.npz> [--output out.npz]
                           [--variants hand,Adams2019,Mullapudi2016,Li2018] [--threads N] [--strict-float]

<input.npz> holds the app's inputs as numpy arrays indexed [c][y][x] (or [y][x] when 2-D), x fastest;
they become Halide buffers indexed (x, y, c). Inputs by app (W x H the image size):

    blur_x_blur_y    input   float32 [3][H][W]        -> float32 [3][H-4][W-4]
    harris           input   float32 [H][W]           -> float32 [H-4][W-4]
    unsharp_mask     input   float32 [3][H][W]        -> float32 [3][H-4][W-4]   (weight 3, threshold 0.02)
    bilateral_grid   input   float32 [H][W]           -> float32 [H][W]
    camera_pipe      raw     uint16  [H][W]           -> uint8   [3][H-24][W-32] (matrices, 3700 K, gamma 2,
                                                         contrast 50, black 25, white 1023, sharpen 1)
    pyramid_blend    image_a, image_b float32 [3][H][W], mask float32 [H][W] -> float32 [3][H][W]
    interpolate      input   float32 [4][H][W]        -> float32 [3][H][W]
    local_laplacian  input   uint16  [3][H][W]        -> uint16  [3][H][W]

Prints one JSON object on stdout:

    {"app": name, "threads": N, "target": "...", "output_shape": [...],
     "variants": {variant: {"compile_ms": ..., "schedule_ms": ..., "run_ms": [...], "median_ms": ...,
                            "max_abs_diff": d or null} or {"error": "..."}}}

compile_ms is the compile_jit time; schedule_ms the time to apply the schedule (for autoschedulers, the
autoscheduling itself). max_abs_diff compares each variant's output with the "hand" variant's output, or
with the first variant that ran when "hand" is absent (null for that one). With --output, each variant's
output array ([c][y][x], like the inputs) is saved under the variant's name. Halide's thread pool gets
--threads threads (HL_NUM_THREADS, set before halide is imported); the autoschedulers get it as their
"parallelism". The autoscheduler plugins are the libautoschedule_*.so files shipped in halide/lib64.
The target is the host's (with strict_float added by --strict-float: no fused multiply-adds or other
float rewrites, so that every schedule computes bit-identical floats).

Other modes:

    python halide_suite.py --make-input <app> <out.npz> [W H] [--seed S]   random inputs (default size
                                                                        by default, as the C++ prepare())
    python halide_suite.py --selftest [--threads N] [--apps a,b] [--variants ...]
                                 every app at a small awkward size, each in its own process: all
                                 variants must agree, and the hand variant must match a numpy
                                 transcription of the C++ reference() loops (see selftest()).
"""
import os
import sys


def _arg_value(argv, flag, default=None):
    for i, a in enumerate(argv):
        if a == flag and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
    return default


# The Halide runtime reads HL_NUM_THREADS when its thread pool starts: set it before importing halide.
THREADS = int(_arg_value(sys.argv, "--threads", str(os.cpu_count() or 1)))
os.environ["HL_NUM_THREADS"] = str(THREADS)

import json  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import halide as hl  # noqa: E402
import numpy as np  # noqa: E402

from halide_pipelines import *  # noqa: E402,F401,F403 (the pipelines, BUILDERS, make_inputs)
from halide_reference import *  # noqa: E402,F401,F403 (REFERENCES, for --selftest)

ALL_VARIANTS = ["hand", "Adams2019", "Mullapudi2016", "Li2018"]
PLUGINS = {"Adams2019": "adams2019", "Mullapudi2016": "mullapudi2016", "Li2018": "li2018",
           "Anderson2021": "anderson2021"}

# ---------------------------------------------------------------------------------------------------
# Running one app

def load_plugin(variant):
    name = PLUGINS.get(variant)
    if name is None:
        raise ValueError(f"unknown variant {variant!r} (known: hand, {', '.join(PLUGINS)})")
    path = os.path.join(os.path.dirname(hl.__file__), "lib64", f"libautoschedule_{name}.so")
    if not os.path.exists(path):
        raise FileNotFoundError(f"autoscheduler plugin not found: {path}")
    hl.load_plugin(path)


def run_variant(app, arrays, variant, runs, threads, target):
    p = BUILDERS[app](arrays)
    pipeline = hl.Pipeline(p.output)
    start = time.perf_counter()
    if variant == "hand":
        p.hand(target)
    else:
        load_plugin(variant)
        p.estimate()
        pipeline.apply_autoscheduler(target, hl.AutoschedulerParams(variant, {"parallelism": str(threads)}))
    schedule_ms = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    pipeline.compile_jit(target)
    compile_ms = (time.perf_counter() - start) * 1e3
    keep = []
    for param, arr in p.inputs:
        buf = hl.Buffer(np.ascontiguousarray(arr))  # numpy [c][y][x] -> Halide (x, y, c)
        keep.append(buf)
        param.set(buf)
    out = hl.Buffer(p.out_type, p.out_sizes)
    times = []
    for _ in range(runs):
        s = time.perf_counter()
        pipeline.realize(out, target)  # (the target compiled for: no recompilation)
        times.append((time.perf_counter() - s) * 1e3)
    result = np.array(np.asarray(out), copy=True)  # Halide (x, y, c) -> numpy [c][y][x]
    return {"compile_ms": compile_ms, "schedule_ms": schedule_ms, "run_ms": times,
            "median_ms": float(np.median(times)) if times else None}, result


def max_abs_diff(a, b):
    if a.shape != b.shape:
        return float("inf")
    return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0


def run_app(app, runs, input_path, output_path, variants, threads, strict_float=False):
    if app not in BUILDERS:
        raise SystemExit(f"unknown app {app!r}; apps: {', '.join(BUILDERS)}")
    with np.load(input_path) as npz:
        arrays = {k: np.ascontiguousarray(npz[k]) for k in npz.files}
    target = hl.get_host_target()
    if strict_float:
        target = target.with_feature(hl.TargetFeature.StrictFloat)
    results, outputs = {}, {}
    for variant in variants:
        try:
            results[variant], outputs[variant] = run_variant(app, arrays, variant, runs, threads, target)
        except Exception as e:  # a failing variant is recorded, and the others still run
            results[variant] = {"error": f"{type(e).__name__}: {e}".strip()}
    base = "hand" if "hand" in outputs else next(iter(outputs), None)
    for variant, out in outputs.items():
        results[variant]["max_abs_diff"] = None if variant == base else max_abs_diff(out, outputs[base])
    if output_path:
        np.savez(output_path, **outputs)
    shape = next(iter(outputs.values())).shape if outputs else None
    return {"app": app, "threads": threads, "target": str(target), "output_shape": list(shape) if shape else None,
            "variants": results}


FLOAT_MATH_INT_OUTPUT = {"local_laplacian"}


def selftest(threads, variants, apps, emit):
    """Each app at a small awkward size, in its own process: all variants must agree (exactly for integer
    outputs, within 1e-4 of the output's magnitude for float ones), and the hand variant must match the
    numpy transcription of the C++ reference() (exactly for camera_pipe; within 1e-4 relative for float
    outputs). local_laplacian's uint16 output goes through float math: at the default target variants
    and the reference may differ by 1 (fused multiply-adds; Halide's own exp differs from libm's expf by
    up to 1 ulp), which is reported; recompiled with strict_float its variants must agree exactly."""
    ok = True
    report = {}
    with tempfile.TemporaryDirectory() as tmp:
        cases = [(app, size, False) for app in apps for size in SELFTEST_SIZES.get(app, [(67, 45)])]
        cases += [(app, (67, 45), True) for app in apps if app in FLOAT_MATH_INT_OUTPUT]
        for app, (W, H), strict in cases:
            key = f"{app} {W}x{H}" + (" strict_float" if strict else "")
            arrays = make_inputs(app, W, H, seed=5)
            inp, outp = os.path.join(tmp, f"{app}_in.npz"), os.path.join(tmp, f"{app}_out.npz")
            np.savez(inp, **arrays)
            cmd = [sys.executable, os.path.abspath(__file__), app, "1", inp, "--output", outp,
                   "--variants", ",".join(variants), "--threads", str(threads)] + (["--strict-float"] if strict else [])
            start = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True)
            entry = {"size": [W, H], "seconds": round(time.perf_counter() - start, 1)}
            report[key] = entry
            try:
                if proc.returncode != 0:
                    raise ValueError(f"exit {proc.returncode}: {proc.stderr.strip()[-2000:]}")
                res = json.loads(proc.stdout)
            except ValueError as e:
                entry["error"] = str(e) or f"no JSON on stdout: {proc.stdout[:500]!r}"
                ok = False
                print(json.dumps({key: entry}), file=sys.stderr)
                continue
            with np.load(outp) as npz:
                outs = {k: npz[k] for k in npz.files}
            is_float = any(o.dtype.kind == "f" for o in outs.values())
            base_name = "hand" if "hand" in outs else next(iter(outs), None)
            base = outs.get(base_name)
            tol = 1e-4 * float(np.max(np.abs(base))) if is_float and base is not None else 0
            if app in FLOAT_MATH_INT_OUTPUT and not strict:
                tol = 1
            entry["variants"] = {}
            for v, r in res["variants"].items():
                if "error" in r:
                    entry["variants"][v] = {"error": r["error"][:300]}
                    ok = False
                    continue
                d = r["max_abs_diff"]
                good = d is None or d <= tol
                ok &= good
                e = {"max_abs_diff": d, "ok": good, "schedule_ms": round(r["schedule_ms"], 1),
                     "compile_ms": round(r["compile_ms"], 1)}
                if not is_float and d:
                    e["pixels_differing"] = int(np.count_nonzero(outs[v] != base))
                    e["of"] = int(base.size)
                entry["variants"][v] = e
            if "hand" in outs and app in REFERENCES:
                ref = REFERENCES[app](arrays)
                got = outs["hand"]
                if ref.shape != got.shape:
                    entry["reference"] = {"error": f"shape {got.shape} != reference {ref.shape}"}
                    ok = False
                else:
                    d = max_abs_diff(got, ref)
                    if is_float:
                        rel = d / max(float(np.max(np.abs(ref))), 1e-30)
                        good = rel <= 1e-4
                        entry["reference"] = {"max_abs_diff": d, "relative": rel, "ok": good}
                    else:
                        n_diff = int(np.count_nonzero(got.astype(np.int64) != ref.astype(np.int64)))
                        good = d <= (1 if app in FLOAT_MATH_INT_OUTPUT else 0)
                        entry["reference"] = {"max_abs_diff": d, "pixels_differing": n_diff, "of": int(ref.size),
                                              "ok": good}
                    ok &= good
            print(json.dumps({key: entry}), file=sys.stderr)
    emit({"selftest": "pass" if ok else "FAIL", "threads": threads, "apps": report})
    return 0 if ok else 1


def check_axes():
    """buffer(x, y, c) == arr[c, y, x] for the numpy -> Halide conversion used here."""
    arr = np.arange(2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5)
    buf = hl.Buffer(np.ascontiguousarray(arr))
    assert [buf.dim(i).extent() for i in range(3)] == [5, 3, 2]
    for (cc, yy, xx) in [(0, 0, 1), (1, 2, 3), (1, 0, 4)]:
        assert buf[xx, yy, cc] == arr[cc, yy, xx]
    out = hl.Buffer(f32, [5, 3, 2])
    assert np.asarray(out).shape == (2, 3, 5)


def main(argv):
    # Halide prints its warnings on stdout: send fd 1 to stderr, and the JSON to the real stdout.
    sys.stdout.flush()
    json_fd = os.dup(1)
    os.dup2(2, 1)

    def emit(obj):
        os.write(json_fd, (json.dumps(obj, indent=1) + "\n").encode())

    args = [a for a in argv]
    strict_float = "--strict-float" in args
    args = [a for a in args if a != "--strict-float"]
    opts = {}
    for flag in ("--output", "--variants", "--threads", "--seed", "--apps"):
        val = _arg_value(args, flag)
        if val is not None:
            opts[flag] = val
            i = next(i for i, a in enumerate(args) if a == flag or a.startswith(flag + "="))
            del args[i:i + (1 if "=" in args[i] else 2)]
    variants = opts.get("--variants", ",".join(ALL_VARIANTS)).split(",")
    if args and args[0] == "--selftest":
        check_axes()
        apps = opts.get("--apps", ",".join(BUILDERS)).split(",")
        return selftest(THREADS, variants, apps, emit)
    if args and args[0] == "--make-input":
        app, path = args[1], args[2]
        W, H = (int(args[3]), int(args[4])) if len(args) >= 5 else DEFAULT_SIZES[app]
        np.savez(path, **make_inputs(app, W, H, seed=int(opts.get("--seed", "1"))))
        return 0
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    app, runs, input_path = args[0], int(args[1]), args[2]
    result = run_app(app, runs, input_path, opts.get("--output"), variants, THREADS, strict_float)
    emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
