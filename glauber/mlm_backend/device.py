"""Device, precision and memory-budget choices shared by the transformer backends.

docs/architecture.md, "Speed": fp32 on CPU; bf16/fp16 optional on CUDA (log-softmax stays in fp32
downstream), either as the weights' dtype (:func:`resolve_dtype`) or by autocast over float32
weights (:func:`resolve_autocast`); sub-batch automatically to fit a memory budget.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from glauber.errors import DeviceUnavailableError, InvalidParameterError

#: Default budget on CPU, in tokens per forward pass (rows x sequence length).
CPU_BATCH_TOKENS = 65536
#: Fraction of the free CUDA memory (measured at construction) a forward pass may use.
CUDA_MEMORY_FRACTION = 0.5

_DTYPES = {
    "float32": torch.float32,
    "fp32": torch.float32,
    "bfloat16": torch.bfloat16,
    "bf16": torch.bfloat16,
    "float16": torch.float16,
    "fp16": torch.float16,
    "half": torch.float16,
}


def resolve_device(device: str | torch.device) -> torch.device:
    """Return ``device`` as a ``torch.device`` after checking that it exists.

    Raises
    ------
    DeviceUnavailableError
        If CUDA is requested but not available (or the index is out of range), or the
        device string is not understood.
    """
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise DeviceUnavailableError(
            f"unknown device {device!r}; use --device cpu or --device cuda"
        ) from exc
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise DeviceUnavailableError(
                "device 'cuda' requested but CUDA is not available on this machine; "
                "use --device cpu (device='cpu')"
            )
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise DeviceUnavailableError(
                f"device {device!r} requested but only {torch.cuda.device_count()} CUDA "
                "device(s) exist; use --device cuda:0 or --device cpu"
            )
    elif dev.type == "mps" and not torch.backends.mps.is_available():
        raise DeviceUnavailableError(
            "device 'mps' requested but MPS is not available; use --device cpu (device='cpu')"
        )
    return dev


def resolve_dtype(dtype: Any, device: torch.device) -> torch.dtype:
    """Return the compute precision: ``float32`` by default; bf16 anywhere, fp16 on CUDA only.

    bfloat16 is opt-in on the CPU too: CPUs with AVX512-BF16/AMX run bf16 matrix products several
    times faster than fp32 (see docs/performance.md). Scores are always returned, and
    log-softmaxed, in float32.

    Parameters
    ----------
    dtype : None, str or torch.dtype
        ``None`` (float32), ``"float32"``/``"fp32"``, ``"bfloat16"``/``"bf16"``,
        ``"float16"``/``"fp16"``, or the matching ``torch.dtype``.
    device : torch.device

    Raises
    ------
    InvalidParameterError
        If the precision is not one of those, or float16 is asked for off CUDA.
    """
    if dtype is None:
        return torch.float32
    return _precision(
        dtype, "dtype", (torch.float32, torch.bfloat16, torch.float16), device,
        "None/'float32', 'bfloat16', or 'float16' on CUDA", "dtype=None (float32) or 'bfloat16'",
    )


def _precision(
    value: Any, name: str, allowed: tuple, device: torch.device, choices: str, off_cuda: str
) -> torch.dtype:
    """``value`` (a name or torch.dtype) as one of ``allowed``; float16 only on CUDA."""
    resolved = _DTYPES.get(value.lower()) if isinstance(value, str) else value
    if resolved not in allowed:
        raise InvalidParameterError(f"unsupported {name} {value!r}; use {choices}")
    if resolved == torch.float16 and device.type != "cuda":
        raise InvalidParameterError(
            f"{name} {value!r} is only supported on CUDA; on {device.type} use {off_cuda}"
        )
    return resolved


def resolve_autocast(
    autocast: Any, device: torch.device, dtype: torch.dtype
) -> torch.dtype | None:
    """Return the autocast precision of a forward pass: None (off), bfloat16, or float16 on CUDA.

    Autocast keeps the weights in ``dtype`` (which must then be float32) and runs matrix products
    in the lower precision, while ``torch.autocast`` keeps precision-sensitive ops (softmax,
    layer norm, ...) in float32. Scores are returned, and log-softmaxed, in float32 either way
    (docs/architecture.md, "Speed": bf16/fp16 with fp32 log-softmax).

    Parameters
    ----------
    autocast : None, str or torch.dtype
        ``None`` (no autocast), ``"bfloat16"``/``"bf16"`` (CPU or CUDA) or
        ``"float16"``/``"fp16"`` (CUDA), or the matching ``torch.dtype``.
    device : torch.device
    dtype : torch.dtype
        The weights' precision (see :func:`resolve_dtype`).

    Raises
    ------
    InvalidParameterError
        If the precision is not bfloat16 or float16, float16 is asked for off CUDA, the device
        is neither CPU nor CUDA, or the weights are not float32.
    """
    if autocast is None:
        return None
    resolved = _precision(
        autocast, "autocast", (torch.bfloat16, torch.float16), device,
        "None (off), 'bfloat16', or 'float16' on CUDA", "autocast='bfloat16' or autocast=None",
    )
    if device.type not in ("cpu", "cuda"):
        raise InvalidParameterError(
            f"autocast is supported on cpu and cuda, not {device.type}; use autocast=None"
        )
    if dtype != torch.float32:
        raise InvalidParameterError(
            f"autocast needs float32 weights, but dtype is {str(dtype).replace('torch.', '')}; "
            "choose one: dtype=None with autocast (weights fp32, products in low precision), "
            "or dtype alone without autocast (weights in low precision)"
        )
    return resolved


def check_budget(
    max_batch_tokens: int | None, max_batch_bytes: int | None
) -> tuple[int | None, int | None]:
    """Return the memory budget after checking that each given limit is a positive integer.

    Raises
    ------
    InvalidParameterError
        If a limit is given but is not a positive integer.
    """
    limits = (("max_batch_tokens", max_batch_tokens), ("max_batch_bytes", max_batch_bytes))
    for label, value in limits:
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1
        ):
            raise InvalidParameterError(f"{label} must be a positive integer, got {value!r}")
    return max_batch_tokens, max_batch_bytes


def token_budget(
    device: torch.device,
    bytes_per_token: int,
    max_batch_tokens: int | None,
    max_batch_bytes: int | None,
) -> int:
    """Number of tokens (rows x length) one forward pass may process.

    The smaller of ``max_batch_tokens`` and ``max_batch_bytes // bytes_per_token`` when
    either is given (see :func:`check_budget`); otherwise :data:`CPU_BATCH_TOKENS` on CPU and
    :data:`CUDA_MEMORY_FRACTION` of the free memory (measured now) on CUDA.
    """
    limits = [int(max_batch_tokens)] if max_batch_tokens is not None else []
    if max_batch_bytes is not None:
        limits.append(max(1, int(max_batch_bytes) // bytes_per_token))
    if limits:
        return min(limits)
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return max(1, int(free * CUDA_MEMORY_FRACTION) // bytes_per_token)
    return CPU_BATCH_TOKENS


def activation_bytes_per_token(
    config: Any, length: int, dtype: torch.dtype, logits_width: int
) -> int:
    """Rough peak activation memory of one token in an inference forward pass, in bytes.

    Counts one layer's live tensors (about eight hidden-size vectors, two intermediate-size
    vectors and a row of attention scores per head) plus ``logits_width`` output scores.
    It sizes sub-batches; it is an estimate, not a measurement.
    """
    hidden = int(_first(config, ("hidden_size", "dim", "n_embd"), 768))
    inter = int(_first(config, ("intermediate_size", "hidden_dim", "n_inner"), 4 * hidden))
    heads = int(_first(config, ("num_attention_heads", "n_heads", "n_head"), 12))
    elem = torch.finfo(dtype).bits // 8
    return elem * (8 * hidden + 2 * inter + 2 * heads * length) + 4 * logits_width


def _first(config: Any, names: tuple[str, ...], default: Any) -> Any:
    for name in names:
        value = getattr(config, name, None)
        if value is not None:
            return value
    return default


__all__ = [
    "activation_bytes_per_token",
    "check_budget",
    "CPU_BATCH_TOKENS",
    "CUDA_MEMORY_FRACTION",
    "resolve_autocast",
    "resolve_device",
    "resolve_dtype",
    "token_budget",
]
