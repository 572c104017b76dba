"""An autoregressive control: a causal LM's joint turned into compatible conditionals.

A causal LM defines a joint ``p(x) = prod_t p(x_t | BOS, x_<t)`` on sequences of length ``n``. Its
single-site conditionals ``p(x_i = a | x_{-i}) = p(x^{i->a}) / sum_b p(x^{i->b})`` (over the
resampling vocabulary ``V``) are those of one distribution (``p`` renormalised on ``V^n``), so they
are compatible (Definition 1): by Theorem 3 that distribution is stationary and the chain
reversible, and every rectangle has ``delta = 0`` (Proposition 4; docs/theory.md, `prop4`: every
edge log-ratio is a difference of joint log-probabilities). The scores are the joint
log-probabilities ``log p(x^{i->a})`` of the ``q`` candidate sequences, computed in one batch.
"""

from __future__ import annotations

import copy
import os
from typing import Any, Sequence

import numpy as np
import torch

from glauber.core.validation import check_positive_int
from glauber.errors import (
    InvalidParameterError,
    SequenceLengthError,
    VocabularyError,
)
from glauber.mlm_backend.device import check_budget, resolve_device, resolve_dtype
from glauber.mlm_backend.sequence_model import TokenSequenceModel, load_pretrained
from glauber.mlm_backend.vocabulary import (
    TokenVocabulary,
    special_token_ids,
    tokenizer_vocabulary,
)


