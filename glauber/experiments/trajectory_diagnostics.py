"""Convergence diagnostics of a ``glauber trajectory`` run: dispersed starts, observables, verdict.

The chains start from dispersed states (:func:`dispersed_starts`): the real context (a window's
own tokens; a natural antibody window for amino-acid models), then the modes of the traps that
an earlier run found (``--starts-from``), then uniform random states. After the run,
:func:`diagnose` computes from the recorded states the observables of
:func:`glauber.estimators.diagnostics.chain_observables` (the energy when it is cheap enough,
see :func:`resolve_energy`; the Hamming distance to each start; the one-hot token indicators per
site; the two PCA coordinates of the trajectory's embeddings), ArviZ's rank-normalised split
R-hat and bulk and tail ESS along the run (:func:`glauber.estimators.convergence_diagnostics`),
and writes ``diagnostics.json``, three figures and a verdict line. Everything is computed from
``trajectory.csv`` after the last step, so a killed and resumed run writes the same bytes as an
uninterrupted one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from glauber.core.conditionals import answers_on_host
from glauber.core.io import atomic_write_text
from glauber.errors import InvalidParameterError
from glauber.estimators.diagnostics import (
    MIN_CHAINS,
    chain_observables,
    convergence_diagnostics,
    energy_of_states,
)
from glauber.experiments.checkpoint import dumps
from glauber.experiments.common import context_states, pyplot, save_figure

#: Files :func:`diagnose` writes in the output folder.
DIAGNOSTICS_OUTPUTS = ("diagnostics.json", "diagnostics_trace.png", "diagnostics_rank.png",
                       "diagnostics_rhat.png")
#: Fewest chains for a verdict (fewer are diagnosed, with a warning in the verdict).
VERDICT_CHAINS = 4
#: ``--energy auto`` computes the energy of an MLM's recorded states only if its ``n`` forwards
#: per recorded state are at most this share of the sampling's forwards (``n / record_every``).
ENERGY_AUTO_SHARE = 0.01
#: Energy choices of ``--energy``.
ENERGY_KINDS = ("auto", "pll", "logits", "none")
#: Most observables drawn in the trace and rank plots.
PLOTTED = 5


def resolve_energy(model: Any, energy: str, record_every: int) -> str:
    """``"pll"``, ``"logits"`` or ``"none"``: what ``--energy`` computes for this run.

    ``auto`` is the PLL energy for models that answer on the host (toys, tabulated windows) and
    for MLMs whose ``n`` forwards per recorded state cost at most :data:`ENERGY_AUTO_SHARE` of
    the sampling (``n <= 0.01 record_every``); otherwise none (the whole AntiBERTy chain would
    take 12 times the sampling's forwards at ``--record-every 10``).

    Raises
    ------
    InvalidParameterError
        If ``energy`` is not one of :data:`ENERGY_KINDS`.
    """
    if energy not in ENERGY_KINDS:
        raise InvalidParameterError(
            f"--energy must be one of {', '.join(ENERGY_KINDS)}, got {energy!r}")
    if energy != "auto":
        return energy
    cheap = answers_on_host(model) or int(model.n) <= ENERGY_AUTO_SHARE * record_every
    return "pll" if cheap else "none"


def trap_modes(path: str | os.PathLike[str], n: int, q: int) -> list[list[int]]:
    """The trap states of an earlier run, longest dwell first, without repeats.

    Parameters
    ----------
    path : path
        That run's ``trajectory_summary.json``, or its folder.
    n, q : int
        The model's length and vocabulary size (the traps must fit them).

    Raises
    ------
    InvalidParameterError
        If the file is missing, is not a trajectory summary, or its traps do not fit the model.
    """
    p = Path(path)
    if p.is_dir():
        p = p / "trajectory_summary.json"
    try:
        traps = json.loads(p.read_text(encoding="utf-8"))["traps"]
        states = [[int(v) for v in t["state"]] for t in sorted(
            traps, key=lambda t: -int(t["dwell_steps"]))]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InvalidParameterError(
            f"--starts-from {path}: not a trajectory_summary.json with traps ({exc}); name the "
            "--out folder of an earlier trajectory run of this model"
        ) from exc
    out: list[list[int]] = []
    for s in states:
        if len(s) != n or min(s) < 0 or max(s) >= q:
            raise InvalidParameterError(
                f"--starts-from {path}: a trap state has {len(s)} tokens (or tokens outside "
                f"0..{q - 1}); the model has n = {n}: use a run of the same model")
        if s not in out:
            out.append(s)
    return out


def dispersed_starts(model: Any, chains: int, seed: int,
                     traps: Sequence[Sequence[int]] = ()) -> np.ndarray:
    """Start states ``[chains, n]``: the context, up to ``chains // 2`` trap modes, then uniform.

    The first is :func:`glauber.experiments.common.context_states`' first state (a window's own
    tokens; a natural antibody window for amino-acid models; uniform for others); the trap modes
    follow in the order given; the rest are uniform random states. Same seed, same starts.
    """
    first = context_states(model, 1, seed)
    picked = np.asarray(list(traps)[:chains // 2], dtype=np.int64).reshape(-1, int(model.n))
    rest = chains - 1 - len(picked)
    rng = np.random.default_rng([seed, 2])
    drawn = rng.integers(int(model.q), size=(max(rest, 0), int(model.n))).astype(np.int64)
    return np.concatenate([first, picked, drawn])[:chains]


def site_labels(model: Any) -> list[str]:
    """1-based positions of the model's sites in the sequence a person reads (a window's
    positions in its context)."""
    sites = getattr(model, "sites", None)
    base = np.arange(int(model.n)) if sites is None else np.asarray(sites)
    return [str(int(s) + 1) for s in base]


def diagnose(model: Any, config: dict, out: Path, steps: np.ndarray, states: np.ndarray,
             pca: np.ndarray) -> dict:
    """Observables, ArviZ diagnostics, ``diagnostics.json``, the figures and the verdict.

    Parameters
    ----------
    steps : array of int, shape (R,)
    states : array of int, shape (R, C, n)
        The recorded states (``trajectory.csv``); record 0 holds the starts.
    pca : array, shape (R, C, 2)
        The first two principal components of the trajectory's embeddings.

    Returns
    -------
    dict
        ``verdict``, ``converged_step``, ``energy`` and the files written (for the summary).
    """
    energy = None
    if config["energy"] != "none":
        r, c, n = states.shape
        energy = energy_of_states(model, states.reshape(r * c, n), config["energy"]).reshape(r, c)
    labels = getattr(model, "labels", None)
    obs, names = chain_observables(states, states[0], int(model.q), energy, pca,
                                   site_labels(model), labels)
    res = convergence_diagnostics(obs, names, steps)
    verdict = res.verdict()
    if res.chains < VERDICT_CHAINS:
        verdict = (f"only {res.chains} chains (R-hat from fewer than {VERDICT_CHAINS} dispersed "
                   f"chains is unreliable; use --chains 8): {verdict}")
    report = {**res.report(), "verdict": verdict, "energy": config["energy"],
              "starts": states[0], "model": config["model"], "tau": config["tau"]}
    atomic_write_text(out / "diagnostics.json", dumps(report) + "\n")
    shown = _shown(res)
    title = f"{config['model']}, tau = {config['tau']:g}"
    plot_traces(steps, obs, [names[k] for k in shown], shown, out / "diagnostics_trace.png", title)
    plot_ranks(obs, [names[k] for k in shown], shown, out / "diagnostics_rank.png", title)
    plot_rhat(res, shown, out / "diagnostics_rhat.png", title)
    return {"verdict": verdict, "converged_step": res.converged_step, "energy": config["energy"],
            "observables": int((~res.constant).sum()), "files": list(DIAGNOSTICS_OUTPUTS)}


def _shown(res: Any) -> list[int]:
    """The observables drawn: energy, distance to start 1, PC1, PC2, then the worst R-hat."""
    wanted = [k for k, name in enumerate(res.names)
              if name in ("energy", "hamming to start 1", "PC1", "PC2") and not res.constant[k]]
    if (~res.constant).any():
        worst = res.worst()[0]
        if worst not in wanted:
            wanted.append(worst)
    return wanted[:PLOTTED]


def plot_traces(steps: np.ndarray, obs: np.ndarray, names: Sequence[str], shown: Sequence[int],
                path: Path, title: str) -> None:
    """One panel per observable: its value along the run, one line per chain."""
    plt = pyplot()
    rows = max(len(shown), 1)
    fig, axes = plt.subplots(rows, 1, figsize=(7, 1.7 * rows), sharex=True, squeeze=False)
    for ax, k, name in zip(axes[:, 0], shown, names):
        for c in range(obs.shape[0]):
            ax.plot(steps, obs[c, :, k], lw=0.6, label=f"chain {c + 1}")
        ax.set_ylabel(name, fontsize=8)
    axes[-1, 0].set_xlabel("step")
    axes[0, 0].set_title(f"traces: {title}", fontsize=9)
    save_figure(fig, path)
    plt.close(fig)


def plot_ranks(obs: np.ndarray, names: Sequence[str], shown: Sequence[int], path: Path,
               title: str) -> None:
    """Rank plots: histograms, per chain, of the ranks of its draws among all pooled draws
    (uniform when the chains sample the same law; Vehtari et al. 2021, §4.1)."""
    from scipy.stats import rankdata

    plt = pyplot()
    c, d, _ = obs.shape
    cols = max(len(shown), 1)
    fig, axes = plt.subplots(c, cols, figsize=(2.2 * cols, 0.55 * c + 0.8), sharex=True,
                             squeeze=False)
    bins = np.linspace(0, c * d, 21)
    for j, (k, name) in enumerate(zip(shown, names)):
        ranks = rankdata(obs[:, :, k], method="average").reshape(c, d)
        for i in range(c):
            axes[i, j].hist(ranks[i], bins=bins, color="C0")
            axes[i, j].axhline(d / 20, color="0.4", lw=0.6, ls="--")
            axes[i, j].set_yticks([])
        axes[0, j].set_title(name, fontsize=7)
    for i in range(c):
        axes[i, 0].set_ylabel(f"{i + 1}", fontsize=7, rotation=0, labelpad=8)
    fig.suptitle(f"rank plots (rows: chains): {title}", fontsize=9)
    save_figure(fig, path)
    plt.close(fig)


def plot_rhat(res: Any, shown: Sequence[int], path: Path, title: str) -> None:
    """R-hat and bulk ESS against the step: the drawn observables and the worst over all."""
    plt = pyplot()
    live = ~res.constant
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.5, 5), sharex=True)
    x = np.maximum(res.steps, 1)
    if live.any():  # an undefined R-hat (a prefix still constant) counts as the worst
        worst_rhat = np.where(np.isnan(res.rhat[:, live]), np.inf, res.rhat[:, live]).max(axis=1)
        least_ess = np.where(np.isnan(res.ess_bulk[:, live]), np.inf,
                             res.ess_bulk[:, live]).min(axis=1)
        top.plot(x, np.minimum(worst_rhat, 10.0), color="k", lw=1.5, label="max over all")
        bottom.plot(x, np.where(np.isinf(least_ess), np.nan, least_ess), color="k", lw=1.5,
                    label="min over all")
    for k in shown:
        top.plot(x, res.rhat[:, k], lw=0.8, label=res.names[k])
        bottom.plot(x, res.ess_bulk[:, k], lw=0.8, label=res.names[k])
    top.axhline(res.rhat_threshold, color="r", lw=0.8, ls="--")
    bottom.axhline(res.ess_threshold, color="r", lw=0.8, ls="--")
    top.set_ylabel("R-hat (capped at 10)")
    bottom.set_ylabel("bulk ESS")
    top.set_yscale("log")
    bottom.set_yscale("log")
    bottom.set_xscale("log")
    bottom.set_xlabel("step")
    top.legend(fontsize=6, loc="upper right")
    top.set_title(f"R-hat and ESS along the run: {title}", fontsize=9)
    save_figure(fig, path)
    plt.close(fig)


def lag_coupling_report(model: Any, config: dict, out: Path, lag: int, pairs: int,
                        seed: int) -> dict:
    """The lag-coupling estimate of an upper bound on TV to stationarity from the run's own
    start law (:func:`dispersed_starts`: the chains' starts), at the run's last step
    (:func:`glauber.estimators.lag_coupling.lag_coupling_bound`; an estimate, never rigorous),
    written atomically to ``out/lag_coupling.json``.

    Raises
    ------
    InvalidParameterError
        If ``lag`` or ``pairs`` is too small for a bound (the message says what to raise).
    ConvergenceError
        If some coupled pair did not meet within the lag coupling's step limit.
    """
    from glauber.estimators.lag_coupling import lag_coupling_bound

    starts = dispersed_starts(model, config["chains"], config["seed"],
                              config.get("trap_starts", ()))
    bound = lag_coupling_bound(model, config["tau"], starts, lag=lag, n_pairs=pairs, seed=seed)
    step = int(config["steps"])
    estimate, upper = bound.at(step)
    first = bound.first_below(0.25)
    report = {"lag": bound.lag, "pairs": bound.n_pairs, "level": bound.level, "step": step,
              "estimate": estimate, "upper": upper, "first_step_below_quarter": first,
              "median_meeting_time": float(np.median(bound.meeting_times)),
              "rigorous": False, "text": bound.summary(step)}
    atomic_write_text(out / "lag_coupling.json", dumps(report) + "\n")
    return report


__all__ = [
    "lag_coupling_report",
    "DIAGNOSTICS_OUTPUTS",
    "ENERGY_AUTO_SHARE",
    "ENERGY_KINDS",
    "MIN_CHAINS",
    "VERDICT_CHAINS",
    "diagnose",
    "dispersed_starts",
    "plot_rhat",
    "plot_ranks",
    "plot_traces",
    "resolve_energy",
    "site_labels",
    "trap_modes",
]
