"""The op library (frontends/ops) through Python, each op against NumPy at random shapes with
broadcasting edge cases, odd sizes and size-1 axes."""
import math

import numpy as np
import pytest

import tessera as ts
from tessera import ops

BROADCAST_CASES = [((5,), (5,)), ((3, 1), (1, 4)), ((2, 3, 7), (7,)), ((1,), (4, 1, 3)), ((6, 1, 5), (6, 9, 1)),
                   ((1, 1), (1, 1)), ((13, 1), (13, 17))]


def arr(rng, shape, dtype=np.float32, low=-3, high=3):
    if np.issubdtype(dtype, np.integer):
        return rng.integers(low, high, size=shape, dtype=dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def run(t):
    return t.realize().numpy()


@pytest.mark.parametrize("sa,sb", BROADCAST_CASES)
def test_binary_ops_broadcast_like_numpy(rng, sa, sb):
    a, b = arr(rng, sa), arr(rng, sb, low=0.5, high=3)
    ta, tb = ops.from_array(a), ops.from_array(b)
    for op, ref in [(ops.add, np.add), (ops.sub, np.subtract), (ops.mul, np.multiply), (ops.div, np.divide),
                    (ops.maximum, np.maximum), (ops.minimum, np.minimum)]:
        out = run(op(ta, tb))
        assert out.shape == np.broadcast_shapes(sa, sb)
        np.testing.assert_array_equal(out, ref(a, b), err_msg=op.__name__)
    np.testing.assert_allclose(run(ops.pow(tb, ta)), np.power(b, a), rtol=2e-6)
    np.testing.assert_array_equal(run(ops.lt(ta, tb)), a < b)
    np.testing.assert_array_equal(run(ops.where(ops.ge(ta, tb), ta, tb)), np.where(a >= b, a, b))


def test_shapes_that_do_not_broadcast_are_refused_with_both_shapes():
    with pytest.raises(ts.UserError, match=r"\[3, 4\] and \[3\]"):
        ops.add(ops.from_array(np.ones((3, 4), np.float32)), ops.from_array(np.ones(3, np.float32)))


def test_type_promotion_follows_torch():
    p = ops.promote_types
    assert p(ts.uint8, ts.int8) == ts.int16
    assert p(ts.int32, ts.float16) == ts.float16
    assert p(ts.float16, ts.bfloat16) == ts.float32
    assert p(ts.bool_, ts.uint8) == ts.uint8
    assert p(ts.int64, ts.int32) == ts.int64
    i = ops.from_array(np.arange(6, dtype=np.int32).reshape(2, 3))
    f = ops.from_array(np.full((3,), 0.5, np.float32))
    assert ops.add(i, f).type == ts.float32
    assert ops.div(i, i).type == ts.float32  # true division
    assert ops.add(i, 2).type == ts.int32 and ops.add(i, 2.5).type == ts.float32
    assert ops.sum(i, [1]).type == ts.int64
    np.testing.assert_array_equal(run(ops.add(i, 2.5)), np.arange(6).reshape(2, 3) + 2.5)


@pytest.mark.parametrize("shape", [(1,), (7,), (3, 1, 5), (2, 17)])
def test_unary_ops_match_numpy(rng, shape):
    a = arr(rng, shape)
    t = ops.from_array(a)
    exact = {"neg": -a, "abs": np.abs(a), "relu": np.maximum(a, 0), "clamp": np.clip(a, -1, 2)}
    for name, ref in exact.items():
        out = run(ops.clamp(t, -1, 2) if name == "clamp" else getattr(ops, name)(t))
        np.testing.assert_array_equal(out, ref, err_msg=name)
    pos = np.abs(a) + 0.1
    tp = ops.from_array(pos)
    close = [(ops.exp(t), np.exp(a)), (ops.log(tp), np.log(pos)), (ops.sqrt(tp), np.sqrt(pos)),
             (ops.rsqrt(tp), 1 / np.sqrt(pos)), (ops.tanh(t), np.tanh(a)), (ops.sigmoid(t), 1 / (1 + np.exp(-a))),
             (ops.silu(t), a / (1 + np.exp(-a)))]
    for got, ref in close:
        np.testing.assert_allclose(run(got), ref, rtol=2e-6, atol=1e-7)
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(run(ops.gelu(t)), 0.5 * a * (1 + erf(a / np.sqrt(2))), rtol=1e-5, atol=3e-7)
    tanh_form = 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a ** 3)))
    np.testing.assert_allclose(run(ops.gelu(t, approximate="tanh")), tanh_form, rtol=1e-5, atol=3e-7)


