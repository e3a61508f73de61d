"""Buffers wrap NumPy arrays and DLPack producers without copying, in and out."""
import gc

import numpy as np
import pytest

import tessera as ts

x, y = ts.Var("x"), ts.Var("y")


class DLPackOnly:
    """A producer that offers nothing but the DLPack protocol (as torch and JAX tensors do)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def doubled(inp):
    f = ts.Func("doubled")
    f[x, y] = inp[x, y] * 2
    return f


def test_buffer_from_numpy_shares_memory_with_axes_reversed():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = ts.Buffer(a)
    assert b.data_address() == a.ctypes.data
    assert (b.width, b.height, b.sizes) == (4, 3, [4, 3])
    assert (b.stride(0), b.stride(1)) == (1, 4)
    assert b[1, 2] == a[2, 1]
    a[2, 1] = 99
    assert b[1, 2] == 99
    b[0, 0] = -5
    assert a[0, 0] == -5
    view = b.numpy()
    assert np.shares_memory(view, a) and view.shape == (3, 4)


def test_input_is_read_in_place_and_output_written_in_place():
    img = np.random.default_rng(1).random((5, 7)).astype(np.float32)
    out = np.full((5, 7), np.nan, np.float32)
    out_address = out.ctypes.data
    inp = ts.InputBuffer(ts.float32, 2, "img")
    inp.set(img)
    assert inp.get().data_address() == img.ctypes.data
    doubled(inp).realize(out)
    assert out.ctypes.data == out_address
    np.testing.assert_array_equal(out, img * 2)


def test_realized_buffer_exports_its_own_memory():
    f = ts.Func("ramp")
    f[x, y] = x + 10 * y
    b = f.realize([3, 2])
    view = np.asarray(b)
    assert view.ctypes.data == b.data_address()
    assert view.tolist() == [[0, 1, 2], [10, 11, 12]]
    via_dlpack = np.from_dlpack(b)
    assert via_dlpack.ctypes.data == b.data_address()
    del b
    gc.collect()
    # The views keep the buffer's memory alive.
    assert view.tolist() == [[0, 1, 2], [10, 11, 12]] and via_dlpack[1, 2] == 12


def test_dlpack_producer_is_wrapped_without_copying():
    a = np.arange(20, dtype=np.int32).reshape(4, 5)
    out = np.zeros((4, 5), np.int32)
    inp = ts.InputBuffer(ts.int32, 2, "a")
    inp.set(DLPackOnly(a))
    assert inp.get().data_address() == a.ctypes.data
    doubled(inp).realize(DLPackOnly(out))
    np.testing.assert_array_equal(out, a * 2)


def test_strided_and_transposed_views_are_read_through_their_strides():
    base = np.arange(200, dtype=np.float64).reshape(10, 20)
    for view in [base[1:9:2, 3:17:3], base.T, base[::-1, ::2]]:
        inp = ts.InputBuffer(ts.float64, 2, "v")
        inp.set(view)
        assert inp.get().data_address() == view.__array_interface__["data"][0]
        out = doubled(inp).realize([view.shape[1], view.shape[0]]).numpy()
        np.testing.assert_array_equal(out, view * 2)
    # And written through them.
    target = np.zeros((8, 6))
    inp = ts.InputBuffer(ts.float64, 2, "v")
    inp.set(np.ones((3, 4)))
    doubled(inp).realize(target[::2, ::2].T)
    assert target[::2, ::2].sum() == 2 * 12 and target.sum() == 2 * 12


def test_every_element_type_round_trips():
    for dtype in [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                  np.float16, np.float32, np.float64]:
        a = (np.arange(6) % 2 == 1) if dtype == np.bool_ else np.arange(6).astype(dtype)
        inp = ts.InputBuffer(dtype, 1, "a")
        inp.set(a)
        f = ts.Func("copy")
        f[x] = inp[x]
        out = f.realize([6])
        assert out.type == ts.Buffer(a).type
        np.testing.assert_array_equal(out.numpy(), a, err_msg=str(dtype))


def test_wrapped_array_stays_alive_while_tessera_holds_it():
    inp = ts.InputBuffer(ts.float32, 2, "img")
    inp.set(np.full((6, 8), 3, np.float32))  # no other reference to the array
    gc.collect()
    np.testing.assert_array_equal(doubled(inp).realize([8, 6]).numpy(), np.full((6, 8), 6, np.float32))


def test_read_only_arrays_are_inputs_but_not_outputs():
    a = np.ones((4, 4), np.float32)
    a.flags.writeable = False
    inp = ts.InputBuffer(ts.float32, 2, "a")
    inp.set(a)
    f = doubled(inp)
    assert f.realize([4, 4]).numpy().sum() == 32
    with pytest.raises(ts.UserError, match="read-only"):
        f.realize(a)


def test_bad_arrays_get_clear_errors():
    inp = ts.InputBuffer(ts.float32, 2, "a")
    with pytest.raises(ts.UserError, match="broadcast"):
        inp.set(np.broadcast_to(np.ones(4, np.float32), (3, 4)))
    with pytest.raises(ts.UserError, match="type"):
        inp.set(np.ones((2, 2), np.complex64))
    with pytest.raises(ts.UserError, match="InputBuffer a"):
        inp.set(np.ones((2, 2), np.float64))
    with pytest.raises(ts.UserError, match="neither a tessera.Buffer nor an array"):
        inp.set([[1.0, 2.0]])
    with pytest.raises(ts.UserError, match="too small"):
        inp.set(np.ones((2, 2), np.float32))
        doubled(inp).realize([3, 2])


def test_allocated_buffer_is_zeroed_and_usable_as_output():
    b = ts.Buffer(ts.int16, [5, 3], "out")
    assert b.numpy().shape == (3, 5) and not b.numpy().any()
    f = ts.Func("f")
    f[x, y] = ts.cast(ts.int16, x - y)
    f.realize(b)
    assert b[4, 0] == 4 and b[0, 2] == -2


def test_empty_outputs_realize_to_empty_arrays():
    f = ts.Func("f")
    f[x, y] = x + y
    assert f.realize([3, 0]).numpy().shape == (0, 3)
    assert f.realize([0, 4]).numpy().shape == (4, 0)
    out = np.zeros((0, 5), np.int32)
    f.realize(out)
