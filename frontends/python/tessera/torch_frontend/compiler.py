"""Compiles an ATen FX graph (after aot_autograd and decompositions) with Tessera.

The graph is partitioned by torch's CapabilityBasedPartitioner: every maximal group of nodes that
``lowering`` supports becomes one submodule, which is lowered to tessera.ops, compiled as one
Tessera pipeline (so poly fuses and schedules across the ops' boundaries) and run on the caller's
tensors without copies. The remaining nodes run in eager PyTorch. Each graph keeps a report of
what was compiled and what fell back, with the reason and the user's source line; tessera.explain
shows it.

Shapes: a Tessera pipeline is compiled for concrete sizes. A graph with symbolic sizes (dynamo's
dynamic shapes) is specialized at its first call for each new set of sizes: the graph is retraced
with those sizes and compiled again, counted in ``stats()["recompiles"]`` and logged with the
reason.
"""
import logging
import math
import operator
import re
import sys
import threading
import time
import weakref
from dataclasses import dataclass, field

import torch
import torch.fx
import torch.utils.dlpack
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import OperatorSupportBase

from .. import _tessera as _ts
from . import lowering as L

log = logging.getLogger("tessera.torch")

_stats_lock = threading.Lock()
_stats = {"graphs": 0, "compiles": 0, "recompiles": 0, "partitions": 0, "fallback_nodes": 0}


def stats():
    """Counters since the process started (or since reset_stats): graphs received from
    aot_autograd, Tessera compiles, recompiles for new sizes, partitions and eager nodes."""
    with _stats_lock:
        return dict(_stats)


def reset_stats():
    with _stats_lock:
        for k in _stats:
            _stats[k] = 0


def count(key, n=1):
    with _stats_lock:
        _stats[key] += n


# -- options ---------------------------------------------------------------------------------------

@dataclass
class Options:
    """compile_options of jit_torch: "target" (only "cpu" so far, checked by parse), plus Tessera
    compile options (keywords of tessera.compile; "fast_math" defaults to True here)."""
    pipeline_options: dict = field(default_factory=dict)
    fallback: bool = True

    @staticmethod
    def parse(compile_options, fallback):
        opts = dict(compile_options or {})
        target = opts.pop("target", "cpu")
        # As in torch's own CPU kernels (MKL, oneDNN, Inductor's vectorized reductions), float
        # reductions may be reassociated and multiply-adds fused; NaN and infinity semantics stay.
        # {"fast_math": False} compiles float arithmetic as written.
        opts.setdefault("fast_math", True)
        if target in ("cuda", "amdgpu", "rocm"):
            raise _ts.UserError(f'tessera.jit_torch: compile_options target "{target}" is not supported by the PyTorch '
                                'frontend yet (it runs on CPU tensors); use "cpu".')
        elif target not in ("cpu", "host"):
            raise _ts.UserError(f'tessera.jit_torch: unknown compile_options target "{target}"; use "cpu".')
        options = Options(opts, fallback)
        options.validate()
        return options

    def validate(self):
        """Compiles a one-element pipeline with these options, so that a wrong option is reported
        when the decorator is applied (a pipeline that later fails to compile falls back to eager)."""
        x = _ts.Var("x")
        f = _ts.Func("tessera_jit_torch_options")
        f[x] = x
        _ts.Pipeline([f]).compile(_ts.Target.host(), **self.pipeline_options)


# -- support ---------------------------------------------------------------------------------------

def _tensor_values(node):
    """The tensor values a node gives its users (of a multi-result node, the results in use)."""
    v = L.node_val(node)
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (tuple, list)):
        used = {u.args[1] for u in node.users if u.target is operator.getitem}
        return [x for i, x in enumerate(v) if isinstance(x, torch.Tensor) and i in used]
    return []


