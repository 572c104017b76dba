"""Searched influence against the exact supremum and uniform sampling, at honest budgets.

Budget: *distinct conditional queries* (rows sent to the model: a context ``x_{-i}`` and a site
``i``; one query at site ``i`` serves every entry ``(i, j)``), as a fraction of the
``T = n q^(n-1)`` that tabulate every conditional of the model
(:func:`glauber.core.enumeration.table_queries`). At ``T`` the exact value is known, so only
fractions below 1 mean anything.

Models: for every family of :data:`glauber.testing.FAMILIES` (Ising, Curie–Weiss, Potts,
planted, random joint, asymmetric Ising, random table, restricted windows, clock), ``models``
draws of ``glauber.testing.models(max_states=4096, families=F)`` with at least :data:`MIN_STATES`
states, one seeded Hypothesis run per model (so the draws are independent). The
restricted family is drawn with ``q <= 16``: a window's base holds at least one site more
than the window, and above that a random-table or random-joint base exceeds the
``2^16`` states those models allow (glauber.testing then raises while drawing). The
temperature is on the scale of each model's interactions (:func:`model_temperature`). Exact
``C`` and the conditionals come from :class:`~glauber.exact.ExactChain`.

Methods, at budgets of 1%, 3% and 10% of ``T``, in the same run:

- the search (:func:`glauber.estimators.search_influence`), ``target="entries"`` for the entry
  fraction and ``target="rho"`` (as certify runs it) for the spectral radius;
- *uniform queries*: ``B`` distinct queries drawn uniformly from the ``T``, every pair among
  them that differs at one site read (what a memo of random queries holds);
- *uniform stars*: the sampling of :func:`glauber.estimators.influence` with every replacement
  (at a uniform context ``x`` and a uniform site ``i``: ``x`` and ``x^{j->b}`` for every ``j``
  and ``b``), star after star until ``B`` distinct queries (the last one cut short).

The two uniform methods are computed from the exact conditionals (what their queries would
return). Printed per family and budget: the fraction of non-zero exact entries reached to 95%
(``C >= 0.95 c``), the fraction of models with a non-zero exact spectral radius whose
``rho(C) >= 0.95 rho(c)``, and two references:

- the *counting bound* (rigorous, for any method whose values are realised by witnesses): a
  witness of entry ``(i, j)`` is two queried contexts at site ``i`` that differ at ``j``, and
  witnesses in ``k`` distinct directions form a forest (a cycle would change some site twice),
  so they need ``k + 1`` queries at ``i``; the bound fills the sites with most non-zero entries
  first;
- *stars per site* ``S = f q^(n-1) / (1 + (n-1)(q-1))`` (the budget ``f T`` in stars of one
  site): the additive surrogate of a site needs one star (its unknowns); below ``S = 1`` the
  search cannot learn every site's dependence on its context. Models are also split by ``n``:
  with ``n = 2`` each entry is one line of ``q`` conditionals and a search that asked a
  fraction ``f_i`` of site ``i``'s contexts has seen at most a fraction ``f_i`` of the pairs of
  each entry ``(i, j)`` (each of its ``m`` points lies on one ``j``-line, whose pairs number
  ``<= m (q - 1) / 2``), whatever the method; the *near-max pairs* column gives, per entry, the
  number ``K`` of pairs within 5% of the supremum, and the *blind reach* the fraction of
  entries with ``f K >= 1`` (an estimate of what a method blind to unqueried conditionals
  reaches; exact in expectation for exchangeable families such as random tables).

And a third, *any method*: on the random tables with ``n = 2`` (i.i.d. rows, independent
sites) :func:`glauber.theory.search_ceiling.iid_rows_ceiling` gives the exact largest
probability with which any method of the budget reaches each entry and ``rho`` (statement 4 of
docs/theory.md, "Searching Definition 2 at a budget"); every other entry and model is counted as
reached, so the column is what any method reaches at most in expectation, and the last line of
each table the probability that any method reaches ``rho`` on :data:`TARGET` of all models.

Run ``python benchmarks/influence_search.py`` (``--help`` for options; 25 models per family
by default, 225 in all: 67 s on 2 cores under a load average of 10). The measured table is in
the docstring of :mod:`glauber.estimators.influence_search`.
"""

