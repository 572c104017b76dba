"""The rectangle test (Proposition 4) and the Arnold–Press compatibility statistic.

Rectangle (paper §4, Proposition 4): a state ``x``, sites ``i != j``, replacements ``A' != A = x_i``
and ``B' != B = x_j``; ``y = x(i -> A')``, ``w = x(j -> B')``, ``z = x(i -> A', j -> B')``. Each
edge has the log-ratio of the conditional that makes the move, e.g.
``s_{x->y} = log p_tau(A' | x_{-i}) - log p_tau(A | x_{-i})``, and

    delta = (s_{x->y} + s_{y->z}) - (s_{x->w} + s_{w->z}).

If some joint law has these conditionals (they are *compatible*), every ``delta`` is 0. The
normaliser of a conditional cancels in its log-ratio, so ``delta(tau) = delta(1) / tau`` exactly.

The K x K generalisation (:func:`arnold_press_statistic`) follows Arnold & Press (1989,
"Compatible conditional distributions", JASA 84(405):152–156): two conditionals ``p(a | b)`` and
``p(b | a)`` are compatible iff their ratio factorises, ``p(a | b) / p(b | a) = u(a) v(b)``; Torroba
Hennigen & Kim (2023, "Deriving language models from masked language models", ACL) use this
criterion to measure and repair the incompatibility of MLM conditionals.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import stats

from glauber.core.arrays import JsonResult, is_torch, namespace, take_rows, to_numpy
from glauber.core.conditionals import (
    host_states,
    iter_scaled_log_conditionals,
)
from glauber.core.protocol import ConditionalModel
from glauber.core.validation import (
    check_nonnegative_float,
    check_positive_int,
    check_tau,
)
from glauber.errors import InvalidParameterError
from glauber.estimators.precision import DEFAULT_SCORE_ERROR_ULPS, model_precision
from glauber.estimators.random_draws import SeedLike
from glauber.theory.floating import UNIT_ROUNDOFF, RoundingFormats, coarsest
from glauber.theory.rectangle import (
    rectangle_delta_from_edges,
    rectangle_rounding_bound,
)


@dataclass(frozen=True)
class Rectangles(JsonResult):
    """The rectangles of one :func:`rectangle_test` (arrays of shape ``(R,)``).

    ``state_index`` indexes the ``states`` passed in; ``a = x_i``, ``a_prime = A'``, ``b = x_j``,
    ``b_prime = B'``; ``delta`` is Proposition 4's incompatibility at the test's ``tau``;
    ``error_bound`` bounds the rounding error of that ``delta``
    (:func:`glauber.theory.rectangle.rectangle_rounding_bound`, plus the test's ``atol``), and
    ``above_bound`` is ``|delta| > error_bound``: such a rectangle refutes compatibility.
    """

    state_index: np.ndarray
    site_i: np.ndarray
    site_j: np.ndarray
    a: np.ndarray
    a_prime: np.ndarray
    b: np.ndarray
    b_prime: np.ndarray
    delta: np.ndarray
    error_bound: np.ndarray
    above_bound: np.ndarray


@dataclass(frozen=True)
class RectangleTestResult(JsonResult):
    """Summary of :func:`rectangle_test`.

    Attributes
    ----------
    tau, replacements, k, n_rectangles :
        The test's settings (``k`` after clipping to ``q - 1``).
    mean_abs_delta, median_abs_delta, max_abs_delta, sd_abs_delta : float
        Statistics of ``|delta|`` (the paper's Table 1 reports the mean).
    mean_delta, sd_delta : float
        Statistics of the signed ``delta`` (``sd`` with ``ddof = 1``; NaN, serialised as ``None``,
        for a single rectangle).
    p_value_t : float or None
        Two-sided one-sample t-test of ``mean(delta) = 0``. The sign of ``delta`` flips when the
        roles of ``i`` and ``j`` swap, and the test draws the order at random, so this tests a
        *systematic* signed bias; incompatible models can pass it. 1.0 when every ``delta`` is 0.
    p_value_wilcoxon : float or None
        Two-sided Wilcoxon signed-rank test on ``delta`` (the non-parametric alternative, same
        caveat). 1.0 when every ``delta`` is 0.
    p_value_abs : float or None
        One-sided t-test of ``mean(|delta| - error_bound) > 0``: evidence that ``delta`` is not
        rounding noise. Compatibility forces ``delta = 0`` in *every* rectangle, so this is the
        relevant test.
    precision : str
        The floating-point format the model's scores were computed in (the coarsest of the
        scores' dtype and the model's ``dtype``/``autocast`` attributes, or the override).
    unit_roundoff : float
        Its unit roundoff ``u_m``.
    score_error_ulps : float
        Assumed accuracy of the scores, in units of ``u_m`` times the row's largest ``|score|``.
    extra_atol : float
        Extra absolute tolerance added to every rectangle's bound (the ``atol`` argument).
    max_error_bound : float
        Largest per-rectangle rounding bound (``rectangles.error_bound``).
    n_above_bound : int
        Rectangles with ``|delta|`` above their own rounding bound; any one of them refutes
        compatibility (Proposition 4), given the scores' assumed accuracy.
    compatible_within_bound : bool
        ``n_above_bound == 0``.
    rectangles : Rectangles

    Notes
    -----
    Before the per-rectangle error model, one absolute tolerance ``atol`` was used; the old names
    remain as read-only aliases (not serialised): ``atol`` of ``max_error_bound``,
    ``n_above_atol`` of ``n_above_bound``, ``compatible_within_atol`` of
    ``compatible_within_bound``.
    """

    tau: float
    replacements: str
    k: int
    n_rectangles: int
    mean_abs_delta: float
    median_abs_delta: float
    max_abs_delta: float
    sd_abs_delta: float
    mean_delta: float
    sd_delta: float
    p_value_t: float | None
    p_value_wilcoxon: float | None
    p_value_abs: float | None
    precision: str
    unit_roundoff: float
    score_error_ulps: float
    extra_atol: float
    max_error_bound: float
    n_above_bound: int
    compatible_within_bound: bool
    rectangles: Rectangles

    @property
    def atol(self) -> float:
        """Old name of :attr:`max_error_bound` (the tolerance is now per rectangle)."""
        return self.max_error_bound

    @property
    def n_above_atol(self) -> int:
        """Old name of :attr:`n_above_bound`."""
        return self.n_above_bound

    @property
    def compatible_within_atol(self) -> bool:
        """Old name of :attr:`compatible_within_bound`."""
        return self.compatible_within_bound


def rectangle_test(
    model: ConditionalModel,
    states: Any,
    tau: float = 1.0,
    n_rectangles: int = 300,
    replacements: Literal["topk", "uniform"] = "topk",
    k: int = 50,
    seed: SeedLike = 0,
    batch_size: int = 4096,
    atol: float = 0.0,
    score_error_ulps: float = DEFAULT_SCORE_ERROR_ULPS,
    precision: Any = None,
) -> RectangleTestResult:
    """Proposition 4's rectangle test on random rectangles (the paper's §4 protocol).

    Each rectangle draws a state ``x`` uniformly from ``states``, sites ``i != j`` uniformly, and
    replacements ``A' != x_i``, ``B' != x_j``: uniformly among the model's own top-``k`` tokens of
    ``p(. | x_{-i})`` and ``p(. | x_{-j})`` other than the current token (``"topk"``, the paper uses
    ``k = 50``), or uniformly among all other tokens (``"uniform"``). Two batched passes:
    ``(x, i), (x, j)`` for all rectangles, then ``(y, j), (w, i)``.

    Parameters
    ----------
    model : ConditionalModel
    states : array of int, shape (S, n)
        Contexts to build rectangles from (e.g. natural text; n >= 2).
    tau : float
        Temperature > 0 (``delta`` scales as ``1 / tau``).
    n_rectangles : int
        Number of rectangles, >= 1.
    replacements : {"topk", "uniform"}
    k : int
        Size of the top-k candidate set (clipped to ``q - 1``).
    seed : int or numpy.random.Generator
        Same seed, same rectangles.
    batch_size : int
        Most rows per :meth:`scores` call.
    atol : float, optional
        Extra absolute tolerance added to every rectangle's rounding bound (default 0).
    score_error_ulps : float, optional
        Assumed accuracy of the model's scores: within ``score_error_ulps * u_m * max|s|`` of
        exact, per row (default
        :data:`glauber.estimators.precision.DEFAULT_SCORE_ERROR_ULPS`).
    precision : dtype or str, optional
        The format the model computes in (``"float64"``, ``"float32"``, ``"bfloat16"``,
        ``"float16"``); by default the coarsest of the scores' dtype and the model's ``dtype``
        and ``autocast`` attributes (an MLM run in bfloat16 returns float32 scores).

    Notes
    -----
    Each rectangle's ``|delta|`` is compared with a bound on its own rounding error,
    :func:`glauber.theory.rectangle.rectangle_rounding_bound` (derivation there), which scales
    with the scores' and log-probabilities' magnitudes, with ``1 / tau`` and with the unit
    roundoff of each format involved, so a compatible model is not declared incompatible at
    small ``tau`` or with large scores, and a low-precision model gets a wide bound.

    Returns
    -------
    RectangleTestResult

    Raises
    ------
    InvalidTemperatureError
        If ``tau`` is not finite and > 0.
    InvalidParameterError
        If ``n < 2``, ``states`` is empty, ``replacements`` is unknown or a count is < 1.
    SequenceLengthError, VocabularyError
        On malformed states.
    """
    tau = check_tau(tau)
    atol = check_nonnegative_float(atol, "atol")
    score_error_ulps = check_nonnegative_float(score_error_ulps, "score_error_ulps")
    n_rectangles = check_positive_int(n_rectangles, "n_rectangles")
    k = min(check_positive_int(k, "k"), model.q - 1)
    batch_size = check_positive_int(batch_size, "batch_size")
    if replacements not in ("topk", "uniform"):
        raise InvalidParameterError(
            f"replacements must be 'topk' or 'uniform', got {replacements!r}"
        )
    xs = _contexts(model, states)
    n, q, r = model.n, model.q, n_rectangles
    rng = np.random.default_rng(seed)
    s_idx = rng.integers(xs.shape[0], size=r)
    si = rng.integers(n, size=r)
    sj = (si + 1 + rng.integers(n - 1, size=r)) % n  # uniform over j != i
    x = xs[s_idx]
    rows = np.arange(r)
    a, b = x[rows, si], x[rows, sj]

    # Pass 1: conditionals at (x, i) for rows 0..r-1 and (x, j) for rows r..2r-1.
    sites1 = np.concatenate([si, sj])
    current = np.concatenate([a, b])
    if replacements == "uniform":
        offsets = rng.integers(q - 1, size=2 * r)
        chosen = (current + 1 + offsets) % q
        (lp_current, lp_chosen), info1 = _gather_pass(
            model, np.concatenate([x, x]), sites1, tau, batch_size, [current, chosen]
        )
    else:
        lp_current, top_idx, top_val, info1 = _topk_pass(
            model, np.concatenate([x, x]), sites1, current, tau, batch_size, k
        )
        pick = rng.integers(k, size=2 * r)
        chosen = top_idx[np.arange(2 * r), pick]
        lp_chosen = top_val[np.arange(2 * r), pick]
    a_prime, b_prime = chosen[:r], chosen[r:]
    s_xy = lp_chosen[:r] - lp_current[:r]
    s_xw = lp_chosen[r:] - lp_current[r:]

    # Pass 2: conditionals at (y, j) and (w, i).
    y = x.copy()
    y[rows, si] = a_prime
    w = x.copy()
    w[rows, sj] = b_prime
    (lp_old, lp_new), info2 = _gather_pass(
        model,
        np.concatenate([y, w]),
        np.concatenate([sj, si]),
        tau,
        batch_size,
        [np.concatenate([b, a]), np.concatenate([b_prime, a_prime])],
    )
    lp_b, lp_a, lp_bp, lp_ap = lp_old[:r], lp_old[r:], lp_new[:r], lp_new[r:]
    s_yz = lp_bp - lp_b
    s_wz = lp_ap - lp_a
    delta = np.asarray(rectangle_delta_from_edges(s_xy, s_yz, s_xw, s_wz), dtype=np.float64)
    score_dtype = coarsest(info1.score_dtype, info2.score_dtype)
    model_dtype = model_precision(model, score_dtype, precision)
    # Edge rows: x -> y, x -> w (pass 1), y -> z, w -> z (pass 2).
    bound = rectangle_rounding_bound(
        np.stack([lp_current[:r], lp_current[r:], lp_b, lp_a]),
        np.stack([lp_chosen[:r], lp_chosen[r:], lp_bp, lp_ap]),
        np.stack([info1.scale[:r], info1.scale[r:], info2.scale[:r], info2.scale[r:]]),
        tau,
        RoundingFormats(score_dtype, coarsest(info1.work_dtype, info2.work_dtype), model_dtype,
                        score_error_ulps),
    ) + atol
    return _summarise(
        delta,
        tau,
        replacements,
        k,
        (model_dtype, score_error_ulps, atol),
        Rectangles(
            s_idx, si, sj, a, a_prime, b, b_prime, delta, bound, np.abs(delta) > bound
        ),
    )


@dataclass(frozen=True)
class ArnoldPressResult(JsonResult):
    """Result of :func:`arnold_press_statistic`.

    Attributes
    ----------
    statistic : float
        Root-mean-square of the interaction matrix ``E`` (0 iff compatible on the K x K slice).
    max_abs : float
        ``max |E|``.
    interaction : ndarray, shape (K_i, K_j)
        The double-centred log-ratio matrix ``E``.
    tokens_i, tokens_j : ndarray of int
        The top-K tokens at ``i`` and at ``j`` (vocabulary indices).
    i, j : int
    tau : float
    """

    statistic: float
    max_abs: float
    interaction: np.ndarray
    tokens_i: np.ndarray
    tokens_j: np.ndarray
    i: int
    j: int
    tau: float


def arnold_press_statistic(
    model: ConditionalModel,
    state: Any,
    i: int,
    j: int,
    tau: float = 1.0,
    K: int = 10,
    batch_size: int = 4096,
) -> ArnoldPressResult:
    """K x K compatibility statistic of the conditionals at sites ``i`` and ``j`` around ``state``.

    Fix every site but ``i`` and ``j`` as in ``state``. Let ``S_i`` (``S_j``) be the top-``K``
    tokens of ``p(. | x_{-i})`` (``p(. | x_{-j})``). For ``a`` in ``S_i``, ``b`` in ``S_j`` let

        R[a, b] = log p_tau(a | x^{j->b}_{-i}) - log p_tau(b | x^{i->a}_{-j}).

    If a joint law ``pi`` has these conditionals,
    ``pi(a, b) = p(a | b) pi_j(b) = p(b | a) pi_i(a)``, so ``R[a, b] = log pi_i(a) - log pi_j(b)``
    is additive: ``exp(R)`` is rank one, the Arnold & Press (1989) criterion. The statistic is the
    root-mean-square of the double-centred matrix

        E = R - row means - column means + grand mean,

    which is 0 iff ``R`` is additive on ``S_i x S_j``. Every 2 x 2 contrast of ``R`` is minus a
    rectangle ``delta`` (Proposition 4): ``delta = R[a', b] + R[a, b'] - R[a, b] - R[a', b']``. For
    ``K = 2``, ``|E|`` is ``|delta| / 4`` in every entry. ``E(tau) = E(1) / tau`` (the normalisers
    are additive terms). Costs ``2 + 2K`` conditionals.

    Parameters
    ----------
    model : ConditionalModel
    state : array of int, shape (n,) or (1, n)
    i, j : int
        Two distinct sites.
    tau : float
        Temperature > 0.
    K : int
        Number of top tokens per site (clipped to ``q``), >= 2.
    batch_size : int
        Most rows per :meth:`scores` call.

    Returns
    -------
    ArnoldPressResult

    Raises
    ------
    InvalidParameterError
        If ``i == j``, a site is out of range, ``K < 2`` or ``state`` is not one state.
    InvalidTemperatureError, SequenceLengthError, VocabularyError
        On a bad temperature or state.
    """
    tau = check_tau(tau)
    if check_positive_int(K, "K") < 2:
        raise InvalidParameterError(f"K must be >= 2 (a 1 x 1 slice has no interaction), got {K}")
    K = min(int(K), model.q)
    one = np.asarray(to_numpy(state) if is_torch(state) else state)
    if one.ndim not in (1, 2) or (one.ndim == 2 and one.shape[0] != 1):
        raise InvalidParameterError(
            f"state must be one state, shape (n,) or (1, n); got shape {one.shape}; for several "
            "states call arnold_press_statistic once per state"
        )
    x = host_states(model, one.reshape(1, -1))
    i, j = _site(i, model.n, "i"), _site(j, model.n, "j")
    if i == j:
        raise InvalidParameterError(f"sites i and j must differ, got i = j = {i}")
    _, top_idx, _, _ = _topk_pass(
        model, np.concatenate([x, x]), np.array([i, j]), x[0, [i, j]], tau, batch_size, K,
        exclude_current=False,
    )
    tok_i, tok_j = top_idx[0], top_idx[1]
    ctx_i = np.repeat(x, K, axis=0)  # contexts for site i: x with j -> b
    ctx_i[:, j] = tok_j
    ctx_j = np.repeat(x, K, axis=0)  # contexts for site j: x with i -> a
    ctx_j[:, i] = tok_i
    rows = _full_pass(
        model, np.concatenate([ctx_i, ctx_j]), np.array([i] * K + [j] * K), tau, batch_size
    )
    l_i = rows[:K][:, tok_i].T  # l_i[a, b] = log p(a | x^{j->b}_{-i})
    l_j = rows[K:][:, tok_j]  # l_j[a, b] = log p(b | x^{i->a}_{-j})
    r_mat = l_i - l_j
    e = r_mat - r_mat.mean(axis=1, keepdims=True) - r_mat.mean(axis=0, keepdims=True) + r_mat.mean()
    return ArnoldPressResult(
        statistic=float(np.sqrt(np.mean(e**2))),
        max_abs=float(np.max(np.abs(e))),
        interaction=e,
        tokens_i=tok_i,
        tokens_j=tok_j,
        i=i,
        j=j,
        tau=tau,
    )


def _contexts(model: ConditionalModel, states: Any) -> np.ndarray:
    if model.n < 2:
        raise InvalidParameterError(
            f"a rectangle needs two sites; the model has n = {model.n}"
        )
    xs = host_states(model, states)
    if xs.shape[0] == 0:
        raise InvalidParameterError("states is empty; pass at least one context [1, n]")
    return xs


def _site(value: int, n: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < n:
        raise InvalidParameterError(f"site {name} must be an integer in 0..{n - 1}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class _PassInfo:
    """Per-row score scale ``max_a |s(a)|`` and the formats of one pass (for the error bound)."""

    scale: np.ndarray
    score_dtype: str
    work_dtype: str


class _InfoCollector:
    def __init__(self, m: int) -> None:
        self.scale = np.empty(m)
        self.score_dtypes: list[str] = []
        self.work_dtypes: list[str] = []

    def add(self, lo: int, hi: int, lp: Any, scale: np.ndarray, score_dtype: str) -> None:
        self.scale[lo:hi] = scale
        self.score_dtypes.append(score_dtype)
        self.work_dtypes.append(str(lp.dtype).removeprefix("torch."))

    def info(self) -> _PassInfo:
        return _PassInfo(
            self.scale,
            coarsest(*self.score_dtypes) if self.score_dtypes else "float64",
            coarsest(*self.work_dtypes) if self.work_dtypes else "float64",
        )


def _gather_pass(
    model: ConditionalModel,
    states: np.ndarray,
    sites: np.ndarray,
    tau: float,
    batch_size: int,
    tokens: list[np.ndarray],
) -> tuple[list[np.ndarray], _PassInfo]:
    """``log p_tau(tokens[t][r] | states[r]_{-sites[r]})`` for every row ``r`` and token list ``t``.

    Also returns each row's score scale and the formats (for the rounding bound).
    """
    out = [np.empty(len(sites)) for _ in tokens]
    info = _InfoCollector(len(sites))
    for lo, hi, lp, scale, score_dtype in iter_scaled_log_conditionals(
        model, len(sites), lambda lo, hi: (states[lo:hi], sites[lo:hi]), tau, batch_size
    ):
        info.add(lo, hi, lp, scale, score_dtype)
        for o, tok in zip(out, tokens):
            o[lo:hi] = to_numpy(take_rows(lp, tok[lo:hi]))
    return out, info.info()


def _topk_pass(
    model: ConditionalModel,
    states: np.ndarray,
    sites: np.ndarray,
    current: np.ndarray,
    tau: float,
    batch_size: int,
    k: int,
    exclude_current: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, _PassInfo]:
    """Log-probability of the current token, and the top-``k`` tokens (with log-probabilities).

    With ``exclude_current`` the current token is dropped from each row's candidates (the
    top ``k + 1`` are computed, on the model's device, and the current one removed). Also
    returns each row's score scale and the formats (for the rounding bound).
    """
    m = len(sites)
    width = k + 1 if exclude_current else k
    width = min(width, model.q)
    lp_cur = np.empty(m)
    idx = np.empty((m, width), dtype=np.int64)
    val = np.empty((m, width))
    info = _InfoCollector(m)
    for lo, hi, lp, scale, score_dtype in iter_scaled_log_conditionals(
        model, m, lambda lo, hi: (states[lo:hi], sites[lo:hi]), tau, batch_size
    ):
        info.add(lo, hi, lp, scale, score_dtype)
        lp_cur[lo:hi] = to_numpy(take_rows(lp, current[lo:hi]))
        if is_torch(lp):
            top = namespace(lp).topk(lp, width, dim=-1)
            idx[lo:hi], val[lo:hi] = to_numpy(top.indices), to_numpy(top.values)
        else:
            order = np.argsort(-lp, axis=-1, kind="stable")[:, :width]
            idx[lo:hi], val[lo:hi] = order, np.take_along_axis(lp, order, axis=-1)
    if not exclude_current:
        return lp_cur, idx, val, info.info()
    keep = idx != current[:, None]
    # Rows that hold the current token keep the other k; rows that do not drop their last entry.
    keep[keep.all(axis=1), -1] = False
    return lp_cur, idx[keep].reshape(m, k), val[keep].reshape(m, k), info.info()


def _full_pass(
    model: ConditionalModel, states: np.ndarray, sites: np.ndarray, tau: float, batch_size: int
) -> np.ndarray:
    """Full log-conditional rows ``[m, q]`` on the host (for a handful of rows only)."""
    out = np.empty((len(sites), model.q))
    for lo, hi, lp, _, _ in iter_scaled_log_conditionals(
        model, len(sites), lambda lo, hi: (states[lo:hi], sites[lo:hi]), tau, batch_size
    ):
        out[lo:hi] = to_numpy(lp)
    return out


def _summarise(
    delta: np.ndarray,
    tau: float,
    replacements: str,
    k: int,
    error_model: tuple[str, float, float],
    rectangles: Rectangles,
) -> RectangleTestResult:
    precision, score_error_ulps, atol = error_model
    absd = np.abs(delta)
    excess = absd - rectangles.error_bound
    r = len(delta)
    all_zero = bool(np.all(delta == 0.0))
    if all_zero:
        p_t = p_w = 1.0
    elif r < 2:
        p_t = p_w = float("nan")
    else:
        with warnings.catch_warnings():  # nearly equal deltas: scipy warns, the p-value stands
            warnings.simplefilter("ignore", RuntimeWarning)
            p_t = float(stats.ttest_1samp(delta, 0.0).pvalue) if np.std(delta) > 0 else 0.0
            p_w = float(stats.wilcoxon(delta).pvalue)
    if r >= 2 and np.std(excess) > 0:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            p_abs = float(stats.ttest_1samp(excess, 0.0, alternative="greater").pvalue)
    else:
        p_abs = 0.0 if excess.min() > 0 else 1.0
    n_above = int(rectangles.above_bound.sum())
    return RectangleTestResult(
        tau=tau,
        replacements=replacements,
        k=k,
        n_rectangles=r,
        mean_abs_delta=float(absd.mean()),
        median_abs_delta=float(np.median(absd)),
        max_abs_delta=float(absd.max()),
        sd_abs_delta=float(np.std(absd, ddof=1)) if r > 1 else float("nan"),
        mean_delta=float(delta.mean()),
        sd_delta=float(np.std(delta, ddof=1)) if r > 1 else float("nan"),
        p_value_t=p_t,
        p_value_wilcoxon=p_w,
        p_value_abs=p_abs,
        precision=precision,
        unit_roundoff=UNIT_ROUNDOFF[precision],
        score_error_ulps=score_error_ulps,
        extra_atol=atol,
        max_error_bound=float(rectangles.error_bound.max()),
        n_above_bound=n_above,
        compatible_within_bound=n_above == 0,
        rectangles=rectangles,
    )


__all__ = [
    "arnold_press_statistic",
    "ArnoldPressResult",
    "rectangle_test",
    "Rectangles",
    "RectangleTestResult",
]
