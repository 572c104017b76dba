"""Sapiens antibody language models: fairseq RoBERTa-small checkpoints as ``RobertaForMaskedLM``.

Sapiens (Prihoda et al., mAbs 14:1, 2022, doi:10.1080/19420862.2021.2020203; MIT licence) is a
pair of masked language models trained on human antibody heavy (``vh``) and light (``vl``)
variable regions. The sdist of PyPI ``sapiens==1.0.0`` ships both fairseq checkpoints
(``sapiens/models/v1/checkpoint_{vh,vl}.pt``, 4 layers, 128 hidden, 8 heads, 256 ffn) and the
fairseq dictionary ``dict.txt``. This module finds or fetches them (without installing sapiens,
whose dependencies pin fairseq 0.10.2) and converts them to ``transformers`` with plain torch:

* vocabulary: fairseq ``Dictionary`` order, i.e. the specials ``<s> <pad> </s> <unk>`` at ids
  0..3, the ``dict.txt`` symbols (the 20 amino acids ``A C D ... Y``) at 4..23, and ``<mask>``
  appended by fairseq's ``masked_lm`` task at 24. Sapiens tokenises a sequence letter by letter
  (``sapiens/roberta.py``: ``' '.join(seq)`` then ``Dictionary.encode_line``) and wraps it in
  ``<s> ... </s>``; :func:`sapiens_tokenizer` does the same.
* architecture: fairseq 0.10 ``RobertaEncoder`` builds a ``TransformerSentenceEncoder`` with
  ``encoder_normalize_before=True`` hard-coded, which in that class only adds a LayerNorm after
  the embeddings (``emb_layer_norm``); its layers are post-LN, exactly as in HF RoBERTa. Learned
  positions start at ``padding_idx + 1`` (fairseq ``make_positions``), as HF RoBERTa's
  ``create_position_ids_from_input_ids`` does, so the position table is copied unchanged.
  fairseq's LayerNorm uses ``eps = 1e-5``; the output projection is tied to the token embedding.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import pickle
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from glauber.errors import MissingDependencyError, UnknownModelError
from glauber.mlm_backend.hf_masked_lm import HFMaskedLM
from glauber.mlm_backend.sequences import AMINO_ACIDS

SAPIENS_VERSION = "1.0.0"
SAPIENS_REQUIREMENT = f"sapiens=={SAPIENS_VERSION}"
SAPIENS_SDIST = f"sapiens-{SAPIENS_VERSION}.tar.gz"
# sha256 of the PyPI sdist sapiens-1.0.0.tar.gz (files on PyPI are immutable).
SAPIENS_SDIST_SHA256 = "41a8242da8ced4c4390ab6167950c6abb53ce84e3a7519282ccd680254d3119a"
SAPIENS_CHAINS = {"vh": "checkpoint_vh.pt", "vl": "checkpoint_vl.pt"}
FAIRSEQ_SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")
FAIRSEQ_MASK = "<mask>"
FAIRSEQ_PAD_ID = 1
FAIRSEQ_LAYER_NORM_EPS = 1e-5

# Where the model files sit inside the sapiens package (and inside the sdist's top folder).
_MODEL_SUBDIR = Path("models") / "v1"
_SDIST_MEMBERS = tuple(sorted({*SAPIENS_CHAINS.values(), "dict.txt"}))


def sapiens_cache_dir(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Folder that holds the unpacked sdist: ``cache_dir``, else ``$GLAUBER_CACHE/sapiens-1.0.0``,
    else ``~/.cache/glauber/sapiens-1.0.0``."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    root = os.environ.get("GLAUBER_CACHE") or Path.home() / ".cache" / "glauber"
    return Path(root).expanduser() / f"sapiens-{SAPIENS_VERSION}"


def _check_chain(chain: str) -> str:
    if chain not in SAPIENS_CHAINS:
        raise UnknownModelError(
            f"unknown Sapiens chain {chain!r}; use one of {sorted(SAPIENS_CHAINS)} "
            "('vh' for heavy chains, 'vl' for kappa and lambda light chains)"
        )
    return SAPIENS_CHAINS[chain]


def _installed_model_dir() -> Path | None:
    """``models/v1`` of an installed ``sapiens`` package, found without importing it."""
    spec = importlib.util.find_spec("sapiens")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / _MODEL_SUBDIR


def _manual_instructions(cache_dir: Path) -> str:
    return (
        f"fetch it by hand with `python -m pip download --no-deps --no-binary :all: "
        f"{SAPIENS_REQUIREMENT} -d DIR`, then unpack DIR/{SAPIENS_SDIST} so that "
        f"{cache_dir / 'sapiens' / _MODEL_SUBDIR}/ holds {', '.join(_SDIST_MEMBERS)} "
        f"(`tar xzf DIR/{SAPIENS_SDIST} -C {cache_dir.parent}` does it for the default cache "
        "folder; set GLAUBER_CACHE to move it). Do not `pip install sapiens`: it pulls in "
        "fairseq, which this loader exists to avoid"
    )


def _sdist_model_files(archive: str | os.PathLike[str], cache_dir: Path) -> dict[str, bytes]:
    """The bytes of ``sapiens-1.0.0/sapiens/models/v1/{checkpoint_vh.pt, checkpoint_vl.pt,
    dict.txt}`` in the archive (regular files only; no path from the archive is used to write)."""
    prefix = f"sapiens-{SAPIENS_VERSION}/sapiens/{_MODEL_SUBDIR.as_posix()}/"
    files: dict[str, bytes] = {}
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar.getmembers():
                name = member.name.removeprefix(prefix)
                source = tar.extractfile(member) if member.isfile() else None
                if name in _SDIST_MEMBERS and member.name == prefix + name and source is not None:
                    files[name] = source.read()
    except (tarfile.TarError, OSError) as exc:
        raise MissingDependencyError(
            f"cannot read {archive} as a .tar.gz archive ({exc}): {_manual_instructions(cache_dir)}"
        ) from exc
    missing = [prefix + name for name in _SDIST_MEMBERS if name not in files]
    if missing:
        raise MissingDependencyError(
            f"{archive} has no file {', '.join(missing)}; it is not the {SAPIENS_SDIST} sdist: "
            f"{_manual_instructions(cache_dir)}"
        )
    return files


def unpack_sapiens_sdist(archive: str | os.PathLike[str], cache_dir: str | os.PathLike[str]) -> Path:
    """Unpack the model files of a Sapiens sdist into ``cache_dir`` atomically.

    Only the regular files ``sapiens-1.0.0/sapiens/models/v1/{checkpoint_vh.pt,
    checkpoint_vl.pt, dict.txt}`` are read from the archive. They are written to a temporary
    sibling folder that is then renamed to ``cache_dir``, so a reader never sees a half-written
    cache; if another process won the race, its copy is kept.

    Returns
    -------
    Path
        ``cache_dir / "sapiens" / "models" / "v1"``.

    Raises
    ------
    MissingDependencyError
        If the archive is unreadable or lacks one of the model files, or ``cache_dir`` exists
        without them.
    """
    cache_dir = Path(cache_dir)
    files = _sdist_model_files(archive, cache_dir)
    done = cache_dir / "sapiens" / _MODEL_SUBDIR
    cache_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{cache_dir.name}-", dir=cache_dir.parent))
    try:
        target = staging / "sapiens" / _MODEL_SUBDIR
        target.mkdir(parents=True)
        for name, data in files.items():
            (target / name).write_bytes(data)
        try:
            os.rename(staging, cache_dir)
        except OSError as exc:
            if not all((done / name).is_file() for name in _SDIST_MEMBERS):
                raise MissingDependencyError(
                    f"cannot move the unpacked model files to {cache_dir} ({exc}); remove that "
                    "folder (it is incomplete) and try again"
                ) from exc
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return done


def _download_sdist(cache_dir: Path) -> Path:
    """Fetch the sdist with pip (a package-index fetch) and unpack it into ``cache_dir``."""
    cache_dir.parent.mkdir(parents=True, exist_ok=True)
    print(f"glauber: fetching {SAPIENS_REQUIREMENT} from the package index into {cache_dir} "
          "(once)...", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(prefix=".sapiens-download-", dir=cache_dir.parent) as tmp:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                   "--disable-pip-version-check", "--dest", tmp, SAPIENS_REQUIREMENT]
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise MissingDependencyError(
                f"could not run `{' '.join(command)}` ({exc}); {_manual_instructions(cache_dir)}"
            ) from exc
        archive = Path(tmp) / SAPIENS_SDIST
        if result.returncode != 0 or not archive.is_file():
            lines = [ln.strip() for ln in (result.stderr or result.stdout).splitlines()
                     if ln.strip()]
            errors = [ln for ln in lines if ln.startswith("ERROR")] or lines[-1:]
            raise MissingDependencyError(
                f"pip could not download {SAPIENS_REQUIREMENT} (exit {result.returncode}): "
                f"{' '.join(errors)[:600]}. No network or package index? "
                f"{_manual_instructions(cache_dir)}"
            )
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        if digest != SAPIENS_SDIST_SHA256:
            raise MissingDependencyError(
                f"the package index served {SAPIENS_SDIST} with sha256 {digest}, expected "
                f"{SAPIENS_SDIST_SHA256}; refusing to load it: {_manual_instructions(cache_dir)}"
            )
        return unpack_sapiens_sdist(archive, cache_dir)


def sapiens_checkpoint_path(chain: str = "vh", cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Path of a Sapiens fairseq checkpoint, fetching the PyPI sdist into the cache if needed.

    Looks in (1) an installed ``sapiens`` package, (2) the cache folder (see
    :func:`sapiens_cache_dir`), else (3) runs ``python -m pip download --no-deps --no-binary
    :all: sapiens==1.0.0``, checks the archive's sha256 and unpacks its model files into the
    cache with :func:`unpack_sapiens_sdist`. ``dict.txt`` lies next to the returned file.

    Parameters
    ----------
    chain : {"vh", "vl"}
        Heavy- or light-chain model.
    cache_dir : path, optional
        Cache folder; default ``$GLAUBER_CACHE/sapiens-1.0.0`` or
        ``~/.cache/glauber/sapiens-1.0.0``.

    Raises
    ------
    UnknownModelError
        If ``chain`` is not ``"vh"`` or ``"vl"``.
    MissingDependencyError
        If the download fails; the message says what to run by hand.
    """
    name = _check_chain(chain)
    installed = _installed_model_dir()
    if installed is not None and (installed / name).is_file():
        return installed / name
    folder = sapiens_cache_dir(cache_dir)
    cached = folder / "sapiens" / _MODEL_SUBDIR / name
    if not cached.is_file():
        _download_sdist(folder)
    return cached


