"""What the matmul and DNN-layer benchmarks share: running a variant in its own process, finding
OpenBLAS, and printing a Markdown table with a text bar plot of GFLOP/s."""
import json
import os
import statistics
import subprocess
import sys

THREADS = "2"


def run_json(cmd, env=None):
    """Runs `cmd` and parses the one JSON object it prints."""
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out)


def openblas_available():
    # Debian's libopenblas-dev (the reference libblas-dev has a cblas.h too, but no sgemm worth timing).
    return os.path.exists("/usr/lib/x86_64-linux-gnu/libopenblas.so")


def thread_env():
    """The environment every variant runs in: THREADS OpenMP and OpenBLAS threads."""
    return dict(os.environ, OMP_NUM_THREADS=THREADS, OPENBLAS_NUM_THREADS=THREADS)


def print_table(title, medians, flops, compile_ms):
    """Prints `medians` ({variant: ms}, with a "Tessera" entry) as a table and a bar plot, and
    Tessera's compile time by phase; returns the rows."""
    rows = [{"variant": name, "median_ms": ms, "gflops": flops / ms / 1e6, "tessera_speedup": ms / medians["Tessera"]}
            for name, ms in medians.items()]
    print(f"\n### {title}\n")
    print("| variant | median | GFLOP/s | Tessera faster by |")
    print("|---|---|---|---|")
    for row in rows:
        print(f"| {row['variant']} | {row['median_ms']:.1f} ms | {row['gflops']:.1f} | {row['tessera_speedup']:.2f}x |")
    print("\n```text")
    top = max(row["gflops"] for row in rows)
    for row in rows:
        bar = "#" * max(1, round(40 * row["gflops"] / top))
        print(f"{row['variant'][:30]:<30} {bar} {row['gflops']:.0f} GFLOP/s")
    print("```")
    phases = ", ".join(f"{k} {v:.1f}" for k, v in compile_ms.items() if k != "total_ms")
    print(f"\nTessera compile: {compile_ms['total_ms']:.1f} ms ({phases})")
    return rows


def time_variants(kernel, exes, tessera_cmd, runs, repeats, env, tessera_variants=None):
    """Runs each C variant (`exes`: {name: executable}, each printing run_ms and a checksum) and
    Tessera (`tessera_cmd(check)`: the app_tessera command line), and Tessera's other variants
    (`tessera_variants`: {name: command function}, e.g. with fast math), interleaved, `repeats`
    times; Tessera checks itself in the first process only. Exits when a Tessera check fails or the
    C variants' checksums disagree (OpenBLAS within 1e-3). Returns ({variant: median ms}, Tessera's
    compile time by phase)."""
    tessera = {"Tessera": tessera_cmd, **(tessera_variants or {})}
    times = {name: [] for name in list(exes) + list(tessera)}
    checksums = {}
    compile_ms = []
    for rep in range(repeats):
        for name, exe in exes.items():
            r = run_json([exe, str(runs)], env)
            times[name] += r["run_ms"]
            checksums.setdefault(name, r["checksum"])
        for name, cmd in tessera.items():
            r = run_json(cmd("check" if rep == 0 else "nocheck"), env)
            if r["check"] not in ("ok", "skipped"):
                sys.exit(f"{name}'s {kernel} does not match its reference loops")
            times[name] += r["run_ms"]
            if name == "Tessera":
                compile_ms.append(r["compile"])
    loops = [v for k, v in checksums.items() if not k.startswith("OpenBLAS")]
    for name, c in checksums.items():
        tol = 1e-3 if name.startswith("OpenBLAS") else 1e-6
        if abs(c - loops[0]) > tol * max(1.0, abs(loops[0])):
            sys.exit(f"{name}'s checksum {c} differs from {loops[0]}")
    return {name: statistics.median(t) for name, t in times.items() if t}, compile_ms[0]
