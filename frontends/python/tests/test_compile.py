"""Compilation from Python: targets, options, explicit bindings, threads, schedule JSON, and
the GPU emulator, each result checked against the reference interpreter or NumPy."""
import json
import threading

import numpy as np
import pytest

import tessera as ts

x, y = ts.Var("x"), ts.Var("y")


def scaled_blur():
    inp = ts.InputBuffer(ts.float32, 2, "input")
    scale = ts.Param(ts.float32, "scale", 1.0)
    blur_x, blur_y = ts.Func("blur_x"), ts.Func("blur_y")
    blur_x[x, y] = (inp[x, y] + inp[x + 1, y] + inp[x + 2, y]) * scale
    blur_y[x, y] = blur_x[x, y] + blur_x[x, y + 1] + blur_x[x, y + 2]
    return inp, scale, blur_y


def numpy_scaled_blur(img, scale):
    bx = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) * np.float32(scale)
    return bx[:-2] + bx[1:-1] + bx[2:]


@pytest.mark.parametrize("options", [{}, {"threads": 2, "tile_sizes": [32, 8]}, {"parallel": False, "vectorize": False},
                                     {"fusion": "none"}, {"specialize_sizes": [61, 29]}, {"max_recompute": 0.0},
                                     {"cache_bytes": 4096, "max_recompute": 0.8}])
def test_compiled_pipeline_matches_numpy_with_each_option(options):
    inp, scale, blur_y = scaled_blur()
    img = np.random.default_rng(7).random((31, 63), dtype=np.float32)
    inp.set(img)
    scale.value = 0.25
    c = ts.Pipeline(blur_y).compile(ts.Target.host(), **options)
    out = np.empty((29, 61), np.float32)
    c.realize(out)
    np.testing.assert_array_equal(out, numpy_scaled_blur(img, 0.25))


def test_run_with_explicit_values_from_several_threads():
    inp, scale, blur_y = scaled_blur()
    c = ts.compile(blur_y, threads=1)
    rng = np.random.default_rng(3)
    jobs = [(rng.random((h + 2, w + 2), dtype=np.float32), s, (w, h))
            for (w, h), s in zip([(5, 3), (64, 17), (33, 65), (1, 1), (100, 9), (7, 128)], [0.5, 2, -1, 3, 0.125, 1])]
    results = [None] * len(jobs)

    def work(i):
        img, s, (w, h) = jobs[i]
        out = np.empty((h, w), np.float32)
        for _ in range(5):
            c.run({inp: img, scale: s}, [out])
        results[i] = out

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (img, s, _), out in zip(jobs, results):
        np.testing.assert_array_equal(out, numpy_scaled_blur(img, s))


def test_report_gives_compile_time_by_phase_and_code_on_request():
    _, _, blur_y = scaled_blur()
    report = ts.compile(blur_y, keep_assembly=True).report()
    assert {"model", "schedule", "AST", "LLVM IR", "LLVM optimization", "machine code"} <= set(report["phase_ms"])
    assert report["total_ms"] > 0
    assert "define" in report["llvm_ir"] and report["assembly"]


def test_unknown_option_is_named():
    _, _, blur_y = scaled_blur()
    with pytest.raises(ts.UserError, match="unknown option 'tile_size'"):
        ts.compile(blur_y, tile_size=[8])


def test_fusion_thresholds_reach_the_schedule():
    _, _, blur_y = scaled_blur()
    c = ts.Pipeline(blur_y).compile(ts.Target.host(), max_recompute=0.0, cache_bytes=4096)
    schedule = json.loads(c.compiler_ir("schedule"))
    assert schedule["options"]["max_recompute"] == 0.0 and schedule["options"]["cache_bytes"] == 4096
    assert len(schedule["groups"]) == 2  # blur_x's halo would be recomputed: not merged
    with pytest.raises(ts.UserError, match="cache_bytes is -1"):
        ts.Pipeline(blur_y).compile(ts.Target.host(), cache_bytes=-1)


def test_run_rejects_keys_that_are_not_inputs():
    inp, scale, blur_y = scaled_blur()
    c = ts.compile(blur_y)
    with pytest.raises(ts.UserError, match="InputBuffers and Params"):
        c.run({"input": np.ones((4, 4), np.float32)}, [np.empty((2, 2), np.float32)])
    with pytest.raises(ts.UserError, match="scale"):
        c.run({inp: np.ones((4, 4), np.float32), scale: "big"}, [np.empty((2, 2), np.float32)])


def swap_first_two_sequence_children(tree):
    """Swaps the first two children of the first sequence in an isl schedule tree's text."""
    def child_end(start):
        depth = 0
        for k in range(start, len(tree)):
            depth += {"{": 1, "}": -1}.get(tree[k], 0)
            if depth == 0:
                return k + 1
        raise ValueError("unbalanced tree")
    a = tree.index("{ filter:")
    a_end = child_end(a)
    b = tree.index("{ filter:", a_end)
    b_end = child_end(b)
    return tree[:a] + tree[b:b_end] + tree[a_end:b] + tree[a:a_end] + tree[b_end:]


