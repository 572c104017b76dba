"""SCEPTR's T-cell-receptor masked LMs as ConditionalModels, in plain torch.

SCEPTR (Nagano et al., "Contrastive learning of T cell receptor representations", Cell Systems
16 (2025) 101165; MIT licence) ships its models in the PyPI wheel ``sceptr==1.2.0`` as
``sceptr/_model_saves/<variant>/{config.json,state_dict.pt}``; the architecture is libtcrlm's
(``libtcrlm~=1.0``, read in version 1.1.3). This module reads those two files with plain torch
(``torch.load(weights_only=True)``), without importing sceptr, libtcrlm or their dependencies
(pandas, tidytcells), and computes what libtcrlm's ``Bert.get_mlm_token_predictions_for``
computes:

* **Input** (libtcrlm ``CdrTokeniser``; ``Cdr3Tokeniser``, ``AlphaCdrTokeniser`` and
  ``BetaCdrTokeniser`` for the other variants): one row per token, ``<cls>`` first and then
  the residues of each CDR loop in the order CDR1A, CDR2A, CDR3A, CDR1B, CDR2B, CDR3B (a loop
  that is absent or empty has no rows). A row holds the token index (``NULL 0, MASK 1, CLS 2``,
  then the 20 amino acids ``A C D ... Y`` at 3..22), the residue's 1-based position in its loop,
  the loop's length and the loop's compartment index (1..6 in that order; ``<cls>`` has 0, 0,
  0).
* **Embedding** (``CdrSimpleEmbedder``; ``Cdr3SimpleEmbedder``,
  ``SingleChainCdrSimpleEmbedder``): the concatenation of a one-hot token vector (22 entries:
  MASK, CLS and the amino acids; NULL is the zero vector), the relative position
  ``(position - 1) / (length - 1)`` (0.5 in a loop of one residue, 0 for ``<cls>``) and a
  one-hot compartment vector (6 entries; 2 for CDR3-only, 3 for single-chain variants): 29
  numbers for the default variants.
* **Encoder** (``SelfAttentionStackWithInitialProjection``): a bias-free ``Linear(29 -> d)``,
  then torch's post-LN ``TransformerEncoderLayer`` (ReLU, ``4 d`` feed-forward, LayerNorm
  ``eps = 1e-5``) 3 times (4 for ``large``), ``d = 64`` (16, 32, 128 for ``tiny``, ``small``,
  ``large``). The key padding mask marks NULL tokens, of which a masked TCR has none.
* **Head** (``AminoAcidTokenProjector``): ``Linear(d -> 20)``, row ``k`` scoring the amino acid
  of token index ``k + 3`` (the training loss subtracts the three default tokens). The encoder
  ends in its last layer's ``norm2``, so the scores are ``LayerNorm -> Linear`` of the last
  residual stream, which :class:`~glauber.mlm_backend.heads.Float64Head` evaluates in float64:
  :meth:`SceptrModel.oscillation_upper_bound` is then the rigorous weight bound of
  :mod:`glauber.theory.layernorm_head`.
* **Masking** (the training collator of the SCEPTR repository, ``MlmBatchCollator``): the
  masked residue's token index becomes MASK (1) while its position, loop length and
  compartment stay.

**Sites.** A state holds the amino acids of the CDR loops the variant reads, concatenated in
the order above: a chain resamples exactly those residues, over the 20 amino acids. ``<cls>``,
MASK and NULL are never sites and never values (the head has no row for them), and the loop
layout (which loop each site belongs to, and each loop's length) is part of the model, fixed
by the TCR it was built for (:meth:`SceptrModel.with_context`): resampling changes residues,
never lengths.

**Text.** A TCR is written loop by loop, separated by ``/``: six loops
``CDR1A/CDR2A/CDR3A/CDR1B/CDR2B/CDR3B`` (an empty loop is absent, as libtcrlm tokenises a chain
whose V gene is unknown), two loops ``CDR3A/CDR3B`` for the CDR3-only variants (which also
take the six-loop text and keep its two CDR3s), three loops for the single-chain variants
(which keep their chain's three loops of a six-loop text). Text without ``/`` is a lone CDR3B
(CDR3A for ``a_sceptr``). The CDR1 and CDR2 loops are the IMGT loops of the V genes, as
libtcrlm looks them up with tidytcells; this module takes the loops themselves.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Sequence

import numpy as np
import torch
from torch import nn

from glauber.core.validation import check_positive_int
from glauber.errors import (
    InvalidParameterError,
    MissingDependencyError,
    SequenceLengthError,
    UnboundableModelError,
    UnknownModelError,
    VocabularyError,
)
from glauber.mlm_backend.device import check_budget, resolve_device
from glauber.mlm_backend.heads import Float64Head, LayerNormHeadParts, head_oscillation_bound
from glauber.mlm_backend.sequence_model import TokenSequenceModel
from glauber.mlm_backend.sequences import AMINO_ACIDS, TCR_SEQUENCES
from glauber.mlm_backend.vocabulary import TokenVocabulary
from glauber.theory.influence_bounds import OscillationBound

SCEPTR_VERSION = "1.2.0"
#: What installs the weights (only ``config.json`` and ``state_dict.pt`` are read, so the
#: package's dependencies are not needed; ``pip install sceptr==1.2.0`` works too).
SCEPTR_INSTALL = f"pip install --no-deps sceptr=={SCEPTR_VERSION}"
#: libtcrlm's token indices: NULL (padding), MASK, CLS, then the amino acids A..Y.
NULL_TOKEN, MASK_TOKEN, CLS_TOKEN = 0, 1, 2
FIRST_AMINO_ACID_TOKEN = 3
#: ``sceptr.variant`` function name -> folder of ``sceptr/_model_saves``.
SCEPTR_VARIANTS = {
    "mlm_only": "SCEPTR_MLM_only", "default": "SCEPTR", "cdr3_only": "SCEPTR_CDR3_only",
    "cdr3_only_mlm_only": "SCEPTR_CDR3_only_MLM_only", "tiny": "SCEPTR_tiny",
    "small": "SCEPTR_small", "large": "SCEPTR_large", "average_pooling": "SCEPTR_average_pooling",
    "shuffled_data": "SCEPTR_shuffled_data", "synthetic_data": "SCEPTR_synthetic_data",
    "dropout_noise_only": "SCEPTR_dropout_noise_only", "finetuned": "SCEPTR_finetuned",
    "a_sceptr": "A_SCEPTR", "b_sceptr": "B_SCEPTR",
}
#: The six loops of a paired TCR, in libtcrlm's token order.
TCR_LOOPS = ("CDR1A", "CDR2A", "CDR3A", "CDR1B", "CDR2B", "CDR3B")
#: libtcrlm tokeniser -> (its embedder, the loops it reads, in token order).
TOKENISER_LOOPS = {
    "CdrTokeniser": ("CdrSimpleEmbedder", TCR_LOOPS),
    "Cdr3Tokeniser": ("Cdr3SimpleEmbedder", ("CDR3A", "CDR3B")),
    "AlphaCdrTokeniser": ("SingleChainCdrSimpleEmbedder", TCR_LOOPS[:3]),
    "BetaCdrTokeniser": ("SingleChainCdrSimpleEmbedder", TCR_LOOPS[3:]),
}
_LOOP_SEPARATOR = "/"
_STACK_PREFIX = "_self_attention_stack._standard_stack._self_attention_stack."


def sceptr_variant_folder(variant: str) -> str:
    """The ``_model_saves`` folder of a variant named as ``sceptr.variant`` names it
    (``mlm_only``) or by its folder (``SCEPTR_MLM_only``).

    Raises
    ------
    UnknownModelError
        If the name is neither.
    """
    if variant in SCEPTR_VARIANTS:
        return SCEPTR_VARIANTS[variant]
    if variant in SCEPTR_VARIANTS.values():
        return variant
    raise UnknownModelError(
        f"unknown SCEPTR variant {variant!r}; use one of {', '.join(SCEPTR_VARIANTS)} (the "
        "names of sceptr.variant) or their folders (SCEPTR_MLM_only, ...); SCEPTR_BLOSUM and "
        "SCEPTR_left_aligned embed tokens differently and are not supported"
    )


def sceptr_model_dir(variant: str = "mlm_only") -> Path:
    """The folder holding ``config.json`` and ``state_dict.pt`` of a variant, found in the
    installed ``sceptr`` package without importing it.

    Raises
    ------
    UnknownModelError
        If the variant is unknown.
    MissingDependencyError
        If sceptr is not installed, or its folder lacks the two files; the message says what
        to install, or where to put them.
    """
    folder_name = sceptr_variant_folder(variant)
    spec = importlib.util.find_spec("sceptr")
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError(
            f"the SCEPTR models need the weights of the sceptr package: {SCEPTR_INSTALL} "
            f"(--no-deps: glauber reads only config.json and state_dict.pt; pip install "
            f"sceptr=={SCEPTR_VERSION} works too)"
        )
    folder = Path(next(iter(spec.submodule_search_locations))) / "_model_saves" / folder_name
    missing = [f for f in ("config.json", "state_dict.pt") if not (folder / f).is_file()]
    if missing:
        raise MissingDependencyError(
            f"the installed sceptr package has no {' and '.join(missing)} in {folder}: put "
            f"those files of sceptr {SCEPTR_VERSION}'s sceptr/_model_saves/{folder_name}/ "
            f"there, or reinstall with {SCEPTR_INSTALL}"
        )
    return folder


@dataclass(frozen=True)
class SceptrArchitecture:
    """What a variant's ``config.json`` says about the network.

    Attributes
    ----------
    name : str
        The model's name in the config (``"SCEPTR (MLM only)"``).
    loops : tuple of str
        The CDR loops its tokeniser reads, in token order.
    embedding_dim, d_model, nhead, num_layers : int
        The initial projection's input size, the model width, heads and layers.
    """

    name: str
    loops: tuple[str, ...]
    embedding_dim: int
    d_model: int
    nhead: int
    num_layers: int

    @classmethod
    def from_config(cls, config: dict[str, Any], where: Path) -> "SceptrArchitecture":
        """Read and check a libtcrlm config (the classes this module reproduces).

        Raises
        ------
        UnknownModelError
            If a class differs from the supported ones or the embedding size disagrees.
        """
        try:
            model = config["model"]
            tokeniser = config["data"]["tokeniser"]["class"]
            embedder = model["token_embedder"]["class"]
            stack = model["self_attention_stack"]
            head = model["mlm_token_prediction_projector"]["class"]
            args = stack["initargs"]
        except (KeyError, TypeError) as exc:
            raise UnknownModelError(f"{where}: not a libtcrlm model config ({exc!r} missing); "
                                    f"reinstall with {SCEPTR_INSTALL}") from exc
        expected = TOKENISER_LOOPS.get(tokeniser, (None, ()))
        stack_class = stack.get("class")
        if (embedder != expected[0] or head != "AminoAcidTokenProjector"
                or stack_class != "SelfAttentionStackWithInitialProjection"):
            raise UnknownModelError(
                f"{where}: {tokeniser} / {embedder} / {stack_class} / {head} is not a "
                "SCEPTR architecture glauber reproduces (a CDR tokeniser with its simple one-hot "
                "embedder, an initial projection and the amino-acid projector)")
        loops = expected[1]
        arch = cls(str(model.get("name", where.name)), tuple(loops), int(args["embedding_dim"]),
                   int(args["d_model"]), int(args["nhead"]), int(args["num_layers"]))
        if arch.embedding_dim != 22 + 1 + len(loops) or "dim_feedforward" in args:
            raise UnknownModelError(
                f"{where}: embedding_dim {arch.embedding_dim} is not 22 tokens + 1 position + "
                f"{len(loops)} compartments (or a feed-forward size is set); not a SCEPTR "
                "simple-embedder model")
        return arch


class SceptrNetwork(nn.Module):
    """libtcrlm's SCEPTR encoder and head as plain torch modules (module docstring).

    ``project`` is the initial projection, ``layers`` torch ``TransformerEncoderLayer``s whose
    parameters are used by :meth:`residual_at` (post-LN, ReLU, no dropout), ``head`` the
    amino-acid projector. ``config`` holds the sizes the memory budget reads.
    """

    def __init__(self, arch: SceptrArchitecture) -> None:
        super().__init__()
        d = arch.d_model
        self.project = nn.Linear(arch.embedding_dim, d, bias=False)
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(d, arch.nhead, 4 * d, dropout=0.0, batch_first=True)
            for _ in range(arch.num_layers))
        self.head = nn.Linear(d, len(AMINO_ACIDS))
        self.config = SimpleNamespace(hidden_size=d, intermediate_size=4 * d,
                                      num_attention_heads=arch.nhead)

    def residual_at(self, embedded: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """The last layer's residual stream before its ``norm2``, at ``positions`` only.

        Parameters
        ----------
        embedded : torch.Tensor, shape (B, L, embedding_dim)
        positions : torch.Tensor of int, shape (B,)

        Returns
        -------
        torch.Tensor, shape (B, d)
            ``norm2`` of it is the encoder's output there; the last layer's attention is
            asked for those queries only.
        """
        x = self.project(embedded)
        rows = torch.arange(x.shape[0], device=x.device)
        for k, layer in enumerate(self.layers):
            last = k == len(self.layers) - 1
            query = x[rows, positions][:, None, :] if last else x
            attended = layer.self_attn(query, x, x, need_weights=False)[0]
            h = layer.norm1(query + attended)
            r = h + layer.linear2(torch.relu(layer.linear1(h)))
            if last:
                return r[:, 0, :]
            x = layer.norm2(r)
        raise AssertionError("a SCEPTR network has at least one layer")

    def float64_head(self, device: torch.device) -> Float64Head:
        """The last ``norm2`` and the projector, evaluated in float64 (20 rows, A..Y)."""
        parts = LayerNormHeadParts(lambda h: h, self.layers[-1].norm2, self.head)
        return Float64Head(parts, range(len(AMINO_ACIDS)), device)


def load_sceptr_network(variant: str = "mlm_only") -> tuple[SceptrNetwork, SceptrArchitecture]:
    """A variant's network with the package's weights, strictly loaded (CPU, float32, eval).

    The one-hot tables libtcrlm stores as buffers are checked against the embedding this
    module builds.

    Raises
    ------
    UnknownModelError, MissingDependencyError
        As :func:`sceptr_model_dir`; :class:`SceptrArchitecture`; or a state dict whose keys
        or one-hot tables differ (the message says to reinstall).
    """
    folder = sceptr_model_dir(variant)
    arch = SceptrArchitecture.from_config(
        json.loads((folder / "config.json").read_text(encoding="utf-8")), folder)
    raw = torch.load(folder / "state_dict.pt", map_location="cpu", weights_only=True)
    state, tables = {}, {}
    for key, value in raw.items():
        if key.startswith("_token_embedder."):
            tables[key.rsplit(".", 2)[-2]] = value
        elif key.startswith(_STACK_PREFIX):
            state[key[len(_STACK_PREFIX):]] = value
        else:
            state[{"_self_attention_stack._initial_projector.weight": "project.weight",
                   "_mlm_token_prediction_projector.projector.weight": "head.weight",
                   "_mlm_token_prediction_projector.projector.bias": "head.bias"}.get(key, key)
                  ] = value
    net = SceptrNetwork(arch)
    expected_tables = {"_token_embedding": _one_hot_table(23),
                       "_compartment_embedding": _one_hot_table(len(arch.loops) + 1)}
    bad = sorted(k for k, t in expected_tables.items()
                 if k not in tables or not torch.equal(tables[k], t))
    try:
        if bad:
            raise RuntimeError(f"one-hot tables {bad} differ from libtcrlm's")
        net.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise UnknownModelError(
            f"{folder / 'state_dict.pt'} does not match libtcrlm's SCEPTR network "
            f"({str(exc).splitlines()[0]}); reinstall with {SCEPTR_INSTALL}") from exc
    return net.eval(), arch


def _one_hot_table(rows: int) -> torch.Tensor:
    """libtcrlm's ``OneHotTokenIndexEmbedding`` table: a zero row (NULL), then the identity."""
    return torch.cat([torch.zeros(1, rows - 1), torch.eye(rows - 1)])