@dataclass(frozen=True)
class FairseqCheckpoint:
    """The parts of a fairseq RoBERTa checkpoint that define the masked LM.

    Attributes
    ----------
    args : dict
        Training arguments (``argparse.Namespace`` of fairseq <= 0.10, as a dict).
    state : dict of str to torch.Tensor
        Encoder weights with the ``decoder.``/``encoder.`` prefix removed
        (``sentence_encoder.*``, ``lm_head.*``).
    symbols : list of str
        Token of each id, in fairseq ``Dictionary`` order.
    """

    args: dict[str, Any]
    state: dict[str, Any]
    symbols: list[str]


def read_fairseq_symbols(dict_path: str | os.PathLike[str], masked_lm: bool = True) -> list[str]:
    """Symbols of a fairseq ``Dictionary`` in id order: the four specials ``<s> <pad> </s> <unk>``,
    the first field of each line of ``dict.txt``, and ``<mask>`` when ``masked_lm`` (fairseq's
    ``MaskedLMTask`` appends it)."""
    symbols = list(FAIRSEQ_SPECIALS)
    for line in Path(dict_path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            symbols.append(line.split()[0])
    return symbols + [FAIRSEQ_MASK] if masked_lm else symbols


def load_fairseq_checkpoint(checkpoint_path: str | os.PathLike[str]) -> FairseqCheckpoint:
    """Read a fairseq (<= 0.10) RoBERTa checkpoint and its ``dict.txt`` with plain torch.

    The file is unpickled with ``weights_only=True``, allowing only ``argparse.Namespace``
    besides tensors and containers, so no code from the file runs.

    Raises
    ------
    UnknownModelError
        If the file cannot be read this way, has no ``args``/``model``, has no ``dict.txt`` next
        to it, or its vocabulary size disagrees with the dictionary.
    MissingDependencyError
        If torch is older than 2.5 (no ``torch.serialization.safe_globals``).
    """
    path = Path(checkpoint_path)
    safe_globals = getattr(torch.serialization, "safe_globals", None)
    if safe_globals is None:
        raise MissingDependencyError(
            f"reading fairseq checkpoints without running pickled code needs torch >= 2.5 "
            f"(torch.serialization.safe_globals), found torch {torch.__version__}; upgrade torch"
        )
    try:
        with safe_globals([argparse.Namespace]):
            raw = torch.load(path, map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, OSError) as exc:
        raise UnknownModelError(
            f"cannot read {path} as a fairseq <= 0.10 checkpoint ({exc}); pass a fairseq RoBERTa "
            "checkpoint whose 'args' is an argparse.Namespace (fairseq >= 0.11 'cfg' checkpoints "
            "need converting with fairseq first)"
        ) from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("args"), argparse.Namespace) \
            or not isinstance(raw.get("model"), dict):
        raise UnknownModelError(
            f"{path} has no 'args' Namespace and 'model' state dict; pass a fairseq <= 0.10 "
            "RoBERTa checkpoint"
        )
    args = vars(raw["args"])
    state = {}
    for key, value in raw["model"].items():
        for prefix in ("decoder.", "encoder."):
            if key.startswith(prefix):
                state[key[len(prefix):]] = value
                break
        else:
            state[key] = value
    dict_path = path.parent / "dict.txt"
    if not dict_path.is_file():
        raise UnknownModelError(
            f"no fairseq dictionary {dict_path}; put the dict.txt of the model's training data "
            "next to the checkpoint"
        )
    symbols = read_fairseq_symbols(dict_path, masked_lm=args.get("task") == "masked_lm")
    rows = state.get("sentence_encoder.embed_tokens.weight")
    if rows is None or rows.shape[0] != len(symbols):
        raise UnknownModelError(
            f"{path}: the token embedding has {None if rows is None else rows.shape[0]} rows but "
            f"{dict_path} gives {len(symbols)} symbols; pass the dict.txt the model was trained with"
        )
    return FairseqCheckpoint(args=args, state=state, symbols=symbols)


