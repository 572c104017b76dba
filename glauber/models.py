"""One name space for every model the command line accepts: registered MLMs and toy specs.

:func:`resolve_model` turns a name into a ConditionalModel: a registered offline masked LM
(``antiberty``, ``sapiens-vh``, ``sapiens-vl``, ``tiny-gpt2-control``, ...), ``hf:<hub name>``
or a local checkpoint directory (:func:`glauber.mlm_backend.load_model`), or a toy
specification such as ``ising-cycle:n=8`` (:func:`glauber.toy_models.parse_toy_spec`).
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
from glauber.toy_models.specs import TOY_FAMILIES, parse_toy_spec

#: Sequence length of an MLM when none is asked for (keeps the default certify run short).
DEFAULT_MLM_LENGTH = 20
#: Prefix of Hugging Face hub names: ``glauber.mlm_backend.registry.HUB_PREFIX``, repeated here
#: because importing the backend imports torch, which toy models never need.
HUB_PREFIX = "hf:"


def is_toy_spec(spec: str) -> bool:
    """True if ``spec`` names a toy family (``family`` or ``family:key=value,...``)."""
    return spec.strip().partition(":")[0].strip() in TOY_FAMILIES


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
        :data:`glauber.toy_models.TOY_FAMILIES`).
    length : int, optional
        Sequence length of an MLM (default :data:`DEFAULT_MLM_LENGTH`). A toy model has its own
        ``n``; ``length`` must then be None or equal to it.
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


def _choices() -> str:
    from glauber.mlm_backend.registry import available_models

    return (
        f"Masked LMs available offline: {', '.join(available_models())} (or {HUB_PREFIX}<hub "
        f"name>, or a local checkpoint directory); toy families: {', '.join(TOY_FAMILIES)} "
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
        row = np.asarray(_to_host(model.encode(line)), dtype=np.int64)
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
    "DEFAULT_MLM_LENGTH",
    "is_toy_spec",
    "read_states",
    "resolve_model",
]
