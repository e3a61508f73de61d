"""The persistent compile cache from Python (docs/cache.md): a pipeline compiled in one process is
loaded in the next, the report says so, the counters count it, and the option turns it off."""
import json
import os
import subprocess
import sys

import numpy as np

import tessera as ts

SCRIPT = r"""
import json, sys, numpy as np, tessera as ts
x, y = ts.Var("x"), ts.Var("y")
inp = ts.InputBuffer(ts.float32, 2, "input")
bx, by = ts.Func("blur_x"), ts.Func("blur_y")
bx[x, y] = (inp[x, y] + inp[x + 1, y] + inp[x + 2, y]) / 3
by[x, y] = (bx[x, y] + bx[x, y + 1] + bx[x, y + 2]) / 3
c = ts.compile(by, cache=sys.argv[1] == "on")
rng = np.random.default_rng(3)
img = rng.random((33, 41), dtype=np.float32)   # rows are y
out = np.zeros((31, 39), np.float32)
inp.set(img)
c.realize(out)
bxr = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3
ref = (bxr[:-2] + bxr[1:-1] + bxr[2:]) / 3
print(json.dumps({"cache": c.report()["cache"], "phases": list(c.report()["phase_ms"]),
                  "err": float(np.abs(out - ref).max()), "counters": ts.compile_counters()}))
"""


def run(tmp_path, cache="on", **env_extra):
    env = dict(os.environ, TESSERA_CACHE_DIR=str(tmp_path / "cache"), **env_extra)
    env.pop("TESSERA_CACHE", None)  # the test suite runs with the cache off
    env.update(env_extra)
    r = subprocess.run([sys.executable, "-c", SCRIPT, cache], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr


def test_a_pipeline_compiled_in_one_process_loads_from_the_cache_in_the_next(tmp_path):
    first, _ = run(tmp_path)
    assert first["cache"] == "miss"
    assert "schedule" in first["phases"]
    assert first["err"] < 1e-5
    assert first["counters"]["cache_misses"] == 1 and first["counters"]["cache_stores"] == 1
    second, log = run(tmp_path, TESSERA_LOG="cache")
    assert second["cache"] == "hit"
    assert "schedule" not in second["phases"] and "load" in second["phases"]
    assert second["err"] < 1e-5
    assert second["counters"]["cache_hits"] == 1 and second["counters"]["compiles"] == 1
    assert "tessera[cache] hit" in log
    entries = [p for p in (tmp_path / "cache").iterdir() if p.suffix == ".tobj"]
    assert len(entries) == 1
    assert (tmp_path / "cache").stat().st_mode & 0o777 == 0o700


def test_the_cache_is_off_by_option_and_by_environment(tmp_path):
    off, _ = run(tmp_path, cache="off")
    assert off["cache"] == "off: CompileOptions::cache is false"
    off_env, _ = run(tmp_path, TESSERA_CACHE="0")
    assert off_env["cache"] == "off: TESSERA_CACHE=0"
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_a_corrupt_entry_is_reported_and_compiled_again(tmp_path):
    run(tmp_path)
    (entry,) = [p for p in (tmp_path / "cache").iterdir() if p.suffix == ".tobj"]
    data = bytearray(entry.read_bytes())
    data[len(data) // 4] ^= 0xFF  # in the machine code, which the entry begins with
    entry.write_bytes(bytes(data))
    again, log = run(tmp_path)
    assert again["cache"] == "miss" and again["err"] < 1e-5
    assert again["counters"]["cache_corrupt"] == 1
    assert "does not match its digest" in log


def test_recompiling_a_pipeline_with_new_options_is_logged_with_the_reason(tmp_path):
    script = r"""
import tessera as ts
x = ts.Var("x")
f = ts.Func("f")
f[x] = x * 2
p = ts.Pipeline(f)
p.compile(cache=False)
p.compile(cache=False, fast_math=True)
print(ts.compile_counters()["recompiles"])
"""
    env = dict(os.environ, TESSERA_LOG="recompile")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1"
    assert "tessera[recompile] f compiled again: new options (fast_math on)" in r.stderr


def test_pipeline_text_writes_every_definition():
    x = ts.Var("x")
    inp = ts.InputBuffer(ts.float32, 1, "input")
    f = ts.Func("f")
    f[x] = inp[x] * 0.5
    text = ts.pipeline_text(f)
    assert "input input : float32, 1 dimensions" in text
    assert "f(x) = (input(x) * (float32)0.5)" in text
    assert "output f" in text


def test_compiler_ir_and_the_report_from_python(tmp_path):
    x = ts.Var("x")
    inp = ts.InputBuffer(ts.float32, 1, "input")
    f = ts.Func("f")
    f[x] = inp[x] * 0.5
    c = ts.compile(f, cache=False, keep_assembly=True)
    assert "statement S_f_0" in c.compiler_ir("model")
    assert "for (" in c.compiler_ir("loop_nest")
    assert "define " in c.compiler_ir("llvm")
    try:
        c.compiler_ir("nope")
        raise AssertionError("no error for an unknown stage")
    except ts.Error as e:
        assert "no stage 'nope'" in str(e)
    page = tmp_path / "f.html"
    c.write_report(str(page))
    html = page.read_text()
    assert '<svg id="func-graph"' in html and ">f</text>" in html