def unsupported_reason(node):
    """Why `node` cannot be compiled by Tessera, or None."""
    if node.op != "call_function":
        return None
    name = op_name(node.target)
    if node.target not in L.LOWERINGS:
        return f"no Tessera lowering for {name}"
    if node.target is operator.getitem:
        return None
    results = _tensor_values(node)
    if not results:
        return f"{name} has no tensor result"
    operands = [v for a in node.all_input_nodes for v in _tensor_values(a)]
    for v in results + operands:
        if v.device.type != "cpu":
            return f"{name} on device {v.device} (the frontend compiles CPU tensors)"
        if v.dtype not in L.TYPE_OF_DTYPE:
            return f"{name} on dtype {v.dtype}"
        if any(not isinstance(s, int) for s in v.shape):
            return f"{name} with symbolic sizes"
        if v.numel() == 0:
            return f"{name} on a tensor without elements"
    # The op library has no 0-dimensional tensors: a 0-dimensional operand is held as shape [1],
    # which broadcasts the same way in elementwise ops; anything else on one runs in eager.
    if (any(v.dim() == 0 for v in results) and node.target not in L.SCALAR_RESULTS) or (
            any(v.dim() == 0 for v in operands) and node.target not in L.ELEMENTWISE):
        return f"{name} on a 0-dimensional tensor (the op library has none yet)"
    check = L.CHECKS.get(node.target)
    return check(node) if check else None


def op_name(target):
    if target is operator.getitem:
        return "getitem"
    s = str(target)
    return s if s.startswith("aten.") or s.startswith("prims.") else getattr(target, "__name__", s)


def source_line(node):
    """The user's source line of a node, "file:line in function: code", from its stack trace."""
    trace = node.meta.get("stack_trace") or ""
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)\n\s*(.*)', trace)
    if not frames:
        return None
    f, line, fn, code = frames[-1]
    return f"{f}:{line} in {fn}: {code.strip()}"


class _Support(OperatorSupportBase):
    def __init__(self, reasons):
        self.reasons = reasons

    def is_node_supported(self, submodules, node):
        reason = unsupported_reason(node)
        if reason is not None:
            self.reasons[node] = reason
            return False
        return node.op == "call_function"


# -- reports ---------------------------------------------------------------------------------------

@dataclass
class Fallback:
    """One node that runs in eager PyTorch."""
    op: str
    reason: str
    source: str = None

    def __str__(self):
        return f"{self.op}: {self.reason}" + (f" (at {self.source})" if self.source else "")


@dataclass
class GraphReport:
    """What happened to one ATen graph."""
    compiled_ops: dict = field(default_factory=dict)   # op name → count compiled by Tessera
    fallbacks: list = field(default_factory=list)       # Fallback
    partitions: int = 0
    compiles: int = 0
    compile_seconds: float = 0.0
    shapes: list = field(default_factory=list)          # input sizes of each compile
    one_kernel: bool = False   # the graph is one compiled partition, called as its kernel (KernelCall)


# -- output memory ---------------------------------------------------------------------------------

# Outputs of at least _ts.POOLED_BYTES come from the runtime's buffer pool (pooled_output) and
# go back to it when torch frees them, so that a call with the sizes of an earlier one writes
# memory whose pages are mapped: torch.empty of a conv layer's 800 KB output faulted its 196
# pages in again over the first 4-8 calls of a process (glibc placed each at a new heap address
# while the previous call's block lay free), a third of the layer's time; blur's 200 MB output,
# mapped fresh by glibc, faulted every call. The other outputs, where a fault costs less than
# the capsule (about 2 µs), come from torch.empty.
_DLPACK_TYPES = {torch.float32: (2, 32), torch.float64: (2, 64), torch.float16: (2, 16), torch.bfloat16: (4, 16),
                 torch.int8: (0, 8), torch.int16: (0, 16), torch.int32: (0, 32), torch.int64: (0, 64),
                 torch.uint8: (1, 8), torch.bool: (6, 8)}


def pooled_type(sizes, dtype):
    """The DLPack (code, bits) of an output of `sizes` and `dtype` that comes from the buffer
    pool, or None where torch.empty serves it."""
    t = _DLPACK_TYPES.get(dtype)
    return t if t is not None and math.prod(sizes) * dtype.itemsize >= _ts.POOLED_BYTES else None


def pooled_empty(sizes, pooled):
    """A new C-ordered tensor of `sizes` from the buffer pool (`pooled`: pooled_type's)."""
    return _from_dlpack(_ts.pooled_output(sizes, *pooled))


