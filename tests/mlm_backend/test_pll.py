"""Pseudo-log-likelihood and the Metropolis-Hastings sampler on AntiBERTy (a real 8-layer MLM).

Oracle: ``n`` separate masked forwards, one row per call (``model.scores`` of one state with one
site masked), summed term by term.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from glauber.core.conditionals import log_conditionals
from glauber.estimators import glauber_chains, pseudo_log_likelihood
from glauber.mlm_backend import load_antiberty

TRASTUZUMAB_START = "EVQLVESGGGLV"


@pytest.fixture(scope="module")
def antiberty():
    return load_antiberty(n=12)


def _separate_forwards(model, x: torch.Tensor, tau: float) -> float:
    total = 0.0
    for k in range(model.n):
        lp = log_conditionals(model, x[None, :], torch.tensor([k]), tau)[0]
        total += float(lp[x[k]])
    return total


def test_pll_equals_n_separate_masked_forwards(antiberty, single_thread) -> None:
    x = antiberty.encode(TRASTUZUMAB_START)
    xs = torch.stack([x, x.flip(0)])
    got = pseudo_log_likelihood(antiberty, xs, tau=0.7, batch_size=7)
    expected = [_separate_forwards(antiberty, s, 0.7) for s in xs]
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    norm = pseudo_log_likelihood(antiberty, xs, tau=0.7, normalise=True, batch_size=24)
    np.testing.assert_allclose(norm, np.array(expected) / 12, rtol=1e-5)


def test_metropolis_sampler_caches_the_energy_of_its_states(antiberty, single_thread) -> None:
    """After a run, the cached E of each chain is -PLL_1 of its final state (recomputed)."""
    x = antiberty.encode(TRASTUZUMAB_START)
    res = glauber_chains(antiberty, 1.0, torch.stack([x, x]), 3, seed=0, kernel="mh:pll",
                         batch_size=64)
    np.testing.assert_allclose(res.final_energy,
                               -pseudo_log_likelihood(antiberty, res.final_states), rtol=1e-5)
    acc = res.acceptance
    assert acc.proposed.sum() == 6 and 0.0 <= acc.overall <= 1.0
