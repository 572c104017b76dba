"""``glauber recheck``: every stored influence value is realised, or the command says which not.

Oracle: the model itself. A searched certificate's witnesses are re-evaluated on the model its
``source`` names; tampering with one witness value, or with one entry of C that the claims
read, must fail the recheck (exit 1) and name the entry; an exact certificate is recomputed from
a fresh table. The recheck itself (glauber.certify.recheck) is tested in tests/certify.
"""

from __future__ import annotations

import contextlib
import io
import json
import os

import pytest

import glauber.cli
from glauber.certify import certify


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = glauber.cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def searched(tmp_path_factory):
    path = tmp_path_factory.mktemp("cert") / "searched.json"
    code, _, err = run("certify", "--model", "asym-ising:n=14,seed=3", "--no-exact", "--pairs",
                       "0", "--rectangles", "10", "--search-budget", "400", "--json", str(path))
    assert code == 0, err
    return path


def _tampered(src, tmp_path, edit):
    data = json.loads(src.read_text())
    edit(data)
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(data))
    return path


def test_searched_certificate_rechecks_and_is_left_untouched(searched):
    before = (searched.read_bytes(), os.stat(searched).st_mtime_ns)
    code, text, err = run("recheck", str(searched))
    assert code == 0, err
    data = json.loads(searched.read_text())
    n_witnesses = len(data["influence"]["witnesses"])
    assert n_witnesses > 0 and f"witnesses rechecked            {n_witnesses} " in text
    assert "OK" in text
    assert (searched.read_bytes(), os.stat(searched).st_mtime_ns) == before


def test_a_tampered_witness_fails(searched, tmp_path):
    def edit(d):
        d["influence"]["witnesses"][0]["value"] += 1e-3

    code, text, _ = run("recheck", str(_tampered(searched, tmp_path, edit)))
    assert code == 1 and "FAILED: 1 witness" in text


def test_an_entry_of_C_above_its_witness_fails_and_is_named(searched, tmp_path):
    # The logic is tested in tests/certify/test_recheck.py; here, what the command prints.
    w = json.loads(searched.read_text())["influence"]["witnesses"][0]

    def edit(d):
        d["influence"][w["quantity"]][w["i"]][w["j"]] = abs(w["value"]) + 0.01

    code, text, _ = run("recheck", str(_tampered(searched, tmp_path, edit)))
    assert code == 1 and "1 matrix entr" in text
    assert f"{w['quantity']}[{w['i'] + 1}, {w['j'] + 1}] stored {abs(w['value']) + 0.01:.6g}: " \
           "its witness stores" in text


def test_exact_certificate_is_recomputed(tmp_path):
    path = tmp_path / "exact.json"
    assert run("certify", "--model", "ising-cycle:n=6@0,1,1,0,0,1[2-5]", "--pairs", "0",
               "--json", str(path))[0] == 0
    code, text, err = run("recheck", str(path))
    assert code == 0 and "fresh score table" in text, err

    def edit(d):
        d["influence"]["C"][0][1] += 1e-6

    code, text, _ = run("recheck", str(_tampered(path, tmp_path, edit)))
    assert code == 1 and "FAILED" in text


def test_bad_input_is_one_line_with_exit_2(tmp_path):
    from glauber.toy_models.specs import parse_toy_spec

    cert = certify(parse_toy_spec("ising-cycle:n=4"), 1.0, n_pairs=0, n_rectangles=4)
    nosource = tmp_path / "python.json"
    nosource.write_text(cert.to_json())
    notjson = tmp_path / "x.json"
    notjson.write_text("{nope")
    for argv, needle in [
        ([str(nosource)], "records no model source"),
        ([str(notjson)], "is not JSON"),
        ([str(tmp_path / "missing.json")], "cannot read"),
        ([str(nosource), "--model", "ising-cycle:n=5"], "n = 5"),
        ([str(nosource), "--batch-size", "0"], "batch-size"),
    ]:
        code, _, err = run("recheck", *argv)
        assert code == 2 and needle in err and "Traceback" not in err, (argv, err)
    code, text, _ = run("recheck", str(nosource), "--model", "ising-cycle:n=4")
    assert code == 0 and "OK" in text
