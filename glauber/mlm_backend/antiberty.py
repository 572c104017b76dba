"""AntiBERTy, the offline default masked LM (docs/architecture.md, "Real models").

PyPI ``antiberty==0.1.3`` (MIT; Ruffolo et al., "Deciphering antibody affinity maturation with
language models and weakly supervised learning", arXiv 2112.07782) ships a pretrained 8-layer
BERT masked LM over the 20 amino acids (vocabulary of 25 with 5 specials) under
``antiberty/trained_models/AntiBERTy_md_smooth/``. Its state dict loads into
``transformers.BertForMaskedLM``; the extra pooler and species/chain/graft heads are ignored.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
from pathlib import Path
from typing import Any, Iterator

import torch

from glauber.errors import MissingDependencyError
from glauber.mlm_backend.device import resolve_device, resolve_dtype
from glauber.mlm_backend.hf_masked_lm import HFMaskedLM
from glauber.mlm_backend.sequences import AMINO_ACIDS

ANTIBERTY_VERSION = "0.1.3"
#: Checkpoint keys that belong to AntiBERTy's extra heads, not to ``BertForMaskedLM``.
EXTRA_HEAD_PREFIXES = ("bert.pooler.", "cls.species.", "cls.chain.", "cls.graft.")
_INSTALL = (
    f"pip install antiberty=={ANTIBERTY_VERSION} (only {ANTIBERTY_VERSION} ships the weights)"
)


def antiberty_files() -> tuple[Path, Path]:
    """Paths of the shipped checkpoint directory and ``vocab.txt``.

    Raises
    ------
    MissingDependencyError
        If ``antiberty`` is not installed or this version ships no weights.
    """
    spec = importlib.util.find_spec("antiberty")
    if spec is None or spec.origin is None:
        raise MissingDependencyError(f"AntiBERTy needs the antiberty package: {_INSTALL}")
    root = Path(spec.origin).parent / "trained_models"
    model_dir, vocab = root / "AntiBERTy_md_smooth", root / "vocab.txt"
    needed = (model_dir / "config.json", model_dir / "pytorch_model.bin", vocab)
    if not all(p.is_file() for p in needed):
        raise MissingDependencyError(
            f"the installed antiberty package has no shipped weights under {root}: {_INSTALL}"
        )
    return model_dir, vocab


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
        If ``antiberty==0.1.3`` is missing, or its checkpoint lacks keys ``BertForMaskedLM``
        needs.
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


@functools.lru_cache(maxsize=4)
def _antiberty_model(device: str, dtype: torch.dtype) -> tuple[Any, Any]:
    from transformers import BertForMaskedLM, BertTokenizer

    model_dir, vocab = antiberty_files()
    with _quiet_transformers():
        model, info = BertForMaskedLM.from_pretrained(str(model_dir), output_loading_info=True)
    missing = sorted(info["missing_keys"])
    unexpected = sorted(
        k for k in info["unexpected_keys"]
        if not k.startswith(EXTRA_HEAD_PREFIXES) and not k.endswith("position_ids")
    )
    if missing or unexpected:
        raise MissingDependencyError(
            f"the AntiBERTy checkpoint in {model_dir} does not match BertForMaskedLM (missing "
            f"keys: {missing}; unexpected keys: {unexpected}); reinstall it: {_INSTALL}"
        )
    tokenizer = BertTokenizer(str(vocab), do_lower_case=False)
    return model.eval().to(device=torch.device(device), dtype=dtype), tokenizer


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Silence the load report (the ignored extra heads) and the progress bar while loading."""
    from transformers.utils import logging

    verbosity, bar = logging.get_verbosity(), logging.is_progress_bar_enabled()
    logging.set_verbosity_error()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        logging.set_verbosity(verbosity)
        if bar:
            logging.enable_progress_bar()


__all__ = [
    "antiberty_files",
    "ANTIBERTY_VERSION",
    "EXTRA_HEAD_PREFIXES",
    "load_antiberty",
]
