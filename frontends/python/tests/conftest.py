import numpy as np
import pytest


@pytest.fixture
def rng():
    # A fixed seed per test, printed on failure by pytest's fixture report.
    return np.random.default_rng(20261124)
