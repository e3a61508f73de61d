"""Tessera next to the frameworks: arrays pass both ways without copies, and importing Tessera
before or after torch, JAX and TensorFlow works, with all compiling in the same process (each LLVM
that Tessera and the frameworks load stays private to its library)."""
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


# Each import order in a fresh interpreter: Tessera and every framework imported compile and run
# in the same process. The frameworks bring their own LLVMs (jaxlib's XLA, TensorFlow's XLA,
# triton's under torch's Inductor). Each framework compiles here with its own compiler (XLA for JAX
# and TensorFlow), torch with the Tessera backend (see below for torch next to TensorFlow). Before DEEPBIND (tessera/__init__.py), importing
# TensorFlow first made Tessera's first compile crash.
IMPORT_ORDER_SCRIPT = textwrap.dedent("""
    import os, sys
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    order = sys.argv[1].split(",")
    for name in order:
        __import__(name)
    import numpy as np
    import tessera as ts
    x = ts.Var("x")
    inp = ts.InputBuffer(ts.float32, 1, "a")
    f = ts.Func("f")
    f[x] = ts.tanh(inp[x]) * 3
    a = np.linspace(-2, 2, 33, dtype=np.float32)
    inp.set(a)
    out = ts.compile(f, threads=2).realize([33]).numpy()
    np.testing.assert_allclose(out, np.tanh(a) * 3, rtol=1e-6)
    if "jax" in order:
        import jax, jax.numpy as jnp
        jitted = jax.jit(lambda v: jnp.tanh(v) * 3)(jnp.ones((4, 4)))
        np.testing.assert_allclose(np.asarray(jitted), np.tanh(1.0) * 3, rtol=1e-6)
    if "tensorflow" in order:
        import tensorflow as tf
        xla = tf.function(lambda v: tf.tanh(v) * 3, jit_compile=True)(tf.ones((4, 4)))
        np.testing.assert_allclose(xla.numpy(), np.tanh(1.0) * 3, rtol=1e-6)
    if "torch" in order:
        import torch
        t = torch.linspace(-2, 2, 33)
        fn = lambda v: torch.tanh(v) * 3
        if "tensorflow" not in order:
            import triton  # noqa: F401  (triton's LLVM, as Inductor loads it)
            got = torch.compile(fn, backend="tessera")(t)
        else:
            # Next to TensorFlow, torch.compile with any backend aborts without Tessera: dynamo
            # imports triton, and its LLVM and TensorFlow's register the same options. Tessera
            # still compiles on torch tensors, through the op library.
            from tessera import ops
            got = torch.from_dlpack(ops.mul(ops.tanh(ops.from_array(t)), 3.0).realize())
        torch.testing.assert_close(got, torch.tanh(t) * 3)
    print("ok")
""")

ORDERS = ["tessera,jax", "jax,tessera", "tessera,torch", "torch,tessera", "tessera,tensorflow", "tensorflow,tessera",
          "tessera,torch,tensorflow,jax", "tensorflow,torch,jax,tessera", "jax,tensorflow,tessera,torch"]


@pytest.mark.parametrize("order", ORDERS)
def test_import_order_with_frameworks_all_compile(order):
    result = subprocess.run([sys.executable, "-c", IMPORT_ORDER_SCRIPT, order], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0 and result.stdout.strip().endswith("ok"), result.stderr[-3000:]
