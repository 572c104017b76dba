"""Hugging Face transformers behind the ConditionalModel protocol.

- :class:`HFMaskedLM`: any ``AutoModelForMaskedLM`` (name, local path or model object), CPU or
  GPU, with the LM head applied at the masked position only.
- :func:`load_antiberty`: the offline default (AntiBERTy, shipped by ``antiberty==0.1.3``).
- :class:`CausalLMControl` and :func:`tiny_gpt2_control`: the autoregressive control, whose
  conditionals are compatible (rectangle delta 0).
- :func:`load_model`: registered offline models by name (:data:`MODEL_REGISTRY`).

Importing this package imports torch; ``transformers`` is imported when a model is built.
"""

from glauber.mlm_backend.antiberty import antiberty_files, load_antiberty
from glauber.mlm_backend.autoregressive import CausalLMControl, tiny_gpt2_control
from glauber.mlm_backend.heads import MaskedLMParts, split_masked_lm
from glauber.mlm_backend.hf_masked_lm import HFMaskedLM
from glauber.mlm_backend.registry import (
    MODEL_REGISTRY,
    available_models,
    load_model,
    register_model,
)
from glauber.mlm_backend.sequences import (
    AMINO_ACIDS,
    ANTIBODY_SEQUENCES,
    antibody_states,
)
from glauber.mlm_backend.vocabulary import TokenVocabulary

__all__ = [
    "HFMaskedLM",
    "load_antiberty",
    "antiberty_files",
    "CausalLMControl",
    "tiny_gpt2_control",
    "MaskedLMParts",
    "split_masked_lm",
    "MODEL_REGISTRY",
    "available_models",
    "load_model",
    "register_model",
    "AMINO_ACIDS",
    "ANTIBODY_SEQUENCES",
    "antibody_states",
    "TokenVocabulary",
]
