"""Exact counterexamples to two statements of the paper as printed (docs/theory.md, `thm5-printed`
and `drift-printed`).

* **Theorem 5 as printed** (false): with the row-sum ``alpha = max_i sum_j c_ij < 1`` it claims the
  one-step contraction ``E[d_H(X_1, Y_1)] <= (1 - (1 - alpha)/n) d_H(x, y)`` under the same-site
  maximal coupling. A star whose hub is influenced by nobody (much) while every leaf follows the
  hub has small row sums but a large hub COLUMN sum, and from a pair that differs at the hub
  ``E[d_H(X_1, Y_1)] = (n - 1 + sum_{leaves} c_{leaf, hub}) / n > 1``.
  :func:`theorem5_counterexample` builds it as a score function (the hub ignores the leaves, each
  leaf copies the hub), :func:`theorem5_gibbs_star_counterexample` as a Gibbs (Ising) star with a
  strong field on the hub. The corrected statement (``alpha_col``) holds on both, and so does the
  mixing bound with the row sum (``glauber.theory.contraction``).
* **Section 5.4 as printed** (not rigorous): positive expected drift of a count statistic at every
  state of the boundary level ``{X = b}`` of the basin ``B = {X >= b}`` is said to give escape
  times exponential in ``n``. :func:`boundary_drift_counterexample` builds a chain whose count has
  positive drift at every boundary state, yet the chain started on the boundary leaves ``B``
  within ``10 n`` steps with probability about 0.9 or more (the exact expected exit time stays at
  a few dozen steps as ``n`` grows), and then falls far below ``B`` because the drift at the
  levels below is negative. The rigorous replacement is
  :func:`glauber.theory.drift.band_drift_escape_bound`.

Every number is exact up to float64 rounding: it comes from the chain's exact transition matrix
(:class:`~glauber.exact.chain.ExactChain`), not from sampling.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, replace
from typing import Any, Mapping

import networkx as nx
import numpy as np

from glauber.core.claims import Claim
from glauber.core.enumeration import state_index
from glauber.core.validation import (
    check_finite_float,
    check_positive_float,
    check_positive_int,
    check_tau,
    check_vocab_size,
)
from glauber.errors import InvalidParameterError
from glauber.exact.chain import ExactChain
from glauber.theory.contraction import (
    adjacent_pair_hamming_bound,
    alpha_col,
    alpha_row,
    alpha_spectral,
    spectral_radius,
    theorem5_contraction_factor,
    theorem5_tmix_bound,
)
from glauber.toy_models.base import FunctionModel, ToyModel
from glauber.toy_models.ising import IsingModel

#: Section 5.4's printed conclusion read quantitatively: from the boundary, the chain should stay
#: in the basin for ``10 n`` steps with probability at least 1/2 if escape took ``e^{c n}`` steps.
DRIFT_HORIZON_PER_SITE = 10


@dataclass(frozen=True)
class Counterexample:
    """An exact toy chain on which a statement of the paper, as printed, fails.

    Attributes
    ----------
    check : Claim
        The printed statement confronted with the exact chain: ``hypothesis_held`` (the printed
        hypothesis holds here), ``bound`` (what the printed conclusion allows), ``exact`` (the
        exact value, which exceeds it), ``holds`` False and ``refuted`` True; ``details`` holds
        the hypothesis (``"hypothesis"``, ``"hypothesis_value"``) and further exact numbers
        documented by each builder.
    model : ToyModel
        The model; ``ExactChain(model, tau)`` (see :meth:`chain`) reproduces every number.
    tau : float
        Temperature.
    x_index : int
        Mixed-radix index of the starting state (Theorem 5: the first state of the pair;
        Section 5.4: a boundary state of the basin).
    y_index : int or None
        Theorem 5: the second state of the pair (it differs from ``x`` at one site);
        ``None`` for Section 5.4, which starts one chain.
    description : str
        What the chain is and why it refutes the statement.
    """

    check: Claim
    model: ToyModel
    tau: float
    x_index: int
    y_index: int | None
    description: str

    @property
    def details(self) -> Mapping[str, Any]:
        """The exact numbers of :attr:`check` (``check.details``)."""
        return self.check.details

    def chain(self) -> ExactChain:
        """A fresh :class:`ExactChain` of :attr:`model` at :attr:`tau`."""
        return ExactChain(self.model, self.tau)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe summary (the model as its name, ``n`` and ``q``; infinities as ``"inf"``)."""
        return {
            "model": getattr(self.model, "name", type(self.model).__name__),
            "n": self.model.n,
            "q": self.model.q,
            "tau": self.tau,
            "x_index": self.x_index,
            "y_index": self.y_index,
            "description": self.description,
            "check": self.check.to_dict(),
        }