_HUGE_PAGE = 1 << 21
_HUGE_OUTPUT_BYTES = 4 * _HUGE_PAGE   # outputs from this size on are advised (advise_huge_pages)
_MADV_HUGEPAGE = 14


def _load_madvise():
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes
        fn = ctypes.CDLL(None, use_errno=True).madvise
        fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        fn.restype = ctypes.c_int
        return fn
    except (OSError, AttributeError):
        return None


_madvise = _load_madvise()


def advise_huge_pages(t):
    """Asks Linux to back a large fresh output with transparent huge pages. torch allocates every
    output anew, and a large one comes straight from mmap: first-touching 200 MB in 4 KiB pages
    costs about 40 ms of page faults on 2 cores, in 2 MiB pages about 5 ms. Only the 2 MiB-aligned
    interior is advised; a kernel without THP (or with it off) ignores the advice."""
    n = t.numel() * t.element_size()
    if _madvise is None or n < _HUGE_OUTPUT_BYTES:
        return
    start = (t.data_ptr() + _HUGE_PAGE - 1) & ~(_HUGE_PAGE - 1)
    end = (t.data_ptr() + n) & ~(_HUGE_PAGE - 1)
    if end > start:
        _madvise(start, end - start, _MADV_HUGEPAGE)


# -- transposed matmul operands --------------------------------------------------------------------

_MATMULS = {torch.ops.aten.mm.default, torch.ops.aten.bmm.default, torch.ops.aten.addmm.default}
_TRANSPOSES = {torch.ops.aten.t.default, torch.ops.aten.transpose.int, torch.ops.aten.permute.default}


def transposed_matmul_operand(p):
    """The (dim0, dim1) swap through which placeholder `p` reaches only matmuls, or None.

    linear(x, w) reads w[out, in] transposed: the matmul's vector loop runs along w's rows. Poly
    then copies w into a transposed Func on every call (transposed_operands.h). A weight is the
    same tensor call after call, so the kernel takes a contiguous transposed copy that it keeps
    while the tensor is unchanged (TransposeCache)."""
    if len(p.users) != 1:
        return None
    (u,) = p.users
    v = L.node_val(p)
    if u.target not in _TRANSPOSES or not isinstance(v, torch.Tensor) or v.dim() < 2:
        return None
    n = v.dim()
    if u.target is torch.ops.aten.t.default:
        dims = (0, 1) if n == 2 else None
    elif u.target is torch.ops.aten.transpose.int:
        dims = tuple(sorted((u.args[1] % n, u.args[2] % n)))
    else:
        perm = [d % n for d in u.args[1]]
        swapped = [i for i in range(n) if perm[i] != i]
        dims = tuple(swapped) if len(swapped) == 2 and perm[swapped[0]] == swapped[1] else None
    if dims != (n - 2, n - 1) or not u.users or any(w.target not in _MATMULS for w in u.users):
        return None
    return dims


class TransposeCache:
    """A contiguous transposed copy of the last tensor seen, reused while it is the same tensor
    object at the same version (an in-place change bumps the version)."""

    def __init__(self, dims):
        self.dims = dims
        self.entry = None   # (weak reference, version, copy)

    def __call__(self, t):
        try:
            version = t._version
        except RuntimeError:   # an inference-mode tensor has no version counter: no caching
            return t.transpose(*self.dims).contiguous()
        e = self.entry
        if e is not None and e[0]() is t and e[1] == version:
            return e[2]
        copy = t.transpose(*self.dims).contiguous()
        self.entry = (weakref.ref(t), version, copy)
        return copy


# -- compiling one partition -----------------------------------------------------------------------

def bound_to_shapes(funcs, shapes):
    """Bounds each output Func to its static shape (Func.bound, dimension 0 the innermost), as a
    partition's sizes are: every region of the pipeline is then a constant box. Without the
    bound the model takes each output's mins and extents as parameters, and the regions derived
    from them as dozens more (a transformer layer's: 45), each a column of every constraint isl
    handles: its compile took 3.0 s against 1.25 s bounded (docs/benchmarks.md). An output with
    an empty dimension stays unbounded (a bound's extent is positive)."""
    for f, shape in zip(funcs, shapes):
        extents = list(reversed(shape)) or [1]   # a 0-dimensional output is computed as [1]
        if min(extents) <= 0:
            continue
        for var, extent in zip(f.args(), extents):
            f.bound(var, 0, extent)


