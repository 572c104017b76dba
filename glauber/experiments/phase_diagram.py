"""The paper's phase diagram (§6.1, Figure 2): coupling times over a temperature x length grid.

For each cell (tau, n): ``pairs`` pairs of chains from independent uniform random starts, both
chains of a pair updating the same site with the maximal coupling of their two conditionals,
different pairs choosing independent sites (:func:`glauber.estimators.coupling_time`); the cell
reports the median steps to agreement within ``budget`` (censored when more than half the pairs
had not met). A coupling time from sampled starts is a diagnostic, not a bound on ``t_mix``
(Levin–Peres–Wilmer 2nd ed., Corollary 5.5 needs the worst start); for toy models the exact
worst-start ``t_mix(1/4)`` of :class:`~glauber.exact.chain.ExactChain` stands beside
it.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Sequence

import numpy as np

from glauber.core.io import atomic_write_text
from glauber.core.kernel_spec import KernelSpec, check_kernel
from glauber.core.validation import check_nonnegative_int
from glauber.errors import InvalidParameterError
from glauber.estimators.coupling import coupling_time
from glauber.experiments.checkpoint import ResultsLog, dumps
from glauber.experiments.common import (
    exact_tmix,
    get_model,
    parse_floats,
    parse_ints,
    positive_budget,
    pyplot,
    save_figure,
    write_csv,
)
from glauber.experiments.executor import Executor, LocalExecutor, run_cells
from glauber.experiments.outdir import OutputFolder, check_out_folder
from glauber.models import CONTEXT_SEPARATOR, is_toy_spec, toy_spec_at_length

#: Files written in the output folder (besides the results log).
OUTPUTS = ("phase_diagram.csv", "phase_diagram.json", "phase_diagram.png")
#: Columns of ``phase_diagram.csv``.
COLUMNS = (
    "model", "tau", "n", "pairs", "budget", "median", "censored", "n_censored", "q25", "q75",
    "exact_tmix", "seconds",
)


def cell_seed(seed: int, tau: float, n: int) -> np.random.SeedSequence:
    """Seed of one cell: a function of (seed, tau, n) only, so grids can grow without reruns."""
    return np.random.SeedSequence([int(seed), int(n), int(round(float(tau) * 1e6))])


def phase_cell(cell: dict, progress: Callable[[float], Any] | None = None) -> dict:
    """Coupling times of one (model, tau, n) cell; the function the executor runs
    (``progress(fraction)`` follows the coupled steps when given)."""
    start = time.perf_counter()
    window = CONTEXT_SEPARATOR in cell["model"]  # a window's length is its own
    model = get_model(cell["model"], None if window else cell["n"], cell["device"])
    rng = np.random.default_rng(cell_seed(cell["seed"], cell["tau"], cell["n"]))
    x0 = rng.integers(model.q, size=(cell["pairs"], model.n))
    y0 = rng.integers(model.q, size=(cell["pairs"], model.n))
    spec = check_kernel(cell.get("kernel", "random"), cell.get("epsilon", 0.0))
    res = coupling_time(model, cell["tau"], x0, y0, cell["budget"], seed=rng,
                        progress=None if progress is None else (lambda t, b: progress(t / b)),
                        kernel=spec)
    times = np.where(res.censored, np.inf, res.times.astype(float))
    q25, q75 = (float(np.quantile(times, p, method="inverted_cdf")) for p in (0.25, 0.75))
    return {
        "model": toy_spec_at_length(cell["model"], cell["n"]) if is_toy_spec(cell["model"])
        else cell["model"],
        "tau": cell["tau"],
        "n": int(model.n),
        "pairs": cell["pairs"],
        "budget": cell["budget"],
        "median": res.median,
        "censored": res.median_exceeds_budget,
        "n_censored": res.n_censored,
        "q25": q25 if np.isfinite(q25) else None,
        "q75": q75 if np.isfinite(q75) else None,
        "exact_tmix": exact_tmix(model, cell["tau"], kernel=spec) if cell["exact"] else None,
        "seconds": round(time.perf_counter() - start, 3),
    }


def phase_diagram(
    model: str,
    taus: Sequence[float] | str,
    lengths: Sequence[int] | str | None,
    pairs: int,
    budget: int,
    seed: int,
    out: str | os.PathLike[str],
    executor: Executor | None = None,
    device: str = "cpu",
    exact: bool = True,
    progress: bool = True,
    command: str | None = None,
    kernel: str | KernelSpec = "random",
    epsilon: float | None = None,
) -> list[dict]:
    """Run (or resume) the phase diagram; write ``phase_diagram.{jsonl,csv,json,png}`` in ``out``.

    Parameters
    ----------
    model : str
        Model specification (MLM name or toy specification; a toy's ``n`` is set per cell).
    taus, lengths : sequences or comma-separated strings
        The grid. A window specification (``model@context[sites]``) has one length, its
        number of sites: ``lengths`` is then None (or that number).
    pairs : int
        Coupled pairs per cell, >= 1.
    budget : int
        Step budget per cell, >= 1.
    seed : int
    out : path
        Output folder; an existing log there is resumed (same configuration) or refused.
    executor : Executor, optional
        Default: in process.
    device : str
    exact : bool
        Compute the exact ``t_mix(1/4)`` of toy cells with ``q**n <= 1024``.
    kernel, epsilon : the kernel both chains of a pair run (:mod:`glauber.core.kernel_spec`;
        default the paper's); coupling times and ``t_mix`` are then in its steps (passes for
        a sweep).

    Returns
    -------
    list of dict
        One row per cell (columns :data:`COLUMNS`).

    Raises
    ------
    InvalidParameterError, InvalidTemperatureError
        Empty grids, non-positive counts or budgets.
    UnknownModelError
        Unknown model.
    ResumeMismatchError
        ``out`` holds a log of another configuration.
    OutputPathError, OutputLockedError
        ``out`` is not a writable folder, holds foreign files, or another run writes into it
        (:class:`~glauber.experiments.outdir.OutputFolder`); checked before any cell runs.
    """
    spec = check_kernel(kernel, epsilon)
    tau_list = parse_floats(taus, "taus")
    if CONTEXT_SEPARATOR in model:
        k = int(get_model(model, None, device).n)
        if lengths is not None and parse_ints(lengths, "lengths") != [k]:
            raise InvalidParameterError(
                f"--lengths does not apply to a window: {model} resamples {k} sites; leave "
                "--lengths out (or choose other --sites)"
            )
        lengths = [k]
    if lengths is None:
        raise InvalidParameterError("give the sequence lengths of the grid, e.g. --lengths 8,16")
    n_list = parse_ints(lengths, "lengths")
    pairs = positive_budget(pairs, "pairs")
    budget = positive_budget(budget, "budget")
    seed = check_nonnegative_int(seed, "--seed")
    out = check_out_folder(out)
    for n in n_list:  # fail fast on an unknown model or a length it cannot take
        get_model(model, None if CONTEXT_SEPARATOR in model else n, device)
    config = {"experiment": "phase-diagram", "model": model, "taus": tau_list,
              "lengths": n_list, "pairs": pairs, "budget": budget, "seed": int(seed),
              "exact": bool(exact)}
    extra = {} if spec.is_plain else {"kernel": spec.name, "epsilon": spec.epsilon}
    config.update(extra)  # (the paper's kernel keeps the configuration of earlier versions)
    with OutputFolder(out, "phase-diagram", config, OUTPUTS, "phase_diagram.jsonl", command):
        log = ResultsLog(out / "phase_diagram.jsonl", config, command)
        cells = [
            {"key": f"tau={tau!r},n={n}", "model": model, "tau": tau, "n": n, "pairs": pairs,
             "budget": budget, "seed": int(seed), "device": device, "exact": bool(exact),
             **extra}
            for n in n_list for tau in tau_list
        ]
        rows = run_cells(log, phase_cell, cells, executor or LocalExecutor(), "phase-diagram",
                         progress)
        write_csv(out / "phase_diagram.csv", rows, COLUMNS)
        atomic_write_text(out / "phase_diagram.json",
                          dumps({"config": config, "rows": rows}) + "\n")
        title = model if spec.is_plain else f"{model} ({spec.label})"
        plot_phase_diagram(rows, tau_list, n_list, budget, title, out / "phase_diagram.png")
    return rows


def plot_phase_diagram(
    rows: Sequence[dict], taus: Sequence[float], lengths: Sequence[int], budget: int,
    title: str, path: str | os.PathLike[str],
) -> None:
    """Heatmap of log10 median coupling steps (tau across, n down), like the paper's Figure 2.

    Censored cells (median beyond the budget) are hatched and labelled ``>budget``; toy cells
    also show the exact ``t_mix``.
    """
    plt = pyplot()
    grid = np.full((len(lengths), len(taus)), np.nan)
    fig, ax = plt.subplots(figsize=(1.3 * len(taus) + 2.5, 0.9 * len(lengths) + 1.8))
    by_cell = {(float(r["tau"]), int(r["n"])): r for r in rows}
    for a, n in enumerate(lengths):
        for b, tau in enumerate(taus):
            r = by_cell[(float(tau), int(n))]
            grid[a, b] = np.log10(max(budget if r["censored"] else r["median"], 1.0))
    image = ax.imshow(grid, cmap="viridis_r", aspect="auto", vmin=0.0,
                      vmax=max(np.log10(budget), 1e-9))
    for a, n in enumerate(lengths):
        for b, tau in enumerate(taus):
            r = by_cell[(float(tau), int(n))]
            text = f">{budget}" if r["censored"] else f"{r['median']:.0f}"
            if r.get("exact_tmix") is not None:
                text += f"\ntmix={r['exact_tmix']}"
            if r["censored"]:
                ax.add_patch(plt.Rectangle((b - 0.5, a - 0.5), 1, 1, fill=False, hatch="//",
                                           edgecolor="white", linewidth=0))
            ax.text(b, a, text, ha="center", va="center", fontsize=8, color="white")
    ax.set_xticks(range(len(taus)), [f"{t:g}" for t in taus])
    ax.set_yticks(range(len(lengths)), [str(n) for n in lengths])
    ax.set_xlabel("temperature tau")
    ax.set_ylabel("sequence length n")
    ax.set_title(f"median coupling steps: {title}", fontsize=9)
    fig.colorbar(image, ax=ax, label="log10 median steps")
    save_figure(fig, path)
    plt.close(fig)


__all__ = [
    "cell_seed",
    "COLUMNS",
    "phase_cell",
    "phase_diagram",
    "plot_phase_diagram",
]
