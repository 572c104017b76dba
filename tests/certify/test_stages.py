"""certify's stages as data: a new stage is one entry (plus its ClaimKey) and a module of its own.

The test below adds a stage the way issue 20's ``bracket`` stage was added (docs/architecture.md,
"How to add a certify stage"; :mod:`glauber.certify.bracket`): a result dataclass, ``run``,
``claims`` and ``render``, and an entry in the stage list, and checks that it runs after
``influence``, is timed and reported to ``progress``, claims, prints, and round-trips through JSON
as a top-level object, without any other file knowing about it. Its numbers are a closed form of the Ising cycle (LPW 2nd ed.,
Section 15.2: the influence of a neighbour is ``tanh(2 / tau) / 2`` on an even-degree site, so the
row sum is ``tanh(2 / tau)`` and Theorem 5's row certificate needs it below 1).
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass

import networkx as nx
import numpy as np
import pytest

import glauber.certify.stage_fields as stage_fields_module
import glauber.certify.stages as stages_module
from glauber.certify import Certificate, Settings, certify, format_certificate
from glauber.certify.certificate import Timings
from glauber.certify.stage_fields import STAGE_FIELDS
from glauber.certify.stage_run import Stage, StageRun
from glauber.certify.stages import all_stages
from glauber.core.arrays import JsonResult
from glauber.core.claims import Claim
from glauber.core.validation import Temperature
from glauber.errors import InvalidParameterError
from glauber.toy_models import IsingModel

SMALL = dict(n_rectangles=8, budget=10, n_pairs=1)


@dataclass(frozen=True)
class RowSum(JsonResult):
    """What a ``rowsum`` stage records: the temperature interval of the influence row sum."""

    tau_cert: float | None
    tau_no_cert: float | None


def run_rowsum(run: StageRun) -> dict:
    infl = run.results["influence"]  # an earlier stage's result
    row = float(infl.alpha_row)
    return {"rowsum": RowSum(tau_cert=run.tau if row < 1 else None,
                               tau_no_cert=run.tau if infl.no_certificate else None)}


def rowsum_claims(cert: Certificate) -> list[Claim]:
    b = cert.rowsum
    return [Claim(key="rowsum", statement="a test stage", hypothesis_held=b.tau_cert is not None,
                  certifies=f"tau_cert = {b.tau_cert}", bound=b.tau_cert, caveat="",
                  rigorous=False)]


def rowsum_render(cert: Certificate) -> list[tuple[str, list[str]]]:
    return [("rowsum", [f"  tau_cert {cert.rowsum.tau_cert}"])]


ROWSUM = Stage("rowsum", run_rowsum, {"rowsum": RowSum}, rowsum_claims, rowsum_render)


@pytest.fixture
def with_rowsum(monkeypatch):
    """The stage list with ``rowsum`` right after ``influence``."""
    builtin = all_stages()
    at = [s.name for s in builtin].index("influence") + 1
    extended = (*builtin[:at], ROWSUM, *builtin[at:])
    monkeypatch.setattr(stages_module, "all_stages", lambda: extended)
    # and its fields, which the certificate decodes from (docs/architecture.md)
    monkeypatch.setattr(stage_fields_module, "STAGE_FIELDS",
                        {stage.name: stage.fields for stage in extended})
    return extended


def test_a_new_stage_runs_claims_prints_and_round_trips(with_rowsum):
    tau = 4.0
    calls = []
    cert = certify(IsingModel(nx.cycle_graph(4)), tau, progress=lambda *a: calls.append(a[0]),
                   **SMALL)
    # it ran, on the influence stage's result, and the exact chain agrees with the closed form
    assert math.isclose(cert.influence.alpha_row, math.tanh(2 / tau), rel_tol=1e-12)
    assert cert.rowsum == RowSum(tau_cert=tau, tau_no_cert=None)
    assert "rowsum" in calls and list(cert.timings.seconds)[3] == "rowsum"
    # its claim comes after the influence claims, stamped with the model's name
    keys = [c.key for c in cert.claims]
    assert keys.index("rowsum") == keys.index("thm5-oscillation") + 1
    assert cert.claim("rowsum").subject == cert.model
    assert "== rowsum ==" in format_certificate(cert)
    # JSON: a top-level object, decoded back into its own type
    data = json.loads(cert.to_json())
    assert data["rowsum"] == {"tau_cert": tau, "tau_no_cert": None}
    assert "results" not in data
    back = Certificate.from_json(cert.to_json())
    assert back == cert and isinstance(back.rowsum, RowSum)
    assert back.claims == cert.claims


def test_without_the_stage_the_json_has_no_trace_of_it():
    cert = certify(IsingModel(nx.cycle_graph(4)), 4.0, **SMALL)
    assert "rowsum" not in json.loads(cert.to_json())
    assert set(cert.results) == {"bracket", "lag_coupling"}  # the shipped stages' own fields
    with pytest.raises(AttributeError, match="rowsum"):
        cert.rowsum


def test_builtin_stage_fields_are_the_certificate_fields_they_fill():
    hints = {f.name: f.type for f in dataclasses.fields(Certificate)}
    import typing

    annotations = typing.get_type_hints(Certificate)
    for stage in all_stages():
        for name, tp in stage.fields.items():
            if name not in hints:  # lands in Certificate.results: the bracket and lag stages
                assert (stage.name, name) in {("bracket", "bracket"), ("lag", "lag_coupling")}
                continue
            assert typing.get_args(tp) == typing.get_args(annotations[name]) or \
                tp is annotations[name], (stage.name, name)
    # every field a stage fills is declared by exactly one stage
    filled = [name for stage in all_stages() for name in stage.fields]
    assert len(filled) == len(set(filled))


def _untimed(cert: Certificate) -> dict:
    """A certificate's JSON without its wall-clock times (the run's and the bracket's)."""
    data = cert.to_dict() | {"timings": None}
    data["bracket"] = data["bracket"] | {"upper_seconds": None, "lower_seconds": None}
    return data