@dataclass(frozen=True)
class TcrLayout:
    """Which loops a SCEPTR state covers and how long each is.

    Attributes
    ----------
    loops : tuple of str
        The loops the variant reads (``TCR_LOOPS`` or a part), in token order.
    lengths : tuple of int
        Each loop's residue count (0: absent).
    """

    loops: tuple[str, ...]
    lengths: tuple[int, ...]

    @property
    def n(self) -> int:
        """Number of sites (residues)."""
        return int(sum(self.lengths))

    def site_names(self) -> list[str]:
        """``CDR3B:5``-style names of the sites (1-based within the loop)."""
        return [f"{loop}:{p}" for loop, length in zip(self.loops, self.lengths)
                for p in range(1, length + 1)]

    def columns(self) -> torch.Tensor:
        """libtcrlm's token columns 1..3 ``[n + 1, 3]``: each row's position in its loop
        (from 1), the loop's length and its compartment (from 1); ``<cls>`` first with 0s."""
        pos, length, comp = [0], [0], [0]
        for k, size in enumerate(self.lengths, start=1):
            pos += range(1, size + 1)
            length += [size] * size
            comp += [k] * size
        return torch.tensor([pos, length, comp]).T

    def features(self) -> torch.Tensor:
        """The rows of the embedding that do not depend on the tokens, ``<cls>`` first:
        ``[n + 1, 1 + len(loops)]`` (relative position, compartment one-hot), computed as
        libtcrlm's ``SimpleRelativePositionEmbedding`` computes them (float32 division)."""
        p, L, comp = self.columns().unbind(1)
        relative = (p - 1) / (L - 1)
        relative[relative.isnan()] = 0.5
        relative[p == NULL_TOKEN] = 0
        compartments = _one_hot_table(len(self.loops) + 1)[comp]
        return torch.cat([relative[:, None], compartments], dim=1)

    def join(self, residues: str) -> str:
        """``residues`` (``n`` letters) written loop by loop with ``/`` (without ``/`` when
        only the last loop holds residues: :func:`parse_tcr` reads it back the same)."""
        if not any(self.lengths[:-1]):
            return residues
        out, start = [], 0
        for size in self.lengths:
            out.append(residues[start:start + size])
            start += size
        return _LOOP_SEPARATOR.join(out)


