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

from ._tessera import (  # noqa: F401  (the public API)
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
    cast,
    ceil,
    clamp,
    compile,
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
    pow,
    product,
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

__version__ = "0.1.0"
