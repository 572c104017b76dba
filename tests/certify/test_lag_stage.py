"""certify's ``lag`` stage: the lag-coupling estimate beside the exact TV from the same starts.

Oracles: the exact ``TV(mu_0 P^t, pi)`` of :meth:`ExactChain.distance_from` (itself checked
against a dense matrix power in tests/exact/test_mixing.py), recomputed here independently of
the stage; the estimator's own first step below ``eps``; JSON round trips.
"""

from __future__ import annotations

import networkx as nx
import pytest

from glauber.certify import Certificate, ClaimKey, Settings, certify, format_certificate
from glauber.cli import main
from glauber.errors import InvalidParameterError
from glauber.exact import ExactChain
from glauber.toy_models import IsingModel


def test_lag_stage_reports_an_estimate_that_holds_against_the_exact_tv() -> None:
    model = IsingModel(nx.cycle_graph(5))
    cert = certify(model, 1.5, settings=Settings(lag=8, lag_pairs=60, n_pairs=0), seed=3)
    check = cert.lag_coupling
    assert check.step == check.bound.first_below(cert.eps)
    assert check.bound.at(check.step)[1] <= cert.eps
    exact = ExactChain(model, 1.5).distance_from(cert.states, [check.step])[0]
    assert check.exact_tv == pytest.approx(exact, abs=1e-12)
    claim = cert.claim(ClaimKey.LAG_COUPLING)
    assert not claim.rigorous and claim.holds is bool(exact <= check.bound.at(check.step)[1])
    assert "an estimate, not rigorous" in claim.certifies
    assert Certificate.from_json(cert.to_json()) == cert
    assert "exact TV from the same start law" in format_certificate(cert)


def test_lag_stage_is_off_by_default_and_refuses_pairs_that_do_not_meet() -> None:
    model = IsingModel(nx.cycle_graph(6))
    assert certify(model, 2.0).lag_coupling is None
    slow = certify(model, 0.2, settings=Settings(lag=1, lag_pairs=20, lag_max_steps=3,
                                                 n_pairs=0))
    assert slow.lag_coupling.bound is None and "did not meet" in slow.lag_coupling.refused
    claim = slow.claim(ClaimKey.LAG_COUPLING)
    assert not claim.hypothesis_held and claim.certifies.startswith("nothing")


@pytest.mark.parametrize("kw, match", [({"lag": 2, "lag_pairs": 5}, "raise n_pairs"),
                                       ({"lag": -1}, "lag")])
def test_lag_settings_refuse_too_few_pairs_or_a_negative_lag(kw: dict, match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        Settings(**kw)


def test_certify_command_prints_the_lag_estimate_and_refuses_too_few_pairs(
        capsys: pytest.CaptureFixture) -> None:
    assert main(["certify", "--model", "ising-cycle:n=4", "--tau", "2", "--lag-coupling", "4",
                 "--lag-pairs", "30"]) == 0
    out = capsys.readouterr().out
    assert "TV <= " in out and "lag 4, 30 pairs; an estimate, not rigorous" in out
    assert main(["certify", "--model", "ising-cycle:n=4", "--lag-coupling", "4",
                 "--lag-pairs", "3"]) == 2
    assert "raise n_pairs" in capsys.readouterr().err
