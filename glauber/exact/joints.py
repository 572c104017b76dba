"""Joint laws built from the exact conditionals of a small chain, side by side.

The conditionals ``p_i(a | x_{-i})`` of a masked LM are incompatible (Proposition 4): no joint
law has them all. Torroba Hennigen and Kim (2023, "Deriving language models from masked
language models", ACL) build joints from them anyway, over two masked tokens; on an exact chain
(a toy, or a window of a real model in its context: every other position frozen) the same
constructions run over ``V^n`` for any ``n``, and sit beside the law Gibbs sampling actually
samples. With ``L_i(a | x) = log p_tau(a | x_{-i})`` and ``s_i`` the scores at ``tau = 1``:

* ``glauber``: the stationary law of the random-scan Glauber chain (:meth:`ExactChain.stationary`);
* ``mrf``: the Markov random field of the raw scores, ``log q(x) = sum_i s_i(x_i; x_{-i}) / tau +
  c`` (their ``mrf``; the target of Metropolis-Hastings on the raw-logit energy, Goyal et al.
  2021);
* ``pll``: ``exp(-E_PLL(x) / tau) / Z`` with ``E_PLL(x) = -sum_i log p_1(x_i | x_{-i})``, the
  target of Metropolis-Hastings on the pseudo-log-likelihood energy (at ``tau = 1`` it is their
  locally normalised ``mrf-local``);
* ``hcb``: the Hammersley-Clifford-Besag joint at a pivot ``x*`` (Besag 1974, eq. 2.2, sites
  taken from the last): ``q(x) / q(x*) = prod_i p_i(x_i | x*_{<i}, x_{>i}) / p_i(x*_i | x*_{<i},
  x_{>i})``, which with two sites is their ``hcb`` (``p(a | b) p(b | a*) / p(a* | b)``);
* ``ag``: the Arnold-Gokhale joint (Arnold and Gokhale 1998), the fixed point of their ``iter``
  scheme: a joint ``q`` with conditionals ``p_i`` satisfies ``q(x) = p_i(x_i | x_{-i})
  q_{-i}(x_{-i})`` for every ``i``, hence ``q(x) = sum_i p_i(x_i | x_{-i}) / sum_i 1 /
  q_{-i}(x_{-i})``; iterating that map (normalised) from the uniform law is their two-site
  iteration, here on ``n`` sites.

For each joint ``q``, the edge mismatch of a move ``x -> y = x^(i -> a)`` is
``delta_q(x, y) = [log q(y) - log q(x)] - [L_i(a | x) - L_i(x_i | x)]`` (the log-odds of ``q``'s
own conditional against the model's): 0 on every edge exactly when ``q``'s conditionals are the
model's. Around a rectangle the joint's log-ratios telescope, so Proposition 4's ``delta`` of
the model is minus the signed sum of the four edge mismatches: **every** joint has
``max |delta_q| >= max |delta| / 4`` (:func:`edge_mismatch`; tested). Their own measure, the KL
between the model's and the joint's conditionals averaged over the contexts, is given too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from glauber.core.arrays import JsonResult, logsumexp
from glauber.core.enumeration import all_states, neighbour_indices, state_index
from glauber.errors import InvalidParameterError, UnderflowError

#: The joints, in the order of the tables.
JOINTS = ("glauber", "mrf", "pll", "hcb", "ag")
#: The Arnold-Gokhale iteration stops when ``max |log F(q) - log q|`` is below this ...
AG_TOL = 1e-10
#: ... or after this many evaluations of the map (the result records the residual reached).
AG_MAX_ITER = 2000
#: Residuals kept by the Anderson acceleration of the Arnold-Gokhale iteration.
AG_MEMORY = 8
#: Largest change of any ``log q`` an accelerated step may make beyond the plain step (nats); a
#: larger one is refused (a point mass is a spurious fixed point of the map in float64).
AG_TRUST = 3.0


def normalise(log_weights: np.ndarray) -> np.ndarray:
    """``log_weights - logsumexp(log_weights)``: a log law."""
    return log_weights - logsumexp(log_weights)


def own_terms(table: np.ndarray, states: np.ndarray) -> np.ndarray:
    """``table[i, x, x_i]`` for every site and state: ``[n, S]`` (the sites' own tokens)."""
    n, s, _ = table.shape
    return table[np.arange(n)[:, None], np.arange(s)[None, :], states.T]


def mrf_log_joint(scores: np.ndarray, states: np.ndarray, tau: float) -> np.ndarray:
    """``log q(x) = sum_i s_i(x_i; x_{-i}) / tau`` normalised (the raw-score MRF)."""
    return normalise(own_terms(scores, states).sum(axis=0) / tau)


def pll_log_joint(log_conditionals_1: np.ndarray, states: np.ndarray, tau: float) -> np.ndarray:
    """``log q(x) = sum_i log p_1(x_i | x_{-i}) / tau`` normalised (``exp(-E_PLL / tau) / Z``)."""
    return normalise(own_terms(log_conditionals_1, states).sum(axis=0) / tau)


def hcb_log_joint(log_conditionals: np.ndarray, states: np.ndarray, pivot: Sequence[int]
                  ) -> np.ndarray:
    """The Hammersley-Clifford-Besag joint at ``pivot`` (Besag 1974, eq. 2.2), normalised.

    ``log q(x) - log q(x*) = sum_i [L_i(x_i | z^i) - L_i(x*_i | z^i)]`` with
    ``z^i = (x*_1..x*_{i-1}, ., x_{i+1}..x_n)`` (site ``i``'s own token does not matter); on
    two sites, Torroba Hennigen and Kim's ``p(a | b) / p(a* | b) * p(b | a*)``.
    A joint with conditionals ``exp(L)`` is this one, at every pivot.

    Raises
    ------
    InvalidParameterError
        If ``pivot`` is not a state (``n`` tokens in ``0..q-1``).
    """
    n, _, q = log_conditionals.shape
    star = np.asarray(pivot, dtype=np.int64)
    if star.shape != (n,) or star.min() < 0 or star.max() >= q:
        raise InvalidParameterError(f"the pivot must be a state of {n} tokens in 0..{q - 1}, "
                                    f"got {list(pivot)}")
    total = np.zeros(len(states))
    for i in range(n):
        z = np.where(np.arange(n)[None, :] < i, star[None, :], states)
        idx = state_index(z, q)
        total += log_conditionals[i, idx, states[:, i]] - log_conditionals[i, idx, star[i]]
    return normalise(total)


def ag_map(log_conditionals: np.ndarray) -> Any:
    """The Arnold-Gokhale map ``log q -> log [sum_i p_i(x_i | x_{-i}) / sum_i 1/q_{-i}(x_{-i})]``
    (normalised), in log space, as a function of ``log q`` ``[S]``."""
    n, s, q = log_conditionals.shape
    log_num = logsumexp(own_terms(log_conditionals, all_states(n, q)), axis=0)
    shape = (q,) * n

    def step(log_q: np.ndarray) -> np.ndarray:
        grid = log_q.reshape(shape)
        minus = [-np.broadcast_to(logsumexp(grid, axis=i)[(slice(None),) * i + (None,)],
                                  shape).reshape(s) for i in range(n)]  # -log q_{-i}(x_{-i})
        return normalise(log_num - logsumexp(np.stack(minus), axis=0))

    return step


def _log_residual(log_a: np.ndarray, log_b: np.ndarray) -> float:
    return float(np.abs(log_a - log_b).max())


def ag_log_joint(log_conditionals: np.ndarray, tol: float = AG_TOL, max_iter: int = AG_MAX_ITER,
                 memory: int = AG_MEMORY) -> tuple[np.ndarray, int, float]:
    """The Arnold-Gokhale joint: the fixed point of :func:`ag_map`, from the uniform law.

    Torroba Hennigen and Kim iterate the map itself (40 times); near a metastable chain it
    contracts slowly (17,000 iterations to ``1e-13`` on the AntiBERTy CDR3 window at ``tau =
    0.5``), so the fixed point is reached here by Anderson acceleration (type II, the last
    ``memory`` residuals; Walker and Ni 2011, "Anderson acceleration for fixed-point
    iterations", SIAM J. Numer. Anal. 49(4)) in ``log q``: the same fixed point (tested against
    the plain iteration), in about a twentieth of the maps. An extrapolation that moves some
    ``log q`` more than :data:`AG_TRUST` from the plain step is refused (the iteration restarts
    from the plain step): near a point mass, where the map is numerically the identity, it
    would otherwise stop at a spurious fixed point. Returns ``(log q, maps evaluated,
    max |log F(q) - log q|)`` for the best iterate; a compatible family is a fixed point (module
    docstring).

    The map can contract very slowly along states of tiny mass (a Curie-Weiss pair at ``tau =
    0.3``: a residual of ``1e-10`` leaves ``2e-5`` in ``log q`` of a state of mass ``3e-12``), so
    the residual bounds the error only up to the factor ``1 / (1 - rate)``; TV distances are not
    affected, log-odds of the least likely states can be.
    """
    step = ag_map(log_conditionals)
    s = log_conditionals.shape[1]
    x = np.full(s, -np.log(s))
    fx = step(x)
    res = x_best = None
    d_res: list[np.ndarray] = []
    d_map: list[np.ndarray] = []
    best, evals = np.inf, 1
    while True:
        res = fx - x
        change = _log_residual(fx, x)
        if change < best:
            best, x_best = change, fx
        if change < tol or evals >= max_iter:
            return x_best, evals, best
        if d_res:
            a = np.stack(d_res, 1)  # least squares by its normal equations (m x m, m <= memory)
            gamma = np.linalg.lstsq(a.T @ a, a.T @ res, rcond=None)[0]
            nxt = normalise(fx - np.stack(d_map, 1) @ gamma)
        else:
            nxt = fx
        if not np.isfinite(nxt).all() or np.abs(nxt - fx).max() > AG_TRUST:
            nxt, d_res, d_map = fx, [], []  # a wild extrapolation: restart from the plain step
        f_next = step(nxt)
        evals += 1
        d_res.append((f_next - nxt) - res)
        d_map.append(f_next - fx)
        if len(d_res) > memory:
            d_res.pop(0)
            d_map.pop(0)
        x, fx = nxt, f_next


def edge_mismatch(log_joint: np.ndarray, log_conditionals: np.ndarray) -> np.ndarray:
    """``delta_q`` of every move ``x -> x^(i -> a)``, ``a != x_i``: ``[n, S, q]`` (0 on the
    diagonal ``a = x_i``). See the module docstring."""
    n, s, q = log_conditionals.shape
    nb = neighbour_indices(n, q)
    states = all_states(n, q)
    joint = log_joint[nb] - log_joint[None, :, None]
    model = log_conditionals - own_terms(log_conditionals, states)[:, :, None]
    return joint - model


def conditional_kl(log_joint: np.ndarray, log_conditionals: np.ndarray) -> tuple[float, float]:
    """Mean over the contexts ``(i, x_{-i})`` of ``KL(p_i || q_i)`` and ``KL(q_i || p_i)``,
    where ``q_i`` is the joint's conditional (Torroba Hennigen and Kim's ``all_kls_fwd`` and
    ``all_kls_rev``)."""
    n, s, q = log_conditionals.shape
    nb = neighbour_indices(n, q)
    lj = log_joint[nb]
    lj = lj - logsumexp(lj, axis=2)[:, :, None]  # q_i(. | x_{-i}), [n, S, q]
    lp = log_conditionals
    fwd = (np.exp(lp) * (lp - lj)).sum(axis=2)
    rev = (np.exp(lj) * (lj - lp)).sum(axis=2)
    return float(fwd.mean()), float(rev.mean())  # every context appears q times: same mean


def divergences(log_p: np.ndarray, log_q: np.ndarray) -> tuple[float, float, float]:
    """``(KL(p || q), KL(q || p), TV(p, q))`` of two log laws over the same states."""
    p, q = np.exp(log_p), np.exp(log_q)
    return (float((p * (log_p - log_q)).sum()), float((q * (log_q - log_p)).sum()),
            0.5 * float(np.abs(p - q).sum()))


@dataclass(frozen=True)
class JointsResult(JsonResult):
    """The joints of one exact chain at one temperature (:func:`joints`).

    Attributes
    ----------
    tau : float
    names : tuple of str
        :data:`JOINTS`.
    log_joints : ndarray, shape (J, S)
        The joints' log laws (mixed-radix state order); left out of :meth:`summary`.
    mean_abs_delta, max_abs_delta : ndarray, shape (J,)
        Mean and largest ``|delta_q|`` over every move (0 for a joint with the model's
        conditionals).
    kl_model_joint, kl_joint_model : ndarray, shape (J,)
        Mean over the contexts of ``KL(p_i || q_i)`` and ``KL(q_i || p_i)``.
    mode, mode_mass : ndarray, shape (J,)
        Each joint's most probable state (index) and its probability.
    pairs : tuple of (str, str)
        Every pair of joints.
    kl_ab, kl_ba, tv : ndarray, shape (P,)
        ``KL(a || b)``, ``KL(b || a)`` and the TV distance of each pair.
    rectangle_bound : float
        ``max |delta| / 4`` over every rectangle of the model: no joint has a smaller
        ``max |delta_q|``.
    pivot : tuple of int
        The HCB pivot.
    ag_iterations : int
        Arnold-Gokhale maps evaluated.
    ag_change : float
        ``max |log F(q) - log q|`` at the Arnold-Gokhale joint returned (its fixed-point
        residual).
    notes : tuple of str
        What could not be computed exactly: a Glauber law that underflows (its NaN entries), an
        Arnold-Gokhale iteration stopped before ``ag_tol`` (its row is the last iterate).
    """

    tau: float
    names: tuple[str, ...]
    log_joints: np.ndarray
    mean_abs_delta: np.ndarray
    max_abs_delta: np.ndarray
    kl_model_joint: np.ndarray
    kl_joint_model: np.ndarray
    mode: np.ndarray
    mode_mass: np.ndarray
    pairs: tuple[tuple[str, str], ...]
    kl_ab: np.ndarray
    kl_ba: np.ndarray
    tv: np.ndarray
    rectangle_bound: float
    pivot: tuple[int, ...]
    ag_iterations: int
    ag_change: float
    notes: tuple[str, ...] = ()

    def summary(self) -> dict:
        """Everything but the log laws, JSON-ready."""
        return {k: v for k, v in self.to_dict().items() if k != "log_joints"}


def joints(chain: Any, pivot: Sequence[int] | None = None, ag_tol: float = AG_TOL,
           ag_max_iter: int = AG_MAX_ITER, rectangles: bool = True) -> JointsResult:
    """Every joint of :data:`JOINTS` for an :class:`~glauber.exact.ExactChain`, and their
    distances.

    Parameters
    ----------
    chain : ExactChain
        The chain at the temperature wanted (its score table is shared with ``tau = 1``).
    pivot : sequence of int, optional
        The HCB pivot (default: the mode of the Glauber stationary law).
    rectangles : bool
        Compute the rectangle bound (every rectangle: ``q^n C(n,2) (q-1)^2`` of them, 8.7
        million for 3 sites of 20 amino acids); NaN if False.

    Returns
    -------
    JointsResult

    Examples
    --------
    >>> import networkx as nx
    >>> from glauber.exact import ExactChain
    >>> from glauber.toy_models import IsingModel
    >>> res = joints(ExactChain(IsingModel(nx.path_graph(3)), tau=1.0))
    >>> [round(float(d), 9) for d in res.mean_abs_delta]  # glauber, mrf, pll, hcb, ag
    [0.0, 2.0, 2.0, 0.0, 0.0]
    """
    with np.errstate(invalid="ignore", divide="ignore"):  # -inf logs of an underflowed law
        return _joints(chain, pivot, ag_tol, ag_max_iter, rectangles)


def _joints(chain: Any, pivot: Sequence[int] | None, ag_tol: float, ag_max_iter: int,
            rectangles: bool) -> JointsResult:
    states = chain.states()
    lp = chain.log_conditionals()
    log_pi, notes = _log_glauber(chain)
    star = states[int(np.argmax(log_pi))] if pivot is None else np.asarray(pivot, dtype=np.int64)
    ag, iters, change = ag_log_joint(lp, ag_tol, ag_max_iter)
    laws = np.stack([
        log_pi,
        mrf_log_joint(chain.scores(), states, chain.tau),
        pll_log_joint(chain.at(1.0).log_conditionals(), states, chain.tau),
        hcb_log_joint(lp, states, star),
        ag,
    ])
    mism = [np.abs(edge_mismatch(law, lp)) for law in laws]
    kls = np.array([conditional_kl(law, lp) for law in laws])
    pairs = tuple((JOINTS[a], JOINTS[b]) for a in range(len(JOINTS))
                  for b in range(a + 1, len(JOINTS)))
    div = np.array([divergences(laws[JOINTS.index(a)], laws[JOINTS.index(b)]) for a, b in pairs])
    n, q = chain.n, chain.q
    moves = n * chain.num_states * (q - 1)
    mean_d = np.array([m.sum() / moves for m in mism])
    max_d = np.array([m.max() for m in mism])
    if notes:  # the Glauber law is known to absolute accuracy only: no logs of its tiny entries
        mean_d[0] = max_d[0] = kls[0] = np.nan
        div[[k for k, pair in enumerate(pairs) if "glauber" in pair], :2] = np.nan
    if not change <= ag_tol:  # reported as it stands, said to be an iterate, not the fixed point
        notes = [*notes, f"ag: not converged after {iters} maps (fixed-point residual "
                         f"{change:.2g} > {ag_tol:g}); its row is the last iterate"]
    bound = chain.rectangles().max_abs_delta / 4 if rectangles and n >= 2 else float("nan")
    return JointsResult(
        tau=chain.tau, names=JOINTS, log_joints=laws,
        mean_abs_delta=mean_d, max_abs_delta=max_d,
        kl_model_joint=kls[:, 0], kl_joint_model=kls[:, 1],
        mode=laws.argmax(axis=1), mode_mass=np.exp(laws.max(axis=1)), pairs=pairs,
        kl_ab=div[:, 0], kl_ba=div[:, 1], tv=div[:, 2], rectangle_bound=float(bound),
        pivot=tuple(int(v) for v in star), ag_iterations=iters, ag_change=change,
        notes=tuple(notes),
    )


def _log_glauber(chain: Any) -> tuple[np.ndarray, list[str]]:
    """``log mu_tau`` (exact to relative precision), or the log of the float64 law with a note
    when log-space solves do not reach it (entries below ``1e-200`` on a chain too large for
    log-space GTH): then only its TV distances are reported."""
    try:
        return normalise(chain.log_stationary()), []
    except UnderflowError as exc:
        pi = np.clip(chain.stationary_solution().pi, 0.0, None)
        with np.errstate(divide="ignore"):
            log_pi = np.log(pi / pi.sum())
        return log_pi, [f"glauber: {exc}; its KL divergences and conditional mismatches are "
                        "not reported, its TV distances are (absolute accuracy)"]


__all__ = [
    "AG_MAX_ITER",
    "AG_MEMORY",
    "AG_TOL",
    "AG_TRUST",
    "JOINTS",
    "JointsResult",
    "ag_log_joint",
    "ag_map",
    "conditional_kl",
    "divergences",
    "edge_mismatch",
    "hcb_log_joint",
    "joints",
    "mrf_log_joint",
    "normalise",
    "own_terms",
    "pll_log_joint",
]