from __future__ import annotations

import argparse
import sys
import time
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.report import publish, row
from glauber.core.enumeration import table_queries
from glauber.estimators.influence_search import search_influence
from glauber.exact import ExactChain
from glauber.testing import FAMILIES, models, sample
from glauber.theory.contraction import spectral_radius
from glauber.theory.search_ceiling import iid_rows_ceiling

#: Reached-to fraction of an entry / of the spectral radius, and the fraction of all models on
#: which the ceiling's probability of reaching rho is computed.
REACH, TARGET = 0.95, 0.90
#: The targets at 10% on the models with ``n >= 3`` (entries, models reaching rho), checked in
#: the summary rows: attainable there, unlike ``n = 2`` (docs/theory.md, statement 4).
TARGET_GROUP, TARGETS = "n >= 3", {"entry_fraction": 0.90, "rho_fraction": 0.80}
#: Fewest and most states of a drawn model.
MIN_STATES, MAX_STATES = 64, 4096
#: Budgets, as fractions of the distinct queries that tabulate the model.
FRACTIONS = (0.01, 0.03, 0.1)
#: Largest vocabulary of a restricted window (its base must stay within 2^16 states).
RESTRICTED_MAX_Q = 16
METHODS = ("search", "uniform_queries", "uniform_stars")
#: Families whose conditionals are i.i.d. across contexts and independent across sites, so that
#: :func:`glauber.theory.search_ceiling.iid_rows_ceiling` bounds every method (with ``n = 2``).
IID_ROW_FAMILIES = ("random-table",)
#: Models drawn per family: 25 x the 9 families of glauber.testing.FAMILIES = 225 models.
MODELS_PER_FAMILY = 25


def draw_models(family: str, count: int, seed: int = 0) -> list:
    """``count`` independent draws of ``family``: the second example of a seeded Hypothesis
    run per model (its first is the minimal example)."""
    extra = {"max_q": RESTRICTED_MAX_Q} if family == "restricted" else {}
    strategy = models(max_states=MAX_STATES, families=family, **extra).filter(
        lambda m: m.q ** m.n >= MIN_STATES)
    base = seed * 1_000_003 + zlib.crc32(family.encode()) % 100_003
    return [sample(strategy, 2, seed=base + k)[-1] for k in range(count)]


def model_temperature(model: Any, rng: np.random.Generator) -> float:
    """``f max_i sum_j Delta_ij / 4`` (Corollary 7's threshold) with ``f ~ U(0.3, 1.5)``,
    at least 0.05."""
    Delta = ExactChain(model, 1.0).oscillation_matrix()
    return max(float(rng.uniform(0.3, 1.5)) * float(Delta.sum(axis=1).max()) / 4.0, 0.05)


def _site_slices(P: np.ndarray, i: int, j: int, n: int, q: int) -> np.ndarray:
    """Conditionals at site ``i`` over its contexts (``x_i = 0``), with site ``j`` as an axis:
    ``[lines, q (value of x_j), q]``."""
    ctx = P[i].reshape((q,) * n + (q,))
    ctx = np.take(ctx, 0, axis=i)  # x_i is masked: one context per x_{-i}
    axis = j - (j > i)
    return np.moveaxis(ctx, axis, n - 2).reshape(-1, q, q)


