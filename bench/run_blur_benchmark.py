#!/usr/bin/env python3
"""The blur_x_blur_y benchmark: 3 x W x H float32, all cores, every variant in its own process.

  (a) copy of the same bytes (input -> output): the bandwidth roofline
  (b) naive two-pass C++ with OpenMP
  (c) Halide 21 from PyPI: the hand schedule of its blur app, Adams2019, Mullapudi2016
  (d) Tessera, automatic schedule

Each variant runs `--runs` times (at least 7); medians and ratios to the copy are written to
bench/results/blur_x_blur_y.json and printed as a Markdown table. Halide is installed into
bench/.venv on first use (PyPI halide 21 and numpy).

    python3 bench/run_blur_benchmark.py [--build build] [--size 4096 4096] [--runs 9] [--repeats 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import venv

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_json(cmd, env=None):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out)


def halide_python():
    env_dir = os.path.join(ROOT, "bench", ".venv")
    py = os.path.join(env_dir, "bin", "python")
    if not os.path.exists(py):
        venv.create(env_dir, with_pip=True)
    check = subprocess.run([py, "-c", "import halide, numpy"], capture_output=True)
    if check.returncode != 0:
        subprocess.run([py, "-m", "pip", "install", "-q", "halide==21.*", "numpy"], check=True)
    return py


def median(xs):
    return statistics.median(xs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--size", nargs=2, type=int, default=[4096, 4096])
    ap.add_argument("--runs", type=int, default=9, help="timed runs per process (at least 7)")
    ap.add_argument("--repeats", type=int, default=3, help="processes per variant; medians pool all runs")
    ap.add_argument("--no-halide", action="store_true")
    args = ap.parse_args()
    runs = max(7, args.runs)
    W, H = args.size
    bench_bin = os.path.join(args.build, "bench")

    copy, naive, tessera, halide = [], [], [], {}
    cold, warm, cold_wall, first_realize, rerun = [], [], [], [], []
    schedule = ""
    halide_py = None if args.no_halide else halide_python()
    for _ in range(args.repeats):
        b = run_json([os.path.join(bench_bin, "bench_blur_baselines"), str(W), str(H), str(runs)])
        if b["naive_check"] != "ok":
            sys.exit("the naive baseline's output does not match its formula")
        copy += b["copy_ms"]
        naive += b["naive_ms"]
        threads = b["threads"]
        t = run_json([os.path.join(bench_bin, "bench_blur_tessera"), str(W), str(H), str(runs)])
        if t["check"] != "ok":
            sys.exit("Tessera's output does not match the reference")
        tessera += t["run_ms"]
        cold.append(t["cold_compile"])
        warm.append(t["warm_compile"])
        cold_wall.append(t["cold_compile_wall_ms"])
        first_realize.append(t["realize_first_ms"])
        rerun.append(t["realize_warm_rerun_ms"])
        schedule = t["schedule"]
        if halide_py:
            h = run_json([halide_py, os.path.join(ROOT, "bench", "halide_blur.py"), str(W), str(H), str(runs)])
            for variant in ["hand", "Adams2019", "Mullapudi2016"]:
                if h[variant]["check"] != "ok":
                    sys.exit("Halide %s's output does not match numpy" % variant)
                entry = halide.setdefault(variant, {"run_ms": [], "compile_ms": []})
                entry["run_ms"] += h[variant]["run_ms"]
                entry["compile_ms"].append(h[variant]["compile_ms"])

    copy_ms = median(copy)
    rows = [("copy of the same bytes (input -> output)", copy_ms),
            ("naive two-pass C++, OpenMP", median(naive))]
    names = {"hand": "Halide 21, hand schedule (tile 256x32, vectorize 8, parallel)",
             "Adams2019": "Halide 21, Adams2019 autoscheduler",
             "Mullapudi2016": "Halide 21, Mullapudi2016 autoscheduler"}
    for v in ["hand", "Adams2019", "Mullapudi2016"]:
        if v in halide:
            rows.append((names[v], median(halide[v]["run_ms"])))
    rows.append(("Tessera, automatic schedule", median(tessera)))

    phases = {}
    for r in cold:
        for k, v in r.items():
            phases.setdefault(k, []).append(v)
    result = {
        "benchmark": "blur_x_blur_y",
        "size": [3, H, W],
        "threads": threads,
        "runs_per_variant": runs * args.repeats,
        "median_ms": {name: ms for name, ms in rows},
        "ratio_to_copy": {name: ms / copy_ms for name, ms in rows},
        "tessera_schedule": schedule,
        "tessera_cold_compile_ms": {k: median(v) for k, v in phases.items()},
        "tessera_cold_compile_wall_ms": median(cold_wall),
        "tessera_warm_compile_ms": median([w["total_ms"] for w in warm]),
        "tessera_realize_first_ms": median(first_realize),
        "tessera_realize_warm_rerun_ms": median(rerun),
        "halide_jit_compile_ms": {v: median(halide[v]["compile_ms"]) for v in halide},
    }
    best_halide = min((median(halide[v]["run_ms"]) for v in halide), default=None)
    if best_halide:
        result["tessera_speedup_over_best_halide"] = best_halide / median(tessera)
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "blur_x_blur_y.json"), "w") as f:
        json.dump(result, f, indent=2)

    print("blur_x_blur_y, 3 x %d x %d float32, %d threads, median of %d runs per variant\n" % (H, W, threads, runs * args.repeats))
    print("| variant | median | vs copy |")
    print("|---|---|---|")
    for name, ms in rows:
        print("| %s | %.1f ms | %.2f |" % (name, ms, ms / copy_ms))
    print()
    c = result["tessera_cold_compile_ms"]
    print("Tessera cold compile: %.0f ms (%s); warm compile: %.0f ms" % (
        c["total_ms"], ", ".join("%s %.1f" % (k, v) for k, v in c.items() if k != "total_ms"), result["tessera_warm_compile_ms"]))
    print("Tessera realize(): first call (compile + run) %.0f ms, warm re-run %.1f ms" % (
        result["tessera_realize_first_ms"], result["tessera_realize_warm_rerun_ms"]))
    if halide:
        print("Halide JIT compile: " + ", ".join("%s %.0f ms" % (v, result["halide_jit_compile_ms"][v]) for v in halide))
        print("Tessera vs best Halide: %.2fx" % result["tessera_speedup_over_best_halide"])


if __name__ == "__main__":
    main()
