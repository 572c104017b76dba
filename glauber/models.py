"""One name space for every model the command line accepts: registered MLMs and toy specs.

:func:`resolve_model` turns a name into a ConditionalModel: a registered offline masked LM
(``antiberty``, ``sapiens-vh``, ``sapiens-vl``, ``tiny-gpt2-control``, ...), ``hf:<hub name>``
or a local checkpoint directory (:func:`glauber.mlm_backend.load_model`), or a toy
specification such as ``ising-cycle:n=8`` (:func:`glauber.toy_models.parse_toy_spec`).

A name may carry a frozen *context* and chosen *sites* (:func:`window_spec`):
``antiberty@trastuzumab-vh[98-100]`` is AntiBERTy resampling residues 98 to 100 (1-based,
inclusive) of the full trastuzumab heavy chain, every other residue frozen
(:func:`glauber.core.restrict.restrict`); ``antiberty@trastuzumab-vh`` resamples the whole chain
with the chain itself as the default state. One string names the chain completely, so it travels
into experiment cells and certificates (and back, for ``glauber recheck``).
:func:`read_states` reads states from a text file. The MLM backend (and torch) is imported only for
MLM names.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from glauber.core.protocol import ConditionalModel
from glauber.core.validation import check_positive_int
from glauber.errors import (
    InvalidParameterError,
    SequenceLengthError,
    UnknownModelError,
    VocabularyError,
)
from glauber.toy_models.specs import parse_toy_spec, toy_presets

#: Sequence length of an MLM when none is asked for (keeps the default certify run short).
DEFAULT_MLM_LENGTH = 20
#: Separates a model name from its context in a window specification (``model@context[sites]``).
CONTEXT_SEPARATOR = "@"
#: Most states of a window chain that ``glauber certify`` makes exact (``q**k``; 3,200,000 = 5
#: sites x 20 amino acids fits, matrix-free): :data:`glauber.certify.exact.EXACT_WINDOW_MAX_STATES`,
#: repeated here because importing the certify package imports every estimator.
EXACT_WINDOW_MAX_STATES = 3_200_000
#: Most states of the exact chains of the experiments that evaluate every state at many
#: temperatures (``alpha-curve``, ``joints``): 8,000 = 3 sites x 20 amino acids fits.
EXACT_SWEEP_MAX_STATES = 8192
#: Prefix of Hugging Face hub names: ``glauber.mlm_backend.registry.HUB_PREFIX``, repeated here
#: because importing the backend imports torch, which toy models never need.
HUB_PREFIX = "hf:"


def is_toy_spec(spec: str) -> bool:
    """True if ``spec`` names a toy family (``family`` or ``family:key=value,...``)."""
    return spec.strip().partition(":")[0].strip() in toy_presets()


def toy_length(spec: str) -> int | None:
    """The ``n`` a toy specification sets explicitly (``ising-cycle:n=6`` -> 6), else None.

    Raises
    ------
    InvalidParameterError
        If ``n`` is given but is not an integer.
    """
    for item in spec.partition(":")[2].split(","):
        key, _, value = item.partition("=")
        if key.strip() == "n":
            try:
                return int(value)
            except ValueError:
                raise InvalidParameterError(
                    f"{spec}: n={value.strip()!r} is not an integer; e.g. n=8") from None
    return None


def toy_spec_at_length(spec: str, length: int) -> str:
    """The toy specification ``spec`` with its ``n`` set to ``length``.

    Raises
    ------
    InvalidParameterError
        If the family has no ``n`` (e.g. ``ising-grid``: set ``rows``/``cols`` instead).
    """
    family, _, rest = spec.strip().partition(":")
    if "n" not in toy_presets()[family.strip()].defaults:
        raise InvalidParameterError(
            f"toy family {family!r} has no length n; give its size in the specification and "
            "leave --length/--lengths out"
        )
    items = [i.strip() for i in rest.split(",") if i.strip() and i.split("=")[0].strip() != "n"]
    return f"{family.strip()}:" + ",".join([f"n={check_positive_int(length, 'length')}", *items])


def resolve_model(
    spec: str,
    length: int | None = None,
    device: str = "cpu",
    dtype: str | None = None,
    autocast: str | None = None,
) -> ConditionalModel:
    """The model named by ``spec``: a registered or Hugging Face masked LM, or a toy model.

    Parameters
    ----------
    spec : str
        A registered MLM name (:func:`glauber.mlm_backend.available_models`), ``hf:<hub name>``,
        a local checkpoint directory, or a toy specification (``ising-cycle:n=8``; see
        :func:`glauber.toy_models.toy_presets`).
    length : int, optional
        Sequence length of an MLM (default :data:`DEFAULT_MLM_LENGTH`). A toy model has its own
        ``n``; ``length`` must then be None or equal to it. A window (``model@context[sites]``)
        takes its length from the context: ``length`` must be None, the context's length or
        the number of sites.
    device : str
        ``"cpu"``, ``"cuda"``, ... (checked even for toy models, which compute on the host).
    dtype : str, optional
        Compute precision of an MLM: None (float32), ``"bfloat16"``, or ``"float16"`` (CUDA);
        refused for toy models, which compute exactly in float64.
    autocast : str, optional
        Autocast precision of a masked LM's forward pass over float32 weights: None (off),
        ``"bfloat16"``, or ``"float16"`` (CUDA); see :class:`glauber.mlm_backend.HFMaskedLM`.
        Refused for toy models.

    Returns
    -------
    ConditionalModel

    Raises
    ------
    UnknownModelError
        If ``spec`` is none of those (the message lists the MLM names and the toy families),
        or a toy specification is malformed.
    SequenceLengthError
        If ``length`` exceeds what the MLM allows, or differs from a toy model's ``n``.
    InvalidParameterError
        If ``length`` is not a positive integer, ``dtype`` or ``autocast`` is given for a toy
        model, or ``autocast`` is invalid, combined with a
        ``dtype`` other than float32, or asked of a model that is not a masked LM.
    DeviceUnavailableError
        If the device does not exist (e.g. ``cuda`` on a machine without CUDA).
    MissingDependencyError
        If a registered model's weights are not installed.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise UnknownModelError(f"a model name must be a non-empty string, got {spec!r}; "
                                + _choices())
    spec = spec.strip()
    base_spec, context, sites = split_window_spec(spec)
    if context is not None:
        return _resolve_window(base_spec, context, sites, length, device, dtype, autocast)
    if length is not None:
        length = check_positive_int(length, "length")
    if is_toy_spec(spec):
        for flag, value in (("--dtype", dtype), ("--autocast", autocast)):
            if value is not None and value != "float32":
                raise InvalidParameterError(
                    f"{flag} {value} applies to masked LMs; the toy model {spec} computes "
                    f"exactly in float64: drop {flag}"
                )
        model = parse_toy_spec(spec)
        if length is not None and length != model.n:
            raise SequenceLengthError(
                f"toy model {model.name} has n = {model.n} sites, but length {length} was asked "
                "for; set the size in the specification instead (e.g. ising-cycle:n=12)"
            )
        if device != "cpu":
            from glauber.mlm_backend.device import resolve_device

            resolve_device(device)
        return model
    from glauber.mlm_backend.registry import available_models, load_model

    if spec in available_models() or spec.startswith(HUB_PREFIX) or os.path.isdir(spec):
        n = DEFAULT_MLM_LENGTH if length is None else length
        kwargs = {k: v for k, v in (("dtype", dtype), ("autocast", autocast)) if v is not None}
        try:
            return load_model(spec, n=n, device=device, **kwargs)
        except TypeError as exc:  # a loader whose model has no autocast (the causal control)
            if autocast is None or "autocast" not in str(exc):
                raise
            raise InvalidParameterError(
                f"autocast applies to masked LMs, not to {spec}; drop --autocast"
            ) from exc
    raise UnknownModelError(f"unknown model {spec!r}. " + _choices())


