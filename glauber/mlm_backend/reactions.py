"""Reaction SMILES masked LMs shipped by rxnmapper (ALBERT) and rxnfp (BERT).

* ``rxnmapper==0.4.3`` (MIT; Schwaller et al., "Extraction of organic chemistry grammar from
  unsupervised learning of chemical reactions", Sci. Adv. 7 (2021) eabe4166) ships
  ``rxnmapper/models/transformers/albert_heads_8_uspto_all_1310k/``: an ``AlbertForMaskedLM``
  (12 applications of one shared layer, hidden size 256, embedding size 128, 3.2 MB) trained by
  masked-token prediction on USPTO reactions.
* ``rxnfp==0.1.0`` (MIT; Schwaller et al., "Mapping the space of chemical reactions using
  attention-based neural networks", Nat. Mach. Intell. 3 (2021) 144-152) ships
  ``rxnfp/models/transformers/bert_pretrained/``: a ``BertForPreTraining`` checkpoint (12
  layers, hidden size 256, 27 MB) whose config has no ``model_type`` (read with
  ``BertConfig.from_json_file``); its masked-LM part loads into ``BertForMaskedLM`` and the
  pooler and next-sentence head are ignored.

Both read reaction SMILES split by a regular expression (each package's ``SMI_REGEX_PATTERN``,
copied below: rxnfp's also matches ``%(nnn)`` ring closures and ``|``) into tokens of a
591-token ``vocab.txt`` shipped beside the weights, framed ``[CLS] ... [SEP]``. The default
resampling vocabulary is every token but the five specials and the ten ``[unused]`` slots
(576 tokens). Neither package is imported: their files are found with ``importlib`` (rxnmapper
pins ``transformers<5`` and rxnfp ``scipy==1.4.1``, so both are installed with ``pip install
--no-deps``; docs/architecture.md, "Real models").
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from glauber.errors import InvalidParameterError, MissingDependencyError, VocabularyError
from glauber.mlm_backend.hf_masked_lm import HFMaskedLM
from glauber.mlm_backend.sequence_model import quiet_transformers
from glauber.mlm_backend.vocabulary import PLACEHOLDER_TOKEN

#: ``rxnmapper/smiles_utils.py``'s ``SMI_REGEX_PATTERN`` (rxnmapper 0.4.3).
RXNMAPPER_SMILES_REGEX = (
    r"(\[[^\]]+]|Br?|Cl?|N|O|S|P|F|I|b|c|n|o|s|p|\(|\)|\.|=|#|-|\+|\\|\/|:|~|@|\?|>>?|\*|\$"
    r"|\%[0-9]{2}|[0-9])"
)
#: ``rxnfp/tokenization.py``'s ``SMI_REGEX_PATTERN`` (rxnfp 0.1.0).
RXNFP_SMILES_REGEX = (
    r"(\%\([0-9]{3}\)|\[[^\]]+]|Br?|Cl?|N|O|S|P|F|I|b|c|n|o|s|p|\||\(|\)|\.|=|#|-|\+|\\|\/|:"
    r"|~|@|\?|>>?|\*|\$|\%[0-9]{2}|[0-9])"
)
#: BERT's special tokens as both vocabularies name them.
SMILES_SPECIALS = {"unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]",
                   "cls_token": "[CLS]", "mask_token": "[MASK]"}


@dataclass(frozen=True)
class ReactionPackage:
    """Where a package keeps its reaction masked LM, and how it splits SMILES.

    Attributes
    ----------
    package, version : str
        The PyPI name and the version whose files were checked.
    folder : str
        The checkpoint folder inside the installed package.
    regex : str
        The package's SMILES regular expression.
    """

    package: str
    version: str
    folder: str
    regex: str

    @property
    def install(self) -> str:
        """The command that installs it without its conflicting pins."""
        return f"pip install --no-deps {self.package}=={self.version}"


RXNMAPPER = ReactionPackage("rxnmapper", "0.4.3",
                            "models/transformers/albert_heads_8_uspto_all_1310k",
                            RXNMAPPER_SMILES_REGEX)
RXNFP = ReactionPackage("rxnfp", "0.1.0", "models/transformers/bert_pretrained",
                        RXNFP_SMILES_REGEX)


def reaction_model_dir(package: ReactionPackage) -> Path:
    """The checkpoint folder of ``package`` (``config.json``, ``pytorch_model.bin``,
    ``vocab.txt``), found without importing the package.

    Raises
    ------
    MissingDependencyError
        If the package is not installed, or is installed without these files; the message
        says what to install.
    """
    spec = importlib.util.find_spec(package.package)
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError(
            f"the {package.package} model needs the {package.package} package: "
            f"{package.install} (--no-deps: only its weights are used, and its pins conflict "
            "with this environment)"
        )
    folder = Path(next(iter(spec.submodule_search_locations))) / package.folder
    missing = [name for name in ("config.json", "pytorch_model.bin", "vocab.txt")
               if not (folder / name).is_file()]
    if missing:
        raise MissingDependencyError(
            f"the installed {package.package} package has no {', '.join(missing)} in {folder}: "
            f"reinstall it with {package.install}, or put the files of {package.package} "
            f"{package.version}'s {package.folder} there"
        )
    return folder


def frequent_tokens(k: int, package: ReactionPackage = RXNMAPPER) -> list[str]:
    """The first ``k`` ordinary tokens of the package's ``vocab.txt`` (specials and
    ``[unused]`` slots left out), in the file's order.

    The shipped file (the same 591 lines in rxnmapper 0.4.3 and rxnfp 0.1.0) reads as a
    list by decreasing frequency in the training reactions (aromatic and aliphatic carbon
    first, then branches, oxygen, ring closures): ``c C ( ) O 1 2 = N . n 3 F Cl >> ~ - 4
    [C@H] S`` are its first 20; no corpus counts ship with it to confirm the order.

    Raises
    ------
    InvalidParameterError
        If ``k`` is not in ``2 .. 576``.
    MissingDependencyError
        If the package is not installed (:func:`reaction_model_dir`).
    """
    lines = (reaction_model_dir(package) / "vocab.txt").read_text().splitlines()
    ordinary = [t.strip() for t in lines if t.strip() and t.strip() not in
                SMILES_SPECIALS.values() and not PLACEHOLDER_TOKEN.fullmatch(t.strip())]
    if not 2 <= k <= len(ordinary):
        raise InvalidParameterError(
            f"choose between 2 and {len(ordinary)} frequent tokens, got {k}")
    return ordinary[:k]


def window_alphabet(smiles: str, k: int = 20, package: ReactionPackage = RXNMAPPER) -> list[str]:
    """A resampling vocabulary (``allowed_tokens``) for an exact window in ``smiles``: the
    ``k`` most frequent tokens (:func:`frequent_tokens`), then every token of ``smiles``
    outside them in order of first appearance, so that the frozen rest of the reaction is a
    state of the chain.

    The model built on it resamples a site from its conditional renormalised on this set:
    the Glauber chain of that truncated conditional, not of the full 576-token one.

    Examples
    --------
    >>> from glauber.mlm_backend.sequences import REACTION_SMILES
    >>> window_alphabet(REACTION_SMILES)[18:]  # doctest: +SKIP
    ['[C@H]', 'S', '[O-]', '[K+]']
    """
    alphabet = frequent_tokens(k, package)
    for token in smiles_splitter(package.regex)(smiles):
        if token not in alphabet:
            alphabet.append(token)
    return alphabet


def smiles_splitter(regex: str) -> Callable[[str], list[str]]:
    """``split(text) -> tokens``: the tokens of ``regex`` that tile the stripped text.

    Raises (from the returned function)
    ------
    VocabularyError
        If a character is not part of any token; the message names it and its 1-based
        position in the SMILES.

    Examples
    --------
    >>> split = smiles_splitter(RXNMAPPER_SMILES_REGEX)
    >>> split("CC(=O)[O-]>>Cl")
    ['C', 'C', '(', '=', 'O', ')', '[O-]', '>>', 'Cl']
    """
    pattern = re.compile(regex)

    def split(text: str) -> list[str]:
        text = text.strip()
        tokens, pos = [], 0
        for match in pattern.finditer(text):
            if match.start() != pos:
                break
            tokens.append(match.group())
            pos = match.end()
        if pos != len(text):
            raise VocabularyError(
                f"{text[pos]!r} at character {pos + 1} of the SMILES (counting from 1) is not "
                "a SMILES token; write a reaction SMILES such as CC(=O)O.OCC>>CC(=O)OCC "
                "(atoms, bonds, rings, branches, '.', '>>')"
            )
        return tokens

    return split


def smiles_tokenizer(vocab_file: Path, regex: str, max_length: int) -> Any:
    """A ``PreTrainedTokenizerFast`` with the ids of ``vocab_file`` (one token per line) that
    splits text by ``regex`` and frames it ``[CLS] ... [SEP]``, as the packages' own
    ``SmilesTokenizer`` does (a stretch the regex does not match becomes ``[UNK]``)."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    tokens = [line.strip() for line in vocab_file.read_text().splitlines() if line.strip()]
    vocab = {token: index for index, token in enumerate(tokens)}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token=SMILES_SPECIALS["unk_token"]))
    core.pre_tokenizer = pre_tokenizers.Split(Regex(regex), behavior="isolated")
    cls, sep = SMILES_SPECIALS["cls_token"], SMILES_SPECIALS["sep_token"]
    core.post_processor = processors.TemplateProcessing(
        single=f"{cls} $A {sep}", pair=f"{cls} $A {sep} $B {sep}",
        special_tokens=[(cls, vocab[cls]), (sep, vocab[sep])],
    )
    return PreTrainedTokenizerFast(tokenizer_object=core, model_max_length=max_length,
                                   **SMILES_SPECIALS)


