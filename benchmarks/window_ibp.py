"""Sound interval bound propagation (IBP) on a window's contexts against the weight bound.

Issue 31, item 4: on a window (a few sites of a full chain, every other residue frozen) the
context is known, so bound the oscillation ``Delta_ij`` (site ``i``'s score differences when
site ``j`` changes, over every window context) through the network, rigorously in floating
point (:mod:`benchmarks.sound_intervals`: outward rounding), and compare with the weight bound
(``HFMaskedLM.oscillation_upper_bound()``, docs/theory.md item 3) and the exact value (the
window's score table). Variants, for site ``i`` masked:

* ``box``: one box, every other window site taking any of the 20 amino acids (the hull of their
  embedding LayerNorm outputs), the frozen sites points;
* ``split-j``: 20 boxes per pair, one per token at ``j``, the other window sites boxed:
  ``Delta_ij <= max_{a,b} [max_t U_ab(t) - min_t L_ab(t)]``;
* ``points``: every window context its own (degenerate) box: ``Delta_ij <= max_r max_{a,b}
  [max_t U_ab(t, r) - min_t L_ab(t, r)]`` over the values ``r`` of the other sites: the
  enumeration itself, ``q^(k-1)`` forwards per site, each in interval arithmetic.

A box goes through the embedding LayerNorm, the 8 layers and the head's ``dense -> gelu ->
LayerNorm -> decoder`` (the float64 head's ``w``, ``k``); each score difference's interval is
intersected with the weight bound's ``k_a - k_b +- R_ab``. Once every coordinate of the
normalised hidden state at every position is at the cap ``sqrt(d - 1)`` the box holds every
LayerNorm output and the propagation stops there: the head's bound from that set is the weight
bound (docs/theory.md, negative result (a)).

What it bounds: the network in **real arithmetic** (weights as stored, exact erf gelu, the
configured ``eps``). The library's scores are a float32 evaluation of it (``--check``: the
midpoints against ``model.scores``); their rounding is not enclosed, so even a tight interval
bound is not yet a bound on the chain the library runs. docs/theory.md, "Why the full-chain
bracket stays wide", (d), discusses the numbers. Run ``python benchmarks/window_ibp.py``
(``--help``; the 3-site window's points in about 20 minutes on one core).
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

if __package__ in (None, ""):  # run as a script: make `benchmarks` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import sound_intervals as iv  # noqa: E402
from glauber.errors import InvalidParameterError  # noqa: E402

DEFAULT_OUT = Path(__file__).resolve().parent / "results_window_ibp.json"
#: Windows measured: name -> (context, 1-based sites) of AntiBERTy (docs/results.md, bracket).
WINDOWS = {"antiberty-vh-cdr3": ("trastuzumab-vh", "98-100"),
           "antiberty-vh-cdr3-4": ("trastuzumab-vh", "97-100")}
#: What :func:`window_bounds` splits (module docstring).
VARIANTS = ("box", "split-j", "points")
#: Temperature grid of :func:`tau_cert` (as the bracket's, docs/theory.md item 6).
TAU_LO, TAU_HI = 2.0**-6, 2.0**24


# ------------------------------------------------------------------ the network, as boxes
class BoxNetwork:
    """A post-LN BERT encoder and LayerNorm head as interval maps, for one framed chain.

    Parameters
    ----------
    embed : callable
        ``(position, token) -> ndarray [d]``: the three embeddings of ``token`` at ``position``
        (word, position, type), each exact; summed here with outward rounding.
    frozen_tokens : ndarray of int, shape (T,)
        The framed chain's token ids (``[CLS] ... [MASK] ... [SEP]``).
    emb_ln : tuple
        ``(gamma, beta, eps)`` of the embedding LayerNorm.
    layers : list of dict
        ``negative_results.layer_params`` of each layer.
    head : dict
        ``W_t``, ``b_t`` (the head's dense layer), ``w``, ``k`` (the float64 head's rows and
        offsets), ``eps`` (its LayerNorm), ``radius`` and ``centre`` (the weight bound,
        :class:`glauber.theory.layernorm_head.HeadEnclosure`).
    """

    def __init__(self, embed: Callable[[int, int], np.ndarray], frozen_tokens: np.ndarray,
                 emb_ln: tuple, layers: list[dict], head: dict) -> None:
        self.embed, self.tokens = embed, np.asarray(frozen_tokens)
        self.emb_ln, self.layers, self.head = emb_ln, layers, head
        self.d = int(emb_ln[0].shape[0])
        self.cap = math.sqrt(self.d - 1)
        self._rows: dict[tuple[int, int], iv.Interval] = {}

    def row(self, position: int, token: int) -> iv.Interval:
        """The embedding LayerNorm's output box of one token at one position."""
        key = (position, token)
        if key not in self._rows:
            word, pos, typ = self.embed(position, token)
            x = iv.add(iv.add(iv.point(word), iv.point(pos)), iv.point(typ))
            self._rows[key] = iv.layer_norm(x, *self.emb_ln)[1]
        return self._rows[key]

    def input_box(self, cell: dict[int, Sequence[int]]) -> iv.Interval:
        """The embedding output box of a cell: ``{position: tokens it may hold}``, the other
        positions frozen."""
        rows = []
        for t, tok in enumerate(self.tokens):
            boxes = [self.row(t, int(a)) for a in cell.get(t, [int(tok)])]
            rows.append((np.min([b[0] for b in boxes], axis=0),
                         np.max([b[1] for b in boxes], axis=0)))
        return np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows])

    def run(self, cells: list[dict[int, Sequence[int]]], mask: int
            ) -> tuple[iv.Interval | None, list[dict]]:
        """Propagate a batch of cells; ``(pair intervals [B, q, q] or None, per-layer
        widths)``. None: vacuous (every coordinate at the cap at some layer)."""
        boxes = [self.input_box(c) for c in cells]
        x = np.stack([b[0] for b in boxes]), np.stack([b[1] for b in boxes])
        g, b, _ = self.emb_ln
        widths = [self._widths(((x[0] - b) / g, (x[1] - b) / g), mask, 0)]
        for k, p in enumerate(self.layers, 1):
            z, x = iv.bert_layer(x, p)
            widths.append(self._widths(z, mask, k))
            if widths[-1]["saturated_all"] == 1.0:
                return None, widths
        return self.pairs((x[0][:, mask], x[1][:, mask])), widths

    def pairs(self, h: iv.Interval) -> iv.Interval:
        """Intervals ``[B, q, q]`` of ``s_a - s_b`` over the encoder output boxes ``h [B, d]``
        at the mask, intersected with the weight bound."""
        H = self.head
        f = iv.gelu(iv.linear(h, H["W_t"], H["b_t"]))
        z, _ = iv.layer_norm(f, np.ones(self.d), np.zeros(self.d), H["eps"])
        s = iv.linear(z, H["w"], H["k"])
        lo = iv.down(s[0][:, :, None] - s[1][:, None, :])
        hi = iv.up(s[1][:, :, None] - s[0][:, None, :])
        return self.clip_to_weights((lo, hi))

    def clip_to_weights(self, d: iv.Interval) -> iv.Interval:
        """Intersect pair intervals with ``k_a - k_b +- R_ab`` (the weight bound)."""
        c, R = self.head["centre"], self.head["radius"]
        diff = c[:, None] - c[None, :]
        return (np.maximum(d[0], iv.down(iv.down(diff) - R)),
                np.minimum(d[1], iv.up(iv.up(diff) + R)))

    def weight_pairs(self, batch: int) -> iv.Interval:
        """The weight bound's pair intervals, for vacuous cells."""
        inf = np.full((batch,) + self.head["radius"].shape, np.inf)
        return self.clip_to_weights((-inf, inf))

    def _widths(self, z: iv.Interval, mask: int, layer: int) -> dict:
        half = 0.5 * (z[1] - z[0])  # [B, T, d]
        sat = half >= (1 - 1e-9) * self.cap
        l2 = np.linalg.norm(half, axis=-1)  # [B, T]
        return {"layer": layer, "l2_at_mask_max": float(l2[:, mask].max()),
                "l2_at_mask_min": float(l2[:, mask].min()),
                "l2_max": float(l2.max()), "linf_at_mask_max": float(half[:, mask].max()),
                "saturated_at_mask": float(sat[:, mask].mean()),
                "saturated_all": float(sat.all(axis=(1, 2)).mean())}


