"""The resampling vocabulary of a transformer backend: token ids <-> state indices <-> text.

A state holds *indices into* the vocabulary (the ConditionalModel protocol); the model sees
token ids. :class:`TokenVocabulary` owns that map (an on-device lookup tensor for the forward
pass) and turns text into states (:meth:`encode`) and states into text (:meth:`decode`).
"""

from __future__ import annotations

import numbers
import re
from typing import Any, Callable, Sequence

import torch

from glauber.errors import InvalidParameterError, VocabularyError

#: Reserved vocabulary slots that no training text contains (BERT's ``[unused1]``, ESM-2's
#: ``<null_1>``): not special to the tokenizer, but never in a default resampling vocabulary.
PLACEHOLDER_TOKEN = re.compile(r"\[unused\d+\]|<unused\d+>|<null_\d+>")
#: ``config.model_type`` of the protein masked LMs whose default resampling vocabulary is the
#: 20 standard amino acids (ESM-1b, ESM-1v and ESM-2 also list X, B, U, Z, O, '.' and '-'),
#: written one character per token.
AMINO_ACID_MODEL_TYPES = frozenset({"esm"})
#: Entries of a model's ``config`` that name a special token id (a chain never takes one).
CONFIG_SPECIAL_ID_KEYS = ("pad_token_id", "mask_token_id", "cls_token_id", "sep_token_id",
                          "bos_token_id", "eos_token_id", "unk_token_id")


def special_token_ids(tokenizer: Any = None, config: Any = None) -> frozenset[int]:
    """The token ids that are special to a model: the tokenizer's ``all_special_ids``
    (``[CLS]``, ``[SEP]``, ``[MASK]``, ``[PAD]``, ``[UNK]``, ``<s>``, ``</s>``, ``<eos>``,
    ``<mask>``, additional special tokens, ...) and the ids the model's ``config`` names
    (:data:`CONFIG_SPECIAL_ID_KEYS`; an entry may be an id, a list of ids or None).

    The one place that says which ids no resampling vocabulary holds by default
    (:func:`tokenizer_vocabulary`), and which ones an explicit ``allowed_tokens`` may not name.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> tok = SimpleNamespace(all_special_ids=[0, 2, 3])
    >>> sorted(special_token_ids(tok, SimpleNamespace(pad_token_id=1, eos_token_id=[2, 7])))
    [0, 1, 2, 3, 7]
    """
    ids: set[int] = set()
    if tokenizer is not None:
        ids.update(int(t) for t in getattr(tokenizer, "all_special_ids", ()) if t is not None)
    for key in CONFIG_SPECIAL_ID_KEYS if config is not None else ():
        value = getattr(config, key, None)
        for t in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(t, numbers.Integral) and not isinstance(t, bool):
                ids.add(int(t))
    return frozenset(i for i in ids if i >= 0)


