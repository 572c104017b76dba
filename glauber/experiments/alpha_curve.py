"""alpha(tau) and the corrected Theorem 5 certificates over a temperature range (paper §5.2).

One influence estimation serves every temperature: the estimator issues the same (state, site)
queries at each ``tau`` for the same contexts and seed, and :class:`CachedScores` answers the
repeats from memory, so the model runs once and only the softmax at ``tau`` is recomputed
(scores are tau-free; ``p_tau = softmax(s / tau)``). From sampled contexts ``C(tau)`` is a lower
bound on Definition 2's supremum, so the alphas are lower bounds and the certificates estimates;
toy models are enumerated exhaustively and their certificates are exact (with the exact
``t_mix`` beside them). The paper reports, for BERT on a 14-token sentence, ``alpha(10) ~ 1.04``
and ``alpha(11) ~ 0.94`` (row sums).
"""

from __future__ import annotations

import hashlib
import math
import os
from typing import Any, Sequence

import numpy as np

from glauber.core.arrays import to_numpy
from glauber.core.conditionals import enumerable
from glauber.core.enumeration import table_queries
from glauber.core.io import atomic_write_text
from glauber.core.validation import check_eps, check_nonnegative_int
from glauber.errors import UnboundableModelError
from glauber.estimators.influence import influence
from glauber.estimators.influence_bracket import (
    UPPER_GRID,
    WitnessCurve,
    exact_lower,
    influence_bracket,
)
from glauber.estimators.influence_search import search_influence_sweep
from glauber.estimators.influence_threshold import rho_lower_bound, tau_no_cert
from glauber.estimators.influence_upper import UpperBoundSource
from glauber.estimators.score_cache import MemoisedModel
from glauber.estimators.witnesses import reduced_precision, witness_tolerance
from glauber.experiments.checkpoint import ResultsLog, dumps
from glauber.experiments.common import (
    check_length,
    check_sites,
    context_states,
    exact_tmix,
    get_model,
    parse_floats,
    positive_budget,
    pyplot,
    save_figure,
    write_csv,
)
from glauber.experiments.executor import Executor, LocalExecutor, run_cells
from glauber.experiments.outdir import OutputFolder, check_out_folder

COLUMNS = (
    "tau", "alpha_row", "alpha_col", "alpha_spectral", "spectral_radius", "tmix_row", "tmix_col",
    "tmix_spectral", "tmix_matrix_power", "best", "corollary7", "is_lower_bound", "exact_tmix",
    "rho_upper", "tmix_upper",
)
#: Files written in the output folder (besides the results log).
OUTPUTS = ("alpha_curve.csv", "alpha_curve.json", "alpha_curve.png")
#: Certificate name -> the quantity that must be < 1 for it to hold.
CERTIFICATES = {
    "row": "alpha_row", "col": "alpha_col", "spectral": "alpha_spectral",
    "matrix_power": "spectral_radius",
}


class CachedScores:
    """A ConditionalModel that memoises ``model.scores`` by the bytes of its query.

    Scores are temperature-free, so repeated estimations at several temperatures with the same
    queries cost one model pass in all.
    """

    def __init__(self, model: Any) -> None:
        self.model = model
        self.n, self.q, self.vocab = model.n, model.q, model.vocab
        self.name = getattr(model, "name", type(model).__name__)
        self.hits = 0
        self.rows = 0
        self._cache: dict[bytes, Any] = {}

    def __getattr__(self, name: str) -> Any:
        """The wrapped model's other attributes (``oscillation_upper_bound``, ``dtype``, ...)."""
        if name in ("model", "_cache"):
            raise AttributeError(name)
        return getattr(self.model, name)

    def scores(self, states: Any, sites: Any) -> Any:
        """``model.scores(states, sites)``, computed once per distinct query."""
        h = hashlib.sha256()
        h.update(np.ascontiguousarray(to_numpy(states), dtype=np.int64).tobytes())
        h.update(np.ascontiguousarray(to_numpy(sites), dtype=np.int64).reshape(-1).tobytes())
        key = h.digest()
        if key in self._cache:
            self.hits += 1
        else:
            self._cache[key] = self.model.scores(states, sites)
            self.rows += int(np.shape(states)[0])
        return self._cache[key]


