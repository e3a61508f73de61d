"""The PyTorch frontend: a torch.compile backend, the @tessera.jit_torch decorator and
tessera.explain (docs/python.md, "PyTorch").

    model = torch.compile(model, backend="tessera")       # registered through torch's entry point

    @tessera.jit_torch(compile_options={"target": "cpu"})
    def f(x, w, b):
        return torch.relu(torch.nn.functional.linear(x, w, b))

dynamo captures the function, aot_autograd lowers it to ATen with torch's core decompositions, and
compiler.py compiles every supported partition with Tessera; the rest runs in eager PyTorch.
Training graphs go through the same path: aot_autograd's forward and backward graphs are both
compiled, backward ops without a lowering run in eager.
"""
import atexit
import functools
import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch._decomp import core_aten_decompositions
from torch._dynamo.backends.common import aot_autograd

from .. import _tessera as _ts
from .compiler import GraphReport, CompiledGraph, Options, count, reset_stats, stats  # noqa: F401

__all__ = ["backend", "make_backend", "jit_torch", "explain", "stats", "reset_stats"]


def _transformer_encoder_layer(src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, use_gelu,
                               norm_first, eps, norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2,
                               ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2, mask=None, mask_type=None):
    """nn.TransformerEncoderLayer's inference fast path (aten._transformer_encoder_layer_fwd, taken
    in eval mode without grad), as the layer it stands for: self-attention, residual, layer norm,
    feed-forward, residual, layer norm. Traced into ATen like any other code, so its linears,
    matmuls, softmax and norms are lowered and fused as usual. With a mask it stays one op."""
    if mask is not None:
        return NotImplemented
    x = src if src.dim() == 3 else src.unsqueeze(0)
    b, s, e = x.shape
    h = num_heads
    d = e // h

    def attention(y):
        q, k, v = F.linear(y, qkv_weight, qkv_bias).split(e, dim=-1)
        q, k, v = (t.reshape(b, s, h, d).transpose(1, 2) for t in (q, k, v))   # [b, h, s, d]
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d))
        ctx = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, s, e)
        return F.linear(ctx, proj_weight, proj_bias)

    def feed_forward(y):
        hidden = F.linear(y, ffn_weight_1, ffn_bias_1)
        return F.linear(F.gelu(hidden) if use_gelu else F.relu(hidden), ffn_weight_2, ffn_bias_2)

    def norm(y, w, bias):
        return F.layer_norm(y, (e,), w, bias, eps)

    if norm_first:
        x = x + attention(norm(x, norm_weight_1, norm_bias_1))
        x = x + feed_forward(norm(x, norm_weight_2, norm_bias_2))
    else:
        x = norm(x + attention(x), norm_weight_1, norm_bias_1)
        x = norm(x + feed_forward(x), norm_weight_2, norm_bias_2)
    return x if src.dim() == 3 else x.squeeze(0)


def _decompositions():
    table = core_aten_decompositions()
    table[torch.ops.aten._transformer_encoder_layer_fwd.default] = _transformer_encoder_layer
    # Lowered whole (fused by Tessera): decomposing them would only lose the structure.
    for op in [torch.ops.aten.native_layer_norm.default, torch.ops.aten._softmax.default,
               torch.ops.aten._log_softmax.default, torch.ops.aten.gelu.default, torch.ops.aten.silu.default,
               torch.ops.aten.addmm.default, torch.ops.aten.hardtanh.default, torch.ops.aten.var.correction,
               torch.ops.aten.avg_pool2d.default, torch.ops.aten._adaptive_avg_pool2d.default]:
        table.pop(op, None)
    return table


def make_backend(compile_options=None, fallback=True, reports=None):
    """A torch.compile backend with these options. Every ATen graph's GraphReport is appended to
    `reports` when given (tessera.explain reads them)."""
    options = Options.parse(compile_options, fallback)

    def compile_graph(gm, example_inputs):
        report = GraphReport()
        if reports is not None:
            reports.append(report)
        count("graphs")
        # aot_autograd calls it with one list of arguments ("boxed"), which it may then free.
        return CompiledGraph(gm, options, report)

    return aot_autograd(fw_compiler=compile_graph, bw_compiler=compile_graph, decompositions=_decompositions())


