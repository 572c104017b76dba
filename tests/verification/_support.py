"""Hypothesis strategies over random toy models and small exact references for the verification.

Every strategy draws a model with at most ``MAX_STATES`` states, so each example enumerates its
chain exactly in milliseconds. Models are built from drawn integer seeds (shrinkable).
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
from hypothesis import strategies as st
from scipy.special import logsumexp

from glauber.core.enumeration import all_states
from glauber.toy_models import (
    AsymmetricIsingModel,
    CurieWeissModel,
    FunctionModel,
    IsingModel,
    PlantedBasinModel,
    PottsModel,
)

from ..support import table_model

MAX_STATES = 256

seeds = st.integers(0, 2**32 - 1)
temperatures = st.floats(0.4, 4.0)


def _shape(draw: Any, min_n: int = 2, max_n: int = 8, max_q: int = 4) -> tuple[int, int]:
    q = draw(st.integers(2, max_q))
    top = max(n for n in range(1, max_n + 1) if q**n <= MAX_STATES)
    n = draw(st.integers(min_n, max(min_n, top)))
    return n, q


@st.composite
def table_models(draw: Any) -> FunctionModel:
    n, q = _shape(draw, max_n=6)
    return table_model(n, q, draw(seeds), draw(st.floats(0.1, 2.0)))


@st.composite
def asym_ising_models(draw: Any, min_asym: float = 0.0) -> AsymmetricIsingModel:
    n = draw(st.integers(2, 8))
    rng = np.random.default_rng(draw(seeds))
    field = draw(st.floats(0.0, 1.0)) * rng.standard_normal(n)
    return AsymmetricIsingModel.random(
        n, rng=rng, scale=draw(st.floats(0.1, 1.5)), asym=draw(st.floats(min_asym, 1.0)),
        field=field,
    )


def random_graph(n: int, p: float, seed: int) -> nx.Graph:
    return nx.gnp_random_graph(n, p, seed=seed)


@st.composite
def ising_models(draw: Any) -> IsingModel:
    n = draw(st.integers(2, 8))
    seed = draw(seeds)
    graph = random_graph(n, draw(st.floats(0.2, 1.0)), seed)
    rng = np.random.default_rng(seed)
    coupling = {e: float(rng.uniform(-1.5, 1.5)) for e in graph.edges}
    field = draw(st.floats(0.0, 1.0)) * rng.standard_normal(n)
    return IsingModel(graph, coupling=coupling, field=field)


@st.composite
def potts_models(draw: Any) -> PottsModel:
    q = draw(st.integers(3, 4))
    n = draw(st.integers(2, 5 if q == 3 else 4))
    seed = draw(seeds)
    graph = random_graph(n, draw(st.floats(0.3, 1.0)), seed)
    rng = np.random.default_rng(seed)
    coupling = {e: float(rng.uniform(-1.0, 2.0)) for e in graph.edges}
    field = draw(st.floats(0.0, 1.0)) * rng.standard_normal((n, q))
    return PottsModel(graph, q, coupling=coupling, field=field)


@st.composite
def planted_models(draw: Any) -> PlantedBasinModel:
    n, q = _shape(draw, max_n=6, max_q=3)
    return PlantedBasinModel.with_random_base(
        n, q, rng=draw(seeds), scale=draw(st.floats(0.0, 1.0)),
        token=draw(st.integers(0, q - 1)), strength=draw(st.floats(0.0, 6.0)),
    )


@st.composite
def curie_weiss_models(draw: Any) -> CurieWeissModel:
    return CurieWeissModel(
        draw(st.integers(2, 8)), draw(st.floats(0.0, 3.0)), field=draw(st.floats(-0.5, 0.5))
    )


def gibbs_models() -> st.SearchStrategy:
    """Compatible models with a closed-form Gibbs law (``log_weight``)."""
    return st.one_of(ising_models(), potts_models(), planted_models(), curie_weiss_models())


def any_models() -> st.SearchStrategy:
    return st.one_of(
        table_models(), asym_ising_models(), ising_models(), potts_models(), planted_models(),
        curie_weiss_models(),
    )


def gibbs_law(model: Any, tau: float) -> np.ndarray:
    """``pi_tau(x) ∝ exp(log_weight(x) / tau)`` over all states (log-space normalisation)."""
    logw = model.log_weight(all_states(model.n, model.q)) / tau
    return np.exp(logw - logsumexp(logw))


def tv_from_each_start(P: np.ndarray, pi: np.ndarray, t: int) -> np.ndarray:
    """``||P^t(x, .) - pi||_TV`` for every start ``x`` (dense power; slow reference)."""
    return 0.5 * np.abs(np.linalg.matrix_power(P, t) - pi[None, :]).sum(axis=1)


def absorbing_hit_within(P: np.ndarray, target: np.ndarray, T: int) -> np.ndarray:
    """``P_x(hit target within T)`` from the T-th power of the absorbed chain (dense reference)."""
    Q = P.copy()
    Q[target] = 0.0
    Q[target, target] = 1.0
    return np.linalg.matrix_power(Q, T)[:, target].sum(axis=1)


#: Rounding allowance when ``d(t)`` is compared with ``eps`` (a bound can be attained exactly).
TIE = 1e-9


def mixes_by(chain: Any, t: float, eps: float = 0.25) -> bool:
    """``t_mix(eps) <= t``, i.e. ``d(floor(t)) <= eps`` (up to :data:`TIE`)."""
    return chain.distance(int(np.floor(t))) <= eps + TIE


def not_mixed_before(chain: Any, bound: float, eps: float = 0.25) -> bool:
    """``t_mix(eps) >= bound``, i.e. ``d(ceil(bound) - 1) > eps`` (up to :data:`TIE`)."""
    t = int(np.ceil(bound)) - 1
    return t < 0 or chain.distance(t) > eps - TIE


def tau_near_threshold(model: Any, factor: float) -> float:
    """``factor`` times Corollary 7's threshold temperature ``max_i sum_j Delta_ij / 4``.

    Keeps each drawn chain at a temperature on the scale of its own interactions, around the
    point where the high-temperature certificates start to hold (factor ~ 1).
    """
    from glauber.toy_models.exact_chain import ExactChain

    Delta = ExactChain(model, 1.0).oscillation_matrix()
    return max(factor * float(Delta.sum(axis=1).max()) / 4.0, 0.05)