def parse_tcr(text: str, loops: Sequence[str]) -> tuple[TcrLayout, str]:
    """The layout and residues of a TCR written loop by loop (module docstring, "Text").

    Parameters
    ----------
    text : str
        ``/``-separated loops; whitespace is ignored.
    loops : sequence of str
        The loops the variant reads.

    Returns
    -------
    (TcrLayout, str)
        The layout and the residues concatenated in token order.

    Raises
    ------
    VocabularyError
        If a character is not one of the 20 amino acids; the message names it, its loop, its
        position in the loop and in the state (both from 1).
    SequenceLengthError
        If the number of loops fits no reading, or no loop holds a residue.
    """
    parts = ["".join(part.split()) for part in str(text).split(_LOOP_SEPARATOR)]
    loops = tuple(loops)
    if len(parts) == 1:
        chosen = ["" for _ in loops[:-1]] + parts
    elif len(parts) == len(loops):
        chosen = parts
    elif len(parts) == len(TCR_LOOPS):
        chosen = [parts[TCR_LOOPS.index(loop)] for loop in loops]
    else:
        raise SequenceLengthError(
            f"a TCR of {len(parts)} '/'-separated loops: this SCEPTR variant reads "
            f"{'/'.join(loops)} (or the six loops {'/'.join(TCR_LOOPS)}, or a lone "
            f"{loops[-1]} without '/'); leave a loop empty where it is unknown")
    bad, offset = [], 0
    for loop, part in zip(loops, chosen):
        bad += [(offset + k + 1, loop, k + 1, c) for k, c in enumerate(part)
                if c not in AMINO_ACIDS]
        offset += len(part)
    if bad:
        listed = ", ".join(f"{c!r} at {loop} position {k} (site {site})"
                           for site, loop, k, c in bad[:8])
        lower = " (write the residues in capitals)" if any(c.upper() in AMINO_ACIDS
                                                          for *_, c in bad) else ""
        raise VocabularyError(
            f"{len(bad)} character(s) of the TCR are not amino acids: {listed}; positions "
            f"count from 1{lower}; SCEPTR reads the 20 amino acids {AMINO_ACIDS}")
    layout = TcrLayout(loops, tuple(len(p) for p in chosen))
    if layout.n == 0:
        raise SequenceLengthError(f"the TCR {text!r} has no residue; give at least one loop")
    return layout, "".join(chosen)


