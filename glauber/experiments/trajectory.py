"""Long Glauber chains with checkpoints, trap detection and semantic drift (paper App. A.1, B).

The run advances ``chains`` chains ``checkpoint_every`` steps at a time
(:func:`glauber.estimators.glauber_chains` with one numpy ``Generator`` carried across
segments). After each segment the recorded states are appended to ``trajectory.csv`` (flushed
and fsynced) and then ``checkpoint.json`` (chain states, step, the generator's state and the CSV
length) is replaced atomically. A rerun of the same command truncates the CSV to the length in
the checkpoint and continues, so a killed-and-resumed run writes byte-identical files to an
uninterrupted one with the same seed; another configuration raises ``ResumeMismatchError``.

Analysis (after the last step), on the recorded states:

* embeddings ``phi``: the model's mean-pooled last hidden states (MLMs) or one-hot token counts
  (toys), :func:`glauber.experiments.common.embed`;
* semantic drift ``d_t = 1 - cos(phi(x_t), phi(x_0))`` (paper eq. B.1) and the first recorded
  step at which it reaches each level (hitting times; ``None`` if never);
* traps: with ``D(s) = mean over t in (s, s + window] of 1 - cos(phi(x_t), phi(x_s))`` (our reading
  of "the 300-step mean cosine drift"), maximal runs of ``D(s) < threshold`` are traps; the trap
  state is the most frequent recorded state of the run, and :func:`glauber.estimators.margins`
  classifies it as *perfect* (every ``Delta_i > 0``, Assumption 1 on the one-state basin) or
  *approximate*, with Theorem 8's escape bound for perfect ones;
* a PCA projection of the embeddings coloured by time (paper Figures 1 and 4);
* convergence diagnostics (:mod:`glauber.experiments.trajectory_diagnostics`): the chains start
  from dispersed states, and ArviZ's rank-normalised split R-hat and bulk and tail ESS of the
  energy, the Hamming distance to each start, the one-hot tokens per site and the PCA
  coordinates, along the run, go to ``diagnostics.json`` with figures and a verdict line.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from glauber.core.io import atomic_write_text
from glauber.core.kernel_spec import KernelSpec, Schedule, check_kernel, parse_schedule
from glauber.core.memory import check_fits
from glauber.core.validation import check_nonnegative_int, check_tau
from glauber.errors import InvalidParameterError, ResumeMismatchError
from glauber.estimators.diagnostics import MIN_CHAINS, arviz_array_stats
from glauber.estimators.margins import margins
from glauber.estimators.sampler import glauber_chains
from glauber.experiments.checkpoint import config_hash, differing_fields, dumps
from glauber.experiments.common import (
    check_length,
    embed,
    get_model,
    parse_floats,
    positive_budget,
    pyplot,
    save_figure,
    state_text,
)
from glauber.experiments.outdir import OutputFolder, check_out_folder
from glauber.experiments.trajectory_diagnostics import (
    DIAGNOSTICS_OUTPUTS,
    ENERGY_KINDS,
    diagnose,
    dispersed_starts,
    resolve_energy,
    trap_modes,
)

CSV_HEADER = "step,chain,state,text\n"
#: Files written in the output folder (besides ``checkpoint.json``).
OUTPUTS = ("trajectory.csv", "trajectory_summary.json", "trajectory_pca.png")


def _format_rows(model: Any, steps: np.ndarray, states: np.ndarray) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for step, batch in zip(steps, states):
        for chain, x in enumerate(batch):
            writer.writerow([int(step), chain, " ".join(map(str, x.tolist())),
                             state_text(model, x)])
    return buf.getvalue().encode("utf-8")


def _append(path: Path, data: bytes) -> int:
    with open(path, "ab") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
        return fh.tell()


def read_trajectory(path: str | os.PathLike[str]) -> tuple[np.ndarray, np.ndarray]:
    """Recorded steps ``[R]`` and states ``[R, B, n]`` from a ``trajectory.csv``."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    steps = sorted({int(r["step"]) for r in rows})
    chains = 1 + max(int(r["chain"]) for r in rows)
    index = {s: k for k, s in enumerate(steps)}
    n = len(rows[0]["state"].split())
    states = np.zeros((len(steps), chains, n), dtype=np.int64)
    for r in rows:
        states[index[int(r["step"])], int(r["chain"])] = [int(v) for v in r["state"].split()]
    return np.asarray(steps, dtype=np.int64), states


