#!/usr/bin/env python3
"""The GPU emulator's performance model (docs/gpu.md) of blur_x_blur_y, harris and
unsharp_mask compiled for Target::cuda(80): global traffic over the minimum (each input byte
read once, each output byte written once), coalescing, shared memory per block, bank conflicts,
barriers and kernels. Each app runs once in the emulator (bench/gpu_model.cpp) and is checked
against its plain loops. No GPU is needed: this is the model, not a GPU timing.

JSON to bench/results/gpu_model.json and a Markdown table to stdout.

    python3 bench/run_gpu_model.py [--build build] [--blur 4096 4096] [--harris 1024 1024]
        [--unsharp 1024 1024]
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--blur", type=int, nargs=2, default=[4096, 4096])
    ap.add_argument("--harris", type=int, nargs=2, default=[1024, 1024])
    ap.add_argument("--unsharp", type=int, nargs=2, default=[1024, 1024])
    args = ap.parse_args()
    exe = os.path.join(args.build, "bench", "bench_gpu_model")
    if not os.path.exists(exe):
        sys.exit(f"{exe} is missing: build first (./scripts/build.sh)")
    results = []
    for app, sizes in [("blur_x_blur_y", args.blur), ("harris", args.harris), ("unsharp_mask", args.unsharp)]:
        out = subprocess.run([exe, app] + [str(s) for s in sizes], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"{app}: {out.stderr or out.stdout}")
        r = json.loads(out.stdout)
        k = r["kernels"]
        moved = sum(x["global_load_bytes"] + x["global_store_bytes"] for x in k)
        requested = sum(x["requested_bytes"] for x in k)
        transferred = sum(x["transferred_bytes"] for x in k)
        r["summary"] = {
            "kernels": len(k),
            "global_bytes": moved,
            "traffic_over_minimum": moved / r["minimum_bytes"],
            "coalescing": requested / transferred if transferred else 1.0,
            "shared_bytes_per_block": max(x["shared_bytes"] for x in k),
            "bank_conflicts": sum(x["bank_conflicts"] for x in k),
            "barriers_per_block": sum(x["barriers"] for x in k) / max(1, sum(x["blocks"] for x in k)),
        }
        results.append(r)
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "gpu_model.json"), "w") as f:
        json.dump(results, f, indent=1)
    print("| app | size | kernels | global traffic / minimum | coalescing | shared / block | bank conflicts | barriers / block | checked |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        s = r["summary"]
        size = " x ".join(str(v) for v in r["sizes"])
        print(f"| {r['app']} | {size} | {s['kernels']} | {s['traffic_over_minimum']:.3f} | {100 * s['coalescing']:.1f}% | "
              f"{s['shared_bytes_per_block'] / 1024:.1f} KiB | {s['bank_conflicts']} | {s['barriers_per_block']:.1f} | "
              f"{'yes' if r['correct'] else 'NO'} |")


if __name__ == "__main__":
    main()