class SceptrModel(TokenSequenceModel):
    """A SCEPTR variant resampling the CDR residues of one TCR layout (module docstring).

    Scores at ``tau = 1`` are the variant's 20 MLM logits at the masked residue, from its last
    LayerNorm and projector in float64 (:class:`~glauber.mlm_backend.heads.Float64Head`);
    the division by ``tau`` happens once, in :func:`glauber.core.conditionals.log_conditionals`.

    Build it with :func:`load_sceptr`. Attributes follow the ConditionalModel protocol: ``n``
    (the layout's residues), ``q = 20``, ``vocab`` (libtcrlm token indices 3..22), ``labels``
    (``A C ... Y``); besides ``layout``, ``variant``, ``device``, ``cache_key``.

    Parameters
    ----------
    network : SceptrNetwork
    arch : SceptrArchitecture
    layout : TcrLayout
    variant : str
        The ``_model_saves`` folder, for the name and the cache key.
    device : str or torch.device
    max_batch_tokens, max_batch_bytes, max_batch_rows : int, optional
        Memory budget of one forward pass, as :class:`~glauber.mlm_backend.HFMaskedLM`.
    check_inputs : bool
        Check state entries and sites on every call.
    name : str, optional

    Raises
    ------
    DeviceUnavailableError
        If the device does not exist.
    InvalidParameterError
        If the device has no float64 (Apple's MPS), or a budget is invalid.
    """

    def __init__(self, network: SceptrNetwork, arch: SceptrArchitecture, layout: TcrLayout,
                 variant: str, device: str | torch.device = "cpu",
                 max_batch_tokens: int | None = None, max_batch_bytes: int | None = None,
                 max_batch_rows: int | None = None, check_inputs: bool = True,
                 name: str | None = None) -> None:
        self.device = resolve_device(device)
        if self.device.type == "mps":
            raise InvalidParameterError(
                "SCEPTR's scores come from a float64 head, and MPS has no float64; use "
                "device='cpu' or 'cuda'")
        self.dtype = torch.float32
        self.model = network.to(self.device)
        self.arch, self.variant = arch, variant
        self.name = name or ("sceptr" if variant == SCEPTR_VARIANTS["mlm_only"]
                             else f"sceptr:{variant}")
        self.head = "float64"
        self.check_inputs = bool(check_inputs)
        self.vocabulary = TokenVocabulary(
            range(FIRST_AMINO_ACID_TOKEN, FIRST_AMINO_ACID_TOKEN + len(AMINO_ACIDS)),
            list(AMINO_ACIDS), split_chars=True, device=self.device)
        self._float64 = network.float64_head(self.device)
        self._token_table = _one_hot_table(23).to(self.device)
        self._budget = check_budget(max_batch_tokens, max_batch_bytes)
        self.max_batch_rows = (None if max_batch_rows is None
                               else check_positive_int(max_batch_rows, "max_batch_rows"))
        self._set_layout(layout)

    def _set_layout(self, layout: TcrLayout) -> None:
        self.layout = layout
        self.n: int | None = layout.n
        self._features = layout.features().to(self.device)
        self._rows = self._rows_for(layout.n + 1, 0)
        if self.max_batch_rows is not None:
            self._rows = min(self._rows, self.max_batch_rows)

    # ------------------------------------------------------------------------ layouts
    def with_context(self, text: str) -> "SceptrModel":
        """A copy for the layout of the TCR ``text`` (weights shared); its ``n`` is that TCR's
        residue count. :func:`glauber.models.resolve_model` calls it with a window's context.

        Raises
        ------
        VocabularyError, SequenceLengthError
            As :func:`parse_tcr`.
        """
        layout, _ = parse_tcr(text, self.arch.loops)
        other = copy.copy(self)
        other._set_layout(layout)
        return other

    def with_length(self, n: int) -> "SceptrModel":
        """This model when ``n`` is its number of residues.

        Raises
        ------
        SequenceLengthError
            Otherwise: the layout fixes the length; use :meth:`with_context` (or
            ``load_sceptr(n=...)`` for a lone CDR3B of ``n`` residues).
        """
        n = check_positive_int(n, "sequence length n")
        if n != self.n:
            raise SequenceLengthError(
                f"{self.name} resamples the {self.n} CDR residues of its TCR "
                f"({self.layout.join('.' * self.n)}), not {n}: build it for another TCR with "
                "with_context(text) or --context, or load_sceptr(n=...) for a lone CDR3B")
        return self

    # ------------------------------------------------------------------------ text I/O
    def encode(self, text: str | Sequence[str]) -> torch.Tensor:
        """State indices of a TCR written loop by loop (its loop lengths must be this
        model's) or of plain residues (any length: a window's state).

        Raises
        ------
        VocabularyError
            If a character is not an amino acid (named with its loop and position).
        SequenceLengthError
            If ``/``-separated loops differ in length from the model's layout.
        """
        if not isinstance(text, str):
            return self.vocabulary.encode(text, device=self.device)
        layout, residues = parse_tcr(text, self.arch.loops)
        if _LOOP_SEPARATOR in text and layout != self.layout:
            raise SequenceLengthError(
                f"the TCR {text!r} has loop lengths {layout.lengths} but {self.name} was built "
                f"for {self.layout.lengths} ({'/'.join(self.layout.loops)}); build the model "
                "for it with with_context(text) or --context")
        return self.vocabulary.encode(residues, device=self.device)

    def decode(self, states: Any) -> str | list[str]:
        """Text of states: loop by loop with ``/`` for full states, plain residues otherwise."""
        text = self.vocabulary.decode(states)
        if isinstance(text, str):
            return self.layout.join(text) if len(text) == self.n else text
        return [self.layout.join(t) if len(t) == self.n else t for t in text]

    def default_states(self) -> torch.Tensor | None:
        """The shipped TCRs (:data:`~glauber.mlm_backend.sequences.TCR_SEQUENCES`) whose layout
        is this model's, else None (the caller draws random states)."""
        rows = []
        for text in TCR_SEQUENCES.values():
            layout, residues = parse_tcr(text, self.arch.loops)
            if layout == self.layout:
                rows.append(self.vocabulary.encode(residues, device=self.device))
        return torch.stack(rows) if rows else None

    # ------------------------------------------------------------------------- scoring
    @torch.inference_mode()
    def token_rows(self, states: Any, sites: Any) -> torch.Tensor:
        """libtcrlm's tokenised input ``[B, n + 1, 4]`` (token, position, length,
        compartment), MASK at each state's site: what its ``Bert`` would be given."""
        states, sites = self._checked_inputs(states, sites)
        ids = self._token_ids(states, sites)
        fixed = self.layout.columns().to(self.device)
        return torch.cat([ids[:, :, None], fixed.expand(ids.shape[0], -1, -1)], dim=2)

    @torch.inference_mode()
    def scores(self, states: Any, sites: Any) -> torch.Tensor:
        """Protocol method: the 20 amino-acid logits at each state's masked site.

        Parameters
        ----------
        states : array or tensor of int, shape (B, n)
            Vocabulary indices (0..19 for A..Y).
        sites : int or array of int, shape (B,)

        Returns
        -------
        torch.Tensor, shape (B, 20), float32, on the model's device

        Raises
        ------
        SequenceLengthError, VocabularyError
            If states are not ``[B, n]`` indices or a site is out of range.
        """
        states, sites = self._checked_inputs(states, sites)
        out = torch.empty((states.shape[0], self.q), dtype=torch.float32, device=self.device)
        for start in range(0, states.shape[0], self._rows):
            stop = min(start + self._rows, states.shape[0])
            ids = self._token_ids(states[start:stop], sites[start:stop])
            out[start:stop] = self._float64(
                self.model.residual_at(self._embed(ids), sites[start:stop] + 1))
        return out

    def _token_ids(self, states: torch.Tensor, sites: torch.Tensor) -> torch.Tensor:
        ids = self.vocabulary.lookup[states]
        ids.scatter_(1, sites[:, None], MASK_TOKEN)
        cls = torch.full((ids.shape[0], 1), CLS_TOKEN, dtype=ids.dtype, device=ids.device)
        return torch.cat([cls, ids], dim=1)

    def _embed(self, ids: torch.Tensor) -> torch.Tensor:
        """libtcrlm's simple embedding of token ids ``[B, n + 1]`` in this layout."""
        one_hot = self._token_table[ids]
        return torch.cat([one_hot, self._features.expand(ids.shape[0], -1, -1)], dim=-1)

    def oscillation_upper_bound(self) -> OscillationBound:
        """A context-free upper bound on Lemma 6's oscillation of every pair of sites, from
        the weights of the last LayerNorm and the projector
        (:func:`~glauber.mlm_backend.heads.head_oscillation_bound`).

        Raises
        ------
        UnboundableModelError
            Never for a built model (its scores always come from the float64 head); kept for
            the protocol's callers, which catch it.
        """
        if self.n is None:
            raise UnboundableModelError(f"{self.name} has no layout; use with_context(text)")
        return head_oscillation_bound(self._float64, self.n, self.labels)

    @property
    def cache_key(self) -> str:
        """The weights' key (:attr:`TokenSequenceModel.cache_key`) with the variant, the
        architecture and the layout, which the scores depend on beyond the residues."""
        weights = TokenSequenceModel.cache_key.fget(self)  # type: ignore[attr-defined]
        h = hashlib.sha256(weights.encode())
        h.update(repr((self.variant, self.arch, self.layout)).encode())
        return h.hexdigest()

    def __repr__(self) -> str:
        return (f"SceptrModel(name={self.name!r}, n={self.n}, q={self.q}, "
                f"layout={self.layout.join('.' * (self.n or 0))!r}, "
                f"device={str(self.device)!r})")


