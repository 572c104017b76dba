"""The array library and device of the exact-chain algebra: numpy on the CPU, or torch float64."""

from __future__ import annotations

from typing import Any

from glauber.errors import DeviceUnavailableError, InvalidParameterError


def resolve_array_backend(backend: str, device: str | None) -> tuple[Any, str | None]:
    """Check ``backend`` and ``device``; return ``(torch module or None, device)``.

    Parameters
    ----------
    backend : {"numpy", "torch"}
        numpy (CPU only; ``None`` is returned for the module) or torch.
    device : str, optional
        Torch device; default ``"cuda"`` when available, else ``"cpu"``. numpy accepts only
        ``None`` or ``"cpu"``.

    Raises
    ------
    InvalidParameterError
        If the backend is unknown, or numpy is asked for a device other than the CPU.
    DeviceUnavailableError
        If CUDA is requested but not available.
    """
    if backend == "numpy":
        if device not in (None, "cpu"):
            raise InvalidParameterError(
                f"backend='numpy' runs on the CPU only, got device={device!r}; use "
                "backend='torch' for another device"
            )
        return None, "cpu"
    if backend != "torch":
        raise InvalidParameterError(f"unknown backend {backend!r}; use 'numpy' or 'torch'")
    import torch

    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if str(device).startswith("cuda") and not torch.cuda.is_available():
        raise DeviceUnavailableError(
            f"device {device!r} was requested but CUDA is not available; use device='cpu'"
        )
    return torch, device


__all__ = [
    "resolve_array_backend",
]