class TesseraKernel(torch.nn.Module):
    """One partition compiled as a Tessera pipeline; called with the partition's inputs, returns
    its outputs in fresh tensors."""

    def __init__(self, gm, options, name):
        super().__init__()
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        (output,) = [n for n in gm.graph.nodes if n.op == "output"]
        env = {}
        self.inputs = []      # InputBuffer per placeholder
        self.prepare = []     # per placeholder: None, or a TransposeCache giving what the buffer reads
        self.scalar = []      # per placeholder: whether it is 0-dimensional (read as shape [1])
        for i, p in enumerate(placeholders):
            v = L.node_val(p)
            dims = transposed_matmul_operand(p)
            shape = list(v.shape)
            if dims:
                shape[dims[0]], shape[dims[1]] = shape[dims[1]], shape[dims[0]]
            buf = _ts.InputBuffer(L.TYPE_OF_DTYPE[v.dtype], max(v.dim(), 1), f"{name}_in{i}")
            env[p] = _ts.ops.input(buf, shape or [1])   # 0-dimensional: shape [1]
            if dims:   # the transpose node reads the copy as it is
                (u,) = p.users
                env[u] = env[p]
            self.inputs.append(buf)
            self.prepare.append(TransposeCache(dims) if dims else None)
            self.scalar.append(v.dim() == 0)
        for n in gm.graph.nodes:
            if n.op != "call_function" or n in env:
                continue
            args = torch.fx.node.map_arg(n.args, lambda a: env[a])
            kwargs = torch.fx.node.map_arg(n.kwargs, lambda a: env[a])
            env[n] = L.lower_node(n, args, kwargs)
            # Elementwise ops and simple index maps are inline tensors, read by their consumer as
            # an expression; a value read by several consumers is computed once instead.
            if isinstance(env[n], _ts.ops.Tensor) and len(n.users) > 1:
                env[n] = _ts.ops.materialize(env[n])
        results = output.args[0]
        self.single = not isinstance(results, (tuple, list))
        results = [results] if self.single else list(results)
        # Each output: ("input", i) passes an input through; ("func", j) is pipeline output j.
        self.plan, funcs, self.out_shapes, self.out_dtypes, seen = [], [], [], [], {}
        for r in results:
            if r.op == "placeholder":
                self.plan.append(("input", placeholders.index(r)))
                continue
            t = env[r]
            f = t.func
            if f.name in seen:   # the same values returned twice (e.g. an output and its alias)
                self.plan.append(("func", seen[f.name]))
                continue
            seen[f.name] = len(funcs)
            self.plan.append(("func", len(funcs)))
            funcs.append(f)
            self.out_shapes.append(list(L.node_val(r).shape))   # a 0-dimensional one is computed as [1]
            self.out_dtypes.append(L.dtype_of(t))
        # Per output, torch.empty's arguments (sizes as separate ints, its fastest form) and its
        # DLPack type where the buffer pool serves it (pooled_type); and the outputs large enough
        # for huge pages.
        self.allocations = [(tuple(s) or (1,), d, pooled_type(tuple(s) or (1,), d))
                            for s, d in zip(self.out_shapes, self.out_dtypes)]
        self.any_scalar_output = any(not s for s in self.out_shapes)
        self.huge = [i for i, (s, d) in enumerate(zip(self.out_shapes, self.out_dtypes))
                     if math.prod(s) * d.itemsize >= _HUGE_OUTPUT_BYTES]
        bound_to_shapes(funcs, self.out_shapes)
        self.callable = _ts.Pipeline(funcs).compile(_ts.Target.host(), **options.pipeline_options) if funcs else None

    def forward(self, *args):
        results = self.outputs(args)
        return results[0] if self.single else tuple(results)

    def outputs(self, args):
        """The partition's outputs, as a list, for its inputs in order (any sequence)."""
        values = {}
        for buf, prepare, scalar, a in zip(self.inputs, self.prepare, self.scalar, args):
            if prepare is not None:
                a = prepare(a)
            if scalar:
                a = a.reshape(1)
            elif 0 in a.stride() and a.numel() > 1:
                a = a.contiguous()   # a broadcast view: Tessera buffers need distinct elements
            # A DLPack capsule of the tensor (it holds the tensor): what Tensor.__dlpack__ makes
            # too, without its Python-level checks, which cost microseconds inside a compiled
            # graph.
            values[buf] = _to_dlpack(a)
        # A 0-dimensional output is computed as shape [1] and returned as a view of shape [].
        outs = [pooled_empty(sizes, pooled) if pooled else torch.empty(*sizes, dtype=dtype)
                for sizes, dtype, pooled in self.allocations]
        for i in self.huge:
            advise_huge_pages(outs[i])
        if self.callable is not None:
            self.callable.run(values, [_to_dlpack(o) for o in outs])
        outs = [o.reshape(s) if not s else o for o, s in zip(outs, self.out_shapes)] if self.any_scalar_output else outs
        return [args[i] if kind == "input" else outs[i] for kind, i in self.plan]


