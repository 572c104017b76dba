"""Rechecking a certificate (glauber.certify.recheck): every stored entry realised, or named.

Oracle: the model itself. A searched certificate's witnesses are re-evaluated on the model it was
computed on; an entry raised above its witness, or a non-zero entry with no witness at all, is
named with its stored value and its witness's stored and recomputed values. An exact
certificate is recomputed from a fresh score table.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from glauber.certify import certify
from glauber.certify.recheck import (
    format_recheck,
    read_certificate,
    recheck_certificate,
    unbacked_entries,
)
from glauber.errors import InvalidParameterError, SequenceLengthError
from glauber.toy_models import parse_toy_spec


@pytest.fixture(scope="module")
def searched():
    model = parse_toy_spec("asym-ising:n=14,seed=3")  # 2^14 states: searched, not enumerated
    cert = certify(model, 1.0, exact=False, n_pairs=0, n_rectangles=10, search_budget=400)
    assert cert.influence.witnesses
    return model, cert


def _with_entry(cert, quantity, i, j, value):
    matrix = np.array(getattr(cert.influence, quantity), dtype=float)
    matrix[i, j] = value
    return dataclasses.replace(cert, influence=dataclasses.replace(cert.influence,
                                                                   **{quantity: matrix}))


def test_an_untouched_certificate_is_realised(searched):
    model, cert = searched
    result = recheck_certificate(cert, model)
    assert result.ok and not result.unbacked and result.failures == 0
    assert result.n_witnesses == len(cert.influence.witnesses)
    assert result.max_error_C <= result.tolerance_C


def test_an_entry_above_its_witness_is_named_with_its_values(searched):
    model, cert = searched
    k, w = max(enumerate(cert.influence.witnesses), key=lambda kw: abs(kw[1].value))
    tampered = _with_entry(cert, w.quantity, w.i, w.j, abs(w.value) + 0.25)
    result = recheck_certificate(tampered, model)
    assert not result.ok and result.failures == 0  # every witness itself is realised
    (entry,) = result.unbacked
    assert (entry.quantity, entry.i, entry.j) == (w.quantity, w.i, w.j)
    assert entry.stored == pytest.approx(abs(w.value) + 0.25)
    best = max(abs(v.value) for v in cert.influence.witnesses
               if (v.quantity, v.i, v.j) == (w.quantity, w.i, w.j))
    assert abs(entry.witness) == best and entry.recomputed == pytest.approx(entry.witness, abs=1e-9)
    text = format_recheck(tampered, result, "cert.json")
    assert f"{w.quantity}[{w.i + 1}, {w.j + 1}] stored {entry.stored:.6g}: its witness " in text
    assert "FAILED" in text and "1 matrix entr" in text


def test_an_entry_without_a_witness_is_named(searched):
    model, cert = searched
    w = cert.influence.witnesses[0]
    key = (w.quantity, w.i, w.j)
    kept = tuple(v for v in cert.influence.witnesses if (v.quantity, v.i, v.j) != key)
    stored = float(np.asarray(getattr(cert.influence, w.quantity))[w.i, w.j])
    assert stored != 0.0 and len(kept) < len(cert.influence.witnesses)
    tampered = dataclasses.replace(
        cert, influence=dataclasses.replace(cert.influence, witnesses=kept))
    entries = unbacked_entries(tampered.influence, np.zeros(len(kept)))
    assert [(e.quantity, e.i, e.j, e.stored, e.witness, e.recomputed) for e in entries] == [
        (w.quantity, w.i, w.j, stored, None, None)]
    result = recheck_certificate(tampered, model)
    assert not result.ok and len(result.unbacked) == 1
    text = format_recheck(tampered, result, "cert.json")
    assert f"{w.quantity}[{w.i + 1}, {w.j + 1}] stored {stored:.6g}: no witness" in text


def test_a_tampered_witness_fails(searched):
    model, cert = searched
    w = cert.influence.witnesses[0]
    witnesses = (dataclasses.replace(w, value=w.value + 1e-3), *cert.influence.witnesses[1:])
    tampered = dataclasses.replace(
        cert, influence=dataclasses.replace(cert.influence, witnesses=witnesses))
    result = recheck_certificate(tampered, model)
    assert not result.ok and result.failures == 1


def test_an_exact_certificate_is_recomputed():
    model = parse_toy_spec("ising-cycle:n=5")
    cert = certify(model, 1.0, n_pairs=0, n_rectangles=4)
    assert cert.influence.exhaustive and not cert.influence.witnesses
    result = recheck_certificate(cert, model)
    assert result.exact and result.ok and result.num_states == 32
    result = recheck_certificate(_with_entry(cert, "C", 0, 1, cert.influence.C[0][1] + 1e-6),
                                 model)
    assert not result.ok and result.max_error_C == pytest.approx(1e-6, rel=1e-3)


def test_bad_input(tmp_path, searched):
    model, cert = searched
    with pytest.raises(SequenceLengthError, match="n = 5"):
        recheck_certificate(cert, parse_toy_spec("ising-cycle:n=5"))
    with pytest.raises(InvalidParameterError, match="batch-size"):
        recheck_certificate(cert, model, batch_size=0)
    with pytest.raises(InvalidParameterError, match="tolerance"):
        recheck_certificate(cert, model, tolerance=-1.0)
    path = tmp_path / "x.json"
    path.write_text("[1]")
    with pytest.raises(InvalidParameterError, match="not a certificate"):
        read_certificate(path)
    path.write_text(cert.to_json())
    assert read_certificate(path).n == cert.n