def test_schedule_json_round_trips_and_an_illegal_edit_is_rejected():
    inp = ts.InputBuffer(ts.int32, 1, "a")
    f, g = ts.Func("f"), ts.Func("g")
    f[x] = ((inp[x] + 1) * inp[x] - 2) * 3 + inp[x]  # 5 operations: stored, not recomputed at g's 2 points
    g[x] = f[x] * f[x + 1]
    p = ts.Pipeline(g)
    a = np.arange(-20, 20, dtype=np.int32)
    fa = ((a + 1) * a - 2) * 3 + a
    inp.set(a)
    schedule = json.loads(p.schedule_json())
    assert schedule["pipeline"]["outputs"] == ["g"]
    p.set_schedule_json(json.dumps(schedule))
    np.testing.assert_array_equal(p.realize([39]).numpy(), fa[:-1] * fa[1:])
    schedule["schedule_tree"] = swap_first_two_sequence_children(schedule["schedule_tree"])
    with pytest.raises(ts.UserError, match="illegal.*read f before"):
        p.set_schedule_json(json.dumps(schedule))
    p.clear_schedule_json()
    np.testing.assert_array_equal(p.realize([39]).numpy(), fa[:-1] * fa[1:])


def test_gpu_target_runs_in_the_emulator_and_matches_the_interpreter():
    inp, scale, blur_y = scaled_blur()
    img = np.random.default_rng(11).random((40, 37), dtype=np.float32)
    inp.set(img)
    scale.value = 0.5
    c = ts.compile(blur_y, ts.Target.cuda(80).emulated())
    assert c.report()["kernels"] >= 1
    out = c.realize([35, 38]).numpy()
    np.testing.assert_array_equal(out, ts.interpret(blur_y, [35, 38]).numpy())
    np.testing.assert_array_equal(out, numpy_scaled_blur(img, 0.5))
    # Rows per thread step is an option: one at a time, or three (37 rows leave a remainder).
    for rows in (1, 3):
        jammed = ts.compile(blur_y, ts.Target.cuda(80).emulated(), gpu_unroll_rows=rows)
        np.testing.assert_array_equal(jammed.realize([35, 38]).numpy(), out)
    with pytest.raises(ts.UserError, match="gpu_unroll_rows"):
        ts.compile(blur_y, ts.Target.cuda(80).emulated(), gpu_unroll_rows=-1)
    # The input staged in shared memory, and warps aligned to sectors: options, same values.
    for align in ("rows", "jammed", "off"):
        staged = ts.compile(blur_y, ts.Target.cuda(80).emulated(), gpu_align_warps=align, gpu_stage_inputs=True)
        np.testing.assert_array_equal(staged.realize([35, 38]).numpy(), out)
    with pytest.raises(ts.UserError, match="gpu_align_warps"):
        ts.compile(blur_y, ts.Target.cuda(80).emulated(), gpu_align_warps="diagonal")
    # Column windows (each thread walks down its columns, blur_x's rows in registers): same values.
    windows = ts.compile(blur_y, ts.Target.cuda(80).emulated(), gpu_column_windows=True)
    assert "fold:" in windows.compiler_ir("loop_nest")
    np.testing.assert_array_equal(windows.realize([35, 38]).numpy(), out)


def test_multi_output_pipeline_returns_one_buffer_per_output():
    f, g = ts.Func("f"), ts.Func("g")
    f[x] = x * 2
    g[x] = f[x] + 1
    p = ts.Pipeline([f, g])
    fb, gb = p.realize([5])
    assert fb.numpy().tolist() == [0, 2, 4, 6, 8] and gb.numpy().tolist() == [1, 3, 5, 7, 9]
    outs = [np.zeros(5, np.int32), np.zeros(5, np.int32)]
    ts.compile([f, g]).realize(outs)
    assert outs[1].tolist() == [1, 3, 5, 7, 9]


def test_compile_threads_splits_the_module_and_changes_no_result():
    rng = np.random.default_rng(5)
    a = rng.random((37, 23), dtype=np.float32)
    b = rng.random((23, 41), dtype=np.float32)
    c = rng.random((41, 19), dtype=np.float32)
    i, j = ts.Var("i"), ts.Var("j")
    k, l = ts.RDom([(0, 23)], "k"), ts.RDom([(0, 41)], "l")
    ab, abc = ts.Func("ab"), ts.Func("abc")
    ab[j, i] = 0.0
    ab[j, i] += ts.Buffer(a)[k.x, i] * ts.Buffer(b)[j, k.x]
    abc[j, i] = 0.0
    abc[j, i] += ab[l.x, i] * ts.Buffer(c)[j, l.x]
    results = {}
    for threads in (1, 2):
        compiled = ts.compile(abc, cache=False, compile_threads=threads)
        assert compiled.report()["llvm_partitions"] == threads
        out = np.empty((37, 19), np.float32)
        compiled.realize(out)
        results[threads] = out
    np.testing.assert_array_equal(results[1], results[2])
    np.testing.assert_allclose(results[2], (a @ b) @ c, rtol=1e-4)
    with pytest.raises(ts.UserError, match="compile_threads"):
        ts.compile(abc, compile_threads=-2)
