"""Run a pure tensor function through static buffers, one entry per input shape (CUDA graphs).

A Glauber step calls the same forward pass on inputs of a few fixed shapes (``[rows, n + 2]`` ids
and ``[rows]`` mask positions; sub-batching gives at most two row counts per batch size). On CUDA,
:class:`StaticShapeRunner` captures the function once per shape into a ``torch.cuda.CUDAGraph`` and
replays it afterwards, which removes the per-kernel launch cost of the Python forward (PyTorch "CUDA
semantics" notes, section "CUDA Graphs"; docs/architecture.md, "Speed"). Elsewhere there are no CUDA
graphs; the runner then calls the function eagerly through the
*same* static input and output buffers, so every part of it except the capture itself
(:meth:`StaticShapeRunner._capture`) runs, and is tested, on the CPU.

Memory (CUDA) per cached shape: the static inputs and output (for the masked LM, ids
``[rows, n + 2]`` and positions ``[rows]`` as int64, scores ``[rows, q]`` as float32) and the
graph itself. The activations of all captured forwards live in one graph memory pool shared by
the runner's graphs, so the pool holds about the largest captured forward's peak (for
:class:`~glauber.mlm_backend.hf_masked_lm.HFMaskedLM`, the sub-batch budget of
:func:`~glauber.mlm_backend.device.token_budget`), reserved for the runner's lifetime. At most
``max_shapes`` shapes are cached; a new shape beyond that evicts the least recently used one
(its graph is destroyed and its memory returns to the shared pool; the shape is captured again
if it comes back, see :attr:`StaticShapeRunner.captures`).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable

import torch

from glauber.core.validation import check_positive_int
from glauber.errors import InvalidParameterError

#: Shapes cached by default (a batch size and its sub-batch remainder, the one-row probe of
#: :func:`glauber.estimators.glauber_chains`, a few batch sizes of the estimators).
DEFAULT_MAX_SHAPES = 8
#: Eager calls on a side stream before a capture (lazy initialisation, e.g. cuBLAS workspaces,
#: must not happen during capture; the PyTorch notes warm up with three).
WARMUP_CALLS = 3

#: ``mode`` of a runner that captures CUDA graphs, and of one that runs eagerly (no CUDA).
CAPTURED, EAGER_STATIC = "captured", "eager-static"

ShapeKey = tuple[tuple[tuple[int, ...], torch.dtype], ...]


@dataclass
class _Entry:
    """The static buffers of one input shape (and its graph, when captured)."""

    inputs: tuple[torch.Tensor, ...]
    output: torch.Tensor | None
    graph: Any  # torch.cuda.CUDAGraph, or None in eager-static mode


class StaticShapeRunner:
    """Call ``fn(*inputs)`` through per-shape static buffers; on CUDA, replay a captured graph.

    Parameters
    ----------
    fn : callable
        A pure function of tensors returning one tensor: same inputs, same output; no host
        synchronisation, no data-dependent control flow, no randomness (the constraints of CUDA
        graph capture). It runs under ``torch.inference_mode``.
    device : torch.device
        Where the static buffers live. ``cuda`` captures graphs (:attr:`mode` ``"captured"``);
        any other device runs ``fn`` eagerly through the buffers (``"eager-static"``).
    max_shapes : int
        Most input shapes cached at once (least recently used evicted first).
    name : str
        What ``fn`` computes, for error messages.

    Attributes
    ----------
    mode : {"captured", "eager-static"}
    captures : int
        Entries built so far (graphs captured, or static buffers allocated), evictions included:
        ``captures > len(runner)`` means a shape was evicted, and recaptured if it came back.

    Raises
    ------
    InvalidParameterError
        If ``max_shapes`` is not a positive integer.

    Notes
    -----
    Each call copies the inputs into the static buffers of their shape (``copy_``), replays the
    graph (or calls ``fn`` and copies its result into the static output) and returns the static
    output. That tensor is overwritten by later calls, so **copy it before the next call** (of
    any shape: the graphs share one memory pool). A first call with a new shape warms up
    ``fn`` :data:`WARMUP_CALLS` times on a side stream, then captures it (PyTorch's
    documented recipe: ``torch.cuda.graph`` on a side stream, static inputs filled with
    ``copy_``); the capture synchronises the device once. Not thread-safe.

    Sharing one pool is safe although graphs replay in any order (the PyTorch notes ask for
    capture order): a replay reads only its static inputs, the weights (both allocated outside
    the pool) and activations it wrote earlier in the same replay; another graph's replay may
    overwrite this graph's static output, which is why the output is valid only until the
    next call. Replays are issued one at a time on the caller's stream, never concurrently.
    """

    def __init__(
        self,
        fn: Callable[..., torch.Tensor],
        device: torch.device,
        max_shapes: int = DEFAULT_MAX_SHAPES,
        name: str = "the forward pass",
    ) -> None:
        self.fn = fn
        self.device = torch.device(device)
        self.max_shapes = check_positive_int(max_shapes, "max_shapes")
        self.name = name
        self.mode = CAPTURED if self.device.type == "cuda" else EAGER_STATIC
        self.captures = 0
        self._entries: OrderedDict[ShapeKey, _Entry] = OrderedDict()
        self._stream: Any = None  # torch.cuda.Stream of warm-ups and captures
        self._pool: Any = None  # the graph memory pool shared by this runner's captures

    def __len__(self) -> int:
        """Number of input shapes cached now."""
        return len(self._entries)

    @property
    def shapes(self) -> tuple[ShapeKey, ...]:
        """The cached shapes as ``((shape, dtype), ...)`` per input, least recently used first."""
        return tuple(self._entries)

    @torch.inference_mode()
    def __call__(self, *inputs: torch.Tensor) -> torch.Tensor:
        """``fn(*inputs)`` as the static output of their shape (valid until the next call).

        Raises
        ------
        InvalidParameterError
            If ``fn`` cannot be captured in a CUDA graph (e.g. it synchronises with the host).
        """
        key = tuple((tuple(x.shape), x.dtype) for x in inputs)
        entry = self._entries.get(key)
        if entry is None:
            entry = self._add(key, inputs)
        else:
            self._entries.move_to_end(key)
            for static, x in zip(entry.inputs, inputs):
                static.copy_(x)
        if entry.graph is not None:
            entry.graph.replay()
            return entry.output
        result = self.fn(*entry.inputs)
        if entry.output is None:
            entry.output = torch.empty_like(result)
        return entry.output.copy_(result)

    def clear(self) -> None:
        """Drop every cached shape (its buffers and graph)."""
        self._entries.clear()

    def _add(self, key: ShapeKey, inputs: tuple[torch.Tensor, ...]) -> _Entry:
        while len(self._entries) >= self.max_shapes:
            self._entries.popitem(last=False)
        static = tuple(
            torch.empty(x.shape, dtype=x.dtype, device=self.device).copy_(x) for x in inputs
        )
        graph, output = self._capture(static) if self.mode == CAPTURED else (None, None)
        entry = self._entries[key] = _Entry(static, output, graph)
        self.captures += 1
        return entry

    def _capture(self, static: tuple[torch.Tensor, ...]) -> tuple[Any, torch.Tensor]:
        """Warm ``fn`` up on a side stream, then capture it into a CUDA graph (the only CUDA
        code of the runner; "CUDA Graphs" in PyTorch's CUDA semantics notes)."""
        with torch.cuda.device(self.device):
            if self._stream is None:
                self._stream = torch.cuda.Stream(self.device)
                self._pool = torch.cuda.graph_pool_handle()
            current = torch.cuda.current_stream(self.device)
            self._stream.wait_stream(current)  # the static inputs were written on `current`
            with torch.cuda.stream(self._stream):
                for _ in range(WARMUP_CALLS):
                    self.fn(*static)
            current.wait_stream(self._stream)
            graph = torch.cuda.CUDAGraph()
            try:
                with torch.cuda.graph(graph, pool=self._pool, stream=self._stream):
                    output = self.fn(*static)
            except torch.OutOfMemoryError:
                raise
            except RuntimeError as exc:
                first = str(exc).splitlines()[0] if str(exc) else ""
                raise InvalidParameterError(
                    f"{self.name} cannot be captured in a CUDA graph ({type(exc).__name__}: "
                    f"{first}); use cuda_graphs=False"
                ) from exc
        return graph, output


__all__ = ["CAPTURED", "DEFAULT_MAX_SHAPES", "EAGER_STATIC", "StaticShapeRunner", "WARMUP_CALLS"]
