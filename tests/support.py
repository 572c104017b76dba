"""Models and slow references shared by the test folders (one copy of each).

Nothing here uses the code under test beyond the model classes: the enumeration is
``itertools.product``, the fixed random model is a table of scores and :func:`power_sum_mp` is
mpmath on exact rationals; random models for properties come from :func:`glauber.testing.models`
(:func:`score_tables` names the families).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath
import numpy as np

from glauber.testing import models
from glauber.toy_models import FunctionModel


def states(n: int, q: int) -> np.ndarray:
    """Every state of ``{0..q-1}^n`` in mixed radix, site 0 most significant (a reference
    enumeration: ``itertools.product`` order)."""
    return np.array(list(itertools.product(range(q), repeat=n)), dtype=np.int64)


def table_model(n: int, q: int, seed: int, scale: float = 1.0, bias: float = 0.0) -> FunctionModel:
    """A random, generally incompatible model: an independent score vector for every site and
    context ``x_{-i}``, ``s_i(a; x_{-i}) = T[i, x with x_i := 0, a]``, plus ``bias`` on token 0.

    ``ToyModel.scores`` masks the resampled site to 0 before the call, so indexing the table by
    the masked state's mixed-radix index makes the conditional ignore the site's own token.
    """
    table = scale * np.random.default_rng(seed).standard_normal((n, q**n, q))
    table[:, :, 0] += bias
    powers = q ** np.arange(n - 1, -1, -1)

    def score(x: np.ndarray, i: int) -> np.ndarray:
        return table[i, x @ powers]

    return FunctionModel(n, q, score, name=f"table:n={n},q={q},seed={seed}")


def score_tables(max_states: int = 64, scale: tuple[float, float] = (0.0, 3.0), *,
                 min_sites: int = 1, max_sites: int | None = None, max_q: int = 4):
    """Random score tables from :func:`glauber.testing.models`: the ``random-table`` family
    (i.i.d. normal scores times ``scale``, no bias) and ``random-joint`` (normal energies times
    ``scale``; single sites too). ``model.spec.params["scale"]`` is the drawn scale."""
    return models(max_states, families={"random-table": {"scale": scale, "bias": (0.0, 0.0)},
                                        "random-joint": {"scale": scale}},
                  min_sites=min_sites, max_sites=max_sites, max_q=max_q)


_MP = mpmath.mp.clone()
_MP.dps = 80


def power_sum_mp(C: np.ndarray, t: int) -> mpmath.mpf:
    """``1^T M^t 1`` at 80 digits with ``M = ((n - 1) I + C) / n`` built from exact rationals
    (the quantity behind the matrix-power certificate of Theorem 5, ``d(t) <= 1^T M^t 1``)."""
    n = C.shape[0]
    M = _MP.matrix(n, n)
    for i in range(n):
        for j in range(n):
            exact = Fraction(n - 1, n) if i == j else Fraction(float(C[i, j])) / n
            M[i, j] = _MP.mpf(exact.numerator) / exact.denominator
    P = M**t
    return _MP.fsum(P[i, j] for i in range(n) for j in range(n))


class CountingModel:
    """A model with a ``cache_key`` (as a restricted masked LM has) that counts the calls and
    rows asked of it and fails on its ``fail_on``-th call (an interrupted build); it pickles
    (an executor's workers can run it)."""

    def __init__(self, inner, key: str = "keyed", fail_on: int | None = None) -> None:
        self.inner, self.n, self.q = inner, inner.n, inner.q
        self.vocab = getattr(inner, "vocab", None)
        self.cache_key, self.fail_on = key, fail_on
        self.calls = self.rows = 0

    def scores(self, states, sites):
        self.calls += 1
        if self.fail_on is not None and self.calls >= self.fail_on:
            raise KeyboardInterrupt("interrupted build")
        self.rows += len(states)
        return self.inner.scores(states, sites)
