"""Other domains beside antibodies: a T-cell receptor (SCEPTR) and reaction SMILES (rxnmapper,
rxnfp).

Two pieces of docs/results.md ("In context") that set them beside the antibody models:

* **the rectangle test on whole sequences** (Proposition 4, the paper's §4 protocol: random
  rectangles, replacements drawn from the model's own top-50 predictions, tau = 1): AntiBERTy
  and Sapiens on the trastuzumab chains, SCEPTR on its example TCR
  (:data:`glauber.mlm_backend.sequences.SCEPTR_EXAMPLE_TCR`, 57 residues in six CDR loops),
  rxnmapper (ALBERT) and rxnfp (BERT) on the shipped reaction
  (:data:`glauber.mlm_backend.sequences.REACTION_SMILES`, 54 tokens, 576 resampled), every
  site free (:func:`rectangle_entry`);
* **the exact window of a reaction model** (:func:`reaction_window`): a chain over the full
  576-token vocabulary has ``576^3`` states on 3 sites, beyond any enumeration (2 sites already
  hold 331,776). The exact object is the Glauber chain of the model's conditional *renormalised
  on an alphabet* ``A`` (``HFMaskedLM(allowed_tokens=A)``): a uniform site of the window,
  resampled from ``softmax(s_i(a; x_{-i}) / tau)`` over ``a in A`` only. ``A`` is the 20 most
  frequent tokens (:func:`glauber.mlm_backend.reactions.frequent_tokens`) plus the reaction's
  two tokens outside them, ``[O-]`` and ``[K+]``, so that the frozen rest of the reaction is a
  state (22 tokens, ``22^3 = 10,648`` states, a score table of ``3 * 22^2 = 1,452`` rows).
  :func:`alphabet_mass` says how much of the full conditional ``A`` holds at the window.

:func:`glauber.experiments.windows.run` and :func:`glauber.experiments.brackets.run` compute
them into their folders; :func:`rectangles_markdown` renders the table.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

import numpy as np

from glauber.core.restrict import RestrictedModel, restrict
from glauber.experiments.common import markdown_table

#: Whole sequences of the rectangle table: label -> (model, shipped context).
#: (AntiBERTy's whole chains are the ``full`` row of the windows section's rectangle sweep.)
SEQUENCES: dict[str, tuple[str, str]] = {
    "sapiens-vh / trastuzumab-vh": ("sapiens-vh", "trastuzumab-vh"),
    "sapiens-vl / trastuzumab-vl": ("sapiens-vl", "trastuzumab-vl"),
    "sceptr / sceptr-example": ("sceptr", "sceptr-example"),
    "rxnmapper / reaction": ("rxnmapper", "reaction"),
    "rxnfp / reaction": ("rxnfp", "reaction"),
}
#: Rectangles per sequence, and the paper's top-k replacement set.
RECTANGLES = 300
TOPK = 50
#: The paper's mean |delta| for five English masked LMs (§4, Table 1), and for GPT-2.
PAPER_ENGLISH = (0.64, 0.80)
PAPER_GPT2 = 0.0
#: Frequent tokens in a reaction window's alphabet, and the window (1-based positions of the
#: reaction: ``S c 1``, the product's thioether sulfur and the ring carbon it bonds to).
FREQUENT = 20
REACTION_SITES = "45-47"


def reaction_window(model_name: str, sites: str = REACTION_SITES,
                    frequent: int = FREQUENT) -> RestrictedModel:
    """The exact window of a reaction model (module docstring): ``model_name`` (``rxnmapper``
    or ``rxnfp``) over :func:`~glauber.mlm_backend.reactions.window_alphabet`, restricted to
    ``sites`` (1-based, as ``--sites``) of the shipped reaction, the rest frozen.

    Raises
    ------
    MissingDependencyError
        If the package is not installed.
    """
    from glauber.mlm_backend import load_model
    from glauber.mlm_backend.reactions import window_alphabet
    from glauber.mlm_backend.sequences import REACTION_SMILES
    from glauber.models import parse_sites

    alphabet = window_alphabet(REACTION_SMILES, frequent)
    whole = load_model(model_name, allowed_tokens=alphabet)
    context = np.asarray(whole.encode(REACTION_SMILES), dtype=np.int64)
    whole = whole.with_length(len(context))
    whole.name = f"{model_name} (alphabet of {len(alphabet)})"
    return restrict(whole, context, parse_sites(sites, len(context)))


def alphabet_mass(model_name: str, window: RestrictedModel) -> list[float]:
    """At each site of ``window``, the probability that the full-vocabulary conditional of
    ``model_name`` at tau = 1, in the shipped reaction, gives to the window's alphabet."""
    import torch

    from glauber.mlm_backend import load_model
    from glauber.mlm_backend.sequences import REACTION_SMILES

    full = load_model(model_name)
    context = full.encode(REACTION_SMILES)
    full = full.with_length(len(context))
    sites = torch.as_tensor(window.sites)
    with torch.inference_mode():
        probs = torch.softmax(full.scores(context[None].expand(len(sites), -1), sites).double(),
                              dim=1)
    index = {label: k for k, label in enumerate(full.labels)}
    inside = [index[label] for label in window.labels]
    return [float(p) for p in probs[:, inside].sum(1)]