def _printed_check(
    key: str,
    statement: str,
    model: Any,
    hypothesis: str,
    hypothesis_value: float,
    hypothesis_holds: bool,
    claimed: float,
    observed: float,
    details: Mapping[str, Any],
) -> Claim:
    """The :class:`Claim` of a printed statement whose conclusion ``observed <= claimed`` fails."""
    holds = not observed > claimed
    return Claim(
        key=key,
        statement=statement,
        subject=str(getattr(model, "name", type(model).__name__)),
        hypothesis_held=bool(hypothesis_holds),
        holds=holds,
        bound=float(claimed),
        exact=float(observed),
        slack=float(claimed - observed),
        tightness=float(observed / claimed) if claimed > 0 else None,
        rigorous=True,
        certifies="refuted as printed" if hypothesis_holds and not holds else "not refuted here",
        caveat="exact values of the chain's full transition matrix",
        details={"hypothesis": hypothesis, "hypothesis_value": float(hypothesis_value), **details},
    )


# ----------------------------------------------------------------------------- exact helpers
def exact_count_drift(chain: ExactChain, token: int) -> np.ndarray:
    """Exact one-step drift ``E[X_1 - X_0 | X_0 = x]`` of the count of ``token``, every state.

    Section 5.4's ``delta_tau(x) = (1/n)[sum_{i: x_i != t} p(t | x_{-i}) -
    sum_{i: x_i = t} (1 - p(t | x_{-i}))]``, from the chain's exact conditionals.

    Parameters
    ----------
    chain : ExactChain
    token : int
        The counted token, in ``0..q-1``.

    Returns
    -------
    numpy.ndarray, shape (q**n,)

    Raises
    ------
    InvalidParameterError
        If ``token`` is not a token of the chain.
    """
    token = _check_token(token, chain.q)
    p_token = chain.conditionals()[:, :, token].T  # [S, n]
    holds = chain.states() == token
    gain = np.where(holds, 0.0, p_token).sum(axis=1)
    loss = np.where(holds, 1.0 - p_token, 0.0).sum(axis=1)
    return (gain - loss) / chain.n


def _check_token(token: int, q: int) -> int:
    if isinstance(token, bool) or not isinstance(token, numbers.Integral) or not 0 <= token < q:
        raise InvalidParameterError(f"token must be an integer in 0..{q - 1}, got {token!r}")
    return int(token)


# ------------------------------------------------------------------------------ Theorem 5
def _theorem5_from_chain(
    chain: ExactChain, x_index: int, y_index: int, site: int, description: str
) -> Counterexample:
    """Assemble the Theorem 5 counterexample of a pair ``(x, y)`` differing only at ``site``."""
    n = chain.n
    C = chain.influence_matrix()
    a_row, a_col = alpha_row(C), alpha_col(C)
    observed = chain.one_step_hamming(x_index, y_index)
    claimed = theorem5_contraction_factor(n, a_row)  # d_H(x, y) = 1
    tmix = chain.mixing_time(0.25)
    details = {
        "n": float(n),
        "hamming_distance": 1.0,
        "alpha_row": a_row,
        "alpha_col": a_col,
        "alpha_spectral": alpha_spectral(C),
        "spectral_radius": spectral_radius(C),
        "corrected_bound": adjacent_pair_hamming_bound(C, site),
        "tmix_exact": float(tmix),
        "tmix_bound_row": theorem5_tmix_bound(n, a_row, 0.25, integer=True),
        "tmix_bound_spectral": theorem5_tmix_bound(n, alpha_spectral(C), 0.25, integer=True),
    }
    check = _printed_check(
        "thm5-printed",
        "Theorem 5 (as printed): E[d_H(X_1, Y_1)] <= (1 - (1 - alpha)/n) d_H(x, y) under "
        "same-site maximal coupling",
        chain.model, "alpha = max_i sum_j c_ij < 1 (row sums)", a_row, a_row < 1.0, claimed,
        observed, details,
    )
    return Counterexample(
        check=check,
        model=chain.model,  # type: ignore[arg-type]
        tau=chain.tau,
        x_index=x_index,
        y_index=y_index,
        description=description,
    )


