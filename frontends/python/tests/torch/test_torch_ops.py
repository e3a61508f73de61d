"""Every ATen op the PyTorch frontend lowers, compiled by Tessera with no eager fallback allowed
(fallback=False) and checked against torch eager at random shapes: broadcasting edge cases, odd
sizes and size-1 axes."""
import math

import pytest
import torch
import torch.nn.functional as F

import tessera as ts


def randn(gen, *shape, dtype=torch.float32):
    return torch.randn(*shape, generator=gen).to(dtype)


def check(fn, *args, rtol=1e-5, atol=1e-5):
    """fn compiled by Tessera alone (fallback=False) matches eager, and every op was compiled."""
    compiled = ts.jit_torch(fn, fallback=False)
    with torch.no_grad():
        expected = fn(*args)
        got = compiled(*args)
    if isinstance(expected, torch.Tensor):
        expected, got = [expected], [got]
    for e, g in zip(expected, got):
        assert g.shape == e.shape and g.dtype == e.dtype
        if e.dtype.is_floating_point:
            torch.testing.assert_close(g, e, rtol=rtol, atol=atol)
        else:
            assert torch.equal(g, e)
    from tessera.torch_frontend import stats
    assert stats()["partitions"] >= 1 and stats()["fallback_nodes"] == 0


BROADCAST = [((5,), (5,)), ((3, 1), (1, 4)), ((2, 3, 7), (7,)), ((1,), (4, 1, 3)), ((6, 1, 5), (6, 9, 1)),
             ((13, 1), (13, 17))]


@pytest.mark.parametrize("sa,sb", BROADCAST)
def test_binary_ops_broadcast_like_torch(gen, sa, sb):
    a, b = randn(gen, *sa), randn(gen, *sb).abs() + 0.5
    check(lambda a, b: (a + b, a - b, a * b, a / b, torch.maximum(a, b), torch.minimum(a, b),
                        torch.where(a > b, a, b), (a <= b), b ** a, a + 2.5 * b), a, b)


def test_scalar_operands_promote_like_torch(gen):
    i = torch.randint(-5, 5, (3, 7), generator=gen, dtype=torch.int32)
    f = randn(gen, 3, 7)
    check(lambda i, f: (i + 2, i * 3, i + 0.5, i / 2, f - 1, 2 - f, f * 0.25, i > 0, f == f, i + f,
                        torch.where(i > 0, f, 0.0)), i, f)