# fairseq name (prefix removed) -> HF RobertaForMaskedLM name; per-layer modules in _LAYER_MAP.
_LAYER_MAP = {
    "self_attn.q_proj": "attention.self.query",
    "self_attn.k_proj": "attention.self.key",
    "self_attn.v_proj": "attention.self.value",
    "self_attn.out_proj": "attention.output.dense",
    "self_attn_layer_norm": "attention.output.LayerNorm",
    "fc1": "intermediate.dense",
    "fc2": "output.dense",
    "final_layer_norm": "output.LayerNorm",
}
_TOP_MAP = {
    "sentence_encoder.embed_tokens.weight": "roberta.embeddings.word_embeddings.weight",
    "sentence_encoder.embed_positions.weight": "roberta.embeddings.position_embeddings.weight",
    "sentence_encoder.emb_layer_norm.weight": "roberta.embeddings.LayerNorm.weight",
    "sentence_encoder.emb_layer_norm.bias": "roberta.embeddings.LayerNorm.bias",
    "lm_head.dense.weight": "lm_head.dense.weight",
    "lm_head.dense.bias": "lm_head.dense.bias",
    "lm_head.layer_norm.weight": "lm_head.layer_norm.weight",
    "lm_head.layer_norm.bias": "lm_head.layer_norm.bias",
    "lm_head.weight": "lm_head.decoder.weight",
    "lm_head.bias": "lm_head.bias",
}
_LAYER_KEY = re.compile(r"sentence_encoder\.layers\.(\d+)\.(.+)\.(weight|bias)")


