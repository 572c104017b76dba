"""The Curie–Weiss model (Ising on the complete graph), its exact lumped Glauber chain, and its
toy family record.

``pi(x) ∝ exp((alpha/n) sum_{i<j} s_i s_j + h sum_i s_i)`` (Levin–Peres–Wilmer 2nd ed.,
Section 15.2, "The complete graph"). Heat-bath Glauber dynamics with a uniformly chosen site is
invariant under permutations of the sites, so the number ``k`` of ``+`` spins is itself a Markov
chain (the chain is lumpable): a birth–death chain on ``0..n``, exact for ``n`` in the thousands
where ``2**n`` states are out of reach.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
from scipy.special import gammaln, logsumexp

from glauber.core.validation import check_finite_float, check_positive_int
from glauber.exact.count_chain import CountChain, curie_weiss_gap
from glauber.theory.floating import UNIT_ROUNDOFF, gamma
from glauber.theory.influence_bounds import OscillationBound, pairwise_oscillation
from glauber.toy_models.base import ToyModel
from glauber.toy_models.family import Preset, ToyFamily
from glauber.toy_models.ising import spins


class CurieWeissModel(ToyModel):
    """Curie–Weiss model as a conditional model.

    ``s_i(s; x_{-i}) = s (h + (alpha/n) sum_{k != i} s_k)`` for the spin ``s`` of token 0 / 1.

    The same as ``IsingModel(nx.complete_graph(n), coupling=alpha/n, field=h)``, computed in
    ``O(n)`` per state. At temperature ``tau`` the Glauber chain is heat-bath for
    ``pi_tau(x) ∝ exp(((alpha/n) sum_{i<j} s_i s_j + h sum_i s_i) / tau)``.

    Parameters
    ----------
    n : int
        Number of sites, >= 1.
    alpha : float
        Total interaction strength; the pair coupling is ``alpha / n``. ``alpha < 1`` is the
        high-temperature phase, ``alpha > 1`` the low-temperature (bimodal) phase at ``tau = 1``.
    field : float, default 0.0
        Uniform external field ``h``.
    name : str, optional

    Raises
    ------
    InvalidParameterError
        If ``n < 1`` or ``alpha``, ``field`` are not finite reals.
    """

    def __init__(
        self, n: int, alpha: float, field: float = 0.0, name: str | None = None
    ) -> None:
        super().__init__(check_positive_int(n, "n"), 2, name=name or "curie-weiss",
                         labels=("-1", "+1"))
        self.alpha = check_finite_float(alpha, "alpha")
        self.field = check_finite_float(field, "field")

    def score_site(self, states: np.ndarray, site: int) -> np.ndarray:
        s = spins(states)
        others = s.sum(axis=1) - s[:, site]
        f = self.field + (self.alpha / self.n) * others
        return np.stack([-f, f], axis=1)

    @property
    def J(self) -> np.ndarray:
        """Pair couplings ``alpha / n`` off the diagonal (the complete graph)."""
        return (self.alpha / self.n) * (1.0 - np.eye(self.n))

    def is_monotone(self) -> bool:
        """Ferromagnetic (``alpha >= 0``): see ``IsingModel.is_monotone``."""
        return self.alpha >= 0.0

    def preserved_by(self, sites: Any, tokens: Any) -> bool:
        """Every site permutation; the spin flip too when the field is 0
        (:mod:`glauber.exact.symmetry`)."""
        t = tuple(int(a) for a in tokens)
        perm = sorted(int(i) for i in sites) == list(range(self.n))
        return perm and (t == (0, 1) or (t == (1, 0) and self.field == 0.0))

    def oscillation_upper_bound(self) -> OscillationBound:
        """Lemma 6's oscillation in closed form: ``4 |c|`` with ``c = fl(alpha / n)`` the pair
        coupling the scores use (the spin sum is exact in float64), plus the rounding of
        ``field + c * others`` (two operations: ``gamma_2`` of ``|field| + |c| (n - 1)``)."""
        c = self.alpha / self.n
        s = np.array([-1.0, 1.0])
        K = self.J[:, :, None, None] * np.outer(s, s)[None, None, :, :]
        err = np.full(self.n, gamma(2, UNIT_ROUNDOFF["float64"])
                      * (abs(self.field) + abs(c) * (self.n - 1)))
        return OscillationBound(pairwise_oscillation(K, err), "closed-form",
                                {"scores": "curie-weiss: s(a) (h + (alpha/n) sum_k s(x_k))"})

    def log_weight(self, states: np.ndarray) -> np.ndarray:
        """Gibbs log-weight at ``tau = 1``: ``(alpha/n) sum_{i<j} s_i s_j + h sum_i s_i``.

        Uses ``sum_{i<j} s_i s_j = (M^2 - n) / 2`` with ``M = sum_i s_i``.
        """
        m = spins(self.as_states(states)).sum(axis=1)
        return (self.alpha / self.n) * (m * m - self.n) / 2.0 + self.field * m


class CurieWeissLumpedChain(CountChain):
    """Exact Glauber chain of the Curie–Weiss model lumped to ``k`` = number of ``+`` spins.

    From a configuration with ``k`` plus spins, a uniformly chosen site holds ``+`` with
    probability ``k/n``; resampled from the heat-bath conditional at temperature ``tau`` it
    becomes ``-`` with probability ``sigmoid(-2 f_+(k) / tau)``, ``f_+(k) = h + (alpha/n)(2k-n-1)``.
    A ``-`` site (probability ``(n-k)/n``) becomes ``+`` with probability
    ``sigmoid(2 f_-(k) / tau)``, ``f_-(k) = h + (alpha/n)(2k-n+1)``. These rates depend on the
    configuration only through ``k``, so ``k`` is itself a Markov chain (lumpability): the
    :class:`~glauber.exact.count_chain.CountChain` of spin ``+`` with the score gap
    :func:`~glauber.exact.count_chain.curie_weiss_gap`. Its distances and ``t_mix`` are
    lower bounds on the full chain's (exact from the all-minus and all-plus starts), its spectral
    gap an upper bound (see :mod:`glauber.exact.count_chain`).

    Parameters
    ----------
    n : int
        Number of sites, >= 1.
    alpha : float
        Interaction strength (pair coupling ``alpha / n``).
    tau : float, default 1.0
        Temperature (scores divided by ``tau``: inverse temperature ``1 / tau``).
    field : float, default 0.0
        Uniform field ``h``.

    Raises
    ------
    InvalidParameterError, InvalidTemperatureError
        On a bad ``n``, ``alpha``, ``field`` or ``tau``.

    Examples
    --------
    >>> c = CurieWeissLumpedChain(4, alpha=0.5)
    >>> c.transition_matrix().shape
    (5, 5)
    >>> float(c.stationary().sum())
    1.0
    """

    def __init__(self, n: int, alpha: float, tau: float = 1.0, field: float = 0.0) -> None:
        n = check_positive_int(n, "n")
        self.alpha = check_finite_float(alpha, "alpha")
        self.field = check_finite_float(field, "field")
        super().__init__(n, 2, curie_weiss_gap(n, self.alpha, self.field), tau)

    def magnetisation_levels(self) -> np.ndarray:
        """Total magnetisation ``M = sum_i s_i = 2k - n`` of each level ``k = 0..n`` (int array)."""
        return 2 * np.arange(self.n + 1) - self.n

    def log_stationary(self) -> np.ndarray:
        """Log stationary law of the lumped chain, ``log pi(k)`` for ``k = 0..n``.

        ``pi(k) ∝ C(n, k) exp(((alpha/n)(M^2 - n)/2 + h M) / tau)`` with ``M = 2k - n``: the
        Gibbs weight of one configuration with ``k`` plus spins times their number (the closed
        form; the generic :meth:`CountChain.log_stationary` solves detailed balance instead).
        Computed in log space (``gammaln`` and ``logsumexp``), so it stays accurate when the
        weights span hundreds of orders of magnitude.
        """
        n = self.n
        k = np.arange(n + 1, dtype=np.float64)
        m = 2.0 * k - n
        log_binom = gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)
        log_w = log_binom + ((self.alpha / n) * (m * m - n) / 2.0 + self.field * m) / self.tau
        return log_w - logsumexp(log_w)

    def __repr__(self) -> str:
        return (
            f"CurieWeissLumpedChain(n={self.n}, alpha={self.alpha}, tau={self.tau}, "
            f"field={self.field})"
        )


# ------------------------------------------------------------------------------- the family
def _draw(draw: Any, n: int, q: int, options: Mapping[str, Any]) -> dict[str, Any]:
    from glauber.toy_models.draws import floats_in

    return {"alpha": draw(floats_in(options["alpha"])), "field": draw(floats_in(options["field"]))}


def _spin_couplings(model: CurieWeissModel) -> tuple[np.ndarray, np.ndarray]:
    """Pair coupling ``alpha / n`` on every pair, field ``h`` at every site."""
    return model.J, np.full(model.n, model.field)


#: The Curie–Weiss family: complete graph, pair coupling ``alpha / n``, one field.
CURIE_WEISS = ToyFamily(
    "curie-weiss", lambda n, q, alpha, field: CurieWeissModel(n, alpha, field=field), _draw,
    {"alpha": (-4.0, 4.0), "field": (-2.0, 2.0)}, min_sites=1, max_q=2,
    presets={"curie-weiss": Preset(
        lambda n, alpha, h: CurieWeissModel(n, alpha, field=h), {"n": 8, "alpha": 1.5, "h": 0.0},
        "Curie-Weiss: complete graph, pair coupling alpha/n (alpha > 1: slow, bimodal)")},
    spin_couplings=_spin_couplings,
)


__all__ = ["CURIE_WEISS", "CurieWeissLumpedChain", "CurieWeissModel"]
