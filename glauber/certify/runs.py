"""What the built-in stages of :func:`~glauber.certify.certify` compute, and the rows they ask.

One ``run`` function per stage (:mod:`glauber.certify.stages` lists them), each taking the
:class:`~glauber.certify.stage_run.StageRun` and returning its results by certificate field, and
one ``*_rows`` function giving the model rows it plans to ask (for the progress report):

- ``table``: the exact chain's score table (``n q^(n-1)`` queries); every later stage reads it;
- ``rectangles``: :func:`~glauber.estimators.rectangle_test` (Proposition 4);
- ``influence``: :func:`~glauber.estimators.influence`, exhaustive, searched or sampled
  (Definition 2, Lemma 6, corrected Theorem 5, Corollary 7);
- ``margins``: :func:`~glauber.estimators.margins` of the states (Appendix A.1, Theorem 8 on
  traps) and of the caller's basin;
- ``exact``: :func:`~glauber.certify.exact.exact_values` of the chain;
- ``drift``: :func:`~glauber.estimators.drift` at the states and over the band (Section 5.4);
- ``coupling``: :func:`~glauber.estimators.coupling_time` of coupled pairs (Section 6.1).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from glauber.certify.bracket import wants_memo
from glauber.certify.exact import EXACT_MAX_STATES, exact_values
from glauber.certify.stage_run import StageRun
from glauber.core.enumeration import all_states
from glauber.errors import BasinError, StationaryResidualError
from glauber.estimators.coupling import coupling_time
from glauber.estimators.drift import drift
from glauber.estimators.escape import evaluate_basin
from glauber.estimators.influence import influence
from glauber.estimators.margins import margins
from glauber.estimators.rectangle import rectangle_test
from glauber.estimators.score_cache import MemoisedModel
from glauber.exact.chain import ExactChain
from glauber.exact.score_table import table_queries


# ------------------------------------------------------------------------------------ table
def table(run: StageRun) -> dict[str, Any]:
    """Build the exact chain's score table and make it the model every later stage reads."""
    if run.exact:
        run.chain = ExactChain(run.model, run.tau, max_states=run.model.q ** run.model.n,
                               batch_size=run.settings.batch_size, executor=run.executor,
                               progress=None if run.executor is None else _remote_rows(run.model))
        run.model = run.chain.tabulated()
    return {}


def _remote_rows(model: Any) -> Any:
    """A ``progress(done, total)`` that reports the rows an executor's workers asked to the
    counting model (whose own count sees only the rows asked in this process)."""
    seen = [0]

    def progress(done: int, total: int) -> None:
        count = getattr(model, "count", None)
        if callable(count):
            count(done - seen[0])
        seen[0] = done

    return progress


def table_rows(run: StageRun) -> int:
    return table_queries(run.model.n, run.model.q) if run.exact else 0


# ------------------------------------------------------------------------------- rectangles
def rectangles(run: StageRun) -> dict[str, Any]:
    """Proposition 4 on ``n_rectangles`` rectangles with the model's top-50 replacements."""
    return {"incompatibility": rectangle_test(
        run.model, run.states, run.tau, run.settings.n_rectangles, "topk", 50,
        run.rng("rectangles"), run.batch_size)}


def rectangle_rows(run: StageRun) -> int:
    return 4 * run.settings.n_rectangles


# -------------------------------------------------------------------------------- influence
def influence_stage(run: StageRun) -> dict[str, Any]:
    """Every pair of states (exhaustive), else a search from the contexts, else a sample; a
    search asks through a query memo when the ``bracket`` stage will re-read its witnesses."""
    s = run.settings
    if wants_memo(run):
        run.memo = MemoisedModel(run.model, run.batch_size)
    return {"influence": influence(
        run.memo or run.model, run.tau, contexts=None if s.exhaustive else run.contexts,
        n_replacements=s.n_replacements, seed=run.rng("influence"), exhaustive=s.exhaustive,
        batch_size=run.batch_size, eps=run.eps, max_states=run.max_states,
        search_budget=s.search_budget,
    )}


def influence_rows(run: StageRun) -> int:
    s, n, q = run.settings, run.model.n, run.model.q
    if s.exhaustive:
        return q**n * n * (1 + (q - 1) * (n - 1))
    if s.search_budget:
        return s.search_budget
    return run.contexts.shape[0] * n * (1 + s.n_replacements * (n - 1))


# ---------------------------------------------------------------------------------- margins
def margins_stage(run: StageRun) -> dict[str, Any]:
    """Margins of the states (Theorem 8 on each perfect trap) and Theorem 8 on the basin."""
    marg = margins(at_states(run), run.states, tau=run.tau, batch_size=run.batch_size)
    return {"margins": marg, "basin": None if run.basin is None else _basin(run)}


def _basin(run: StageRun) -> Any:
    """Assumption 1 over every basin state (exhaustive) or over the given states inside it."""
    exhaustive = run.settings.exhaustive
    pool = all_states(run.model.n, run.model.q, run.max_states) if exhaustive else run.states
    inside = pool[evaluate_basin(run.basin, pool)]
    if inside.shape[0] == 0:
        raise BasinError(
            "none of the states lies in the basin; pass states from the basin (or a basin that "
            "contains some of them)"
        )
    if exhaustive and inside.shape[0] == pool.shape[0]:
        raise BasinError("the basin is the whole state space; Theorem 8 needs a proper subset")
    return margins(at_states(run), inside, tau=run.tau, basin=run.basin,
                   batch_size=run.batch_size, basin_complete=exhaustive)