def test_integer_inputs_of_float_functions_compute_in_float32():
    i = ops.from_array(np.array([1, 4, 9], np.int32))
    out = run(ops.sqrt(i))
    assert out.dtype == np.float32 and out.tolist() == [1, 2, 3]


@pytest.mark.parametrize("shape,axes", [((5, 7), [1]), ((5, 7), [0]), ((3, 4, 5), [0, 2]), ((1, 9), [-1]),
                                        ((4, 1, 3), [1])])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions_match_numpy(rng, shape, axes, keepdim):
    a = arr(rng, shape, dtype=np.float64)
    t = ops.from_array(a)
    ax = tuple(axes)
    for op, ref in [(ops.sum, np.sum), (ops.mean, np.mean), (ops.amax, np.max), (ops.amin, np.min)]:
        out = run(op(t, axes, keepdim))
        expected = ref(a, axis=ax, keepdims=keepdim)
        assert out.shape == expected.shape
        np.testing.assert_allclose(out, expected, rtol=1e-12, err_msg=op.__name__)
    ints = arr(rng, shape, dtype=np.int16, low=-1000, high=1000)
    np.testing.assert_array_equal(run(ops.sum(ops.from_array(ints), axes, keepdim)),
                                  ints.astype(np.int64).sum(axis=ax, keepdims=keepdim))


@pytest.mark.parametrize("shape,axis", [((4, 10), 1), ((4, 10), 0), ((2, 3, 5), -1), ((1, 1), 1)])
def test_softmax_and_log_softmax(rng, shape, axis):
    a = arr(rng, shape, low=-20, high=20)
    t = ops.from_array(a)
    shifted = a - a.max(axis=axis, keepdims=True)
    ref = np.exp(shifted) / np.exp(shifted).sum(axis=axis, keepdims=True)
    np.testing.assert_allclose(run(ops.softmax(t, axis)), ref, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(run(ops.log_softmax(t, axis)), np.log(ref), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sa,sb", [((3, 5), (5, 4)), ((1, 1), (1, 1)), ((2, 7, 3), (2, 3, 6)), ((4, 2, 3), (3, 5)),
                                   ((1, 3, 8), (5, 8, 2)), ((17, 31), (31, 13))])
def test_matmul_with_batch_broadcasting(rng, sa, sb):
    a, b = arr(rng, sa, dtype=np.float64), arr(rng, sb, dtype=np.float64)
    out = run(ops.matmul(ops.from_array(a), ops.from_array(b)))
    np.testing.assert_allclose(out, np.matmul(a, b), rtol=1e-12, atol=1e-12)
    ia, ib = arr(rng, sa, dtype=np.int32, low=-9, high=9), arr(rng, sb, dtype=np.int32, low=-9, high=9)
    np.testing.assert_array_equal(run(ops.matmul(ops.from_array(ia), ops.from_array(ib))), np.matmul(ia, ib))


def test_matmul_refuses_mismatched_inner_sizes():
    with pytest.raises(ts.UserError, match="must match"):
        ops.matmul(ops.from_array(np.ones((2, 3))), ops.from_array(np.ones((4, 2))))


def test_linear_bias_relu_matches_loops_in_summation_order(rng):
    x, w, b = arr(rng, (6, 9)), arr(rng, (5, 9)), arr(rng, (5,))
    y = ops.relu(ops.linear(ops.from_array(x), ops.from_array(w), ops.from_array(b)))
    # float32 sums in the order k = 0, 1, ... as the update runs them.
    ref = np.broadcast_to(b, (6, 5)).copy()
    for k in range(9):
        ref = ref + x[:, k:k + 1] * w[:, k]
    np.testing.assert_array_equal(run(y), np.maximum(ref, 0))
    np.testing.assert_array_equal(run(y), ts.interpret(y.func, [5, 6]).numpy())


def test_casts_to_half_precision_round_to_nearest_even(rng):
    import ml_dtypes  # installed with jax

    a = arr(rng, (3, 37), low=-70000, high=70000)
    t = ops.from_array(a)
    with np.errstate(over="ignore"):  # beyond float16's range both give infinity
        np.testing.assert_array_equal(run(ops.cast(t, ts.float16)), a.astype(np.float16))
    back = run(ops.cast(ops.cast(t, ts.bfloat16), ts.float32))
    np.testing.assert_array_equal(back, a.astype(ml_dtypes.bfloat16).astype(np.float32))
    np.testing.assert_array_equal(run(ops.cast(t, ts.int16)), np.clip(np.trunc(a), -32768, 32767).astype(np.int16))
