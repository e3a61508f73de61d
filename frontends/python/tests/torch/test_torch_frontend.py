"""The PyTorch frontend end to end: torch.compile(backend="tessera"), @tessera.jit_torch, whole
models against eager, the eager fallback and its explanation, fallback=False's error with the
source line, recompiles for new sizes, training graphs, and zero-copy with torch tensors."""
import logging
import subprocess
import sys

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import tessera as ts
from tessera.torch_frontend import stats
from torch_models import BasicBlock, blur_x_blur_y


def randomize_batch_norms(model, gen):
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=gen))
            m.running_var.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
            m.weight.data.copy_(torch.randn(m.num_features, generator=gen))
            m.bias.data.copy_(torch.randn(m.num_features, generator=gen))


def assert_all_compiled(fn, *args):
    report = ts.explain(fn, *args)
    assert report.fallbacks == [], str(report)
    assert report.compiled_ops, str(report)
    return report


def test_backend_is_registered_through_torch_entry_point_and_exits_without_leaks():
    # A fresh interpreter that never imports tessera: torch finds the backend by its entry point.
    # At its exit, nothing Tessera made is left for nanobind to report as leaked.
    script = ("import torch\n"
              "f = torch.compile(lambda x: torch.relu(x) * 2, backend='tessera')\n"
              "x = torch.randn(37)\n"
              "assert torch.equal(f(x), torch.relu(x) * 2)\n"
              "import sys; assert 'tessera' in sys.modules\n"
              "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-3000:]
    assert "leaked" not in r.stderr, r.stderr[-3000:]


def test_mlp_matches_eager(gen):
    torch.manual_seed(1)
    mlp = nn.Sequential(nn.Linear(33, 64), nn.ReLU(), nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 10)).eval()
    x = torch.randn(7, 33, generator=gen)
    compiled = torch.compile(mlp, backend="tessera")
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), mlp(x), rtol=1e-4, atol=1e-5)
        assert_all_compiled(mlp, x)


def test_resnet_basic_block_matches_eager(gen):
    torch.manual_seed(2)
    block = BasicBlock(8).eval()
    randomize_batch_norms(block, gen)
    x = torch.randn(2, 8, 15, 13, generator=gen)
    compiled = ts.jit_torch(block, fallback=False)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), block(x), rtol=1e-4, atol=1e-4)


def test_transformer_encoder_layer_matches_eager(gen):
    torch.manual_seed(3)
    layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True).eval()
    x = torch.randn(3, 11, 32, generator=gen)
    compiled = ts.jit_torch(layer, fallback=False)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), layer(x), rtol=1e-4, atol=1e-4)
    norm_first = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True, norm_first=True,
                                            activation="gelu").eval()
    with torch.no_grad():
        torch.testing.assert_close(ts.jit_torch(norm_first, fallback=False)(x), norm_first(x), rtol=1e-4, atol=1e-4)


def test_blur_written_in_torch_matches_eager(gen):
    img = torch.rand(3, 67, 45, generator=gen)
    compiled = ts.jit_torch(blur_x_blur_y, fallback=False)
    torch.testing.assert_close(compiled(img), blur_x_blur_y(img), rtol=1e-6, atol=1e-6)
    report = assert_all_compiled(blur_x_blur_y, img)
    assert sum(g.partitions for g in report.graphs) == 1   # the whole blur is one Tessera pipeline


def with_unsupported_op(x):
    y = torch.relu(x) * 2
    z = torch.cumsum(y, dim=1)   # no Tessera lowering: runs in eager
    return torch.tanh(z) + 1


def test_unsupported_op_falls_back_to_eager_and_explain_names_it(gen):
    x = torch.randn(4, 9, generator=gen)
    compiled = torch.compile(with_unsupported_op, backend="tessera")
    torch.testing.assert_close(compiled(x), with_unsupported_op(x))
    report = ts.explain(with_unsupported_op, x)
    (fb,) = report.fallbacks
    assert fb.op == "aten.cumsum.default" and "no Tessera lowering" in fb.reason
    assert "test_torch_frontend.py" in fb.source and "torch.cumsum" in fb.source
    assert sum(g.partitions for g in report.graphs) == 2   # relu*2 before, tanh+1 after
    assert "aten.cumsum.default" in str(report)


def test_fallback_false_raises_with_op_and_source_line(gen):
    compiled = ts.jit_torch(with_unsupported_op, fallback=False)
    with pytest.raises(ts.UserError, match=r"aten\.cumsum\.default.*test_torch_frontend\.py:\d+ in "
                                           r"with_unsupported_op: z = torch\.cumsum"):
        compiled(torch.randn(4, 9, generator=gen))


