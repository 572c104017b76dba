"""Hugging Face masked language models behind the ConditionalModel protocol.

For a state ``x`` (indices into the resampling vocabulary ``V``) and a site ``i``, the score of
``a`` in ``V`` is the MLM logit of token ``a`` at position ``i`` of the framed input
``[CLS] x_0 .. x_{i-1} [MASK] x_{i+1} .. x_{n-1} [SEP]`` (``<s> .. </s>`` for RoBERTa-like
tokenizers). These are the paper's local scores ``s_i(a; x_{-i})`` (§3.1): the conditional
``p_tau(a | x_{-i}) = softmax_V(s_i(.; x_{-i}) / tau)``, restricted to ``V``, is what the Glauber
kernel of §3.2 resamples from. The division by ``tau`` happens once, in
:func:`glauber.core.conditionals.log_conditionals`.
"""

from __future__ import annotations

import contextlib
import copy
import os
from typing import Any, Callable, Sequence

import torch

from glauber.core.validation import check_positive_int
from glauber.errors import (
    InvalidParameterError,
    SequenceLengthError,
    UnboundableModelError,
    VocabularyError,
)
from glauber.mlm_backend.device import (
    check_budget,
    resolve_autocast,
    resolve_device,
    resolve_dtype,
)
from glauber.mlm_backend.heads import (
    KNOWN_HEADS,
    checked_head_parts,
    float64_head,
    head_oscillation_bound,
    split_masked_lm,
)
from glauber.mlm_backend.sequence_model import TokenSequenceModel, load_pretrained
from glauber.mlm_backend.static_shapes import StaticShapeRunner
from glauber.mlm_backend.vocabulary import (
    AMINO_ACID_MODEL_TYPES,
    TokenVocabulary,
    amino_acid_tokens,
    tokenizer_vocabulary,
)
from glauber.theory.influence_bounds import OscillationBound

#: Model types whose positions start at ``pad_token_id + 1`` (RoBERTa's convention; ESM's
#: ``create_position_ids_from_input_ids`` too, so ESM-2's 1026 positions hold 1022 residues).
PADDING_OFFSET_MODEL_TYPES = frozenset(
    {"roberta", "xlm-roberta", "xlm-roberta-xl", "camembert", "roberta-prelayernorm",
     "data2vec-text", "esm"}
)
_HEADS = ("auto", "float64", "masked", "full")


