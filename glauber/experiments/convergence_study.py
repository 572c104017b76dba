"""Does R-hat see what the exact mixing time says? Multi-chain diagnostics against exact t_mix.

On toys and exact windows the worst-start ``t_mix(1/4)`` and the stationary law ``mu_tau`` are
known exactly (:class:`~glauber.exact.ExactChain`). :func:`study_case` runs what a user runs,
``glauber trajectory``'s chains and observables (:func:`glauber.estimators.glauber_chains` on
the model, or on its score table for a window; the energy, the Hamming distance to each start,
the one-hot tokens per site and the PCA coordinates of the token counts) with ArviZ's
rank-normalised split R-hat and bulk ESS (:func:`glauber.estimators.convergence_diagnostics`),
and sets beside them:

* the exact ``t_mix(1/4)``;
* the first recorded step at which every non-constant observable has ``R-hat < 1.01`` and bulk
  ESS ``>= 400`` (the declared convergence);
* the TV distance between ``mu_tau`` and the pooled empirical law of every draw of every chain
  up to that step, with the TV distance an i.i.d. sample of ``mu_tau`` of the same size would
  have (its floor: the empirical law of ``N`` draws is not ``mu_tau`` even when they are exact).

Beside R-hat, :func:`lag_case` runs the lag-coupling estimate of an upper bound on the TV
distance to stationarity from the same start states
(:func:`glauber.estimators.lag_coupling_bound`, lag :data:`LAG`, :data:`LAG_PAIRS` pairs): the
first step at which its upper 95% limit is at most ``1/4``, and the exact TV from the same start
law at that step (:meth:`~glauber.exact.ExactChain.distance_from`), which says whether the
estimate held.

Starts: ``dispersed`` (the context or a first state, then uniform states, as
``glauber trajectory`` starts them) and ``one-basin`` (every chain at the mode of ``mu_tau``:
metastable chains started inside one basin); both schemes use the same random numbers, so
where their chains coalesce the two runs agree from there on. Convergence declared before
``t_mix`` is *early*; declared while the pooled law is still more than ``1/4`` beyond its floor
from ``mu_tau`` is *false*.

:data:`CASES` (about 50 chains across families, temperatures and starts, metastable ones
included) feeds docs/results.md: data in ``docs/data/convergence/`` (:func:`section_data`),
rendered by :func:`convergence_markdown`; with :func:`refresh`, its entry in
:data:`glauber.experiments.results.SECTIONS`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from glauber.core.enumeration import state_index
from glauber.core.io import write_json_atomic
from glauber.errors import InvalidParameterError, UnderflowError
from glauber.estimators.diagnostics import (
    chain_observables,
    convergence_diagnostics,
    energy_of_states,
)
from glauber.estimators.sampler import glauber_chains
from glauber.exact.chain import ExactChain
from glauber.experiments.common import get_model, markdown_table
from glauber.experiments.trajectory import pca_projection
from glauber.experiments.trajectory_diagnostics import dispersed_starts, site_labels

#: Start schemes of :func:`study_case`.
STARTS = ("dispersed", "one-basin")
#: Chains per case (``glauber trajectory``'s default).
CHAINS = 8
#: Most recorded draws per chain (the recording interval grows with the run).
MAX_DRAWS = 1000
#: Evaluation points per doubling of the draws (declared steps resolved to ``2^(1/4)``).
PER_DOUBLING = 4
#: Run length: ``RUN_FACTOR * t_mix`` steps, clipped to ``[MIN_STEPS, MAX_STEPS]``.
RUN_FACTOR, MIN_STEPS, MAX_STEPS = 500, 20_000, 100_000
#: A declared convergence is *false* when the pooled law is this much further from ``mu_tau``
#: (in TV) than an i.i.d. sample of the same size.
FALSE_MARGIN = 0.25

#: The study: (model specification, tau, start scheme).
CASES: tuple[tuple[str, float, str], ...] = tuple(
    (spec, tau, start)
    for spec, taus in (
        ("ising-cycle:n=8", (0.35, 0.5, 1.0, 2.0)),
        ("curie-weiss:n=8,alpha=1.5", (0.35, 0.4, 0.5, 0.75, 1.5)),
        ("potts-cycle:n=5,q=3", (0.25, 0.5, 1.0, 2.0)),
        ("planted:n=6,q=3", (1.0,)),
        ("asym-ising:n=6", (0.5, 1.0, 2.0)),
        ("potts-cycle:n=3,q=20,J=1.0", (0.25, 0.5, 1.0)),
        ("antiberty@trastuzumab-vh[100-102]", (0.25, 0.5, 1.0, 2.0)),
        ("sapiens-vh@trastuzumab-vh[100-102]", (0.25, 0.5, 1.0)),
    )
    for tau in taus
    for start in ("dispersed", "one-basin")
)
#: Lag, coupled pairs and meeting-step limit of :func:`lag_case`.
LAG, LAG_PAIRS, LAG_MAX_STEPS = 100, 100, 20_000
#: The committed data of the docs/results.md section.
DATA = Path("docs/data/convergence")
#: The command that refreshes the section's data.
COMMAND = "glauber results --rerun convergence"


def stationary_law(chain: ExactChain) -> np.ndarray:
    """``mu_tau`` to absolute accuracy (entries that underflow float64 are 0): what TV needs."""
    try:
        return chain.stationary()
    except UnderflowError:
        pi = np.clip(chain.stationary_solution().pi, 0.0, None)
        return pi / pi.sum()


def study_starts(chain: ExactChain, model: Any, start: str, chains: int, seed: int,
                 pi: np.ndarray) -> np.ndarray:
    """Start states ``[chains, n]`` of a scheme of :data:`STARTS`."""
    if start == "dispersed":
        return dispersed_starts(model, chains, seed)
    if start == "one-basin":
        return np.repeat(chain.states()[[int(np.argmax(pi))]], chains, axis=0)
    raise InvalidParameterError(f"start must be one of {', '.join(STARTS)}, got {start!r}")


def iid_tv_floor(pi: np.ndarray, draws: int, seed: int = 0, reps: int = 20) -> float:
    """Mean TV distance between ``pi`` and the empirical law of ``draws`` i.i.d. draws from it."""
    rng = np.random.default_rng([seed, 4])
    counts = rng.multinomial(draws, pi, size=reps)
    return float(0.5 * np.abs(counts / draws - pi).sum(axis=1).mean())


def study_case(spec: str, tau: float, start: str, chains: int = CHAINS, seed: int = 0,
               steps: int | None = None, max_draws: int = MAX_DRAWS,
               per_doubling: int = PER_DOUBLING) -> dict:
    """One row of the study (see the module docstring).

    Parameters
    ----------
    spec : str
        A toy specification or an exact window (``model@context[sites]``).
    tau : float
    start : {"dispersed", "one-basin"}
    steps : int, optional
        Steps per chain (default ``RUN_FACTOR * t_mix`` clipped to ``[MIN_STEPS, MAX_STEPS]``).

    Returns
    -------
    dict
        ``tmix``, ``declared_step`` (None: not within the run), ``tv_at_declared``,
        ``tv_floor``, ``early``, ``false``, ``rhat_final`` (the largest at the end), and the
        run's sizes and timing.
    """
    t0 = time.perf_counter()
    model = get_model(spec)
    chain = ExactChain(model, tau)
    sampler = chain.tabulated() if hasattr(model, "cache_key") else model
    tmix = int(chain.mixing_time(0.25))
    pi = stationary_law(chain)
    t1 = time.perf_counter()
    total = steps if steps is not None else int(np.clip(RUN_FACTOR * tmix, MIN_STEPS, MAX_STEPS))
    every = max(1, total // max_draws)
    x0 = study_starts(chain, model, start, chains, seed, pi)
    run = glauber_chains(sampler, tau, x0, total, seed=np.random.default_rng([seed, 5]),
                         record_every=every)
    states = run.trajectory  # [R, C, n]
    t2 = time.perf_counter()
    r, c, n = states.shape
    flat = states.reshape(r * c, n)
    energy = energy_of_states(sampler, flat).reshape(r, c)
    counts = np.stack([(states == a).sum(axis=2) for a in range(chain.q)], axis=2)
    obs, names = chain_observables(states, states[0], chain.q, energy,
                                   pca_projection(counts.astype(np.float64)),
                                   site_labels(model), getattr(model, "labels", None))
    res = convergence_diagnostics(obs, names, run.recorded_steps, per_doubling=per_doubling)
    idx = state_index(flat, chain.q).reshape(r, c)
    row = {"model": spec, "tau": tau, "start": start, "states": chain.num_states,
           "chains": chains, "steps": total, "record_every": every, "tmix": tmix,
           "declared_step": res.converged_step, "verdict": res.verdict(),
           "rhat_final": float(np.nanmax(res.rhat[-1])) if (~res.constant).any() else None}
    if res.converged_step is not None:
        d = int(res.draws[res.converged_index])
        emp = np.bincount(idx[:d].ravel(), minlength=chain.num_states) / (d * c)
        tv = float(0.5 * np.abs(emp - pi).sum())
        floor = iid_tv_floor(pi, d * c, seed)
        row.update(tv_at_declared=tv, tv_floor=floor, draws_at_declared=d * c,
                   early=bool(res.converged_step < tmix),
                   false=bool(tv - floor > FALSE_MARGIN))
    else:
        row.update(tv_at_declared=None, tv_floor=None, draws_at_declared=None, early=False,
                   false=False)
    row.update(seconds_exact=t1 - t0, seconds_sampling=t2 - t1,
               seconds_diagnostics=time.perf_counter() - t2)
    return row


def lag_case(spec: str, tau: float, start: str, chains: int = CHAINS, seed: int = 0,
             lag: int = LAG, pairs: int = LAG_PAIRS, max_steps: int = LAG_MAX_STEPS,
             eps: float = 0.25) -> dict:
    """The lag-coupling estimate of one case, from the start states of :func:`study_case`.

    Returns
    -------
    dict
        ``lag_step``: the first step at which the estimate's upper 95% limit is at most
        ``eps`` (None: refused, ``lag_refused`` says why: pairs that did not meet within
        ``max_steps``); ``lag_exact_tv``: the exact TV from the same start law there;
        ``lag_held``: whether it is at most the estimate's limit.
    """
    from glauber.errors import ConvergenceError
    from glauber.estimators.lag_coupling import lag_coupling_bound

    t0 = time.perf_counter()
    model = get_model(spec)
    chain = ExactChain(model, tau)
    sampler = chain.tabulated() if hasattr(model, "cache_key") else model
    starts = study_starts(chain, model, start, chains, seed, stationary_law(chain))
    row: dict[str, Any] = {"model": spec, "tau": tau, "start": start, "lag": lag,
                           "pairs": pairs, "max_steps": max_steps}
    try:
        bound = lag_coupling_bound(sampler, tau, starts, lag=lag, n_pairs=pairs,
                                   max_steps=max_steps, seed=seed)
    except ConvergenceError as exc:
        row.update(lag_step=None, lag_exact_tv=None, lag_held=None,
                   lag_refused=str(exc).split(", so")[0], seconds=time.perf_counter() - t0)
        return row
    step = bound.first_below(eps)
    step = len(bound.steps) if step is None else step
    exact = float(chain.distance_from(starts, [step])[0])
    row.update(lag_step=step, lag_upper=bound.at(step)[1], lag_exact_tv=exact,
               lag_held=bool(exact <= bound.at(step)[1] + 1e-12), lag_refused=None,
               lag_median_meeting=float(np.median(bound.meeting_times)),
               seconds=time.perf_counter() - t0)
    return row


# ------------------------------------------------------------------- docs/results.md section
def section_data(out: Path = DATA, cases: Sequence[tuple[str, float, str]] = CASES,
                 log: Callable[[str], Any] = print) -> Path:
    """Run every case of ``cases`` into ``out/rows.json`` (rewritten atomically after each, so
    a rerun skips the cases already there)."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "rows.json"
    rows = json.loads(path.read_text(encoding="utf-8"))["rows"] if path.exists() else []
    done = {(r["model"], r["tau"], r["start"]) for r in rows}
    for spec, tau, start in cases:
        if (spec, tau, start) in done:
            continue
        log(f"== convergence: {spec} tau={tau:g} {start}")
        rows.append(study_case(spec, tau, start))
        write_json_atomic(path, {"chains": CHAINS, "max_draws": MAX_DRAWS,
                                 "per_doubling": PER_DOUBLING, "rows": rows})
    lag_path = out / "lag.json"
    lags = json.loads(lag_path.read_text(encoding="utf-8"))["rows"] if lag_path.exists() else []
    done = {(r["model"], r["tau"], r["start"]) for r in lags}
    for spec, tau, start in cases:
        if (spec, tau, start) in done:
            continue
        log(f"== convergence, lag coupling: {spec} tau={tau:g} {start}")
        lags.append(lag_case(spec, tau, start))
        write_json_atomic(lag_path, {"lag": LAG, "pairs": LAG_PAIRS,
                                     "max_steps": LAG_MAX_STEPS, "rows": lags})
    return path


