#!/usr/bin/env python3
"""PolyBench 4.2 kernels: gcc, clang and clang + Polly against Tessera's pb_* apps, double precision.

Kernels: the 23 that exist as Tessera apps (apps/src/polybench*.cpp): gemm, trmm, symm, syrk, syr2k, gemver,
gesummv (blas); atax, bicg, mvt, 2mm, 3mm, doitgen (kernels); lu, cholesky, trisolv (solvers); covariance,
correlation (datamining); floyd-warshall (medley); jacobi-1d, jacobi-2d, heat-3d, seidel-2d (stencils).

Variants, each in its own process, interleaved `--repeats` times:
  (a) gcc -O3 -march=native         PolyBench's loop nest (bench/polybench/<kernel>.c), one thread
  (b) clang-19 -O3 -march=native    the same loops, one thread
  (c) clang-19 + Polly              -mllvm -polly -mllvm -polly-parallel -fopenmp, 2 threads
  (d) Tessera                       build/apps/pb_<kernel> --threads 2, automatic schedule

The C loops use static arrays whose sizes are compile-time -D macros (as PolyBench does, so that
Polly sees constant bounds), -ffp-contract=off as Tessera without fast_math. The three C variants'
checksums must agree (relative 1e-9; a disagreement is reported in the table and the JSON, not
fatal). Tessera's app checks its own output against PolyBench's loops (bit-exact) and must print
OK. Medians pool all timed runs of the C variants; the Tessera app prints only its median per
process, so its figure is the median of those medians (with --repeats 1, its median). A process
that runs longer than --timeout seconds (default 60) is killed and the variant marked timed out.
The JSON goes to bench/results/polybench.json (--output names another file there) and a
Markdown table to stdout.

    python3 bench/run_polybench_benchmark.py [--build build] [--dataset MEDIUM] [--runs 5] [--repeats 1]
                                             [--kernels atax 2mm ...] [--timeout 60]
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys

from svg_plot import bar_chart

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
THREADS = "2"

# PolyBench 4.2's dataset sizes (the <kernel>.h headers), in the order of the Tessera app's
# size_names() (apps/src/polybench.cpp, apps/src/polybench_stencils.cpp), which is also the order of the -D macros.
SIZE_NAMES = {
    "atax": ["M", "N"],
    "bicg": ["M", "N"],
    "mvt": ["N"],
    "2mm": ["NI", "NJ", "NK", "NL"],
    "3mm": ["NI", "NJ", "NK", "NL", "NM"],
    "doitgen": ["NQ", "NR", "NP"],
    "gemver": ["N"],
    "gesummv": ["N"],
    "syrk": ["M", "N"],
    "syr2k": ["M", "N"],
    "covariance": ["M", "N"],
    "jacobi_1d": ["TSTEPS", "N"],
    "jacobi_2d": ["TSTEPS", "N"],
    "heat_3d": ["TSTEPS", "N"],
    "seidel_2d": ["TSTEPS", "N"],
    "gemm": ["NI", "NJ", "NK"],
    "trmm": ["M", "N"],
    "symm": ["M", "N"],
    "correlation": ["M", "N"],
    "lu": ["N"],
    "cholesky": ["N"],
    "trisolv": ["N"],
    "floyd_warshall": ["N"],
}
DATASETS = {
    "MINI": {
        "atax": [38, 42], "bicg": [38, 42], "mvt": [40], "2mm": [16, 18, 22, 24], "3mm": [16, 18, 20, 22, 24],
        "doitgen": [8, 10, 12], "gemver": [40], "gesummv": [30], "syrk": [20, 30], "syr2k": [20, 30],
        "covariance": [28, 32], "jacobi_1d": [20, 30], "jacobi_2d": [20, 30], "heat_3d": [20, 10], "seidel_2d": [20, 40],
        "gemm": [20, 25, 30], "trmm": [20, 30], "symm": [20, 30], "correlation": [28, 32], "lu": [40], "cholesky": [40],
        "trisolv": [40], "floyd_warshall": [60],
    },
    "SMALL": {
        "atax": [116, 124], "bicg": [116, 124], "mvt": [120], "2mm": [40, 50, 70, 80], "3mm": [40, 50, 60, 70, 80],
        "doitgen": [20, 25, 30], "gemver": [120], "gesummv": [90], "syrk": [60, 80], "syr2k": [60, 80],
        "covariance": [80, 100], "jacobi_1d": [40, 120], "jacobi_2d": [40, 90], "heat_3d": [40, 20], "seidel_2d": [40, 120],
        "gemm": [60, 70, 80], "trmm": [60, 80], "symm": [60, 80], "correlation": [80, 100], "lu": [120], "cholesky": [120],
        "trisolv": [120], "floyd_warshall": [180],
    },
    "MEDIUM": {
        "atax": [390, 410], "bicg": [390, 410], "mvt": [400], "2mm": [180, 190, 210, 220],
        "3mm": [180, 190, 200, 210, 220], "doitgen": [40, 50, 60], "gemver": [400], "gesummv": [250],
        "syrk": [200, 240], "syr2k": [200, 240], "covariance": [240, 260], "jacobi_1d": [100, 400], "jacobi_2d": [100, 250], "heat_3d": [100, 40], "seidel_2d": [100, 400],
        "gemm": [200, 220, 240], "trmm": [200, 240], "symm": [200, 240], "correlation": [240, 260], "lu": [400],
        "cholesky": [400], "trisolv": [400], "floyd_warshall": [500],
    },
    "LARGE": {
        "atax": [1900, 2100], "bicg": [1900, 2100], "mvt": [2000], "2mm": [800, 900, 1100, 1200],
        "3mm": [800, 900, 1000, 1100, 1200], "doitgen": [140, 150, 160], "gemver": [2000], "gesummv": [1300],
        "syrk": [1000, 1200], "syr2k": [1000, 1200], "covariance": [1200, 1400], "jacobi_1d": [500, 2000], "jacobi_2d": [500, 1300], "heat_3d": [500, 120], "seidel_2d": [500, 2000],
        "gemm": [1000, 1100, 1200], "trmm": [1000, 1200], "symm": [1000, 1200], "correlation": [1200, 1400], "lu": [2000],
        "cholesky": [2000], "trisolv": [2000], "floyd_warshall": [2800],
    },
}
KERNELS = list(SIZE_NAMES)

POLLY = ["-fopenmp", "-mllvm", "-polly", "-mllvm", "-polly-parallel", "-mllvm", "-polly-vectorizer=stripmine"]
VARIANTS = {  # name: compiler command line before the sources
    "gcc": ["gcc", "-O3", "-march=native", "-ffp-contract=off"],
    "clang": ["clang-19", "-O3", "-march=native", "-ffp-contract=off"],
    "Polly": ["clang-19", "-O3", "-march=native", "-ffp-contract=off"] + POLLY,
}


class TimedOut(Exception):
    pass


def run_process(cmd, env, timeout):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise TimedOut()
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited with {r.returncode}: {(r.stdout + r.stderr).strip()[-400:]}")
    return r.stdout


def build(out_dir, kernel, sizes):
    src = os.path.join(ROOT, "bench", "polybench", f"{kernel}.c")
    defs = [f"-D{n}={v}" for n, v in zip(SIZE_NAMES[kernel], sizes)]
    exes = {}
    for name, cmd in VARIANTS.items():
        exe = os.path.join(out_dir, f"{kernel}_{'x'.join(map(str, sizes))}_{name.lower()}")
        r = subprocess.run(cmd + defs + [src, "-o", exe, "-lm"], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{kernel}: {name} does not compile: {r.stderr.strip()[:300]}", file=sys.stderr)
            continue
        exes[name] = exe
    return exes


def run_tessera(exe, sizes, runs, env, timeout):
    # With the compile cache off: the compile column is a cold compile's, not a hit's.
    out = run_process([exe, "--size"] + [str(s) for s in sizes] + ["--runs", str(runs), "--threads", THREADS],
                      dict(env, TESSERA_CACHE="0"), timeout)
    compile_ms = float(re.search(r"^compile: ([0-9.]+) ms", out, re.M).group(1))
    median = float(re.search(r"^run: median ([0-9.]+) ms", out, re.M).group(1))
    checks = re.findall(r"^check against .*?: (\w+)", out, re.M)
    if not checks or any(c != "OK" for c in checks):
        raise RuntimeError(f"{os.path.basename(exe)} does not match PolyBench's loops:\n{out}")
    return median, compile_ms


def fmt_ms(v):
    if isinstance(v, str):
        return v
    return f"{v:.3f}" if v < 10 else f"{v:.1f}"


def plot(results, path):
    """Two SVG bar charts of a run: best baseline / Tessera per kernel and the geomean (`path`),
    and Tessera's compile time per kernel against issue 8's goal of 300 ms (`<path>_compile.svg`)."""
    kernels = [(k, v) for k, v in results["kernels"].items() if v["best_baseline_over_tessera"] is not None]
    labels = [k for k, _ in kernels] + ["geomean"]
    ratios = [v["best_baseline_over_tessera"] for _, v in kernels] + [results["geomean_best_baseline_over_tessera"]]
    bar_chart(path, labels, ratios, title=f"PolyBench {results['dataset']}: best of gcc, clang and Polly / Tessera",
              reference=1.0, unit="x")
    timed = [(k, v["tessera_compile_ms"]) for k, v in results["kernels"].items() if v["tessera_compile_ms"] is not None]
    bar_chart(os.path.splitext(path)[0] + "_compile.svg", [k for k, _ in timed], [c for _, c in timed],
              title="Tessera's compile time, ms (goal: 300 ms)", reference=300.0, lower_is_better=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--dataset", default="MEDIUM", choices=["MINI", "SMALL", "MEDIUM", "LARGE"])
    ap.add_argument("--runs", type=int, default=5, help="timed runs per process")
    ap.add_argument("--repeats", type=int, default=1, help="processes per variant; medians pool all runs")
    ap.add_argument("--kernels", nargs="+", default=KERNELS, choices=KERNELS)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per process before it is killed")
    ap.add_argument("--output", default="polybench.json",
                    help="file name under bench/results/ for the JSON (a run of some kernels keeps the suite's)")
    ap.add_argument("--plot", help="also write SVG bar charts of the run here (docs/img/polybench.svg) and beside "
                                   "it, <name>_compile.svg")
    ap.add_argument("--plot-from", metavar="JSON", help="only write the charts of --plot from a run's JSON")
    args = ap.parse_args()
    if args.plot_from:
        with open(args.plot_from) as f:
            plot(json.load(f), args.plot or os.path.join(ROOT, "docs", "img", "polybench.svg"))
        return
    out_dir = os.path.join(args.build, "bench", "polybench")
    os.makedirs(out_dir, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS=THREADS)
    results = {"dataset": args.dataset, "threads": {"gcc": 1, "clang": 1, "Polly": int(THREADS), "Tessera": int(THREADS)},
               "runs": args.runs, "repeats": args.repeats, "timeout_s": args.timeout, "kernels": {}}
    names = list(VARIANTS) + ["Tessera"]
    for kernel in args.kernels:
        sizes = DATASETS[args.dataset][kernel]
        print(f"{kernel} {sizes} ...", file=sys.stderr, flush=True)
        exes = build(out_dir, kernel, sizes)
        tessera = os.path.join(args.build, "apps", "pb_" + kernel)
        times = {n: [] for n in names}
        status = {n: "ok" if (n in exes or n == "Tessera") else "build failed" for n in names}
        checksums, compile_ms = {}, []
        for rep in range(args.repeats):
            for name in names:
                if status[name] != "ok":
                    continue
                try:
                    if name == "Tessera":
                        median, c = run_tessera(tessera, sizes, args.runs, env, args.timeout)
                        times[name].append(median)
                        compile_ms.append(c)
                    else:
                        r = json.loads(run_process([exes[name], str(args.runs)], env, args.timeout))
                        times[name] += r["run_ms"]
                        checksums.setdefault(name, r["checksum"])
                except TimedOut:
                    status[name] = f"timed out (> {args.timeout:.0f} s)"
                    times[name] = []
                except (RuntimeError, AttributeError, ValueError) as e:
                    status[name] = "failed"
                    times[name] = []
                    print(f"{kernel}: {name} failed: {e}", file=sys.stderr)
        medians = {n: statistics.median(t) for n, t in times.items() if t and status[n] == "ok"}
        ref = next(iter(checksums.values()), None)
        mismatch = [n for n, c in checksums.items()
                    if abs(c - ref) > 1e-9 * max(abs(ref), abs(c), 1e-300)]
        base = {n: medians[n] for n in VARIANTS if n in medians}
        best = min(base, key=base.get) if base else None
        ratio = base[best] / medians["Tessera"] if best and "Tessera" in medians and medians["Tessera"] > 0 else None
        results["kernels"][kernel] = {
            "sizes": dict(zip(SIZE_NAMES[kernel], sizes)),
            "median_ms": medians, "status": status, "checksums": checksums,
            "checksum_mismatch": mismatch, "best_baseline": best, "best_baseline_over_tessera": ratio,
            # (One cold compile per process: their median.)
            "tessera_compile_ms": statistics.median(compile_ms) if compile_ms else None,
            "tessera_compile_ms_per_process": compile_ms,
            "tessera_medians_per_process_ms": times["Tessera"],
        }

    print(f"\n### PolyBench 4.2 {args.dataset}, double, median ms over {args.runs} runs x {args.repeats} process(es)"
          f" (gcc, clang: 1 thread; Polly, Tessera: {THREADS} threads)\n")
    print("| kernel | sizes | gcc | clang | Polly | Tessera | best baseline / Tessera | Tessera compile ms (median of the processes) |")
    print("|---|---|---|---|---|---|---|---|")
    ratios = []
    for kernel, k in results["kernels"].items():
        cells = []
        for n in names:
            if n in k["median_ms"]:
                cell = fmt_ms(k["median_ms"][n])
                if n in k["checksum_mismatch"]:
                    cell += " (checksum differs)"
            else:
                cell = k["status"][n]
            cells.append(cell)
        sizes = " ".join(f"{n}={v}" for n, v in k["sizes"].items())
        r = k["best_baseline_over_tessera"]
        if r is not None:
            ratios.append((kernel, r))
        rcell = f"{r:.2f}x ({k['best_baseline']})" if r is not None else "-"
        comp = f"{k['tessera_compile_ms']:.1f}" if k["tessera_compile_ms"] is not None else "-"
        print(f"| {kernel} | {sizes} | " + " | ".join(cells) + f" | {rcell} | {comp} |")
    geo = math.exp(sum(math.log(r) for _, r in ratios) / len(ratios)) if ratios else None
    results["geomean_best_baseline_over_tessera"] = geo
    if geo is not None:
        print(f"\nGeomean of best baseline / Tessera over {len(ratios)} kernels: {geo:.2f}x"
              " (above 1: Tessera faster than the best of gcc, clang and Polly)")
        print("\n```text")
        top = max(max(r for _, r in ratios), 1.0)
        for kernel, r in ratios:
            bar = "#" * max(1, round(40 * r / top))
            print(f"{kernel:<11} {bar} {r:.2f}x")
        print(f"{'(1.00x)':<11} {'|' * max(1, round(40 / top))}")
        print("```")
    bad = {k: v["checksum_mismatch"] for k, v in results["kernels"].items() if v["checksum_mismatch"]}
    if bad:
        print(f"\nChecksum disagreements among the C variants: {bad}")
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", args.output), "w") as f:
        json.dump(results, f, indent=2)
    if args.plot and geo is not None:
        plot(results, args.plot)


if __name__ == "__main__":
    main()
