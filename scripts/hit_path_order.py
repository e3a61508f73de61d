#!/usr/bin/env python3
"""Writes scripts/hit_path.order: the functions a compile cache hit runs, in the order it first runs
them, for lld's --symbol-ordering-file (CMakeLists.txt, TESSERA_HIT_PATH_LAYOUT).

Why: a new process's first compile() that hits the cache runs ~120 functions of Tessera's for the
first time. Scattered over the executable's 5 MB of code they lay in 23 of its 64 KB blocks, a
dozen of which the kernel had not mapped yet: a page fault each, ~8 us on our VMs, a third of
the hit (docs/cache.md). Laid out together they fit in ~150 KB, 3 blocks.

How: scripts/steptrace.c single-steps `bench_cache_latency hit_marked <app>` (a hit, between two
marks) for a few apps, and every instruction address that falls in Tessera's code is named with
`nm`. The names are those of Tessera's objects, so the same order lays out the Python module
(whose hit runs the same functions under a thin binding layer; the module is stripped, so it is
not traced itself). The order only moves code: a name that no longer exists is ignored by the
linker, and a function missing from the list still works, only not laid out with the rest. Run it again when the hit path changes much:

    python3 scripts/hit_path_order.py [--build build]

`--check-blocks N` (a CTest test) fails when blur's hit runs code in more than N of the
executable's 64 KB blocks: 3 laid out, plus the procedure linkage table's.
"""
import argparse
import bisect
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
APPS = ["blur_x_blur_y", "harris", "unsharp_mask"]


def functions_of(path):
    """(start addresses, [(start, size, mangled name)]) of the functions `path` defines."""
    out = subprocess.run(["nm", "--defined-only", "-S", path], capture_output=True, text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "tTwW":
            syms.append((int(f[0], 16), int(f[1], 16), f[3]))
    syms.sort()
    return [s[0] for s in syms], syms


def load_segments(path):
    """[(file offset, virtual address, file size)] of `path`'s loadable segments."""
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True, check=True).stdout
    return [(int(f[1], 16), int(f[2], 16), int(f[4], 16)) for f in (l.split() for l in out.splitlines()) if f and f[0] == "LOAD"]


def trace(tracer, command, env, binary_name):
    """(file offsets of the instructions `command` runs between its marks in the mapped file
    whose name contains `binary_name`, in first-run order; that file's path)."""
    r = subprocess.run([tracer] + command, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"steptrace {' '.join(command)} failed:\n{r.stderr[-2000:]}")
    addresses, maps = [], []
    for line in r.stdout.splitlines():
        if line.startswith("MAP "):
            f = line[4:].split()
            if len(f) >= 6 and binary_name in os.path.basename(f[5]):
                lo, hi = (int(a, 16) for a in f[0].split("-"))
                maps.append((lo, hi, int(f[2], 16), f[5]))
        else:
            addresses.append(int(line, 16))
    if not maps:
        sys.exit(f"{' '.join(command)}: no mapping of {binary_name}")
    offsets = []
    for a in addresses:
        m = next((m for m in maps if m[0] <= a < m[1]), None)
        if m:
            offsets.append(a - m[0] + m[2])
    return offsets, maps[0][3]


def traced_functions(tracer, command, env, binary_name):
    """The functions of the mapped file whose name contains `binary_name` that `command` runs
    between its marks, in first-run order."""
    offsets, path = trace(tracer, command, env, binary_name)
    starts, syms = functions_of(path)
    segments = load_segments(path)
    order, seen = [], set()
    for offset in offsets:
        va = next((offset - o + v for o, v, size in segments if o <= offset < o + size), None)
        i = bisect.bisect_right(starts, va) - 1 if va is not None else -1
        if i >= 0 and syms[i][0] <= va < syms[i][0] + syms[i][1] and syms[i][2] not in seen:
            seen.add(syms[i][2])
            order.append((syms[i][2], syms[i][1]))
    print(f"  {' '.join(os.path.basename(c) for c in command)}: {len(order)} functions, "
          f"{sum(s for _, s in order) // 1024} KB", file=sys.stderr)
    return [n for n, _ in order]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--output", default=os.path.join(ROOT, "scripts", "hit_path.order"))
    ap.add_argument("--check-blocks", type=int, metavar="N",
                    help="write nothing; fail when blur's hit runs code in more than N of the executable's "
                         "64 KB blocks (the order is stale: run this script again)")
    args = ap.parse_args()
    bench = os.path.join(args.build, "bench", "bench_cache_latency")
    with tempfile.TemporaryDirectory() as tmp:
        tracer = os.path.join(tmp, "steptrace")
        subprocess.run(["cc", "-O2", "-o", tracer, os.path.join(ROOT, "scripts", "steptrace.c")], check=True)
        env = dict(os.environ, TESSERA_CACHE_DIR=os.path.join(tmp, "cache"), TESSERA_CACHE="1", OMP_NUM_THREADS="1")
        if args.check_blocks is not None:
            command = [bench, "hit_marked", APPS[0]]
            subprocess.run(command, check=True, env=env, capture_output=True)  # stores the entry
            offsets, _ = trace(tracer, command, env, "bench_cache_latency")
            blocks = len({o >> 16 for o in offsets})
            print(f"{APPS[0]}'s cache hit runs code in {blocks} of the executable's 64 KB blocks (at most {args.check_blocks})")
            if blocks > args.check_blocks:
                sys.exit("the hit path's link order is stale: run python3 scripts/hit_path_order.py and rebuild")
            return
        names = []
        for app in APPS:
            command = [bench, "hit_marked", app]
            subprocess.run(command, check=True, env=env, capture_output=True)  # stores the entry
            names += traced_functions(tracer, command, env, "bench_cache_latency")
    unique = list(dict.fromkeys(names))
    with open(args.output, "w") as f:
        f.write("# Written by scripts/hit_path_order.py: the functions a compile cache hit runs, in the order\n"
                "# it first runs them, for lld's --symbol-ordering-file. Regenerate; do not edit.\n")
        f.write("\n".join(unique) + "\n")
    print(f"{args.output}: {len(unique)} functions", file=sys.stderr)


if __name__ == "__main__":
    main()