def sampled_influence(P: np.ndarray, asked: list[np.ndarray]) -> np.ndarray:
    """``C`` read off queried contexts: for each site ``i``, every pair of ``asked[i]`` (a
    boolean mask over its ``q^(n-1)`` contexts, mixed radix over the sites other than ``i``)
    that differs at one site."""
    n, q = P.shape[0], P.shape[2]
    C = np.zeros((n, n))
    for i in range(n):
        mask = asked[i].reshape((q,) * (n - 1))
        for j in range(n):
            if j == i or not asked[i].any():
                continue
            lines = _site_slices(P, i, j, n, q)
            m = np.moveaxis(mask, j - (j > i), n - 2).reshape(-1, q)
            a, b = np.triu_indices(q, 1)
            tv = 0.5 * np.abs(lines[:, a] - lines[:, b]).sum(axis=-1)
            seen = m[:, a] & m[:, b]
            C[i, j] = float(tv[seen].max()) if seen.any() else 0.0
    return C


def near_max_pairs(P: np.ndarray, C: np.ndarray) -> np.ndarray:
    """``K[i, j]``: pairs of contexts differing at ``j`` whose TV at ``i`` is within 5% of
    ``c_ij`` (0 where ``c_ij = 0``)."""
    n, q = P.shape[0], P.shape[2]
    K = np.zeros((n, n), dtype=np.int64)
    a, b = np.triu_indices(q, 1)
    for i in range(n):
        for j in range(n):
            if j != i and C[i, j] > 1e-12:
                lines = _site_slices(P, i, j, n, q)
                tv = 0.5 * np.abs(lines[:, a] - lines[:, b]).sum(axis=-1)
                K[i, j] = int(np.sum(tv >= REACH * C[i, j]))
    return K