def _g(v: Any, digits: int = 3) -> str:
    if v is None:
        return "—"
    return f"{v:.{digits}g}" if isinstance(v, float) else f"{v:,}" if isinstance(v, int) else v


def convergence_markdown(folder: Path = DATA) -> str:
    """The docs/results.md section: R-hat's declared convergence against exact ``t_mix``."""
    path = folder / "rows.json"
    if not path.exists():
        return ""
    data = json.loads(path.read_text(encoding="utf-8"))
    order = {case: k for k, case in enumerate(CASES)}
    rows = sorted(data["rows"], key=lambda r: order.get((r["model"], r["tau"], r["start"]),
                                                         len(order)))
    out = [
        f"{data['chains']} chains per row, run as `glauber trajectory` runs them, on toys and "
        "exact windows where the worst-start t_mix(1/4) is known exactly. **declared**: the "
        "first recorded step at which every non-constant observable (energy, Hamming distance "
        "to each start, one-hot tokens per site, PCA coordinates) has ArviZ's rank-normalised "
        "split R-hat < 1.01 and bulk ESS >= 400 (evaluated at "
        f"{data['per_doubling']} points per doubling of the draws). **TV**: total variation "
        "between the exact stationary law and the pooled empirical law of every draw up to that "
        "step; **floor**: the TV an i.i.d. sample of the law of the same size has. **early**: "
        "declared before t_mix; **false**: declared with TV more than "
        f"{FALSE_MARGIN} above the floor. Starts: *dispersed* (the context or a first state, "
        "then uniform random states), *one-basin* (every chain at the stationary mode).",
        "",
    ]
    lags = _lag_rows(folder)
    if lags:
        meta = json.loads((folder / "lag.json").read_text(encoding="utf-8"))
        out[0] += (
            " **lag TV <= 1/4 at**: the first step at which the lag-coupling estimate of an "
            "upper bound on the TV distance to stationarity from the same start states "
            f"(Biswas, Jacob and Vanetti 2019; lag {meta['lag']}, {meta['pairs']} coupled "
            "pairs, upper 95% limit) is at most 1/4, an estimate, not rigorous (refused: pairs "
            f"still apart after {meta['max_steps']:,} coupled steps); **exact TV there**: the "
            "exact TV from the same start law at that step, in bold where the estimate failed "
            "(above its limit).")
    out.append(markdown_table(
        ("chain", "tau", "start", "states", "exact t_mix", "declared", "TV at declared", "floor",
         "early", "false", "max R-hat at end (steps)")
        + (("lag TV <= 1/4 at", "exact TV there") if lags else ()),
        [(r["model"], f"{r['tau']:g}", r["start"], f"{r['states']:,}", f"{r['tmix']:,}",
          _g(r["declared_step"]), _g(r["tv_at_declared"]), _g(r["tv_floor"]),
          "**yes**" if r["early"] else "", "**yes**" if r["false"] else "",
          f"{_g(r['rhat_final'], 4)} ({r['steps']:,})")
         + (_lag_cells(lags.get((r["model"], r["tau"], r["start"]))) if lags else ())
         for r in rows]).rstrip("\n"))
    out += ["", summary_paragraph(rows)]
    if lags:
        out += ["", lag_paragraph(list(lags.values()))]
    out += ["", "Data: `docs/data/convergence/rows.json` and `lag.json` "
            f"(`glauber.experiments.convergence_study.section_data`); refresh: `{COMMAND}` "
            f"(resumes: a case already there is skipped; {len(CASES)} cases in all)."]
    return "\n".join(out) + "\n"