def alpha_cell(cell: dict) -> dict:
    """Influence certificates at every temperature of one model (one cell: the model).

    With ``cell["exact"]`` and ``q**n <= EXACT_SWEEP_MAX_STATES`` (a toy, or a window of a real
    model) the chain is tabulated once (:class:`ExactChain`, ``n q^(n-1)`` model rows, kept on
    disk for models with a ``cache_key``): every temperature then reads exact ``C``, ``Delta``
    and the exact worst-start ``t_mix`` from that one table.
    """
    from glauber.exact.chain import ExactChain
    from glauber.models import EXACT_SWEEP_MAX_STATES

    base = get_model(cell["model"], cell["n"], cell["device"])
    num_states = int(base.q) ** int(base.n)
    chain = None
    if cell["exact"] and num_states <= max(EXACT_SWEEP_MAX_STATES, cell["max_states"]):
        chain = ExactChain(base, cell["taus"][0], max_states=num_states)
        model, exhaustive = chain.tabulated(), True
    else:
        model = CachedScores(base)
        exhaustive = enumerable(base, cell["max_states"])
    contexts = None if exhaustive else context_states(base, cell["contexts"], cell["seed"])
    rows = []
    for tau in cell["taus"]:
        res = influence(model, tau, contexts=contexts, n_replacements=cell["replacements"],
                        seed=cell["seed"], exhaustive=exhaustive, eps=cell["eps"])
        cert = res.contraction
        rows.append({
            "tau": tau, "alpha_row": res.alpha_row, "alpha_col": res.alpha_col,
            "alpha_spectral": res.alpha_spectral, "spectral_radius": res.spectral_radius,
            "tmix_row": cert.tmix_row, "tmix_col": cert.tmix_col,
            "tmix_spectral": cert.tmix_spectral, "tmix_matrix_power": cert.tmix_matrix_power,
            "best": cert.best, "corollary7": res.corollary7, "is_lower_bound": res.is_lower_bound,
            "exact_tmix": (_window_tmix(chain.at(tau), cell["eps"]) if chain is not None
                           else exact_tmix(base, tau) if cell["exact"] else None),
        })
        delta = res.Delta
        sampled_C = res.C
        rows[-1]["rho_lower"] = rho_lower_bound(
            sampled_C, witness_tolerance("float64" if exhaustive else "float32", tau))
    tau7 = float(np.max(delta.sum(axis=1))) / 4.0  # Corollary 7: max_i sum_j Delta_ij < 4 tau
    out = {"model": cell["model"], "n": int(base.n), "q": int(base.q), "rows": rows,
           "exhaustive": bool(exhaustive), "corollary7_tau": tau7,
           "thresholds": certificate_thresholds(rows)}
    curve = None
    if cell.get("search_budget") or exhaustive:
        out["tau_no_cert"], curve = no_certificate_thresholds(
            model if exhaustive else base, cell, rows, exhaustive, contexts)
    out["bracket"] = bracket_of_curve(model if exhaustive else base, cell, rows, exhaustive,
                                      curve)
    # the search's distinct queries, and as a fraction of the n q^(n-1) that tabulate the
    # model; rows it asked of the model itself (on an enumerated or tabulated chain it reads
    # the table: no model rows)
    out["search_queries"] = sum(r.get("search_queries", 0) for r in rows)
    out["search_fraction"] = out["search_queries"] / table_queries(int(base.n), int(base.q))
    out["search_rows"] = 0 if exhaustive else out["search_queries"]
    out["model_rows"] = (table_queries(int(base.n), int(base.q)) if chain is not None
                         else model.rows + out["search_rows"])
    return out


def _window_tmix(chain: Any, eps: float) -> int | None:
    """Exact worst-start ``t_mix(eps)`` of a tabulated chain, stepped at most
    :data:`glauber.certify.exact.EXACT_TMIX_MAX_STEPS` steps as certify does (None when it is
    numerically reducible or needs more: a metastable window at low tau would otherwise step
    for hours)."""
    from glauber.certify.exact import EXACT_TMIX_MAX_STEPS
    from glauber.errors import ConvergenceError, NonPositiveConditionalError

    try:
        return int(chain.mixing_time(eps, max_steps=EXACT_TMIX_MAX_STEPS))
    except (ConvergenceError, NonPositiveConditionalError):
        return None