def fairseq_to_hf_key(key: str) -> str | None:
    """HF ``RobertaForMaskedLM`` name of a fairseq RoBERTa parameter, ``None`` if it has none."""
    if key in _TOP_MAP:
        return _TOP_MAP[key]
    match = _LAYER_KEY.fullmatch(key)
    if match and match.group(2) in _LAYER_MAP:
        layer, module, kind = match.groups()
        return f"roberta.encoder.layer.{layer}.{_LAYER_MAP[module]}.{kind}"
    return None


def sapiens_tokenizer(symbols: list[str], max_length: int) -> Any:
    """A ``PreTrainedTokenizerFast`` whose ids are the fairseq dictionary ids.

    Every non-space character is one token (spaces are ignored, so ``"EVQ"`` and ``"E V Q"``
    agree); ``<mask>`` and the fairseq specials are matched whole; other characters map to
    ``<unk>``. Single sequences become ``<s> x_1 ... x_n </s>``, as in Sapiens' ``seq2tokens``.
    """
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    bos, pad, eos, unk = FAIRSEQ_SPECIALS
    vocab = {symbol: index for index, symbol in enumerate(symbols)}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token=unk))
    core.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Split(Regex("."), behavior="isolated")]
    )
    core.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, vocab[bos]), (eos, vocab[eos])],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=core, bos_token=bos, eos_token=eos, cls_token=bos, sep_token=eos,
        pad_token=pad, unk_token=unk, mask_token=FAIRSEQ_MASK, model_max_length=max_length,
    )


