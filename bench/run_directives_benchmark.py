#!/usr/bin/env python3
"""Directive-written schedules against the automatic scheduler with the same tiles (issue 12):
blur_x_blur_y and matmul, each scheduled automatically and by its directives
(apps/include/tessera_apps/written_schedules.h), in separate processes of bench_app_tessera,
the variants interleaved in one run, 2 threads. Each process checks its output against the
app's plain C++ loops (exactly) and times several runs; the figure per variant is the median
over processes of each process's median run.

    python3 bench/run_directives_benchmark.py [--build build] [--repeats 7]

Writes bench/results/directives.json, prints a Markdown table, and plots automatic ÷ directives
run time (at or above 1: the directive-written schedule is as fast) to docs/img/directives.svg.
"""
import argparse
import json
import os
import statistics
import sys

from kernel_bench import run_json, thread_env
from svg_plot import bar_chart

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

KERNELS = [("blur_x_blur_y", ["4096", "4096"], 9), ("matmul", ["1024", "1024", "1024"], 7)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeats", type=int, default=7, help="processes per variant (at least 7)")
    ap.add_argument("--json", default=os.path.join(ROOT, "bench", "results", "directives.json"))
    ap.add_argument("--plot", default=os.path.join(ROOT, "docs", "img", "directives.svg"))
    args = ap.parse_args()
    repeats = max(7, args.repeats)
    exe = os.path.join(args.build, "bench", "bench_app_tessera")
    env = thread_env()
    raw = {k: {"auto": [], "directives": []} for k, _, _ in KERNELS}
    for rep in range(repeats):
        for kernel, sizes, runs in KERNELS:
            for variant in ("auto", "directives"):
                print(f"[{rep + 1}/{repeats}] {kernel} {variant}", file=sys.stderr, flush=True)
                flags = ["--directives"] if variant == "directives" else []
                # (A mismatch exits nonzero, and run_json raises.)
                check = "check" if rep == 0 else "nocheck"
                raw[kernel][variant].append(run_json([exe, kernel, str(runs), check] + flags + sizes, env))

    med = statistics.median
    results = {}
    for kernel, sizes, runs in KERNELS:
        row = {"sizes": [int(s) for s in sizes]}
        for variant in ("auto", "directives"):
            procs = raw[kernel][variant]
            row[variant + "_ms"] = med([med(p["run_ms"][1:]) for p in procs])  # the first run warms caches
            row[variant + "_compile_ms"] = med([p["compile"]["total_ms"] for p in procs])
        row["auto_over_directives"] = row["auto_ms"] / row["directives_ms"]
        results[kernel] = row
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"results": results, "repeats": repeats, "threads": 2, "raw": raw}, f, indent=1)

    print("| kernel | size | automatic | directives | automatic ÷ directives | compile auto / directives |")
    print("|---|---|---|---|---|---|")
    for kernel, row in results.items():
        print(f"| {kernel} | {'×'.join(map(str, row['sizes']))} | {row['auto_ms']:.3g} ms | {row['directives_ms']:.3g} ms | "
              f"{row['auto_over_directives']:.2f}× | {row['auto_compile_ms']:.0f} / {row['directives_compile_ms']:.0f} ms |")
    if args.plot:
        bar_chart(args.plot, list(results), [r["auto_over_directives"] for r in results.values()],
                  title="directive-written schedule: automatic ÷ directives run time (≥ 1: as fast)", reference=1.0, unit="×")
        print(f"\nplot: {os.path.relpath(args.plot, ROOT)}")


if __name__ == "__main__":
    main()