def bracket_of_curve(model: Any, cell: dict, rows: list[dict], exhaustive: bool,
                     curve: WitnessCurve | None) -> dict:
    """The bracket over the curve's temperatures (and the upper side's own wide grid).

    The upper side: :class:`~glauber.estimators.influence_upper.UpperBoundSource` of the model
    (the exact table of an enumerated or tabulated chain; else a closed form or the weights of
    a masked LM's LayerNorm head); ``rho_upper`` and ``tmix_upper`` are added to the rows. The
    lower side: the exact table, else the search's witnesses re-evaluated at every temperature
    (``curve``), else the sampled rows' ``rho_lower`` on the grid only. Returns the bracket's
    JSON (:class:`~glauber.estimators.influence_bracket.InfluenceBracket`, ``upper_C`` and
    ``upper_Delta`` at the first temperature of the curve).
    """
    try:
        source, missing = UpperBoundSource(model), ""
    except UnboundableModelError as exc:
        source, missing = None, str(exc)
    for r in rows:
        ub = None if source is None else source.at(r["tau"], cell["eps"])
        r["rho_upper"] = None if ub is None else ub.spectral_radius
        r["tmix_upper"] = None if ub is None else ub.tmix_bound
    sampled = {r["tau"]: r["rho_lower"] for r in rows}
    if source is not None and source.tabulated:
        lower, how = exact_lower(source), "exact (table)"
    elif curve is not None:
        def lower(t: float) -> float:  # the witnesses, and the sampled values on the grid
            return max(curve(t), sampled.get(t, -math.inf))
        how = "search witnesses"
    else:
        def lower(t: float) -> float:
            return sampled.get(t, math.nan)
        how = "sampled (grid only)"
    brk = influence_bracket(source, rows[0]["tau"], lower=lower, lower_method=how,
                            grid=sorted(set(UPPER_GRID) | set(sampled)), eps=cell["eps"],
                            upper_missing=missing)
    return brk.to_dict()


def no_certificate_thresholds(base: Any, cell: dict, rows: list[dict], exhaustive: bool,
                              contexts: Any) -> tuple[dict[str, float | None],
                                                      WitnessCurve | None]:
    """The largest grid ``tau`` at which no Theorem 5 certificate can exist, by each method.

    ``rho(C) >= 1`` for a matrix of realised values (less rounding) proves it (Perron–Frobenius;
    :mod:`glauber.estimators.influence_threshold`). ``"sampled"``: from the sampled ``C`` of
    the rows; ``"search"``: from :func:`search_influence_sweep` with ``cell["search_budget"]``
    queries over the grid (warm-started, one query memo; its spectral radii are added to the
    rows); ``"exact"``: from the exact ``C`` of an enumerated or tabulated chain (a toy or a
    window of a real model), with the search run on the same table beside it when asked for.
    The search asks through a query memo, so its witnesses come back as a
    :class:`~glauber.estimators.influence_bracket.WitnessCurve` (None for an exact chain) that
    re-evaluates them at any temperature for the bracket.
    """
    found = max((r["tau"] for r in rows if r["rho_lower"] >= 1.0), default=None)
    if exhaustive:
        out: dict[str, float | None] = {"exact": found}
        if cell.get("search_budget"):  # the search's quality on an exact chain, side by side
            sweep = search_influence_sweep(base, cell["taus"], budget=cell["search_budget"],
                                           seed=cell["seed"])
            for r, res in zip(rows, sweep):
                r["search_spectral_radius"], r["search_rho_lower"] = (res.spectral_radius,
                                                                      res.rho_lower)
                r["search_queries"] = int(res.queries)  # of the table, not of the model
            out["search"] = tau_no_cert(sweep)
        return out, None
    memo = MemoisedModel(base)
    sweep = search_influence_sweep(memo, cell["taus"], budget=cell["search_budget"],
                                   starts=contexts, seed=cell["seed"])
    for r, res in zip(rows, sweep):
        r["search_spectral_radius"], r["search_rho_lower"] = res.spectral_radius, res.rho_lower
        r["search_queries"] = int(res.queries)
    curve = WitnessCurve(memo.cache, [w for res in sweep for w in res.witnesses],
                         reduced_precision(base))
    return {"exact": None, "sampled": found, "search": tau_no_cert(sweep)}, curve