# ----------------------------------------------------------------------- Delta from cells
def delta_from_pairs(pairs: iv.Interval) -> float:
    """``max_{a,b} [max_c U_ab(c) - min_c L_ab(c)]`` over cells ``c`` (pair intervals
    ``[B, q, q]``) that differ only at ``j`` (or hold every value of ``j``): a bound on
    ``Delta_ij`` over those contexts, rounded up."""
    return float(iv.up(pairs[1].max(axis=0) - pairs[0].min(axis=0)).max())


def merge_widths(rows: list[list[dict]]) -> list[dict]:
    """Per layer, the worst (and the best) widths over batches; ``cells_reaching``: how many
    batches got there."""
    out = []
    depth = max(len(r) for r in rows)
    for k in range(depth):
        at = [r[k] for r in rows if len(r) > k]
        out.append({"layer": k, "batches_reaching": len(at),
                    "l2_at_mask_max": max(a["l2_at_mask_max"] for a in at),
                    "l2_at_mask_min": min(a["l2_at_mask_min"] for a in at),
                    "l2_max": max(a["l2_max"] for a in at),
                    "linf_at_mask_max": max(a["linf_at_mask_max"] for a in at),
                    "saturated_at_mask": max(a["saturated_at_mask"] for a in at),
                    "saturated_all": min(a["saturated_all"] for a in at)})
    return out


