"""Scheduling directives from Python: the loops they produce, the results against the
interpreter, and an illegal directive rejected with the dependence it violates."""
import json

import numpy as np
import pytest

import tessera as ts


def _scaled(inp):
    x, y = ts.Var("x"), ts.Var("y")
    f = ts.Func("f")
    f[x, y] = inp[x, y] * 2.0 + 1.0
    return f, x, y


def test_split_parallel_vectorize_match_the_interpreter_and_show_in_the_json():
    data = np.random.default_rng(1).random((23, 37), dtype=np.float32)
    inp = ts.Buffer(data)
    f, x, y = _scaled(inp)
    xo, xi = ts.Var("xo"), ts.Var("xi")
    f.split(x, xo, xi, 8).parallel(y).vectorize(xi)
    p = ts.Pipeline(f)
    assert not p.auto_scheduled
    note = json.loads(p.schedule_json())["groups"][0]["note"]
    assert "y (parallel), xo, xi (vector)" in note
    got = p.realize([37, 23]).numpy()
    np.testing.assert_array_equal(got, data * 2.0 + 1.0)


def test_update_stages_take_directives_and_a_legal_reduction_reorder_is_exact():
    rng = np.random.default_rng(2)
    a = rng.random((13, 19), dtype=np.float32)
    b = rng.random((19, 11), dtype=np.float32)
    x, y = ts.Var("x"), ts.Var("y")
    k = ts.RDom([(0, 19)], "k")
    c = ts.Func("c")
    c[x, y] = 0.0
    c[x, y] += ts.Buffer(a)[k.x, y] * ts.Buffer(b)[x, k.x]
    stage = c.update(0).reorder(x, k.x, y).vectorize(x)
    assert stage.name == "c.update(0)"
    p = ts.Pipeline(c)
    got = p.realize([11, 13]).numpy()
    np.testing.assert_allclose(got, a @ b, rtol=1e-5)


def test_parallelizing_a_prefix_sum_is_rejected_with_the_dependence():
    data = np.arange(16, dtype=np.int32)
    x = ts.Var("x")
    r = ts.RDom([(1, 15)], "r")
    f = ts.Func("prefix")
    f[x] = ts.Buffer(data)[x]
    f[r.x] = f[r.x - 1] + f[r.x]
    f.update(0).parallel(r.x)
    with pytest.raises(ts.Error, match=r"prefix\.update\(0\)\.parallel\(r\.x\) is illegal.*distance \[1\]"):
        ts.Pipeline(f).compile()


def test_a_directive_naming_no_loop_of_the_stage_is_an_error():
    f, x, y = _scaled(ts.Buffer(np.zeros((4, 4), dtype=np.float32)))
    with pytest.raises(ts.Error, match="no loop z"):
        f.parallel(ts.Var("z"))
    with pytest.raises(ts.Error, match="is not a loop"):
        f.parallel("y")


def test_auto_schedule_off_computes_each_func_at_root():
    data = np.random.default_rng(3).random((9, 17), dtype=np.float32)
    f, x, y = _scaled(ts.Buffer(data))
    p = ts.Pipeline(f)
    assert p.auto_scheduled
    p.auto_schedule(False)
    assert not p.auto_scheduled
    assert json.loads(p.schedule_json())["groups"][0]["kind"] == "sequential"
    np.testing.assert_array_equal(p.realize([17, 9]).numpy(), data * 2.0 + 1.0)


def test_funcs_without_directives_are_scheduled_automatically_around_those_with_them():
    data = np.random.default_rng(7).random((40, 50), dtype=np.float32)
    x, y, xo, xi = (ts.Var(n) for n in ("x", "y", "xo", "xi"))
    inp = ts.Buffer(data)
    bx, by, out = ts.Func("blur_x"), ts.Func("blur_y"), ts.Func("out")
    bx[x, y] = (inp[x, y] + inp[x + 1, y] + inp[x + 2, y]) / 3.0
    by[x, y] = (bx[x, y] + bx[x, y + 1] + bx[x, y + 2]) / 3.0
    out[x, y] = by[x, y] * 2.0
    out.split(x, xo, xi, 8).vectorize(xi).parallel(y)
    p = ts.Pipeline(out)
    groups = json.loads(p.schedule_json())["groups"]
    assert [g["stages"] for g in groups] == [["blur_x", "blur_y"], ["out"]]
    assert groups[0]["kind"] == "overlapped_tiles"
    assert groups[0]["note"].startswith("automatic (no directives)")
    np.testing.assert_array_equal(p.realize([47, 37]).numpy(), ts.interpret(out, [47, 37]).numpy())
    p.auto_schedule(False)
    assert len(json.loads(p.schedule_json())["groups"]) == 3


