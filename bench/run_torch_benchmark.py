#!/usr/bin/env python3
"""The PyTorch frontend against torch's own backends, CPU, 2 threads, float32, inference.

Models (each written as a torch user would):
  conv_bias_relu   relu(conv2d(x, w, b, padding=1)), x 1×64×56×56, w 64×64×3×3
  blur             the seed's blur_x_blur_y in torch (slices, adds, /3), 3×4096×4096
  mlp              Linear 512→1024, ReLU, Linear 1024→1024, ReLU, Linear 1024→10; batch 128
  transformer      nn.TransformerEncoderLayer(256, 8, 1024, batch_first) in eval; 8×128 tokens
  resnet_block     ResNet basic block (conv-bn-relu, conv-bn, +x, relu), 64 channels, 1×64×56×56

Variants, interleaved in one process, each call timed on its own (medians of --runs calls):
  eager            torch eager
  inductor         torch.compile (Inductor, default mode)
  tessera          torch.compile(backend="tessera")
The first call of each compiled variant is reported as its compile time (it includes one run).
Every variant's output is checked against eager. Writes bench/results/torch_frontend.json, a
Markdown table to stdout, and an SVG plot (--plot, default docs/img/torch_frontend.svg).

    build/python-venv/bin/python bench/run_torch_benchmark.py [--runs 9] [--models mlp blur ...]
"""
import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "2")
THREADS = int(os.environ["OMP_NUM_THREADS"])

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from svg_plot import bar_chart  # noqa: E402


class BasicBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(y)) + x)


def blur_x_blur_y(img):
    bx = (img[..., :-2] + img[..., 1:-1] + img[..., 2:]) / 3
    return (bx[..., :-2, :] + bx[..., 1:-1, :] + bx[..., 2:, :]) / 3


def conv_bias_relu(x, w, b):
    return torch.relu(F.conv2d(x, w, b, padding=1))


def models():
    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    block = BasicBlock(64).eval()
    for m in block.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(64, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(64, generator=g) + 0.5)
    mlp = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)).eval()
    layer = nn.TransformerEncoderLayer(256, 8, 1024, dropout=0.0, batch_first=True).eval()
    return {
        "conv_bias_relu": (conv_bias_relu, (torch.randn(1, 64, 56, 56, generator=g),
                                            torch.randn(64, 64, 3, 3, generator=g) * 0.05, torch.randn(64, generator=g))),
        "blur": (blur_x_blur_y, (torch.rand(3, 4096, 4096, generator=g),)),
        "mlp": (mlp, (torch.randn(128, 512, generator=g),)),
        "transformer": (layer, (torch.randn(8, 128, 256, generator=g),)),
        "resnet_block": (block, (torch.randn(1, 64, 56, 56, generator=g),)),
    }


def timed(fn, args):
    start = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - start, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9, help="timed calls per variant (at least 7)")
    ap.add_argument("--models", nargs="+", default=list(models()))
    ap.add_argument("--json", default=os.path.join(ROOT, "bench", "results", "torch_frontend.json"))
    ap.add_argument("--plot", default=os.path.join(ROOT, "docs", "img", "torch_frontend.svg"))
    args = ap.parse_args()
    runs = max(7, args.runs)
    torch.set_num_threads(THREADS)
    import tessera  # noqa: F401  (the backend is found through its entry point; imported for the version)

    results = []
    all_models = models()
    for name in args.models:
        fn, inputs = all_models[name]
        variants = {"eager": fn, "inductor": torch.compile(fn), "tessera": torch.compile(fn, backend="tessera")}
        row = {"model": name, "threads": THREADS, "runs": runs, "compile_s": {}, "median_ms": {}, "max_abs_err": {}}
        with torch.no_grad():
            reference = fn(*inputs)
            for v, f in variants.items():
                print(f"[{name}] first call of {v}", file=sys.stderr, flush=True)
                seconds, out = timed(f, inputs)
                row["compile_s"][v] = seconds
                row["max_abs_err"][v] = float((out - reference).abs().max())
            times = {v: [] for v in variants}
            for r in range(runs):
                print(f"[{name}] run {r + 1}/{runs}", file=sys.stderr, flush=True)
                for v, f in variants.items():
                    times[v].append(timed(f, inputs)[0])
        row["median_ms"] = {v: statistics.median(t) * 1e3 for v, t in times.items()}
        row["all_ms"] = {v: [x * 1e3 for x in t] for v, t in times.items()}
        best = min(row["median_ms"]["eager"], row["median_ms"]["inductor"])
        row["speedup_over_best_torch"] = best / row["median_ms"]["tessera"]
        results.append(row)
        torch._dynamo.reset()

    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"torch": torch.__version__, "threads": THREADS, "results": results}, f, indent=1)
    print("| model | eager | Inductor | Tessera | Tessera / best torch | compile: Inductor | compile: Tessera | "
          "max abs error vs eager (Inductor, Tessera) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        m, c, e = r["median_ms"], r["compile_s"], r["max_abs_err"]
        print(f"| {r['model']} | {m['eager']:.2f} ms | {m['inductor']:.2f} ms | {m['tessera']:.2f} ms | "
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