class CausalLMControl(TokenSequenceModel):
    """Conditionals of a causal LM's joint, as a ConditionalModel (rectangle delta 0).

    Parameters
    ----------
    model_or_name : str, os.PathLike or transformers causal LM
        An ``AutoModelForCausalLM`` hub name or local directory (``from_pretrained``), or a
        model object.
    n : int
        Sequence length (number of sites); must fit the model's positions.
    allowed_tokens : sequence of str or int, optional
        The resampling vocabulary ``V``. Default: every non-special token of the tokenizer, or
        every id except BOS and the config's special ids when there is no tokenizer
        (:func:`~glauber.mlm_backend.vocabulary.special_token_ids`). Each call scores
        ``B x q`` sequences, so keep ``V`` small for large tokenizers.
    tokenizer : transformers tokenizer, optional
        Defaults to ``AutoTokenizer.from_pretrained(name)`` when a name is given.
    bos_token_id : int, optional
        The token every sequence starts from. Default: the tokenizer's or config's BOS.
    labels : sequence of str, optional
        Token labels when there is no tokenizer (default ``"0", "1", ...``, one per entry of V).
    device, dtype, max_batch_tokens, max_batch_bytes
        As for :class:`~glauber.mlm_backend.hf_masked_lm.HFMaskedLM`.
    split_chars : bool
        Tokenise text one character per token.
    name : str, optional
    check_inputs : bool
        Range-check states and sites on every call (one host synchronisation on CUDA).

    Raises
    ------
    UnknownModelError
        If a name cannot be loaded.
    InvalidParameterError
        If there is no BOS token, or ``n`` is not a positive integer.
    SequenceLengthError
        If ``n`` exceeds the model's positions.
    VocabularyError
        If ``allowed_tokens`` is invalid or contains BOS.
    """

    def __init__(
        self,
        model_or_name: Any,
        n: int,
        allowed_tokens: Sequence[int | str] | None = None,
        tokenizer: Any = None,
        bos_token_id: int | None = None,
        labels: Sequence[str] | None = None,
        device: str | torch.device = "cpu",
        dtype: Any = None,
        max_batch_tokens: int | None = None,
        max_batch_bytes: int | None = None,
        split_chars: bool = False,
        name: str | None = None,
        check_inputs: bool = True,
    ) -> None:
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype, self.device)
        model = model_or_name
        if isinstance(model, (str, os.PathLike)):
            model, tokenizer = _load_causal_lm(os.fspath(model), tokenizer)
        self.model = model.eval().to(device=self.device, dtype=self.dtype)
        self.tokenizer = tokenizer
        config = model.config
        self.name = name or getattr(config, "_name_or_path", "") or type(model).__name__
        self.check_inputs = bool(check_inputs)
        bos = bos_token_id
        if bos is None and tokenizer is not None:
            bos = tokenizer.bos_token_id
        if bos is None:
            bos = getattr(config, "bos_token_id", None)
        if bos is None:
            raise InvalidParameterError(
                "the causal LM has no BOS token; pass bos_token_id= (the token every sequence "
                "is conditioned on first)"
            )
        self.bos_token_id = int(bos)
        vocab_size = int(config.vocab_size)
        if tokenizer is not None:
            self.vocabulary = tokenizer_vocabulary(
                tokenizer, allowed_tokens, vocab_size, split_chars, self.device,
                excluded=(self.bos_token_id,), config=config,
            )
        else:
            special = special_token_ids(None, config) | {self.bos_token_id}
            ids = (
                [i for i in range(vocab_size) if i not in special]
                if allowed_tokens is None
                else [int(t) for t in allowed_tokens]
            )
            if self.bos_token_id in ids or any(not 0 <= i < vocab_size for i in ids):
                raise VocabularyError(
                    f"allowed_tokens must be ids in 0..{vocab_size - 1} other than BOS "
                    f"({self.bos_token_id})"
                )
            names = labels if labels is not None else [str(k) for k in range(len(ids))]
            self.vocabulary = TokenVocabulary(
                ids, names, split_chars=split_chars, device=self.device
            )
        self.max_sites = getattr(config, "n_positions", None) or getattr(
            config, "max_position_embeddings", None
        )
        self._budget = check_budget(max_batch_tokens, max_batch_bytes)
        self._rows: int | None = None
        self.n = self._checked_length(n)

    def with_length(self, n: int) -> "CausalLMControl":
        """A copy over sequences of length ``n`` (the weights are shared)."""
        other = copy.copy(self)
        other.n = self._checked_length(n)
        other._rows = None
        return other

    @torch.inference_mode()
    def log_joint(self, states: Any) -> torch.Tensor:
        """``log p(x) = sum_t log p(x_t | BOS, x_<t)`` for states ``[B, n]``: float32 ``[B]``.

        Log-softmax over the model's full vocabulary in float32, the sum over positions in
        float64.

        Raises
        ------
        SequenceLengthError, VocabularyError
            If the states are not ``[B, n]`` indices ``0..q-1``.
        """
        states = self._checked_states(states)
        return self._log_joint_ids(self.vocabulary.lookup[states]).float()

    @torch.inference_mode()
    def scores(self, states: Any, sites: Any) -> torch.Tensor:
        """Protocol method: ``log p(x^{i->a})`` for every ``a`` in ``V``, ``[B, q]`` float32.

        Raises
        ------
        SequenceLengthError
            If states are not ``[B, n]``.
        VocabularyError
            If an entry is not an index ``0..q-1`` or a site is not ``0..n-1``.
        """
        states = self._checked_states(states)
        batch = states.shape[0]
        sites = self._checked_sites(sites, batch)
        if self.check_inputs and bool(((sites < 0) | (sites >= self.n)).any()):
            raise VocabularyError(f"sites must lie in 0..{self.n - 1}")
        ids = self.vocabulary.lookup[states]
        cand = ids[:, None, :].repeat(1, self.q, 1)  # [B, q, n]: candidate x^{i->a}
        index = sites[:, None, None].expand(batch, self.q, 1)
        cand.scatter_(2, index, self.vocabulary.lookup[None, :, None].expand(batch, self.q, 1))
        joint = self._log_joint_ids(cand.reshape(batch * self.q, self.n))
        return joint.reshape(batch, self.q).float()

    def _log_joint_ids(self, ids: torch.Tensor) -> torch.Tensor:
        rows = self._rows_per_forward()
        out = torch.empty(ids.shape[0], dtype=torch.float64, device=self.device)
        bos = torch.full((1, 1), self.bos_token_id, dtype=torch.long, device=self.device)
        for start in range(0, ids.shape[0], rows):
            chunk = ids[start:start + rows]
            inputs = torch.cat([bos.expand(chunk.shape[0], 1), chunk[:, :-1]], dim=1)
            # No attention_mask: the inputs are unpadded, and a given mask has its values
            # inspected by transformers (a host synchronisation per forward on CUDA).
            logits = self.model(input_ids=inputs).logits
            logp = torch.log_softmax(logits.float(), dim=-1)
            token_logp = logp.gather(2, chunk[:, :, None]).squeeze(2)
            out[start:start + rows] = token_logp.double().sum(dim=1)
        return out

    def _rows_per_forward(self) -> int:
        if self._rows is None:
            self._rows = self._rows_for(self.n, 2 * int(self.model.config.vocab_size))
        return self._rows

    def _checked_length(self, n: Any) -> int:
        n = check_positive_int(n, "sequence length n")
        if self.max_sites is not None and n > self.max_sites:
            raise SequenceLengthError(
                f"n = {n} exceeds the {self.max_sites} positions of {self.name} "
                "(BOS + n - 1 inputs); use a shorter sequence"
            )
        return n

    def _checked_states(self, states: Any) -> torch.Tensor:
        states = torch.as_tensor(states, device=self.device).long()
        if states.ndim != 2 or states.shape[1] != self.n:
            raise SequenceLengthError(
                f"states must have shape [B, n] with n = {self.n}, got {tuple(states.shape)}"
            )
        if self.check_inputs and bool(((states < 0) | (states >= self.q)).any()):
            raise VocabularyError(
                f"state entries must be indices 0..{self.q - 1} into model.vocab, not token ids"
            )
        return states

    def __repr__(self) -> str:
        return (
            f"CausalLMControl(name={self.name!r}, n={self.n}, q={self.q}, "
            f"device={str(self.device)!r})"
        )


