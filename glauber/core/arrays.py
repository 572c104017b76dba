"""Array helpers that let one estimator run on numpy (toy models) and torch (MLMs) alike.

Torch is imported lazily, only when a torch tensor is actually seen, so toy-model code paths
never pay for it.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np


def is_torch(x: Any) -> bool:
    """Return True if ``x`` is a ``torch.Tensor`` (without importing torch if it is not loaded)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def to_numpy(x: Any, dtype: Any = None) -> np.ndarray:
    """Return ``x`` as a numpy array on the host (floats keep their precision; bf16 -> fp32)."""
    if is_torch(x):
        t = x.detach()
        if t.dtype.is_floating_point and t.dtype not in (_torch().float32, _torch().float64):
            t = t.float()
        x = t.cpu().numpy()
    arr = np.asarray(x)
    return arr if dtype is None else arr.astype(dtype, copy=False)


def like(x: Any, values: Any, dtype: str = "int64") -> Any:
    """Return ``values`` as an array of the same kind (and device) as ``x``."""
    if is_torch(x):
        torch = _torch()
        return torch.as_tensor(np.asarray(values), dtype=getattr(torch, dtype), device=x.device)
    return np.asarray(values, dtype=dtype)


def log_softmax(x: Any) -> Any:
    """Numerically stable log-softmax over the last axis, in ``x``'s own array library.

    Half-precision torch inputs are upcast to float32 first (log-softmax in fp32).
    """
    if is_torch(x):
        torch = _torch()
        if x.dtype in (torch.float16, torch.bfloat16):
            x = x.float()
        return torch.log_softmax(x, dim=-1)
    x = np.asarray(x, dtype=np.float64)
    m = np.max(x, axis=-1, keepdims=True)
    z = x - m
    return z - np.log(np.sum(np.exp(z), axis=-1, keepdims=True))


def logsumexp(v: Any, axis: int | None = None) -> Any:
    """``log sum exp(v)`` along ``axis`` (all of ``v`` when None) without overflow or underflow.

    An empty or all ``-inf`` reduction gives ``-inf`` (no warning); ``axis=None`` returns a
    Python float.

    Examples
    --------
    >>> logsumexp(np.log([1.0, 2.0, 3.0])) == float(np.log(6.0))
    True
    >>> logsumexp(np.array([-np.inf, -np.inf]))
    -inf
    """
    v = np.asarray(v, dtype=np.float64)
    if axis is None and v.size == 0:
        return -np.inf
    m = np.max(v, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(v - m), axis=axis, keepdims=True)) + m
    return float(out.item()) if axis is None else np.squeeze(out, axis=axis)


def all_finite(x: Any) -> bool:
    """Return True if every entry of ``x`` is finite."""
    if is_torch(x):
        return bool(_torch().isfinite(x).all())
    return bool(np.isfinite(np.asarray(x)).all())


def namespace(x: Any) -> Any:
    """Return the array module of ``x``: ``torch`` for a tensor, ``numpy`` otherwise.

    The reductions used by the estimators (``sum``, ``amax``, ``amin``, ``exp``, ``abs``,
    ``minimum``, ``where``) accept the same ``axis=`` spelling in both modules.
    """
    return _torch() if is_torch(x) else np


def take_rows(x: Any, index: Any) -> Any:
    """Return ``x[b, index[b]]`` for every row ``b`` of a ``[B, q]`` array (numpy or torch)."""
    if is_torch(x):
        torch = _torch()
        idx = torch.as_tensor(index, device=x.device, dtype=torch.long)
        return torch.take_along_dim(x, idx[:, None], dim=1)[:, 0]
    return np.take_along_axis(x, np.asarray(index, dtype=np.int64)[:, None], axis=1)[:, 0]


def jsonable(value: Any) -> Any:
    """Convert arrays, numpy/torch scalars and tuples to JSON-safe lists, floats, ints and bools.

    Strict JSON has no infinity or NaN: ``+-inf`` becomes the string ``"inf"``/``"-inf"`` (as in
    :meth:`glauber.theory.contraction.ContractionCertificate.to_dict`) and NaN becomes ``None``.
    Objects with a ``to_dict`` method (nested results) are converted through it.
    """
    if hasattr(value, "to_dict") and not isinstance(value, type):
        return jsonable(value.to_dict())
    if is_torch(value):
        value = to_numpy(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [jsonable(v) for v in value.tolist()] if value.ndim else jsonable(value.item())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        if np.isnan(f):
            return None
        return f if np.isfinite(f) else ("inf" if f > 0 else "-inf")
    return value


class JsonResult:
    """Mixin of the estimators' frozen result dataclasses: ``to_dict()`` via :func:`jsonable`."""

    def to_dict(self) -> dict:
        """JSON-safe dictionary of every field (arrays as lists, +-inf as strings, NaN as None)."""
        return jsonable(self.__dict__)


def _torch() -> Any:
    import torch

    return torch


__all__ = [
    "logsumexp",
    "all_finite",
    "is_torch",
    "jsonable",
    "JsonResult",
    "like",
    "log_softmax",
    "namespace",
    "take_rows",
    "to_numpy",
]
