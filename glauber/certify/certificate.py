"""The :class:`Certificate` of :func:`~glauber.certify.certify`: the stages' own results, the
claims.

One result type per stage: the certificate stores what each estimator returned
(:class:`~glauber.estimators.RectangleTestResult` for Proposition 4,
:class:`~glauber.estimators.InfluenceResult` for Definition 2 / Lemma 6 and the corrected Theorem 5,
:class:`~glauber.estimators.MarginsResult` for Appendix A.1 margins and Theorem 8,
:class:`~glauber.estimators.DriftResult` for Section 5.4,
:class:`~glauber.estimators.CouplingResult` for Section 6.1), the
:class:`~glauber.core.claims.Claim` list, the exact values of a small chain (:class:`ExactValues`),
the run's :class:`Settings`, :class:`Timings` and :class:`Versions`.

``to_json``/``from_json`` round-trip exactly: strict JSON (``inf`` as ``"inf"``, NaN as ``null``),
decoded field by field from the dataclasses' type hints. Two certificates are equal when their
JSON forms are.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib.metadata
import json
import platform
import types
import typing
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from glauber.certify import stage_fields
from glauber.certify.claim_key import ClaimKey
from glauber.certify.exact import ExactValues
from glauber.core.arrays import JsonResult, jsonable
from glauber.core.claims import Claim
from glauber.core.kernel_spec import check_kernel, parse_schedule
from glauber.core.restrict import SITE_NUMBERING
from glauber.core.validation import check_nonnegative_int, check_positive_int
from glauber.errors import InvalidParameterError
from glauber.estimators.coupling import CouplingResult
from glauber.estimators.drift import DriftResult
from glauber.estimators.influence import InfluenceResult
from glauber.estimators.lag_coupling import check_lag
from glauber.estimators.margins import MarginsResult
from glauber.estimators.rectangle import RectangleTestResult
from glauber.exact.kernel_summary import KernelSummary

#: Model rows the influence search may spend when influences are not enumerated: 82-89 s
#: for AntiBERTy on the full 120-residue trastuzumab VH chain on two CPU cores, where the
#: search's principal block of the chain realises rho(C) = 3.22 at tau = 1 (docs/results.md,
#: tau_no_cert section).
DEFAULT_SEARCH_BUDGET = 2000


@dataclass(frozen=True)
class Settings(JsonResult):
    """The knobs of one :func:`~glauber.certify.certify` run: how much each stage does.

    Pass one to ``certify`` (or any field by keyword); the certificate records the settings the
    run used, resolved (``exhaustive`` decided, ``n_replacements`` at most ``q - 1``).

    Attributes
    ----------
    n_rectangles : int
        Rectangles of Proposition 4's test (the paper uses 300).
    n_contexts : int
        States the sampled or searched influence starts from (the first ones examined).
    n_replacements : int
        Replacements per (context, site) of sampled influence (``search_budget = 0``).
    n_pairs : int
        Coupled pairs of Section 6.1 (0 skips the stage).
    budget : int
        Step budget of the coupled pairs (the paper uses 10,000).
    horizon : int
        Time horizon ``T`` of the corrected Section 5.4 band certificate.
    batch_size : int
        Most rows per :meth:`scores` call.
    exhaustive : bool or None
        Enumerate every state for the influence matrix, the basin and the drift band (exact,
        rigorous). None: when the model answers on the host (an in-memory model, or the score
        table of an exact chain) and ``q ** n <= max_exhaustive_states``.
    search_budget : int
        Distinct conditional queries (rows sent to the model) the influence search may use
        when influences are not enumerated (0: sample ``n_replacements`` replacements of the
        ``n_contexts`` contexts instead). :func:`~glauber.certify.certify` caps it at the
        ``n q^(n-1)`` queries that tabulate the model (there the exact value is known); the
        certificate's settings hold the budget used.
    bracket : bool
        Compute the bracket ``tau_no_cert < tau_cert`` (:mod:`glauber.certify.bracket`; no
        model row of its own).
    kernel, epsilon, anneal : str, float, str or None
        Another kernel (:mod:`glauber.core.kernel_spec`: its name, its uniform-redraw
        probability, an annealing schedule) whose exact values the ``kernel`` stage adds beside
        the claims, which are about the paper's random scan (default: that kernel, no stage).
    lag, lag_pairs, lag_max_steps : int
        The ``lag`` stage (:mod:`glauber.certify.lag`): ``lag_pairs`` L-lag coupled pairs from
        the start states, each allowed ``lag_max_steps`` coupled steps to meet, estimate an
        upper bound on the distance to stationarity (an estimate, never rigorous; ``lag = 0``,
        the default, skips the stage).

    Raises
    ------
    InvalidParameterError
        If a count is not an integer >= 1 (``n_pairs``, ``search_budget`` and ``lag`` may be
        0; ``lag_pairs`` is at least
        :data:`~glauber.estimators.lag_coupling.MIN_PAIRS` when ``lag`` is set),
        ``exhaustive`` is not a bool or None, or ``bracket`` not a bool; the message names the
        field.
    """

    n_rectangles: int = 100
    n_contexts: int = 2
    n_replacements: int = 1
    n_pairs: int = 4
    budget: int = 50
    horizon: int = 10_000
    batch_size: int = 128
    exhaustive: bool | None = None
    search_budget: int = DEFAULT_SEARCH_BUDGET
    bracket: bool = True
    kernel: str = "random"
    epsilon: float = 0.0
    anneal: str | None = None
    lag: int = 0
    lag_pairs: int = 100
    lag_max_steps: int = 10_000

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in ("kernel", "epsilon", "anneal"):
                continue
            if f.name == "exhaustive":
                if value is not None and not isinstance(value, (bool, np.bool_)):
                    raise InvalidParameterError(
                        f"exhaustive must be True, False or None, got {value!r}")
            elif f.name == "bracket":
                if not isinstance(value, (bool, np.bool_)):
                    raise InvalidParameterError(f"bracket must be True or False, got {value!r}")
                object.__setattr__(self, f.name, bool(value))
            elif f.name in ("n_pairs", "search_budget", "lag"):
                object.__setattr__(self, f.name, check_nonnegative_int(value, f.name))
            else:
                object.__setattr__(self, f.name, check_positive_int(value, f.name))
        spec = check_kernel(self.kernel, self.epsilon)
        object.__setattr__(self, "kernel", spec.name)
        object.__setattr__(self, "epsilon", spec.epsilon)
        if self.anneal is not None:
            object.__setattr__(self, "anneal", parse_schedule(self.anneal).spec)
        if self.lag:
            check_lag(self.lag, self.lag_pairs)


@dataclass(frozen=True)
class Source(JsonResult):
    """What rebuilds the certified model: read by ``glauber recheck``.

    Attributes
    ----------
    spec : str
        A name :func:`glauber.models.resolve_model` accepts, context and sites included
        (``antiberty@trastuzumab-vh[98-100]``).
    length : int or None
        The MLM sequence length asked for (None: the default, or the context's length).
    dtype, autocast : str or None
        Compute precision of an MLM's forward pass (None: float32, no autocast).
    command : str or None
        The command line that wrote the certificate (None: older certificates, or Python).
    """

    spec: str
    length: int | None = None
    dtype: str | None = None
    autocast: str | None = None
    command: str | None = None


@dataclass(frozen=True)
class Timings(JsonResult):
    """Wall-clock seconds of each stage (``seconds``, by stage name, in order) and in ``total``;
    ``rows``: conditionals asked of the model (including one probe row when the model was
    asked whether it answers on the host). ``load`` is filled in by callers that load the model
    (the command line)."""

    seconds: dict[str, float] = field(default_factory=dict)
    total: float = 0.0
    rows: int = 0
    load: float | None = None


@dataclass(frozen=True)
class Versions(JsonResult):
    """Versions of the software that produced a certificate (``None``: not installed)."""

    glauber: str
    python: str
    numpy: str | None
    scipy: str | None
    torch: str | None
    transformers: str | None


@dataclass(frozen=True, eq=False)
class Certificate:
    """Everything :func:`~glauber.certify.certify` computed on one model at one temperature.

    Attributes
    ----------
    model : str
        The model's name.
    n, q : int tau, eps : float
    seed : int
    device : str
    labels : tuple of str
        A printable label per vocabulary index.
    states : tuple of tuple of int
        The distinct states examined (vocabulary indices).
    states_source : str
        Where they came from (``"given"``, ``"default states"``, ``"random states"``, a file).
    settings : Settings
    incompatibility : RectangleTestResult
        Proposition 4's rectangle test.
    influence : InfluenceResult
        Definition 2 / Lemma 6 with the corrected Theorem 5 certificates (exact when
        ``settings.exhaustive``, sampled LOWER bounds otherwise).
    margins : MarginsResult
        Margins of the states; Theorem 8 on each perfect trap; exact one-step escapes.
    basin : MarginsResult or None
        Assumption 1 / Theorem 8 on the caller's basin (over every basin state when
        ``settings.exhaustive``, else over the given states that lie in it).
    drift : DriftResult
        Section 5.4 at the given states (as printed).
    drift_band : DriftResult
        The corrected band certificate (over every band state when exhaustive).
    coupling : CouplingResult or None
        Section 6.1 coupled pairs (a diagnostic; None when ``n_pairs = 0``).
    claims : tuple of Claim
        Each statement confronted with these numbers; see :meth:`claim`.
    timings : Timings
    versions : Versions
    exact : ExactValues or None
        Exact values of a small chain, when computed.
    exact_note : str
        Why ``exact`` is or is not there.
    kernel : KernelSummary or None
        The exact values of another kernel (``Settings.kernel``, ``glauber certify --kernel``)
        on the exact chain (:mod:`glauber.certify.kernel`); the claims are about the paper's.
    source : Source or None
        How to rebuild the model (set by the ``glauber certify`` command; None for a model
        passed from Python).
    positions : tuple of int or None
        The 1-based positions of the context that the sites are (site ``k`` is position
        ``positions[k]``), for a chain on chosen sites of a context (set by the command line);
        None otherwise (site ``k`` is position ``k + 1``).
    site_numbering : str
        The convention of this file, stated in it: indices count from 0, positions a person
        reads count from 1 (:data:`glauber.core.restrict.SITE_NUMBERING`).
    results : dict
        The results of stages that have no field above (:mod:`glauber.certify.stages`), by
        name; each also reads as an attribute (``cert.bracket``) and sits at the top level of
        the JSON.
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
    states_source: str
    settings: Settings
    incompatibility: RectangleTestResult
    influence: InfluenceResult
    margins: MarginsResult
    basin: MarginsResult | None
    drift: DriftResult
    drift_band: DriftResult
    coupling: CouplingResult | None
    claims: tuple[Claim, ...]
    timings: Timings
    versions: Versions
    exact: ExactValues | None = None
    exact_note: str = ""
    kernel: KernelSummary | None = None
    source: Source | None = None
    positions: tuple[int, ...] | None = None
    site_numbering: str = SITE_NUMBERING
    results: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        """A stage's result that has no field of its own (``cert.bracket``)."""
        results = self.__dict__.get("results", {})
        if name in results:
            return results[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe nested dict (arrays and tuples as lists, ``inf`` as ``"inf"``); the
        ``results`` of stages without a field of their own sit at the top level, by name."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                  if f.name != "results"}
        return jsonable({**fields, **self.results})

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Certificate:
        """Rebuild a certificate from :meth:`to_dict` output.

        Raises
        ------
        InvalidParameterError
            If a field is missing or has the wrong type (the message names the field).
        """
        if not isinstance(data, dict):
            raise InvalidParameterError(f"certificate must be an object, got {type(data).__name__}")
        timings = data.get("timings")
        if isinstance(timings, dict) and "seconds" not in timings:  # one field per stage, as
            seconds = {k: timings[k] for k in stage_fields.STAGE_FIELDS if k in timings}  # before
            data = {**data, "timings": {**timings, "seconds": seconds}}
        own = {f.name for f in dataclasses.fields(cls)}
        results = {
            name: _decode(tp, data[name], f"certificate.{name}")
            for fields in stage_fields.STAGE_FIELDS.values() for name, tp in fields.items()
            if name not in own and name in data
        }
        cert = _decode(cls, {k: v for k, v in data.items() if k != "results"}, "certificate")
        return dataclasses.replace(cert, results=results) if results else cert

    def to_json(self, indent: int | None = 2) -> str:
        """Strict JSON text (no ``NaN``/``Infinity`` tokens)."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> Certificate:
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

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Certificate):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def claim(self, key: ClaimKey | str) -> Claim:
        """The claim with this key (a :class:`ClaimKey` or its value, e.g. ``"thm5-corrected"``).

        The start of a claim's printed statement (e.g. ``"Proposition 4"``) is accepted too.

        Raises
        ------
        InvalidParameterError
            If no claim matches; the message lists the keys.
        """
        wanted = key.value if isinstance(key, ClaimKey) else str(key)
        for c in self.claims:
            if c.key == wanted:
                return c
        for c in self.claims:
            if c.statement.startswith(wanted):
                return c
        raise InvalidParameterError(
            f"no claim {wanted!r}; keys: {', '.join(c.key for c in self.claims)}"
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


# ----------------------------------------------------------------------------- JSON decoding
def _decode(tp: Any, data: Any, where: str) -> Any:
    """Rebuild a value of annotated type ``tp`` from :func:`~glauber.core.arrays.jsonable` output."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if data is None and len(args) < len(typing.get_args(tp)):
            return None
        return _decode(args[0], data, where)
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(data, list):
            raise InvalidParameterError(f"{where} must be a list, got {type(data).__name__}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v, f"{where}[{k}]") for k, v in enumerate(data))
        if len(args) != len(data):
            raise InvalidParameterError(f"{where} must have {len(args)} entries")
        return tuple(_decode(a, v, f"{where}[{k}]") for k, (a, v) in enumerate(zip(args, data)))
    if origin is dict or tp is dict:
        if not isinstance(data, dict):
            raise InvalidParameterError(f"{where} must be an object, got {type(data).__name__}")
        return dict(data)
    if tp is np.ndarray:
        return _array(data, where)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        try:
            return tp(data)
        except ValueError as exc:
            raise InvalidParameterError(f"{where}: {exc}") from exc
    if dataclasses.is_dataclass(tp):
        return _dataclass(tp, data, where)
    if tp is float:
        if data in ("inf", "-inf"):
            return float(data)
        if data is None:
            return float("nan")
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            raise InvalidParameterError(f"{where} must be a number or 'inf', got {data!r}")
        return float(data)
    if tp in (int, bool, str) and isinstance(data, tp):
        if not (tp is int and isinstance(data, bool)):
            return data
    if tp is Any:
        return data
    raise InvalidParameterError(f"{where} must be of type {getattr(tp, '__name__', tp)}, got "
                                f"{data!r}")


def _dataclass(tp: Any, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise InvalidParameterError(f"{where} must be an object, got {type(data).__name__}")
    hints = typing.get_type_hints(tp)
    kwargs = {}
    for f in dataclasses.fields(tp):
        if not f.init:
            continue
        if f.name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise InvalidParameterError(f"{where} lacks the field {f.name!r}")
            continue
        kwargs[f.name] = _decode(hints[f.name], data[f.name], f"{where}.{f.name}")
    return tp(**kwargs)


def _array(data: Any, where: str) -> np.ndarray:
    """A JSON list (nested) back to an array: ``"inf"`` strings and ``null`` (NaN) to floats."""
    if not isinstance(data, list):
        raise InvalidParameterError(f"{where} must be a list (an array), got {data!r}")

    def item(v: Any) -> Any:
        if isinstance(v, list):
            return [item(u) for u in v]
        if v is None:
            return float("nan")
        if v in ("inf", "-inf"):
            return float(v)
        if isinstance(v, (bool, int, float)):
            return v
        raise InvalidParameterError(f"{where} holds {v!r}, not a number")

    return np.asarray(item(data))


__all__ = [
    "DEFAULT_SEARCH_BUDGET",
    "Certificate",
    "ClaimKey",
    "Settings",
    "Source",
    "Timings",
    "Versions",
    "software_versions",
]