def run_chains(
    model: Any, config: dict, out: Path, progress: bool = True
) -> None:
    """Advance (or resume) the chains to ``config["steps"]``, checkpointing every segment."""
    from tqdm.auto import tqdm

    csv_path, ckpt_path = out / "trajectory.csv", out / "checkpoint.json"
    h = config_hash(config)
    rng = np.random.default_rng([config["seed"], 1])
    if ckpt_path.exists():
        ckpt = read_checkpoint(ckpt_path, config)
        step, states = int(ckpt["step"]), np.asarray(ckpt["states"], dtype=np.int64)
        counts = np.asarray(ckpt.get("acceptance", np.zeros((2, model.n))), dtype=np.int64)
        rng.bit_generator.state = ckpt["rng"]
        size = csv_path.stat().st_size if csv_path.is_file() else None
        if size is None or size < int(ckpt["csv_bytes"]):
            raise ResumeMismatchError(
                f"{csv_path} is {'missing' if size is None else f'{size} bytes'}, shorter than "
                f"the {ckpt['csv_bytes']} bytes {ckpt_path.name} records: the files do not "
                "belong together; delete both (or the folder) to start again"
            )
        with open(csv_path, "r+b") as fh:  # drop rows written after the checkpoint
            fh.truncate(int(ckpt["csv_bytes"]))
    else:
        step = 0
        counts = np.zeros((2, model.n), dtype=np.int64)  # MH proposals and acceptances per site
        states = dispersed_starts(model, config["chains"], config["seed"],
                                  config.get("trap_starts", ()))
        atomic_write_text(csv_path, CSV_HEADER)
        _append(csv_path, _format_rows(model, np.array([0]), states[None]))
    every, record = config["checkpoint_every"], config["record_every"]
    spec, schedule = kernel_of(config)
    with tqdm(total=config["steps"], initial=step, desc="trajectory", unit="step",
              disable=not progress) as bar:
        while step < config["steps"]:
            k = min(every, config["steps"] - step)
            res = glauber_chains(model, schedule or config["tau"], states, k, seed=rng,
                                 record_every=record, progress=bar.update, kernel=spec,
                                 step_offset=step)
            if res.acceptance is not None:
                counts += np.stack([res.acceptance.proposed, res.acceptance.accepted])
            keep = res.recorded_steps > 0
            size = _append(csv_path, _format_rows(
                model, step + res.recorded_steps[keep], res.trajectory[keep]
            ))
            step += k
            states = res.final_states
            atomic_write_text(ckpt_path, dumps({
                "config_hash": h, "step": step, "states": states, "rng": rng.bit_generator.state,
                "csv_bytes": size, "config": config,
                **({"acceptance": counts} if spec.metropolis else {}),
            }) + "\n")


def kernel_of(config: dict) -> tuple[KernelSpec, Schedule | None]:
    """The kernel and annealing schedule a run's configuration names (the paper's kernel at a
    fixed ``tau`` when it names none)."""
    spec = check_kernel(config.get("kernel", "random"), config.get("epsilon", 0.0))
    return spec, parse_schedule(config["anneal"]) if "anneal" in config else None


def acceptance_summary(out: Path, config: dict) -> dict | None:
    """Metropolis-Hastings acceptance over the whole run (from the last checkpoint)."""
    if not kernel_of(config)[0].metropolis:
        return None
    ckpt = json.loads((out / "checkpoint.json").read_text(encoding="utf-8"))
    proposed, accepted = (np.asarray(v, dtype=np.int64) for v in ckpt["acceptance"])
    with np.errstate(invalid="ignore", divide="ignore"):
        per_site = np.where(proposed > 0, accepted / np.maximum(proposed, 1), np.nan)
    return {"overall": float(accepted.sum() / max(int(proposed.sum()), 1)),
            "per_site": [None if np.isnan(v) else float(v) for v in per_site],
            "proposed": int(proposed.sum())}