def uniform_queries(n: int, q: int, budget: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Masks of ``budget`` distinct queries drawn uniformly from the ``n q^(n-1)``."""
    per_site = q ** (n - 1)
    picks = rng.choice(n * per_site, size=budget, replace=False)
    asked = [np.zeros(per_site, dtype=bool) for _ in range(n)]
    for i in range(n):
        asked[i][picks[picks // per_site == i] % per_site] = True
    return asked


def uniform_stars(n: int, q: int, budget: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Masks of stars at uniform (context, site) pairs until ``budget`` distinct queries."""
    per_site = q ** (n - 1)
    weights = q ** np.arange(n - 2, -1, -1)
    asked = [np.zeros(per_site, dtype=bool) for _ in range(n)]
    used = 0
    while used < budget:
        i = int(rng.integers(n))
        x = rng.integers(q, size=n - 1)  # the context of the sites other than i
        centre = int(x @ weights)
        points = [centre] + [centre + (c - x[p]) * int(weights[p])
                             for p in range(n - 1) for c in range(q) if c != x[p]]
        for pt in points:
            if used < budget and not asked[i][pt]:
                asked[i][pt] = True
                used += 1
    return asked


def counting_bound(exact: np.ndarray, budget: int) -> int:
    """Most non-zero entries any witness-producing method realises with ``budget`` queries:
    a site with ``k`` realised entries needs ``k + 1`` queries (see the module docstring);
    sites with most non-zero entries first."""
    n = exact.shape[0]
    nonzero = ~np.eye(n, dtype=bool) & (exact > 1e-12)
    left, got = budget, 0
    for z in sorted(nonzero.sum(axis=1).tolist(), reverse=True):
        if z == 0 or left < 2:
            break
        take = min(z, left - 1)
        got, left = got + take, left - take - 1
    return got


def compare(C: np.ndarray, exact: np.ndarray) -> dict:
    """Entries reached to :data:`REACH` (non-zero exact ones) and whether rho is reached."""
    off = ~np.eye(exact.shape[0], dtype=bool) & (exact > 1e-12)
    rho, rho_exact = spectral_radius(C), spectral_radius(exact)
    return {"entries": int(off.sum()), "reached": int(np.sum(C[off] >= REACH * exact[off])),
            "rho_reached": bool(rho >= REACH * rho_exact - 1e-12),
            "rho_ratio": rho / rho_exact if rho_exact > 0 else 1.0}


def one_model(family: str, model: Any, seed: int, fractions: Sequence[float]) -> dict:
    """Search, uniform sampling and the references on one model at each budget."""
    rng = np.random.default_rng(seed)
    tau = model_temperature(model, rng)
    n, q = int(model.n), int(model.q)
    chain = ExactChain(model, tau)
    exact, P = chain.influence_matrix(), chain.conditionals()
    K = near_max_pairs(P, exact)
    table = table_queries(n, q)
    off = ~np.eye(n, dtype=bool) & (exact > 1e-12)
    out: dict = {"family": family, "spec": repr(model.spec), "n": n, "q": q, "tau": tau,
                 "table": table, "rho_exact": spectral_radius(exact),
                 "near_max_pairs": K[off].tolist(), "budgets": {}}
    for f in fractions:
        budget = max(1, int(f * table))
        b: dict = {"budget": budget, "fraction": budget / table,
                   "stars_per_site": budget / n / (1 + (n - 1) * (q - 1)),
                   "counting_bound": counting_bound(exact, budget),
                   "blind_reach": int(np.sum(budget / table * K[off] >= 1))}
        start = time.perf_counter()
        ent = search_influence(model, tau, budget=budget, seed=seed, target="entries")
        rho = search_influence(model, tau, budget=budget, seed=seed, target="rho")
        b["search_seconds"] = time.perf_counter() - start
        if family in IID_ROW_FAMILIES and n == 2:
            ceiling = iid_rows_ceiling([_site_slices(P, i, 1 - i, n, q)[0] for i in range(n)],
                                       budget, REACH)
            b["ceiling"] = {"entries": [ceiling.entries[i] for i in range(n)
                                        if exact[i, 1 - i] > 1e-12], "rho": ceiling.rho}
        if max(ent.queries, rho.queries) > budget:  # never: the search's own guarantee
            raise AssertionError(f"{model.spec}: the search asked more than {budget} queries")
        b["search"] = dict(compare(ent.C, exact), rho_reached=compare(rho.C, exact)[
            "rho_reached"], queries=ent.queries)
        for name, draw in (("uniform_queries", uniform_queries), ("uniform_stars", uniform_stars)):
            C = sampled_influence(P, draw(n, q, budget, np.random.default_rng(seed)))
            b[name] = dict(compare(C, exact), queries=budget)
        out["budgets"][f] = b
    return out


def summarise(models_: list[dict], fraction: float) -> dict:
    """Entry and rho fractions of every method (and the references) at one budget."""
    nontrivial = [m for m in models_ if m["rho_exact"] > 1e-12]
    entries = sum(m["budgets"][fraction]["search"]["entries"] for m in models_)
    out: dict = {"models": len(models_), "nontrivial": len(nontrivial), "entries": entries}
    for method in METHODS:
        reached = sum(m["budgets"][fraction][method]["reached"] for m in models_)
        out[method] = {
            "entry_fraction": reached / entries if entries else float("nan"),
            "rho_fraction": (float(np.mean([m["budgets"][fraction][method]["rho_reached"]
                                            for m in nontrivial])) if nontrivial
                             else float("nan")),
        }
    for ref in ("counting_bound", "blind_reach"):
        out[ref] = (sum(m["budgets"][fraction][ref] for m in models_) / entries if entries
                    else float("nan"))
    out["ceiling"] = ceiling(models_, nontrivial, entries, fraction)
    return out


def ceiling(models_: list[dict], nontrivial: list[dict], entries: int, fraction: float) -> dict:
    """What any method can reach in expectation: the bounds of statement 4 (docs/theory.md) on
    the models that carry them, every other entry and model counted as reached. ``p_target`` is
    the chance that any method reaches rho on :data:`TARGET` of the models: at least the
    missing successes must come from the bounded models, which succeed independently (their
    draws are), each with probability at most its bound (a Poisson-binomial tail)."""
    bounded = [m["budgets"][fraction]["ceiling"] for m in models_
               if "ceiling" in m["budgets"][fraction]]
    rho_bounded = [m["budgets"][fraction]["ceiling"]["rho"] for m in nontrivial
                   if "ceiling" in m["budgets"][fraction]]
    lost_entries = sum(len(c["entries"]) - sum(c["entries"]) for c in bounded)
    tail = np.zeros(len(rho_bounded) + 1)
    tail[0] = 1.0
    for p in rho_bounded:  # distribution of the number of bounded successes
        tail[1:] = tail[1:] * (1 - p) + tail[:-1] * p
        tail[0] *= 1 - p
    need = int(np.ceil(TARGET * len(nontrivial) - 1e-9)) - (len(nontrivial) - len(rho_bounded))
    return {
        "models": len(bounded),
        "entry_fraction": 1 - lost_entries / entries if entries else float("nan"),
        "rho_fraction": (1 - (len(rho_bounded) - sum(rho_bounded)) / len(nontrivial)
                         if nontrivial else float("nan")),
        "p_target": float(tail[max(need, 0):].sum()) if nontrivial else float("nan"),
    }


def groups(per_model: list[dict], fraction: float) -> dict[str, list[dict]]:
    """All models, then by family, by ``n`` and by stars per site ``S`` at ``fraction`` (a
    model with ``S >= 1`` has ``n >= 3``: with ``n = 2``, ``S = f q / q < 1`` below ``f = 1``)."""
    def where(label: str, keep: Any) -> tuple[str, list[dict]]:
        return label, [m for m in per_model if keep(m)]

    def stars(m: dict) -> float:
        return m["budgets"][fraction]["stars_per_site"]

    parts = [where("all", lambda m: True)]
    parts += [where(f"family {f}", lambda m, f=f: m["family"] == f)
              for f in dict.fromkeys(m["family"] for m in per_model)]
    parts += [where("n = 2", lambda m: m["n"] == 2), where("n >= 3", lambda m: m["n"] >= 3),
              where("S < 1", lambda m: stars(m) < 1), where("S >= 1", lambda m: stars(m) >= 1),
              where("n >= 3, S < 1", lambda m: m["n"] >= 3 and stars(m) < 1)]
    return {label: ms for label, ms in parts if ms}


def run(models_per_family: int = MODELS_PER_FAMILY, seed: int = 0,
        fractions: Sequence[float] = FRACTIONS,
        families: Sequence[str] | None = None) -> dict:
    """Search vs uniform sampling on ``models_per_family`` models of every family; returns the
    per-model results, the summaries by group and budget, and summary ``rows``."""
    names = list(families or FAMILIES)
    per_model = []
    for family in names:
        for k, model in enumerate(draw_models(family, models_per_family, seed)):
            per_model.append(one_model(family, model, seed * 100_003 + k, fractions))
    result: dict = {"models_per_family": models_per_family, "families": names,
                    "fractions": list(fractions), "per_model": per_model,
                    "summary": {f: {g: summarise(ms, f) for g, ms in groups(per_model, f).items()}
                                for f in fractions}}
    result["rows"] = summary_rows(result)
    return result


def summary_rows(result: dict) -> list[dict]:
    """Rows: entry and rho fractions of the search against the better uniform method, at every
    budget, over all models, those with ``n >= 3`` (the checked targets :data:`TARGETS` at 10%)
    and these split by stars per site ``S``, each with its references."""
    labels = {"all": "all", "n >= 3": "n >= 3",
              "S >= 1": ">= 1 star per site (so n >= 3)",
              "n >= 3, S < 1": "n >= 3, < 1 star per site"}
    rows = []
    for f in result["fractions"]:
        for group, label in labels.items():
            s = result["summary"][f].get(group)
            if s is None:
                continue
            for key, name in (("entry_fraction", "entries >= 95% of exact"),
                              ("rho_fraction", "models with rho >= 95% of exact")):
                base = max(s["uniform_queries"][key], s["uniform_stars"][key])
                checked = f == 0.1 and group == TARGET_GROUP
                rows.append(row(
                    f"search: {name} ({s['models']} toy models, {label}, budget {f:.0%} of the "
                    "distinct queries)", s["search"][key], "fraction", base,
                    s["search"][key] / base if base > 0 else None,
                    target=f">= {TARGETS[key]}" if checked else "",
                    met=(s["search"][key] >= TARGETS[key]) if checked else None,
                    note=f"uniform queries {s['uniform_queries'][key]:.3f}, uniform stars "
                         f"{s['uniform_stars'][key]:.3f}"
                         + (f"; counting bound {s['counting_bound']:.3f}"
                            if key == "entry_fraction" else "")
                         + f"; any method at most {s['ceiling'][key]:.3f} in expectation"
                         + (f", {TARGET} with probability <= {s['ceiling']['p_target']:.2g}"
                            if key == "rho_fraction" and group == "all" else ""),
                ))
    return rows


def where_lost(result: dict, fraction: float = 0.1) -> str:
    """Where the targets on ``n >= 3`` are met and where they are lost, at ``fraction``: the
    search against :data:`TARGETS` on the models with at least one star per site and below."""
    summary = result["summary"].get(fraction, {})
    parts = []
    for group in (TARGET_GROUP, "S >= 1", "n >= 3, S < 1"):
        s = summary.get(group)
        if s is None:
            continue
        budgets = [m["budgets"][fraction]["budget"] for m in result["per_model"]
                   if group.endswith("S < 1") and m["n"] >= 3
                   and m["budgets"][fraction]["stars_per_site"] < 1]
        verdict = ", ".join(
            f"{name} {s['search'][key]:.3f} ({'met' if s['search'][key] >= TARGETS[key] else 'lost'}"
            f" against {TARGETS[key]})"
            for key, name in (("entry_fraction", "entries"), ("rho_fraction", "rho")))
        extra = (f"; budgets of {min(budgets)}-{max(budgets)} queries, below one star "
                 "(1 + (n-1)(q-1) queries) per site") if budgets else ""
        parts.append(f"  {group} ({s['models']} models): {verdict}{extra}")
    return (f"targets at {fraction:.0%} on n >= 3:\n" + "\n".join(parts)) if parts else ""


def print_tables(result: dict) -> None:
    """One table per budget: every group, every method, the references."""
    for f in result["fractions"]:
        print(f"\nbudget {f:.0%} of the distinct queries (n q^(n-1))")
        print(f"{'group':26s} {'models':>6s} {'entries':>7s} | {'search':>13s} "
              f"{'unif. queries':>13s} {'unif. stars':>13s} | {'count bound':>11s} "
              f"{'blind reach':>11s} {'any method':>13s}")
        for group, s in result["summary"][f].items():
            cells = [f"{s[m]['entry_fraction']:6.3f}/{s[m]['rho_fraction']:<6.3f}"
                     for m in METHODS + ("ceiling",)]
            print(f"{group:26s} {s['models']:6d} {s['entries']:7d} | {' '.join(cells[:-1])} | "
                  f"{s['counting_bound']:11.3f} {s['blind_reach']:11.3f} {cells[-1]}")
        s = result["summary"][f]["all"]
        print(f"any method reaches rho on {TARGET:.0%} of all models with probability "
              f"<= {s['ceiling']['p_target']:.2g} (statement 4 on {s['ceiling']['models']} "
              "random tables with n = 2)")
    lost = where_lost(result)
    if lost:
        print("\n" + lost)
    print("\ncells: entry fraction / rho fraction (models with rho(c) > 0); 'any method': "
          "in expectation at most this (docs/theory.md, statement 4)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=MODELS_PER_FAMILY,
                        help="models per family (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--families", help="comma-separated families (default: all)")
    parser.add_argument("--fractions", default=",".join(str(f) for f in FRACTIONS),
                        help="budgets as fractions of n q^(n-1), comma-separated")
    parser.add_argument("--json", help="also write the results to this JSON file")
    args = parser.parse_args(argv)
    result = run(args.models, args.seed, [float(v) for v in args.fractions.split(",")],
                 args.families.split(",") if args.families else None)
    print_tables(result)
    publish(result, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
