"""Contexts of a real model: shipped chain names, files and raw sequences name the same state.

Oracle: the shipped sequence itself (glauber.mlm_backend.sequences) and its residue numbering
(1-based positions, as ``--sites`` counts them).
"""

from __future__ import annotations

import pytest

from glauber.errors import InvalidParameterError, SequenceLengthError, VocabularyError
from glauber.mlm_backend.sequences import TRASTUZUMAB_VH
from glauber.models import resolve_model, window_spec


@pytest.fixture(scope="module")
def window():
    return resolve_model("antiberty@trastuzumab-vh[98-100]")


def test_named_context_is_the_shipped_chain_with_one_based_sites(window, tmp_path):
    assert window.model.n == len(TRASTUZUMAB_VH) == 120
    assert window.model.decode(window.context) == TRASTUZUMAB_VH
    # Residues 98-100 of the heavy chain (CDR3 "SRWGGDGFYAMDY" starts at residue 97).
    assert window.decode(window.default_states()[0]) == TRASTUZUMAB_VH[97:100] == "RWG"
    path = tmp_path / "vh.txt"
    path.write_text(f"# trastuzumab VH\n{TRASTUZUMAB_VH}\n")
    for ctx in ("TRASTUZUMAB_VH", str(path), TRASTUZUMAB_VH):
        other = resolve_model(window_spec("antiberty", ctx, "98-100"))
        assert other.context.tolist() == window.context.tolist()
        assert other.cache_key == window.cache_key  # one score table on disk for all three


def test_bad_contexts_name_the_shipped_chains():
    with pytest.raises(VocabularyError, match="trastuzumab-vh"):
        resolve_model("antiberty@herceptin")
    with pytest.raises(SequenceLengthError, match="length 5 was asked"):
        resolve_model("antiberty@trastuzumab-vl[1-3]", length=5)


@pytest.mark.parametrize("line, named", [
    (TRASTUZUMAB_VH[:-1] + "X", ["'X' at position 120"]),
    (TRASTUZUMAB_VH[:9] + "1" + TRASTUZUMAB_VH[10:], ["'1' at position 10"]),
    (TRASTUZUMAB_VH.lower(), ["'e' at position 1", "write the sequence in uppercase",
                               "and 112 more"]),
])
def test_a_context_file_with_foreign_tokens_is_named_as_such(tmp_path, line, named):
    """Oracle: the line written, position by position (1-based, as residues are counted)."""
    path = tmp_path / "vh.txt"
    path.write_text(f"# a comment\n{line}\n")
    with pytest.raises(VocabularyError) as info:
        resolve_model(window_spec("antiberty", str(path), "98-100"))
    message = str(info.value)
    assert message.startswith(f"context file {path} (line 2) holds tokens outside")
    for words in named:
        assert words in message
    assert "not a file" not in message and "allowed_tokens" not in message  # no such flag


def test_a_missing_context_file_says_no_such_file(tmp_path):
    with pytest.raises(InvalidParameterError, match="no such file"):
        resolve_model(window_spec("antiberty", str(tmp_path / "vh.txt"), "98-100"))
    with pytest.raises(InvalidParameterError, match="no such file"):
        resolve_model(window_spec("ising-cycle:n=4", "ctx.txt"))