def window_bounds(net_for: Callable[[int], BoxNetwork], positions: Sequence[int],
                  vocab: np.ndarray, context: Sequence[int], variant: str, groups: int = 1,
                  batch: int = 20, log: Callable[[str], None] = print
                  ) -> tuple[np.ndarray, list[dict], bool]:
    """The interval bound on ``Delta [k, k]`` of a window by ``variant`` (module docstring).

    Parameters
    ----------
    net_for : callable
        ``i ->`` the :class:`BoxNetwork` with window site ``i`` masked.
    positions : sequence of int
        Framed positions of the window's sites.
    vocab : ndarray of int
        Token ids of the ``q`` allowed tokens.
    context : sequence of int
        The window's own tokens (vocabulary indices): the first group of ``points``.
    variant : {"box", "split-j", "points"}
    groups : int
        ``points`` only: how many assignments ``r`` of the sites other than ``i`` and ``j``
        to enumerate per pair (the context's own first, then in mixed-radix order); all of
        them give the points bound itself, fewer a lower bound on it (enough where it already
        equals the weight bound, the largest value it can take).

    Returns
    -------
    (Delta, widths, complete)
        The bound (``Delta[i, j]``), the per-layer widths (:func:`merge_widths`) and whether
        every group was enumerated.
    """
    if variant not in VARIANTS:
        raise InvalidParameterError(f"variant must be one of {VARIANTS}, not {variant!r}")
    k, q = len(positions), len(vocab)
    D = np.zeros((k, k))
    widths: list[list[dict]] = []
    everything = [int(t) for t in vocab]
    complete = True
    for i in range(k):
        net, mask = net_for(i), positions[i]
        others = [s for s in range(k) if s != i]
        for j in others:
            rest = [s for s in others if s != j]
            if variant == "box":
                assignments = [None]
            elif variant == "split-j":
                assignments = [{}]
            else:  # points
                every = list(itertools.product(range(q), repeat=len(rest)))
                own = tuple(int(context[s]) for s in rest)
                every = [own] + [r for r in every if r != own]
                complete &= groups >= len(every)
                assignments = [dict(zip(rest, r)) for r in every[:groups]]
            t0 = time.perf_counter()
            for fixed in assignments:
                if fixed is None:
                    cells = [{positions[s]: everything for s in others}]
                else:
                    cells = [{positions[s]: ([int(vocab[fixed[s]])] if s in fixed
                                             else [int(vocab[t])] if s == j else everything)
                              for s in others} for t in range(q)]
                lo, hi = [], []
                for b0 in range(0, len(cells), batch):
                    chunk = cells[b0:b0 + batch]
                    pr, w = net.run(chunk, mask)
                    widths.append(w)
                    pr = net.weight_pairs(len(chunk)) if pr is None else pr
                    lo.append(pr[0])
                    hi.append(pr[1])
                D[i, j] = max(D[i, j], delta_from_pairs((np.concatenate(lo), np.concatenate(hi))))
            log(f"  {variant} i={i} j={j}: {len(assignments)} group(s), "
                f"{time.perf_counter() - t0:.0f} s, Delta <= {D[i, j]:.4f}")
            if variant == "box":  # one box serves every j
                D[i, others] = D[i, j]
                break
    return D, merge_widths(widths), complete