def load_rxnmapper(n: int | None = None, device: Any = "cpu", **kw: Any) -> HFMaskedLM:
    """rxnmapper's ALBERT reaction masked LM as an :class:`HFMaskedLM` over SMILES tokens.

    Parameters
    ----------
    n : int, optional
        Number of SMILES tokens (sites); see :class:`HFMaskedLM` (at most 510).
    device : str or torch.device
    **kw
        Further :class:`HFMaskedLM` arguments (``allowed_tokens``, ``dtype``, ``head``, ...).

    Raises
    ------
    MissingDependencyError
        If ``rxnmapper`` is not installed with its weights (:func:`reaction_model_dir`), or
        its checkpoint does not match ``AlbertForMaskedLM``.

    Examples
    --------
    >>> from glauber.mlm_backend.sequences import REACTION_SMILES
    >>> mlm = load_rxnmapper()  # doctest: +SKIP
    >>> mlm.decode(mlm.encode(REACTION_SMILES)) == REACTION_SMILES  # doctest: +SKIP
    True
    """
    from transformers import AlbertForMaskedLM

    folder = reaction_model_dir(RXNMAPPER)
    with quiet_transformers():
        model, info = AlbertForMaskedLM.from_pretrained(str(folder), output_loading_info=True)
    _check_loading(info, folder, RXNMAPPER, ignored=("albert.pooler",))
    return _reaction_mlm(model, folder, RXNMAPPER, n, device, kw)