def rectangle_entry(label: str, rectangles: int = RECTANGLES, seed: int = 0) -> dict:
    """The rectangle test on the whole sequence of :data:`SEQUENCES` ``[label]`` at tau = 1
    (every site free, top-:data:`TOPK` replacements)."""
    from glauber.estimators import rectangle_test
    from glauber.models import resolve_model

    model_name, context = SEQUENCES[label]
    model = resolve_model(f"{model_name}@{context}")
    started = time.perf_counter()
    r = rectangle_test(model, model.default_states(), 1.0, rectangles, "topk", TOPK, seed)
    delta = np.abs(np.asarray(r.rectangles.delta, dtype=float))
    return {"label": label, "model": model_name, "context": context, "n": int(model.n),
            "q": int(model.q), "rectangles": int(delta.size), "topk": TOPK, "seed": seed,
            "mean_abs_delta": float(delta.mean()), "sd_abs_delta": float(delta.std(ddof=1)),
            "median_abs_delta": float(np.median(delta)), "max_abs_delta": float(delta.max()),
            "n_above_bound": int(np.asarray(r.rectangles.above_bound).sum()),
            "seconds": time.perf_counter() - started}


def run_rectangles(data: dict | None, save: Callable[[dict], Any],
                   log: Callable[[str], Any]) -> None:
    """Compute every entry of :data:`SEQUENCES` missing from ``data`` (``{"rows": [...]}``),
    calling ``save`` after each (a rerun resumes); a model that cannot load is listed under
    ``missing`` with its reason."""
    data = data or {"rows": [], "missing": []}
    data["missing"] = []
    have = {r["label"] for r in data["rows"]}
    for label in SEQUENCES:
        if label in have:
            continue
        log(f"rectangles {label}")
        try:
            row = rectangle_entry(label)
        except ImportError as exc:  # MissingDependencyError: a package not installed
            data["missing"].append(f"{label}: {exc}")
            continue
        log(f"  mean |delta| {row['mean_abs_delta']:.3g} ({row['seconds']:.0f} s)")
        data["rows"].append(row)
        data["rows"].sort(key=lambda r: list(SEQUENCES).index(r["label"]))
        save(data)
    save(data)


def place(value: float, others: dict[str, float]) -> str:
    """Where ``value`` lies among ``others`` (label -> value), in words: ``"above every one"``,
    ``"below every one"``, or ``"between <label> (<v>) and <label> (<v>)"`` (the nearest below
    and above).

    Examples
    --------
    >>> place(0.5, {"a": 0.2, "b": 0.9, "c": 0.4})
    'between c (0.4) and b (0.9)'
    >>> place(1.0, {"a": 0.2}), place(0.1, {"a": 0.2})
    ('above every one', 'below every one')
    """
    below = {k: v for k, v in others.items() if v <= value}
    above = {k: v for k, v in others.items() if v > value}
    if not above:
        return "above every one"
    if not below:
        return "below every one"
    lo = max(below, key=below.__getitem__)
    hi = min(above, key=above.__getitem__)
    return f"between {lo} ({below[lo]:.2g}) and {hi} ({above[hi]:.2g})"


