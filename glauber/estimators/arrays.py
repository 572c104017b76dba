"""Array helpers that let one estimator run on numpy (toy models) and torch (MLMs) alike.

Torch is imported lazily, only when a torch tensor is actually seen, so toy-model code paths
never pay for it.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def is_torch(x: Any) -> bool:
    """Return True if ``x`` is a ``torch.Tensor`` (without importing torch if it is not loaded)."""
    mod = type(x).__module__
    return mod.startswith("torch")


def to_numpy(x: Any, dtype: Any = None) -> np.ndarray:
    """Return ``x`` as a numpy array on the host (float tensors keep their precision, bf16 -> fp32)."""
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


def all_finite(x: Any) -> bool:
    """Return True if every entry of ``x`` is finite."""
    if is_torch(x):
        return bool(_torch().isfinite(x).all())
    return bool(np.isfinite(np.asarray(x)).all())


def _torch() -> Any:
    import torch

    return torch