def _hub_pair(n: int, q: int) -> tuple[int, int]:
    """The all-zero state and the state with the hub (site 0) set to 1."""
    x = np.zeros(n, dtype=np.int64)
    y = x.copy()
    y[0] = 1
    return int(state_index(x, q)), int(state_index(y, q))


def _with_details(cx: Counterexample, **extra: float) -> Counterexample:
    """``cx`` with further exact numbers in its check's details."""
    return replace(cx, check=replace(cx.check, details={**cx.check.details, **extra}))


def _require_refuted(cx: Counterexample, fix: str) -> Counterexample:
    c = cx.check
    if not c.refuted:
        raise InvalidParameterError(
            f"these parameters do not refute {c.statement}: hypothesis value "
            f"{c.details['hypothesis_value']:.6g}, observed {c.exact:.6g} vs claimed "
            f"{c.bound:.6g}; {fix}"
        )
    return cx


def theorem5_counterexample(
    n: int = 4, q: int = 2, strength: float = 4.0, tau: float = 1.0
) -> Counterexample:
    """A score-function star refuting Theorem 5's one-step contraction as printed.

    Site 0 (the hub) has constant scores, so its conditional is uniform and ignores the leaves.
    Each leaf ``i >= 1`` copies the hub: ``s_i(a; x_{-i}) = strength * 1{a = x_0}``. Exactly, with
    ``r = (e^{s/tau} - 1) / (e^{s/tau} + q - 1)`` (``= tanh(s / (2 tau))`` for ``q = 2``) the
    TV distance between a leaf's conditionals under two hub tokens:

    * ``c_{leaf, hub} = r`` and every other influence is 0, so the row sums are
      ``alpha_row = r < 1`` (Theorem 5's hypothesis holds), while the hub's column sum is
      ``alpha_col = (n - 1) r``;
    * from ``x = 0...0`` and ``y`` = ``x`` with the hub set to 1 (``d_H = 1``), every leaf
      disagrees after the step with probability ``r`` if picked, so
      ``E[d_H(X_1, Y_1)] = (n - 1)(1 + r) / n``, which exceeds the printed
      ``1 - (1 - r)/n`` when ``n > 2``, and exceeds 1 when ``(n - 1) r > 1``.

    The corrected contraction (``alpha_col``, :func:`glauber.theory.contraction.
    adjacent_pair_hamming_bound`) holds with equality here, and the mixing bound with
    ``alpha_row`` still holds (``details["tmix_exact"] <= details["tmix_bound_row"]``).

    Parameters
    ----------
    n : int, optional
        Sites (hub + ``n - 1`` leaves), >= 3.
    q : int, optional
        Vocabulary size, >= 2.
    strength : float, optional
        Leaf copying strength, > 0.
    tau : float, optional
        Temperature, > 0.

    Returns
    -------
    Counterexample
        ``details`` holds ``n``, ``hamming_distance``, ``alpha_row``, ``alpha_col``,
        ``alpha_spectral``, ``spectral_radius``, ``corrected_bound`` (the column-sum bound on
        ``E[d_H]``), ``closed_form`` (``(n - 1)(1 + r)/n``), ``tmix_exact`` (worst-start
        ``t_mix(1/4)``), ``tmix_bound_row`` and ``tmix_bound_spectral``.

    Raises
    ------
    InvalidParameterError
        If ``n < 3``, ``strength`` is not finite and > 0, or the parameters give no violation.
    VocabularyError
        If ``q < 2``.
    InvalidTemperatureError
        If ``tau`` is not finite and > 0.

    Examples
    --------
    >>> c = theorem5_counterexample().check
    >>> c.refuted, round(c.details["hypothesis_value"], 4), round(c.exact, 4), round(c.bound, 4)
    (True, 0.964, 1.473, 0.991)
    """
    n = check_positive_int(n, "n")
    if n < 3:
        raise InvalidParameterError(f"the star needs a hub and at least 2 leaves: n >= 3, got {n}")
    q = check_vocab_size(q)
    strength = check_positive_float(strength, "strength")
    tau = check_tau(tau)

    def score_fn(states: np.ndarray, site: int) -> np.ndarray:
        if site == 0:
            return np.zeros((states.shape[0], q))
        return strength * (states[:, [0]] == np.arange(q)[None, :])

    model = FunctionModel(n, q, score_fn, name=f"copy-star:n={n},q={q},strength={strength}")
    chain = ExactChain(model, tau)
    x_index, y_index = _hub_pair(n, q)
    e = math.exp(strength / tau)
    r = (e - 1.0) / (e + q - 1.0)
    cx = _theorem5_from_chain(
        chain,
        x_index,
        y_index,
        0,
        f"Star on {n} sites: the hub's conditional is uniform (it ignores the leaves) and each of "
        f"the {n - 1} leaves copies the hub with score {strength} at tau = {tau}. Row sums are "
        f"at most {r:.4f} < 1, but the hub influences {n - 1} leaves, so from a pair differing "
        "at the hub the expected Hamming distance grows.",
    )
    cx = _with_details(cx, closed_form=(n - 1) * (1.0 + r) / n)
    return _require_refuted(cx, "use n >= 3 and a larger strength / tau ratio")


