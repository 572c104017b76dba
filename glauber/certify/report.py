"""One self-contained HTML page of certificates: ``glauber report CERT.json [--out FILE]``.

Per certificate, the page shows the verdict (:mod:`glauber.certify.verdict`), the influence
matrix as a heatmap (the searched or exact ``C`` of Definition 2 beside the rigorous upper bound
of the bracket where both exist), the alpha curve with the bracket ``tau_no_cert < tau_cert``,
the traps with their margins (Theorem 8), the exact chain's stationary law (its most probable
states) and ``t_mix``, the distribution of the rectangle statistic (Proposition 4), and the
provenance (model, context, sites, versions, command). Figures are drawn with matplotlib and
embedded as PNG data URIs; the page is a Jinja2 template with no script and no link: it needs no
network at view time.

Every section reads the JSON defensively: a certificate from an older version, or one missing a
section, renders what it holds and names what it lacks. A file that is not a certificate is an
:class:`~glauber.errors.InvalidParameterError` (one line on the command line, exit 2).
"""

from __future__ import annotations

import base64
import dataclasses
import io
import json
import math
import re
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from glauber.certify.certificate import Certificate
from glauber.certify.verdict import CATEGORIES, categorised, state_text, verdict_answers
from glauber.errors import InvalidParameterError

#: Keys a JSON object must hold to be read as a certificate.
REQUIRED = ("model", "tau")
#: Sections a certificate of this version holds (a missing one is named on the page).
SECTIONS = ("influence", "incompatibility", "margins", "exact", "versions", "source")
#: States and positions shown at most in a table or on an axis.
MAX_ROWS = 10
#: Resolution of the embedded figures (dots per inch; each figure is a few inches wide).
DPI = 90


@dataclasses.dataclass(frozen=True)
class Section:
    """One part of a certificate's page: a title, its figure (a data URI) and its HTML-safe
    pieces, or why it is missing."""

    title: str
    figure: str | None = None
    rows: tuple[tuple[str, str], ...] = ()
    table: tuple[tuple[str, ...], ...] = ()
    text: str = ""
    missing: str = ""


def read_certificate(path: str | Path) -> dict[str, Any]:
    """The JSON object of a certificate file.

    Raises
    ------
    InvalidParameterError
        If the file cannot be read, is not JSON, or is not a certificate (a JSON object with
        ``model`` and ``tau``); the message names the file and what to give instead.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InvalidParameterError(f"{path}: no such file; give the JSON that `glauber "
                                    "certify --json FILE` wrote") from None
    except IsADirectoryError:
        raise InvalidParameterError(f"{path} is a folder; give a certificate JSON file") from None
    except UnicodeDecodeError as exc:
        raise InvalidParameterError(f"{path} is not a text file (byte {exc.start}); give the "
                                    "JSON that `glauber certify --json FILE` wrote") from None
    except OSError as exc:
        raise InvalidParameterError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidParameterError(
            f"{path} is not JSON ({exc.msg} at line {exc.lineno}); give the JSON that `glauber "
            "certify --json FILE` wrote") from None
    if not isinstance(data, dict) or not all(k in data for k in REQUIRED):
        raise InvalidParameterError(
            f"{path} is not a glauber certificate (a JSON object with "
            f"{' and '.join(map(repr, REQUIRED))}); give the JSON that `glauber certify --json "
            "FILE` wrote")
    return data


def certificate_page(data: Mapping[str, Any], source: str = "") -> dict[str, Any]:
    """The template's view of one certificate: its heading, verdict and :class:`Section` s."""
    cert, why = _decoded(data)
    sections = [_section(title, build, data) for title, build in (
        ("influence matrix (Definition 2)", _influence),
        ("alpha curve and bracket (Theorem 5, corrected)", _alpha_curve),
        ("traps and margins (Theorem 8)", _traps),
        ("stationary law and t_mix (exact chain)", _stationary),
        ("convergence from the start states (lag coupling, coupling: estimates)", _convergence),
        ("rectangle statistic (Proposition 4)", _rectangles),
        ("provenance", lambda d: _provenance(d, source)),
    )]
    lacking = [k for k in SECTIONS if k not in data]  # None (no exact chain, say) is a value
    if cert is None:
        answers, lists = (), ()
    else:
        outputs = {"certificate (JSON)": source} if source else None
        answers = tuple(verdict_answers(cert, outputs, _bracket(data)))
        lists = tuple(zip(CATEGORIES, categorised(cert)))
    return {
        "title": f"{data.get('model', '?')} at tau = {_g(data.get('tau'))}",
        "source": source, "answers": answers, "lists": lists,
        "verdict_missing": "" if cert is not None else
        f"the verdict needs a certificate this version can read: {why}",
        "lacking": lacking, "sections": sections,
    }