def _roberta_config(checkpoint: FairseqCheckpoint, tied: bool) -> Any:
    from transformers import RobertaConfig

    args, state = checkpoint.args, checkpoint.state
    if args.get("activation_fn", "gelu") != "gelu":
        raise UnknownModelError(
            f"fairseq activation {args['activation_fn']!r} is not supported: HF RoBERTa's LM head "
            "always uses exact gelu; only activation_fn='gelu' checkpoints convert exactly"
        )
    layers = {int(m.group(1)) for k in state if (m := _LAYER_KEY.fullmatch(k))}
    positions, hidden = state["sentence_encoder.embed_positions.weight"].shape
    expected = {
        "encoder_layers": len(layers),
        "encoder_embed_dim": hidden,
        "encoder_ffn_embed_dim": state["sentence_encoder.layers.0.fc1.weight"].shape[0],
        # fairseq's LearnedPositionalEmbedding has max_positions + padding_idx + 1 rows.
        "max_positions": positions - FAIRSEQ_PAD_ID - 1,
    }
    for name, value in expected.items():
        if args.get(name) != value:
            raise UnknownModelError(
                f"checkpoint args say {name}={args.get(name)} but the weights imply {value}; "
                "the checkpoint is inconsistent or not a fairseq RoBERTa"
            )
    return RobertaConfig(
        vocab_size=len(checkpoint.symbols),
        hidden_size=hidden,
        num_hidden_layers=len(layers),
        num_attention_heads=args["encoder_attention_heads"],
        intermediate_size=expected["encoder_ffn_embed_dim"],
        hidden_act="gelu",
        hidden_dropout_prob=args.get("dropout", 0.1),
        attention_probs_dropout_prob=args.get("attention_dropout", 0.1),
        max_position_embeddings=positions,
        type_vocab_size=1,
        layer_norm_eps=FAIRSEQ_LAYER_NORM_EPS,
        pad_token_id=checkpoint.symbols.index("<pad>"),
        bos_token_id=checkpoint.symbols.index("<s>"),
        eos_token_id=checkpoint.symbols.index("</s>"),
        tie_word_embeddings=tied,
    )


