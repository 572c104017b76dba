"""The battery of toy instances that ``glauber verify`` runs every statement on (seeds fixed).

Families (each at several temperatures, low ones included):

* ``random-table``: a :class:`~glauber.toy_models.random_table.RandomTableModel`, i.i.d.
  normal scores ``s_i(a; x_{-i})`` for every site and context (incompatible, non-reversible);
* ``random-joint``: a :class:`~glauber.toy_models.random_joint.RandomJointModel`, scores
  ``E(x^(i -> a))`` (compatible by construction, joint ``exp(E / tau)``);
* ``ising``: Ising on networkx cycles, a path, a star, a grid and a complete graph;
* ``potts``: 3-colour Potts on a cycle;
* ``asym-ising``: random asymmetric couplings (incompatible);
* ``curie-weiss``: the full chain at small ``n`` and the exact lumped chain at large ``n``;
* ``planted``: the self-reinforcing token basin (full chains, and lumped at large ``n``);
* ``counterexample``: the designed counterexamples of
  :mod:`glauber.toy_models.counterexamples`.

Every instance carries the basins the basin statements use: count basins ``{X >= b}`` with a
band and a horizon for Section 5.4, and for the random families the "perfect trap" with the
largest margin (a state where every site holds its strict argmax), if there is one.
"""

from __future__ import annotations

import math
from typing import Callable, Iterator

import networkx as nx
import numpy as np

from glauber.core.enumeration import all_states
from glauber.exact.basins import CountBasin, NamedMask
from glauber.exact.count_chain import CountChain, curie_weiss_gap, planted_gap
from glauber.toy_models import counterexamples
from glauber.toy_models.asym_ising import AsymmetricIsingModel
from glauber.toy_models.base import ToyModel
from glauber.toy_models.curie_weiss import CurieWeissModel
from glauber.toy_models.ising import IsingModel
from glauber.toy_models.planted import PlantedBasinModel
from glauber.toy_models.potts import PottsModel
from glauber.toy_models.random_joint import RandomJointModel
from glauber.toy_models.random_table import RandomTableModel
from glauber.toy_models.specs import parse_toy_spec
from glauber.verification.instances import (
    ChainInstance,
    CounterexampleData,
    Instance,
    IsingData,
    LumpedInstance,
)

# ------------------------------------------------------------------------- random models


def random_table_model(n: int, q: int, rng: np.random.Generator, scale: float) -> ToyModel:
    """:class:`~glauber.toy_models.random_table.RandomTableModel`: i.i.d. ``Normal(0, scale^2)``
    scores per site, context and token."""
    return RandomTableModel(n, q, rng, scale, name=f"random-table:n={n},q={q},scale={scale}")


def random_joint_model(
    n: int, q: int, rng: np.random.Generator, scale: float
) -> tuple[ToyModel, Callable[[np.ndarray], np.ndarray]]:
    """Compatible :class:`~glauber.toy_models.random_joint.RandomJointModel`
    ``s_i(a; x_{-i}) = E(x^(i -> a))`` and its log-weight ``E``."""
    model = RandomJointModel(n, q, rng, scale, name=f"random-joint:n={n},q={q},scale={scale}")
    return model, model.log_weight


# ------------------------------------------------------------------------------- basins


def count_basin(model: ToyModel, token: int, b: int, a: int, horizon: int) -> NamedMask:
    """``{x : #{i : x_i = token} >= b}`` with the band ``(a, b)`` and horizon ``T``."""
    states = all_states(model.n, model.q)
    mask = (states == token).sum(axis=1) >= b
    return NamedMask(f"#{token}>={b}", mask, CountBasin(token, b, a, horizon))


def perfect_trap(model: ToyModel) -> tuple[NamedMask, ...]:
    """The singleton basin of the state whose sites all hold their strict argmax, by margin.

    Such a state satisfies Assumption 1 for ``B = {x}`` (every site is exit-causing); the one
    with the largest smallest margin is returned, or nothing if no state qualifies.
    """
    states = all_states(model.n, model.q)
    gaps = np.empty((model.n, len(states)))
    for i in range(model.n):
        s = model.scores(states, np.full(len(states), i))
        own = s[np.arange(len(states)), states[:, i]]
        s[np.arange(len(states)), states[:, i]] = -np.inf
        gaps[i] = own - s.max(axis=1)
    margin = gaps.min(axis=0)
    best = int(np.argmax(margin))
    if margin[best] <= 0.0:
        return ()
    mask = np.zeros(len(states), dtype=bool)
    mask[best] = True
    return (NamedMask(f"trap {''.join(map(str, states[best]))}", mask),)