class TokenVocabulary:
    """The token ids a chain may take, with their printable labels.

    Parameters
    ----------
    token_ids : sequence of int
        Distinct token ids, in state-index order (state value ``k`` means ``token_ids[k]``).
    labels : sequence of str
        The token string of each id (what :meth:`encode` accepts and :meth:`decode` prints).
    tokenizer : transformers tokenizer, optional
        Used to split free text into tokens and to join tokens back into text.
    split_chars : bool
        Tokenise text one character per token, ignoring whitespace (protein language models:
        ``"EVQLV"`` is the five tokens ``E V Q L V``).
    device : torch.device
    splitter : callable, optional
        ``splitter(text) -> list of token strings``, used instead of the tokenizer (the SMILES
        regex of the reaction models); tokens are then joined back without spaces. It raises
        :class:`~glauber.errors.VocabularyError` on text it cannot split.

    Raises
    ------
    VocabularyError
        If fewer than two ids are given, ids repeat, or labels do not match the ids.
    """

    def __init__(
        self,
        token_ids: Sequence[int],
        labels: Sequence[str],
        tokenizer: Any = None,
        split_chars: bool = False,
        device: torch.device | str = "cpu",
        splitter: Callable[[str], list[str]] | None = None,
    ) -> None:
        ids = [int(t) for t in token_ids]
        if len(ids) < 2:
            raise VocabularyError(
                f"the resampling vocabulary needs at least 2 tokens, got {len(ids)}: the "
                "tokenizer offers fewer than two ordinary (non-special) tokens. Does the "
                "checkpoint folder lack its tokenizer files (tokenizer.json, vocab.txt or "
                "vocab.json)? In Python, allowed_tokens=[...] picks the tokens to resample"
            )
        if len(set(ids)) != len(ids):
            raise VocabularyError("allowed_tokens repeats a token; list each token once")
        if len(labels) != len(ids):
            raise VocabularyError(f"{len(labels)} labels for {len(ids)} tokens")
        self.token_ids = tuple(ids)
        self.labels = tuple(str(s) for s in labels)
        self.tokenizer = tokenizer
        self.split_chars = bool(split_chars)
        self.splitter = splitter
        self.lookup = torch.tensor(ids, dtype=torch.long, device=device)
        self._index = {label: k for k, label in enumerate(self.labels)}

    @property
    def q(self) -> int:
        """Size of the resampling vocabulary."""
        return len(self.token_ids)

    def to(self, device: torch.device) -> "TokenVocabulary":
        """Move the lookup tensor to ``device`` (in place); return ``self``."""
        self.lookup = self.lookup.to(device)
        return self

    def tokens(self, text: str | Sequence[str]) -> list[str]:
        """Split ``text`` into token strings (a list of tokens is returned as a list)."""
        if isinstance(text, str):
            if self.splitter is not None:
                return list(self.splitter(text))
            if self.split_chars:
                return [c for c in text if not c.isspace()]
            if self.tokenizer is not None:
                return list(self.tokenizer.tokenize(text))
            return text.split()
        items = list(text)
        if not all(isinstance(t, str) for t in items):
            raise InvalidParameterError(
                "encode() takes a string or a list of token strings; to pass state indices, "
                "use them directly as a state"
            )
        return items

    def encode(self, text: str | Sequence[str], device: torch.device | None = None) -> torch.Tensor:
        """State indices of ``text``: a 1-D ``torch.long`` tensor (on ``device``).

        Raises
        ------
        VocabularyError
            If a token is outside the resampling vocabulary; the message names each offending
            token with its 1-based position (also in the error's ``unknown`` attribute, as
            ``(position, token)`` pairs, and ``details``, the message without its preamble).
        """
        toks = self.tokens(text)
        bad = [(k, t) for k, t in enumerate(toks, start=1) if t not in self._index]
        if bad:
            details = self.describe_unknown(bad)
            exc = VocabularyError(
                f"{len(bad)} token(s) outside the resampling vocabulary of {self.q}: {details}")
            exc.unknown, exc.details = bad, details  # type: ignore[attr-defined]
            raise exc
        idx = [self._index[t] for t in toks]
        return torch.tensor(idx, dtype=torch.long, device=device or self.lookup.device)

    def describe_unknown(self, bad: Sequence[tuple[int, str]], shown: int = 8) -> str:
        """Tokens outside the vocabulary with their 1-based positions, what to write instead
        where it is plain (capitals for lowercase letters), and the allowed tokens.

        Examples
        --------
        >>> v = TokenVocabulary([5, 6, 7], ["A", "C", "D"])
        >>> text = v.describe_unknown([(2, "c"), (4, "X")]).split("; ")
        >>> text[0]
        "'c' at position 2, 'X' at position 4 (positions count from 1)"
        >>> text[1]
        "lowercase 'c': the vocabulary is written in capitals, so write the sequence in uppercase"
        >>> text[2]
        'the 3 allowed tokens are A C D'
        """
        listed = ", ".join(f"{t!r} at position {k}" for k, t in bad[:shown])
        more = f" and {len(bad) - shown} more" if len(bad) > shown else ""
        lower = sorted({t for _, t in bad if t != t.upper() and t.upper() in self._index})
        hint = ("; lowercase " + ", ".join(map(repr, lower[:shown])) + (" ..." if len(lower) > shown
                else "") + ": the vocabulary is written in capitals, so write the sequence in "
                "uppercase") if lower else ""
        allowed = " ".join(self.labels[:40]) + (" ..." if self.q > 40 else "")
        return (f"{listed}{more} (positions count from 1){hint}; the {self.q} allowed tokens "
                f"are {allowed}")

    def decode(self, states: Any) -> str | list[str]:
        """Text of a state ``[n]`` (a string) or of a batch ``[B, n]`` (a list of strings).

        Raises
        ------
        VocabularyError
            If an entry is not an index ``0..q-1``.
        """
        arr = torch.as_tensor(states).detach().cpu()
        if arr.ndim not in (1, 2):
            raise InvalidParameterError(
                f"decode() takes [n] or [B, n] states, got shape {tuple(arr.shape)}"
            )
        if arr.numel() and (int(arr.min()) < 0 or int(arr.max()) >= self.q):
            raise VocabularyError(
                f"state entries must be indices 0..{self.q - 1} into the vocabulary; "
                "pass states produced by encode() or by a chain on this model"
            )
        rows = [arr] if arr.ndim == 1 else list(arr)
        texts = [self._join([self.labels[int(k)] for k in row]) for row in rows]
        return texts[0] if arr.ndim == 1 else texts

    def _join(self, toks: list[str]) -> str:
        if self.split_chars or self.splitter is not None:
            return "".join(toks)
        if self.tokenizer is not None:
            return self.tokenizer.convert_tokens_to_string(toks)
        return " ".join(toks)


