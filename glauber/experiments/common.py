"""Shared pieces of the experiments: grids, models by specification, contexts, embeddings, files.

Models are named by the same specifications as the rest of the command line: an MLM name
(``antiberty``, ``sapiens-vh``, ``tiny-gpt2-control``, a local checkpoint, ``hf:<name>``) or a
toy specification (``ising-cycle:n=8,J=1.0``). :func:`get_model` caches one instance per
(specification, length, device) in each process, so a cell function that runs many cells of the
same model loads it once.
"""

from __future__ import annotations

import csv
import functools
import io
import math
import os
from typing import Any, Iterable, Sequence

import numpy as np

from glauber.core.arrays import to_numpy
from glauber.core.conditionals import enumerable
from glauber.core.io import atomic_write_bytes, atomic_write_text
from glauber.core.validation import check_positive_int, check_tau
from glauber.errors import InvalidParameterError, SequenceLengthError


# ----------------------------------------------------------------------------------- grids
def parse_floats(text: str | Sequence[float], name: str) -> list[float]:
    """A comma-separated list of temperatures (or other positive floats), e.g. ``"0.5,1,2"``.

    Raises
    ------
    InvalidParameterError
        If the list is empty, an item is not a number, or a value repeats.
    InvalidTemperatureError
        If an item is not finite and positive.
    """
    items = _items(text, name)
    try:
        values = [float(v) for v in items]
    except ValueError as exc:
        raise InvalidParameterError(f"--{name} must be numbers separated by commas: {exc}") from exc
    return _distinct([check_tau(v) for v in values], name)


def parse_ints(text: str | Sequence[int], name: str) -> list[int]:
    """A comma-separated list of positive integers, e.g. ``"8,16"``.

    Raises
    ------
    InvalidParameterError
        If the list is empty, an item is not an integer >= 1, or a value repeats.
    """
    items = _items(text, name)
    out = []
    for v in items:
        try:
            value = int(v)
        except ValueError as exc:
            raise InvalidParameterError(
                f"--{name} must be integers separated by commas, got {v!r}"
            ) from exc
        out.append(check_positive_int(value, name))
    return _distinct(out, name)


def parse_names(text: str | Sequence[str], name: str) -> list[str]:
    """Comma-separated model specifications; commas inside ``family:k=v,k=v`` are kept.

    An item that reads ``key=value`` continues the toy specification before it.

    Raises
    ------
    InvalidParameterError
        If the list is empty or a model repeats.
    """
    out: list[str] = []
    for item in _items(text, name):
        if "=" in item and ":" not in item and out and ":" in out[-1]:
            out[-1] = f"{out[-1]},{item}"
        else:
            out.append(item)
    return _distinct(out, name)


def _distinct(values: list, name: str) -> list:
    """``values`` if no value repeats (a repeated grid point would give duplicate rows)."""
    seen = set()
    for v in values:
        if v in seen:
            raise InvalidParameterError(
                f"--{name} lists {v:g} twice; give each value once" if isinstance(v, float)
                else f"--{name} lists {v} twice; give each value once"
            )
        seen.add(v)
    return values


def _items(text: str | Sequence[Any], name: str) -> list[str]:
    raw = text.split(",") if isinstance(text, str) else [str(v) for v in text]
    items = [v.strip() for v in raw if v.strip()]
    if not items:
        raise InvalidParameterError(f"--{name} is empty; give at least one value, e.g. 1.0")
    return items