# ------------------------------------------------------------------- tau_cert of a Delta
def tau_cert(Delta: np.ndarray, rtol: float = 1e-3) -> float:
    """The lowest temperature on ``[2^-6, 2^24]`` (bisection on a log scale to ``rtol``) at
    which ``rho_upper(tanh(Delta / (4 tau))) < 1``: the corrected Theorem 5's certificate
    (docs/theory.md item 6; monotone in ``tau``). ``inf`` if none."""
    from glauber.theory.influence_bounds import influence_matrix_bound
    from glauber.theory.verified_power import rho_upper

    def ok(t: float) -> bool:
        return rho_upper(influence_matrix_bound(Delta, t)) < 1.0

    if not ok(TAU_HI):
        return math.inf
    if ok(TAU_LO):
        return TAU_LO
    lo, hi = TAU_LO, TAU_HI
    while hi / lo > 1 + rtol:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


# ------------------------------------------------------------------------------ AntiBERTy
def bert_networks(model) -> tuple[Callable[[int], BoxNetwork], list[int]]:
    """``(net_for, framed positions of the sites)`` of a window (a ``RestrictedModel``) of an
    ``HFMaskedLM`` over a ``BertForMaskedLM`` with the float64 head."""
    import torch

    from benchmarks.negative_results import _head_arrays, layer_params

    full = model.model
    emb = full.model.bert.embeddings

    def np64(t: torch.Tensor) -> np.ndarray:
        return t.detach().double().numpy()

    W, P, Y = (np64(emb.word_embeddings.weight), np64(emb.position_embeddings.weight),
               np64(emb.token_type_embeddings.weight)[0])
    layers = [layer_params(L) for L in full.model.bert.encoder.layer]
    H = _head_arrays(full)
    enc = full._float64.enclosure()
    H.update(radius=enc.radius, centre=enc.centre)
    emb_ln = (np64(emb.LayerNorm.weight), np64(emb.LayerNorm.bias), float(emb.LayerNorm.eps))
    cache: dict[int, BoxNetwork] = {}

    def net_for(i: int) -> BoxNetwork:
        if i not in cache:
            ids = full._input_ids(torch.as_tensor(model.context)[None],
                                  torch.as_tensor([int(model.sites[i])]))[0].numpy()
            cache[i] = BoxNetwork(lambda t, a: (W[a], P[t], Y), ids, emb_ln, layers, H)
        return cache[i]

    return net_for, [int(s) + 1 for s in model.sites]


def antiberty_networks(window: str) -> tuple[Callable[[int], BoxNetwork], list[int], object]:
    """``(net_for, framed positions, restricted model)`` of AntiBERTy's ``window``
    (:data:`WINDOWS`)."""
    from glauber.models import resolve_model

    context, sites = WINDOWS[window]
    model = resolve_model(f"antiberty@{context}[{sites}]")
    return (*bert_networks(model), model)