def test_div_with_a_rounding_mode_matches_torch(gen):
    # Every sign combination of integer operands, exact and inexact quotients, both modes; and
    # floats rounded toward zero.
    i = torch.arange(-9, 10, dtype=torch.int32).reshape(19, 1).expand(19, 6).contiguous()
    j = torch.tensor([-4, -3, -1, 1, 2, 5], dtype=torch.int32)
    f = randn(gen, 5, 7) * 10
    g = randn(gen, 7).abs() + 0.5
    check(lambda i, j, f, g: (torch.div(i, j, rounding_mode="trunc"), torch.div(i, j, rounding_mode="floor"), i // j,
                              torch.div(i, 3, rounding_mode="floor"), torch.div(i, -2, rounding_mode="trunc"),
                              torch.div(f, g, rounding_mode="trunc"), torch.div(f, -g, rounding_mode="trunc"),
                              i.to(torch.int64) // 4), i, j, f, g)


def test_float_floor_division_runs_in_eager(gen):
    f, g = randn(gen, 4, 5) * 10, randn(gen, 5).abs() + 0.5
    compiled = ts.jit_torch(lambda f, g: torch.div(f, g, rounding_mode="floor") + 1)
    with torch.no_grad():
        torch.testing.assert_close(compiled(f, g), torch.div(f, g, rounding_mode="floor") + 1)
    from tessera.torch_frontend import stats
    assert stats()["fallback_nodes"] >= 1
    reasons = ts.explain(lambda f, g: torch.div(f, g, rounding_mode="floor"), f, g)
    assert "rounding_mode='floor' of floating-point tensors" in str(reasons)


@pytest.mark.parametrize("shape", [(1,), (7,), (3, 1, 5), (2, 17)])
def test_unary_ops_match_torch(gen, shape):
    a = randn(gen, *shape)
    check(lambda a: (-a, a.abs(), a.exp(), (a.abs() + 0.1).log(), (a.abs() + 0.1).sqrt(),
                     (a.abs() + 0.1).rsqrt(), a.tanh(), a.sigmoid(), a.relu(), F.silu(a), F.gelu(a),
                     F.gelu(a, approximate="tanh"), a.clamp(-1, 2), a.clamp(min=0.5), F.hardtanh(a),
                     a ** 2, a ** 3, (a.abs() + 0.1) ** 0.5, (a.abs() + 0.1) ** 1.7, 1 / (a.abs() + 1),
                     a.to(torch.float64), (a * 10).to(torch.int32), a.to(torch.float16)), a, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("shape,dims", [((5, 7), [1]), ((3, 4, 5), [0, 2]), ((1, 9), [0]), ((2, 1, 3), [1]),
                                        ((11,), [0])])
def test_reductions_match_torch(gen, shape, dims):
    a = randn(gen, *shape)
    check(lambda a: (a.sum(dims), a.sum(dims, keepdim=True), a.mean(dims), a.amax(dims), a.amin(dims, keepdim=True),
                     a.var(dims, correction=0, keepdim=True), a.sum() * 2, a.mean()), a)
    if math.prod(shape[d] for d in dims) > 1:   # else var has no degrees of freedom (next test)
        check(lambda a: a.var(dims), a)


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch warns that var has no degrees of freedom
def test_var_without_degrees_of_freedom_runs_in_eager_and_gives_nan(gen):
    a = randn(gen, 4, 1)
    report = ts.explain(lambda a: a.var(1) + 1, a)
    assert [f.reason for f in report.fallbacks] == ["var with no degrees of freedom (torch gives NaN)"]
    assert torch.isnan(torch.compile(lambda a: a.var(1) + 1, backend="tessera")(a)).all()


def test_masks_and_constants_match_torch(gen):
    a = randn(gen, 3, 7)
    check(lambda a: (torch.full_like(a, 2.5), torch.logical_not(a > 0), (a > 1).any(-1), (a > 1).any(0, keepdim=True),
                     (a > 2).any(), torch.ones_like(a) + a, torch.logical_not(a)), a)


@pytest.mark.parametrize("shape", [(4, 10), (2, 3, 17), (1, 1)])
def test_softmax_and_norms_match_torch(gen, shape):
    a = randn(gen, *shape)
    w, b = randn(gen, shape[-1]), randn(gen, shape[-1])
    check(lambda a, w, b: (a.softmax(-1), a.log_softmax(-1), a.softmax(0), F.layer_norm(a, a.shape[-1:], w, b),
                           F.layer_norm(a, a.shape[-1:])), a, w, b)


def test_batch_norm_inference_matches_torch(gen):
    x = randn(gen, 2, 5, 7, 3)
    mean, var, w, b = randn(gen, 5), randn(gen, 5).abs() + 0.5, randn(gen, 5), randn(gen, 5)
    check(lambda x: F.batch_norm(x, mean, var, w, b, training=False, eps=1e-3), x)


@pytest.mark.parametrize("m,k,n", [(1, 1, 1), (7, 13, 5), (33, 17, 65)])
def test_linear_algebra_matches_torch(gen, m, k, n):
    a, b = randn(gen, m, k), randn(gen, k, n)
    w, bias = randn(gen, n, k), randn(gen, n)
    ba, bb = randn(gen, 3, m, k), randn(gen, 3, k, n)
    check(lambda a, b, w, bias, ba, bb: (a @ b, F.linear(a, w, bias), F.linear(a, w), torch.bmm(ba, bb),
                                         torch.addmm(bias, a, w.t(), beta=0.5, alpha=2.0), ba @ b), a, b, w, bias, ba, bb,
          rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1), dict(dilation=2, padding=2), dict(groups=2),
                                dict(stride=(1, 2), padding=(0, 1))])
def test_conv2d_matches_torch(gen, kw):
    x = randn(gen, 2, 4, 11, 9)
    w = randn(gen, 6, 4 // kw.get("groups", 1), 3, 3)
    b = randn(gen, 6)
    check(lambda x, w, b: torch.relu(F.conv2d(x, w, b, **kw)), x, w, b, rtol=1e-4, atol=1e-4)


def test_depthwise_conv_and_channels_last_input(gen):
    x = randn(gen, 1, 5, 8, 8).to(memory_format=torch.channels_last)
    w = randn(gen, 5, 1, 3, 3)
    check(lambda x, w: F.conv2d(x, w, padding=1, groups=5), x, w, rtol=1e-4, atol=1e-4)


def test_pooling_matches_torch(gen):
    x = randn(gen, 2, 3, 13, 10)
    check(lambda x: (F.max_pool2d(x, 3, 2, 1), F.max_pool2d(x, 2), F.avg_pool2d(x, 3, 2, 1), F.avg_pool2d(x, (2, 3)),
                     F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), F.avg_pool2d(x, (4, 2), 1, (2, 1), count_include_pad=False),
                     F.adaptive_avg_pool2d(x, (4, 3)), F.adaptive_avg_pool2d(x, 1)), x)


def test_layout_ops_match_torch(gen):
    a = randn(gen, 2, 3, 5)
    b = randn(gen, 2, 4, 5)
    check(lambda a, b: (a.reshape(6, 5), a.view(-1), a.permute(2, 0, 1), a.transpose(0, 2), a.t() if a.dim() == 2 else a,
                        a[:, 1:, ::2], a[..., -2:], a[1], a.unsqueeze(1), a[:1].squeeze(0), a.expand(4, 2, 3, 5),
                        torch.cat([a, b], 1), F.pad(a, (1, 2, 0, 1)), F.pad(a, (2, 2), value=1.5), a.flatten(1),
                        a.split([1, 2], 1)[1], (a.permute(2, 0, 1) + 1).reshape(5, 6)), a, b)


def test_inputs_with_strides_and_broadcast_views(gen):
    a = randn(gen, 6, 4)
    col = randn(gen, 6, 1)
    check(lambda at, c: at * 2 + c.expand(6, 4).t(), a.t(), col)