def read_checkpoint(path: Path, config: dict) -> dict:
    """The checkpoint at ``path``, checked against ``config``.

    Raises
    ------
    ResumeMismatchError
        If the file is not a complete checkpoint (cut short, edited), or was written by another
        configuration (the message names the fields that differ).
    """
    try:
        ckpt = json.loads(path.read_text(encoding="utf-8"))
        int(ckpt["step"]), int(ckpt["csv_bytes"]), ckpt["states"], ckpt["rng"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ResumeMismatchError(
            f"{path} is not a complete checkpoint ({type(exc).__name__}); delete it and "
            "trajectory.csv (or the folder) to start again"
        ) from exc
    if ckpt.get("config_hash") != config_hash(config):
        changed = differing_fields(ckpt.get("config"), config) if "config" in ckpt else []
        raise ResumeMismatchError(
            f"{path} belongs to another configuration"
            + (f" (differs in: {', '.join(changed)})" if changed else "")
            + "; rerun the original command to resume, or use a new --out folder"
        )
    return ckpt


def cosine_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``1 - cos(a, b)`` along the last axis (0 where either vector is zero)."""
    num = (a * b).sum(axis=-1)
    den = np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1)
    return np.where(den > 0, 1.0 - num / np.where(den > 0, den, 1.0), 0.0)


def hitting_times(steps: np.ndarray, drift: np.ndarray, levels: Sequence[float]) -> dict:
    """First recorded step with ``drift >= level``, per level (``None`` if never)."""
    out = {}
    for level in levels:
        hit = np.flatnonzero(drift >= level)
        out[f"{level:g}"] = int(steps[hit[0]]) if hit.size else None
    return out


def detect_traps(
    steps: np.ndarray, emb: np.ndarray, window_records: int, threshold: float
) -> list[tuple[int, int]]:
    """Runs ``(first, last)`` of record indices ``s`` with windowed mean drift ``D(s) < threshold``.

    ``emb`` is ``[R, d]`` for one chain; ``D(s)`` is the mean of ``1 - cos(phi_t, phi_s)`` over
    the next ``window_records`` records. A run covers records ``first .. last + window_records``.
    """
    r = len(steps)
    flags = np.zeros(max(r - window_records, 0), dtype=bool)
    for s in range(len(flags)):
        flags[s] = cosine_distance(emb[s + 1:s + 1 + window_records], emb[s]).mean() < threshold
    runs, start = [], None
    for s, f in enumerate(flags):
        if f and start is None:
            start = s
        if not f and start is not None:
            runs.append((start, s - 1))
            start = None
    if start is not None:
        runs.append((start, len(flags) - 1))
    return runs


def analyse(model: Any, config: dict, out: Path) -> dict:
    """Drift, hitting times, traps with margins, and the PCA plot of a finished run."""
    steps, states = read_trajectory(out / "trajectory.csv")
    r, b, n = states.shape
    flat = states.reshape(r * b, n)
    uniq, inverse = np.unique(flat, axis=0, return_inverse=True)
    emb = embed(model, uniq)[inverse.reshape(-1)].reshape(r, b, -1)
    window = max(1, config["window"] // config["record_every"])
    chains, traps = [], []
    for c in range(b):
        drift = cosine_distance(emb[:, c], emb[0, c])
        runs = detect_traps(steps, emb[:, c], window, config["threshold"])
        for first, last in runs:
            seg = states[first:last + window + 1, c]
            mode, count = Counter(map(tuple, seg.tolist())).most_common(1)[0]
            traps.append({"chain": c, "start": int(steps[first]),
                          "end": int(steps[min(last + window, r - 1)]),
                          "dwell_steps": int(count * config["record_every"]),
                          "state": list(mode), "text": state_text(model, np.asarray(mode))})
        chains.append({"chain": c, "hitting_times": hitting_times(steps, drift, config["levels"]),
                       "final_drift": float(drift[-1]), "max_drift": float(drift.max()),
                       "n_traps": len(runs)})
    spec, schedule = kernel_of(config)
    final_tau = config["tau"] if schedule is None else schedule.tau_at(config["steps"])
    if traps:
        res = margins(model, np.array([t["state"] for t in traps]), tau=final_tau)
        for k, t in enumerate(traps):
            t.update({"perfect": bool(res.perfect[k]), "delta_star": float(res.state_min[k]),
                      "delta_bar": float(res.state_mean[k]),
                      "escape_bound": res.trap_escape_bound[k],
                      "tmix_lower_bound": res.trap_tmix_lower_bound[k]})
    summary = {"config": config, "recorded": int(r), "chains": chains, "traps": traps,
               "n_traps": len(traps), "n_perfect": sum(t["perfect"] for t in traps)}
    if not spec.is_plain or schedule is not None:
        summary.update(kernel=spec.to_dict(), final_tau=final_tau,
                       acceptance=acceptance_summary(out, config))
    proj = pca_projection(emb)
    plot_pca(steps, proj, out / "trajectory_pca.png", str(config["model"]))
    if config["diagnostics"]:
        summary["diagnostics"] = diagnose(model, config, out, steps, states, proj)
    return summary


def pca_projection(emb: np.ndarray) -> np.ndarray:
    """The first two principal components ``[R, B, 2]`` of embeddings ``[R, B, d]`` (pooled).

    A component whose singular value is within rounding of zero (a second component of toy
    embeddings that vary along one direction only) is returned as 0 rather than as noise.
    """
    r, b, d = emb.shape
    flat = emb.reshape(r * b, d)
    centred = flat - flat.mean(axis=0)
    _, sv, vt = np.linalg.svd(centred, full_matrices=False)
    keep = sv[:2] > 1e-9 * max(float(sv[0]) if sv.size else 0.0, np.finfo(float).tiny)
    comps = np.zeros((2, d))
    comps[:keep.size][keep] = vt[:2][keep]
    return (centred @ comps.T).reshape(r, b, 2)


def plot_pca(steps: np.ndarray, proj: np.ndarray, path: Path, title: str) -> None:
    """First two principal components of every chain's embeddings (``[R, B, 2]``), coloured by
    step."""
    plt = pyplot()
    b = proj.shape[1]
    fig, ax = plt.subplots(figsize=(5.5, 4.5))
    for c in range(b):
        ax.plot(proj[:, c, 0], proj[:, c, 1], color="0.8", lw=0.5, zorder=1)
        sc = ax.scatter(proj[:, c, 0], proj[:, c, 1], c=steps, cmap="coolwarm_r", s=6, zorder=2)
    fig.colorbar(sc, ax=ax, label="step")
    ax.set_xlabel("PC 1")
    ax.set_ylabel("PC 2")
    ax.set_title(f"embedding trajectories: {title}", fontsize=9)
    save_figure(fig, path)
    plt.close(fig)


def trajectory(
    model: str,
    tau: float,
    steps: int,
    chains: int,
    checkpoint_every: int,
    out: str | os.PathLike[str],
    seed: int = 0,
    record_every: int = 10,
    length: int | None = None,
    window: int = 300,
    threshold: float = 0.12,
    levels: Sequence[float] | str = (0.1, 0.2, 0.4),
    device: str = "cpu",
    progress: bool = True,
    command: str | None = None,
    diagnostics: bool = True,
    energy: str = "auto",
    starts_from: str | os.PathLike[str] | None = None,
    kernel: str | KernelSpec = "random",
    epsilon: float | None = None,
    anneal: Schedule | str | None = None,
) -> dict:
    """Run (or resume) long chains and analyse them; see the module docstring.

    Writes ``trajectory.csv``, ``checkpoint.json``, ``trajectory_summary.json`` and
    ``trajectory_pca.png`` in ``out``, and with ``diagnostics`` (and at least 2 chains) the
    files of :data:`~glauber.experiments.trajectory_diagnostics.DIAGNOSTICS_OUTPUTS`.

    Parameters
    ----------
    model : str
        Model specification.
    tau : float
        Temperature.
    steps, chains, checkpoint_every, record_every : int
        Steps per chain, number of chains, steps per checkpoint (a multiple of
        ``record_every``), and the recording interval.
    seed : int
    length : int, optional
        Sequence length (default: a toy's own ``n``; :data:`glauber.models.DEFAULT_MLM_LENGTH` for
        MLMs).
    window, threshold : trap detection (steps, cosine drift).
    levels : semantic-drift levels whose hitting times are reported.
    command : str, optional
        The command line, recorded in ``manifest.json``.
    kernel, epsilon : the chains' kernel (:mod:`glauber.core.kernel_spec`; default the paper's).
    anneal : Schedule or str, optional
        Annealing schedule of the temperature per step (``tau`` is then unused; traps are
        classified at the temperature of the last step). Metropolis-Hastings runs report their
        acceptance per site and overall in the summary.
    diagnostics : bool
        Compute the convergence diagnostics (R-hat, ESS; needs ArviZ, the ``diagnostics``
        extra, and at least 2 chains, 4 for a verdict).
    energy : {"auto", "pll", "logits", "none"}
        The energy observable (:func:`~glauber.experiments.trajectory_diagnostics.resolve_energy`).
    starts_from : path, optional
        An earlier run's folder or ``trajectory_summary.json``: its trap modes start chains
        (after the context, at most ``chains // 2``).

    Raises
    ------
    InvalidParameterError
        Non-positive counts, ``checkpoint_every`` not a multiple of ``record_every``, an unknown
        ``energy``, or a ``starts_from`` that holds no traps of this model.
    MissingDependencyError
        Diagnostics asked for without ArviZ installed (checked before any step).
    InvalidTemperatureError, UnknownModelError, ResumeMismatchError
    ResourceLimitError
        The CSV would not fit on disk or its analysis in memory (checked before any step).
    OutputPathError, OutputLockedError
        ``out`` is not a writable folder, holds files no glauber run wrote, or another run
        writes into it (:class:`~glauber.experiments.outdir.OutputFolder`).

    A rerun of a finished run returns its summary without redoing anything; a ``checkpoint.json``
    cut short or a ``trajectory.csv`` shorter than the checkpoint records is refused with
    :class:`~glauber.errors.ResumeMismatchError` (nothing is padded or rerun).
    """
    tau = check_tau(tau)
    spec = check_kernel(kernel, epsilon)
    schedule = None if anneal is None else parse_schedule(anneal)
    if isinstance(steps, (int, np.integer)) and not isinstance(steps, bool) and steps == 0:
        raise InvalidParameterError(
            "--steps 0 samples nothing: the chains would stay at their starting states; pass "
            "--steps 1 or more")
    steps = positive_budget(steps, "steps")
    chains = positive_budget(chains, "chains")
    checkpoint_every = positive_budget(checkpoint_every, "checkpoint-every")
    record_every = positive_budget(record_every, "record-every")
    window = positive_budget(window, "window")
    if checkpoint_every % record_every:
        raise InvalidParameterError(
            f"--checkpoint-every ({checkpoint_every}) must be a multiple of --record-every "
            f"({record_every}) so that resumed runs record the same steps"
        )
    if not 0 < threshold:
        raise InvalidParameterError(f"--threshold must be > 0, got {threshold!r}")
    level_list = parse_floats(levels, "levels")
    seed = check_nonnegative_int(seed, "--seed")
    out = check_out_folder(out)
    diagnostics = bool(diagnostics) and chains >= MIN_CHAINS
    if diagnostics:
        arviz_array_stats()  # a missing extra is refused before the model loads
        if energy not in ENERGY_KINDS:
            resolve_energy(None, energy, record_every)  # raises the typed error
    # The keys the model decides are None until it loads (see _finished_summary).
    config = {"experiment": "trajectory", "model": model, "n": None, "tau": tau,
              "steps": steps, "chains": chains, "checkpoint_every": checkpoint_every,
              "record_every": record_every, "seed": int(seed), "window": window,
              "threshold": float(threshold), "levels": level_list, "diagnostics": diagnostics,
              "energy": (None if energy == "auto" else energy) if diagnostics else "none"}
    if not spec.is_plain:  # (the paper's kernel keeps the configuration of earlier versions)
        config.update(kernel=spec.name, epsilon=spec.epsilon)
    if schedule is not None:
        config["anneal"] = schedule.spec
    if starts_from is None:
        done = _finished_summary(_read_json(out / "manifest.json"), out, config, length)
        if done is not None:  # finished: returned before the model loads, the folder untouched
            return done
    m = get_model(model, check_length(model, length), device)
    check_sizes(m, steps, chains, record_every, out)
    config["n"] = int(m.n)
    if diagnostics:
        config["energy"] = resolve_energy(m, energy, record_every)
    if starts_from is not None:
        config["trap_starts"] = trap_modes(starts_from, int(m.n), int(m.q))[:chains // 2]
    outputs = OUTPUTS + (DIAGNOSTICS_OUTPUTS if diagnostics else ())
    with OutputFolder(out, "trajectory", config, outputs, "checkpoint.json",
                      command) as folder:
        done = _finished_summary(folder.previous_manifest, out, config, length)
        if done is not None:  # finished by a run that ended while this one loaded the model
            return done
        run_chains(m, config, out, progress)
        summary = analyse(m, config, out)
        atomic_write_text(out / "trajectory_summary.json", dumps(summary) + "\n")
    return summary


def _finished_summary(manifest: Any, out: Path, config: dict,
                      length: int | None) -> dict | None:
    """The summary of a finished run of ``config`` in ``out`` (None if there is none), given the
    folder's manifest as the run found it.

    Read before the model is loaded, ``config["n"]`` is still None: the run's own ``n`` then
    matches when ``length`` was not given or equals it (the model sets ``n`` otherwise); so is
    ``config["energy"]`` under ``--energy auto``, which then matches the run's resolved energy."""
    summary = _read_json(out / "trajectory_summary.json")
    if not isinstance(manifest, dict) or manifest.get("status") != "finished" \
            or not isinstance(summary, dict) or not isinstance(summary.get("config"), dict):
        return None
    done = dict(summary["config"])
    if config["n"] is None and (length is None or done.get("n") == length):
        done["n"] = None
    if config.get("energy", "none") is None:  # --energy auto: the model resolves it
        done["energy"] = None
    return summary if dumps(done) == dumps(config) else None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def check_sizes(model: Any, steps: int, chains: int, record_every: int, out: Path) -> None:
    """Refuse, before any step, a run whose CSV cannot fit on disk or analysis in memory.

    The CSV holds ``chains * (steps / record_every + 1)`` rows of about ``2 n`` digits and
    separators each (the state and its text); the analysis holds every recorded state, its
    embedding and the parsed rows at once.

    Raises
    ------
    ResourceLimitError
        If either is known to exceed what is available.
    """
    rows = chains * (steps // record_every + 1)
    digits = len(str(max(int(model.q) - 1, 1)))
    row_bytes = int(model.n) * (digits + 2) + 24
    advice = "use fewer --chains or --steps, or a larger --record-every"
    check_fits(rows * row_bytes, f"trajectory.csv ({rows} rows)", advice, disk=str(out))
    width = getattr(getattr(model, "model", None), "config", None)
    dim = int(getattr(width, "hidden_size", 0) or model.q)
    check_fits(rows * (8 * (int(model.n) + dim) + 4 * row_bytes + 400),
               f"the analysis of {rows} recorded states", advice)


__all__ = [
    "analyse",
    "check_sizes",
    "read_checkpoint",
    "cosine_distance",
    "detect_traps",
    "hitting_times",
    "pca_projection",
    "plot_pca",
    "read_trajectory",
    "run_chains",
    "trajectory",
]
