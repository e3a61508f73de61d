#!/usr/bin/env python3
"""The image-pipeline benchmark (PolyMage's and Halide's suite): every image app at the sizes of
PolyMage and Halide, Tessera's automatic schedule against Halide 21 and naive C++.

Variants, each in its own process, interleaved `--repeats` times, 2 threads each:
  Tessera               the app, automatic schedule (bench/app_tessera.cpp; checked exactly
                        against its plain C++ loops in the first process)
  Halide hand           Halide's own app schedule where Halide ships one, else a reasonable one
  Halide Adams2019, Mullapudi2016, Li2018   Halide's autoschedulers (bench/halide_suite.py, PyPI
                        halide 21 in bench/.venv, created on first use)
  naive C++ + OpenMP    the apps' plain reference loops, stage by stage over whole images, at
                        -O3 -march=native with OpenMP on each nest's outer loop (bench/app_naive.cpp)

Halide runs the same algorithm (the same stages, constants and order of operations) on random
inputs of the same shapes and distributions; its variants are checked against each other
(bench/halide_suite.py). Medians over all runs. JSON to bench/results/image_suite.json, a
Markdown table to stdout and a plot (speedup over the best Halide variant per app, and the
geomean) to docs/img/image_suite.svg. A progress line on stderr says which app and variant runs.

    python3 bench/run_image_suite.py [--build build] [--runs 7] [--repeats 1] [--apps ...]
        [--no-halide] [--variants hand,Adams2019,Mullapudi2016,Li2018]
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

from kernel_bench import THREADS, run_json, thread_env
from svg_plot import bar_chart

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# app: Tessera's size arguments (width and height; camera_pipe's raw image), PolyMage's and
# Halide's sizes. Halide's inputs are random arrays of the same shapes and value ranges
# (halide_suite.py --make-input).
APPS = {
    "blur_x_blur_y": [4096, 4096],
    "harris": [6400, 6400],
    "unsharp_mask": [2048, 2048],
    "bilateral_grid": [2560, 1536],
    "camera_pipe": [2592, 1968],
    "pyramid_blend": [2048, 2048],
    "interpolate": [2560, 1536],
    "local_laplacian": [2560, 1536],
}


def progress(msg):
    print(f"\r\033[K{msg}", end="", file=sys.stderr, flush=True)


def halide_python():
    """bench/.venv's Python with PyPI halide 21 and numpy, created on first use."""
    venv = os.path.join(ROOT, "bench", ".venv")
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    if subprocess.run([py, "-c", "import halide, numpy"], capture_output=True).returncode != 0:
        subprocess.run([py, "-m", "pip", "install", "-q", "halide==21.*", "numpy"], check=True)
    return py


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=7, help="timed runs per process (at least 7)")
    ap.add_argument("--repeats", type=int, default=1, help="processes per variant, interleaved; medians pool all runs")
    ap.add_argument("--apps", nargs="+", default=list(APPS), choices=list(APPS))
    ap.add_argument("--no-halide", action="store_true")
    ap.add_argument("--variants", default="hand,Adams2019,Mullapudi2016,Li2018")
    ap.add_argument("--naive-runs", type=int, default=3, help="timed runs of the naive loops per process")
    ap.add_argument("--output", default=None,
                    help="the JSON's file (default: bench/results/image_suite.json when every app runs, else "
                         "image_suite_partial.json in the build's bench directory)")
    ap.add_argument("--plot", default=None,
                    help="the plot's file (default: docs/img/image_suite.svg when every app runs, else none)")
    args = ap.parse_args()
    if args.plot is None and set(args.apps) == set(APPS):
        # A run of some apps only does not replace the documented plot of the whole suite.
        args.plot = os.path.join(ROOT, "docs", "img", "image_suite.svg")
    if args.output is None:
        args.output = (os.path.join(ROOT, "bench", "results", "image_suite.json") if set(args.apps) == set(APPS) else
                       os.path.join(args.build, "bench", "image_suite_partial.json"))
    runs = max(7, args.runs)
    env = thread_env()
    tessera = os.path.join(args.build, "bench", "bench_app_tessera")
    naive = os.path.join(args.build, "bench", "bench_app_naive")
    halide_py = None if args.no_halide else halide_python()
    results = {}
    tmp = os.path.join(args.build, "bench", "image_suite_inputs")
    os.makedirs(tmp, exist_ok=True)
    for ai, app in enumerate(args.apps):
        sizes = APPS[app]
        times = {}
        compile_ms = {}
        inputs = os.path.join(tmp, f"{app}.npz")
        if halide_py:
            subprocess.run([halide_py, os.path.join(ROOT, "bench", "halide_suite.py"), "--make-input", app, inputs,
                            str(sizes[0]), str(sizes[1]), "--seed", "7"], check=True, capture_output=True)
        for rep in range(args.repeats):
            where = f"[{ai + 1}/{len(args.apps)}] {app} (round {rep + 1}/{args.repeats}):"
            progress(f"{where} Tessera")
            r = run_json([tessera, app, str(runs), "check" if rep == 0 else "nocheck"] + [str(s) for s in sizes], env)
            if r["check"] not in ("ok", "skipped"):
                sys.exit(f"\nTessera's {app} does not match its plain C++ loops")
            times.setdefault("Tessera", []).extend(r["run_ms"])
            compile_ms.setdefault("Tessera", []).append(r["compile"])
            progress(f"{where} naive C++ + OpenMP")
            r = run_json([naive, app, str(args.naive_runs)] + [str(s) for s in sizes], env)
            times.setdefault("naive C++ + OpenMP", []).extend(r["run_ms"])
            if halide_py:
                progress(f"{where} Halide ({args.variants})")
                t0 = time.time()
                r = run_json([halide_py, os.path.join(ROOT, "bench", "halide_suite.py"), app, str(runs), inputs,
                              "--variants", args.variants, "--threads", THREADS], env)
                for variant, v in r["variants"].items():
                    name = f"Halide {variant}"
                    if "error" in v:
                        times.setdefault(name, None)
                        compile_ms[name] = v["error"]
                        continue
                    if times.get(name) is None:
                        times[name] = []
                    times[name].extend(v["run_ms"])
                    compile_ms.setdefault(name, []).append(v["compile_ms"])
                progress(f"{where} Halide took {time.time() - t0:.0f} s")
        medians = {k: statistics.median(v) for k, v in times.items() if v}
        halide = {k: v for k, v in medians.items() if k.startswith("Halide")}
        best_halide = min(halide.items(), key=lambda kv: kv[1]) if halide else None
        results[app] = {"sizes": sizes, "median_ms": medians, "run_ms": {k: v for k, v in times.items() if v},
                        "compile": compile_ms, "errors": {k: v for k, v in compile_ms.items() if isinstance(v, str)},
                        "best_halide": best_halide[0] if best_halide else None,
                        "speedup_over_best_halide": best_halide[1] / medians["Tessera"] if best_halide else None}
    progress("")
    print(file=sys.stderr)
    os.makedirs(os.path.dirname(args.output), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump(results, f, indent=1)
    variants = ["Tessera"] + [f"Halide {v}" for v in args.variants.split(",")] + ["naive C++ + OpenMP"]
    print("| app | size | " + " | ".join(variants) + " | Tessera vs best Halide | Tessera compile |")
    print("|---|---|" + "---|" * len(variants) + "---|---|")
    speedups = []
    for app, r in results.items():
        cells = []
        for v in variants:
            ms = r["median_ms"].get(v)
            cell = f"{ms:.1f} ms" if ms is not None else ("failed" if v in r["errors"] else "-")
            if v == r["best_halide"]:
                cell = f"**{cell}**"
            cells.append(cell)
        s = r["speedup_over_best_halide"]
        if s:
            speedups.append(s)
        tc = statistics.median(c["total_ms"] for c in r["compile"]["Tessera"])
        print(f"| {app} | {' x '.join(map(str, r['sizes']))} | " + " | ".join(cells) +
              f" | {f'{s:.2f}x' if s else '-'} | {tc / 1000:.1f} s |")
    if speedups:
        print(f"\ngeomean of Tessera's speedup over the best Halide variant: {geomean(speedups):.2f}x")
        labels = [a for a, r in results.items() if r["speedup_over_best_halide"]] + ["geomean"]
        if args.plot:
            bar_chart(args.plot, labels, speedups + [geomean(speedups)],
                      title="Tessera automatic: speedup over the best Halide 21 variant (2 threads)", reference=1.0, unit="x")


if __name__ == "__main__":
    main()
