"""Random torch programs through the Tessera backend against eager: chains of elementwise ops with
broadcasting, reductions, layout maps (reshape, permute, slice, expand, cat, pad) and matmuls on
random shapes with odd and size-1 axes. Each program is compiled with fallback=False, so every op
is Tessera's. The seed of a failing program is in the test id; `fuzz_program(seed)` rebuilds it."""
import random

import pytest
import torch
import torch.nn.functional as F

import tessera as ts
from tessera.torch_frontend import stats

UNARY = [torch.relu, torch.tanh, torch.sigmoid, torch.neg, torch.abs, F.silu, F.gelu,
         lambda t: torch.exp(t.clamp(-5, 5)), lambda t: torch.sqrt(t.abs() + 0.5), lambda t: t * 0.5 + 1]
BINARY = [torch.add, torch.sub, torch.mul, torch.maximum, torch.minimum, lambda a, b: a / (b.abs() + 1),
          lambda a, b: torch.where(a > b, a, b)]


def fuzz_program(seed):
    """A random program: a list of steps applied to one input tensor of a random shape."""
    rng = random.Random(seed)
    rank = rng.randint(1, 4)
    shape = [rng.choice([1, 2, 3, 5, 7, 8, 13]) for _ in range(rank)]
    steps = [rng.randrange(8) for _ in range(rng.randint(2, 7))]
    params = [rng.random() for _ in range(len(steps) * 4)]

    def program(x):
        values = [x]
        p = iter(params)
        for kind in steps:
            a = values[-1]
            b = values[int(next(p) * len(values))]
            if kind == 0:
                a = UNARY[int(next(p) * len(UNARY))](a)
            elif kind == 1 and b.shape == a.shape:
                a = BINARY[int(next(p) * len(BINARY))](a, b)
            elif kind == 2 and a.dim() >= 1:   # broadcast against a reduction with keepdim
                d = int(next(p) * a.dim())
                a = a - a.mean(d, keepdim=True) if next(p) < 0.5 else a * a.amax(d, keepdim=True)
            elif kind == 3 and a.dim() >= 2:
                perm = list(range(a.dim()))
                i, j = int(next(p) * a.dim()), int(next(p) * a.dim())
                perm[i], perm[j] = perm[j], perm[i]
                a = a.permute(perm) + 0
            elif kind == 4:                     # reshape: merge the first two axes, or split the last
                if a.dim() >= 2 and next(p) < 0.5:
                    a = a.reshape([a.shape[0] * a.shape[1]] + list(a.shape[2:]))
                elif a.shape[-1] % 2 == 0:
                    a = a.reshape(list(a.shape[:-1]) + [2, a.shape[-1] // 2])
                else:
                    a = a.unsqueeze(0).expand([2] + list(a.shape)) * 1.5
            elif kind == 5 and a.shape[-1] >= 2:  # slices, concatenated and padded
                k = max(1, int(next(p) * a.shape[-1]))
                a = F.pad(torch.cat([a[..., :k], a[..., k:] * 2], -1), (1, 0), value=0.25)
            elif kind == 6 and a.dim() >= 2 and a.dim() <= 3:  # matmul with its own transpose
                a = a @ a.transpose(-1, -2) * 0.1
            elif kind == 7 and a.dim() >= 2:
                a = torch.softmax(a, -1) + a.sum(-2, keepdim=True)
            values.append(a)
        return values[-1]

    return program, shape


@pytest.mark.parametrize("seed", range(40))
def test_random_programs_match_eager(seed):
    program, shape = fuzz_program(seed)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
    expected = program(x)
    graphs = stats()["graphs"]
    got = ts.jit_torch(program, fallback=False)(x)
    # (A program whose steps all skip returns its input, and has no graph.)
    assert expected is x or stats()["graphs"] > graphs, "the program ran in eager PyTorch: Tessera received no graph"
    assert got.shape == expected.shape and got.dtype == expected.dtype
    # Both float32 results against the program in float64: sums and the cancellations after them
    # round differently in different orders (Tessera sums in the written order, torch in
    # blocks), so the bound is a multiple of torch's own error plus a few float32 ulps of the
    # largest value.
    truth = program(x.double())
    torch_error = float((expected.double() - truth).abs().max())
    tessera_error = float((got.double() - truth).abs().max())
    ulps = 8 * 2.0 ** -23 * float(truth.abs().max())
    assert tessera_error <= 8 * torch_error + ulps + 1e-6, (tessera_error, torch_error, ulps)
