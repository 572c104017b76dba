"""Fixtures of the estimator tests."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """Run torch single-threaded during these tests (their tensors are tiny; on a busy 2-core
    machine intra-op threads cost ~100x per call), and restore the setting afterwards."""
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)
