"""Pseudo-log-likelihood: ``PLL_tau(x) = sum_k log p_tau(x_k | x_{-k})``, one masked query per site.

The paper's "used as if conditionals define a joint": the score that ranks sequences by their own
conditionals, and (at ``tau = 1``, negated) the energy ``E_pll`` of the ``mh:pll`` kernel
(:mod:`glauber.core.kernel_spec`). For an MLM each term is one forward with site ``k`` masked:
``n`` forwards per state. :func:`own_token_terms` batches the ``B x m`` (state, site) queries of a
batch of states into :meth:`scores` calls of at most ``batch_size`` rows, built lazily (the
MLM backend splits each call again to fit its memory budget), so long sequences and large
batches never sit in memory at once.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from glauber.core.arrays import all_finite, is_torch, like, take_rows, to_numpy
from glauber.core.conditionals import host_states, log_conditionals
from glauber.core.protocol import ConditionalModel, check_model
from glauber.core.validation import check_positive_int, check_tau
from glauber.errors import InvalidParameterError, NonFiniteScoresError
from glauber.estimators.batch_arrays import concat, to_model_library

#: Default rows per :meth:`scores` call of :func:`pseudo_log_likelihood`.
DEFAULT_PLL_BATCH = 512


def own_token_terms(
    model: ConditionalModel,
    states: Any,
    kind: str = "log_p",
    tau: float = 1.0,
    batch_size: int = DEFAULT_PLL_BATCH,
    sites: Any = None,
) -> Any:
    """Each site's term for its own token, ``[B, m]`` in the model's array library.

    ``kind="log_p"``: ``log p_tau(x_k | x_{-k})`` (the PLL's terms); ``kind="scores"``:
    ``s_k(x_k; x_{-k})`` at ``tau = 1`` (the logits energy's terms).

    Parameters
    ----------
    model : ConditionalModel
    states : array of int, shape (B, n)
        In the model's array library and on its device (see
        :func:`glauber.estimators.batch_arrays.to_model_library`); not checked here.
    kind : {"log_p", "scores"}
    tau : float
    batch_size : int
        Most rows per :meth:`scores` call.
    sites : array of int, shape (m,), optional
        The sites summed (default all ``n``), on the host.

    Raises
    ------
    InvalidParameterError
        If ``kind`` is neither.
    """
    B = int(states.shape[0])
    site_list = np.arange(model.n) if sites is None else np.asarray(sites, dtype=np.int64)
    m = len(site_list)
    site_arr = like(states, site_list)
    terms = token_terms(model, B * m, lambda lo, hi: _rows(states, site_arr, m, lo, hi), kind,
                        tau, batch_size)
    return terms.reshape(B, m)


def token_terms(
    model: ConditionalModel,
    n_rows: int,
    build: Callable[[int, int], tuple[Any, Any]],
    kind: str = "log_p",
    tau: float = 1.0,
    batch_size: int = DEFAULT_PLL_BATCH,
    check_finite: bool = True,
) -> Any:
    """The own-token term of ``n_rows`` (state, site) queries, ``[n_rows]``.

    ``build(lo, hi) -> (states[hi - lo, n], sites[hi - lo])`` makes the queries of one chunk
    (as in :func:`glauber.core.conditionals.iter_log_conditionals`); the term of a query is
    ``log p_tau(x_k | x_{-k})`` (``kind="log_p"``) or the raw score ``s_k(x_k; x_{-k})``
    (``kind="scores"``, ``tau`` unused) at its site ``k``, in float64 (float32 scores are cast
    before the log-softmax: the Metropolis-Hastings energies are differences of sums of these
    terms). ``check_finite=False`` leaves the
    finiteness check to the caller (a device loop checks its energies at its sync points).

    Raises
    ------
    InvalidParameterError
        If ``kind`` is neither.
    NonFiniteScoresError
        If the model returns non-finite scores.
    """
    if kind not in ("log_p", "scores"):
        raise InvalidParameterError(f"kind must be 'log_p' or 'scores', got {kind!r}")
    out = []
    for lo in range(0, n_rows, batch_size):
        rows, cols = build(lo, min(lo + batch_size, n_rows))
        if kind == "log_p":
            lp = log_conditionals(model, rows, cols, tau, check_finite, float64=True)
            out.append(take_rows(lp, take_rows(rows, cols)))
        else:  # the raw scores at tau = 1 (log-conditionals lose a per-row constant)
            s = model.scores(rows, cols)
            s = s.double() if is_torch(s) else np.asarray(s, dtype=np.float64)
            if check_finite and not all_finite(s):
                raise NonFiniteScoresError(
                    f"model {getattr(model, 'name', type(model).__name__)} returned non-finite "
                    "scores; the logits energy needs finite scores at every site"
                )
            out.append(take_rows(s, take_rows(rows, cols)))
    return concat(out)


def _rows(states: Any, site_arr: Any, m: int, lo: int, hi: int) -> tuple[Any, Any]:
    """The (state, site) queries ``lo .. hi - 1`` of the ``B x m`` grid (state-major)."""
    r = like(states, np.arange(lo, hi))
    return states[r // m], site_arr[r % m]


def pseudo_log_likelihood(
    model: ConditionalModel,
    states: Any,
    tau: float = 1.0,
    normalise: bool = False,
    batch_size: int = DEFAULT_PLL_BATCH,
) -> np.ndarray:
    """``PLL_tau(x) = sum_k log p_tau(x_k | x_{-k})`` of each state (Wang and Cho 2019; Salazar
    et al. 2020), or its mean over the ``n`` sites with ``normalise=True``.

    Parameters
    ----------
    model : ConditionalModel
        A toy model or an MLM (one forward per site and state, batched).
    states : array of int, shape (B, n) or (n,)
        Vocabulary indices (numpy, list or torch).
    tau : float
        Temperature of the conditionals (1: the model's own).
    normalise : bool
        Divide by the number of sites ``n``.
    batch_size : int
        Most (state, site) rows per :meth:`scores` call.

    Returns
    -------
    numpy.ndarray of float64, shape (B,)

    Raises
    ------
    InvalidModelError, InvalidTemperatureError, InvalidParameterError
        On a bad model, temperature or batch size.
    SequenceLengthError, VocabularyError
        If the states are not ``[B, n]`` indices in ``0..q-1``.

    Examples
    --------
    >>> from glauber.toy_models import FunctionModel
    >>> m = FunctionModel(2, 2, lambda x, i: np.zeros((len(x), 2)))  # uniform conditionals
    >>> pseudo_log_likelihood(m, [[0, 1]], normalise=True).round(6).tolist()  # log(1/2)
    [-0.693147]
    """
    check_model(model)
    tau = check_tau(tau)
    batch_size = check_positive_int(batch_size, "batch_size")
    arr = states if is_torch(states) else np.asarray(states)
    x = host_states(model, arr[None, :] if arr.ndim == 1 else arr)
    if x.shape[0] == 0:
        return np.zeros(0)
    terms = own_token_terms(model, to_model_library(model, x, 0, tau), "log_p", tau, batch_size)
    pll = to_numpy(terms).astype(np.float64).sum(axis=1)
    return pll / model.n if normalise else pll


__all__ = [
    "DEFAULT_PLL_BATCH",
    "own_token_terms",
    "pseudo_log_likelihood",
    "token_terms",
]
