"""Tessera next to the frameworks: arrays pass both ways without copies, and importing Tessera
before or after a framework works, with both compiling in the same process (each LLVM that
Tessera and the framework load stays private to its library)."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tessera as ts

x, y = ts.Var("x"), ts.Var("y")


def doubled_plus_one(inp):
    f = ts.Func("f")
    f[x, y] = inp[x, y] * 2 + 1
    return f


def test_jax_arrays_go_in_and_come_out_without_copies():
    import jax.numpy as jnp

    a = jnp.arange(35, dtype=jnp.float32).reshape(5, 7)
    inp = ts.InputBuffer(ts.float32, 2, "a")
    inp.set(a)
    assert inp.get().data_address() == a.unsafe_buffer_pointer()
    out = doubled_plus_one(inp).realize([7, 5])
    j = jnp.from_dlpack(out)
    assert j.unsafe_buffer_pointer() == out.data_address()
    np.testing.assert_array_equal(np.asarray(j), np.asarray(a) * 2 + 1)


def test_jax_arrays_are_refused_as_outputs():
    import jax.numpy as jnp

    inp = ts.InputBuffer(ts.float32, 2, "a")
    inp.set(np.ones((2, 2), np.float32))
    with pytest.raises(ts.UserError, match="read-only"):
        doubled_plus_one(inp).realize(jnp.zeros((2, 2), jnp.float32))


# Each import order in a fresh interpreter: both compile and run in the same process.
IMPORT_ORDER_SCRIPT = textwrap.dedent("""
    import sys
    order = sys.argv[1].split(",")
    for name in order:
        if name == "tessera":
            import tessera as ts
        else:
            __import__(name)
    import jax, jax.numpy as jnp
    import numpy as np
    import tessera as ts
    jitted = jax.jit(lambda v: jnp.tanh(v) * 3)(jnp.ones((4, 4)))
    x = ts.Var("x")
    inp = ts.InputBuffer(ts.float32, 1, "a")
    f = ts.Func("f")
    f[x] = ts.tanh(inp[x]) * 3
    a = np.linspace(-2, 2, 33, dtype=np.float32)
    inp.set(a)
    out = ts.compile(f, threads=2).realize([33]).numpy()
    np.testing.assert_allclose(out, np.tanh(a) * 3, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jitted), np.tanh(1.0) * 3, rtol=1e-6)
    print("ok")
""")


@pytest.mark.parametrize("order", ["tessera,jax", "jax,tessera"])
def test_import_order_with_jax_both_compile(order):
    result = subprocess.run([sys.executable, "-c", IMPORT_ORDER_SCRIPT, order], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0 and result.stdout.strip().endswith("ok"), result.stderr[-3000:]
