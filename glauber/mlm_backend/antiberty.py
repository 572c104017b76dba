"""AntiBERTy, the offline default masked LM (docs/architecture.md, "Real models").

PyPI ``antiberty==0.1.3`` (MIT; Ruffolo et al., "Deciphering antibody affinity maturation with
language models and weakly supervised learning", arXiv 2112.07782) ships a pretrained 8-layer
BERT masked LM over the 20 amino acids (vocabulary of 25 with 5 specials) under
``antiberty/trained_models/AntiBERTy_md_smooth/``. Its state dict loads into
``transformers.BertForMaskedLM``; the extra pooler and species/chain/graft heads are ignored.

``antiberty`` 1.x ships no weights: it reads them from the folder ``$ANTIBERTY_WEIGHTS_DIR``
(``config.json`` with ``model.safetensors`` or ``pytorch_model.bin``) before it tries the
Hugging Face hub, and its vocabulary is built in (the same 25 tokens). This module looks where
1.x looks, in the same order, but never at the hub: ``$ANTIBERTY_WEIGHTS_DIR``, then the
installed package's ``trained_models/AntiBERTy_md_smooth``. A 1.x checkpoint stores one copy of
each tied tensor (the decoder's weight is the token embedding, its bias ``cls.predictions.bias``),
which ``BertForMaskedLM`` ties back on loading.
"""

from __future__ import annotations

import functools
import importlib.metadata
import importlib.util
import os
from pathlib import Path
from typing import Any

import torch

from glauber.errors import MissingDependencyError
from glauber.mlm_backend.device import resolve_device, resolve_dtype
from glauber.mlm_backend.hf_masked_lm import HFMaskedLM
from glauber.mlm_backend.sequence_model import quiet_transformers
from glauber.mlm_backend.sequences import AMINO_ACIDS

ANTIBERTY_VERSION = "0.1.3"
#: The folder antiberty 1.x (and this loader, first) reads the weights from.
WEIGHTS_DIR_ENV = "ANTIBERTY_WEIGHTS_DIR"
#: The weight files a checkpoint folder may hold (either), besides ``config.json``.
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
#: AntiBERTy's vocabulary in id order: 0.1.3's ``trained_models/vocab.txt`` and 1.x's built-in
#: ``antiberty.tokenizer.VOCAB``.
ANTIBERTY_VOCAB = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *AMINO_ACIDS)
#: Checkpoint keys that belong to AntiBERTy's extra heads, not to ``BertForMaskedLM``.
EXTRA_HEAD_PREFIXES = ("bert.pooler.", "cls.species.", "cls.chain.", "cls.graft.")
_INSTALL = (
    f"pip install antiberty=={ANTIBERTY_VERSION} (only {ANTIBERTY_VERSION} ships the weights)"
)
_PUT_WEIGHTS = (
    f"put AntiBERTy's config.json and model.safetensors (or pytorch_model.bin) in a folder and "
    f"set {WEIGHTS_DIR_ENV} to it, or {_INSTALL}"
)


def _is_weights_dir(folder: Path) -> bool:
    return (folder / "config.json").is_file() and any(
        (folder / name).is_file() for name in WEIGHT_FILES)


def antiberty_files() -> tuple[Path, Path | None]:
    """The checkpoint folder of AntiBERTy and its ``vocab.txt`` (None: the built-in one).

    ``$ANTIBERTY_WEIGHTS_DIR`` first (as antiberty 1.x reads it), else the folder that
    ``antiberty==0.1.3`` ships.

    Raises
    ------
    MissingDependencyError
        If ``$ANTIBERTY_WEIGHTS_DIR`` is set to a folder without the weight files, or it is not
        set and ``antiberty`` is not installed or ships no weights (1.x); the message says where
        to put them.
    """
    env = os.environ.get(WEIGHTS_DIR_ENV)
    if env:
        folder = Path(env).expanduser()
        if not _is_weights_dir(folder):
            raise MissingDependencyError(
                f"{WEIGHTS_DIR_ENV}={env} holds no AntiBERTy checkpoint (config.json and "
                f"{' or '.join(WEIGHT_FILES)}); {_PUT_WEIGHTS}"
            )
        vocab = folder / "vocab.txt"
        return folder, vocab if vocab.is_file() else None
    spec = importlib.util.find_spec("antiberty")
    if spec is None or spec.origin is None:
        raise MissingDependencyError(f"AntiBERTy needs the antiberty package: {_INSTALL}")
    root = Path(spec.origin).parent / "trained_models"
    model_dir, vocab = root / "AntiBERTy_md_smooth", root / "vocab.txt"
    if not _is_weights_dir(model_dir):
        raise MissingDependencyError(
            f"antiberty {_installed_version()} ships no weights (no {model_dir}): "
            f"{_PUT_WEIGHTS}"
        )
    return model_dir, vocab if vocab.is_file() else None


