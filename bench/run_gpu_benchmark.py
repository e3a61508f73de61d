#!/usr/bin/env python3
"""blur_x_blur_y, 3 x W x H float32, on a real NVIDIA GPU: Tessera (Target::cuda(sm), through the
CUDA driver) against a device-to-device copy of the same bytes, torch eager and torch.compile
(when torch with CUDA is installed). Medians of --runs calls. On a machine without a GPU (no
libcuda.so.1, or no device) it prints "no GPU" and exits 0.

The copy is also timed as Tessera is, by the host's clock around the call and a synchronization
(which counts the launch and the wait). Tessera is timed twice: with its buffers resident on the GPU (as torch's variants and the copy
keep their tensors there), and with each call followed by copying the output to the host. JSON
to --output (default bench/results/gpu_blur.json) and a table to stdout.

    python3 bench/run_gpu_benchmark.py [--build build] [--size 4096 4096] [--runs 20] [--output FILE]
"""
import argparse
import ctypes
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def gpu_compute_capability():
    """The compute capability of device 0 times 10, or None without a usable GPU."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    if cuda.cuInit(0) != 0:
        return None
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return None
    major, minor = ctypes.c_int(0), ctypes.c_int(0)
    # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75, _MINOR = 76
    cuda.cuDeviceGetAttribute(ctypes.byref(major), 75, 0)
    cuda.cuDeviceGetAttribute(ctypes.byref(minor), 76, 0)
    return major.value * 10 + minor.value


def torch_variants(width, height, runs):
    """Copy, torch eager and torch.compile timings in ms, when torch sees a GPU."""
    try:
        import torch
    except ImportError:
        return {}
    if not torch.cuda.is_available():
        return {}
    x = torch.rand(3, height, width, device="cuda")
    k = torch.tensor([1.0, 4.0, 6.0, 4.0, 1.0], device="cuda") / 16.0

    def blur(t):
        bx = sum(k[i] * t[:, :, i:width - 4 + i] for i in range(5))
        return sum(k[i] * bx[:, i:height - 4 + i, :] for i in range(5))

    def timed(f):
        f()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        ms = []
        for _ in range(runs):
            start.record()
            f()
            end.record()
            torch.cuda.synchronize()
            ms.append(start.elapsed_time(end))
        return sorted(ms)[len(ms) // 2]

    def host_timed(f):
        # As Tessera's calls are timed: the host's clock around the call and a synchronization,
        # so that the launch and the wait count as they do for Tessera.
        f()
        torch.cuda.synchronize()
        ms = []
        for _ in range(runs):
            t0 = time.perf_counter()
            f()
            torch.cuda.synchronize()
            ms.append((time.perf_counter() - t0) * 1e3)
        return sorted(ms)[len(ms) // 2]

    out = {"device-to-device copy (torch)": timed(lambda: x.clone()),
           "device-to-device copy (torch), host clock and synchronization": host_timed(lambda: x.clone()),
           "torch eager": timed(lambda: blur(x))}
    try:
        compiled = torch.compile(blur)
        out["torch.compile"] = timed(lambda: compiled(x))
    except Exception as e:  # Inductor needs triton; report rather than fail
        print(f"torch.compile: {e}", file=sys.stderr)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--size", type=int, nargs=2, default=[4096, 4096])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--output", default=os.path.join(ROOT, "bench", "results", "gpu_blur.json"))
    args = ap.parse_args()
    sm = gpu_compute_capability()
    if sm is None:
        print("no GPU")
        return 0
    exe = os.path.join(args.build, "bench", "bench_gpu_blur")
    out = subprocess.run([exe, str(sm)] + [str(s) for s in args.size] + [str(args.runs)], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(out.stderr or out.stdout)
    tessera_rows = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    tessera = tessera_rows[0]
    results = {row["variant"]: row["median_ms"] for row in tessera_rows}
    results.update(torch_variants(args.size[0], args.size[1], args.runs))
    bytes_moved = tessera["minimum_bytes"]
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        json.dump({"sm": sm, "size": args.size, "minimum_bytes": bytes_moved, "median_ms": results,
                   "tessera_correct": all(row["correct"] for row in tessera_rows)}, f, indent=1)
    print(f"| variant (sm_{sm}) | median ms | GB/s over the minimum bytes |")
    print("|---|---|---|")
    for name, ms in results.items():
        print(f"| {name} | {ms:.3f} | {bytes_moved / ms / 1e6:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