def window_spec(model: str, context: str | None, sites: str | None = None) -> str:
    """The model name of ``model`` resampling ``sites`` of ``context``: ``model@context[sites]``.

    Parameters
    ----------
    model : str
        A name :func:`resolve_model` accepts (without a context).
    context : str or None
        A shipped chain's name (``trastuzumab-vh``; see :func:`context_names`), a file holding
        the sequence on its first line, a raw sequence (text for natural-language tokenizers), or
        comma-separated token indices for toy models. None: ``model`` itself (``sites`` must then
        be None).
    sites : str or None
        1-based inclusive positions of the context, e.g. ``98-100`` or ``5,9,12-14`` (None: every
        position).

    Raises
    ------
    InvalidParameterError
        If ``sites`` comes without a context, or a part holds the characters that delimit the
        specification.

    Examples
    --------
    >>> window_spec("antiberty", "trastuzumab-vh", "98-100")
    'antiberty@trastuzumab-vh[98-100]'
    >>> split_window_spec('antiberty@trastuzumab-vh[98-100]')
    ('antiberty', 'trastuzumab-vh', '98-100')
    """
    if context is None:
        if sites is not None:
            raise InvalidParameterError(
                "--sites needs --context: name the full sequence whose positions are resampled"
            )
        return model
    context = context.strip()
    if not context or CONTEXT_SEPARATOR in context or "[" in context or "]" in context:
        raise InvalidParameterError(
            f"context {context!r} must be non-empty and hold no '@', '[' or ']'; put such a "
            "sequence in a file and pass its path"
        )
    tail = "" if sites is None else f"[{sites.strip()}]"
    return f"{model.strip()}{CONTEXT_SEPARATOR}{context}{tail}"