def _ising_data(model: IsingModel | AsymmetricIsingModel | CurieWeissModel,
                cycle: bool = False) -> IsingData:
    if isinstance(model, CurieWeissModel):
        J = np.full((model.n, model.n), model.alpha / model.n)
        np.fill_diagonal(J, 0.0)
        return IsingData(J, model.field == 0.0, model.alpha / model.n, False)
    J = np.asarray(model.J, dtype=np.float64)
    edges = J[J != 0.0]
    uniform = (
        float(edges[0])
        if edges.size and np.array_equal(J, J.T) and np.all(edges == edges[0]) and edges[0] > 0
        else None
    )
    return IsingData(J, not np.any(model.h), uniform, cycle)


# ----------------------------------------------------------------------------- families


def _seeded(seed: int, *key: int) -> np.random.Generator:
    return np.random.default_rng([seed, *key])


def _random_family(seed: int, quick: bool) -> Iterator[Instance]:
    sizes = [(3, 2), (2, 4), (3, 3)] if quick else [(3, 2), (4, 2), (2, 4), (3, 3), (6, 2),
                                                   (4, 3)]
    temps = (0.5, 2.0) if quick else (0.3, 1.0, 3.0)
    for k, (n, q) in enumerate(sizes):
        table = random_table_model(n, q, _seeded(seed, 1, k), 1.5)
        joint, log_weight = random_joint_model(n, q, _seeded(seed, 2, k), 1.5)
        for tau in temps:
            yield ChainInstance(f"{table.name},seed={seed} @ tau={tau}", "random-table", table,
                                tau, basins=perfect_trap(table))
            yield ChainInstance(f"{joint.name},seed={seed} @ tau={tau}", "random-joint", joint,
                                tau, log_weight=log_weight, basins=perfect_trap(joint))