def certificate_thresholds(rows: Sequence[dict]) -> dict[str, float | None]:
    """For each certificate, the smallest grid ``tau`` from which it holds at every larger one.

    ``None`` when it fails at the largest temperature of the grid.
    """
    ordered = sorted(rows, key=lambda r: r["tau"])
    out: dict[str, float | None] = {}
    for name, key in CERTIFICATES.items():
        start = None
        for r in reversed(ordered):
            if _as_float(r[key]) < 1.0:
                start = r["tau"]
            else:
                break
        out[name] = start
    return out


def _as_float(v: Any) -> float:
    return math.inf if v == "inf" else float(v)


def alpha_curve(
    model: str,
    taus: Sequence[float] | str,
    out: str | os.PathLike[str],
    length: int | None = None,
    contexts: int = 8,
    replacements: int = 1,
    seed: int = 0,
    eps: float = 0.25,
    executor: Executor | None = None,
    device: str = "cpu",
    max_states: int = 4096,
    exact: bool = True,
    progress: bool = True,
    command: str | None = None,
    search_budget: int = 0,
) -> dict:
    """Run (or resume) the alpha curve; write ``alpha_curve.{jsonl,csv,json,png}`` in ``out``.

    Parameters
    ----------
    model : str
        Model specification.
    taus : sequence or comma-separated string
        Temperatures.
    length : int, optional
        Sequence length (default: a toy's own ``n``; :data:`glauber.models.DEFAULT_MLM_LENGTH` for
        MLMs).
    contexts, replacements : int
        Sampled contexts and replacements per (context, site) for MLMs (toys with
        ``q**n <= max_states`` are enumerated).
    seed : int
    eps : float
        Target distance of the certificates.
    search_budget : int
        When > 0, also search the influence over the grid with this many distinct conditional
        queries in all, capped at the ``n q^(n-1)`` that tabulate the model (there the exact
        suprema are known; the config holds the budget used), and report ``tau_no_cert``
        (see :func:`no_certificate_thresholds`). The result holds ``search_queries`` and
        ``search_fraction`` (of the tabulation).

    Returns
    -------
    dict
        ``{"model", "n", "q", "rows": [...], "thresholds": {...}, "corollary7_tau", ...}``.

    Raises
    ------
    InvalidParameterError, InvalidTemperatureError, UnknownModelError, ResumeMismatchError
    OutputPathError, OutputLockedError
        ``out`` is not a writable folder, holds foreign files, or another run writes into it
        (:class:`~glauber.experiments.outdir.OutputFolder`). Every argument is checked before
        anything is written.
    """
    tau_list = sorted(parse_floats(taus, "taus"))
    contexts = positive_budget(contexts, "contexts")
    replacements = positive_budget(replacements, "replacements")
    eps = check_eps(eps, "--eps")
    seed = check_nonnegative_int(seed, "--seed")
    out = check_out_folder(out)
    resolved = get_model(model, check_length(model, length), device)
    n = int(resolved.n)
    check_sites(n, model)
    config = {"experiment": "alpha-curve", "model": model, "taus": tau_list, "n": n,
              "contexts": contexts, "replacements": replacements, "seed": int(seed),
              "eps": float(eps), "max_states": int(max_states), "exact": bool(exact)}
    if search_budget:
        # capped as certify caps it: at a tabulation the exact suprema are known
        config["search_budget"] = min(positive_budget(search_budget, "search-budget"),
                                      table_queries(n, int(resolved.q)))
    with OutputFolder(out, "alpha-curve", config, OUTPUTS, "alpha_curve.jsonl", command):
        log = ResultsLog(out / "alpha_curve.jsonl", config, command)
        cell = dict(config, key=model, device=device)
        (result,) = run_cells(log, alpha_cell, [cell], executor or LocalExecutor(),
                              "alpha-curve", progress)
        write_csv(out / "alpha_curve.csv", result["rows"], COLUMNS)
        atomic_write_text(out / "alpha_curve.json", dumps({"config": config, **result}) + "\n")
        plot_alpha_curve(result, out / "alpha_curve.png")
    return result