_to_dlpack = torch.utils.dlpack.to_dlpack
_from_dlpack = torch.utils.dlpack.from_dlpack


class KernelCall:
    """A graph that is one compiled partition and nothing else, called as that partition's kernel:
    the GraphModule around it (and the nn.Module call of the kernel) cost about 7 µs a call, more
    than the kernel's own overhead on small tensors. Called boxed, as aot_autograd calls a
    compiled graph: with the list of the graph's inputs."""

    def __init__(self, kernel, arg_index, picks, container):
        self.kernel = kernel
        self.arg_index = arg_index   # the graph input of each kernel input; None: all, in order
        self.picks = picks           # per graph output: (True, graph input) or (False, kernel output)
        self.container = container   # tuple or list, as the graph returns them

    @staticmethod
    def of(gm):
        """The KernelCall of `gm` (after partitioning), or None where it is anything else than
        inputs → one TesseraKernel → its outputs (and inputs passed through)."""
        placeholders, calls, getitems, output = [], [], [], None
        for n in gm.graph.nodes:
            if n.op == "placeholder":
                placeholders.append(n)
            elif n.op == "call_module":
                calls.append(n)
            elif n.op == "call_function" and n.target is operator.getitem:
                getitems.append(n)
            elif n.op == "output":
                output = n
            else:
                return None
        if len(calls) != 1 or calls[0].kwargs or any(a not in placeholders for a in calls[0].args):
            return None
        (call,) = calls
        kernel = gm.get_submodule(call.target)
        results = output.args[0]
        if not isinstance(kernel, TesseraKernel) or not isinstance(results, (tuple, list)):
            return None
        if any(g.args[0] is not call or not isinstance(g.args[1], int) or kernel.single for g in getitems):
            return None
        picks = []
        for r in results:
            if r is call and kernel.single:
                picks.append((False, 0))
            elif r in getitems:
                picks.append((False, r.args[1]))
            elif r in placeholders:
                picks.append((True, placeholders.index(r)))
            else:
                return None
        arg_index = [placeholders.index(a) for a in call.args]
        if arg_index == list(range(len(placeholders))):
            arg_index = None
        return KernelCall(kernel, arg_index, picks, type(results))

    def __call__(self, args):
        outs = self.kernel.outputs(args if self.arg_index is None else [args[i] for i in self.arg_index])
        return self.container([args[i] if from_input else outs[i] for from_input, i in self.picks])


