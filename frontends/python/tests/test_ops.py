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


def test_var_layer_norm_and_batch_norm(rng):
    a = arr(rng, (4, 6, 5), dtype=np.float64)
    t = ops.from_array(a)
    np.testing.assert_allclose(run(ops.var(t, [1, 2])), a.var(axis=(1, 2), ddof=1), rtol=1e-12)
    np.testing.assert_allclose(run(ops.var(t, [0], 0, True)), a.var(axis=0, ddof=0, keepdims=True), rtol=1e-12)
    w, b = arr(rng, (6, 5), dtype=np.float64), arr(rng, (6, 5), dtype=np.float64)
    m = a.mean(axis=(1, 2), keepdims=True)
    v = a.var(axis=(1, 2), keepdims=True)
    ref = (a - m) / np.sqrt(v + 1e-5) * w + b
    np.testing.assert_allclose(run(ops.layer_norm(t, 2, ops.from_array(w), ops.from_array(b))), ref, rtol=1e-10)
    x = arr(rng, (2, 3, 4, 5))
    rm, rv = arr(rng, (3,)), arr(rng, (3,), low=0.5, high=2)
    g, be = arr(rng, (3,)), arr(rng, (3,))
    got = run(ops.batch_norm(ops.from_array(x), ops.from_array(rm), ops.from_array(rv), ops.from_array(g),
                             ops.from_array(be)))
    c = (slice(None), None, None)
    ref = (x - rm[c]) / np.sqrt(rv[c] + 1e-5) * g[c] + be[c]
    np.testing.assert_allclose(got, ref, rtol=2e-6, atol=2e-6)


def test_layout_ops_match_numpy(rng):
    a = arr(rng, (2, 3, 5))
    t = ops.from_array(a)
    np.testing.assert_array_equal(run(ops.permute(t, [2, 0, 1])), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(run(ops.transpose(t, -1, 0)), a.swapaxes(-1, 0))
    np.testing.assert_array_equal(run(ops.reshape(t, [5, -1])), a.reshape(5, -1))
    np.testing.assert_array_equal(run(ops.reshape(ops.permute(t, [2, 1, 0]), [3, 10])), a.transpose(2, 1, 0).reshape(3, 10))
    np.testing.assert_array_equal(run(ops.flatten(t, 1)), a.reshape(2, 15))
    np.testing.assert_array_equal(run(ops.unsqueeze(t, 1)), a[:, None])
    np.testing.assert_array_equal(run(ops.squeeze(ops.unsqueeze(t, -1), -1)), a)
    np.testing.assert_array_equal(run(ops.expand(ops.slice(t, 1, 1, 2), [4, -1, 3, 5])),
                                  np.broadcast_to(a[:, 1:2], (4, 2, 3, 5)))
    for start, end, step in [(1, 4, 2), (-3, 100, 1), (0, 5, 3), (4, 2, 1), (-100, -1, 2)]:
        np.testing.assert_array_equal(run(ops.slice(t, 2, start, end, step)), a[:, :, start:end:step])
    b = arr(rng, (2, 1, 5)).astype(np.float64)
    np.testing.assert_array_equal(run(ops.cat([t, ops.from_array(b), t], 1)), np.concatenate([a, b, a], axis=1))
    np.testing.assert_array_equal(run(ops.pad(t, [(1, 0), (2, 3)], -1.5)),
                                  np.pad(a, ((0, 0), (1, 0), (2, 3)), constant_values=-1.5))
    with pytest.raises(ts.UserError, match="do not fill"):
        ops.reshape(t, [7, 4])
    with pytest.raises(ts.UserError, match="differs"):
        ops.cat([t, ops.from_array(arr(rng, (2, 4, 4)))], 1)


def test_a_small_transformer_block_matches_numpy(rng):
    """Attention over a [batch, seq, width] input and a GELU MLP, each with a residual and a
    layer norm: the ops compose into one pipeline."""
    bsz, seq, width, heads = 2, 7, 12, 3
    hd = width // heads
    xa = arr(rng, (bsz, seq, width), low=-1, high=1)
    wq, wk, wv, wo = (arr(rng, (width, width), low=-0.3, high=0.3) for _ in range(4))
    w1, w2 = arr(rng, (2 * width, width), low=-0.3, high=0.3), arr(rng, (width, 2 * width), low=-0.3, high=0.3)
    x = ops.from_array(xa)
    W = {n: ops.from_array(v) for n, v in dict(wq=wq, wk=wk, wv=wv, wo=wo, w1=w1, w2=w2).items()}

    def split(t):  # [b, s, w] -> [b, h, s, d]
        return ops.permute(ops.reshape(t, [bsz, seq, heads, hd]), [0, 2, 1, 3])

    q, k, v = split(ops.linear(x, W["wq"])), split(ops.linear(x, W["wk"])), split(ops.linear(x, W["wv"]))
    scores = ops.mul(ops.matmul(q, ops.transpose(k, -1, -2)), 1 / np.sqrt(hd))
    attn = ops.matmul(ops.softmax(scores, -1), v)
    merged = ops.reshape(ops.permute(attn, [0, 2, 1, 3]), [bsz, seq, width])
    h = ops.layer_norm(ops.add(x, ops.linear(merged, W["wo"])), 1)
    y = ops.layer_norm(ops.add(h, ops.linear(ops.gelu(ops.linear(h, W["w1"])), W["w2"])), 1)

    def ln(z):
        return (z - z.mean(-1, keepdims=True)) / np.sqrt(z.var(-1, keepdims=True) + 1e-5)

    def sp(z):
        return z.reshape(bsz, seq, heads, hd).transpose(0, 2, 1, 3)

    qn, kn, vn = sp(xa @ wq.T), sp(xa @ wk.T), sp(xa @ wv.T)
    s = qn @ kn.transpose(0, 1, 3, 2) / np.sqrt(hd)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    hn = ln(xa + (p @ vn).transpose(0, 2, 1, 3).reshape(bsz, seq, width) @ wo.T)
    u = hn @ w1.T
    erf = np.vectorize(math.erf)
    ref = ln(hn + (0.5 * u * (1 + erf(u / np.sqrt(2)))) @ w2.T)
    np.testing.assert_allclose(run(y), ref, rtol=1e-4, atol=1e-4)


def conv2d_reference(x, w, b, stride, padding, dilation, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow), np.float64)
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(kh):
            for j in range(kw):
                win = xp[:, g * cg:(g + 1) * cg, i * dilation[0]:i * dilation[0] + stride[0] * (oh - 1) + 1:stride[0],
                         j * dilation[1]:j * dilation[1] + stride[1] * (ow - 1) + 1:stride[1]]
                out[:, oc] += np.einsum("nchw,c->nhw", win, w[oc, :, i, j])
    return out + (b[None, :, None, None] if b is not None else 0)