def positive_budget(value: Any, name: str) -> int:
    """``value`` as an integer >= 1 (a step budget, a count), with a typed error otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidParameterError(f"--{name} must be an integer >= 1, got {value!r}")
    return int(value)


# ---------------------------------------------------------------------------------- models
@functools.lru_cache(maxsize=16)
def get_model(spec: str, length: int | None = None, device: str = "cpu") -> Any:
    """The ConditionalModel named by ``spec`` at sequence length ``length`` (cached per process).

    Raises
    ------
    UnknownModelError
        If ``spec`` is neither a known model nor a toy specification.
    """
    from glauber.models import CONTEXT_SEPARATOR, is_toy_spec, resolve_model, toy_spec_at_length

    if is_toy_spec(spec) and length is not None and CONTEXT_SEPARATOR not in spec:
        return resolve_model(toy_spec_at_length(spec, length), device=device)
    return resolve_model(spec, length=length, device=device)


def check_sites(n: int, model: str) -> int:
    """``n`` if the certificates can be computed on ``n`` sites (at least two), else an error.

    Raises
    ------
    InvalidParameterError
        If ``n < 2`` (influences and rectangles pair two sites).
    """
    if n < 2:
        raise InvalidParameterError(
            f"{model} at n = {n} site(s): influences and rectangles need n >= 2; give a larger "
            "--length (or n in the toy specification)"
        )
    return n


def check_length(spec: str, length: int | None) -> int | None:
    """``length``, unless it contradicts the ``n`` a toy specification sets explicitly.

    ``--length 8`` with ``ising-cycle`` runs the 8-cycle; with ``ising-cycle:n=6`` it is
    refused rather than silently running n = 8 under the label n = 6.

    Raises
    ------
    SequenceLengthError
        If ``spec`` is a toy specification with ``n=k`` and ``length`` is neither None nor k,
        or a window (``model@context[sites]``, whose sites set its length) and ``length`` is
        given.
    """
    from glauber.models import CONTEXT_SEPARATOR, is_toy_spec, toy_length

    if length is not None and CONTEXT_SEPARATOR in spec:
        raise SequenceLengthError(
            f"--length does not apply to a window: the sites of {spec} set its length; leave "
            "--length out (or choose other --sites)"
        )
    if length is None or not is_toy_spec(spec):
        return length
    n = toy_length(spec)
    if n is not None and n != length:
        raise SequenceLengthError(
            f"{spec} sets n = {n} but --length {length} was given; drop --length or change n "
            "in the specification"
        )
    return length


def exact_tmix(model: Any, tau: float, eps: float = 0.25, max_states: int = 1024,
               kernel: Any = "random") -> int | None:
    """Worst-start ``t_mix(eps)`` from :class:`ExactChain` for an in-memory model of at most
    ``max_states`` states (:func:`glauber.core.conditionals.enumerable`), under ``kernel`` (a
    name or :class:`~glauber.core.kernel_spec.KernelSpec`; steps are the kernel's).

    ``None`` for MLMs, for larger models, and when the chain is numerically reducible.
    """
    from glauber.errors import ConvergenceError, NonPositiveConditionalError
    from glauber.exact.chain import ExactChain

    if not enumerable(model, max_states):
        return None
    try:
        return int(ExactChain(model, tau, kernel=kernel).mixing_time(eps))
    except (ConvergenceError, NonPositiveConditionalError):
        return None


def context_states(model: Any, count: int, seed: int) -> np.ndarray:
    """``count`` contexts ``[count, n]`` (vocabulary indices) to start chains or tests from.

    Amino-acid models get windows of length ``n`` of the shipped antibody chains (natural
    sequences, as the paper's protocols start from natural text); other models get uniform
    random states. Same seed, same contexts.
    """
    count = check_positive_int(count, "count")
    rng = np.random.default_rng(seed)
    labels = tuple(getattr(model, "labels", ()))
    from glauber.core.restrict import RestrictedModel

    if isinstance(model, RestrictedModel):  # the context's own window first, then uniform
        drawn = rng.integers(model.q, size=(max(count - 1, 0), model.n)).astype(np.int64)
        return np.concatenate([model.default_states(), drawn])[:count]
    if hasattr(model, "encode"):
        from glauber.mlm_backend.sequences import AMINO_ACIDS, ANTIBODY_SEQUENCES

        if set(AMINO_ACIDS) <= set(labels):
            windows = [
                seq[k:k + model.n]
                for seq in ANTIBODY_SEQUENCES.values()
                for k in range(0, len(seq) - model.n + 1)
            ]
            if windows:
                pick = rng.choice(len(windows), size=count, replace=count > len(windows))
                return np.stack(
                    [to_numpy(model.encode(windows[p])).astype(np.int64) for p in pick]
                )
    return rng.integers(model.q, size=(count, model.n)).astype(np.int64)


def embed(model: Any, states: np.ndarray, batch: int = 256) -> np.ndarray:
    """Sequence embeddings ``[B, d]`` for the drift and trap diagnostics (paper App. A.1, B).

    Transformer backends: the mean over the sequence positions of the last hidden layer (the model's
    own mean-pooled representation, docs/architecture.md, "Real models"). Toy models: the one-hot
    token counts ``[B, q]``.
    """
    states = np.asarray(states, dtype=np.int64)
    hf = getattr(model, "model", None)
    vocabulary = getattr(model, "vocabulary", None)
    if hf is None or vocabulary is None:
        return np.stack([(states == a).sum(axis=1) for a in range(model.q)], axis=1).astype(
            np.float64
        )
    import torch

    out = []
    with torch.inference_mode():
        for lo in range(0, len(states), batch):
            ids = vocabulary.lookup[torch.as_tensor(states[lo:lo + batch], device=model.device)]
            rows = ids.shape[0]
            if hasattr(model, "cls_token_id"):
                pre = torch.full((rows, 1), model.cls_token_id, device=ids.device)
                post = torch.full((rows, 1), model.sep_token_id, device=ids.device)
                framed = torch.cat([pre, ids, post], dim=1)
            else:
                framed = torch.cat(
                    [torch.full((rows, 1), model.bos_token_id, device=ids.device), ids], dim=1
                )
            hidden = hf(
                input_ids=framed, attention_mask=torch.ones_like(framed), output_hidden_states=True
            ).hidden_states[-1]
            out.append(hidden[:, 1:1 + states.shape[1]].float().mean(dim=1).cpu().numpy())
    return np.concatenate(out).astype(np.float64)


def state_text(model: Any, state: np.ndarray) -> str:
    """A printable form of one state: the decoded text for MLMs, the labels joined for toys."""
    labels = getattr(model, "labels", None)
    if labels is None:
        return " ".join(str(int(v)) for v in state)
    sep = "" if all(len(str(lab)) == 1 for lab in labels) else " "
    return sep.join(str(labels[int(v)]) for v in state)


# ----------------------------------------------------------------------------------- files
def write_csv(path: str | os.PathLike[str], rows: Iterable[dict], columns: Sequence[str]) -> None:
    """Write ``rows`` (dicts) as CSV with ``columns`` atomically; missing values are empty."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(columns), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _cell(row.get(k)) for k in columns})
    atomic_write_text(path, buf.getvalue())


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return "inf" if math.isinf(value) else repr(value)
    return value


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A Markdown table, ending in a newline: the header, its ``|---|`` rule, one line a row.

    Parameters
    ----------
    header : sequence of str
        The column titles.
    rows : iterable of sequences
        The cells of each row, one per title, each written as ``str(cell)``.

    Returns
    -------
    str

    Examples
    --------
    >>> print(markdown_table(("n", "t_mix"), [(8, 12)]), end="")
    | n | t_mix |
    |---|---|
    | 8 | 12 |
    """
    lines = [_markdown_row(header), "|" + "---|" * len(header)]
    lines.extend(_markdown_row(row) for row in rows)
    return "\n".join(lines) + "\n"


def _markdown_row(cells: Sequence[Any]) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def save_figure(fig: Any, path: str | os.PathLike[str]) -> None:
    """Save a matplotlib figure as PNG atomically, with no timestamps (reproducible bytes)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, metadata={"Software": None}, bbox_inches="tight")
    atomic_write_bytes(path, buf.getvalue())


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the non-interactive Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


__all__ = [
    "check_length",
    "check_sites",
    "context_states",
    "embed",
    "exact_tmix",
    "get_model",
    "markdown_table",
    "parse_floats",
    "parse_ints",
    "parse_names",
    "positive_budget",
    "pyplot",
    "save_figure",
    "state_text",
    "write_csv",
]