def test_decorator_with_compile_options(gen):
    @ts.jit_torch(compile_options={"target": "cpu", "fast_math": False})
    def conv_bias_relu(x, w, b):
        return torch.relu(F.conv2d(x, w, b, padding=1))

    x, w, b = (torch.randn(1, 3, 17, 19, generator=gen), torch.randn(5, 3, 3, 3, generator=gen),
               torch.randn(5, generator=gen))
    torch.testing.assert_close(conv_bias_relu(x, w, b), torch.relu(F.conv2d(x, w, b, padding=1)),
                               rtol=1e-4, atol=1e-4)
    with pytest.raises(ts.UserError, match='target "cuda" is not supported'):
        ts.jit_torch(lambda x: x, compile_options={"target": "cuda"})
    with pytest.raises(ts.UserError, match="no_such_option"):
        ts.jit_torch(lambda x: x + 1, compile_options={"no_such_option": 1})(torch.ones(3))


def test_new_sizes_recompile_with_a_counter_and_a_log_line(gen, caplog):
    @ts.jit_torch
    def f(x, b):
        return torch.relu(x @ b) + 1

    b = torch.randn(16, 8, generator=gen)
    with caplog.at_level(logging.WARNING, logger="tessera.torch"):
        for rows in [5, 9, 13, 9]:
            x = torch.randn(rows, 16, generator=gen)
            torch.testing.assert_close(f(x, b), torch.relu(x @ b) + 1, rtol=1e-5, atol=1e-5)
    s = stats()
    assert s["compiles"] == 3   # 5, 9, 13; the second 9 reuses its compile
    assert s["recompiles"] >= 1
    assert any("recompiling" in r.getMessage() and "new input sizes" in r.getMessage() for r in caplog.records)


def test_a_weight_changed_in_place_or_replaced_is_read_again(gen):
    # The kernel keeps a transposed copy of a linear layer's weight while the weight is unchanged.
    torch.manual_seed(5)
    lin = nn.Linear(9, 6).eval()
    compiled = torch.compile(lin, backend="tessera")
    x = torch.randn(4, 9, generator=gen)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), lin(x), rtol=1e-5, atol=1e-5)
        lin.weight.mul_(-2)                      # in place: a new version of the same tensor
        torch.testing.assert_close(compiled(x), lin(x), rtol=1e-5, atol=1e-5)
        lin.weight = nn.Parameter(torch.randn(6, 9, generator=gen))   # another tensor
        torch.testing.assert_close(compiled(x), lin(x), rtol=1e-5, atol=1e-5)
    with torch.inference_mode():                 # no version counter: copied on every call
        torch.testing.assert_close(compiled(x), lin(x), rtol=1e-5, atol=1e-5)


def test_training_graphs_give_eager_gradients(gen):
    torch.manual_seed(4)
    mlp = nn.Sequential(nn.Linear(12, 20), nn.ReLU(), nn.Linear(20, 3))
    x = torch.randn(6, 12, generator=gen)
    compiled = torch.compile(mlp, backend="tessera")
    compiled(x).square().sum().backward()
    got = [p.grad.clone() for p in mlp.parameters()]
    mlp.zero_grad()
    mlp(x).square().sum().backward()
    for g, e in zip(got, [p.grad for p in mlp.parameters()]):
        torch.testing.assert_close(g, e, rtol=1e-4, atol=1e-5)
    assert stats()["partitions"] >= 2   # forward and backward graphs both compiled


def test_a_graph_of_one_partition_is_called_as_its_kernel_with_scalars_and_inputs_returned(gen):
    def f(x, s):
        y = x * s + 1
        return y, y.sum(), x    # a 0-dimensional result, and an input returned as it is
    x = torch.randn(5, 3, generator=gen)
    s = torch.tensor(2.5)       # a 0-dimensional operand
    report = assert_all_compiled(f, x, s)
    assert [g.one_kernel for g in report.graphs] == [True], str(report)
    compiled = torch.compile(f, backend="tessera")
    for _ in range(2):           # the second call runs what the first compiled
        got = compiled(x, s)
        expected = f(x, s)
        assert len(got) == 3 and got[1].dim() == 0 and got[2] is x
        for g, e in zip(got, expected):
            torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-5)


