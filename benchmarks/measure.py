"""Clocks, dense matmul throughput and a description of the machine, shared by the benchmarks.

Every ratio a benchmark prints compares two timings taken in the same process, one after the
other, so that the machine's load (other processes share its cores) affects both alike.
"""

from __future__ import annotations

import os
import platform
import time
from typing import Any, Callable, TypeVar

import numpy as np

T = TypeVar("T")


def clock(fn: Callable[[], T], repeat: int = 1) -> tuple[float, T]:
    """Best wall time in seconds of ``repeat`` calls of ``fn`` (``time.perf_counter``) and the
    value of the last call.

    Best-of-``repeat`` is the usual estimate of the undisturbed cost when other processes share
    the machine (timeit's advice); ``repeat = 1`` for the slow baselines.
    """
    best = float("inf")
    value: Any = None
    for _ in range(max(1, int(repeat))):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def clock_cpu(fn: Callable[[], T], repeat: int = 1) -> tuple[float, float, T]:
    """Best wall seconds and best process CPU seconds (all threads, ``time.process_time``) of
    ``repeat`` calls of ``fn``, and the value of the last call.

    CPU time does not count the time the process waits while other processes hold the cores, so
    FLOPs per CPU-second compare two codes more steadily on a shared machine than FLOP/s do.
    Best-of-``repeat`` matches :func:`matmul_flops`, whose best call is the reference.
    """
    best_wall, best_cpu = float("inf"), float("inf")
    value: Any = None
    for _ in range(max(1, int(repeat))):
        wall, cpu = time.perf_counter(), time.process_time()
        value = fn()
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return best_wall, best_cpu, value


def matmul_flops(m: int, k: int, n: int, dtype: Any = None, device: str = "cpu",
                 min_seconds: float = 1.0) -> dict:
    """Achieved FLOP rates of ``torch.matmul`` of ``[m, k] @ [k, n]`` (``2 m k n`` FLOPs a call).

    One warm-up call, then calls until ``min_seconds`` have passed (at least 2); the best call
    counts. This is the reference that model FLOP rates are a fraction of: what this machine
    reaches right now on a GEMM of the model's own shape.

    Returns
    -------
    dict
        ``"wall"``: FLOP per wall second; ``"cpu"``: FLOP per process CPU second (``None`` on
        CUDA, where host CPU time says nothing about the device).
    """
    import torch

    dtype = torch.float32 if dtype is None else dtype
    a = torch.randn(m, k, dtype=dtype, device=device)
    b = torch.randn(k, n, dtype=dtype, device=device)
    on_cuda = str(device).startswith("cuda")
    sync = torch.cuda.synchronize if on_cuda else (lambda: None)

    def call() -> None:
        torch.matmul(a, b)
        sync()

    call()
    best_wall, best_cpu, spent, calls = float("inf"), float("inf"), 0.0, 0
    while calls < 2 or spent < min_seconds:
        wall, cpu, _ = clock_cpu(call)
        best_wall, best_cpu = min(best_wall, wall), min(best_cpu, cpu)
        spent, calls = spent + wall, calls + 1
    flops = 2.0 * m * k * n
    return {"wall": flops / best_wall, "cpu": None if on_cuda else flops / max(best_cpu, 1e-9)}


def feed_forward_matmul_flops(mlm: Any, sequences: int) -> dict:
    """:func:`matmul_flops` on the feed-forward shape of a masked LM's encoder at ``sequences``
    sequences of ``n + 2`` tokens, ``[sequences (n + 2), hidden] @ [hidden, intermediate]``, in
    the model's dtype on its device: the reference a model FLOP rate at that batch is a
    fraction of."""
    cfg = mlm.model.config
    return matmul_flops(sequences * (mlm.n + 2), int(cfg.hidden_size),
                        int(cfg.intermediate_size), next(mlm.model.parameters()).dtype,
                        str(mlm.device))


def cpu_model() -> str:
    """The CPU's ``model name`` from ``/proc/cpuinfo`` (``platform.processor()`` elsewhere)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_info() -> dict:
    """The machine a run measured: cores, CPU model, library versions, threads and load."""
    import scipy
    import torch

    info = {
        "nproc": os.cpu_count(),
        "cpu_model": cpu_model(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()],
        "time": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }
    try:
        import transformers

        info["transformers"] = transformers.__version__
    except ImportError:
        info["transformers"] = None
    return info