def split_window_spec(spec: str) -> tuple[str, str | None, str | None]:
    """``(model, context, sites)`` of a specification written by :func:`window_spec`."""
    model, sep, rest = spec.partition(CONTEXT_SEPARATOR)
    if not sep:
        return spec, None, None
    rest = rest.strip()
    if rest.endswith("]") and "[" in rest:
        context, _, sites = rest[:-1].rpartition("[")
        return model.strip(), context.strip(), sites.strip()
    return model.strip(), rest, None


def context_names() -> tuple[str, ...]:
    """Names of the shipped sequences a context may name (``trastuzumab-vh``, ..., the TCR
    ``sceptr-example``, ``reaction``: the reaction SMILES of the reaction models)."""
    from glauber.mlm_backend.sequences import SHIPPED_CONTEXTS

    return tuple(sorted(name.replace("_", "-") for name in SHIPPED_CONTEXTS))


def parse_sites(spec: str, length: int) -> np.ndarray:
    """0-based positions of a 1-based inclusive site list such as ``98-100`` or ``5,9,12-14``.

    Parameters
    ----------
    spec : str
        Comma-separated positions and ranges ``a-b`` (inclusive), counted from 1 as residues
        are.
    length : int
        Length of the context (positions must lie in ``1..length``).

    Returns
    -------
    numpy.ndarray of int64
        The positions minus one, in the order given.

    Raises
    ------
    InvalidParameterError
        If the list is empty or malformed, a range runs backwards, a position lies outside
        ``1..length``, or a position repeats.

    Examples
    --------
    >>> parse_sites("98-100", 120).tolist()
    [97, 98, 99]
    >>> parse_sites("1, 5-6", 10).tolist()
    [0, 4, 5]
    """
    out: list[int] = []
    for part in str(spec).split(","):
        part = part.strip()
        lo, dash, hi = part.partition("-")
        try:
            a = int(lo)
            b = int(hi) if dash else a
        except ValueError:
            raise InvalidParameterError(
                f"sites {spec!r}: {part!r} is not a position or a range; write e.g. 98-100 or "
                "5,9,12-14 (1-based, inclusive)"
            ) from None
        if b < a:
            raise InvalidParameterError(f"sites {spec!r}: the range {part} runs backwards")
        out.extend(range(a, b + 1))
    if not out:
        raise InvalidParameterError("sites is empty; choose at least one position")
    bad = [p for p in out if not 1 <= p <= length]
    if bad:
        raise InvalidParameterError(
            f"site {bad[0]} lies outside the context's positions 1..{length} (sites are "
            "1-based)"
        )
    if len(set(out)) != len(out):
        dup = next(p for p in out if out.count(p) > 1)
        raise InvalidParameterError(f"sites {spec!r} lists position {dup} twice; list it once")
    return np.asarray(out, dtype=np.int64) - 1


