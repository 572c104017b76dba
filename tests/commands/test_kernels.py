"""``--kernel``, ``--epsilon``, ``--anneal`` on the commands, and ``glauber pll``.

Oracles: the exact chain of the same kernel (``glauber certify --kernel`` must print and store
its values), closed forms of the zero-field Ising cycle (every conditional 1/2 when a site's two
neighbours disagree: PLL = n log(1/2)), and typed errors raised before any model is resolved
(``resolve_model`` and ``get_model`` are patched to fail the test if called).
"""

from __future__ import annotations

import contextlib
import io
import json
import math

import numpy as np
import pytest

import glauber.cli
from glauber.exact.chain import ExactChain
from glauber.exact.kernel_summary import KernelSummary
from glauber.toy_models.specs import parse_toy_spec


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = glauber.cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()


BAD = [
    (["--kernel", "gibbs"], "unknown kernel 'gibbs'"),
    (["--kernel", "mh:energy"], "unknown kernel"),
    (["--epsilon", "1.5"], "epsilon"),
    (["--epsilon", "-0.1"], "epsilon"),
    (["--anneal", "geometric:2:0:100"], "finite and > 0"),
    (["--anneal", "2,nan"], "finite and > 0"),
    (["--anneal", "cosine:2:1:5"], "unknown schedule kind"),
]
COMMANDS = {
    "certify": ["certify", "--model", "antiberty"],
    "trajectory": ["trajectory", "--model", "antiberty", "--out", "{tmp}/t"],
    "phase-diagram": ["phase-diagram", "--model", "antiberty", "--taus", "1", "--lengths", "8",
                      "--out", "{tmp}/p"],
    "compare": ["compare", "--models", "antiberty", "--taus", "1", "--out", "{tmp}/c"],
}


@pytest.fixture
def no_model(monkeypatch):
    """Fail if a model is resolved: bad options must be refused before any model work."""
    def refuse(*args, **kwargs):
        raise AssertionError("a model was resolved before the options were checked")

    import glauber.commands.certify  # noqa: F401  (imported first: their own bindings stay)
    import glauber.experiments.common as common
    import glauber.experiments.compare  # noqa: F401
    import glauber.experiments.phase_diagram  # noqa: F401
    import glauber.experiments.trajectory  # noqa: F401
    import glauber.models as models

    monkeypatch.setattr(models, "resolve_model", refuse)
    monkeypatch.setattr(common, "get_model", refuse)


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("options, message", BAD)
def test_bad_kernel_options_are_one_line_exit_2(command, options, message, tmp_path,
                                                no_model) -> None:
    argv = [a.format(tmp=tmp_path) for a in COMMANDS[command]] + options
    if command == "phase-diagram" and options[0] == "--anneal":
        message = ""  # refused as not applicable or as a bad schedule: either way, exit 2
    code, out, err = run(*argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"glauber {command}: error: ")
    assert message in err


def test_phase_diagram_refuses_annealing(tmp_path, no_model) -> None:
    code, _, err = run(*[a.format(tmp=tmp_path) for a in COMMANDS["phase-diagram"]],
                       "--anneal", "2,1")
    assert code == 2 and "fixed temperatures" in err


def test_certify_prints_and_stores_the_kernel_values(tmp_path) -> None:
    spec = "asym-ising:n=4"
    path = tmp_path / "cert.json"
    code, out, err = run("certify", "--model", spec, "--tau", "1.5", "--kernel", "mh:pll",
                         "--epsilon", "0.1", "--anneal", "linear:3:1.5:20", "--json", str(path),
                         "--pairs", "0")
    assert code == 0, err
    chain = ExactChain(parse_toy_spec(spec), 1.5, kernel="mh:pll", epsilon=0.1)
    stored = KernelSummary(**{k: v for k, v in json.loads(path.read_text())["kernel"].items()})
    assert stored.tmix == chain.mixing_time() and stored.kernel == "mh:pll"
    assert stored.tv_to_pll_target < 1e-12  # the MH chain's law is its target
    assert math.isclose(stored.mode_mass, float(chain.stationary().max()), rel_tol=1e-12)
    assert stored.anneal["steps"] == 20 and 0 <= stored.anneal["tv_worst_start"] <= 1
    assert f"t_mix(0.25) = {stored.tmix} steps" in out and "acceptance" in out


def test_trajectory_reports_acceptance_and_resumes(tmp_path) -> None:
    argv = ["trajectory", "--model", "ising-cycle:n=5", "--steps", "40", "--chains", "3",
            "--checkpoint-every", "20", "--record-every", "10", "--out", str(tmp_path / "t"),
            "--kernel", "mh:logits", "--anneal", "geometric:2:0.5:30", "--no-progress"]
    code, out, _ = run(*argv)
    assert code == 0 and "Metropolis-Hastings acceptance" in out
    summary = json.loads((tmp_path / "t" / "trajectory_summary.json").read_text())
    assert summary["acceptance"]["proposed"] == 40 * 3
    assert summary["final_tau"] == pytest.approx(0.5)
    assert summary["config"]["anneal"] == "geometric:2:0.5:30"
    code, again, _ = run(*argv)  # a finished run returns at once with the same summary
    assert code == 0
    assert json.loads((tmp_path / "t" / "trajectory_summary.json").read_text()) == summary


def test_pll_command_closed_form(tmp_path) -> None:
    """Zero-field Ising cycle, alternating pairs 0,1,1,0: each site sees one neighbour of each
    spin, so every conditional is 1/2 at every temperature."""
    code, out, _ = run("pll", "--model", "ising-cycle:n=4", "--context", "0,1,1,0", "--tau",
                       "3", "--json", str(tmp_path / "pll.json"))
    values = json.loads((tmp_path / "pll.json").read_text())
    assert code == 0 and values["pll"] == pytest.approx(4 * np.log(0.5), rel=1e-12)
    assert values["normalised_pll"] == pytest.approx(np.log(0.5), rel=1e-12)
    assert "normalised PLL" in out
    code, _, err = run("pll", "--model", "ising-cycle:n=4")
    assert code == 2 and "--context" in err