def _installed_version() -> str:
    try:
        return importlib.metadata.version("antiberty")
    except importlib.metadata.PackageNotFoundError:
        return "(version unknown)"


def load_antiberty(
    n: int | None = None, device: str | torch.device = "cpu", **kw: Any
) -> HFMaskedLM:
    """AntiBERTy as an :class:`HFMaskedLM` over the 20 amino acids.

    Amino acids are separate tokens (``"EVQLV"`` is ``E V Q L V``: ``split_chars=True``).
    The weights are loaded once per process and device/precision and shared between the
    models returned (do not modify them).

    Parameters
    ----------
    n : int, optional
        Sequence length; see :class:`HFMaskedLM`.
    device : str or torch.device
    **kw
        Further :class:`HFMaskedLM` arguments (``dtype``, ``max_batch_tokens``, ``head``,
        ``compile``, ``allowed_tokens``, ...).

    Raises
    ------
    MissingDependencyError
        If no checkpoint is found (:func:`antiberty_files`: the message says where to put
        one), or it lacks keys ``BertForMaskedLM`` needs, or its vocabulary is not AntiBERTy's.
    DeviceUnavailableError
        If the device does not exist (use ``device="cpu"``).

    Examples
    --------
    >>> from glauber.mlm_backend.sequences import TRASTUZUMAB_VH
    >>> mlm = load_antiberty(n=len(TRASTUZUMAB_VH))
    >>> mlm.decode(mlm.encode(TRASTUZUMAB_VH)) == TRASTUZUMAB_VH
    True
    """
    dev = resolve_device(device)
    dtype = resolve_dtype(kw.pop("dtype", None), dev)
    model, tokenizer = _antiberty_model(str(dev), dtype)
    kw.setdefault("allowed_tokens", list(AMINO_ACIDS))
    kw.setdefault("name", "antiberty")
    return HFMaskedLM(
        model, tokenizer=tokenizer, n=n, device=dev, dtype=dtype, split_chars=True, **kw
    )


def _antiberty_model(device: str, dtype: torch.dtype) -> tuple[Any, Any]:
    """The model of the checkpoint folder found now (loaded once per folder, device and
    precision)."""
    model_dir, vocab = antiberty_files()
    return _load_checkpoint(model_dir, vocab, device, dtype)


@functools.lru_cache(maxsize=4)
def _load_checkpoint(model_dir: Path, vocab: Path | None, device: str,
                     dtype: torch.dtype) -> tuple[Any, Any]:
    from transformers import BertForMaskedLM, BertTokenizer

    with quiet_transformers():
        model, info = BertForMaskedLM.from_pretrained(str(model_dir), output_loading_info=True)
    missing = sorted(info["missing_keys"])
    unexpected = sorted(
        k for k in info["unexpected_keys"]
        if not k.startswith(EXTRA_HEAD_PREFIXES) and not k.endswith("position_ids")
    )
    if missing or unexpected:
        raise MissingDependencyError(
            f"the AntiBERTy checkpoint in {model_dir} does not match BertForMaskedLM (missing "
            f"keys: {missing}; unexpected keys: {unexpected}); {_PUT_WEIGHTS}"
        )
    if vocab is not None:
        tokens = tuple(line.strip() for line in vocab.read_text().splitlines() if line.strip())
        if tokens != ANTIBERTY_VOCAB:
            raise MissingDependencyError(
                f"{vocab} is not AntiBERTy's vocabulary ({' '.join(ANTIBERTY_VOCAB)}); "
                f"{_PUT_WEIGHTS}"
            )
    if int(model.config.vocab_size) != len(ANTIBERTY_VOCAB):
        raise MissingDependencyError(
            f"the checkpoint in {model_dir} has {model.config.vocab_size} tokens, AntiBERTy "
            f"has {len(ANTIBERTY_VOCAB)}; {_PUT_WEIGHTS}"
        )
    tokenizer = BertTokenizer(vocab={t: k for k, t in enumerate(ANTIBERTY_VOCAB)},
                              do_lower_case=False)
    return model.eval().to(device=torch.device(device), dtype=dtype), tokenizer


__all__ = [
    "antiberty_files",
    "ANTIBERTY_VERSION",
    "ANTIBERTY_VOCAB",
    "EXTRA_HEAD_PREFIXES",
    "WEIGHTS_DIR_ENV",
    "WEIGHT_FILES",
    "load_antiberty",
]
