"""Cached exact chains for properties: :func:`exact` returns the same chain for the same model.

A property usually asks several exact quantities of one chain (``t_mix``, ``C``, ``Delta``,
the stationary law, margins); :class:`CachedChain` is an
:class:`~glauber.exact.chain.ExactChain` that also remembers its mixing times and the
worst pair of Theorem 5's one-step contraction, and :func:`exact` keeps the most recent chains.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from glauber.core.validation import check_tau
from glauber.exact.chain import ExactChain
from glauber.exact.coupling import WorstPair, worst_pair

#: How many chains :func:`exact` keeps (least recently used ones are dropped).
CACHE_SIZE = 64

_CACHE: OrderedDict[tuple[Any, float], tuple[Any, "CachedChain"]] = OrderedDict()


class CachedChain(ExactChain):
    """An :class:`~glauber.exact.chain.ExactChain` that caches mixing times too.

    Everything of ``ExactChain`` is available (``stationary()``, ``influence_matrix()``,
    ``oscillation_matrix()``, ``margins(mask)``, ``distance(t)``, ...).
    """

    def mixing_time(self, eps: float = 0.25, backend: Any = "numpy", device: str | None = None,
                    method: Any = "auto") -> int:
        """Worst-start ``t_mix(eps)``, cached per ``eps`` (see ``ExactChain.mixing_time``)."""
        return self._cached(
            f"tmix:{eps!r}:{backend}:{device}:{method}",
            lambda: super(CachedChain, self).mixing_time(eps, backend, device, method),
        )

    def worst_pair(self) -> WorstPair:
        """Largest one-step ``E[d_H(X_1, Y_1)] / d_H(x, y)`` over all pairs of distinct states
        under the same-site maximal coupling (Theorem 5), with a pair attaining it."""
        return self._cached("worst_pair", lambda: worst_pair(self.conditionals()))


def exact(model: Any, tau: float) -> CachedChain:
    """The exact chain of ``model`` at ``tau``, cached: the same call returns the same chain.

    Models drawn by :func:`glauber.testing.models` are keyed by their ``spec``; other models by
    identity (the cache holds a reference, so the key stays valid).

    Parameters
    ----------
    model : ConditionalModel
    tau : float

    Returns
    -------
    CachedChain

    Raises
    ------
    InvalidTemperatureError
        If ``tau`` is not finite and positive.
    StateSpaceTooLargeError
        If the model has more than ``2**16`` states.

    Examples
    --------
    >>> from glauber.testing import ModelSpec
    >>> model = ModelSpec("curie-weiss", n=3, q=2, alpha=0.5, field=0.0).build()
    >>> exact(model, 1.0) is exact(model, 1.0)
    True
    """
    tau = check_tau(tau)
    spec = getattr(model, "spec", None)
    key = (spec if spec is not None else id(model), tau)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key][1]
    chain = CachedChain(model, tau)
    _CACHE[key] = (model, chain)
    while len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return chain


def clear_cache() -> None:
    """Drop every cached chain."""
    _CACHE.clear()


__all__ = ["CACHE_SIZE", "CachedChain", "clear_cache", "exact"]
