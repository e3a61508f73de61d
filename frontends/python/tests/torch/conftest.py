import pytest
import torch


@pytest.fixture(autouse=True)
def fresh_dynamo():
    # Each test compiles its own functions: no cache entries, recompile limits or counters carry over.
    torch._dynamo.reset()
    from tessera.torch_frontend import reset_stats
    reset_stats()
    yield
    torch._dynamo.reset()


@pytest.fixture
def gen():
    return torch.Generator().manual_seed(20261124)
