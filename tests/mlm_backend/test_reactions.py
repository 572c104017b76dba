"""The reaction SMILES masked LMs of rxnmapper (ALBERT) and rxnfp (BERT), registered offline.

Oracles: the model's own full forward pass on ids of the SMILES with ``[MASK]`` put through
the ``[CLS] ... [SEP]`` tokenizer built from the package's ``vocab.txt`` (independent of
HFMaskedLM's framing and head split), the example reaction's true tokens (masked-token
accuracy), and hand-split SMILES for the regex. The loader tests need the package (``pip
install --no-deps rxnmapper==0.4.3 rxnfp==0.1.0``) and are skipped without it.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch

from glauber.errors import MissingDependencyError, VocabularyError
from glauber.mlm_backend import load_model
from glauber.mlm_backend.reactions import (
    RXNFP_SMILES_REGEX,
    RXNMAPPER_SMILES_REGEX,
    smiles_splitter,
)
from glauber.mlm_backend.sequences import REACTION_SMILES

pytestmark = pytest.mark.usefixtures("single_thread")
PACKAGES = {"rxnmapper": "AlbertForMaskedLM", "rxnfp": "BertForMaskedLM"}


def _needs(package: str):
    return pytest.mark.skipif(importlib.util.find_spec(package) is None,
                              reason=f"needs pip install --no-deps {package}")


@pytest.mark.parametrize("regex", [RXNMAPPER_SMILES_REGEX, RXNFP_SMILES_REGEX])
def test_the_smiles_regex_splits_atoms_bonds_and_names_a_bad_character(regex):
    split = smiles_splitter(regex)
    assert split("Br[C@@H](Cl)c1ccccc1>>O=C=O") == [
        "Br", "[C@@H]", "(", "Cl", ")", "c", "1", "c", "c", "c", "c", "c", "1", ">>", "O", "=",
        "C", "=", "O"]
    assert "".join(split(REACTION_SMILES)) == REACTION_SMILES
    with pytest.raises(VocabularyError, match=r"'X' at character 4 of the SMILES"):
        split("CCOX>>C")


def test_a_missing_package_says_what_to_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in PACKAGES else real(name, *a))
    for name in PACKAGES:
        with pytest.raises(MissingDependencyError, match=f"pip install --no-deps {name}=="):
            load_model(name)


@pytest.mark.parametrize("name", [pytest.param(p, marks=_needs(p)) for p in PACKAGES])
def test_the_shipped_model_scores_as_its_own_forward_and_predicts_the_reaction(name):
    mlm = load_model(name)
    assert type(mlm.model).__name__ == PACKAGES[name] and mlm.head == "float64"
    # 591 tokens less the five specials and ten [unused] slots
    specials = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
    assert mlm.q == 576 and not any(t in specials or t.startswith("[unused") for t in mlm.labels)
    x = mlm.encode(REACTION_SMILES)
    assert len(x) == 54 and mlm.decode(x) == REACTION_SMILES
    n = len(x)
    mlm = mlm.with_length(n)
    sites = torch.arange(n)
    scores = mlm.scores(x[None].expand(n, n), sites)
    tok = mlm.tokenizer
    tokens = mlm.vocabulary.tokens(REACTION_SMILES)
    for i in (0, 17, 40, 53):
        text = "".join(tok.mask_token if k == i else t for k, t in enumerate(tokens))
        enc = tok(text, return_tensors="pt")
        assert enc["input_ids"].shape[1] == n + 2
        with torch.no_grad():
            logits = mlm.model(**enc).logits[0, i + 1, list(mlm.vocab)]
        torch.testing.assert_close(scores[i], logits, atol=5e-5, rtol=0)
    accuracy = float((scores.argmax(1) == x).double().mean())
    print(f"{name} masked-token accuracy on the example reaction: {accuracy:.3f}")
    assert accuracy > 0.7
    bound = mlm.oscillation_upper_bound()
    assert bound.method == "layernorm-head" and np.isfinite(bound.Delta).all()
    osc = (scores.max(1).values - scores.min(1).values).max()  # a lower bound on Delta
    assert bound.Delta[0, 1] >= float(osc) / 2