def convert_sapiens(checkpoint_path: str | os.PathLike[str]) -> tuple[Any, Any]:
    """Convert a Sapiens (fairseq 0.10 RoBERTa) checkpoint to ``transformers.RobertaForMaskedLM``.

    Every fairseq weight is mapped by :func:`fairseq_to_hf_key`; the token-type embedding (fairseq
    RoBERTa has no segments) is set to zero; the output projection stays tied to the token
    embedding when the checkpoint's two copies are equal. Loading is strict.

    Parameters
    ----------
    checkpoint_path : path
        ``checkpoint_vh.pt`` or ``checkpoint_vl.pt`` with ``dict.txt`` in the same folder
        (see :func:`sapiens_checkpoint_path`).

    Returns
    -------
    (RobertaForMaskedLM, PreTrainedTokenizerFast)
        The model in eval mode on the CPU (float32) and a tokenizer with the fairseq ids.

    Raises
    ------
    UnknownModelError
        If a fairseq weight has no HF counterpart or is missing, an HF weight is left unset, the
        shapes or ``args`` disagree, or the checkpoint is pre-LN or uses another activation
        than gelu.
    """
    from transformers import RobertaForMaskedLM

    checkpoint = load_fairseq_checkpoint(checkpoint_path)
    state = checkpoint.state
    if checkpoint.args.get("encoder_normalize_before") or "sentence_encoder.layer_norm.weight" in state:
        raise UnknownModelError(
            f"{checkpoint_path} is a pre-LN fairseq RoBERTa (encoder_normalize_before, final "
            "sentence_encoder.layer_norm); convert it to transformers' RobertaPreLayerNorm "
            "instead of RobertaForMaskedLM"
        )
    unmapped = sorted(k for k in state if fairseq_to_hf_key(k) is None)
    if unmapped:
        raise UnknownModelError(
            f"{checkpoint_path}: fairseq weights with no RobertaForMaskedLM counterpart: "
            f"{unmapped[:8]}; this converter handles post-LN fairseq RoBERTa masked LMs only"
        )
    absent = sorted(set(_TOP_MAP) - set(state))
    if absent or "sentence_encoder.layers.0.fc1.weight" not in state:
        raise UnknownModelError(
            f"{checkpoint_path}: fairseq RoBERTa weights missing: "
            f"{absent or ['sentence_encoder.layers.0.fc1.weight']}; pass a complete masked-LM "
            "checkpoint (with its lm_head)"
        )
    tied = torch.equal(state["lm_head.weight"], state["sentence_encoder.embed_tokens.weight"])
    config = _roberta_config(checkpoint, tied)
    model = RobertaForMaskedLM(config)
    hf_state = {fairseq_to_hf_key(k): v for k, v in state.items()}
    hf_state["lm_head.decoder.bias"] = state["lm_head.bias"]
    hf_state["roberta.embeddings.token_type_embeddings.weight"] = torch.zeros(1, config.hidden_size)
    own = model.state_dict()
    missing = sorted(set(own) - set(hf_state))
    unexpected = sorted(set(hf_state) - set(own))
    wrong_shape = sorted(k for k in set(own) & set(hf_state) if own[k].shape != hf_state[k].shape)
    if missing or unexpected or wrong_shape:
        raise UnknownModelError(
            f"{checkpoint_path}: conversion to RobertaForMaskedLM left weights unset {missing}, "
            f"unexpected {unexpected}, wrong shape {wrong_shape}; this transformers version "
            "names RoBERTa weights differently, or the checkpoint is not a fairseq RoBERTa"
        )
    model.load_state_dict(hf_state, strict=True)
    model.eval()
    tokenizer = sapiens_tokenizer(checkpoint.symbols, max_length=checkpoint.args["max_positions"])
    return model, tokenizer


def load_sapiens(chain: str = "vh", n: int | None = None, device: Any = "cpu",
                 cache_dir: str | os.PathLike[str] | None = None, **kw: Any) -> HFMaskedLM:
    """Sapiens as an :class:`~glauber.mlm_backend.hf_masked_lm.HFMaskedLM` over the 20 amino acids.

    Amino acids are separate tokens (``split_chars=True``). Each call converts the checkpoint
    afresh (about 0.1 s), so models on different devices or precisions share no weights.

    Parameters
    ----------
    chain : {"vh", "vl"}
        Heavy- or light-chain model (the light-chain model serves kappa and lambda).
    n : int, optional
        Sequence length; see :class:`HFMaskedLM` (at most 142 for vh, 126 for vl).
    device : str or torch.device
    cache_dir : path, optional
        See :func:`sapiens_checkpoint_path`.
    **kw
        Further :class:`HFMaskedLM` arguments (``dtype``, ``max_batch_tokens``, ``head``,
        ``compile``, ``allowed_tokens``, ``name``, ...).

    Raises
    ------
    UnknownModelError, MissingDependencyError
        As :func:`sapiens_checkpoint_path` and :func:`convert_sapiens`.
    DeviceUnavailableError
        If the device does not exist (use ``device="cpu"``).

    Examples
    --------
    >>> from glauber.mlm_backend.sequences import TRASTUZUMAB_VH
    >>> mlm = load_sapiens("vh", n=len(TRASTUZUMAB_VH))  # doctest: +SKIP
    >>> mlm.scores(mlm.encode(TRASTUZUMAB_VH)[None], [0]).shape  # doctest: +SKIP
    torch.Size([1, 20])
    """
    model, tokenizer = convert_sapiens(sapiens_checkpoint_path(chain, cache_dir))
    kw.setdefault("allowed_tokens", list(AMINO_ACIDS))
    kw.setdefault("name", f"sapiens-{chain}")
    return HFMaskedLM(model, tokenizer=tokenizer, n=n, device=device, split_chars=True, **kw)


__all__ = [
    "FairseqCheckpoint",
    "SAPIENS_CHAINS",
    "SAPIENS_VERSION",
    "convert_sapiens",
    "fairseq_to_hf_key",
    "load_fairseq_checkpoint",
    "load_sapiens",
    "read_fairseq_symbols",
    "sapiens_cache_dir",
    "sapiens_checkpoint_path",
    "sapiens_tokenizer",
    "unpack_sapiens_sdist",
]