def test_settings_are_one_type_for_the_call_and_the_record():
    model = IsingModel(nx.cycle_graph(4))
    settings = Settings(n_rectangles=8, budget=10, n_pairs=1)
    a = certify(model, 1.0, None, settings)
    b = certify(model, 1.0, **SMALL)
    assert a.settings == b.settings and a.settings.exhaustive is True
    assert _untimed(a) == _untimed(b)
    with pytest.raises(InvalidParameterError, match="n_rectangle"):
        certify(model, 1.0, n_rectangle=8)
    with pytest.raises(InvalidParameterError, match="settings"):
        certify(model, 1.0, None, {"n_rectangles": 8})
    with pytest.raises(InvalidParameterError, match="exhaustive"):
        Settings(exhaustive="yes")
    with pytest.raises(InvalidParameterError, match="bracket"):
        Settings(bracket="no")


@pytest.mark.parametrize("kw", [{}, {"exhaustive": False, "exact": False}])
def test_tau_is_validated_once_on_a_certify_route(monkeypatch, kw):
    # Counted: temperatures that go through check_tau's validation (a Temperature passes as it
    # is). Before this change check_tau ran 83 times on the first route (77 on the second),
    # each one validating; the margins' rounding bound still checks its own tau = 1 twice.
    from glauber.core import validation

    checked = []
    original = validation._checked_temperature

    def counting(tau):
        checked.append(tau)
        return original(tau)

    monkeypatch.setattr(validation, "_checked_temperature", counting)
    cert = certify(IsingModel(nx.cycle_graph(4)), 2.5, **SMALL, **kw)
    # the bracket stage checks the temperatures of its own grid, not the caller's again
    assert checked.count(2.5) == 1 and set(checked) - {2.5, 1.0} <= set(cert.bracket.grid)
    assert type(cert.influence.tau) is Temperature and type(cert.tau) is float


def test_old_timings_and_certificates_still_read():
    # A certificate written before the stages became data has one timing field per stage.
    cert = certify(IsingModel(nx.cycle_graph(4)), 2.0, **SMALL)
    data = cert.to_dict()
    data["timings"] = {"table": 0.1, "rectangles": 0.2, "influence": 0.3, "margins": 0.1,
                       "drift": 0.1, "coupling": 0.1, "exact": 0.1, "total": 1.0, "rows": 5,
                       "load": None}
    back = Certificate.from_dict(data)
    assert back.claims == cert.claims and back.timings.total == 1.0
    assert back.timings.seconds == {"table": 0.1, "rectangles": 0.2, "influence": 0.3,
                                    "margins": 0.1, "exact": 0.1, "drift": 0.1, "coupling": 0.1}
    assert isinstance(back.timings, Timings) and "== timings ==" in format_certificate(back)
    assert np.array_equal(back.influence.C, cert.influence.C)


def test_stage_fields_list_every_stage_in_run_order():
    # the certificate decodes stage results from STAGE_FIELDS without importing the stages
    assert tuple(STAGE_FIELDS) == tuple(stage.name for stage in all_stages())
    assert all(dict(stage.fields) == dict(STAGE_FIELDS[stage.name]) for stage in all_stages())
