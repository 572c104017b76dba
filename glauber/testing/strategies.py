"""Hypothesis strategies over small toy models, temperatures, basins and pairs of states.

Every model drawn carries ``model.spec`` (a :class:`~glauber.toy_models.family.ModelSpec`) that
rebuilds it exactly; :func:`glauber.testing.check_bound` prints it in its counterexamples.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Iterable, Mapping, Sequence

import networkx as nx
import numpy as np
from hypothesis import Phase, given
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from glauber.core.enumeration import all_states, radix_weights
from glauber.core.restrict import RestrictedModel
from glauber.errors import (
    InvalidParameterError,
    InvalidProbabilityError,
    InvalidTemperatureError,
)
from glauber.exact.basins import CountBasin, NamedMask
from glauber.testing.arguments import check_choice, check_range, check_sizes
from glauber.testing.runs import isolated_run, run_settings
from glauber.toy_models import FAMILIES, ModelSpec, ToyFamily, ToyModel
from glauber.toy_models.draws import draw_edges, floats_in, largest_n
from glauber.toy_models.ising import GRAPH_KINDS

#: Basin kinds drawn by :func:`basins`.
BASIN_KINDS = ("count", "state", "random")

FamilyChoice = str | Sequence[str] | Mapping[str, Mapping[str, Any]] | None


def _family_options(family: ToyFamily, given: Mapping[str, Any]) -> dict[str, Any]:
    """The family's defaults updated with ``given``, each checked by the kind of its default: a
    tuple of names (choose among them), a pair of integers (a range of counts), a pair of
    floats (a range), a float (a number >= 0), None or an integer (None or an integer >= 0)."""
    options = family.defaults
    for key, value in given.items():
        if key not in options:
            raise InvalidParameterError(
                f"family {family.name!r} has no option {key!r}; its options are "
                f"{', '.join(options)}"
            )
        default = options[key]
        name = f"{family.name} option {key}"
        if default is None or isinstance(default, int):
            if value is not None and (isinstance(value, bool)
                                      or not isinstance(value, numbers.Integral) or value < 0):
                raise InvalidParameterError(
                    f"{name} must be None or an integer >= 0, got {value!r}")
        elif isinstance(default, float):
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
                0.0 <= float(value) < math.inf
            ):
                raise InvalidParameterError(f"{name} must be a number >= 0, got {value!r}")
            value = float(value)
        elif isinstance(default[0], str):
            value = check_choice(value, default, name)
        elif isinstance(default[0], int):  # a range of counts
            if (not isinstance(value, (tuple, list)) or len(value) != 2
                    or any(isinstance(v, bool) or not isinstance(v, numbers.Integral)
                           for v in value) or not 0 <= value[0] <= value[1]):
                raise InvalidParameterError(
                    f"{name} must be a pair (lo, hi) of integers with 0 <= lo <= hi, got {value!r}"
                )
            value = (int(value[0]), int(value[1]))
        else:
            value = check_range(value, name)
        options[key] = value
    return options


def _select_families(families: FamilyChoice) -> list[tuple[ToyFamily, dict[str, Any]]]:
    if families is None:
        chosen: Mapping[str, Mapping[str, Any]] = {name: {} for name in FAMILIES}
    elif isinstance(families, str):
        chosen = {families: {}}
    elif isinstance(families, Mapping):
        chosen = families
    else:
        chosen = {name: {} for name in families}
    if not chosen:
        raise InvalidParameterError(f"families must name at least one of {', '.join(FAMILIES)}")
    out = []
    for name, options in chosen.items():
        if name not in FAMILIES:
            raise InvalidParameterError(
                f"unknown family {name!r}; choose from {', '.join(FAMILIES)}"
            )
        out.append((FAMILIES[name], _family_options(FAMILIES[name], options or {})))
    return out


def _sizes(family: ToyFamily, options: Mapping[str, Any], max_states: int, min_sites: int,
           max_sites: int | None, min_q: int, max_q: int | None) -> tuple[int, list[int]]:
    """``(n_min, feasible q values)`` of a family under the limits."""
    n_min = max(min_sites, family.min_sites)
    q_top = min(v for v in (family.largest_q(options), max_q, max_states) if v is not None)
    qs = [q for q in range(max(2, min_q), q_top + 1) if q**n_min <= max_states]
    if max_sites is not None and max_sites < n_min:
        qs = []
    return n_min, qs


def model_specs(max_states: int = 256, compatible: bool | None = None,
                families: FamilyChoice = None, *, min_sites: int = 2,
                max_sites: int | None = None, min_q: int = 2, max_q: int | None = None,
                ) -> st.SearchStrategy[ModelSpec]:
    """Strategy of :class:`ModelSpec` (see :func:`models`, which builds them)."""
    for value, name in ((max_states, "max_states"), (min_sites, "min_sites"), (min_q, "min_q")):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise InvalidParameterError(f"{name} must be an integer >= 1, got {value!r}")
    for value, name in ((max_sites, "max_sites"), (max_q, "max_q")):
        if value is not None and (isinstance(value, bool)
                                  or not isinstance(value, numbers.Integral) or value < 1):
            raise InvalidParameterError(f"{name} must be None or an integer >= 1, got {value!r}")
    if compatible not in (None, True, False):
        raise InvalidParameterError(f"compatible must be None, True or False, got {compatible!r}")
    explicit = families is not None
    usable, reasons = [], []
    for family, options in _select_families(families):
        verdict = family.compatible_draws(options)
        if compatible is not None and verdict is not None and verdict != compatible:
            reasons.append(f"{family.name} is {'in' if compatible else ''}compatible")
            continue
        n_min, qs = _sizes(family, options, max_states, min_sites, max_sites, min_q, max_q)
        if not qs:
            q_min, q_top = max(2, min_q), family.largest_q(options)
            reasons.append(f"{family.name} needs at least {q_min}**{n_min} = {q_min**n_min} "
                           f"states" + (f" and allows q <= {q_top}" if q_top else ""))
            if explicit:
                raise InvalidParameterError(
                    f"max_states={max_states} (max_sites={max_sites}, min_q={min_q}, "
                    f"max_q={max_q}) leaves no model of family {family.name!r}: it needs "
                    f"n >= {n_min} sites, so at least {q_min}**{n_min} = {q_min**n_min} states"
                    + (f", and has q <= {q_top}" if q_top else "")
                    + "; raise max_states or relax the size limits"
                )
            continue
        usable.append((family, options, n_min, qs, verdict))
    if not usable:
        raise InvalidParameterError(
            f"no model family meets max_states={max_states}, compatible={compatible}, "
            f"min_sites={min_sites} ({'; '.join(reasons)}); raise max_states or relax the filters"
        )

    @st.composite
    def draw_spec(draw: st.DrawFn) -> ModelSpec:
        family, options, n_min, qs, verdict = draw(st.sampled_from(usable))
        q = draw(st.integers(qs[0], qs[-1]))
        n = draw(st.integers(n_min, max(n_min, largest_n(q, max_states, max_sites))))
        return family.draw_spec(draw, n, q, options)

    strategy = draw_spec()
    if compatible is not None and any(u[4] is None for u in usable):
        strategy = strategy.filter(lambda spec: spec.compatible == compatible)
    return strategy


def models(max_states: int = 256, compatible: bool | None = None, families: FamilyChoice = None,
           *, min_sites: int = 2, max_sites: int | None = None, min_q: int = 2,
           max_q: int | None = None) -> st.SearchStrategy[ToyModel | RestrictedModel]:
    """Strategy of small toy models from every family, each carrying its ``spec``.

    Parameters
    ----------
    max_states : int, default 256
        Every model has ``q**n <= max_states`` states.
    compatible : bool or None
        True: only compatible models (a joint law has their conditionals; Theorem 3);
        False: only incompatible ones; None: both.
    families : str, sequence of str, or mapping, optional
        Family names (default: all of :data:`glauber.toy_models.FAMILIES`), or a
        mapping ``name -> options`` narrowing a family, e.g.
        ``{"ising": {"graphs": ("complete",), "coupling": (0.3, 2.0), "field_modes": ("zero",)}}``
        (each family's options and defaults are in ``FAMILIES[name].defaults``).
    min_sites : int, default 2
        Fewest sites (1 allows single-site chains, which many bounds treat as degenerate).
    max_sites, min_q, max_q : int, optional
        Further size limits (the spin families have ``q = 2`` only).

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        Of :class:`~glauber.toy_models.base.ToyModel` (a
        :class:`~glauber.core.restrict.RestrictedModel` for the ``restricted`` family: a
        ConditionalModel without the toy models' extras such as ``log_weight``); ``model.spec``
        rebuilds it. Shrinks towards fewer sites, smaller ``q``, zero fields and small couplings.

    Raises
    ------
    InvalidParameterError
        If no requested family can meet ``max_states`` (or a named one cannot), or an option
        is unknown or out of range.

    Examples
    --------
    >>> from glauber.testing import sample
    >>> [m.spec.family for m in sample(models(max_states=16, families="curie-weiss"), 2)]
    ['curie-weiss', 'curie-weiss']
    """
    strategy = model_specs(max_states, compatible, families, min_sites=min_sites,
                           max_sites=max_sites, min_q=min_q, max_q=max_q).map(ModelSpec.build)
    strategy.glauber_models_args = dict(max_states=max_states, compatible=compatible,
                                        families=families, min_sites=min_sites,
                                        max_sites=max_sites, min_q=min_q, max_q=max_q)
    return strategy


def fewer_states(strategy: st.SearchStrategy, states: int) -> st.SearchStrategy | None:
    """``strategy`` restricted to models (or specs) with fewer than ``states`` states.

    A strategy made by :func:`models` is rebuilt with ``max_states = states - 1`` (None when no
    family fits); any other strategy is filtered.
    """
    args = getattr(strategy, "glauber_models_args", None)
    if args is None:
        return strategy.filter(lambda m: m.q**m.n < states)
    try:
        return models(**{**args, "max_states": states - 1})
    except InvalidParameterError:
        return None


def _log_space(lo: float, hi: float, centre: float) -> st.SearchStrategy[float]:
    """Floats in ``[lo, hi]`` on a log scale, shrinking towards ``centre`` (or the nearest end)."""
    a, b = math.log(lo / centre), math.log(hi / centre)
    if a > 0.0:  # the whole range lies above the centre: shrink towards its lower end
        z = floats_in((0.0, b - a)).map(lambda u: a + u)
    elif b < 0.0:  # below it: towards the upper end
        z = floats_in((0.0, b - a)).map(lambda u: b - u)
    else:
        z = floats_in((a, b))
    return z.map(lambda v: min(hi, max(lo, centre * math.exp(v))))


def temperatures(min_tau: float = 0.05, max_tau: float = 20.0) -> st.SearchStrategy[float]:
    """Temperatures on a log scale in ``[min_tau, max_tau]``, shrinking towards ``tau = 1``.

    Raises
    ------
    InvalidTemperatureError
        If the bounds are not finite, positive and ordered.
    """
    for value in (min_tau, max_tau):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
            0.0 < float(value) < math.inf
        ):
            raise InvalidTemperatureError(
                f"temperature bounds must be finite and > 0, got {value!r}"
            )
    if min_tau > max_tau:
        raise InvalidTemperatureError(f"min_tau = {min_tau} exceeds max_tau = {max_tau}")
    return _log_space(float(min_tau), float(max_tau), 1.0)


def epsilons(min_eps: float = 0.01, max_eps: float = 0.9) -> st.SearchStrategy[float]:
    """Target distances ``eps`` on a log scale in ``[min_eps, max_eps]``, shrinking towards 1/4.

    Raises
    ------
    InvalidProbabilityError
        If the bounds are not in (0, 1) and ordered.
    """
    for value in (min_eps, max_eps):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
            0.0 < float(value) < 1.0
        ):
            raise InvalidProbabilityError(f"eps bounds must lie in (0, 1), got {value!r}")
    if min_eps > max_eps:
        raise InvalidProbabilityError(f"min_eps = {min_eps} exceeds max_eps = {max_eps}")
    return _log_space(float(min_eps), float(max_eps), 0.25)


def _count_basin(draw: st.DrawFn, states: np.ndarray, n: int, q: int, token: int | None,
                 min_fraction: float) -> NamedMask:
    tok = draw(st.integers(0, q - 1)) if token is None else token
    b = draw(st.integers(min(n, int(math.floor(min_fraction * n)) + 1), n))
    a = draw(st.integers(0, b - 1))
    horizon = draw(st.integers(1, 100))
    mask = (states == tok).sum(axis=1) >= b
    return NamedMask(f"#{tok}>={b}", mask, CountBasin(tok, b, a, horizon))


def basins(model: Any, kinds: Iterable[str] = BASIN_KINDS, *, token: int | None = None,
           min_fraction: float = 0.0) -> st.SearchStrategy[NamedMask]:
    """Strategy of basins (sets of states, neither empty nor everything) of ``model``.

    Parameters
    ----------
    model : ToyModel or ModelSpec
        Anything with ``n`` and ``q``.
    kinds : iterable of {"count", "state", "random"}
        ``count``: ``{x : #{i : x_i = token} >= b}`` with a Section 5.4 band ``(a, b)`` and
        horizon ``T`` (``basin.count``); ``state``: a single state; ``random``: a random subset.
    token : int, optional
        Fix the counted token (default: drawn).
    min_fraction : float, default 0
        Count basins have ``b > min_fraction * n``.

    Returns
    -------
    hypothesis.strategies.SearchStrategy
        Of :class:`glauber.exact.basins.NamedMask` (``name``, boolean ``mask`` over the
        states in mixed-radix order, ``count``).

    Raises
    ------
    InvalidParameterError
        If a kind is unknown, ``token`` is out of range or ``min_fraction`` not in [0, 1).
    """
    n, q = int(model.n), int(model.q)
    kinds = check_choice(kinds, BASIN_KINDS, "kinds")
    if token is not None and not 0 <= token < q:
        raise InvalidParameterError(f"token must lie in 0..{q - 1}, got {token!r}")
    if not 0.0 <= min_fraction < 1.0:
        raise InvalidParameterError(f"min_fraction must lie in [0, 1), got {min_fraction!r}")
    states = all_states(n, q)

    @st.composite
    def draw_basin(draw: st.DrawFn) -> NamedMask:
        kind = draw(st.sampled_from(kinds))
        if kind == "count":
            return _count_basin(draw, states, n, q, token, min_fraction)
        mask = np.zeros(len(states), dtype=bool)
        if kind == "state":
            x = draw(st.integers(0, len(states) - 1))
            mask[x] = True
            return NamedMask(f"state {''.join(map(str, states[x]))}", mask)
        seed, p = draw(st.integers(0, 2**32 - 1)), draw(floats_in((0.05, 0.95)))
        mask = np.random.default_rng(seed).random(len(states)) < p
        mask[0], mask[-1] = True, False  # never empty, never everything
        return NamedMask(f"random(seed={seed},p={p!r})", mask)

    return draw_basin()


def states(model: Any) -> st.SearchStrategy[int]:
    """Strategy of state indices of ``model`` (mixed radix, site 0 most significant; the state
    itself is ``glauber.core.enumeration.all_states(n, q)[index]``), shrinking to 0."""
    return st.integers(0, int(model.q) ** int(model.n) - 1)


def state_pairs(model: Any, adjacent: bool = False) -> st.SearchStrategy[tuple[int, int]]:
    """Strategy of pairs of distinct state indices ``(x, y)`` of ``model`` (mixed radix).

    ``adjacent=True`` draws pairs that differ at exactly one site (path coupling's pairs).
    """
    n, q = int(model.n), int(model.q)
    size = q**n
    weights = radix_weights(n, q)

    @st.composite
    def draw_pair(draw: st.DrawFn) -> tuple[int, int]:
        x = draw(st.integers(0, size - 1))
        if not adjacent:
            y = draw(st.integers(0, size - 2))
            return x, y + (y >= x)
        site = draw(st.integers(0, n - 1))
        old = (x // int(weights[site])) % q
        new = draw(st.integers(0, q - 2))
        new += new >= old
        return x, x + (new - old) * int(weights[site])

    return draw_pair()


def graphs(min_nodes: int = 1, max_nodes: int = 8,
           kinds: Sequence[str] = GRAPH_KINDS) -> st.SearchStrategy[nx.Graph]:
    """Strategy of simple graphs on ``0..n-1``: random edges, path, cycle, star, complete, grid."""
    check_sizes(min_nodes, max_nodes, 1, "min_nodes, max_nodes")
    kinds = check_choice(kinds, GRAPH_KINDS, "kinds")

    @st.composite
    def draw_graph(draw: st.DrawFn) -> nx.Graph:
        n = draw(st.integers(min_nodes, max_nodes))
        graph = nx.Graph()
        graph.add_nodes_from(range(n))
        graph.add_edges_from(draw_edges(draw, n, kinds))
        return graph

    return draw_graph()


def couplings(max_abs: float = 2.0) -> st.SearchStrategy[float]:
    """Couplings or fields in ``[-max_abs, max_abs]``, shrinking towards 0."""
    return floats_in(check_range((-max_abs, max_abs), "(-max_abs, max_abs)"))


def coupling_matrices(n: int, max_abs: float = 2.0,
                      symmetric: bool = False) -> st.SearchStrategy[np.ndarray]:
    """``n x n`` coupling matrices with zero diagonal and entries in ``[-max_abs, max_abs]``."""
    count = n * n

    def build(values: list[float]) -> np.ndarray:
        J = np.array(values, dtype=np.float64).reshape(n, n)
        if symmetric:
            J = np.triu(J, 1) + np.triu(J, 1).T
        np.fill_diagonal(J, 0.0)
        return J

    return st.lists(couplings(max_abs), min_size=count, max_size=count).map(build)


def sample(strategy: st.SearchStrategy, count: int, seed: int = 0) -> list:
    """``count`` values drawn from ``strategy``, the same for the same seed (no database).

    Raises
    ------
    InvalidParameterError
        If ``count`` is not an integer >= 1.
    """
    if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 1:
        raise InvalidParameterError(f"count must be an integer >= 1, got {count!r}")
    out: list = []

    @run_settings(count, [Phase.generate])
    @hypothesis_seed(seed)
    @given(strategy)
    def collect(value: Any) -> None:
        out.append(value)

    with isolated_run():
        collect()
    return out


__all__ = [
    "BASIN_KINDS",
    "basins",
    "coupling_matrices",
    "couplings",
    "epsilons",
    "fewer_states",
    "graphs",
    "model_specs",
    "models",
    "sample",
    "state_pairs",
    "states",
    "temperatures",
]
