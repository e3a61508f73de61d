"""Random expressions written through the Python operators: the compiled pipeline must match
the reference interpreter bit for bit (the C++ fuzzer covers the compiler; this covers the
bindings' operators, promotion and buffer plumbing)."""
import random

import numpy as np
import pytest

import tessera as ts

x, y = ts.Var("x"), ts.Var("y")


def random_expression(rng, inp, depth):
    if depth == 0 or rng.random() < 0.2:
        leaf = rng.randrange(5)
        if leaf == 0:
            return x
        if leaf == 1:
            return y
        if leaf == 2:
            return rng.randrange(-9, 10)
        if leaf == 3:
            return inp[ts.clamp(x + rng.randrange(-2, 3), 0, 15), ts.clamp(y - rng.randrange(0, 3), 0, 10)]
        return rng.choice([0.5, -1.25, 3.0])
    a = random_expression(rng, inp, depth - 1)
    b = random_expression(rng, inp, depth - 1)
    if not isinstance(a, (ts.Expr, ts.Var, ts.FuncRef)):
        a = ts.Expr(a) if not isinstance(a, float) else ts.cast(ts.float32, x) * a
    op = rng.randrange(10)
    if op == 0:
        return a + b
    if op == 1:
        return a - b
    if op == 2:
        return a * b
    if op == 3:
        return a // b
    if op == 4:
        return a % b
    if op == 5:
        return ts.min(a, b)
    if op == 6:
        return ts.max(a, b)
    if op == 7:
        return ts.select(a > b, a, b)
    if op == 8:
        return b - a if isinstance(b, (int, float)) else -a
    return ts.abs(a)


@pytest.mark.parametrize("seed", range(12))
def test_random_python_expressions_compile_like_the_interpreter(seed):
    rng = random.Random(seed)
    inp = ts.InputBuffer(ts.int32, 2, "inp")
    inp.set(np.random.default_rng(seed).integers(-50, 50, size=(11, 16), dtype=np.int32))
    f = ts.Func(f"random_{seed}")
    e = ts.Expr(random_expression(rng, inp, 4))
    f[x, y] = e
    w, h = rng.randrange(1, 40), rng.randrange(1, 20)
    compiled = ts.compile(f, threads=2).realize([w, h]).numpy()
    reference = ts.interpret(f, [w, h]).numpy()
    np.testing.assert_array_equal(compiled, reference, err_msg=str(e))