def tiny_gpt2_control(
    vocab_size: int = 20,
    n: int = 8,
    seed: int = 0,
    init_scale: float = 0.5,
    labels: Sequence[str] | None = None,
    device: str | torch.device = "cpu",
    **kw: Any,
) -> CausalLMControl:
    """A randomly initialised 2-layer GPT-2 as the default autoregressive control.

    Parameters
    ----------
    vocab_size : int
        Size ``q`` of the resampling vocabulary (tokens ``0..q-1``); the model has one more
        token, ``q``, used as BOS.
    n : int
        Sequence length (the model gets exactly ``n`` positions).
    seed : int
        Seed of the weights (the global torch RNG is left untouched).
    init_scale : float
        Standard deviation of the initial weights; the GPT-2 default 0.02 gives nearly uniform
        conditionals, 0.5 gives conditionals far from uniform (a non-trivial control).
    labels : sequence of str, optional
        Printable token labels (default ``"0", "1", ...``).
    device : str or torch.device
    **kw
        Further :class:`CausalLMControl` arguments.

    Raises
    ------
    InvalidParameterError
        If ``vocab_size < 2``, ``n < 1`` or ``init_scale <= 0``.
    """
    from transformers import GPT2Config, GPT2LMHeadModel

    for label, value, low in (("vocab_size", vocab_size, 2), ("n", n, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise InvalidParameterError(f"{label} must be an integer >= {low}, got {value!r}")
    if not init_scale > 0:
        raise InvalidParameterError(f"init_scale must be > 0, got {init_scale!r}")
    config = GPT2Config(
        vocab_size=vocab_size + 1, n_positions=n, n_embd=32, n_layer=2, n_head=2,
        bos_token_id=vocab_size, eos_token_id=vocab_size, initializer_range=init_scale,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = GPT2LMHeadModel(config)
    return CausalLMControl(
        model, n, allowed_tokens=list(range(vocab_size)), labels=labels, device=device,
        name=kw.pop("name", f"tiny-gpt2-control(q={vocab_size}, seed={seed})"), **kw,
    )


def _load_causal_lm(name: str, tokenizer: Any) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM

    return load_pretrained(
        AutoModelForCausalLM, name, tokenizer, "causal LM",
        "pass a local directory or a model object, or use tiny_gpt2_control() offline",
    )


__all__ = [
    "CausalLMControl",
    "tiny_gpt2_control",
]
