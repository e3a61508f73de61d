"""ATen ops → tessera.ops: one lowering per op overload, and the check that says whether a node
can be lowered at all (and why not).

A lowering receives the node's arguments with every FX node replaced by its value: a
``tessera.ops.Tensor`` for a tensor, a Python number or list otherwise. It returns a Tensor, or a
tuple for ops with several results (``None`` where a result is not computed; ``check`` refuses the
node when such a result is used).

Example: ``aten.addmm.default(bias, x, w_t)`` becomes ``ops.add(ops.matmul(x, w_t), bias)``; the
matmul's reduction and the bias add are two stages of one pipeline, which Tessera schedules
together with the rest of the partition.
"""
import operator

import torch

from .. import _tessera as _ts

ops = _ts.ops
aten = torch.ops.aten

# torch dtype ↔ Tessera type, for every dtype the lowerings accept.
TYPE_OF_DTYPE = {
    torch.float32: _ts.float32, torch.float64: _ts.float64, torch.float16: _ts.float16,
    torch.bfloat16: _ts.bfloat16, torch.int8: _ts.int8, torch.int16: _ts.int16, torch.int32: _ts.int32,
    torch.int64: _ts.int64, torch.uint8: _ts.uint8, torch.bool: _ts.bool_,
}
DTYPE_OF_TYPE = {str(t): d for d, t in TYPE_OF_DTYPE.items()}


def dtype_of(tensor):
    return DTYPE_OF_TYPE[str(tensor.type)]


class Unsupported(Exception):
    """A node Tessera does not lower; the message says why (shown by tessera.explain)."""


LOWERINGS = {}   # OpOverload → lowering
ELEMENTWISE = set()  # the ops that broadcast their operands (a 0-dimensional one as shape [1])
SCALAR_RESULTS = set()  # ops that may give a 0-dimensional tensor (held as shape [1])
CHECKS = {}      # OpOverload → check(node) returning a reason string, or None when supported


def lowering(*targets, check=None, elementwise=False):
    def register(fn):
        for t in targets:
            LOWERINGS[t] = fn
            if elementwise:
                ELEMENTWISE.add(t)
                SCALAR_RESULTS.add(t)
            if check is not None:
                CHECKS[t] = check
        return fn
    return register


# -- helpers -------------------------------------------------------------------------------------

def is_tensor(v):
    return isinstance(v, ops.Tensor)


def is_floating(t):
    return dtype_of(t).is_floating_point


def constant(value, dtype, shape=()):
    """A Tensor of `shape` whose every element is `value`, read by consumers as the constant
    itself; a scalar is a tensor of shape [1], which broadcasts as a 0-dimensional one would with
    any tensor of rank >= 1 (the op library has no 0-dimensional tensors)."""
    return ops.full(list(shape) if shape else [1], float(value), TYPE_OF_DTYPE[dtype])


def scalar_operand(value, like):
    """A Python number as a tensor operand of an op with the Tensor `like`, with torch's promotion:
    a number of a lower category (bool < int < float) takes the tensor's dtype; an int with a bool
    tensor becomes int64, a float with an integer tensor the default float32."""
    t = dtype_of(like)
    if isinstance(value, bool):
        dtype = t
    elif isinstance(value, int):
        dtype = torch.int64 if t == torch.bool else t
    else:
        dtype = t if t.is_floating_point else torch.float32
    return constant(value, dtype)


def operands(a, b):
    """Both operands of a binary op as Tensors (one of them may be a number)."""
    if not is_tensor(a):
        a = scalar_operand(a, b)
    if not is_tensor(b):
        b = scalar_operand(b, a)
    return a, b