def test_compute_at_a_tile_loop_makes_overlapped_tiles():
    data = np.random.default_rng(4).random((40, 50), dtype=np.float32)
    inp = ts.InputBuffer(ts.float32, 2, "inp")
    inp.set(data)
    clamped = ts.BoundaryConditions.repeat_edge(inp)
    x, y, xo, yo, xi, yi = (ts.Var(n) for n in ("x", "y", "xo", "yo", "xi", "yi"))
    bx, by = ts.Func("blur_x"), ts.Func("blur_y")
    bx[x, y] = (clamped[x - 1, y] + clamped[x, y] + clamped[x + 1, y]) / 3.0
    by[x, y] = (bx[x, y - 1] + bx[x, y] + bx[x, y + 1]) / 3.0
    by.tile(x, y, xo, yo, xi, yi, 16, 8).parallel(yo).vectorize(xi)
    bx.store_at(by, xo).compute_at(by, yi)
    p = ts.Pipeline(by)
    group = json.loads(p.schedule_json())["groups"][-1]
    assert group["kind"] == "overlapped_tiles" and "rows slide" in group["note"]
    got = p.realize([50, 40]).numpy()
    np.testing.assert_array_equal(got, ts.interpret(by, [50, 40]).numpy())
    pad = np.pad(data, 1, mode="edge")
    rows = (pad[:, :-2] + pad[:, 1:-1] + pad[:, 2:]) / np.float32(3.0)
    ref = (rows[:-2] + rows[1:-1] + rows[2:]) / np.float32(3.0)
    np.testing.assert_allclose(got, ref, rtol=1e-6)


def test_gpu_tile_runs_in_the_emulator_and_is_refused_for_the_host():
    data = np.random.default_rng(5).random((21, 35), dtype=np.float32)
    f, x, y = _scaled(ts.Buffer(data))
    bx, by, tx, ty = (ts.Var(n) for n in ("bx", "by", "tx", "ty"))
    f.gpu_tile(x, y, bx, by, tx, ty, 16, 4)
    with pytest.raises(ts.Error, match="compiled for the host CPU"):
        ts.compile(f)
    c = ts.compile(f, ts.Target.cuda(80).emulated())
    assert "thread" in c.compiler_ir("schedule")
    np.testing.assert_array_equal(c.realize([35, 21]).numpy(), data * 2.0 + 1.0)


def test_compute_inline_leaves_one_statement():
    data = np.random.default_rng(6).random((9, 13), dtype=np.float32)
    x, y = ts.Var("x"), ts.Var("y")
    g, f = ts.Func("g"), ts.Func("f")
    g[x, y] = ts.Buffer(data)[x, y] * 3.0
    f[x, y] = g[x, y] + 1.0
    g.compute_inline()
    p = ts.Pipeline(f)
    assert [s["func"] for s in json.loads(p.schedule_json())["statements"]] == ["f"]
    np.testing.assert_array_equal(p.realize([13, 9]).numpy(), data * np.float32(3.0) + np.float32(1.0))


def test_bound_fixes_a_region_and_a_run_that_needs_more_is_an_error():
    data = np.random.default_rng(5).random((3, 10, 40), dtype=np.float32)
    inp = ts.Buffer(data)
    x, y, c = ts.Var("x"), ts.Var("y"), ts.Var("c")
    f = ts.Func("f")
    f[x, y, c] = inp[x, y, c] * 2.0
    f.bound(c, 0, 3).unroll(c)
    p = ts.Pipeline(f)
    np.testing.assert_array_equal(p.realize([40, 10, 3]).numpy(), data * 2.0)
    with pytest.raises(ts.Error, match=r"Func f is computed over \[0, 2\] in dimension 2 \(c\) by its bound\(\)"):
        p.realize([40, 10, 4])


def test_align_bounds_widens_what_is_computed_but_not_the_result():
    data = np.random.default_rng(6).random((5, 64), dtype=np.float32)
    inp = ts.Buffer(data)
    x, y = ts.Var("x"), ts.Var("y")
    g, h = ts.Func("g"), ts.Func("h")
    g[x, y] = inp[x, y] + 1.0
    h[x, y] = g[x, y] + g[x + 1, y]
    g.align_bounds(x, 8)
    got = ts.Pipeline(h).realize([13, 5]).numpy()
    want = (data[:, :13] + 1.0) + (data[:, 1:14] + 1.0)
    np.testing.assert_array_equal(got, want)