class HFMaskedLM(TokenSequenceModel):
    """A Hugging Face masked LM as a ConditionalModel over fixed-length sequences.

    ESM checkpoints (``EsmForMaskedLM``: ESM-1b, ESM-1v, ESM-2) follow ESM's conventions: the
    input is ``<cls> x <eos>`` with ``<mask>`` at the site (``<pad>`` never appears: states
    have one length), the default vocabulary is the 20 standard amino acids and text is read
    one residue per character.

    Parameters
    ----------
    model : str, os.PathLike or transformers model
        An ``AutoModelForMaskedLM`` hub name or local directory (loaded with
        ``from_pretrained``; a hub name is downloaded only because the caller named it), or a
        model object, in which case ``tokenizer`` is required (the object is put in eval mode
        and moved to ``device``/``dtype`` in place).
    tokenizer : transformers tokenizer, optional
        Defaults to ``AutoTokenizer.from_pretrained(model)`` when ``model`` is a name.
    n : int, optional
        Sequence length (number of sites) of the states this model resamples. May be set
        later with :meth:`with_length`; while it is None, :meth:`scores` accepts any length.
    allowed_tokens : sequence of str or int, optional
        The resampling vocabulary ``V`` (token strings or ids). Default: the 20 amino acids for
        a protein model (:data:`~glauber.mlm_backend.vocabulary.AMINO_ACID_MODEL_TYPES`),
        else every token that is neither special nor a reserved placeholder
        (:func:`~glauber.mlm_backend.vocabulary.tokenizer_vocabulary`).
    device : str or torch.device
        ``"cpu"`` (default), ``"cuda"``, ``"cuda:1"``, ...
    dtype : None, str or torch.dtype
        Precision of the weights and of the whole forward pass: float32 (default);
        ``"bfloat16"`` (CPU or CUDA) or ``"float16"`` (CUDA only). Scores are always returned
        as float32.
    autocast : None, str or torch.dtype
        Run the forward pass under ``torch.autocast`` in ``"bfloat16"`` (CPU or CUDA) or
        ``"float16"`` (CUDA only) while the weights stay float32 (``dtype`` must then be
        float32): matrix products in low precision, softmax and layer norms in float32 as
        autocast decides. Scores are returned, and log-softmaxed downstream, in float32.
    max_batch_tokens, max_batch_bytes : int, optional
        Memory budget of one forward pass, in tokens (rows x (n + 2)) or in estimated bytes of
        activations; larger batches are split. Default: see :func:`device.token_budget`.
    max_batch_rows : int, optional
        Most rows (masked sequences) per forward pass, on top of the token and byte budgets:
        every path that scores through :meth:`scores` (the samplers, the pseudo-log-likelihood,
        the Metropolis-Hastings energies, score tables) is split into forwards of at most this
        many rows. Default: no row limit beyond the budgets.
    head : {"auto", "float64", "masked", "full"}
        ``"float64"`` applies the LM head only at the masked position and evaluates its final
        LayerNorm and decoder for the resampling vocabulary in float64
        (:class:`~glauber.mlm_backend.heads.Float64Head`): the scores then have a rigorous
        upper bound on their oscillation (:meth:`oscillation_upper_bound`). ``"masked"``
        applies the model's own head, in the model's precision, at the masked position only
        (BERT, RoBERTa, DistilBERT, ModernBERT, ESM, ALBERT; see
        :mod:`glauber.mlm_backend.heads`);
        ``"full"`` computes all logits and gathers the masked position; ``"auto"`` takes the
        first of ``"float64"``, ``"masked"``, ``"full"`` available (float64 is not, on MPS).
    compile : bool or str
        ``True`` wraps the forward pass in ``torch.compile``; a string names the compile backend.
    cuda_graphs : bool
        Run the forward pass through a
        :class:`~glauber.mlm_backend.static_shapes.StaticShapeRunner`: on CUDA each input
        shape ``(rows, n + 2)`` is captured once into a CUDA graph and replayed
        (:attr:`graph_mode` ``"captured"``); on other devices the same static buffers are used
        eagerly (``"eager-static"``: same results, no speed-up). Memory: one graph and
        its static buffers per shape, at most
        :data:`~glauber.mlm_backend.static_shapes.DEFAULT_MAX_SHAPES` shapes (least recently
        used evicted), and one graph memory pool about the size of the largest sub-batch's
        activations, reserved while the model lives. Not combinable with ``compile``. A
        :meth:`scores` call still waits on the host once for its input check unless
        ``check_inputs`` is False.
    split_chars : bool, optional
        Tokenise text one character per token (protein models). Default: True for a protein
        model (ESM), else False.
    splitter : callable, optional
        ``splitter(text) -> token strings``, splitting text instead of the tokenizer (the
        SMILES regex of :mod:`glauber.mlm_backend.reactions`); decoded text is then joined
        without spaces.
    name : str, optional
        Printable model name (defaults to the model's ``name_or_path``).
    check_inputs : bool
        Check that state entries and sites are in range on every :meth:`scores` call. On CUDA
        this costs one host synchronisation per call; a device loop whose states come from the
        chain itself may set the attribute to False (shapes are always checked).

    Attributes
    ----------
    n, q, vocab, labels, name
        The ConditionalModel protocol (``vocab`` holds token ids; states hold indices into it).
    head : str
        ``"float64"``, ``"masked"`` or ``"full"``: the path actually used.
    autocast : torch.dtype or None
        The autocast precision of the forward pass (None: off).
    static_runner : StaticShapeRunner or None
        The per-shape static buffers (and CUDA graphs) when ``cuda_graphs=True``.
    graph_mode : {"captured", "eager-static"} or None
        How ``cuda_graphs=True`` runs here; None when it is off.
    max_sites : int or None
        The longest state the model accepts (max positions minus the two special tokens).

    Raises
    ------
    UnknownModelError
        If ``model`` is a name that cannot be loaded.
    DeviceUnavailableError
        If the device does not exist (message: use ``--device cpu``).
    InvalidParameterError
        If ``head``, ``dtype``, ``autocast``, a budget or ``max_batch_rows`` is invalid,
        ``autocast`` is combined with non-float32 weights, ``cuda_graphs`` with ``compile``, or
        a model object comes without tokenizer.
    VocabularyError
        If ``allowed_tokens`` holds unknown or special tokens, or fewer than two.
    SequenceLengthError
        If ``n`` exceeds :attr:`max_sites`.
    UnboundableModelError
        If ``head="float64"`` and the model's head is unknown or lacks the ``LayerNorm ->
        Linear`` end the bound needs (:func:`~glauber.mlm_backend.heads.checked_head_parts`:
        the message names the class and that structure).

    Examples
    --------
    >>> from glauber.mlm_backend import load_antiberty
    >>> mlm = load_antiberty().with_length(5)
    >>> x = mlm.encode("EVQLV")[None]
    >>> mlm.scores(x, [2]).shape
    torch.Size([1, 20])
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any = None,
        n: int | None = None,
        allowed_tokens: Sequence[int | str] | None = None,
        device: str | torch.device = "cpu",
        dtype: Any = None,
        max_batch_tokens: int | None = None,
        max_batch_bytes: int | None = None,
        head: str = "auto",
        compile: bool | str = False,
        split_chars: bool | None = None,
        name: str | None = None,
        check_inputs: bool = True,
        autocast: Any = None,
        cuda_graphs: bool = False,
        splitter: Callable[[str], list[str]] | None = None,
        max_batch_rows: int | None = None,
    ) -> None:
        if head not in _HEADS:
            raise InvalidParameterError(f"head must be one of {_HEADS}, got {head!r}")
        self.device = resolve_device(device)
        self.dtype = resolve_dtype(dtype, self.device)
        self.autocast = resolve_autocast(autocast, self.device, self.dtype)
        if cuda_graphs and compile:
            raise InvalidParameterError(
                "cuda_graphs and compile are mutually exclusive (torch.compile's "
                "mode='reduce-overhead' captures CUDA graphs itself); choose one"
            )
        if isinstance(model, (str, os.PathLike)):
            model, tokenizer = load_pretrained_masked_lm(os.fspath(model), tokenizer)
        elif tokenizer is None:
            raise InvalidParameterError(
                "a model object needs its tokenizer: HFMaskedLM(model, tokenizer=...)"
            )
        if not hasattr(model, "config"):
            raise InvalidParameterError(
                "model must be a transformers masked LM (with a .config), got "
                f"{type(model).__name__}"
            )
        self.model = model.eval().to(device=self.device, dtype=self.dtype)
        self.tokenizer = tokenizer
        self.name = name or getattr(model.config, "_name_or_path", "") or type(model).__name__
        self.check_inputs = bool(check_inputs)
        self.cls_token_id, self.sep_token_id, self.mask_token_id = _framing_ids(tokenizer)
        protein = getattr(model.config, "model_type", None) in AMINO_ACID_MODEL_TYPES
        if allowed_tokens is None and protein:
            allowed_tokens = amino_acid_tokens(tokenizer)
        self.vocabulary: TokenVocabulary = tokenizer_vocabulary(
            tokenizer, allowed_tokens, int(model.config.vocab_size),
            protein if split_chars is None else split_chars, self.device, splitter=splitter,
            config=model.config,
        )
        self._parts = None if head == "full" else split_masked_lm(self.model)
        self._float64 = (float64_head(self.model, self.vocabulary.token_ids, self.device)
                         if head in ("auto", "float64") else None)
        if head in ("masked", "float64") and (self._parts is None or (
                head == "float64" and self._float64 is None)):
            if head == "float64" and self.device.type != "mps":
                checked_head_parts(self.model)  # names the class and the structure it lacks
            raise InvalidParameterError(
                f"head={head!r} is not available for {type(model).__name__} on "
                f"{self.device.type} (known: {', '.join(KNOWN_HEADS)}; float64 needs a device "
                "with float64); use head='auto' or head='full'"
            )
        if self._parts is None:
            self._float64 = None
        self.head = ("full" if self._parts is None else
                     "masked" if self._float64 is None else "float64")
        self.max_sites = _max_sites(model.config, tokenizer)
        self._budget = check_budget(max_batch_tokens, max_batch_bytes)
        self.max_batch_rows = (None if max_batch_rows is None
                               else check_positive_int(max_batch_rows, "max_batch_rows"))
        self._rows_cache: dict[int, int] = {}
        self._frame = torch.tensor(
            [self.cls_token_id, self.sep_token_id], dtype=torch.long, device=self.device
        )
        forward = (self._float64_logits if self._float64 is not None else
                   self._masked_logits if self._parts is not None else self._full_logits)
        if compile:
            backend = compile if isinstance(compile, str) else "inductor"
            forward = torch.compile(forward, backend=backend, dynamic=True)
        self._forward = forward
        self.static_runner = (
            StaticShapeRunner(
                self._vocab_scores, self.device, name=f"the forward pass of {self.name}"
            )
            if cuda_graphs
            else None
        )
        self.n: int | None = None
        if n is not None:
            self.n = self._checked_length(n)

    def with_length(self, n: int) -> "HFMaskedLM":
        """A copy resampling sequences of length ``n`` (the weights are shared, not copied).

        Raises
        ------
        InvalidParameterError
            If ``n`` is not a positive integer.
        SequenceLengthError
            If ``n`` exceeds :attr:`max_sites`.
        """
        other = copy.copy(self)  # shares the weights, precision and static runner
        other.n = self._checked_length(n)
        return other

    @property
    def graph_mode(self) -> str | None:
        """``"captured"`` (CUDA graphs), ``"eager-static"`` (static buffers, no graphs, off
        CUDA), or None when ``cuda_graphs`` is off."""
        return None if self.static_runner is None else self.static_runner.mode

    # ------------------------------------------------------------------------ text I/O
    def encode(self, text: str | Sequence[str]) -> torch.Tensor:
        """State indices (1-D ``torch.long`` on the model's device) of a text or token list.

        Raises
        ------
        VocabularyError
            If a token lies outside the resampling vocabulary.
        SequenceLengthError
            If the sequence is longer than :attr:`max_sites`.
        """
        states = super().encode(text)
        self._check_width(int(states.shape[0]))
        return states

    # ------------------------------------------------------------------------- scoring
    @torch.inference_mode()
    def masked_input_ids(self, states: Any, sites: Any) -> torch.Tensor:
        """The framed model input ``[B, n + 2]``: specials around, ``[MASK]`` at each site.

        Raises
        ------
        SequenceLengthError, VocabularyError
            See :meth:`scores`.
        """
        states, sites = self._checked_inputs(states, sites)
        return self._input_ids(states, sites)

    @torch.inference_mode()
    def scores(self, states: Any, sites: Any) -> torch.Tensor:
        """Protocol method: MLM logits at each state's masked site, restricted to ``vocab``.

        Parameters
        ----------
        states : array or tensor of int, shape (B, n)
            Vocabulary indices (numpy, list or torch; moved to the model's device).
        sites : int or array of int, shape (B,)
            The site masked in each state.

        Returns
        -------
        torch.Tensor, shape (B, q), float32, on the model's device
            Scores at ``tau = 1`` (logits; the conditional is their softmax over ``V``).

        Raises
        ------
        SequenceLengthError
            If states are not ``[B, n]`` or are longer than the model allows.
        VocabularyError
            If an entry is not an index ``0..q-1`` or a site is not ``0..n-1``.
        """
        states, sites = self._checked_inputs(states, sites)
        batch, width = states.shape
        out = torch.empty((batch, self.q), dtype=torch.float32, device=self.device)
        rows = self._rows_per_forward(width + 2)
        forward = self._vocab_scores if self.static_runner is None else self.static_runner
        for start in range(0, batch, rows):
            stop = min(start + rows, batch)
            ids = self._input_ids(states[start:stop], sites[start:stop])
            # a copy: the static runner's output is overwritten by its next call
            out[start:stop] = forward(ids, sites[start:stop] + 1)
        return out

    # ----------------------------------------------------------------------- internals
    def _input_ids(self, states: torch.Tensor, sites: torch.Tensor) -> torch.Tensor:
        batch = states.shape[0]
        ids = self.vocabulary.lookup[states]  # a new tensor: safe to write into
        ids.scatter_(1, sites[:, None], self.mask_token_id)
        cls = self._frame[:1].expand(batch, 1)
        sep = self._frame[1:].expand(batch, 1)
        return torch.cat([cls, ids, sep], dim=1)

    def _vocab_scores(self, ids: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """Float32 logits ``[rows, q]`` of the vocabulary at ``positions`` of the framed ``ids``."""
        with self._precision():
            logits = self._forward(ids, positions)
        if self._float64 is not None:  # already the vocabulary's, in float32
            return logits
        return logits.index_select(1, self.vocabulary.lookup).float()

    def oscillation_upper_bound(self) -> OscillationBound:
        """A context-free upper bound on Lemma 6's oscillation of every pair of sites.

        From the weights of the float64 head alone (:meth:`Float64Head.enclosure
        <glauber.mlm_backend.heads.Float64Head.enclosure>`, docs/theory.md "Upper bounds on
        influence"): every score difference ``s_a - s_b`` stays within ``R_ab`` of a constant
        for every context, so ``Delta_ij <= 2 max_{a != b} R_ab`` for all ``i != j``.

        Returns
        -------
        OscillationBound
            ``method = "layernorm-head"``.

        Raises
        ------
        UnboundableModelError
            If the scores do not come from the float64 head (``head`` is ``"masked"`` or
            ``"full"``, or the architecture's head is not ``LayerNorm -> linear``), or the
            model has no length yet.
        """
        if self._float64 is None:
            checked_head_parts(self.model)  # an unknown head: names the class and structure
            raise UnboundableModelError(
                f"{self.name} computes its scores with head={self.head!r}: no rigorous bound "
                "(torch's float32 LayerNorm has no a-priori error bound); build it with "
                "head='auto' or head='float64' on a device with float64"
            )
        if self.n is None:
            raise UnboundableModelError(
                f"{self.name} has no sequence length; set one with with_length(n)"
            )
        return head_oscillation_bound(self._float64, self.n, self.labels)

    def _precision(self) -> contextlib.AbstractContextManager:
        """``torch.autocast`` in :attr:`autocast` precision, or nothing. The cast-weight cache is
        off: each weight is used once per forward, and a cache filled outside a CUDA graph
        capture must not be read inside it (``make_graphed_callables`` refuses it too)."""
        if self.autocast is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=self.autocast, cache_enabled=False)

    # No attention_mask is passed: every input is unpadded ([B, n + 2], no [PAD]), which is what
    # a missing mask means, and transformers inspects the values of a given mask to decide
    # whether it can be skipped: one host synchronisation per forward on CUDA.
    def _float64_logits(self, ids: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        hidden = self._parts.encoder(input_ids=ids).last_hidden_state
        return self._float64(hidden[torch.arange(ids.shape[0], device=ids.device), positions])

    def _masked_logits(self, ids: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        hidden = self._parts.encoder(input_ids=ids).last_hidden_state
        at_mask = hidden[torch.arange(ids.shape[0], device=ids.device), positions]
        return self._parts.head(at_mask)

    def _full_logits(self, ids: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        logits = self.model(input_ids=ids).logits
        return logits[torch.arange(ids.shape[0], device=ids.device), positions]

    def _rows_per_forward(self, length: int) -> int:
        if length not in self._rows_cache:
            width = 0 if self._parts is not None else int(self.model.config.vocab_size)
            rows = self._rows_for(length, width)
            if self.max_batch_rows is not None:
                rows = min(rows, self.max_batch_rows)
            self._rows_cache[length] = rows
        return self._rows_cache[length]

    def rows_per_forward(self, width: int | None = None) -> int:
        """Most rows one forward pass takes for states of ``width`` sites (default ``n``):
        the smallest of the token budget, the byte budget and ``max_batch_rows``.

        Raises
        ------
        InvalidParameterError
            If neither ``width`` nor the model's ``n`` is set.
        """
        width = self.n if width is None else width
        if width is None:
            raise InvalidParameterError("give width=, or set a length with with_length(n)")
        return self._rows_per_forward(int(width) + 2)

    def _checked_length(self, n: Any) -> int:
        n = check_positive_int(n, "sequence length n")
        self._check_width(n)
        return n

    def _check_width(self, width: int) -> None:
        if self.max_sites is not None and width > self.max_sites:
            raise SequenceLengthError(
                f"a sequence of {width} tokens is longer than {self.name} allows "
                f"({self.max_sites} tokens besides the 2 special tokens); use a shorter sequence"
            )

    def __repr__(self) -> str:
        autocast = None if self.autocast is None else str(self.autocast).replace("torch.", "")
        return (
            f"HFMaskedLM(name={self.name!r}, n={self.n}, q={self.q}, head={self.head!r}, "
            f"device={str(self.device)!r}, dtype={str(self.dtype).replace('torch.', '')!r}, "
            f"autocast={autocast!r}, graph_mode={self.graph_mode!r})"
        )


def load_pretrained_masked_lm(name: str, tokenizer: Any = None) -> tuple[Any, Any]:
    """``AutoModelForMaskedLM`` and ``AutoTokenizer`` ``from_pretrained(name)``.

    Raises
    ------
    UnknownModelError
        If the name is neither a loadable local directory nor a reachable hub model
        (:func:`glauber.mlm_backend.registry.load_model` adds the names that work offline).
    """
    from transformers import AutoModelForMaskedLM

    return load_pretrained(
        AutoModelForMaskedLM, name, tokenizer, "masked LM",
        "pass a local directory with config.json, weights and tokenizer files, or a hub name "
        "reachable from this machine",
    )


def _framing_ids(tokenizer: Any) -> tuple[int, int, int]:
    cls = tokenizer.cls_token_id if tokenizer.cls_token_id is not None else tokenizer.bos_token_id
    sep = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id
    mask = tokenizer.mask_token_id
    missing = [k for k, v in (("cls/bos", cls), ("sep/eos", sep), ("mask", mask)) if v is None]
    if missing:
        raise VocabularyError(
            f"the tokenizer has no {', '.join(missing)} token; a masked LM needs [CLS]/<s>, "
            "[SEP]/</s> and [MASK]/<mask> tokens: pass the model's own tokenizer"
        )
    return int(cls), int(sep), int(mask)


def _max_sites(config: Any, tokenizer: Any) -> int | None:
    """The longest state: max positions (minus RoBERTa's padding offset) minus 2 specials."""
    limit = getattr(config, "max_position_embeddings", None)
    if limit is not None and getattr(config, "model_type", "") in PADDING_OFFSET_MODEL_TYPES:
        limit -= int(config.pad_token_id) + 1
    tok_limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(tok_limit, int) and tok_limit < 10**6:
        limit = tok_limit if limit is None else min(limit, tok_limit)
    return None if limit is None else int(limit) - 2


__all__ = [
    "HFMaskedLM",
    "load_pretrained_masked_lm",
    "PADDING_OFFSET_MODEL_TYPES",
]