_default_backend = None


@atexit.register
def _release_compiled_graphs():
    """Drops dynamo's compiled graphs, and the Tessera kernels they hold, when the interpreter
    exits: kept in dynamo's caches, they outlived the extension module, and nanobind reported
    them as leaked ("nanobind: leaked 2 instances!") at the exit of every program that used the
    backend. A compiled function called later still works: it compiles again."""
    torch._dynamo.reset()


def backend(gm, example_inputs):
    """The "tessera" backend of torch.compile (CPU, default options, eager fallback)."""
    global _default_backend
    if _default_backend is None:
        _default_backend = make_backend()
    return _default_backend(gm, example_inputs)


def _unwrap_backend_errors(fn):
    """dynamo wraps a backend's exception in BackendCompilerFailed; re-raise Tessera's own."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except torch._dynamo.exc.BackendCompilerFailed as e:
            inner = getattr(e, "inner_exception", None)
            if isinstance(inner, _ts.Error):
                raise inner.with_traceback(None) from None
            raise
    return call


def jit_torch(fn=None, *, compile_options=None, fallback=True, dynamic=None):
    """Compiles a PyTorch function or module with Tessera (torch.compile with the Tessera backend).

    compile_options: {"target": "cpu"} plus Tessera compile options (e.g. "fast_math": True).
    fallback: False raises tessera.UserError naming the first op Tessera cannot compile and the
    source line it came from, instead of running that op in eager PyTorch.
    dynamic: passed to torch.compile.
    """
    def wrap(f):
        compiled = torch.compile(f, backend=make_backend(compile_options, fallback), dynamic=dynamic)
        return _unwrap_backend_errors(compiled)
    return wrap if fn is None else wrap(fn)


@dataclass
class ExplainOutput:
    """What Tessera did with a function: graphs (dynamo's, after aot_autograd), the ops it compiled,
    the ops that run in eager PyTorch with the reason and source line, and compile times."""
    graphs: list = field(default_factory=list)   # GraphReport per ATen graph
    graph_breaks: int = 0
    break_reasons: list = field(default_factory=list)

    @property
    def compiled_ops(self):
        out = {}
        for g in self.graphs:
            for k, v in g.compiled_ops.items():
                out[k] = out.get(k, 0) + v
        return out

    @property
    def fallbacks(self):
        return [f for g in self.graphs for f in g.fallbacks]

    @property
    def compile_seconds(self):
        return sum(g.compile_seconds for g in self.graphs)

    def __str__(self):
        lines = [f"Tessera: {len(self.graphs)} graph(s), {self.graph_breaks} graph break(s), "
                 f"{sum(g.partitions for g in self.graphs)} compiled partition(s), "
                 f"compile {self.compile_seconds * 1e3:.0f} ms"]
        lines += [f"  graph break: {r}" for r in self.break_reasons]
        ops = self.compiled_ops
        if ops:
            lines.append("  compiled: " + ", ".join(f"{k} x{v}" for k, v in sorted(ops.items())))
        fbs = self.fallbacks
        lines.append(f"  eager fallback: {len(fbs)} op(s)" + (":" if fbs else ""))
        lines += [f"    {f}" for f in fbs]
        return "\n".join(lines)


def explain(fn, *args, compile_options=None, **kwargs):
    """Compiles and runs fn(*args, **kwargs) once with the Tessera backend and returns an
    ExplainOutput: which ops Tessera compiled, which fell back to eager and why (as
    torch._dynamo.explain does for graph breaks)."""
    reports = []
    dyn = torch._dynamo.explain(fn)(*args, **kwargs)
    compiled = torch.compile(fn, backend=make_backend(compile_options, True, reports))
    compiled(*args, **kwargs)
    return ExplainOutput(reports, dyn.graph_break_count, [str(r.reason) for r in dyn.break_reasons])