def axes_of(dims, rank):
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return list(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    return sorted(d % rank if rank else 0 for d in dims)


def node_val(n):
    return n.meta.get("val") if hasattr(n, "meta") else None


def uses_results(node, indices):
    """Whether any getitem user of a multi-result node takes one of `indices`."""
    for user in node.users:
        if user.target is operator.getitem and user.args[1] in indices:
            return True
    return False


# -- elementwise -----------------------------------------------------------------------------------

def scaled(b, alpha):
    if alpha == 1:
        return b
    return ops.mul(b, alpha) if is_tensor(b) else b * alpha


@lowering(aten.add.Tensor, aten.add.Scalar, elementwise=True)
def _add(a, b, alpha=1):
    return ops.add(*operands(a, scaled(b, alpha)))


@lowering(aten.sub.Tensor, aten.sub.Scalar, elementwise=True)
def _sub(a, b, alpha=1):
    return ops.sub(*operands(a, scaled(b, alpha)))


@lowering(aten.rsub.Tensor, aten.rsub.Scalar, elementwise=True)
def _rsub(a, b, alpha=1):
    return ops.sub(*operands(b, scaled(a, alpha)))


@lowering(aten.mul.Tensor, aten.mul.Scalar, elementwise=True)
def _mul(a, b):
    return ops.mul(*operands(a, b))


@lowering(aten.div.Tensor, aten.div.Scalar, elementwise=True)
def _div(a, b):
    return ops.div(*operands(a, b))


def _div_mode_check(node):
    mode = node.kwargs.get("rounding_mode")
    if mode == "floor" and node_val(node) is not None and node_val(node).dtype.is_floating_point:
        return "div with rounding_mode='floor' of floating-point tensors"
    return None


@lowering(aten.div.Tensor_mode, aten.div.Scalar_mode, check=_div_mode_check, elementwise=True)
def _div_mode(a, b, rounding_mode=None):
    return ops.div(*operands(a, b), rounding_mode=rounding_mode)


def _pow_check(node):
    base = node.args[0]
    if not hasattr(base, "meta"):
        return "a number raised to a tensor power"
    return None


@lowering(aten.pow.Tensor_Scalar, aten.pow.Tensor_Tensor, check=_pow_check, elementwise=True)
def _pow(a, b):
    # torch computes these exponents exactly this way (its pow kernel special-cases them).
    if not is_tensor(b) and is_floating(a):
        if b == 2:
            return ops.mul(a, a)
        if b == 3:
            return ops.mul(ops.mul(a, a), a)
        if b == 0.5:
            return ops.sqrt(a)
        if b == -0.5:
            return ops.rsqrt(a)
        if b == 1:
            return a
    return ops.pow(*operands(a, b))


for _name in ["neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "silu"]:
    lowering(getattr(aten, _name).default)(getattr(ops, _name))


@lowering(aten.reciprocal.default)
def _reciprocal(a):
    return ops.div(scalar_operand(1.0, a), a)


@lowering(aten.gelu.default)
def _gelu(a, approximate="none"):
    return ops.gelu(a, approximate=approximate)


def _clamp(a, lo=None, hi=None):
    if lo is not None:
        a = ops.maximum(*operands(a, lo))
    if hi is not None:
        a = ops.minimum(*operands(a, hi))
    return a


def _clamp_check(node):
    for v in node.args[1:3]:
        if hasattr(v, "meta"):
            return "clamp with tensor bounds"
    return None


lowering(aten.clamp.default, check=_clamp_check)(_clamp)
lowering(aten.hardtanh.default)(lambda a, lo=-1.0, hi=1.0: _clamp(a, lo, hi))
lowering(aten.clamp_min.default)(lambda a, lo: _clamp(a, lo, None))
lowering(aten.clamp_max.default)(lambda a, hi: _clamp(a, None, hi))
lowering(aten.maximum.default, elementwise=True)(lambda a, b: ops.maximum(a, b))
lowering(aten.minimum.default, elementwise=True)(lambda a, b: ops.minimum(a, b))


@lowering(aten.where.self, aten.where.ScalarSelf, aten.where.ScalarOther, aten.where.Scalar, elementwise=True)
def _where(c, a, b):
    if not is_tensor(a) and not is_tensor(b):
        a = scalar_operand(a, c)
    a, b = operands(a, b)
    return ops.where(c, a, b)


for _name in ["eq", "ne", "lt", "le", "gt", "ge"]:
    _op = getattr(ops, _name)
    lowering(getattr(aten, _name).Tensor, getattr(aten, _name).Scalar, elementwise=True)(
        lambda a, b, _op=_op: _op(*operands(a, b)))


def _copy_check(node):
    kw = node.kwargs
    if kw.get("device") not in (None, torch.device("cpu")):
        return "a copy to another device"
    return None


@lowering(aten._to_copy.default, check=_copy_check)
def _to_copy(a, dtype=None, **_):
    return a if dtype is None or dtype == dtype_of(a) else ops.cast(a, TYPE_OF_DTYPE[dtype])


@lowering(aten.clone.default, aten.alias.default, aten.detach.default, aten.lift_fresh_copy.default)
def _identity(a, **_):
    return a


@lowering(torch.ops.prims.convert_element_type.default)
def _convert(a, dtype):
    return ops.cast(a, TYPE_OF_DTYPE[dtype])


SCALAR_RESULTS.update([aten.full.default, aten.scalar_tensor.default])


@lowering(aten.full_like.default)
def _full_like(a, value, dtype=None, **_):
    return constant(value, dtype or dtype_of(a), list(a.shape))


@lowering(aten.logical_not.default, elementwise=True)
def _logical_not(a):
    return ops.eq(a, scalar_operand(False if dtype_of(a) == torch.bool else 0, a))


@lowering(aten.any.dim, aten.any.dims, aten.any.default)
def _any(a, dims=None, keepdim=False):
    nonzero = ops.cast(ops.ne(a, scalar_operand(False if dtype_of(a) == torch.bool else 0, a)), _ts.int8)
    found = reduce(ops.amax, nonzero, dims, keepdim)
    return ops.ne(found, constant(0, torch.int8))


@lowering(aten.full.default, aten.scalar_tensor.default)
def _full(size_or_value, value=None, dtype=None, **_):
    if value is None:  # scalar_tensor(value)
        return constant(size_or_value, dtype or torch.float32)
    dtype = dtype or (torch.float32 if isinstance(value, float) else torch.int64)
    return constant(value, dtype, list(size_or_value))


# -- reductions and normalization ------------------------------------------------------------------

def reduce(op, a, dims, keepdim, *extra):
    """A reduction over `dims` (all when empty); reducing every axis without keepdim gives the
    0-dimensional result as shape [1]."""
    axes = axes_of(dims, len(a.shape))
    if not keepdim and len(axes) == len(a.shape):
        return ops.reshape(op(a, axes, *extra, True), [1])
    return op(a, axes, *extra, keepdim)


def with_dtype(a, dtype):
    return a if dtype is None or dtype == dtype_of(a) else ops.cast(a, TYPE_OF_DTYPE[dtype])


def _var_check(node):
    v = node_val(node.args[0])
    dims = axes_of(node.args[1] if len(node.args) > 1 else None, v.dim())
    count = 1
    for d in dims:
        count *= v.shape[d]
    correction = node.kwargs.get("correction")
    if count - (1 if correction is None else correction) <= 0:
        return "var with no degrees of freedom (torch gives NaN)"
    return None


REDUCTIONS = [aten.sum.dim_IntList, aten.sum.default, aten.mean.dim, aten.mean.default, aten.amax.default,
              aten.amin.default, aten.var.correction]
SCALAR_RESULTS.update(REDUCTIONS + [aten.any.dim, aten.any.dims, aten.any.default])

lowering(aten.sum.dim_IntList, aten.sum.default)(
    lambda a, dims=None, keepdim=False, dtype=None: reduce(ops.sum, with_dtype(a, dtype), dims, keepdim))
lowering(aten.mean.dim, aten.mean.default)(
    lambda a, dims=None, keepdim=False, dtype=None: reduce(ops.mean, with_dtype(a, dtype), dims, keepdim))
lowering(aten.amax.default)(lambda a, dims=(), keepdim=False: reduce(ops.amax, a, dims, keepdim))
lowering(aten.amin.default)(lambda a, dims=(), keepdim=False: reduce(ops.amin, a, dims, keepdim))
lowering(aten.var.correction, check=_var_check)(
    lambda a, dims=None, correction=None, keepdim=False:
    reduce(ops.var, a, dims, keepdim, 1 if correction is None else int(correction)))


@lowering(aten._softmax.default)
def _softmax(a, dim, half_to_float=False):
    return ops.softmax(a, dim)


@lowering(aten._log_softmax.default)
def _log_softmax(a, dim, half_to_float=False):
    return ops.log_softmax(a, dim)


@lowering(aten.native_layer_norm.default)
def _native_layer_norm(x, normalized_shape, weight, bias, eps):
    n = len(normalized_shape)
    out = ops.layer_norm(x, n, weight, bias, eps)
    axes = list(range(len(x.shape) - n, len(x.shape)))
    mean = ops.mean(x, axes, True)
    rstd = ops.rsqrt(ops.add(ops.var(x, axes, 0, True), eps))
    return out, mean, rstd


def _batch_norm_check(node):
    return "batch_norm's saved mean and variance" if uses_results(node, (1, 2)) else None


@lowering(aten._native_batch_norm_legit_no_training.default, check=_batch_norm_check)
def _batch_norm(x, weight, bias, running_mean, running_var, momentum, eps):
    return ops.batch_norm(x, running_mean, running_var, weight, bias, eps), None, None


# -- linear algebra --------------------------------------------------------------------------------

lowering(aten.mm.default, aten.bmm.default)(lambda a, b: ops.matmul(a, b))


@lowering(aten.addmm.default)
def _addmm(bias, a, b, beta=1, alpha=1):
    return ops.add(scaled(ops.matmul(a, b), alpha), scaled(bias, beta))


# -- convolution and pooling -----------------------------------------------------------------------

def _convolution_check(node):
    x, transposed = node.args[0], node.args[6]
    if transposed:
        return "transposed convolution"
    if len(node_val(x).shape) != 4:
        return f"a {len(node_val(x).shape) - 2}-d convolution (only conv2d is lowered)"
    return None


@lowering(aten.convolution.default, check=_convolution_check)
def _convolution(x, w, bias, stride, padding, dilation, transposed, output_padding, groups):
    return ops.conv2d(x, w, bias, tuple(stride), tuple(padding), tuple(dilation), groups)


def pair(v, default=None):
    if v is None or (isinstance(v, (list, tuple)) and len(v) == 0):
        return default
    if isinstance(v, int):
        return (v, v)
    return (v[0], v[-1]) if len(v) == 1 else (v[0], v[1])


def _max_pool_check(node):
    a = list(node.args) + [None] * 6
    if pair(a[4], (1, 1)) != (1, 1):
        return "max_pool2d with dilation"
    if a[5]:
        return "max_pool2d with ceil_mode=True"
    if uses_results(node, (1,)):
        return "max_pool2d's indices"
    if len(node_val(node.args[0]).shape) != 4:
        return "max_pool2d of an unbatched input"
    return None


@lowering(aten.max_pool2d_with_indices.default, check=_max_pool_check)
def _max_pool2d(x, kernel, stride=(), padding=(0, 0), dilation=(1, 1), ceil_mode=False):
    k = pair(kernel)
    return ops.max_pool2d(x, k, pair(stride, k), pair(padding, (0, 0))), None


def _avg_pool_check(node):
    a = list(node.args) + [None] * 7
    if a[4]:
        return "avg_pool2d with ceil_mode=True"
    if a[6] is not None:
        return "avg_pool2d with divisor_override"
    if len(node_val(node.args[0]).shape) != 4:
        return "avg_pool2d of an unbatched input"
    return None


@lowering(aten.avg_pool2d.default, check=_avg_pool_check)
def _avg_pool2d(x, kernel, stride=(), padding=(0, 0), ceil_mode=False, count_include_pad=True, divisor_override=None):
    k = pair(kernel)
    return ops.avg_pool2d(x, k, pair(stride, k), pair(padding, (0, 0)), count_include_pad=count_include_pad)


@lowering(aten._adaptive_avg_pool2d.default,
          check=lambda n: None if len(node_val(n.args[0]).shape) == 4 else "adaptive_avg_pool2d of an unbatched input")
def _adaptive_avg_pool2d(x, output_size):
    return ops.adaptive_avg_pool2d(x, pair(output_size))


# -- layout (index maps, no copies) ----------------------------------------------------------------

lowering(aten.view.default, aten._unsafe_view.default, aten.reshape.default)(lambda a, shape: ops.reshape(a, list(shape)))
lowering(aten.permute.default)(lambda a, dims: ops.permute(a, [d % len(a.shape) for d in dims]))
lowering(aten.transpose.int)(lambda a, d0, d1: ops.transpose(a, d0, d1))
lowering(aten.t.default)(lambda a: ops.transpose(a, 0, 1) if len(a.shape) == 2 else a)
lowering(aten.expand.default)(lambda a, shape, implicit=False: ops.expand(a, list(shape)))
lowering(aten.unsqueeze.default)(lambda a, dim: ops.unsqueeze(a, dim % (len(a.shape) + 1)))


@lowering(aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default)
def _squeeze(a, dims=None):
    dims = axes_of(dims, len(a.shape)) if dims is not None else list(range(len(a.shape)))
    for d in sorted((d for d in dims if a.shape[d] == 1), reverse=True):
        a = ops.squeeze(a, d)
    return a


def slice_bounds(size, start, end, step):
    start, end, _ = slice(start, end, step).indices(size)
    return start, max(end, start)


@lowering(aten.slice.Tensor)
def _slice(a, dim=0, start=None, end=None, step=1):
    dim %= len(a.shape)
    start, end = slice_bounds(a.shape[dim], start, end, step)
    return ops.slice(a, dim, start, end, step)


@lowering(aten.select.int)
def _select(a, dim, index):
    dim %= len(a.shape)
    index %= a.shape[dim]
    return ops.squeeze(ops.slice(a, dim, index, index + 1), dim)


@lowering(aten.split_with_sizes.default, aten.split.Tensor)
def _split(a, sizes, dim=0):
    dim %= len(a.shape)
    n = a.shape[dim]
    if isinstance(sizes, int):
        sizes = [min(sizes, n - s) for s in range(0, n, sizes)]
    out, start = [], 0
    for s in sizes:
        out.append(ops.slice(a, dim, start, start + s))
        start += s
    return tuple(out)


@lowering(aten.cat.default)
def _cat(tensors, dim=0):
    tensors = [t for t in tensors if not (len(t.shape) == 1 and t.shape[0] == 0)]
    return ops.cat(tensors, dim % len(tensors[0].shape))


def _pad_check(node):
    if any(p < 0 for p in node.args[1]):
        return "constant_pad_nd with negative padding (cropping)"
    return None


@lowering(aten.constant_pad_nd.default, check=_pad_check)
def _constant_pad_nd(a, pad, value=0):
    # torch lists (before, after) pairs from the last axis backwards; ops.pad outermost first.
    pairs = [(pad[i], pad[i + 1]) for i in range(0, len(pad), 2)][::-1]
    return ops.pad(a, pairs, float(value))


@lowering(operator.getitem)
def _getitem(results, index):
    value = results[index]
    if value is None:
        raise Unsupported("a result Tessera does not compute")
    return value


def lower_node(node, args, kwargs):
    """The node's value(s); raises Unsupported or tessera.Error when it cannot be lowered."""
    return LOWERINGS[node.target](*args, **kwargs)
