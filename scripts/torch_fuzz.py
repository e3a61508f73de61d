#!/usr/bin/env python3
"""Random torch programs through the Tessera backend against eager, many seeds in one process:
the programs of frontends/python/tests/torch/test_torch_fuzz.py (which CI runs for 40 seeds),
for seeds beyond them.

dynamo's cache is reset before every seed. Without that, every seed's program (one code object,
a closure over the seed's steps) is a recompile of the same frame, and from the ninth on dynamo's
recompile limit runs it in eager PyTorch: the comparison against eager then proves nothing. Each
seed also checks that dynamo compiled all of the program (the test, that Tessera received its graph).

    build/python-venv/bin/python scripts/torch_fuzz.py --seed 5760 --count 200
"""
import argparse
import os
import sys
import time
import traceback

os.environ.setdefault("TESSERA_CACHE", "0")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "frontends", "python", "tests", "torch"))

import torch  # noqa: E402
from torch._dynamo.utils import counters as dynamo_counters  # noqa: E402
from tessera.torch_frontend import reset_stats, stats  # noqa: E402
import test_torch_fuzz  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--count", type=int, default=100)
    args = ap.parse_args()
    failed = []
    start = time.perf_counter()
    for seed in range(args.seed, args.seed + args.count):
        torch._dynamo.reset()
        reset_stats()
        dynamo_counters.clear()
        try:
            test_torch_fuzz.test_random_programs_match_eager(seed)
            # (The test checks that Tessera received a graph; here, that it was the whole program's.)
            frames = dynamo_counters["frames"]
            if frames["total"] != frames["ok"]:
                raise AssertionError(f"dynamo did not compile every frame of the program ({dict(frames)}): "
                                     f"part of it ran in eager PyTorch (Tessera: {stats()})")
        except Exception:
            failed.append(seed)
            print(f"seed {seed}: FAILED", flush=True)
            traceback.print_exc()
    print(f"{args.count} programs from seed {args.seed} in {time.perf_counter() - start:.0f} s: "
          f"{len(failed)} failed" + (f" (seeds {', '.join(map(str, failed))})" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
