#!/usr/bin/env python3
"""The matmul benchmark: float C = A B (matmul) and C = beta C + alpha A B (gemm), and the same
gemm in double precision (dgemm: Tessera's PolyBench app pb_gemm), M x N x K.

Variants, each in its own process, interleaved `--repeats` times:
  (a) gcc -O3 -march=native         PolyBench-style loops (i, k, j), one thread
  (b) clang-19 -O3 -march=native    the same loops, one thread
  (c) clang-19 + Polly              -mllvm -polly -mllvm -polly-parallel -fopenmp, 2 threads
  (d) OpenBLAS sgemm / dgemm        when libopenblas-dev is installed, 2 threads
  (e) Tessera                       the matmul / gemm / pb_gemm apps, automatic schedule, 2 threads
  (f) Tessera, fast_math            the same with CompileOptions::fast_math: fused multiply-add
                                    (and reassociation), as OpenBLAS's kernels use; checked within
                                    a relative error of 1e-4

The C loops use static arrays with compile-time sizes (as PolyBench does, so that Polly sees
constant bounds), -ffp-contract=off as Tessera without fast_math. Tessera's output is checked
exactly against the app's plain loops; the C variants' checksums must agree with each other
(OpenBLAS within 1e-3, it sums in another order). Medians over all runs; the JSON goes to
bench/results/matmul.json and a Markdown table to stdout.

    python3 bench/run_matmul_benchmark.py [--build build] [--size 2048 2048 2048] [--runs 5] [--repeats 3]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

from kernel_bench import THREADS, openblas_available, print_table, thread_env, time_variants

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build_baselines(out_dir, kernel, size):
    src = os.path.join(ROOT, "bench", "matmul_baselines.c")
    M, N, K = size
    defs = [f"-DSIZE_M={M}", f"-DSIZE_N={N}", f"-DSIZE_K={K}"] + (["-DGEMM"] if kernel != "matmul" else [])
    defs += ["-DDOUBLE"] if kernel == "dgemm" else []
    common = ["-O3", "-march=native", "-ffp-contract=off"] + defs
    variants = {
        "gcc -O3": (["gcc"] + common, []),
        "clang-19 -O3": (["clang-19"] + common, []),
        "clang-19 + Polly (2 threads)": (
            ["clang-19"] + common + ["-fopenmp", "-mllvm", "-polly", "-mllvm", "-polly-parallel", "-mllvm",
                                     "-polly-vectorizer=stripmine"], []),
    }
    if openblas_available() and shutil.which("gcc"):
        blas = "dgemm" if kernel == "dgemm" else "sgemm"
        variants[f"OpenBLAS {blas} (2 threads)"] = (["gcc"] + common + ["-DUSE_OPENBLAS"], ["-lopenblas"])
    exes = {}
    for name, (cmd, libs) in variants.items():
        exe = os.path.join(out_dir, f"matmul_{kernel}_" + "".join(c if c.isalnum() else "_" for c in name))
        r = subprocess.run(cmd + [src, "-o", exe] + libs, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"skipping {name}: {r.stderr.strip()[:200]}", file=sys.stderr)
            continue
        exes[name] = exe
    return exes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--size", nargs=3, type=int, default=[2048, 2048, 2048], metavar=("M", "N", "K"))
    ap.add_argument("--runs", type=int, default=5, help="timed runs per process (at least 5)")
    ap.add_argument("--repeats", type=int, default=3, help="processes per variant; medians pool all runs")
    ap.add_argument("--kernels", nargs="+", default=["matmul", "gemm", "dgemm"], choices=["matmul", "gemm", "dgemm"])
    args = ap.parse_args()
    runs = max(5, args.runs)
    M, N, K = args.size
    flops = 2.0 * M * N * K
    out_dir = os.path.join(args.build, "bench")
    tessera = os.path.join(out_dir, "bench_app_tessera")
    env = thread_env()
    results = {"size": [M, N, K], "threads": int(THREADS), "runs": runs, "repeats": args.repeats, "kernels": {}}
    for kernel in args.kernels:
        exes = build_baselines(out_dir, kernel, (M, N, K))
        app = "pb_gemm" if kernel == "dgemm" else kernel
        sizes = [str(M), str(N), str(K)]
        fast_math = {"Tessera, fast_math (FMA)": lambda check: [tessera, app, str(runs), check, "--fast-math"] + sizes}
        medians, compile_ms = time_variants(
            kernel, exes, lambda check: [tessera, app, str(runs), check] + sizes, runs, args.repeats, env, fast_math)
        best_loops = min(v for k, v in medians.items() if not k.startswith(("Tessera", "OpenBLAS")))
        title = f"{kernel} {M} x {N} x {K} {'double' if kernel == 'dgemm' else 'float'}"
        rows = print_table(title, medians, flops, compile_ms)
        results["kernels"][kernel] = {"rows": rows, "best_compiled_loops_ms": best_loops,
                                      "tessera_compile_ms": compile_ms}
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "matmul.json"), "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
