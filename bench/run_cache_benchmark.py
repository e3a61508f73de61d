#!/usr/bin/env python3
"""The compile cache's latency against issue 11's goals, each figure the median over new processes
(bench/cache_latency.cpp does the timing; variants interleaved in one run):

  hit, new process     compile() of blur with the entry on disk, in a process that compiled nothing
                       before (first touches of the loader): goal 0.2 ms
  hit, warm process    the same for a second Pipeline in that process (loader warm): the cost a hit
                       adds once the process is running
  set-up, by step      one-time costs a process may pay before its hit: LLVM's host CPU query, cache
                       sizes, the JIT's TargetMachine (compiles only: a hit makes none)
  cold compile         blur and harris with the cache off, by phase: goals 100 and 150 ms
  run() overhead       a one-element pipeline's run() from C++ (goal 2 µs) and from Python (10 µs)

    python3 bench/run_cache_benchmark.py [--build build] [--repeats 9]

Writes bench/results/cache_latency.json, prints a Markdown table, and plots goal ÷ measured
(above 1: the goal is met) to docs/img/cache_latency.svg.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from svg_plot import bar_chart

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PYTHON_WORKER = r"""
import json, time, numpy as np, tessera as ts
x = ts.Var("x")
inp = ts.InputBuffer(ts.float32, 1, "in")
f = ts.Func("f")
f[x] = inp[x] + 1.0
c = ts.compile(f, cache=False)
a = np.ones(1, np.float32)
out = np.zeros(1, np.float32)
values = {inp: a}
per_call = []
for batch in range(15):
    t0 = time.perf_counter()
    for i in range(5000):
        c.run(values, [out])
    per_call.append((time.perf_counter() - t0) / 5000 * 1e6)
assert out[0] == 2.0, out
print(json.dumps({"run_us": sorted(per_call)[len(per_call) // 2]}))
"""


def run_json(cmd, env):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeats", type=int, default=9, help="processes per measurement (at least 7)")
    ap.add_argument("--json", default=os.path.join(ROOT, "bench", "results", "cache_latency.json"))
    ap.add_argument("--plot", default=os.path.join(ROOT, "docs", "img", "cache_latency.svg"))
    args = ap.parse_args()
    repeats = max(7, args.repeats)
    exe = os.path.join(args.build, "bench", "bench_cache_latency")
    python = os.path.join(args.build, "python-venv", "bin", "python")
    cache_dir = tempfile.mkdtemp(prefix="tessera-cache-bench-")
    env = dict(os.environ, OMP_NUM_THREADS="2", TESSERA_CACHE_DIR=cache_dir)
    env.pop("TESSERA_CACHE", None)
    try:
        # Fill the cache: the first compile of each app in a process of its own.
        for app in ("blur_x_blur_y", "harris"):
            run_json([exe, "hit", app], env)
        raw = {k: [] for k in ("hit_blur", "hit_harris", "setup_blur", "cold_blur", "cold_harris", "run_cpp", "run_python")}
        for rep in range(repeats):
            print(f"[{rep + 1}/{repeats}] hits, set-up, cold compiles, run() overhead", file=sys.stderr, flush=True)
            raw["hit_blur"].append(run_json([exe, "hit", "blur_x_blur_y"], env))
            raw["hit_harris"].append(run_json([exe, "hit", "harris"], env))
            raw["setup_blur"].append(run_json([exe, "setup", "blur_x_blur_y"], env))
            raw["cold_blur"].append(run_json([exe, "cold", "blur_x_blur_y"], env))
            raw["cold_harris"].append(run_json([exe, "cold", "harris"], env))
            raw["run_cpp"].append(run_json([exe, "run_overhead"], env))
            if os.path.exists(python):
                raw["run_python"].append(run_json([python, "-c", PYTHON_WORKER], env))
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)

    med = statistics.median
    for key in ("hit_blur", "hit_harris"):
        assert all(r["first"]["cache"] == "hit" and r["second"]["cache"] == "hit" for r in raw[key]), key

    def phases(rows, which):
        names = rows[0][which]["phases"].keys()
        return {n: med([r[which]["phases"][n] for r in rows]) for n in names}

    results = {
        "hit_new_process_ms": {"blur": med([r["first"]["wall_ms"] for r in raw["hit_blur"]]),
                               "harris": med([r["first"]["wall_ms"] for r in raw["hit_harris"]])},
        "hit_warm_process_ms": {"blur": med([r["second"]["wall_ms"] for r in raw["hit_blur"]]),
                                "harris": med([r["second"]["wall_ms"] for r in raw["hit_harris"]])},
        "hit_new_process_phases_ms": phases(raw["hit_blur"], "first"),
        "hit_warm_process_phases_ms": phases(raw["hit_blur"], "second"),
        "setup_ms": {k: med([r[k] for r in raw["setup_blur"]]) for k in ("host_cpu_ms", "target_info_ms", "jit_ms")},
        "hit_after_setup_ms": med([r["compile"]["wall_ms"] for r in raw["setup_blur"]]),
        "cold_ms": {"blur": med([r["first"]["wall_ms"] for r in raw["cold_blur"]]),
                    "harris": med([r["first"]["wall_ms"] for r in raw["cold_harris"]])},
        "cold_phases_ms": {"blur": phases(raw["cold_blur"], "first"), "harris": phases(raw["cold_harris"], "first")},
        "run_overhead_us": {"cpp": med([r["run_us"] for r in raw["run_cpp"]])},
        "repeats": repeats,
    }
    if raw["run_python"]:
        results["run_overhead_us"]["python"] = med([r["run_us"] for r in raw["run_python"]])
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"results": results, "raw": raw}, f, indent=1)

    goals = [("hit, new process (blur)", results["hit_new_process_ms"]["blur"], 0.2, "ms"),
             ("hit, warm process (blur)", results["hit_warm_process_ms"]["blur"], 0.2, "ms"),
             ("cold compile, blur", results["cold_ms"]["blur"], 100, "ms"),
             ("cold compile, harris", results["cold_ms"]["harris"], 150, "ms"),
             ("run() overhead, C++", results["run_overhead_us"]["cpp"], 2, "µs")]
    if "python" in results["run_overhead_us"]:
        goals.append(("run() overhead, Python", results["run_overhead_us"]["python"], 10, "µs"))
    print("| measurement | median | goal | met |")
    print("|---|---|---|---|")
    for name, value, goal, unit in goals:
        print(f"| {name} | {value:.3g} {unit} | ≤ {goal:g} {unit} | {'yes' if value <= goal else 'no'} |")
    print("\nnew-process hit, by phase (ms):", {k: round(v, 3) for k, v in results["hit_new_process_phases_ms"].items()})
    print("one-time set-up (ms):", {k: round(v, 3) for k, v in results["setup_ms"].items()},
          "then the hit:", round(results["hit_after_setup_ms"], 3))
    for app in ("blur", "harris"):
        print(f"cold {app}, by phase (ms):", {k: round(v, 1) for k, v in results["cold_phases_ms"][app].items()})
    if args.plot:
        bar_chart(args.plot, [g[0].replace("run() overhead, ", "run() ").replace("cold compile, ", "cold ")
                              .replace(" process (blur)", "") for g in goals],
                  [g[2] / g[1] for g in goals], title="compile cache and JIT: goal ÷ measured (above 1: met)",
                  reference=1.0, unit="×")
        print(f"\nplot: {os.path.relpath(args.plot, ROOT)}")


if __name__ == "__main__":
    main()