def _ising_family(quick: bool) -> Iterator[Instance]:
    specs = ["ising-cycle:n=6", "ising-star:n=5"] if quick else [
        "ising-cycle:n=6", "ising-cycle:n=8", "ising-path:n=6", "ising-star:n=5",
        "ising-grid:rows=2,cols=3", "ising-complete:n=5",
    ]
    temps = (0.75, 4.0) if quick else (0.6, 1.5, 4.0)
    for spec in specs:
        model = parse_toy_spec(spec)
        n = model.n
        basins = (
            count_basin(model, 1, n, n - 3, 100),
            count_basin(model, 1, n // 2 + 1, 0, 100),
        )
        data = _ising_data(model, cycle=spec.startswith("ising-cycle"))
        for tau in temps:
            yield ChainInstance(f"{model.name} @ tau={tau}", "ising", model, tau,
                                log_weight=model.log_weight, ising=data, basins=basins)


def _potts_family(quick: bool) -> Iterator[Instance]:
    n = 4 if quick else 5
    model = PottsModel(nx.cycle_graph(n), 3, coupling=1.0, name=f"potts-cycle:n={n},q=3,J=1.0")
    basins = (count_basin(model, 0, n, n - 3, 100), count_basin(model, 0, 3, 0, 100))
    for tau in ((0.5,) if quick else (0.4, 1.0, 3.0)):
        yield ChainInstance(f"{model.name} @ tau={tau}", "potts", model, tau,
                            log_weight=model.log_weight, basins=basins)


def _asym_family(seed: int, quick: bool) -> Iterator[Instance]:
    n = 5 if quick else 6
    for k, asym in enumerate((1.0,) if quick else (0.5, 1.0)):
        model = AsymmetricIsingModel.random(n, rng=_seeded(seed, 3, k), scale=1.0, asym=asym)
        model.name = f"asym-ising:n={n},asym={asym},seed={seed}"
        basins = perfect_trap(model) + (count_basin(model, 1, n - 2, 1, 100),)
        for tau in ((0.5,) if quick else (0.4, 1.0, 3.0)):
            yield ChainInstance(f"{model.name} @ tau={tau}", "asym-ising", model, tau,
                                ising=_ising_data(model), basins=basins)


def _curie_weiss_family(quick: bool) -> Iterator[Instance]:
    n = 6 if quick else 7
    for alpha in ((2.0,) if quick else (0.5, 2.0)):
        model = CurieWeissModel(n, alpha, name=f"curie-weiss:n={n},alpha={alpha}")
        basins = (count_basin(model, 1, n - 1, n - 4, 50), count_basin(model, 1, n // 2 + 1, 1, 50))
        for tau in ((1.0,) if quick else (0.5, 1.0, 2.0)):
            yield ChainInstance(f"{model.name} @ tau={tau}", "curie-weiss", model, tau,
                                log_weight=model.log_weight, ising=_ising_data(model),
                                basins=basins)


def _planted_family(quick: bool) -> Iterator[Instance]:
    models = [PlantedBasinModel(4, 3, token=0, strength=4.0, base=[-2.0, 0.0, 0.0],
                                name="planted:n=4,q=3,strength=4,base=(-2,0,0)")]
    if not quick:
        models = [
            PlantedBasinModel(5, 3, token=0, strength=4.0, base=[-2.0, 0.0, 0.0],
                              name="planted:n=5,q=3,strength=4,base=(-2,0,0)"),
            PlantedBasinModel(8, 2, token=0, strength=4.0, base=[-2.0, 0.0],
                              name="planted:n=8,q=2,strength=4,base=(-2,0)"),
        ]
    for model in models:
        n = model.n
        basins = (count_basin(model, 0, n - 1, 1, 100), count_basin(model, 0, n, n - 3, 100))
        for tau in ((0.5,) if quick else (0.3, 1.0, 3.0)):
            yield ChainInstance(f"{model.name} @ tau={tau}", "planted", model, tau,
                                log_weight=model.log_weight, basins=basins)


def _level_basin(chain: CountChain, b: int, a: int, horizon: int) -> NamedMask:
    return NamedMask(f"X>={b}", chain.levels() >= b, CountBasin(1, b, a, horizon))


def _log_binomial(n: int) -> np.ndarray:
    return np.array([math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
                     for k in range(n + 1)])


def _lumped_family(quick: bool) -> Iterator[Instance]:
    n, alpha, tau = (61, 1.4, 1.0) if quick else (201, 1.6, 1.0)
    chain = CountChain(n, 2, curie_weiss_gap(n, alpha), tau)
    m = 2.0 * np.arange(n + 1) - n
    log_w = _log_binomial(n) + (alpha / n) * (m * m - n) / 2.0 / tau
    basins = (
        _level_basin(chain, math.ceil(0.9 * n), round(0.6 * n), 1000),
        _level_basin(chain, round(0.8 * n), round(0.6 * n), 100),
    )
    yield LumpedInstance(f"curie-weiss lumped:n={n},alpha={alpha} @ tau={tau}", "curie-weiss",
                         chain, basins, log_w)
    planted = [(200, 3, 4.0)] if quick else [(200, 3, 4.0), (300, 2, 4.0)]
    for n, q, strength in planted:
        tau = 1.0
        chain = CountChain(n, q, planted_gap(n, strength), tau)
        k = np.arange(n + 1)
        log_w = (_log_binomial(n) + (n - k) * math.log(q - 1)
                 + strength / (n - 1) * k * (k - 1) / 2.0 / tau)
        basins = (
            _level_basin(chain, math.ceil(0.9 * n), round(0.6 * n), 100),
            _level_basin(chain, round(0.8 * n), round(0.5 * n), 1000),
        )
        yield LumpedInstance(f"planted lumped:n={n},q={q},strength={strength} @ tau={tau}",
                             "planted", chain, basins, log_w)


def _counterexample_family(quick: bool) -> Iterator[Instance]:
    makers = {
        "theorem5_counterexample": counterexamples.theorem5_counterexample,
        "theorem5_gibbs_star_counterexample": counterexamples.theorem5_gibbs_star_counterexample,
        "boundary_drift_counterexample": lambda: counterexamples.boundary_drift_counterexample(
            n=6 if quick else 8
        ),
    }
    for source, make in makers.items():
        cx = make()
        model = cx.model
        data = CounterexampleData(source, cx.description, int(cx.x_index),
                                  None if cx.y_index is None else int(cx.y_index), cx.to_dict())
        basins: tuple[NamedMask, ...] = ()
        if cx.y_index is None:  # Section 5.4: token 0 counted, basin X >= boundary
            b = int(cx.details["boundary"])
            basins = (count_basin(model, 0, b, max(0, b - 3), int(cx.details["horizon"])),)
        yield ChainInstance(
            f"{source} ({model.name}) @ tau={cx.tau}", "counterexample", model, float(cx.tau),
            log_weight=getattr(model, "log_weight", None),
            ising=_ising_data(model) if isinstance(model, IsingModel) else None,
            basins=basins, counterexample=data,
        )


def build_battery(seed: int = 0, quick: bool = False) -> list[Instance]:
    """The instances ``glauber verify`` checks, in a fixed order.

    Parameters
    ----------
    seed : int, optional
        Seed of the random families (the other families are deterministic).
    quick : bool, optional
        A smaller battery (one or two temperatures per family, smaller lumped chains).

    Returns
    -------
    list of ChainInstance and LumpedInstance
    """
    return [
        *_counterexample_family(quick),
        *_random_family(seed, quick),
        *_ising_family(quick),
        *_potts_family(quick),
        *_asym_family(seed, quick),
        *_curie_weiss_family(quick),
        *_planted_family(quick),
        *_lumped_family(quick),
    ]


__all__ = ["build_battery", "count_basin", "perfect_trap", "random_joint_model",
           "random_table_model"]