def resolve_context(model: ConditionalModel, context: str) -> np.ndarray:
    """The full-length state (vocabulary indices) that a context specification names.

    A shipped chain's name (:func:`context_names`; ``_`` and ``-`` alike), a file (its first
    line that is neither blank nor a ``#`` comment), or the sequence itself: text for a model
    with ``encode`` (MLMs), comma-separated token indices for a toy model.

    Raises
    ------
    InvalidParameterError
        If a file cannot be read or holds no sequence, or toy indices are malformed.
    VocabularyError
        If a token lies outside the model's vocabulary.
    SequenceLengthError
        If the sequence is longer than the model allows.
    """
    text = context.strip()
    path = Path(text)
    if hasattr(model, "encode"):
        text, where = context_text(context)
        try:
            return np.asarray(_to_host(model.encode(text)), dtype=np.int64)
        except VocabularyError as exc:
            details = getattr(exc, "details", str(exc))
            raise VocabularyError(
                f"{where} holds tokens outside the model's vocabulary: {details}") from exc
    if _is_file(path):
        text = _first_line(path)
    elif _looks_like_path(text):
        raise InvalidParameterError(
            f"context {_short(context)}: no such file. A toy model's context is comma-separated "
            "token indices (e.g. 0,1,1,0) or a file holding them")
    try:
        row = np.array([int(t) for t in re.split(r"[,\s]+", text) if t], dtype=np.int64)
    except ValueError:
        raise InvalidParameterError(
            f"context {_short(context)}: a toy model's context is comma-separated token indices "
            "(e.g. 0,1,1,0) or a file holding them"
        ) from None
    if row.size and (row.min() < 0 or row.max() >= model.q):
        raise VocabularyError(
            f"context {_short(context)}: token indices must lie in 0..{model.q - 1}"
        )
    if row.shape[0] != model.n:
        raise SequenceLengthError(
            f"context {_short(context)} has {row.shape[0]} tokens but {model.name} has n = "
            f"{model.n} sites; give one token index per site"
        )
    return row


def context_text(context: str) -> tuple[str, str]:
    """The text a masked LM's context names, and where it came from (for messages).

    A shipped sequence's name (:func:`context_names`; ``_`` and ``-`` alike) gives the
    sequence, a file its first line that is neither blank nor a ``#`` comment, anything else
    itself.

    Raises
    ------
    InvalidParameterError
        If the context looks like a path but no such file exists, or a file cannot be read or
        holds no sequence.
    """
    from glauber.mlm_backend.sequences import SHIPPED_CONTEXTS

    text = context.strip()
    key = text.lower().replace("-", "_")
    path = Path(text)
    if key in SHIPPED_CONTEXTS:
        return SHIPPED_CONTEXTS[key], f"the shipped sequence {text}"
    if _is_file(path):
        line, text = _first_line(path, numbered=True)
        return text, f"context file {path} (line {line})"
    if _looks_like_path(text):
        raise InvalidParameterError(
            f"context {_short(context)}: no such file. A context is a shipped sequence "
            f"({', '.join(context_names())}), a file holding the sequence on one line, or "
            "the sequence itself")
    return text, (f"context {_short(context)} is not a shipped sequence "
                  f"({', '.join(context_names())}) nor a file; read as a sequence, it")


def _short(text: str, width: int = 40) -> str:
    return repr(text if len(text) <= width else text[:width] + "...")


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # e.g. a raw sequence longer than the file-name limit
        return False


