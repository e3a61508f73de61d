import numpy as np
import pytest

from stale_package import stale_reason


def pytest_sessionstart(session):
    # An installed package older than its sources stops the session with the command to run.
    reason = stale_reason()
    if reason is not None:
        pytest.exit(reason, returncode=1)


@pytest.fixture
def rng():
    # A fixed seed per test, printed on failure by pytest's fixture report.
    return np.random.default_rng(20261124)