@pytest.mark.parametrize("c,o,hw,k,stride,padding,dilation,groups", [
    (3, 4, (7, 9), (3, 3), (1, 1), (1, 1), (1, 1), 1),
    (4, 6, (11, 8), (3, 2), (2, 1), (0, 1), (1, 2), 2),
    (5, 5, (6, 6), (3, 3), (1, 1), (1, 1), (1, 1), 5),   # depthwise
    (2, 3, (5, 13), (1, 1), (2, 3), (0, 0), (1, 1), 1),
])
@pytest.mark.parametrize("channels_last", [False, True])
def test_conv2d_matches_a_reference(rng, c, o, hw, k, stride, padding, dilation, groups, channels_last):
    x = arr(rng, (2, c) + hw, dtype=np.float64)
    w = arr(rng, (o, c // groups) + k, dtype=np.float64)
    b = arr(rng, (o,), dtype=np.float64)
    ref = conv2d_reference(x, w, b, stride, padding, dilation, groups)
    xin = x.transpose(0, 2, 3, 1).copy() if channels_last else x
    got = run(ops.conv2d(ops.from_array(xin), ops.from_array(w), ops.from_array(b), stride, padding, dilation, groups,
                         channels_last))
    if channels_last:
        got = got.transpose(0, 3, 1, 2)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


def test_pools_match_a_reference(rng):
    x = arr(rng, (2, 3, 9, 7), dtype=np.float64)
    t = ops.from_array(x)
    # max_pool2d kernel 3, stride 2, padding 1
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    oh, ow = (9 + 2 - 3) // 2 + 1, (7 + 2 - 3) // 2 + 1
    ref = np.array([[[[xp[n, c, 2 * i:2 * i + 3, 2 * j:2 * j + 3].max() for j in range(ow)] for i in range(oh)]
                     for c in range(3)] for n in range(2)])
    np.testing.assert_array_equal(run(ops.max_pool2d(t, (3, 3), (2, 2), (1, 1))), ref)
    ref_avg = x[:, :, :8, :6].reshape(2, 3, 4, 2, 3, 2).mean(axis=(3, 5))
    np.testing.assert_allclose(run(ops.avg_pool2d(t, (2, 2))), ref_avg, rtol=1e-12)
    # avg_pool2d kernel 3, stride 2, padding 1, counting only the elements inside the input
    ref_in = np.array([[[[x[n, c, max(2 * i - 1, 0):2 * i + 2, max(2 * j - 1, 0):2 * j + 2].mean() for j in range(ow)]
                         for i in range(oh)] for c in range(3)] for n in range(2)])
    np.testing.assert_allclose(run(ops.avg_pool2d(t, (3, 3), (2, 2), (1, 1), count_include_pad=False)), ref_in,
                               rtol=1e-12)
    for oh, ow in [(1, 1), (4, 3), (9, 7), (5, 2)]:
        ref = np.zeros((2, 3, oh, ow))
        for i in range(oh):
            for j in range(ow):
                h0, h1 = (i * 9) // oh, -((-(i + 1) * 9) // oh)
                w0, w1 = (j * 7) // ow, -((-(j + 1) * 7) // ow)
                ref[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
        np.testing.assert_allclose(run(ops.adaptive_avg_pool2d(t, (oh, ow))), ref, rtol=1e-12, err_msg=str((oh, ow)))


def test_resnet_basic_block_matches_a_reference(rng):
    """conv-bn-relu, conv-bn, plus the input, relu: a ResNet basic block in inference."""
    c = 4
    x = arr(rng, (1, c, 10, 10), dtype=np.float64)
    ws = [arr(rng, (c, c, 3, 3), dtype=np.float64, low=-0.5, high=0.5) for _ in range(2)]
    stats = [(arr(rng, (c,), dtype=np.float64), arr(rng, (c,), dtype=np.float64, low=0.5, high=2),
              arr(rng, (c,), dtype=np.float64), arr(rng, (c,), dtype=np.float64)) for _ in range(2)]
    t = ops.from_array(x)

    def conv_bn(inp, w, st):
        m, v, g, b = (ops.from_array(a) for a in st)
        return ops.batch_norm(ops.conv2d(inp, ops.from_array(w), None, (1, 1), (1, 1)), m, v, g, b)

    y = ops.relu(ops.add(conv_bn(ops.relu(conv_bn(t, ws[0], stats[0])), ws[1], stats[1]), t))

    def ref_conv_bn(inp, w, st):
        m, v, g, b = (a[None, :, None, None] for a in st)
        return (conv2d_reference(inp, w, None, (1, 1), (1, 1), (1, 1), 1) - m) / np.sqrt(v + 1e-5) * g + b

    ref = np.maximum(ref_conv_bn(np.maximum(ref_conv_bn(x, ws[0], stats[0]), 0), ws[1], stats[1]) + x, 0)
    np.testing.assert_allclose(run(y), ref, rtol=1e-10, atol=1e-12)


def test_elementwise_chains_are_inline_and_materialize_makes_a_stage(rng):
    a = arr(rng, (4, 9))
    t = ops.from_array(a)
    chain = ops.relu(ops.mul(ops.slice(t, 1, 1, 8), ops.full([1], 0.5, ts.float32)))
    assert chain.is_inline
    shared = ops.materialize(chain)
    assert not shared.is_inline
    np.testing.assert_array_equal(run(ops.add(shared, shared)), 2 * np.maximum(a[:, 1:8] * 0.5, 0))
    np.testing.assert_array_equal(run(chain), np.maximum(a[:, 1:8] * 0.5, 0))
    np.testing.assert_array_equal(run(ops.full([2, 3], 7, ts.int16)), np.full((2, 3), 7, np.int16))


@pytest.mark.parametrize("src,dst", [((8, 12, 6), (8, 12, 2, 3)), ((8, 12, 2, 3), (8, 12, 6)), ((6, 4), (4, 6)),
                                     ((2, 3, 4), (4, 3, 2)), ((1, 6, 1), (3, 1, 2)), ((24,), (2, 3, 4)),
                                     ((2, 1, 3, 4), (6, 1, 4, 1)), ((5, 1), (1, 5)), ((3, 4, 5), (-1,)),
                                     ((7, 6, 5), (7, 30))])
def test_reshape_by_runs_of_axes_matches_numpy(rng, src, dst):
    a = arr(rng, src)
    t = ops.reshape(ops.from_array(a), list(dst))
    np.testing.assert_array_equal(run(t), a.reshape(dst))
    np.testing.assert_array_equal(run(ops.add(t, ops.full([1], 1.0, ts.float32))), a.reshape(dst) + 1)
    # Splits keep every axis's position affine: the reshape is read inline.
    splits_only = (src, dst) in [((8, 12, 6), (8, 12, 2, 3)), ((24,), (2, 3, 4)), ((5, 1), (1, 5)), ((1, 6, 1), (3, 1, 2))]
    assert t.is_inline == splits_only
