"""The :class:`Certificate` of :func:`~glauber.estimators.certify.certify` and its parts.

Plain numbers in frozen dataclasses: one summary per stage (Proposition 4's rectangles,
Definition 2 / Lemma 6 influences with the corrected Theorem 5 certificates, Appendix A.1
margins with Theorem 8, the §5.4 drift, §6.1 coupling times), the :class:`Claim` list, the run's
:class:`Settings`, :class:`Timings` and :class:`Versions`, and the :class:`ExactValues` callers may
add. ``Certificate.to_json``/``from_json`` round-trip exactly (strict JSON: ``inf`` as ``"inf"``).
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import math
import platform
import types
import typing
from dataclasses import dataclass
from typing import Any

from glauber.errors import InvalidParameterError
from glauber.theory.contraction import ContractionCertificate

Matrix = tuple[tuple[float, ...], ...]


@dataclass(frozen=True)
class Claim:
    """One statement of the paper (or its correction) confronted with this model.

    Attributes
    ----------
    statement : str
        The result and its hypothesis, with the paper's number.
    hypothesis_held : bool
        Whether the hypothesis held on the numbers computed here.
    certifies : str
        What follows, or why nothing does.
    value : float or None
        The headline number of the claim (a bound, a statistic).
    caveat : str
        What the numbers do not show.
    rigorous : bool
        True only when ``certifies`` is proved for this model (exact enumeration, or a quantity
        that is exact given the states used); False for estimates and diagnostics.
    """

    statement: str
    hypothesis_held: bool
    certifies: str
    value: float | None
    caveat: str
    rigorous: bool


@dataclass(frozen=True)
class RectangleRecord:
    """One rectangle of the test: state index, sites ``i, j``, tokens ``A -> A'``, ``B -> B'``."""

    state: int
    i: int
    j: int
    a: int
    a_prime: int
    b: int
    b_prime: int
    delta: float


@dataclass(frozen=True)
class IncompatibilitySummary:
    """Proposition 4's rectangle test (see :class:`~glauber.estimators.RectangleTestResult`).

    ``p_value_abs`` is the one-sided t-test of ``mean |delta| > atol``; ``p_value_t`` and
    ``p_value_wilcoxon`` test a signed bias. ``None`` stands for an undefined statistic.
    """

    n_rectangles: int
    replacements: str
    k: int
    mean_abs_delta: float
    sd_abs_delta: float | None
    median_abs_delta: float
    max_abs_delta: float
    mean_delta: float
    sd_delta: float | None
    p_value_abs: float | None
    p_value_t: float | None
    p_value_wilcoxon: float | None
    atol: float
    n_above_atol: int
    compatible_within_atol: bool
    rectangles: tuple[RectangleRecord, ...]


@dataclass(frozen=True)
class InfluenceSummary:
    """Influence ``C`` (Definition 2), oscillation ``Delta`` (Lemma 6) and their certificates.

    ``C[i][j]`` is the influence of site ``j`` on site ``i``. Unless ``exhaustive``, both
    matrices are maxima over sampled pairs: LOWER bounds on the suprema (``is_lower_bound``).
    ``contraction`` holds the corrected Theorem 5 certificates from ``C``;
    ``lemma6_alpha = max_i sum_j Delta_ij / (4 tau)`` (Corollary 7 as printed) and
    ``tanh_alpha = max_i sum_j tanh(Delta_ij / (4 tau))`` bound the row-sum ``alpha``;
    ``oscillation_contraction`` is corrected Theorem 5 applied to ``tanh(Delta / (4 tau))``.
    """

    exhaustive: bool
    is_lower_bound: bool
    n_contexts: int
    n_replacements: int
    n_comparisons: int
    C: Matrix
    Delta: Matrix
    contraction: ContractionCertificate
    lemma6_alpha: float
    tanh_alpha: float
    corollary7: bool
    lemma6_consistent: bool
    tanh_consistent: bool
    oscillation_contraction: ContractionCertificate


@dataclass(frozen=True)
class TrapBounds:
    """Theorem 8 on the one-state basin ``{x}`` of the given state with the largest margin.

    ``delta_star`` is the state's smallest margin (every site and every other token is
    exit-causing for ``{x}``); ``exact_escape`` is ``P_tau(x, {x}^c)`` computed exactly from the
    state's conditionals. ``tmix_lower_bound`` needs ``mu_tau({x}) <= 1/2``.
    """

    state: int
    delta_star: float
    escape_bound: float
    sharper_escape_bound: float
    exact_escape: float
    tmix_lower_bound: float


@dataclass(frozen=True)
class BasinSummary:
    """Assumption 1 and Theorem 8 on a caller's basin (over ``n_states`` basin states).

    ``complete``: the states are every state of the basin (enumerated), so the result is exact.
    Bounds are ``None`` when Assumption 1 fails.
    """

    n_states: int
    complete: bool
    assumption1: bool
    argmax_at_exit_sites: bool
    delta_star: float
    k: int
    escape_bound: float | None
    sharper_escape_bound: float | None
    tmix_lower_bound: float | None
    max_exact_escape: float
    mean_exact_escape: float


@dataclass(frozen=True)
class MarginsSummary:
    """Per-state margins ``Delta_i(x)`` (paper Appendix A.1) at ``tau = 1``.

    ``perfect[s]``: every site of state ``s`` holds the strict argmax (a perfect trap).
    ``trap``: Theorem 8 for the best perfect trap (``None`` when there is none).
    """

    state_min: tuple[float, ...]
    state_mean: tuple[float, ...]
    perfect: tuple[bool, ...]
    n_perfect: int
    delta_star: float
    trap: TrapBounds | None
    basin: BasinSummary | None


@dataclass(frozen=True)
class DriftSummary:
    """Section 5.4: drift of the count of ``token`` (as printed, and the corrected band form).

    ``per_state``/``counts`` are at the given states; ``all_positive`` is the printed
    criterion. The band ``(band_a, band_b)`` runs one count beyond the given states' counts;
    ``band_min_drift`` is the smallest drift over ``n_in_band`` band states (every band state
    when ``band_states_complete``). ``escape_bound`` bounds ``P(X_t <= a for some t <= horizon |
    X_0 >= b)`` (``None`` when the band drift is not positive); ``rigorous`` needs a complete
    band and a non-vacuous bound.
    """

    token: int
    token_label: str
    per_state: tuple[float, ...]
    counts: tuple[int, ...]
    min: float
    median: float
    mean: float
    all_positive: bool
    band_a: float
    band_b: float
    n_in_band: int
    band_min_drift: float
    band_states_complete: bool
    horizon: int
    escape_bound: float | None
    exponent: float | None
    vacuous: bool
    rigorous: bool


@dataclass(frozen=True)
class CouplingSummary:
    """Same-site maximal coupling of pairs (paper §6.1); ``times`` are censored at ``budget``."""

    n_pairs: int
    budget: int
    times: tuple[int, ...]
    censored: tuple[bool, ...]
    n_censored: int
    median: float | None
    median_exceeds_budget: bool


@dataclass(frozen=True)
class ExactValues:
    """Exact values from the full transition matrix of a small model (filled in by callers
    that may enumerate the chain, e.g. ``glauber certify`` on toy models).

    ``contraction``: corrected Theorem 5 from the exact influence matrix; ``tmix``: the exact
    worst-start ``t_mix(eps)``; ``trap_mass``: ``mu_tau({x})`` of the trap state (the hypothesis
    of Theorem 8's ``t_mix`` bound), ``None`` without a trap.
    """

    num_states: int
    contraction: ContractionCertificate
    tmix: int
    relaxation_time: float
    reversible: bool
    trap_mass: float | None


@dataclass(frozen=True)
class Settings:
    """The knobs of one :func:`~glauber.estimators.certify.certify` run."""

    n_rectangles: int
    n_contexts: int
    n_replacements: int
    n_pairs: int
    budget: int
    horizon: int
    batch_size: int
    exhaustive: bool


@dataclass(frozen=True)
class Timings:
    """Wall-clock seconds per stage and in ``total``; ``rows``: conditionals asked of the model
    (including one probe row per stage that needs it). ``load`` and ``exact`` are filled in by
    callers (model loading, exact chain)."""

    rectangles: float
    influence: float
    margins: float
    drift: float
    coupling: float
    total: float
    rows: int
    load: float | None = None
    exact: float | None = None


@dataclass(frozen=True)
class Versions:
    """Versions of the software that produced a certificate (``None``: not installed)."""

    glauber: str
    python: str
    numpy: str | None
    scipy: str | None
    torch: str | None
    transformers: str | None


@dataclass(frozen=True)
class Certificate:
    """Everything :func:`~glauber.estimators.certify.certify` computed, as plain numbers (see
    :mod:`glauber.estimators.certify` for what the claims may and may not say).

    ``states`` are the vocabulary indices of the states used (``labels`` names the tokens).
    ``to_json``/``from_json`` and ``to_dict``/``from_dict`` round-trip exactly (strict JSON:
    infinities are written ``"inf"``).
    """

    model: str
    n: int
    q: int
    tau: float
    eps: float
    seed: int
    device: str
    labels: tuple[str, ...]
    states: tuple[tuple[int, ...], ...]
    settings: Settings
    incompatibility: IncompatibilitySummary
    influence: InfluenceSummary
    margins: MarginsSummary
    drift: DriftSummary
    coupling: CouplingSummary
    claims: tuple[Claim, ...]
    timings: Timings
    versions: Versions
    exact: ExactValues | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe nested dict (tuples as lists, ``inf`` as ``"inf"``)."""
        return _encode(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Certificate":
        """Rebuild a certificate from :meth:`to_dict` output.

        Raises
        ------
        InvalidParameterError
            If a field is missing or has the wrong type.
        """
        return _decode(cls, data, "certificate")

    def to_json(self, indent: int | None = 2) -> str:
        """Strict JSON text (no ``NaN``/``Infinity`` tokens)."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> "Certificate":
        """Rebuild a certificate from :meth:`to_json` output.

        Raises
        ------
        InvalidParameterError
            If the text is not JSON or not a certificate.
        """
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidParameterError(f"not a JSON certificate: {exc}") from exc
        return cls.from_dict(data)

    def claim(self, prefix: str) -> Claim:
        """The first claim whose statement starts with ``prefix``.

        Raises
        ------
        InvalidParameterError
            If no claim matches.
        """
        for c in self.claims:
            if c.statement.startswith(prefix):
                return c
        raise InvalidParameterError(
            f"no claim starts with {prefix!r}; claims: {[c.statement[:40] for c in self.claims]}"
        )


def software_versions() -> Versions:
    """Versions of glauber, Python and the numerical packages (read from package metadata)."""
    from glauber import __version__

    def version(name: str) -> str | None:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return None

    return Versions(
        glauber=__version__, python=platform.python_version(), numpy=version("numpy"),
        scipy=version("scipy"), torch=version("torch"), transformers=version("transformers"),
    )


# --------------------------------------------------------------------- JSON encode / decode
def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (tuple, list)):
        return [_encode(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        if math.isnan(value):
            raise InvalidParameterError("a certificate field holds NaN; use None instead")
        return "inf" if value > 0 else "-inf"
    return value


def _decode(tp: Any, data: Any, where: str) -> Any:
    """Rebuild a value of annotated type ``tp`` from :func:`_encode` output."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if data is None and len(args) < len(typing.get_args(tp)):
            return None
        return _decode(args[0], data, where)
    if origin is tuple:
        item = typing.get_args(tp)[0]
        if not isinstance(data, list):
            raise InvalidParameterError(f"{where} must be a list, got {type(data).__name__}")
        return tuple(_decode(item, v, f"{where}[{k}]") for k, v in enumerate(data))
    if dataclasses.is_dataclass(tp):
        if not isinstance(data, dict):
            raise InvalidParameterError(f"{where} must be an object, got {type(data).__name__}")
        hints = typing.get_type_hints(tp)
        kwargs = {}
        for f in dataclasses.fields(tp):
            if f.name not in data:
                if f.default is dataclasses.MISSING:
                    raise InvalidParameterError(f"{where} lacks the field {f.name!r}")
                continue
            kwargs[f.name] = _decode(hints[f.name], data[f.name], f"{where}.{f.name}")
        return tp(**kwargs)
    if tp is float:
        if data in ("inf", "-inf"):
            return float(data)
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise InvalidParameterError(f"{where} must be a number or 'inf', got {data!r}")
        return float(data)
    if tp in (int, bool, str) and isinstance(data, tp):
        if not (tp is int and isinstance(data, bool)):
            return data
    raise InvalidParameterError(f"{where} must be of type {tp.__name__}, got {data!r}")


__all__ = [
    "BasinSummary",
    "Certificate",
    "Claim",
    "CouplingSummary",
    "DriftSummary",
    "ExactValues",
    "IncompatibilitySummary",
    "InfluenceSummary",
    "MarginsSummary",
    "Matrix",
    "RectangleRecord",
    "Settings",
    "Timings",
    "TrapBounds",
    "Versions",
    "software_versions",
]
