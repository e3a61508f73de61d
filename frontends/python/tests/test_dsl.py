"""The Python DSL builds the same pipelines as C++: each result is checked against NumPy or
plain Python loops, and against the reference interpreter, on awkward sizes."""
import numpy as np
import pytest

import tessera as ts

x, y, c = ts.Var("x"), ts.Var("y"), ts.Var("c")

# Odd, prime, smaller than a tile, one element, and around typical tile sizes.
AWKWARD_SIZES = [(1, 1), (3, 7), (13, 31), (64, 33), (127, 129)]


def blur_pipeline():
    inp = ts.InputBuffer(ts.float32, 2, "input")
    blur_x, blur_y = ts.Func("blur_x"), ts.Func("blur_y")
    blur_x[x, y] = (inp[x, y] + inp[x + 1, y] + inp[x + 2, y]) / 3
    blur_y[x, y] = (blur_x[x, y] + blur_x[x, y + 1] + blur_x[x, y + 2]) / 3
    return inp, blur_y


def numpy_blur(img):
    third = np.float32(3)
    bx = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / third
    return (bx[:-2] + bx[1:-1] + bx[2:]) / third


@pytest.mark.parametrize("w,h", AWKWARD_SIZES)
def test_blur_matches_numpy_and_interpreter_on_awkward_sizes(rng, w, h):
    inp, blur_y = blur_pipeline()
    img = rng.random((h + 2, w + 2), dtype=np.float32)
    inp.set(img)
    out = blur_y.realize([w, h]).numpy()
    assert out.shape == (h, w)
    # The same operations in the same order in float32: bit-exact.
    np.testing.assert_array_equal(out, numpy_blur(img))
    np.testing.assert_array_equal(out, ts.interpret(blur_y, [w, h]).numpy())


def test_python_scalars_take_the_type_of_the_expression_they_meet():
    u8 = ts.cast(ts.uint8, x)
    assert (u8 + 1).type == ts.uint8
    assert (x + 1).type == ts.int32
    assert (x * 1.5).type == ts.float32
    assert (ts.cast(ts.float64, x) * 1.5).type == ts.float64
    assert (x > 1).type == ts.bool_
    assert ts.Expr(3).type == ts.int32
    assert ts.Expr(2**40).type == ts.int64
    assert ts.Expr(2.5).type == ts.float32
    with pytest.raises(ts.UserError, match="300"):
        u8 + 300