def report_html(certificates: Sequence[tuple[Mapping[str, Any], str]]) -> str:
    """The page of ``(certificate JSON object, its file name)`` pairs, as one HTML string."""
    import jinja2

    from glauber import __version__

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("glauber.certify", "templates"),
        autoescape=jinja2.select_autoescape(["html"]), undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True)
    pages = [certificate_page(data, source) for data, source in certificates]
    return env.get_template("report.html").render(pages=pages, version=__version__)


def write_report(paths: Sequence[str | Path], out: str | Path) -> Path:
    """Read the certificates at ``paths`` and write their page to ``out`` (atomically).

    Raises
    ------
    InvalidParameterError
        If a file is not a certificate (:func:`read_certificate`).
    """
    from glauber.core.io import atomic_write_text

    certificates = [(read_certificate(p), str(p)) for p in paths]
    atomic_write_text(out, report_html(certificates))
    return Path(out)


# ----------------------------------------------------------------------------- sections
def _section(title: str, build: Callable[[Mapping[str, Any]], Section | str],
             data: Mapping[str, Any]) -> Section:
    """``build(data)``, or the section named missing with the reason (a part the certificate
    lacks, or holds in a form this version does not read)."""
    try:
        out = build(data)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        return Section(title, missing=f"not in this certificate ({type(exc).__name__}: {exc})")
    return Section(title, missing=out) if isinstance(out, str) else dataclasses.replace(
        out, title=title)


def _decoded(data: Mapping[str, Any]) -> tuple[Certificate | None, str]:
    try:
        return Certificate.from_dict(dict(data)), ""
    except (InvalidParameterError, KeyError, TypeError, ValueError) as exc:
        return None, str(exc)


def _bracket(data: Mapping[str, Any]) -> dict[str, Any] | None:
    b = data.get("bracket")
    return dict(b) if isinstance(b, Mapping) else None


def _influence(data: Mapping[str, Any]) -> Section | str:
    infl = data["influence"]
    C = _matrix(infl["C"])
    exhaustive = bool(infl.get("exhaustive"))
    kind = ("exact C" if exhaustive else
            "searched C (lower bounds)" if infl.get("searched") else "sampled C (lower bounds)")
    panels = [(kind, C)]
    upper = (_bracket(data) or {}).get("upper_C")
    if upper is not None:
        panels.append((f"upper bound on C ({(_bracket(data) or {}).get('upper_method', '')})",
                       _matrix(upper)))
    labels = _positions(data, C.shape[0])
    fig = _figure(len(panels), width=4.6)
    top = max(float(np.nanmax(m)) for _, m in panels) or 1.0
    for ax, (name, m) in zip(fig.axes, panels):
        image = ax.imshow(m, cmap="viridis", vmin=0.0, vmax=top, interpolation="nearest")
        ax.set_title(name, fontsize=9)
        _position_ticks(ax, labels)
        ax.set_xlabel("position j (influencing)", fontsize=8)
        ax.set_ylabel("position i (influenced)", fontsize=8)
    fig.colorbar(image, ax=fig.axes, shrink=0.8, label="c_ij (total variation)")
    rows = [("matrix", f"{C.shape[0]} x {C.shape[1]}, {kind}"),
            ("rho(C)", _g(infl.get("spectral_radius")) + ("" if exhaustive else
                                                         f" (rounding-safe lower bound "
                                                         f"{_g(infl.get('rho_lower'))})")),
            ("alpha_row, alpha_col", f"{_g(infl.get('alpha_row'))}, {_g(infl.get('alpha_col'))}")]
    if upper is not None:
        up = _matrix(upper)
        rows.append((f"upper bound on C ({(_bracket(data) or {}).get('upper_method', '')})",
                     f"rho <= {_g(_rho(up))} (largest entry {_g(float(np.nanmax(up)))})"))
    if infl.get("searched"):
        rows.append(("search", f"{infl.get('queries')} model rows, "
                               f"{len(infl.get('witnesses') or ())} witnesses"))
    return Section("", figure=_png(fig), rows=tuple(rows))