def theorem5_gibbs_star_counterexample(
    leaves: int = 4, coupling: float = 1.0, hub_field: float = 6.0, tau: float = 1.0
) -> Counterexample:
    """A Gibbs (Ising) star with a strong field on the hub refuting Theorem 5 as printed.

    ``IsingModel(nx.star_graph(leaves), coupling=J, field={hub: h})`` at ``tau = 1/beta``. Each
    leaf's conditional depends only on the hub: ``c_{leaf, hub} = tanh(J / tau)`` exactly (zero
    field on the leaves, a symmetric two-point law). The strong hub field makes the hub nearly
    deaf to the leaves:
    ``c_{hub, leaf} = max_S |tanh((h + J(S + 1))/tau) - tanh((h + J(S - 1))/tau)| / 2`` over the
    sums ``S`` of the other ``leaves - 1`` spins, small when ``h >> leaves J``. So the row sums
    stay below 1 while the hub's column sum is ``leaves * tanh(J / tau)``. From the all-minus
    state and its hub flip, ``E[d_H(X_1, Y_1)] = leaves (1 + tanh(J / tau)) / (leaves + 1)``
    exactly.

    This model is compatible (Theorem 3 applies): the failure of the printed contraction is not
    an artefact of incompatible conditionals.

    Parameters
    ----------
    leaves : int, optional
        Number of leaves, >= 2 (``n = leaves + 1`` sites; the hub is site 0).
    coupling : float, optional
        Ising coupling ``J`` on every edge, > 0.
    hub_field : float, optional
        Field ``h`` on the hub, finite.
    tau : float, optional
        Temperature, > 0.

    Returns
    -------
    Counterexample
        ``details`` as in :func:`theorem5_counterexample`, with ``closed_form`` =
        ``leaves (1 + tanh(J/tau)) / (leaves + 1)``.

    Raises
    ------
    InvalidParameterError
        If ``leaves < 2``, ``coupling`` is not finite and > 0, ``hub_field`` is not finite, or
        the parameters give no violation (the hub row sum reaches 1: raise ``hub_field``).
    InvalidTemperatureError
        If ``tau`` is not finite and > 0.

    Examples
    --------
    >>> c = theorem5_gibbs_star_counterexample().check
    >>> c.refuted, c.exact > 1.0
    (True, True)
    """
    leaves = check_positive_int(leaves, "leaves")
    if leaves < 2:
        raise InvalidParameterError(f"the star needs at least 2 leaves, got {leaves}")
    coupling = check_positive_float(coupling, "coupling")
    hub_field = check_finite_float(hub_field, "hub_field")
    tau = check_tau(tau)
    graph = nx.star_graph(leaves)  # hub 0, leaves 1..leaves
    model = IsingModel(
        graph,
        coupling=coupling,
        field={0: hub_field},
        name=f"ising-star:leaves={leaves},J={coupling},hub_h={hub_field}",
    )
    chain = ExactChain(model, tau)
    n = leaves + 1
    x_index, y_index = _hub_pair(n, 2)
    t = math.tanh(coupling / tau)
    cx = _theorem5_from_chain(
        chain,
        x_index,
        y_index,
        0,
        f"Ising star with {leaves} leaves, coupling {coupling}, field {hub_field} on the hub, "
        f"tau = {tau}: each leaf follows the hub (influence tanh(J/tau) = {t:.4f}) while the "
        "strong field makes the hub almost deaf to the leaves, so the row sums are < 1 but the "
        "hub's column sum is not.",
    )
    cx = _with_details(cx, closed_form=leaves * (1.0 + t) / n)
    return _require_refuted(cx, "raise hub_field, coupling / tau or the number of leaves")