def _lag_rows(folder: Path) -> dict:
    path = folder / "lag.json"
    if not path.exists():
        return {}
    rows = json.loads(path.read_text(encoding="utf-8"))["rows"]
    return {(r["model"], r["tau"], r["start"]): r for r in rows}


def _lag_cells(r: dict | None) -> tuple[str, str]:
    if r is None:
        return ("not run", "—")
    if r["lag_step"] is None:
        return ("refused", "—")
    tv = _g(r["lag_exact_tv"])
    return (f"{r['lag_step']:,}", tv if r["lag_held"] else f"**{tv}**")


def lag_paragraph(rows: Sequence[dict]) -> str:
    """How often the lag-coupling estimate held against the exact TV, by start scheme."""
    parts = []
    for start in ("dispersed", "one-basin"):
        sel = [r for r in rows if r["start"] == start]
        if not sel:
            continue
        ran = [r for r in sel if r["lag_step"] is not None]
        failed = [r for r in ran if not r["lag_held"]]
        parts.append(
            f"**{start}** starts: the lag-coupling estimate ran on {len(ran)} of {len(sel)} "
            f"chains ({len(sel) - len(ran)} refused) and held against the exact TV on "
            f"{len(ran) - len(failed)}"
            + (f"; it failed on {', '.join(sorted({_short(r) for r in failed}))}"
               if failed else "") + ".")
    return ("Lag coupling beside R-hat: " + " ".join(parts) + " Refusal is the honest answer on "
            "a metastable chain whose pairs do not meet; a failure is an estimate that no "
            "sampled pair could correct (a rare escape none of them showed). "
            "`benchmarks/lag_coupling_coverage.py` measures the coverage over many independent "
            "runs.")