def exact_source(model, build: bool):
    """The window's tabulated ``UpperBoundSource`` (exact oscillation, min'ed with the weight
    bound), or None when its score table is not on disk and ``build`` is False."""
    from glauber.exact.chain import ExactChain
    from glauber.exact.score_table import table_folder
    from glauber.exact.table_shards import DEFAULT_SHARD_ROWS, shard_count
    from glauber.estimators.influence_upper import UpperBoundSource

    folder = table_folder(model, True)
    want = model.n * shard_count(model.q ** (model.n - 1), DEFAULT_SHARD_ROWS)
    have = 0 if folder is None else len(list(folder.glob("site_*/shard_*.npz")))
    if have < want and not build:
        return None
    return UpperBoundSource(ExactChain(model, 1.0).tabulated(), tabulate=True)


def measure_window(window: str, variants: Sequence[str], groups: int, build: bool,
                   log: Callable[[str], None] = print) -> dict:
    """Every number of one window (module docstring)."""
    from glauber.estimators.influence_bracket import influence_bracket

    net_for, positions, model = antiberty_networks(window)
    vocab = model.model.vocabulary.lookup.numpy()
    context = np.asarray(model.default_states()[0])
    weight = np.asarray(model.oscillation_upper_bound().Delta, dtype=np.float64)
    off = ~np.eye(model.n, dtype=bool)
    out = {"window": window, "context": WINDOWS[window][0], "sites": WINDOWS[window][1],
           "n": int(model.n), "q": int(model.q), "d": net_for(0).d,
           "cap_l2": math.sqrt(net_for(0).d), "weight_Delta": float(weight[off].max()),
           "weight_tau_cert": tau_cert(weight), "variants": {}}
    t0 = time.perf_counter()
    exact = exact_source(model, build)
    if exact is None:
        log(f"{window}: no score table on disk: the exact side needs it (--build)")
    else:
        E = exact.Delta
        out.update(exact_Delta=E, exact_table_seconds=time.perf_counter() - t0,
                   exact_tanh_tau_cert=tau_cert(E),
                   exact_tau_cert=influence_bracket(exact, 1.0).tau_cert,
                   weight_over_exact_max=float((weight[off] / E[off]).max()),
                   weight_over_exact_min=float((weight[off] / E[off]).min()))
    for variant in variants:
        t0 = time.perf_counter()
        D, widths, complete = window_bounds(net_for, positions, vocab, context, variant,
                                            groups=groups, log=log)
        D = np.minimum(D, weight)  # each pair interval was clipped to it, up to rounding
        v = {"Delta": D, "Delta_max": float(D[off].max()), "Delta_min": float(D[off].min()),
             "complete": complete, "widths": widths, "seconds": time.perf_counter() - t0,
             "over_weight_min": float((D[off] / weight[off]).min()),
             "tau_cert": tau_cert(D)}
        vacuous = [w["layer"] for w in widths if w["saturated_all"] == 1.0]
        v["vacuous_from_layer"] = vacuous[0] if vacuous else None
        if exact is not None:
            v["over_exact_min"] = float((D[off] / exact.Delta[off]).min())
            v["over_exact_max"] = float((D[off] / exact.Delta[off]).max())
        out["variants"][variant] = v
    return out


