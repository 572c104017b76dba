"""Random tiny transformer masked LMs as a Hypothesis strategy: :func:`masked_lms`.

A drawn model is a randomly initialised ``BertForMaskedLM``, ``RobertaForMaskedLM``,
``EsmForMaskedLM`` (ESM-2's rotary positions or ESM-1b's learned ones with the embedding
LayerNorm, token dropout on or off, ESM's ``<cls> <pad> <eos> <unk> ... <mask>`` tokenizer) or
``AlbertForMaskedLM`` (shared layers, an embedding size of 4 or 8 below the hidden size) with 1
or 2 layers and a hidden size of 8 or 16, behind :class:`~glauber.mlm_backend.HFMaskedLM`,
resampling ``n <= 4`` sites over ``q <= 5`` allowed tokens: either every site of a sequence of
``n`` tokens, or a window of ``n`` sites in a longer context
(:func:`glauber.core.restrict.restrict`, the other sites frozen). Every parameter, LayerNorm
weights and biases included, is drawn i.i.d. normal with a drawn scale (0.02 to 3: logits from
nearly flat to saturated), and the LayerNorm ``eps`` from 1e-12 to 1e-2, so the strategy
reaches the extremes a bound must survive. Each model carries ``model.spec`` (a
:class:`MaskedLMSpec`) whose ``build()`` rebuilds it bit for bit.

Needs ``transformers`` and ``tokenizers`` (dependencies of the MLM backend).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from glauber.core.restrict import restrict
from glauber.mlm_backend.sapiens import FAIRSEQ_MASK, FAIRSEQ_SPECIALS, sapiens_tokenizer

#: The token strings of the tiny models (after the four fairseq specials, before ``<mask>``).
LETTERS = tuple("ACDEFGHIKL")
#: Architectures :func:`masked_lms` draws.
ARCHITECTURES = ("bert", "roberta", "esm", "albert")
#: ESM's special tokens in its vocabulary order (``<mask>`` comes last).
ESM_SPECIALS = ("<cls>", "<pad>", "<eos>", "<unk>")


@dataclass(frozen=True)
class MaskedLMSpec:
    """A tiny random masked LM as data; ``build()`` makes it (same spec, same model).

    Attributes
    ----------
    arch : {"bert", "roberta", "esm", "albert"}
    layers, hidden, heads : int
    scale : float
        Standard deviation of every parameter.
    eps : float
        LayerNorm ``eps`` of every LayerNorm.
    seed : int
        Seed of the parameters.
    tokens : tuple of str
        The allowed tokens (``q`` of :data:`LETTERS`).
    context : tuple of int or None
        A full-length context (indices into ``tokens``) when the model is a window.
    sites : tuple of int
        The resampled sites (0-based); every site when ``context`` is None.
    variant : int
        Architecture detail: ESM's positions (0 rotary, 1 learned with the embedding
        LayerNorm) plus 2 for token dropout; ALBERT's embedding size ``4 * (1 + variant)``.
    """

    arch: str
    layers: int
    hidden: int
    heads: int
    scale: float
    eps: float
    seed: int
    tokens: tuple[str, ...]
    context: tuple[int, ...] | None
    sites: tuple[int, ...]
    variant: int = 0

    def build(self) -> Any:
        """The model: an ``HFMaskedLM`` (every site) or a ``RestrictedModel`` (a window)."""
        import torch
        import transformers as tf

        from glauber.mlm_backend import HFMaskedLM

        symbols = [*FAIRSEQ_SPECIALS, *LETTERS, FAIRSEQ_MASK]
        length = len(self.sites) if self.context is None else len(self.context)
        common = dict(vocab_size=len(symbols), hidden_size=self.hidden,
                      num_hidden_layers=self.layers, num_attention_heads=self.heads,
                      intermediate_size=2 * self.hidden, max_position_embeddings=length + 6,
                      layer_norm_eps=self.eps, hidden_dropout_prob=0.0,
                      attention_probs_dropout_prob=0.0, pad_token_id=1)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            if self.arch == "bert":
                model = tf.BertForMaskedLM(tf.BertConfig(**common))
            elif self.arch == "roberta":
                model = tf.RobertaForMaskedLM(tf.RobertaConfig(**common, bos_token_id=0,
                                                               eos_token_id=2))
            elif self.arch == "esm":
                model = tf.EsmForMaskedLM(tf.EsmConfig(
                    **common, mask_token_id=len(symbols) - 1, token_dropout=self.variant >= 2,
                    position_embedding_type=("rotary", "absolute")[self.variant % 2],
                    emb_layer_norm_before=self.variant % 2 == 1))
            else:
                model = tf.AlbertForMaskedLM(tf.AlbertConfig(
                    **common, embedding_size=4 * (1 + self.variant), hidden_act="gelu_new",
                    num_hidden_groups=1, inner_group_num=1, classifier_dropout_prob=0.0))
            with torch.no_grad():
                for p in model.parameters():
                    p.normal_(0.0, self.scale)
        tok = (esm_tokenizer(LETTERS) if self.arch == "esm"
               else sapiens_tokenizer(symbols, max_length=length + 2))
        mlm = HFMaskedLM(model.eval(), tok, n=length, allowed_tokens=list(self.tokens),
                         split_chars=True, name=f"tiny-{self.arch}")
        if self.context is None:
            return mlm
        return restrict(mlm, list(self.context), list(self.sites))


def esm_tokenizer(letters: tuple[str, ...]) -> Any:
    """transformers' ``EsmTokenizer`` over ``<cls> <pad> <eos> <unk>``, ``letters`` and
    ``<mask>``, in ESM's order (ids 0..3, 4.., last), from a vocabulary file written to a
    temporary folder (the tokenizer keeps it in memory)."""
    import tempfile
    from pathlib import Path

    from transformers import EsmTokenizer

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "vocab.txt"
        path.write_text("\n".join([*ESM_SPECIALS, *letters, "<mask>"]) + "\n")
        return EsmTokenizer(str(path))


@st.composite
def masked_lm_specs(draw: st.DrawFn, archs: tuple[str, ...] = ARCHITECTURES,
                    max_sites: int = 4, max_tokens: int = 5,
                    windows: bool = True) -> MaskedLMSpec:
    """Specifications of tiny random masked LMs (module docstring).

    Parameters
    ----------
    archs : tuple of str
        Architectures to draw from (:data:`ARCHITECTURES`).
    max_sites, max_tokens : int
        Largest ``n`` (>= 2) and ``q`` (>= 2, at most ``len(LETTERS)``).
    windows : bool
        Also draw windows of longer contexts.
    """
    arch = draw(st.sampled_from(archs))
    q = draw(st.integers(2, max_tokens))
    n = draw(st.integers(2, max_sites))
    layers = draw(st.integers(1, 2))
    hidden = draw(st.sampled_from((8, 16)))
    heads = draw(st.sampled_from((1, 2)))
    scale = draw(st.floats(0.02, 3.0))
    eps = draw(st.sampled_from((1e-5, 1e-12, 1e-2)))
    seed = draw(st.integers(0, 2**16))
    tokens = tuple(draw(st.permutations(LETTERS))[:q])
    context, sites = None, tuple(range(n))
    if windows and draw(st.booleans()):
        length = n + draw(st.integers(1, 3))
        context = tuple(draw(st.lists(st.integers(0, q - 1), min_size=length,
                                      max_size=length)))
        sites = tuple(draw(st.permutations(range(length)))[:n])
    variant = draw(st.integers(0, 3)) if arch == "esm" else (
        draw(st.integers(0, 1)) if arch == "albert" else 0)
    return MaskedLMSpec(arch, layers, hidden, heads, scale, eps, seed, tokens, context, sites,
                        variant)


@st.composite
def masked_lms(draw: st.DrawFn, **kwargs: Any) -> Any:
    """Tiny random masked LMs (:func:`masked_lm_specs`, built); ``model.spec`` rebuilds each."""
    spec = draw(masked_lm_specs(**kwargs))
    model = spec.build()
    model.spec = spec
    return model


__all__ = ["ARCHITECTURES", "ESM_SPECIALS", "LETTERS", "MaskedLMSpec", "esm_tokenizer",
           "masked_lm_specs", "masked_lms"]