def _first_line(path: Path, numbered: bool = False) -> Any:
    """The first line of ``path`` that is neither blank nor a ``#`` comment (with its 1-based
    line number when ``numbered``)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidParameterError(
            f"context file {path} is not UTF-8 text (byte {exc.start}); write the sequence on "
            "one line of a text file") from exc
    except OSError as exc:
        raise InvalidParameterError(
            f"cannot read the context from {path}: {exc.strerror or exc}") from exc
    for k, line in enumerate(text.splitlines(), start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            return (k, line.strip()) if numbered else line.strip()
    raise InvalidParameterError(f"context file {path} holds no sequence; write it on one line")


def _looks_like_path(text: str) -> bool:
    """A name that is meant as a file (a folder separator, or a file extension, and no space):
    never a protein sequence, nor a TCR written loop by loop (capitals and ``/`` only), and not
    a sentence."""
    if re.fullmatch(r"[A-Z/]+", text):
        return False
    return not any(c.isspace() for c in text) and (
        "/" in text or "\\" in text or re.search(r"\.[A-Za-z][A-Za-z0-9]{0,4}$", text) is not None)


def _resolve_window(
    spec: str,
    context: str,
    sites: str | None,
    length: int | None,
    device: str,
    dtype: str | None,
    autocast: str | None,
) -> ConditionalModel:
    from glauber.core.restrict import restrict

    if is_toy_spec(spec):
        base = resolve_model(spec, None, device, dtype, autocast)
        tokens = resolve_context(base, context)
    else:
        base = resolve_model(spec, 1, device, dtype, autocast)
        framed = getattr(base, "with_context", None)
        if framed is not None:  # inputs laid out by the context beyond its length (SCEPTR)
            base = framed(context_text(context)[0])
        tokens = resolve_context(base, context)
        base = base.with_length(int(tokens.shape[0]))
    chosen = (np.arange(tokens.shape[0]) if sites is None
              else parse_sites(sites, int(tokens.shape[0])))
    if length is not None and length not in (tokens.shape[0], chosen.shape[0]):
        raise SequenceLengthError(
            f"the context has {tokens.shape[0]} tokens and {chosen.shape[0]} chosen sites, but "
            f"length {length} was asked for; leave --length out (a context sets the length)"
        )
    return restrict(base, tokens, chosen)


def _choices() -> str:
    from glauber.mlm_backend.registry import available_models

    return (
        f"Masked LMs available offline: {', '.join(available_models())} (or {HUB_PREFIX}<hub "
        f"name>, or a local checkpoint directory); toy families: {', '.join(toy_presets())} "
        "(e.g. ising-cycle:n=8,J=1.0)"
    )


def read_states(path: str | os.PathLike[str], model: ConditionalModel) -> np.ndarray:
    """States ``[S, n]`` from a text file, one state per line (blank lines and ``#`` skipped).

    A model with an ``encode`` method (MLMs) reads each line as text (``model.encode``); a toy
    model reads comma- or space-separated vocabulary indices (``0,1,1,0``).

    Raises
    ------
    InvalidParameterError
        If the file cannot be read or is not UTF-8 text, holds no state, or a toy line is not
        integers.
    SequenceLengthError
        If a state does not have ``model.n`` tokens.
    VocabularyError
        If a token is outside the model's vocabulary.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidParameterError(
            f"cannot read states from {path}: {exc.strerror or exc}"
        ) from exc
    except UnicodeDecodeError as exc:
        raise InvalidParameterError(
            f"{path} is not a UTF-8 text file (byte {exc.start} cannot be decoded); give a text "
            "file with one state per line"
        ) from exc
    lines = [
        (k, line.strip()) for k, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not lines:
        raise InvalidParameterError(f"{path} holds no states; write one sequence per line")
    rows = [_parse_line(model, line, f"{path}:{k}") for k, line in lines]
    return np.stack(rows)


def _parse_line(model: ConditionalModel, line: str, where: str) -> np.ndarray:
    if hasattr(model, "encode"):
        try:
            row = np.asarray(_to_host(model.encode(line)), dtype=np.int64)
        except VocabularyError as exc:
            raise VocabularyError(f"{where} holds tokens outside the model's vocabulary: "
                                  f"{getattr(exc, 'details', exc)}") from exc
    else:
        try:
            row = np.array([int(tok) for tok in re.split(r"[,\s]+", line) if tok], dtype=np.int64)
        except ValueError:
            raise InvalidParameterError(
                f"{where}: {line!r} is not a list of token indices; write e.g. 0,1,1,0"
            ) from None
        if row.size and (row.min() < 0 or row.max() >= model.q):
            raise VocabularyError(f"{where}: token indices must lie in 0..{model.q - 1}")
    if row.shape[0] != model.n:
        raise SequenceLengthError(
            f"{where}: the state has {row.shape[0]} tokens but the model resamples n = "
            f"{model.n}; pass --length {row.shape[0]} (MLMs) or fix the line"
        )
    return row


def _to_host(values: Any) -> Any:
    return values.cpu().numpy() if hasattr(values, "cpu") else values


__all__ = [
    "CONTEXT_SEPARATOR",
    "DEFAULT_MLM_LENGTH",
    "EXACT_SWEEP_MAX_STATES",
    "EXACT_WINDOW_MAX_STATES",
    "context_names",
    "context_text",
    "is_toy_spec",
    "parse_sites",
    "read_states",
    "resolve_context",
    "resolve_model",
    "split_window_spec",
    "toy_length",
    "toy_spec_at_length",
    "window_spec",
]
