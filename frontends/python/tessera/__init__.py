"""Tessera: a polyhedral loop optimizer with a Halide-like embedded DSL.

The DSL, in Python (docs/python.md)::

    import numpy as np
    import tessera as ts

    x, y = ts.Var("x"), ts.Var("y")
    inp = ts.InputBuffer(ts.float32, 2, "input")
    blur_x, blur_y = ts.Func("blur_x"), ts.Func("blur_y")
    blur_x[x, y] = (inp[x, y] + inp[x + 1, y] + inp[x + 2, y]) / 3
    blur_y[x, y] = (blur_x[x, y] + blur_x[x, y + 1] + blur_x[x, y + 2]) / 3

    img = np.random.rand(480, 640).astype(np.float32)   # shape (height, width)
    inp.set(img)                                         # no copy
    out = blur_y.realize([638, 478]).numpy()             # shape (478, 638)

Arrays are wrapped without copying, axes reversed (dimension 0 is the last axis), as in Halide's
Python bindings.
"""

import os as _os
import sys as _sys

# The extension links Debian's libLLVM. A framework imported earlier may have put its own LLVM's
# symbols in the process's global scope (TensorFlow loads its libraries RTLD_GLOBAL); without
# RTLD_DEEPBIND, libLLVM's references to its own global data (command-line options, target
# feature tables) would bind to that other LLVM's copies, and the first compile crashes.
# DEEPBIND makes the extension and its libraries look up their own symbols first.
_flags = _sys.getdlopenflags()
if hasattr(_os, "RTLD_DEEPBIND"):
    _sys.setdlopenflags(_os.RTLD_NOW | _os.RTLD_LOCAL | _os.RTLD_DEEPBIND)
try:
    from . import _tessera  # noqa: F401
finally:
    _sys.setdlopenflags(_flags)

from ._tessera import (  # noqa: F401  (the public API)
    POOLED_BYTES,
    BFloat,
    Bool,
    BoundaryConditions,
    Buffer,
    Callable,
    Error,
    Expr,
    Float,
    Func,
    FuncRef,
    InputBuffer,
    InputDimension,
    Int,
    InternalError,
    Param,
    Pipeline,
    RDom,
    RVar,
    Stage,
    Target,
    Type,
    UInt,
    UserError,
    Var,
    abs,
    argmax,
    argmin,
    bfloat16,
    bool_,
    buffer_pool_stats,
    cast,
    ceil,
    clamp,
    compile,
    compile_counters,
    cos,
    exp,
    float16,
    float32,
    float64,
    floor,
    fma,
    int8,
    int16,
    int32,
    int64,
    interpret,
    lerp,
    likely,
    log,
    max,
    maximum,
    min,
    minimum,
    pipeline_text,
    pooled_output,
    pow,
    product,
    release_buffer_pool,
    round,
    select,
    sin,
    sqrt,
    sum,
    tan,
    tanh,
    trunc,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._tessera import ops  # noqa: F401  (tensor ops, frontends/ops)


def jit_torch(fn=None, *, compile_options=None, fallback=True, dynamic=None):
    """Compiles a PyTorch function or nn.Module with Tessera (torch.compile with the Tessera
    backend); see tessera.torch_frontend.jit_torch. Imports torch on first use only."""
    from .torch_frontend import jit_torch as _jit_torch
    return _jit_torch(fn, compile_options=compile_options, fallback=fallback, dynamic=dynamic)


def explain(fn, *args, compile_options=None, **kwargs):
    """Runs fn(*args, **kwargs) once through the Tessera backend of torch.compile and reports which
    ops Tessera compiled and which ran in eager PyTorch, with the reason and the source line."""
    from .torch_frontend import explain as _explain
    return _explain(fn, *args, compile_options=compile_options, **kwargs)

__version__ = "0.1.0"
