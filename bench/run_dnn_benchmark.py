#!/usr/bin/env python3
"""The DNN-layer benchmark: the apps conv2d (3x3 convolution, padding 1, then bias and ReLU;
NCHW float) and batched_matmul (C_b = A_b B_b, float) at the sizes of a ResNet layer and of a
transformer's projection (apps/src/dnn_layers.cpp).

Variants, each in its own process, interleaved `--repeats` times, 2 threads each:
  (a) gcc -O3 -march=native -fopenmp       plain loops (bench/dnn_baselines.c), the apps' order
  (b) clang-19 -O3 -march=native -fopenmp  the same loops
  (c) OpenBLAS                             conv2d as im2col + one sgemm; batched_matmul as one
                                           sgemm per batch (when libopenblas-dev is installed)
  (d) Tessera                              the app, automatic schedule (bench/app_tessera.cpp)

oneDNN is not packaged for this set-up and torch is not installed by it, so OpenBLAS stands for
the vendor libraries. The C loops use -ffp-contract=off, as Tessera without fast_math. Tessera's
output is checked exactly against the app's plain loops (first process); the C variants'
checksums must agree with each other (OpenBLAS within 1e-3, it sums in another order). Medians
over all runs; JSON to bench/results/dnn.json and a Markdown table to stdout.

    python3 bench/run_dnn_benchmark.py [--build build] [--runs 5] [--repeats 3]
        [--conv W H CI CO [W H CI CO ...]] [--bmm BATCH M N K] [--kernels conv2d batched_matmul]

The convolutions default to ResNet's stages at batch 1: 56 x 56 x 64 -> 64, 28 x 28 x 128 -> 128
and 14 x 14 x 256 -> 256 (rows of 28 and 14 columns: no multiple of a vector register).
"""
import argparse
import json
import os
import subprocess
import sys

from kernel_bench import THREADS, openblas_available, print_table, thread_env, time_variants

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build_baselines(out_dir, kernel, sizes):
    src = os.path.join(ROOT, "bench", "dnn_baselines.c")
    if kernel == "conv2d":
        names = ["W", "H", "CI", "CO"]
        defs = ["-DCONV2D"]
    else:
        names = ["BATCH", "M", "N", "K"]
        defs = ["-DBMM"]
    defs += [f"-DSIZE_{n}={v}" for n, v in zip(names, sizes)]
    common = ["-O3", "-march=native", "-ffp-contract=off"] + defs
    variants = {
        "gcc -O3 + OpenMP": (["gcc"] + common + ["-fopenmp"], []),
        "clang-19 -O3 + OpenMP": (["clang-19"] + common + ["-fopenmp"], []),
    }
    if openblas_available():
        variants["OpenBLAS " + ("im2col + sgemm" if kernel == "conv2d" else "sgemm per batch")] = (
            ["gcc"] + common + ["-DUSE_OPENBLAS"], ["-lopenblas"])
    exes = {}
    for name, (cmd, libs) in variants.items():
        exe = os.path.join(out_dir, f"dnn_{kernel}_" + "".join(c if c.isalnum() else "_" for c in name))
        r = subprocess.run(cmd + [src, "-o", exe] + libs, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"skipping {name}: {r.stderr.strip()[:200]}", file=sys.stderr)
            continue
        exes[name] = exe
    return exes


def flops_of(kernel, sizes):
    if kernel == "conv2d":
        w, h, ci, co = sizes
        return 2.0 * w * h * co * ci * 9
    batch, m, n, k = sizes
    return 2.0 * batch * m * n * k


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--conv", nargs="+", type=int, default=[56, 56, 64, 64, 28, 28, 128, 128, 14, 14, 256, 256],
                    help="W H CI CO, one convolution per four numbers")
    ap.add_argument("--bmm", nargs=4, type=int, default=[8, 512, 768, 768], metavar=("BATCH", "M", "N", "K"))
    ap.add_argument("--runs", type=int, default=5, help="timed runs per process (at least 5)")
    ap.add_argument("--repeats", type=int, default=3, help="processes per variant; medians pool all runs")
    ap.add_argument("--kernels", nargs="+", default=["conv2d", "batched_matmul"], choices=["conv2d", "batched_matmul"])
    args = ap.parse_args()
    runs = max(5, args.runs)
    out_dir = os.path.join(args.build, "bench")
    tessera = os.path.join(out_dir, "bench_app_tessera")
    env = thread_env()
    results = {"threads": int(THREADS), "runs": runs, "repeats": args.repeats, "kernels": {}}
    if len(args.conv) % 4 != 0:
        ap.error("--conv takes W H CI CO, four numbers per convolution")
    problems = []
    for kernel in args.kernels:
        if kernel == "conv2d":
            problems += [(kernel, args.conv[i:i + 4]) for i in range(0, len(args.conv), 4)]
        else:
            problems.append((kernel, args.bmm))
    for kernel, sizes in problems:
        exes = build_baselines(out_dir, kernel, sizes)
        medians, compile_ms = time_variants(
            kernel, exes, lambda check: [tessera, kernel, str(runs), check] + [str(s) for s in sizes], runs, args.repeats, env)
        title = f"{kernel} {' x '.join(str(s) for s in sizes)} float"
        rows = print_table(title, medians, flops_of(kernel, sizes), compile_ms)
        key = kernel if kernel not in results["kernels"] else f"{kernel} {'x'.join(str(s) for s in sizes)}"
        results["kernels"][key] = {"sizes": sizes, "rows": rows, "tessera_compile_ms": compile_ms}
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "dnn.json"), "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