def load_sceptr(variant: str = "mlm_only", tcr: str | None = None, n: int | None = None,
                device: Any = "cpu", dtype: Any = None, autocast: Any = None,
                **kw: Any) -> SceptrModel:
    """A SCEPTR variant of the installed ``sceptr==1.2.0`` as a :class:`SceptrModel`.

    Parameters
    ----------
    variant : str
        A ``sceptr.variant`` name (``mlm_only``, the default; ``default``,
        ``cdr3_only_mlm_only``, ``tiny``, ...) or its folder (``SCEPTR_MLM_only``).
    tcr : str, optional
        The TCR whose CDR residues are resampled: a shipped name
        (:data:`~glauber.mlm_backend.sequences.TCR_SEQUENCES`, e.g. ``sceptr-example``) or
        the loops written with ``/`` (module docstring, "Text").
    n : int, optional
        Without ``tcr``: a lone CDR3B of ``n`` residues (CDR3A for ``a_sceptr``); with it,
        must equal the TCR's residue count. Neither: the shipped example TCR.
    device : str or torch.device
    dtype, autocast : None or "float32"
        Accepted for :func:`glauber.models.resolve_model`; SCEPTR computes in float32 (its
        head in float64), so anything else is refused.
    **kw
        Further :class:`SceptrModel` arguments (``max_batch_rows``, ``check_inputs``,
        ``name``, budgets).

    Raises
    ------
    UnknownModelError, MissingDependencyError
        As :func:`load_sceptr_network`.
    VocabularyError, SequenceLengthError
        As :func:`parse_tcr`, or if ``n`` disagrees with ``tcr``.
    InvalidParameterError
        If ``dtype`` or ``autocast`` asks for another precision than float32.

    Examples
    --------
    >>> mlm = load_sceptr(tcr="sceptr-example")  # doctest: +SKIP
    >>> mlm.n, mlm.q  # doctest: +SKIP
    (57, 20)
    """
    for flag, value in (("dtype", dtype), ("autocast", autocast)):
        if value not in (None, "float32", torch.float32):
            raise InvalidParameterError(
                f"{flag}={value!r}: SCEPTR computes in float32 (its head in float64, for the "
                f"weight bound); drop {flag}")
    network, arch = load_sceptr_network(variant)
    if tcr is None and n is not None:
        layout = TcrLayout(arch.loops, tuple(0 for _ in arch.loops[:-1])
                           + (check_positive_int(n, "sequence length n"),))
    else:
        text = tcr if tcr is not None else next(iter(TCR_SEQUENCES.values()))
        text = TCR_SEQUENCES.get(text.strip().lower().replace("-", "_"), text)
        layout, _ = parse_tcr(text, arch.loops)
    model = SceptrModel(network, arch, layout, sceptr_variant_folder(variant), device, **kw)
    return model if n is None else model.with_length(n)


__all__ = [
    "SCEPTR_INSTALL",
    "SCEPTR_VARIANTS",
    "SCEPTR_VERSION",
    "SceptrArchitecture",
    "SceptrModel",
    "SceptrNetwork",
    "TCR_LOOPS",
    "TcrLayout",
    "load_sceptr",
    "load_sceptr_network",
    "parse_tcr",
    "sceptr_model_dir",
    "sceptr_variant_folder",
]