def tcr_sentence(rows: Sequence[dict], antiberty_full: float | None = None) -> str:
    """What SCEPTR's whole-TCR rectangle test says beside the antibody and reaction models
    (empty without its row): its mean ``|delta|`` placed among theirs (:func:`place`), and
    whether all of the models lie on the same side of the paper's English range.

    ``antiberty_full``: AntiBERTy's mean ``|delta|`` on its whole chains (the ``full`` row of
    the windows section's rectangle sweep), which this table does not hold.
    """
    tcr = [r for r in rows if r["model"] == "sceptr"]
    if not tcr:
        return ""
    t = tcr[0]
    others = {r["model"]: r["mean_abs_delta"] for r in rows if r["model"] != "sceptr"}
    if antiberty_full is not None:
        others["antiberty"] = float(antiberty_full)
    anti = {k: v for k, v in others.items() if k in ("antiberty", "sapiens-vh", "sapiens-vl")}
    chem = {k: v for k, v in others.items() if k not in anti}
    lo, hi = PAPER_ENGLISH
    where = ("inside" if lo <= t["mean_abs_delta"] <= hi else
             "below" if t["mean_abs_delta"] < lo else "above")
    parts = [f"\nOn the TCR (57 residues, every one free) SCEPTR gives mean |δ| = "
             f"{t['mean_abs_delta']:.2f} ({t['n_above_bound']} of {t['rectangles']} rectangles "
             f"above their rounding bound): incompatible, as every masked LM here"]
    if anti:
        parts.append(f"; among the antibody models on their whole chains it is "
                     f"{place(t['mean_abs_delta'], anti)}")
    if chem:
        parts.append(f", among the reaction models {place(t['mean_abs_delta'], chem)}")
    parts.append(f"; {where} the paper's {lo}–{hi} for English MLMs.\n")
    return "".join(parts)


def rectangles_markdown(data: dict, antiberty_full: float | None = None) -> str:
    """The table of whole-sequence rectangle tests and what it says against the paper
    (``antiberty_full``: see :func:`tcr_sentence`)."""
    rows = data["rows"]
    cells = [(r["label"], r["n"], r["q"], f"{r['mean_abs_delta']:.3g} ± {r['sd_abs_delta']:.2g}",
              f"{r['median_abs_delta']:.3g}", f"{r['max_abs_delta']:.3g}",
              f"{r['n_above_bound']} / {r['rectangles']}", f"{r['seconds']:.0f}")
             for r in rows]
    table = markdown_table(("model / sequence", "n", "q", "mean \\|δ\\| ± sd", "median",
                            "max", "above rounding bound", "s"), cells)
    lo, hi = PAPER_ENGLISH
    chem = [r for r in rows if r["context"] == "reaction"]
    text = ""
    if chem:
        inside = [r["label"] for r in chem if lo <= r["mean_abs_delta"] <= hi]
        where = [f"{r['model']} {r['mean_abs_delta']:.2f}" for r in chem]
        text = (
            f"\nOn the reaction the two chemistry models give mean |δ| = {', '.join(where)}: "
            + ("inside" if len(inside) == len(chem) else "outside" if not inside else
               f"partly inside ({', '.join(inside)})")
            + f" the paper's {lo}–{hi} for five English MLMs, and far from GPT-2's "
            f"{PAPER_GPT2:g} (this page's autoregressive control: Runs, compare). "
            "Incompatibility holds in a third domain and for a second architecture (ALBERT's "
            "shared layers as well as BERT); the size of δ is not a constant of masked LMs: "
            "it depends on the model, the vocabulary (576 SMILES tokens against 20 amino "
            "acids) and the sequence, so only the finding (δ far above rounding, for every "
            "model) transfers, not the value.\n")
    missing = "".join(f"\nMissing: {m}\n" for m in data.get("missing", []))
    return table + text + tcr_sentence(rows, antiberty_full) + missing


__all__ = ["FREQUENT", "PAPER_ENGLISH", "PAPER_GPT2", "REACTION_SITES", "RECTANGLES",
           "SEQUENCES", "TOPK", "alphabet_mass", "place", "reaction_window", "rectangle_entry",
           "rectangles_markdown", "run_rectangles", "tcr_sentence"]