def compile_static(gm, options, report):
    """Partitions a graph with static sizes and compiles its supported parts; returns what to
    call with the list of the graph's inputs (the partitioned GraphModule, whose submodules are
    TesseraKernels, or the one kernel that is the whole graph) and fills `report`."""
    reasons = {}
    gm = torch.fx.GraphModule(gm, gm.graph)  # partitioning edits the graph: keep the caller's
    partitioner = CapabilityBasedPartitioner(gm, _Support(reasons), allows_single_node_partition=True)
    partitions = partitioner.propose_partitions()
    for node, reason in reasons.items():
        if node.op != "call_function":
            continue
        fb = Fallback(op_name(node.target), reason, source_line(node))
        report.fallbacks.append(fb)
        if not options.fallback:
            raise _ts.UserError(
                f"tessera.jit_torch(fallback=False): {fb.op} cannot be compiled by Tessera ({fb.reason})"
                + (f", at {fb.source}" if fb.source else "")
                + ". Rewrite that line with supported ops, or allow fallback=True to run it in eager PyTorch.")
    count("fallback_nodes", len([n for n in reasons if n.op == "call_function"]))
    fused = partitioner.fuse_partitions(partitions)
    for node in list(fused.graph.nodes):
        if node.op != "call_module":
            continue
        sub = fused.get_submodule(node.target)
        ops_in = [op_name(n.target) for n in sub.graph.nodes if n.op == "call_function"]
        try:
            kernel = TesseraKernel(sub, options, f"{node.target}")
        except (_ts.Error, L.Unsupported) as e:
            if not options.fallback:
                raise
            # A partition that fails to lower runs in eager, as a whole, and says why.
            report.fallbacks.append(Fallback(" + ".join(sorted(set(ops_in))), f"partition not compiled: {e}", None))
            count("fallback_nodes", len(ops_in))
            continue
        setattr(fused, node.target, kernel)
        report.partitions += 1
        count("partitions")
        for o in ops_in:
            if o != "getitem":
                report.compiled_ops[o] = report.compiled_ops.get(o, 0) + 1
    fused.recompile()
    direct = KernelCall.of(fused)
    report.one_kernel = direct is not None
    return direct if direct is not None else _boxed(fused)


def _boxed(fn):
    """`fn` called with a list of its arguments."""
    return lambda args: fn(*args)


def _is_symbolic(v):
    if isinstance(v, torch.SymInt):
        return True
    return isinstance(v, torch.Tensor) and any(not isinstance(s, int) for s in v.shape)


def _signature(args):
    return tuple((tuple(a.shape), a.dtype) if isinstance(a, torch.Tensor) else a for a in args)


class CompiledGraph:
    """What the backend returns for one ATen graph: static graphs are compiled once; graphs with
    symbolic sizes are specialized per signature of the actual arguments. Called boxed, as
    aot_autograd calls a compiled graph: with the list of its arguments."""

    def __init__(self, gm, options, report):
        # What says so to aot_autograd; on the instance, where functools.wraps (torch's wrappers
        # of the backward graph) copies it from.
        self._boxed_call = True
        self.gm, self.options, self.report = gm, options, report
        self.lock = threading.Lock()
        self.specialized = {}
        self.dynamic = any(_is_symbolic(L.node_val(n)) for n in gm.graph.nodes if n.op == "placeholder")
        if not self.dynamic:
            self.static = self._compile(gm, [tuple(L.node_val(n).shape) for n in gm.graph.nodes
                                             if n.op == "placeholder" and isinstance(L.node_val(n), torch.Tensor)])

    def _compile(self, gm, shapes):
        start = time.perf_counter()
        compiled = compile_static(gm, self.options, self.report)
        self.report.compile_seconds += time.perf_counter() - start
        self.report.compiles += 1
        self.report.shapes.append(shapes)
        count("compiles")
        return compiled

    def __call__(self, args):
        if not self.dynamic:
            return self.static(args)
        key = _signature(args)
        fn = self.specialized.get(key)
        if fn is None:
            with self.lock:
                fn = self.specialized.get(key)
                if fn is None:
                    fn = self._specialize(args, key)
        return fn(args)

    def _specialize(self, args, key):
        from torch.fx.experimental.proxy_tensor import make_fx
        shapes = [k[0] for k in key if isinstance(k, tuple)]
        if self.specialized:
            count("recompiles")
            log.warning("tessera: recompiling a graph for new input sizes %s (compile %d of this graph; earlier: %s): "
                        "Tessera compiles each set of sizes of a dynamic-shape graph once",
                        shapes, len(self.specialized) + 1, self.report.shapes[-1])
        with torch.no_grad():
            concrete = make_fx(self.gm, tracing_mode="fake")(*args)
        fn = self._compile(concrete, shapes)
        self.specialized[key] = fn
        return fn