def plot_alpha_curve(result: dict, path: str | os.PathLike[str]) -> None:
    """alpha_row/col/spectral and the spectral radius against tau, the t_mix certificates, and
    the bracket: the rigorous lower and upper curves of the spectral radius with the gap
    shaded between ``tau_no_cert`` and ``tau_cert``."""
    plt = pyplot()
    rows = result["rows"]
    taus = [r["tau"] for r in rows]
    fig, (left, right, third) = plt.subplots(1, 3, figsize=(15, 3.8), layout="tight")
    for key, label in (("alpha_row", "row sum (paper)"), ("alpha_col", "column sum"),
                       ("alpha_spectral", "largest singular value"),
                       ("spectral_radius", "spectral radius")):
        left.plot(taus, [_as_float(r[key]) for r in rows], marker="o", label=label)
    left.axhline(1.0, color="k", lw=0.8, ls="--")
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("tau")
    left.set_ylabel("alpha(tau)" + (" (lower bound)" if rows[0]["is_lower_bound"] else ""))
    left.legend(fontsize=7)
    for key, label in (("tmix_row", "row"), ("tmix_col", "column"),
                       ("tmix_spectral", "spectral"), ("tmix_matrix_power", "matrix power")):
        vals = [_as_float(r[key]) for r in rows]
        right.plot(taus, [v if math.isfinite(v) else np.nan for v in vals], marker="o",
                   label=f"{'estimate (no bound)' if rows[0]['is_lower_bound'] else 'bound'}: "
                   f"{label}")
    exact = [r["exact_tmix"] for r in rows]
    if any(v is not None for v in exact):
        right.plot(taus, [np.nan if v is None else v for v in exact], "k*-", label="exact t_mix")
    upper = [_as_float(r["tmix_upper"]) if r.get("tmix_upper") is not None else np.nan
             for r in rows]
    if any(math.isfinite(v) for v in upper):
        right.plot(taus, [v if math.isfinite(v) else np.nan for v in upper], "rs--",
                   label="proved (upper bound on C)")
    none = [r["tau"] for r in rows if not math.isfinite(_as_float(r["tmix_matrix_power"]))]
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("tau" + ("" if not none else  # points that cannot be drawn: say so
                              "\n(no certificate, infinite bound, at tau = "
                              + ", ".join(f"{t:g}" for t in none) + ")"))
    right.set_ylabel("t_mix(1/4) (steps)")
    right.legend(fontsize=7)
    plot_bracket(third, result.get("bracket"), taus)
    fig.suptitle(f"{result['model']} (n={result['n']}, q={result['q']})", fontsize=9)
    save_figure(fig, path)
    plt.close(fig)


def plot_bracket(ax: Any, bracket: dict | None, taus: Sequence[float]) -> None:
    """The bracket on ``ax``: lower and upper bounds on the spectral radius of ``c(tau)``, the
    gap between them shaded, ``tau_no_cert`` and ``tau_cert`` marked."""
    if not bracket:
        ax.set_axis_off()
        return
    grid = np.array(bracket["grid"], dtype=float)
    up = np.array([_as_float(v) if v is not None else np.nan for v in bracket["rho_upper"]])
    low = np.array([_as_float(v) if v is not None else np.nan for v in bracket["rho_lower"]])
    marks = [t for t in (bracket.get("tau_no_cert"), bracket.get("tau_cert")) if t is not None]
    lo_t = min([*taus, *marks]) / 2.0
    hi_t = max([*taus, *marks]) * 2.0
    keep = (grid >= lo_t) & (grid <= hi_t)
    g, u, lo = grid[keep], up[keep], low[keep]
    ok = np.isfinite(u)
    ax.plot(g[ok], u[ok], "r-", marker=".", label=f"upper ({bracket['upper_method']})")
    okl = np.isfinite(lo) & (lo > 0)
    ax.plot(g[okl], lo[okl], "b-", marker=".", label=f"lower ({bracket['lower_method']})")
    both = ok & okl
    if both.any():
        ax.fill_between(g[both], lo[both], u[both], color="0.85", label="not decided")
    ax.axhline(1.0, color="k", lw=0.8, ls="--")
    for t, name, colour in ((bracket.get("tau_no_cert"), "tau_no_cert", "b"),
                            (bracket.get("tau_cert"), "tau_cert", "r")):
        if t is not None:
            ax.axvline(t, color=colour, lw=0.8, ls=":", label=f"{name} = {t:.3g}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("tau")
    ax.set_ylabel("spectral radius of c(tau): bounds")
    ax.legend(fontsize=7)


__all__ = ["COLUMNS", "CachedScores", "alpha_cell", "alpha_curve", "bracket_of_curve",
           "certificate_thresholds", "no_certificate_thresholds", "plot_alpha_curve",
           "plot_bracket"]