def margins_rows(run: StageRun) -> int:
    n, q, count = run.model.n, run.model.q, run.states.shape[0]
    basin = 0 if run.basin is None else (q**n if run.settings.exhaustive else count)
    return (count + basin) * n


def at_states(run: StageRun) -> Any:
    """The model the ``margins`` and ``drift`` stages read every site's conditional at the
    states from: one query memo for the two (``run.states_memo``), so drift re-reads the rows
    margins asked (and the basin's, a subset of the states), asking the model nothing again.
    The model itself when every query is a lookup (the exact chain's score table) or the run is
    exhaustive (its band and basin states would only be held twice)."""
    if not _memoises_states(run):
        return run.model
    if run.states_memo is None:
        run.states_memo = MemoisedModel(run.model, run.batch_size)
    return run.states_memo


def _memoises_states(run: StageRun) -> bool:
    return not (run.exact or run.settings.exhaustive)


# ------------------------------------------------------------------------------------ exact
def exact_stage(run: StageRun) -> dict[str, Any]:
    """The exact chain's values, with the margins' best trap; else why there are none."""
    n, q = run.model.n, run.model.q
    if run.chain is None:
        note = "not computed (exact=False)" if run.exact_asked is False else (
            f"not computed: q**n = {q}**{n} states > {EXACT_MAX_STATES:,} (restrict to a window "
            "of fewer states for the exact chain: glauber.core.restrict, or --context/--sites)")
        return {"exact": None, "exact_note": note}
    trap = run.results["margins"].best_trap
    try:
        values = exact_values(run.chain, run.eps, None if trap is None else run.states[trap],
                              device=run.device)
    except StationaryResidualError as exc:  # a metastable 5-site window: no law, no values
        bracket = run.chain.mixing_bracket(run.eps)
        return {"exact": None, "exact_note": (
            f"not computed: {exc}. The rigorous t_mix bracket without the law: "
            f"{bracket.summary()}")}
    return {"exact": values, "exact_note": f"exact chain over all {run.chain.num_states} states"}


# ------------------------------------------------------------------------------------ drift
def drift_band(xs: np.ndarray, q: int) -> tuple[int, float, float]:
    """The counted token and band of :func:`~glauber.certify.certify`'s Section 5.4 stage.

    The token is the most frequent one in ``xs``; the band ``(a, b)`` runs one count beyond the
    states' counts of it, so every given state lies inside.
    """
    token = int(np.argmax(np.bincount(xs.ravel(), minlength=q)))
    counts = (xs == token).sum(axis=1)
    return token, float(counts.min() - 1), float(counts.max() + 1)


def drift_stage(run: StageRun) -> dict[str, Any]:
    """Drift at the given states (as printed) and over the band (the corrected certificate)."""
    xs, s, batch = run.states, run.settings, run.batch_size
    token, a, b = drift_band(xs, run.model.q)
    kw = dict(band=(a, b), T=s.horizon, batch_size=batch)
    if not s.exhaustive:
        at_given = drift(at_states(run), xs, token, run.tau, **kw)
        return {"drift": at_given, "drift_band": at_given}
    every = all_states(run.model.n, run.model.q, run.max_states)
    level = (every == token).sum(axis=1)
    band_states = every[(level > a) & (level < b)]
    return {
        "drift": drift(run.model, xs, token, run.tau, batch_size=batch),
        "drift_band": drift(run.model, band_states, token, run.tau, band_states_complete=True,
                            **kw),
    }


def drift_rows(run: StageRun) -> int:
    n, q, xs = run.model.n, run.model.q, run.states
    rows = 0 if _memoises_states(run) else xs.shape[0] * n  # margins asked them
    if run.settings.exhaustive:  # plus every state with a < count < b: C(n, c) (q - 1)^(n - c)
        _, a, b = drift_band(xs, q)
        rows += n * sum(math.comb(n, c) * (q - 1) ** (n - c) for c in range(int(a) + 1, int(b)))
    return rows


# --------------------------------------------------------------------------------- coupling
def coupling_stage(run: StageRun) -> dict[str, Any]:
    """``n_pairs`` pairs (a given state, a uniform random state) within ``budget`` steps."""
    s = run.settings
    if not s.n_pairs:
        return {"coupling": None}
    x0 = run.states[np.arange(s.n_pairs) % run.states.shape[0]]
    y0 = run.rng("coupling-starts").integers(run.model.q, size=(s.n_pairs, run.model.n))
    return {"coupling": coupling_time(
        run.model, run.tau, x0, y0, s.budget, seed=run.rng("coupling"), batch_size=run.batch_size,
        sync_every=min(50, s.budget),
    )}


def coupling_rows(run: StageRun) -> int:
    s = run.settings
    return 1 + 2 * s.n_pairs * s.budget if s.n_pairs else 0


__all__ = [
    "coupling_rows", "coupling_stage", "drift_band", "drift_rows", "drift_stage", "exact_stage",
    "influence_rows", "influence_stage", "margins_rows", "margins_stage", "rectangle_rows",
    "rectangles", "table", "table_rows",
]
