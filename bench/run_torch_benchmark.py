#!/usr/bin/env python3
"""The PyTorch frontend against torch's own backends, CPU, 2 threads, float32, inference.

Models (each written as a torch user would):
  conv_bias_relu   relu(conv2d(x, w, b, padding=1)), x 1×64×56×56, w 64×64×3×3
  blur             the seed's blur_x_blur_y in torch (slices, adds, /3), 3×4096×4096
  mlp              Linear 512→1024, ReLU, Linear 1024→1024, ReLU, Linear 1024→10; batch 128
  transformer      nn.TransformerEncoderLayer(256, 8, 1024, batch_first) in eval; 8×128 tokens
  resnet_block     ResNet basic block (conv-bn-relu, conv-bn, +x, relu), 64 channels, 1×64×56×56
  small_call       x * 2 + 1 on 4 elements: the overhead of a call (each timed run is the mean of
                   2000 calls)

Variants, each in its own process (two OpenMP runtimes in one process, torch's and Tessera's,
slow each other down while their idle threads spin), processes interleaved --repeats times:
  eager            torch eager
  inductor         torch.compile (Inductor, default mode)
  tessera          torch.compile(backend="tessera")
Each process times --runs calls after a first call; medians pool all runs of a variant. The
first call of a compiled variant is its compile time (median over processes; it includes one
run). Every variant's output is checked against eager. Writes bench/results/torch_frontend.json,
a Markdown table to stdout, and an SVG plot (--plot, default docs/img/torch_frontend.svg); a run
of some models only writes build/bench/torch_frontend_partial.json and no plot, unless --json
or --plot name files.

    build/python-venv/bin/python bench/run_torch_benchmark.py [--runs 7] [--repeats 3] [--models mlp blur ...]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "2")
# Compile times here are those of compiling: the persistent compile cache is off.
os.environ["TESSERA_CACHE"] = "0"
THREADS = int(os.environ["OMP_NUM_THREADS"])

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "frontends", "python", "tests", "torch"))
from svg_plot import bar_chart  # noqa: E402
from torch_models import BasicBlock, blur_x_blur_y  # noqa: E402  (the models the tests check)


def conv_bias_relu(x, w, b):
    return torch.relu(F.conv2d(x, w, b, padding=1))


def resnet_block(g):
    block = BasicBlock(64).eval()
    for m in block.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(64, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(64, generator=g) + 0.5)
    return block, (torch.randn(1, 64, 56, 56, generator=g),)


# Each model with its inputs, built only by the worker process that runs it.
MODELS = {
    "conv_bias_relu": lambda g: (conv_bias_relu, (torch.randn(1, 64, 56, 56, generator=g),
                                                  torch.randn(64, 64, 3, 3, generator=g) * 0.05,
                                                  torch.randn(64, generator=g))),
    "blur": lambda g: (blur_x_blur_y, (torch.rand(3, 4096, 4096, generator=g),)),
    "mlp": lambda g: (nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                                    nn.Linear(1024, 10)).eval(), (torch.randn(128, 512, generator=g),)),
    "transformer": lambda g: (nn.TransformerEncoderLayer(256, 8, 1024, dropout=0.0, batch_first=True).eval(),
                              (torch.randn(8, 128, 256, generator=g),)),
    "resnet_block": resnet_block,
    "small_call": lambda g: (small_call, (torch.randn(4, generator=g),)),
}
CALLS_PER_RUN = {"small_call": 2000}


def small_call(x):
    return x * 2 + 1


def build(name):
    torch.manual_seed(0)
    return MODELS[name](torch.Generator().manual_seed(0))


def timed(fn, args, calls=1):
    """The mean time of `calls` calls of fn(*args), and the output of the last."""
    start = time.perf_counter()
    for _ in range(calls):
        out = fn(*args)
    return (time.perf_counter() - start) / calls, out


def worker(name, variant, runs):
    """One process: compiles one model one way, times it, and prints JSON."""
    torch.set_num_threads(THREADS)
    fn, inputs = build(name)
    if variant == "inductor":
        f = torch.compile(fn)
    elif variant == "tessera":
        f = torch.compile(fn, backend="tessera")
    else:
        f = fn
    with torch.no_grad():
        reference = fn(*inputs)
        first, out = timed(f, inputs)
        err = float((out - reference).abs().max())
        times = [timed(f, inputs, CALLS_PER_RUN.get(name, 1))[0] for _ in range(runs)]
    print(json.dumps({"first_s": first, "ms": [t * 1e3 for t in times], "max_abs_err": err}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7, help="timed calls per process (at least 7)")
    ap.add_argument("--repeats", type=int, default=3, help="processes per variant, interleaved")
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--json", default=None,
                    help="the JSON's file (default: bench/results/torch_frontend.json when every model runs, else "
                         "build/bench/torch_frontend_partial.json)")
    ap.add_argument("--plot", default=None,
                    help="the plot's file (default: docs/img/torch_frontend.svg when every model runs, else none)")
    ap.add_argument("--worker", nargs=2, metavar=("MODEL", "VARIANT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    # A run of some models only does not replace the documented results of the whole suite.
    every_model = set(args.models) == set(MODELS)
    if args.json is None:
        args.json = (os.path.join(ROOT, "bench", "results", "torch_frontend.json") if every_model else
                     os.path.join(ROOT, "build", "bench", "torch_frontend_partial.json"))
    if args.plot is None and every_model:
        args.plot = os.path.join(ROOT, "docs", "img", "torch_frontend.svg")
    runs = max(7, args.runs)
    if args.worker:
        worker(args.worker[0], args.worker[1], runs)
        return
    variants = ["eager", "inductor", "tessera"]
    raw = {(m, v): [] for m in args.models for v in variants}
    for rep in range(args.repeats):
        for m in args.models:
            for v in variants:
                print(f"[{rep + 1}/{args.repeats}] {m}: {v}", file=sys.stderr, flush=True)
                r = subprocess.run([sys.executable, os.path.abspath(__file__), "--runs", str(runs), "--worker", m, v],
                                   capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS=str(THREADS)))
                if r.returncode != 0:
                    sys.exit(f"{m} {v} failed:\n{r.stderr[-3000:]}")
                raw[(m, v)].append(json.loads(r.stdout.strip().splitlines()[-1]))
    results = []
    for m in args.models:
        row = {"model": m, "threads": THREADS, "runs": runs, "repeats": args.repeats}
        row["median_ms"] = {v: statistics.median([t for p in raw[(m, v)] for t in p["ms"]]) for v in variants}
        row["compile_s"] = {v: statistics.median([p["first_s"] for p in raw[(m, v)]]) for v in variants}
        row["max_abs_err"] = {v: max(p["max_abs_err"] for p in raw[(m, v)]) for v in variants}
        row["all_ms"] = {v: [p["ms"] for p in raw[(m, v)]] for v in variants}
        best = min(row["median_ms"]["eager"], row["median_ms"]["inductor"])
        row["speedup_over_best_torch"] = best / row["median_ms"]["tessera"]
        results.append(row)

    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"torch": torch.__version__, "threads": THREADS, "results": results}, f, indent=1)
    print("| model | eager | Inductor | Tessera | Tessera / best torch | compile: Inductor | compile: Tessera | "
          "max abs error vs eager (Inductor, Tessera) |")
    print("|---|---|---|---|---|---|---|---|")
    def shown(ms):
        return f"{ms * 1e3:.1f} µs" if ms < 0.1 else f"{ms:.2f} ms"

    for r in results:
        m, c, e = r["median_ms"], r["compile_s"], r["max_abs_err"]
        print(f"| {r['model']} | {shown(m['eager'])} | {shown(m['inductor'])} | {shown(m['tessera'])} | "
              f"{r['speedup_over_best_torch']:.2f}× | {c['inductor']:.1f} s | {c['tessera']:.2f} s | "
              f"{e['inductor']:.1e}, {e['tessera']:.1e} |")
    if args.plot:
        speedups = [r["speedup_over_best_torch"] for r in results]
        geomean = statistics.geometric_mean(speedups)
        bar_chart(args.plot, [r["model"] for r in results] + ["geomean"], speedups + [geomean],
                  title=f"Tessera over the best of torch eager and Inductor (CPU, {THREADS} threads)",
                  reference=1.0, unit="×")
        print(f"\nplot: {os.path.relpath(args.plot, ROOT)}; geomean {geomean:.2f}×")


if __name__ == "__main__":
    main()