def test_outputs_bounded_to_their_static_shapes_leave_the_model_no_region_parameters(gen):
    """A partition's sizes are static: each output is bounded to its shape (bound_to_shapes), and
    every region of the pipeline is a constant box instead of Region parameters of the model
    (45 of them in a transformer layer, which took isl 2.4 times as long)."""
    from tessera import ops
    from tessera.torch_frontend.compiler import bound_to_shapes
    x = torch.randn(6, 10, generator=gen)

    def compiled(bounded):
        buf = ts.InputBuffer(ts.float32, 2, "x")
        f = ops.materialize(ops.softmax(ops.input(buf, [6, 10]), 1)).func
        if bounded:
            bound_to_shapes([f], [[6, 10]])
        buf.set(x.numpy())
        return ts.Pipeline([f]).compile(ts.Target.host())

    unbounded, bounded = compiled(False), compiled(True)
    assert "rg_" in unbounded.compiler_ir("model")
    assert "rg_" not in bounded.compiler_ir("model")
    got = bounded.realize([10, 6]).numpy()     # dimension 0 innermost
    torch.testing.assert_close(torch.from_numpy(got), torch.softmax(x, 1), rtol=1e-6, atol=1e-6)


def test_a_graph_with_eager_nodes_between_partitions_is_not_one_kernel(gen):
    def f(x):
        return torch.cumsum(torch.relu(x) * 2, 0) + 1   # cumsum has no lowering: two partitions
    x = torch.randn(9, generator=gen)
    report = ts.explain(f, x)
    assert report.fallbacks and [g.one_kernel for g in report.graphs] == [False], str(report)
    torch.testing.assert_close(torch.compile(f, backend="tessera")(x), f(x))


def test_torch_tensors_go_in_and_come_out_without_copies():
    x = ts.Var("x")
    t = torch.arange(12, dtype=torch.float32)
    inp = ts.InputBuffer(ts.float32, 1, "t")
    inp.set(t)
    assert inp.get().data_address() == t.data_ptr()
    f = ts.Func("f")
    f[x] = inp[x] * 2
    out = torch.zeros(12)
    address = out.data_ptr()
    ts.compile(f).realize(out)              # computed into the tensor's own memory
    assert out.data_ptr() == address and torch.equal(out, t * 2)
    back = torch.from_dlpack(f.realize([12]))
    assert torch.equal(back, t * 2)


def test_a_freed_large_output_is_reused_and_one_still_held_is_not(gen):
    # Outputs of at least POOLED_BYTES come from the runtime's buffer pool and return to it when
    # torch frees them, so that the next call writes mapped pages. Memory a tensor (or a view of
    # it) still holds must never be handed out again.
    def f(x):
        return torch.relu(x) * 2 + 1
    x = torch.randn(3, 129, 257, generator=gen)       # 397,548 bytes: pooled
    assert x.numel() * 4 >= ts.POOLED_BYTES
    compiled = torch.compile(f, backend="tessera")
    with torch.no_grad():
        first = compiled(x)
        torch.testing.assert_close(first, f(x))
        assert first.is_contiguous() and first.dtype == torch.float32 and first.shape == x.shape
        address = first.data_ptr()
        held = compiled(x)                             # `first` is alive: other memory
        assert held.data_ptr() != address
        view = first[1]                                # a view keeps the storage alive
        del first
        again = compiled(x + 1)
        assert again.data_ptr() not in (address, held.data_ptr())
        torch.testing.assert_close(view, f(x)[1])      # the held memory was not written
        torch.testing.assert_close(again, f(x + 1))
        del view
        before = ts.buffer_pool_stats()["reused"]
        reused = compiled(x)                           # now the first output's memory is free
        assert ts.buffer_pool_stats()["reused"] == before + 1
        assert reused.data_ptr() == address
        torch.testing.assert_close(reused, f(x))
        torch.testing.assert_close(held, f(x))


def test_pooled_outputs_of_each_element_type_match_eager(gen):
    x = torch.randn(70000, generator=gen)
    for dtype in [torch.float64, torch.int32, torch.int16, torch.uint8, torch.bool, torch.float16, torch.bfloat16]:
        def f(v):
            return (v.abs() * 3).to(dtype) if dtype != torch.bool else v > 0   # (no negative to unsigned)
        got = torch.compile(f, backend="tessera", dynamic=False)(x)
        assert got.dtype == dtype and got.is_contiguous()
        torch.testing.assert_close(got, f(x), rtol=1e-2, atol=1e-2)
        torch._dynamo.reset()


def test_a_pooled_capsule_nobody_consumes_returns_its_memory():
    ts.release_buffer_pool()
    capsule = ts.pooled_output([300, 300], 2, 32)
    assert ts.buffer_pool_stats()["cached_bytes"] == 0
    del capsule
    assert ts.buffer_pool_stats()["cached_bytes"] == 360000
    with pytest.raises(ts.Error, match="unsupported element type"):
        ts.pooled_output([4], 2, 12)
    with pytest.raises(ts.Error, match="negative extent"):
        ts.pooled_output([4, -1], 2, 32)