def test_integer_division_and_modulo_round_like_python():
    f = ts.Func("divmod")
    f[x] = (x - 50) // 7 * 1000 + (x - 50) % 7
    out = f.realize([101]).numpy()
    expected = [((i - 50) // 7) * 1000 + (i - 50) % 7 for i in range(101)]
    assert out.tolist() == expected
    g = ts.Func("fdiv")
    g[x] = (ts.cast(ts.float32, x) - 5) // 2
    np.testing.assert_array_equal(g.realize([11]).numpy(), np.floor((np.arange(11, dtype=np.float32) - 5) / 2))


def test_update_with_plus_equals_on_an_undefined_func_starts_from_zero(rng):
    img = rng.integers(0, 256, size=(37, 41), dtype=np.uint8)
    inp = ts.InputBuffer(ts.uint8, 2, "img")
    inp.set(img)
    r = ts.RDom(inp, "r")
    hist = ts.Func("hist")
    hist[ts.cast(ts.int32, inp[r.x, r.y]) // 16] += 1
    assert hist.num_update_definitions() == 1
    out = hist.realize([16]).numpy()
    np.testing.assert_array_equal(out, np.bincount(img.ravel() // 16, minlength=16))


def test_reduction_domain_with_predicate_and_inline_sum(rng):
    a = rng.integers(-100, 100, size=(23,), dtype=np.int32)
    inp = ts.InputBuffer(ts.int32, 1, "a")
    inp.set(a)
    r = ts.RDom([(0, 23)], "r")
    r.where(r.x % 3 != 0)
    total = ts.Func("total")
    total[x] = ts.sum(inp[r.x] * (x + 1))
    out = total.realize([4]).numpy()
    keep = np.array([i % 3 != 0 for i in range(23)])
    np.testing.assert_array_equal(out, [(a[keep] * (k + 1)).sum() for k in range(4)])


def test_argmax_returns_coordinate_and_value(rng):
    a = rng.permutation(50).astype(np.int32)
    inp = ts.InputBuffer(ts.int32, 1, "a")
    inp.set(a)
    r = ts.RDom([(0, 50)])
    where, value = ts.argmax(inp[r.x])
    f, g = ts.Func("where"), ts.Func("value")
    f[x] = where
    g[x] = value
    assert f.realize([1]).numpy()[0] == int(np.argmax(a))
    assert g.realize([1]).numpy()[0] == a.max()


def test_params_select_and_math_functions():
    k = ts.Param(ts.float32, "k", 0.5)
    f = ts.Func("f")
    xf = ts.cast(ts.float32, x)
    f[x] = ts.select(x < 3, ts.sqrt(xf) * k, x < 6, ts.exp(-xf), ts.clamp(xf, 0, 7))
    out = f.realize([10]).numpy()
    xs = np.arange(10, dtype=np.float32)
    expected = np.where(xs < 3, np.sqrt(xs) * np.float32(0.5), np.where(xs < 6, np.exp(-xs), np.clip(xs, 0, 7)))
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    k.value = 2
    assert k.value == 2.0
    np.testing.assert_allclose(f.realize([3]).numpy(), np.sqrt(xs[:3]) * 2, rtol=1e-6)


def test_boundary_conditions_match_numpy_pad(rng):
    img = rng.random((9, 11), dtype=np.float32)
    inp = ts.InputBuffer(ts.float32, 2, "img")
    inp.set(img)
    for bc, mode in [(ts.BoundaryConditions.repeat_edge, "edge"), (ts.BoundaryConditions.mirror_image, "symmetric"),
                     (ts.BoundaryConditions.mirror_interior, "reflect"), (ts.BoundaryConditions.repeat_image, "wrap")]:
        src = bc(inp)
        f = ts.Func("padded_" + mode)
        f[x, y] = src[x - 3, y - 2]
        np.testing.assert_array_equal(f.realize([17, 13]).numpy(), np.pad(img, ((2, 2), (3, 3)), mode=mode), err_msg=mode)
    src = ts.BoundaryConditions.constant_exterior(inp, -1.0)
    f = ts.Func("padded_constant")
    f[x, y] = src[x - 1, y - 1]
    np.testing.assert_array_equal(f.realize([13, 11]).numpy(), np.pad(img, 1, constant_values=-1))


def test_boundary_condition_of_a_func_with_explicit_bounds():
    g = ts.Func("ramp")
    g[x] = x * 10
    clamped = ts.BoundaryConditions.repeat_edge(g, [(2, 5)])
    f = ts.Func("f")
    f[x] = clamped[x]
    assert f.realize([10]).numpy().tolist() == [20, 20, 20, 30, 40, 50, 60, 60, 60, 60]
    with pytest.raises(ts.UserError, match="bounds"):
        ts.BoundaryConditions.repeat_edge(g)


def test_three_dimensional_pipeline_with_channels(rng):
    img = rng.integers(0, 255, size=(3, 10, 12), dtype=np.uint8)  # (c, y, x)
    inp = ts.InputBuffer(ts.uint8, 3, "rgb")
    inp.set(img)
    gray = ts.Func("gray")
    gray[x, y] = ts.cast(ts.uint8, (ts.cast(ts.uint16, inp[x, y, 0]) + inp[x, y, 1] + inp[x, y, 2]) // 3)
    out = gray.realize([12, 10]).numpy()
    np.testing.assert_array_equal(out, (img.astype(np.uint16).sum(axis=0) // 3).astype(np.uint8))


def test_user_errors_name_the_func_and_say_what_to_do():
    f = ts.Func("named_func")
    f[x, y] = x + y
    with pytest.raises(ts.UserError, match="named_func"):
        f[x] = 1
    with pytest.raises(ts.UserError, match="named_func"):
        f.realize([4])
    with pytest.raises(ts.UserError, match="is not an expression"):
        f[x, y] = "text"
    with pytest.raises(ts.Error):  # the base class catches every Tessera error
        ts.Func("undefined_func").realize([3])
    assert issubclass(ts.UserError, ts.Error) and issubclass(ts.Error, RuntimeError)


def test_expressions_have_no_truth_value():
    with pytest.raises(TypeError, match="no truth value"):
        if x > 1:
            pass
    with pytest.raises(TypeError, match="no truth value"):
        (x > 1) and (y > 1)


def test_bitwise_operators_on_bools_are_logical():
    f = ts.Func("logic")
    f[x] = ts.select(((x > 2) & (x < 6)) | ~(x != 8), 1, 0)
    assert f.realize([10]).numpy().tolist() == [0, 0, 0, 1, 1, 1, 0, 0, 1, 0]