def tokenizer_vocabulary(
    tokenizer: Any,
    allowed_tokens: Sequence[int | str] | None,
    model_vocab_size: int,
    split_chars: bool,
    device: torch.device,
    excluded: Sequence[int] = (),
    splitter: Callable[[str], list[str]] | None = None,
    config: Any = None,
) -> TokenVocabulary:
    """The resampling vocabulary of a Hugging Face tokenizer.

    Parameters
    ----------
    tokenizer : transformers tokenizer
    allowed_tokens : sequence of int or str, optional
        Token ids or token strings a chain may take. Default: every token id below
        ``model_vocab_size`` that is neither special (:func:`special_token_ids` of the
        tokenizer and ``config``) nor a reserved placeholder (:data:`PLACEHOLDER_TOKEN`), in
        increasing id order: a chain never takes ``[CLS]``, ``[MASK]``, ``<pad>``, ... at any
        temperature.
    model_vocab_size : int
        Number of output rows of the model (ids at or above it cannot be scored).
    split_chars : bool
        See :class:`TokenVocabulary`.
    device : torch.device
    excluded : sequence of int
        Further ids a chain may never take (e.g. a causal model's BOS).
    splitter : callable, optional
        See :class:`TokenVocabulary`.
    config : transformers config, optional
        The model's configuration: its special ids (``pad_token_id``, ``mask_token_id``, ...)
        are excluded too.

    Raises
    ------
    VocabularyError
        If an allowed token is unknown to the tokenizer, special, or beyond the model's output.
    """
    special = special_token_ids(tokenizer, config) | set(int(t) for t in excluded)
    if allowed_tokens is None:
        ids = sorted(
            i for tok, i in {str(t): int(v) for t, v in tokenizer.get_vocab().items()}.items()
            if i not in special and i < model_vocab_size and not PLACEHOLDER_TOKEN.fullmatch(tok)
        )
    else:
        ids = [_token_id(tokenizer, t) for t in allowed_tokens]
        for tok, i in zip(allowed_tokens, ids):
            if i in special:
                raise VocabularyError(
                    f"allowed token {tok!r} is a special token (id {i}); a chain may only take "
                    "ordinary tokens, remove it from allowed_tokens"
                )
            if not 0 <= i < model_vocab_size:
                raise VocabularyError(
                    f"allowed token {tok!r} has id {i}, outside the model's {model_vocab_size} "
                    "output tokens; remove it from allowed_tokens"
                )
    labels = [str(s) for s in tokenizer.convert_ids_to_tokens(ids)]
    return TokenVocabulary(ids, labels, tokenizer=tokenizer, split_chars=split_chars,
                           device=device, splitter=splitter)


def amino_acid_tokens(tokenizer: Any) -> list[str]:
    """The 20 standard amino acids in the tokenizer's vocabulary, alphabetically (the default
    resampling vocabulary of :data:`AMINO_ACID_MODEL_TYPES`).

    Raises
    ------
    VocabularyError
        If the tokenizer lacks one of them (pass ``allowed_tokens``).
    """
    from glauber.mlm_backend.sequences import AMINO_ACIDS

    vocab = tokenizer.get_vocab()
    missing = [a for a in AMINO_ACIDS if a not in vocab]
    if missing:
        raise VocabularyError(
            f"the tokenizer of this protein model has no token for {' '.join(missing)}; pass "
            "allowed_tokens=[...] to choose the resampling vocabulary"
        )
    return list(AMINO_ACIDS)


def _token_id(tokenizer: Any, token: int | str) -> int:
    if isinstance(token, str):
        i = tokenizer.convert_tokens_to_ids(token)
        if i is None or (i == tokenizer.unk_token_id and token != tokenizer.unk_token):
            raise VocabularyError(
                f"allowed token {token!r} is not in the tokenizer's vocabulary; "
                "check the spelling or pass token ids"
            )
        return int(i)
    if isinstance(token, bool) or not isinstance(token, numbers.Integral):
        raise VocabularyError(f"allowed_tokens entries must be token strings or ids, got {token!r}")
    if not 0 <= int(token) < len(tokenizer):
        raise VocabularyError(
            f"allowed token id {token} is outside the tokenizer's 0..{len(tokenizer) - 1}"
        )
    return int(token)


__all__ = [
    "AMINO_ACID_MODEL_TYPES",
    "CONFIG_SPECIAL_ID_KEYS",
    "PLACEHOLDER_TOKEN",
    "amino_acid_tokens",
    "special_token_ids",
    "tokenizer_vocabulary",
    "TokenVocabulary",
]