def refresh(folder: Path, work: Path, log: Callable[[str], Any]) -> None:
    """Run the cases of :data:`CASES` missing from ``folder/rows.json`` into it (``work`` is not
    used: a case's row is all it keeps)."""
    section_data(folder, log=log)


def summary_paragraph(rows: Sequence[dict]) -> str:
    """How often R-hat declared convergence early or falsely, by start scheme (from the data)."""
    parts = []
    for start in ("dispersed", "one-basin"):
        sel = [r for r in rows if r["start"] == start]
        if not sel:
            continue
        declared = [r for r in sel if r["declared_step"] is not None]
        early = [r for r in declared if r["early"]]
        false = [r for r in declared if r["false"]]
        ratio = [r["declared_step"] / r["tmix"] for r in declared if not r["early"]]
        parts.append(
            f"**{start}** starts: convergence declared in {len(declared)} of {len(sel)} chains; "
            f"before the exact t_mix in {len(early)}"
            + (f" ({', '.join(sorted({_short(r) for r in early}))})" if early else "")
            + f"; falsely (pooled law > {FALSE_MARGIN} beyond its floor) in {len(false)}"
            + (f" ({', '.join(sorted({_short(r) for r in false}))})" if false else "")
            + (f". Where declared after t_mix, the declared step is {min(ratio):.3g} to "
               f"{max(ratio):.3g} times t_mix" if ratio else "") + ".")
    return " ".join(parts)


def _short(row: dict) -> str:
    return f"{row['model']} at tau = {row['tau']:g}"


__all__ = [
    "CASES",
    "CHAINS",
    "COMMAND",
    "DATA",
    "FALSE_MARGIN",
    "LAG",
    "LAG_MAX_STEPS",
    "LAG_PAIRS",
    "MAX_DRAWS",
    "STARTS",
    "convergence_markdown",
    "iid_tv_floor",
    "lag_case",
    "lag_paragraph",
    "refresh",
    "section_data",
    "stationary_law",
    "study_case",
    "study_starts",
    "summary_paragraph",
]
