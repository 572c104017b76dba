"""``glauber certify`` and the model resolver behind it.

Oracles: the exact chain of the toy model (mixing time), LPW 2nd ed. Theorem 15.5 (relaxation
time of heat-bath Ising on the n-cycle: ``n / (1 - tanh(2 beta))``), the autoregressive control
(a causal LM's conditionals come from one joint, so every rectangle has delta 0 up to float32
rounding: docs/theory.md, `prop4`), the states file itself, and the error types of bad input.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import glauber.cli
from glauber.certify import Certificate, ClaimKey
from glauber.errors import UnknownModelError
from glauber.exact.chain import ExactChain
from glauber.models import read_states, resolve_model
from glauber.toy_models import IsingModel


@pytest.fixture(autouse=True)
def _only_certify(monkeypatch):
    """Dispatch through the real ``glauber`` entry point with only this command registered."""
    monkeypatch.setattr(glauber.cli, "COMMANDS", ("certify",))


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = glauber.cli.main(["certify", *argv])
    return code, out.getvalue(), err.getvalue()


def strict_json(path: Path) -> dict:
    def reject(token: str) -> None:
        raise AssertionError(f"non-strict JSON token {token} in {path}")

    return json.loads(path.read_text(), parse_constant=reject)


SECTIONS = ("== model ==", "== incompatibility", "== influence & Theorem 5 ==",
            "== margins & Theorem 8 ==", "== drift", "== coupling", "== claims ==",
            "== timings ==")


def test_toy_spec_writes_table_and_json_with_exact_values(tmp_path):
    path = tmp_path / "cert.json"
    code, out, err = run("--model", "ising-cycle:n=6", "--tau", "2.0", "--json", str(path),
                         "--rectangles", "20", "--budget", "50")
    assert code == 0
    for section in SECTIONS:
        assert section in out
    assert "exact chain" in out and "row" in err  # exact column; tqdm progress on stderr
    cert = Certificate.from_dict(strict_json(path))
    assert Certificate.from_json(path.read_text()) == cert
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cert.json"]  # no temporary left
    assert cert.model == "ising-cycle:n=6,J=1.0,h=0.0" and cert.tau == 2.0
    assert cert.settings.n_rectangles == 20 and cert.coupling.budget == 50
    chain = ExactChain(IsingModel(nx.cycle_graph(6)), 2.0)
    e = cert.exact
    assert e is not None and e.num_states == 64 and e.reversible
    assert e.tmix == chain.mixing_time(0.25)
    assert e.relaxation_time == pytest.approx(6 / (1 - math.tanh(2 * 0.5)), rel=1e-9)
    assert e.contraction.alpha_row == pytest.approx(cert.influence.contraction.alpha_row)
    assert e.tmix <= cert.influence.contraction.best_bound  # the rigorous certificate holds
    assert cert.timings.load is not None and cert.timings.seconds["exact"] >= 0


def test_states_file_for_a_toy(tmp_path):
    states = tmp_path / "states.txt"
    states.write_text("# two states\n0,1,0,1,0\n\n1 1 1 1 1\n")
    code, out, _ = run("--model", "ising-path:n=5,h=2.0", "--tau", "1", "--states", str(states),
                       "--rectangles", "5", "--budget", "5", "--json", str(tmp_path / "c.json"))
    assert code == 0 and "2 (" in out
    cert = Certificate.from_json((tmp_path / "c.json").read_text())
    assert cert.states == ((0, 1, 0, 1, 0), (1, 1, 1, 1, 1))
    assert cert.margins.best_trap == 1
    assert cert.exact.trap_mass is not None and 0 < cert.exact.trap_mass < 1


@pytest.mark.parametrize("line, needle", [("0,1,0", "n = 5"), ("0,1,2,0,1", "0..1"),
                                          ("0,a,0,1,1", "token indices")])
def test_bad_states_file(tmp_path, line, needle):
    states = tmp_path / "states.txt"
    states.write_text(line + "\n")
    code, _, err = run("--model", "ising-path:n=5", "--states", str(states))
    assert code == 2 and needle in err


def test_unknown_model_lists_the_choices():
    code, _, err = run("--model", "bert-huge-nonexistent")
    assert code == 2
    for name in ("antiberty", "sapiens-vh", "tiny-gpt2-control", "ising-cycle", "curie-weiss",
                 "hf:"):
        assert name in err
    with pytest.raises(UnknownModelError, match="planted"):
        resolve_model("nope")


@pytest.mark.parametrize("tau", ["0", "-1", "nan", "inf"])
def test_bad_temperature_exits_2_before_loading(monkeypatch, tau):
    def never(*args, **kw):
        raise AssertionError("the model must not be loaded when the input is bad")

    monkeypatch.setattr("glauber.models.resolve_model", never)
    code, _, err = run("--model", "antiberty", "--tau", tau)
    assert code == 2 and "tau" in err


@pytest.mark.parametrize("flag", ["--budget", "--rectangles", "--contexts", "--batch-size"])
def test_non_positive_budgets_exit_2(monkeypatch, flag):
    monkeypatch.setattr("glauber.models.resolve_model", lambda *a, **k: pytest.fail("loaded"))
    code, _, err = run("--model", "ising-cycle:n=4", flag, "0")
    assert code == 2 and flag in err and ">= 1" in err


@pytest.mark.parametrize("flag", ["--pairs", "--search-budget"])
def test_negative_counts_exit_2_and_zero_switches_the_stage_off(monkeypatch, flag):
    code, _, err = run("--model", "ising-cycle:n=4", flag, "-1")
    assert code == 2 and flag in err
    code, text, err = run("--model", "ising-cycle:n=14", "--no-exact", "--rectangles", "4",
                          flag, "0")
    assert code == 0, err
    assert ("not run (n_pairs = 0)" in text) if flag == "--pairs" else ("sampled:" in text)


def test_json_into_a_missing_folder_exits_2_before_running(tmp_path, monkeypatch):
    monkeypatch.setattr("glauber.models.resolve_model", lambda *a, **k: pytest.fail("loaded"))
    code, _, err = run("--model", "ising-cycle:n=4", "--json", str(tmp_path / "no" / "c.json"))
    assert code == 2 and "does not exist" in err


def test_cuda_without_cuda_exits_2():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    code, _, err = run("--model", "ising-cycle:n=4", "--device", "cuda")
    assert code == 2 and "CUDA is not available" in err and "--device cpu" in err


def test_length_errors():
    code, _, err = run("--model", "ising-cycle:n=4", "--length", "6")
    assert code == 2 and "n = 4" in err and "ising-cycle:n=12" in err
    code, _, err = run("--model", "ising-cycle:n=4", "--length", "0")
    assert code == 2 and "--length" in err


@pytest.mark.mlm
def test_length_longer_than_antiberty_allows():
    pytest.importorskip("antiberty")
    code, _, err = run("--model", "antiberty", "--length", "600")
    assert code == 2 and "longer than antiberty allows" in err


@pytest.mark.mlm
def test_autoregressive_control_is_compatible(tmp_path):
    # A causal LM's conditionals are those of its joint: delta = 0 up to float32 rounding.
    path = tmp_path / "gpt2.json"
    code, out, _ = run("--model", "tiny-gpt2-control", "--length", "6", "--rectangles", "40",
                       "--contexts", "1", "--budget", "5", "--pairs", "1", "--json", str(path))
    assert code == 0 and "0 / 40" in out
    cert = Certificate.from_json(path.read_text())
    assert cert.n == 6 and cert.q == 20 and cert.exact is None
    assert cert.incompatibility.max_abs_delta <= cert.incompatibility.atol
    assert not cert.claim(ClaimKey.PROPOSITION4).hypothesis_held


def test_resolve_model_for_toys_and_mlms():
    toy = resolve_model("potts-cycle:n=4,q=3")
    assert (toy.n, toy.q) == (4, 3)
    control = resolve_model("tiny-gpt2-control", length=5)
    assert (control.n, control.q) == (5, 20)


def test_read_states_for_an_mlm_uses_encode(tmp_path):
    control = resolve_model("tiny-gpt2-control", length=3)

    class Letters:  # an MLM-like model: encode() maps text to indices
        n, q, vocab = 3, 3, (0, 1, 2)

        def encode(self, text):
            return np.array(["abc".index(c) for c in text])

    path = tmp_path / "s.txt"
    path.write_text("abc\ncab\n")
    np.testing.assert_array_equal(read_states(path, Letters()), [[0, 1, 2], [2, 0, 1]])
    path.write_text("1 2 3\n")  # the control's tokens are the labels "0" .. "19"
    assert read_states(path, control).tolist() == [[1, 2, 3]]


def test_float16_on_cpu_exits_2_and_says_what_to_use():
    code, _, err = run("--model", "tiny-gpt2-control", "--length", "4", "--dtype", "float16")
    assert code == 2 and "only supported on CUDA" in err and "bfloat16" in err


def test_autocast_on_the_causal_control_exits_2_and_says_why():
    code, _, err = run("--model", "tiny-gpt2-control", "--length", "4", "--autocast", "bfloat16")
    assert code == 2 and "autocast applies to masked LMs" in err and "--autocast" in err


@pytest.mark.mlm
def test_autocast_reaches_the_masked_lm_and_conflicts_with_dtype():
    pytest.importorskip("antiberty")
    import torch

    mlm = resolve_model("antiberty", length=5, autocast="bfloat16")
    assert mlm.autocast == torch.bfloat16 and mlm.dtype == torch.float32
    code, _, err = run("--model", "antiberty", "--length", "5", "--dtype", "bfloat16",
                       "--autocast", "bfloat16")
    assert code == 2 and "choose one" in err