def load_rxnfp(n: int | None = None, device: Any = "cpu", **kw: Any) -> HFMaskedLM:
    """rxnfp's pretrained BERT reaction masked LM as an :class:`HFMaskedLM` over SMILES tokens.

    Parameters and errors as :func:`load_rxnmapper` (with ``rxnfp`` and ``BertForMaskedLM``).
    """
    from transformers import BertConfig, BertForMaskedLM

    folder = reaction_model_dir(RXNFP)
    config = BertConfig.from_json_file(str(folder / "config.json"))  # it has no model_type
    with quiet_transformers():
        model, info = BertForMaskedLM.from_pretrained(str(folder), config=config,
                                                      output_loading_info=True)
    _check_loading(info, folder, RXNFP, ignored=("bert.pooler.", "cls.seq_relationship."))
    return _reaction_mlm(model, folder, RXNFP, n, device, kw)


def _check_loading(info: dict, folder: Path, package: ReactionPackage,
                   ignored: tuple[str, ...]) -> None:
    missing = sorted(info["missing_keys"])
    unexpected = sorted(k for k in info["unexpected_keys"]
                        if not k.startswith(ignored) and not k.endswith("position_ids"))
    if missing or unexpected:
        raise MissingDependencyError(
            f"the checkpoint in {folder} does not match its architecture (missing keys: "
            f"{missing[:8]}; unexpected keys: {unexpected[:8]}); reinstall it with "
            f"{package.install}"
        )


def _reaction_mlm(model: Any, folder: Path, package: ReactionPackage, n: int | None,
                  device: Any, kw: dict[str, Any]) -> HFMaskedLM:
    tokenizer = smiles_tokenizer(folder / "vocab.txt", package.regex,
                                 int(model.config.max_position_embeddings))
    if len(tokenizer) != int(model.config.vocab_size):
        raise MissingDependencyError(
            f"{folder / 'vocab.txt'} has {len(tokenizer)} tokens but the model "
            f"{model.config.vocab_size}; reinstall it with {package.install}"
        )
    kw.setdefault("name", package.package)
    return HFMaskedLM(model.eval(), tokenizer=tokenizer, n=n, device=device,
                      splitter=smiles_splitter(package.regex), **kw)


__all__ = [
    "RXNFP",
    "RXNFP_SMILES_REGEX",
    "RXNMAPPER",
    "RXNMAPPER_SMILES_REGEX",
    "ReactionPackage",
    "frequent_tokens",
    "load_rxnfp",
    "load_rxnmapper",
    "reaction_model_dir",
    "smiles_splitter",
    "smiles_tokenizer",
    "window_alphabet",
]