def rows_of(r: dict) -> list[dict]:
    """Summary rows (:func:`benchmarks.report.row`) of one window's measurement."""
    from benchmarks.report import row

    w, name = r["weight_Delta"], f"{r['window']} ({r['sites']})"
    rows = [row(f"{name}: weight bound Delta (every pair)", w, "",
                note=f"tau_cert (tanh) {r['weight_tau_cert']:.4g}")]
    if "exact_Delta" in r:
        E = np.asarray(r["exact_Delta"])
        off = ~np.eye(len(E), dtype=bool)
        rows.append(row(f"{name}: exact Delta (score table), largest pair", float(E[off].max()),
                        "", w, float(E[off].max()) / w,
                        note=f"smallest {E[off].min():.4g}; weight/exact "
                             f"{r['weight_over_exact_min']:.3g}-{r['weight_over_exact_max']:.3g}"
                             f"; tau_cert tanh(Delta/4tau) {r['exact_tanh_tau_cert']:.4g}, "
                             f"tabulated TV {r['exact_tau_cert']:.4g}"))
    for variant, v in r["variants"].items():
        for x in v["widths"]:
            rows.append(row(f"{name} {variant}: IBP after "
                            f"{'the embeddings' if x['layer'] == 0 else 'layer %d' % x['layer']}"
                            ": L2 half-width of z at the mask (cap sqrt(d))",
                            x["l2_at_mask_max"], "", r["cap_l2"],
                            x["l2_at_mask_max"] / r["cap_l2"],
                            note=f"smallest {x['l2_at_mask_min']:.3g}; "
                                 f"{100 * x['saturated_at_mask']:.0f}% of coordinates at the cap"
                                 f"; every position saturated in {100 * x['saturated_all']:.0f}%"
                                 f" of {x['batches_reaching']} batches"))
        ex = (f"; bound/exact {v['over_exact_min']:.3g}-{v['over_exact_max']:.3g}"
              if "over_exact_min" in v else "")
        rows.append(row(f"{name} {variant}: interval bound on Delta (rigorous, real "
                        "arithmetic), largest pair", v["Delta_max"], "", w, v["Delta_max"] / w,
                        note=f"smallest pair's bound/weight {v['over_weight_min']:.4g}{ex}; "
                             f"tau_cert {v['tau_cert']:.4g}; vacuous from layer "
                             f"{v['vacuous_from_layer']}"
                             + ("" if v["complete"] else "; a sample of groups")))
    return rows


def run(windows: Sequence[str], variants: Sequence[str], groups: int, build: bool,
        check: bool) -> dict:
    from benchmarks.measure import machine_info

    t0 = time.perf_counter()
    res = {"machine": machine_info(), "groups": groups, "windows": []}
    for window in windows:
        r = measure_window(window, variants, groups, build)
        if check:
            r["midpoint_vs_library"] = library_check(window)
        res["windows"].append(r)
    res["seconds"] = time.perf_counter() - t0
    res["rows"] = [x for r in res["windows"] for x in rows_of(r)]
    return res


def library_check(window: str) -> float:
    """The gap the interval bound leaves out: the largest difference between the library's
    float32 scores at the window's first site (its own context) and a float64 numpy forward
    of the same network (``negative_results.layer_forward``, ``head_scores_np``), which is
    within about ``1e-12`` of the real-arithmetic one."""
    from benchmarks.negative_results import head_scores_np, layer_forward, layer_norm

    net_for, positions, model = antiberty_networks(window)
    net = net_for(0)
    x = np.stack([sum(net.embed(t, int(a))) for t, a in enumerate(net.tokens)])
    x = layer_norm(x, *net.emb_ln)
    for p in net.layers:
        x = layer_forward(x, p)
    s = head_scores_np(x[positions[0]][None], net.head)[0]
    lib = model.scores(model.default_states(), np.array([0])).double().numpy()[0]
    return float(np.abs(s - lib).max())


def main(argv: Sequence[str] | None = None) -> int:
    from benchmarks.report import publish

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--windows", nargs="+", default=list(WINDOWS), choices=list(WINDOWS))
    p.add_argument("--variants", nargs="+", default=list(VARIANTS),
                   choices=list(VARIANTS))
    p.add_argument("--groups", type=int, default=1,
                   help="points: assignments of the other sites per pair (the context's own "
                   "first); 1 is enough where it already reaches the weight bound")
    p.add_argument("--build", action="store_true",
                   help="build a missing score table (the 4-site one: about 25 minutes)")
    p.add_argument("--check", action="store_true",
                   help="the float64 forward against the library's float32 scores")
    p.add_argument("--out", default=str(DEFAULT_OUT), help="write the JSON results here")
    a = p.parse_args(argv)
    publish(run(a.windows, a.variants, a.groups, a.build, a.check), a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
