#!/usr/bin/env python3
"""The GPU emulator's performance model (docs/gpu.md) of blur_x_blur_y, harris and
unsharp_mask compiled for Target::cuda(80) (blur in column windows, the default, and through
shared memory, CompileOptions::gpu_column_windows false), and harris and unsharp_mask again with
Target::with_shared_memory_opt_in() (blocks of up to 163 KiB of shared memory), and blur_x_blur_y
with its input staged in shared memory and its warps aligned (--staged: the configuration the model
favours and an H200 did not, docs/gpu.md): global traffic over the minimum (each input byte
read once, each output byte written once), coalescing, shared memory per block, bank conflicts,
barriers and kernels, and the occupancy on an A100 (sm_80) from the registers ptxas reports (when
a CUDA toolkit is present). Each app runs once in the emulator (bench/gpu_model.cpp) and is
checked against its plain loops. No GPU is needed: this is the model, not a GPU timing.

JSON to bench/results/gpu_model.json and a Markdown table to stdout.

    python3 bench/run_gpu_model.py [--build build] [--blur 4096 4096] [--harris 1024 1024]
        [--unsharp 1024 1024]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# sm_80 (A100): per streaming multiprocessor.
SM80 = {"registers": 65536, "threads": 2048, "blocks": 32, "shared": 164 * 1024, "register_unit": 256}


def find_ptxas():
    for home in [os.environ.get("CUDA_HOME"), "/usr/local/cuda"]:
        if home and os.path.exists(os.path.join(home, "bin", "ptxas")):
            return os.path.join(home, "bin", "ptxas")
    return shutil.which("ptxas")


def ptxas_registers(ptxas, ptx_path):
    """Registers and spill bytes per kernel, from ptxas -v for sm_80."""
    out = subprocess.run([ptxas, "-arch=sm_80", "-v", ptx_path, "-o", os.devnull], capture_output=True, text=True)
    regs = [int(x) for x in re.findall(r"Used (\d+) registers", out.stderr)]
    spills = [int(x) for x in re.findall(r"(\d+) bytes spill stores", out.stderr)]
    return regs, spills


def occupancy(registers, threads, shared):
    """Resident threads over the SM's maximum, limited by registers, threads, blocks and shared memory."""
    per_warp = -(-registers * 32 // SM80["register_unit"]) * SM80["register_unit"]
    warps = -(-threads // 32)
    by_registers = SM80["registers"] // (per_warp * warps) if registers else SM80["blocks"]
    by_shared = SM80["shared"] // shared if shared else SM80["blocks"]
    blocks = min(by_registers, SM80["threads"] // threads, SM80["blocks"], by_shared)
    return blocks * threads / SM80["threads"]


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
    ptxas = find_ptxas()
    tmp = tempfile.mkdtemp()
    runs = [("blur_x_blur_y", args.blur, []), ("blur_x_blur_y", args.blur, ["--no-column-windows"]),
            ("blur_x_blur_y", args.blur, ["--no-column-windows", "--staged"]), ("harris", args.harris, []),
            ("unsharp_mask", args.unsharp, []), ("harris", args.harris, ["--shared-opt-in"]),
            ("unsharp_mask", args.unsharp, ["--shared-opt-in"])]
    for app, sizes, flags in runs:
        ptx_path = os.path.join(tmp, app + "".join(f.replace("-", ".") for f in flags) + ".ptx")
        env = dict(os.environ, TESSERA_PTX_OUT=ptx_path)
        out = subprocess.run([exe] + flags + [app] + [str(s) for s in sizes], capture_output=True, text=True, env=env)
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
        if ptxas:
            regs, spills = ptxas_registers(ptxas, ptx_path)
            r["summary"]["registers"] = regs
            r["summary"]["spill_bytes"] = spills
            if len(regs) == len(k):
                r["summary"]["occupancy_sm80"] = min(occupancy(g, x["threads_per_block"], x["shared_bytes"]) for g, x in zip(regs, k))
        results.append(r)
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", "gpu_model.json"), "w") as f:
        json.dump(results, f, indent=1)
    print("| app | size | kernels | global traffic / minimum | coalescing | shared / block | bank conflicts | barriers / block | registers (spills) | occupancy sm_80 | checked |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        s = r["summary"]
        size = " x ".join(str(v) for v in r["sizes"])
        regs = ", ".join(str(x) for x in s.get("registers", [])) or "-"
        spills = ", ".join(str(x) for x in s.get("spill_bytes", [])) or "-"
        occ = f"{100 * s['occupancy_sm80']:.0f}%" if "occupancy_sm80" in s else "-"
        name = r["app"] + (" (shared opt-in)" if r.get("shared_opt_in") else "") + (" (staged, aligned)" if r.get("staged") else "")
        if r["app"] == "blur_x_blur_y":
            name += " (column windows)" if r.get("column_windows") else " (shared memory)"
        print(f"| {name} | {size} | {s['kernels']} | {s['traffic_over_minimum']:.3f} | {100 * s['coalescing']:.1f}% | "
              f"{s['shared_bytes_per_block'] / 1024:.1f} KiB | {s['bank_conflicts']} | {s['barriers_per_block']:.1f} | "
              f"{regs} ({spills}) | {occ} | {'yes' if r['correct'] else 'NO'} |")

if __name__ == "__main__":
    main()