# ---------------------------------------------------------------------------- Section 5.4
def boundary_drift_counterexample(
    n: int = 10,
    q: int = 2,
    boundary: int | None = None,
    keep: float = 0.5,
    down_ratio: float = 0.5,
    low: float = 0.01,
    horizon: int | None = None,
) -> Counterexample:
    """A chain with positive count drift on the basin boundary whose basin is left quickly.

    Token 0 plays the paper's '!'; ``X`` counts it and the basin is ``B = {X >= b}`` with
    ``b = boundary`` (default ``ceil(0.9 n)``, at most ``n - 1``, as in Section 5.4). Each site's
    conditional probability of token 0 depends only on the number ``c`` of OTHER sites holding
    it, ``r(c)`` (the other tokens share the rest equally; scores are log-weights at ``tau = 1``):

    * ``r(c) = keep`` for ``c >= b``;
    * ``r(b - 1) = 1 - down_ratio (n - b) keep / b``: then from a boundary state the count goes
      up with probability ``Up = (n - b) keep / n`` and down with ``down_ratio * Up``, so the
      drift is ``(1 - down_ratio) Up > 0`` at EVERY boundary state (Section 5.4's hypothesis);
    * ``r(c) = low`` for ``c <= b - 2``: the drift at the levels below the boundary is negative.

    The chain hovers at the boundary (the levels above pull back, since holders lose the token
    with probability ``1 - keep`` there) and steps below it at rate ``down_ratio * Up`` per step
    spent on the boundary: the expected exit time stays bounded as ``n`` grows (``Up`` is about
    ``0.1 keep`` for ``b = ceil(0.9 n)``), 44 steps with the defaults; once out
    it falls towards ``X = 0``. The printed conclusion (escape times exponential in ``n``) would
    keep the chain in ``B`` for the horizon ``T = 10 n`` with probability at least 1/2; the exact
    probability of leaving ``B`` within ``T`` is about 0.9 (above 0.98 for ``n >= 20``).

    Parameters
    ----------
    n : int, optional
        Sites, >= 3 (``q**n`` states are enumerated).
    q : int, optional
        Vocabulary size, >= 2.
    boundary : int, optional
        The boundary level ``b``, ``2 <= b <= n - 1`` (default ``min(n - 1, ceil(0.9 n))``).
    keep : float, optional
        ``r(c)`` for ``c >= b``, in (0, 1).
    down_ratio : float, optional
        ``Down / Up`` at the boundary, in (0, 1): the drift there is ``(1 - down_ratio) Up``.
    low : float, optional
        ``r(c)`` for ``c <= b - 2``, in (0, 1).
    horizon : int, optional
        The horizon ``T`` (default ``10 n``).

    Returns
    -------
    Counterexample
        ``observed`` = exact ``P(leave B within T | X_0 = x)`` from the boundary state ``x``
        (the first ``b`` sites hold token 0), ``claimed`` = 1/2. ``details``: ``n``,
        ``boundary``, ``horizon``, ``boundary_states``, ``drift_boundary_min``,
        ``drift_boundary_max``, ``drift_below_max`` (largest drift over ``1 <= X <= b - 1``,
        negative), ``expected_exit_time`` (exact ``E_x`` of the first time outside ``B``),
        ``fall_level`` (``floor(n / 2)``) and ``p_fall_within_horizon`` (exact probability of
        reaching ``X <= fall_level`` within ``T``).

    Raises
    ------
    InvalidParameterError
        If an argument is out of range or the parameters give no violation.
    VocabularyError
        If ``q < 2``.
    StateSpaceTooLargeError
        If ``q**n`` exceeds the exact-chain limit.

    Examples
    --------
    >>> c = boundary_drift_counterexample(n=8).check
    >>> c.refuted, c.details["hypothesis_value"] > 0, round(c.exact, 3)
    (True, True, 0.894)
    """
    n = check_positive_int(n, "n")
    if n < 3:
        raise InvalidParameterError(f"the drift counterexample needs n >= 3 sites, got {n}")
    q = check_vocab_size(q)
    b = min(n - 1, math.ceil(0.9 * n)) if boundary is None else boundary
    if isinstance(b, bool) or not isinstance(b, numbers.Integral) or not 2 <= b <= n - 1:
        raise InvalidParameterError(
            f"boundary must be an integer in 2..n-1 = 2..{n - 1} (the top level n has "
            f"non-positive drift), got {boundary!r}"
        )
    b = int(b)
    for name, value in (("keep", keep), ("down_ratio", down_ratio), ("low", low)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < 1:
            raise InvalidParameterError(f"{name} must lie strictly between 0 and 1, got {value!r}")
    T = DRIFT_HORIZON_PER_SITE * n if horizon is None else check_positive_int(horizon, "horizon")
    r = np.full(n, float(low))  # r[c] for c = 0..n-1 other sites holding token 0
    r[b:] = keep
    r[b - 1] = 1.0 - down_ratio * (n - b) * keep / b
    # p(token) = w / (w + q - 1) with the other q - 1 tokens at score 0.
    gain = np.log(r * (q - 1) / (1.0 - r))

    def score_fn(states: np.ndarray, site: int) -> np.ndarray:
        others = (states == 0).sum(axis=1) - (states[:, site] == 0)
        out = np.zeros((states.shape[0], q))
        out[:, 0] = gain[others]
        return out

    model = FunctionModel(
        n, q, score_fn,
        name=f"boundary-drift:n={n},q={q},b={b},keep={keep},down_ratio={down_ratio},low={low}",
    )
    chain = ExactChain(model, 1.0)
    count = (chain.states() == 0).sum(axis=1)
    basin = count >= b
    drift = exact_count_drift(chain, 0)
    on_boundary = count == b
    below = (count >= 1) & (count <= b - 1)
    x = np.where(np.arange(n) < b, 0, 1)
    x_index = int(state_index(x, q))
    exit_time = float(chain.expected_hitting_times(~basin)[x_index])
    p_leave = float(chain.hitting_probability_within(~basin, T)[x_index])
    fall_level = n // 2
    p_fall = float(chain.hitting_probability_within(count <= fall_level, T)[x_index])
    drift_min = float(drift[on_boundary].min())
    check = _printed_check(
        "drift-printed",
        f"Section 5.4 drift certificate (as printed): escape from B takes exponentially long in "
        f"n, so P(leave B within T = {T} steps | X_0 on the boundary) <= 1/2",
        model, "E[X_{t+1} - X_t | x] > 0 at every state x of the boundary level X = b",
        drift_min, drift_min > 0.0, 0.5, p_leave,
        {
            "n": float(n),
            "boundary": float(b),
            "horizon": float(T),
            "boundary_states": float(on_boundary.sum()),
            "drift_boundary_min": drift_min,
            "drift_boundary_max": float(drift[on_boundary].max()),
            "drift_below_max": float(drift[below].max()),
            "expected_exit_time": exit_time,
            "fall_level": float(fall_level),
            "p_fall_within_horizon": p_fall,
        },
    )
    cx = Counterexample(
        check=check,
        model=model,
        tau=1.0,
        x_index=x_index,
        y_index=None,
        description=(
            f"Count of token 0 on {n} sites, basin X >= {b}. Every one of the "
            f"{int(on_boundary.sum())} boundary states has drift >= {drift_min:.4f} > 0, but "
            f"the levels above pull back to the boundary and the levels below have negative "
            f"drift: the exact expected exit time from the boundary is {exit_time:.1f} steps "
            f"and the chain falls to X <= {fall_level} within {T} steps with probability "
            f"{p_fall:.3f}."
        ),
    )
    return _require_refuted(cx, "lower down_ratio or low, or lengthen the horizon")


__all__ = [
    "Counterexample",
    "DRIFT_HORIZON_PER_SITE",
    "boundary_drift_counterexample",
    "exact_count_drift",
    "theorem5_counterexample",
    "theorem5_gibbs_star_counterexample",
]