def _alpha_curve(data: Mapping[str, Any]) -> Section | str:
    infl, tau = data["influence"], float(data["tau"])
    b = _bracket(data) or {}
    Delta = _matrix(infl["Delta"])
    grid = [float(t) for t in b.get("grid") or ()]
    lo_end = min([tau / 8, *grid, *(v for v in (b.get("tau_no_cert"),) if v)]) / 1.5
    hi_end = max([tau * 8, *grid, *(v for v in (b.get("tau_cert"),) if v)]) * 1.5
    taus = np.geomspace(lo_end, hi_end, 60)
    exact = bool(infl.get("exhaustive"))
    osc = [_rho(np.tanh(Delta / (4.0 * t))) for t in taus]
    fig = _figure(1, width=6.4, height=3.6)
    ax = fig.axes[0]
    ax.plot(taus, osc, color="tab:orange", label="rho of tanh(Delta/(4 tau))" + (
        ": an upper bound (exact Delta)" if exact else ": estimate (sampled Delta)"))
    if grid and b.get("rho_upper"):
        ax.plot(grid, _floats(b["rho_upper"]), "v-", color="tab:green",
                label=f"rigorous upper bound ({b.get('upper_method', '')})")
    if grid and b.get("rho_lower"):
        ax.plot(grid, _floats(b["rho_lower"]), "^-", color="tab:red",
                label=f"rounding-safe lower bound ({b.get('lower_method', '')})")
    ax.plot([tau], [float(infl["spectral_radius"])], "ko",
            label=f"rho(C) at tau = {tau:g}" + ("" if exact else " (lower bound)"))
    ax.axhline(1.0, color="gray", lw=0.8, ls="--")
    lo, hi = b.get("tau_no_cert"), b.get("tau_cert")
    if lo:
        ax.axvspan(lo_end, lo, color="tab:red", alpha=0.12, label="no certificate can exist")
    if hi:
        ax.axvspan(hi, hi_end, color="tab:green", alpha=0.12, label="certified")
    if lo and hi:
        ax.axvspan(lo, hi, color="gray", alpha=0.12, label="not known (the bracket)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("temperature tau")
    ax.set_ylabel("spectral radius of C")
    ax.legend(fontsize=7)
    rows = [("bracket", "not in this certificate (older than the bracket)" if not b else
             f"tau_no_cert = {_g(lo)}, tau_cert = {_g(hi)}"
             + (f" (ratio {_g(hi / lo)})" if lo and hi else ""))]
    return Section("", figure=_png(fig), rows=tuple(rows),
                   text="A certificate (corrected Theorem 5) needs rho(C) < 1. Realised influences "
                        "(exact, searched or sampled) are lower bounds on C, so rho >= 1 on them "
                        "proves that none exists; an upper bound with rho < 1 proves one.")


def _traps(data: Mapping[str, Any]) -> Section | str:
    from matplotlib.ticker import MaxNLocator

    m, labels = data["margins"], data.get("labels") or []
    margins = _matrix(m["margins"])
    states = data.get("states") or []
    positions = _positions(data, margins.shape[1])
    fig = _figure(1, width=6.4, height=3.2)
    ax = fig.axes[0]
    for k, row in enumerate(margins[:MAX_ROWS]):
        ax.plot(positions, row, marker="." if len(row) < 40 else None, lw=1,
                label=f"state {k + 1}")
    ax.axhline(0.0, color="gray", lw=0.8, ls="--")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("position")
    ax.set_ylabel("margin (score of the token - runner-up)")
    ax.set_title("per-site margins of the examined states: > 0 everywhere is a perfect trap",
                 fontsize=9)
    if len(margins) > 1:
        ax.legend(fontsize=7)
    table = [("state", "tokens", "smallest margin", "perfect trap", "Theorem 8 escape bound",
              "exact one-step escape")]
    for k in range(min(len(states), MAX_ROWS)):
        table.append((str(k + 1), _text(labels, states[k]), _g(m["state_min"][k]),
                      "yes" if m["perfect"][k] else "no", _bound(m["trap_escape_bound"][k]),
                      _g(m["escape"][k])))
    exact = data.get("exact") or {}
    for t in exact.get("traps") or ():
        table.append(("exact chain", _text(labels, t["state"]), _g(t["delta_star"]), "yes",
                      _bound(t["escape_bound"]), _g(t["exact_escape"])))
    text = (f"{exact['perfect_traps']} perfect trap(s) among all {exact['num_states']:,} states "
            "of the exact chain." if exact else "")
    return Section("", figure=_png(fig), table=tuple(table), text=text)


def _stationary(data: Mapping[str, Any]) -> Section | str:
    exact = data.get("exact")
    if not exact:
        return ("not in this certificate: the chain was not enumerated (exact values exist for "
                "windows of at most 160,000 states, --context and --sites, and other models of "
                "at most 8,192)")
    labels = data.get("labels") or []
    eps = data.get("eps", 0.25)
    tmix = exact.get("tmix")
    rows = [(f"t_mix({_g(eps)}), worst start",
             f"{tmix:,} steps (exact)" if tmix is not None else
             f"> {exact['tmix_lower'] - 1:,} steps (a rigorous lower bound; no upper bound)"
             if exact.get("tmix_lower") else "not computed"),
            ("absolute spectral gap, relaxation time",
             f"{_g(exact.get('absolute_gap'))}, {_g(exact.get('relaxation_time'))} steps"
             if exact.get("absolute_gap") is not None or not exact.get("absolute_gap_lower")
             else f">= {_g(exact['absolute_gap_lower'])} (proved from C; no upper bound), "
                  "not computed"),
            ("states", f"{exact['num_states']:,}")]
    top = exact.get("top_states") or ()
    if not top:
        rows.append(("most probable state", f"{_text(labels, exact['mode_state'])} "
                     f"(mass {_g(exact['max_stationary_mass'])}); the certificate is older than "
                     "the top-states list"))
        return Section("", rows=tuple(rows))
    names = [_text(labels, s["state"]) for s in top]
    masses = [math.exp(float(s["log_mass"])) for s in top]
    fig = _figure(1, width=6.4, height=3.0)
    ax = fig.axes[0]
    ax.bar(range(len(masses)), masses, color="tab:blue")
    ax.set_xticks(range(len(masses)), [n if len(n) <= 12 else n[:11] + "…" for n in names],
                  rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("stationary mass")
    ax.set_title(f"the {len(masses)} most probable states", fontsize=9)
    table = [("rank", "state", "stationary mass")] + [
        (str(k + 1), n, _g(p)) for k, (n, p) in enumerate(zip(names, masses))]
    return Section("", figure=_png(fig), rows=tuple(rows), table=tuple(table))


def _convergence(data: Mapping[str, Any]) -> Section | str:
    """The lag-coupling estimate of an upper bound on TV to stationarity against the step, the
    exact TV from the same start law where the chain is enumerated, and the coupled pairs."""
    lag, coupling = data.get("lag_coupling"), data.get("coupling")
    rows = []
    if coupling:
        times = _floats(coupling["times"])
        rows.append(("coupled pairs (Section 6.1; a diagnostic)",
                     f"{int(np.isfinite(times).sum())} of {len(times)} met within "
                     f"{coupling['budget']:,} steps (median {_g(coupling.get('median'))})"))
    if not lag:
        if not rows:
            return ("not in this certificate: run certify with --lag-coupling L for an estimated "
                    "bound on TV to stationarity (and --pairs for coupled pairs)")
        return Section("", rows=tuple(rows))
    if lag.get("bound") is None:
        return Section("", rows=tuple(rows + [("lag coupling", f"refused: {lag['refused']}")]))
    b, eps, step = lag["bound"], data.get("eps", 0.25), lag["step"]
    upper, estimate = _floats(b["upper"]), _floats(b["estimate"])
    fig = _figure(1, width=6.4, height=3.0)
    ax = fig.axes[0]
    ax.plot(np.arange(len(upper)), upper, color="tab:red",
            label=f"upper {b['level']:.0%} limit (lag {b['lag']}, {b['n_pairs']} pairs)")
    ax.plot(np.arange(len(estimate)), estimate, color="tab:red", ls=":", label="point estimate")
    if lag.get("exact_curve") is not None:
        exact = _floats(lag["exact_curve"])
        ax.plot(np.arange(len(exact)), exact, color="black", label="exact TV, same start law")
    ax.axhline(eps, color="gray", lw=0.8, ls="--")
    ax.set_xlabel("step t")
    ax.set_ylabel("TV(law of X_t, pi)")
    ax.set_title("lag-coupling estimate of an upper bound (not rigorous)", fontsize=9)
    ax.legend(fontsize=7)
    rows.insert(0, ("lag coupling (an estimate, not rigorous)",
                    f"TV <= {_g(upper[min(step, len(upper) - 1)])} at step {step:,} "
                    f"({b['level']:.0%} CI; Biswas, Jacob and Vanetti 2019)"))
    if lag.get("exact_tv") is not None:
        held = lag["exact_tv"] <= upper[min(step, len(upper) - 1)] + 1e-12
        rows.insert(1, ("exact TV from the same start law at that step",
                        f"{_g(lag['exact_tv'])} (the estimate {'held' if held else 'FAILED'})"))
    text = ("R-hat and ESS come from long runs: glauber trajectory writes them, with the same "
            "lag-coupling estimate (--lag-coupling), to diagnostics.json and lag_coupling.json.")
    return Section("", figure=_png(fig), rows=tuple(rows), text=text)


def _rectangles(data: Mapping[str, Any]) -> Section | str:
    r = data["incompatibility"]
    rect = r.get("rectangles") or {}
    if not rect.get("delta"):
        return "not in this certificate: it holds no rectangle (older versions kept summaries only)"
    delta = np.abs(_floats(rect["delta"]))
    bound = _floats(rect.get("error_bound") or [0.0] * len(delta))
    fig = _figure(1, width=6.4, height=3.0)
    ax = fig.axes[0]
    top = float(np.nanmax(delta)) if delta.size else 0.0
    ax.hist(delta, bins=min(40, max(5, delta.size // 3)), color="tab:purple",
            range=(0.0, top or 1.0))
    ax.axvline(float(np.nanmax(bound)), color="k", ls="--", lw=0.8,
               label=f"largest rounding bound {_g(float(np.nanmax(bound)))}")
    ax.set_xlabel("|delta| of a rectangle (0 for compatible conditionals)")
    ax.set_ylabel("rectangles")
    ax.legend(fontsize=7)
    exact = (data.get("exact") or {}).get("rectangles")
    rows = [("rectangles drawn", f"{r['n_rectangles']} (top-{r.get('k')} replacements)"),
            ("above their rounding bound", f"{r['n_above_bound']} of {r['n_rectangles']}"),
            ("mean |delta| (sd, max)", f"{_g(r['mean_abs_delta'])} ({_g(r.get('sd_abs_delta'))}, "
                                       f"{_g(r.get('max_abs_delta'))})")]
    if exact:
        rows.append(("every rectangle of the exact chain",
                     f"{exact['count']:,}: max |delta| {_g(exact['max_abs_delta'])}, mean "
                     f"{_g(exact['mean_abs_delta'])}"))
    return Section("", figure=_png(fig), rows=tuple(rows))


def _provenance(data: Mapping[str, Any], source: str) -> Section | str:
    src = data.get("source") or {}
    versions = data.get("versions") or {}
    positions = data.get("positions") or _named_positions(str(data.get("model", "")))
    rows = [("certificate file", source or "n/a"),
            ("model", str(data.get("model"))),
            ("model specification (rebuilds it)", str(src.get("spec", "n/a"))),
            ("context (the frozen sequence)", _context(str(src.get("spec", "")))),
            ("positions resampled (1-based)", _ranges(positions) if positions else
             f"1-{data.get('n')} (every site of the model)"),
            ("n sites, q tokens", f"{data.get('n')}, {data.get('q')}"),
            ("tau, eps, seed, device", f"{_g(data.get('tau'))}, {_g(data.get('eps'))}, "
                                       f"{data.get('seed')}, {data.get('device')}"),
            ("command", str(src.get("command") or "n/a (older certificate, or made in Python)")),
            ("versions", ", ".join(f"{k} {v}" for k, v in versions.items()) or "n/a"),
            ("site numbering", str(data.get("site_numbering") or
                                   "not stated (older certificate): indices in the file count "
                                   "from 0"))]
    return Section("", rows=tuple(rows))


# ----------------------------------------------------------------------------- helpers
def _figure(panels: int, width: float = 4.6, height: float = 4.0) -> Any:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * panels, height), dpi=DPI, layout="constrained")
    fig.subplots(1, panels, squeeze=False)
    return fig


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _matrix(values: Any) -> np.ndarray:
    m = _floats(values)
    if m.ndim != 2:
        raise ValueError(f"a matrix was expected, got shape {m.shape}")
    return m


def _floats(values: Any) -> np.ndarray:
    def item(v: Any) -> Any:
        if isinstance(v, list):
            return [item(u) for u in v]
        return float(v) if v is not None else math.nan  # "inf" strings and None (NaN)

    return np.asarray(item(list(values)), dtype=float)


def _rho(m: np.ndarray) -> float:
    return float(np.max(np.abs(np.linalg.eigvals(m)))) if m.size else 0.0


def _positions(data: Mapping[str, Any], n: int) -> list[int]:
    """The 1-based positions a person reads for the sites ``0..n-1``: the certificate's own, or
    those its model's name states (``antiberty[positions 98-100 of 120]``, older
    certificates), else ``1..n``."""
    pos = data.get("positions") or _named_positions(str(data.get("model", "")))
    return [int(p) for p in pos] if pos and len(pos) == n else list(range(1, n + 1))


def _named_positions(name: str) -> list[int] | None:
    m = re.search(r"\[positions ([\d,\- ]+) of \d+\]", name)
    if m is None:
        return None
    out: list[int] = []
    for part in m.group(1).replace(" ", "").split(","):
        lo, _, hi = part.partition("-")
        out += range(int(lo), int(hi or lo) + 1)
    return out


def _position_ticks(ax: Any, labels: Sequence[int]) -> None:
    step = max(1, math.ceil(len(labels) / 12))
    ticks = list(range(0, len(labels), step))
    ax.set_xticks(ticks, [str(labels[k]) for k in ticks], fontsize=7)
    ax.set_yticks(ticks, [str(labels[k]) for k in ticks], fontsize=7)


def _ranges(positions: Sequence[int]) -> str:
    """``98-100`` for consecutive positions, else a comma-separated list of ranges."""
    out, start = [], None
    for k, p in enumerate(positions):
        if start is None:
            start = p
        if k + 1 == len(positions) or positions[k + 1] != p + 1:
            out.append(f"{start}" if start == p else f"{start}-{p}")
            start = None
    return ",".join(out)


def _context(spec: str) -> str:
    """The context of a ``model@context[sites]`` specification (as ``glauber.models`` writes
    it), or a note that the model is resampled whole."""
    _, at, rest = spec.partition("@")
    if not at:
        return "none: every site of the model is resampled"
    return rest.rsplit("[", 1)[0] if rest.endswith("]") else rest


def _text(labels: Sequence[str], state: Sequence[int]) -> str:
    if not labels:
        return " ".join(str(int(v)) for v in state)
    return state_text(labels, state)


def _bound(value: Any) -> str:
    """A probability bound, marked when it says nothing (>= 1)."""
    text = _g(value)
    return text + " (vacuous)" if text not in ("n/a",) and float(value) >= 1 else text


def _g(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, str):
        return value
    value = float(value)
    return "inf" if math.isinf(value) else "n/a" if math.isnan(value) else f"{value:.4g}"


__all__ = ["REQUIRED", "SECTIONS", "Section", "certificate_page", "read_certificate",
           "report_html", "write_report"]
