"""glauber advise (glauber.certify.advice): certificates at a few temperatures, read as advice."""

from __future__ import annotations

import json

import networkx as nx
import pytest

from glauber.certify.advice import TemperatureAdvice, advise, format_advice, recommend
from glauber.cli import main
from glauber.errors import GlauberInputError, InvalidParameterError, InvalidTemperatureError
from glauber.exact import ExactChain
from glauber.toy_models import IsingModel


def _row(tau, *, certified=False, bound=None, exact=None, median=None, censored=0, traps=None,
         escape=None):
    return TemperatureAdvice(tau=tau, certified=certified, tmix_bound=bound, exact_tmix=exact,
                             exact_tmix_lower=None, coupling_median=median,
                             coupling_censored=censored, coupling_budget=100,
                             perfect_traps=traps, best_trap_escape_bound=escape)


def test_advice_rows_agree_with_the_exact_chain_and_the_bracket():
    model = IsingModel(nx.cycle_graph(5))
    taus = (0.4, 1.0, 3.0)
    advice = advise(model, taus, pairs=4, budget=200)
    assert [r.tau for r in advice.rows] == sorted(taus)
    for r in advice.rows:
        # the exact worst-start t_mix(1/4), from the exact chain itself
        assert r.exact_tmix == ExactChain(model, r.tau).mixing_time(0.25)
        # proved fast exactly where tau reaches the bracket's rigorous upper side
        assert r.certified == (advice.tau_cert is not None and r.tau >= advice.tau_cert)
        if r.certified:
            assert r.tmix_bound >= r.exact_tmix  # a bound on t_mix, never below it
    text = format_advice(advice)
    assert "bracket (rigorous)" in text and "recommendation:" in text
    assert all(line.startswith(("  - proved:", "  - estimated:"))
               for line in text.split("recommendation:\n")[1].splitlines())


def test_the_recommendation_is_the_lowest_temperature_proved_within_the_steps():
    rows = [_row(0.5, exact=50_000), _row(1.0, exact=800, median=9.0),
            _row(2.0, certified=True, bound=120.0, exact=40, median=5.0)]
    said = recommend(rows, tau_cert=1.7, tau_no_cert=0.9, steps=1000)
    assert said[0].startswith("proved: tau = 1 is the lowest") and "exact t_mix = 800" in said[0]
    assert recommend(rows, 1.7, 0.9, steps=100)[0].startswith("proved: tau = 2 ")
    assert "no temperature of the grid" in recommend(rows, None, None, steps=10)[0]
    assert any(s.startswith("estimated: at tau = 1 ") for s in said)  # the coupling: estimated
    # a bound from tau_cert alone (no exact chain) counts too
    only_bound = [_row(4.0, certified=True, bound=30.0)]
    assert "corrected Theorem 5" in recommend(only_bound, 3.0, None, steps=100)[0]


def test_a_trap_is_reported_only_where_theorem8_bounds_its_escape():
    rows = [_row(0.2, traps=2, escape=1e-4), _row(1.0, traps=2, escape=3.0)]
    assert any("2 perfect trap(s)" in s and "<= 0.0001" in s for s in recommend(rows, None, None))
    vacuous = recommend(rows[1:], None, None)
    assert any("no trap holds the chain" in s for s in vacuous)


@pytest.mark.parametrize(("taus", "error"), [
    ((), InvalidParameterError), ((0.0,), InvalidTemperatureError),
    ((-1.0, 1.0), InvalidTemperatureError), ((float("nan"),), InvalidTemperatureError),
])
def test_bad_temperatures_are_refused(taus, error):
    with pytest.raises(error) as caught:
        advise(IsingModel(nx.cycle_graph(3)), taus)
    assert isinstance(caught.value, GlauberInputError)  # the CLI's exit code 2


def test_the_command_prints_one_screen_and_writes_json(tmp_path, capsys):
    out = tmp_path / "advice.json"
    assert main(["advise", "--model", "ising-cycle:n=4", "--taus", "0.5,2", "--pairs", "2",
                 "--budget", "50", "--json", str(out)]) == 0
    screen = capsys.readouterr().out
    data = json.loads(out.read_text())
    assert [r["tau"] for r in data["rows"]] == [0.5, 2.0]
    assert data["recommendation"][0] in screen
    assert main(["advise", "--model", "ising-cycle:n=4", "--taus", "a,b"]) == 2


def test_the_command_passes_the_search_budget_and_rectangles_on(monkeypatch):
    import glauber.certify.advice as advice_module
    from glauber.certify import Settings

    seen = []

    def fake(model, taus, **kw):
        seen.append(kw)
        raise InvalidParameterError("stop here")

    monkeypatch.setattr(advice_module, "advise", fake)
    assert main(["advise", "--model", "ising-cycle:n=4", "--search-budget", "7",
                 "--rectangles", "3"]) == 2
    assert main(["advise", "--model", "ising-cycle:n=4"]) == 2
    assert (seen[0]["search_budget"], seen[0]["n_rectangles"]) == (7, 3)
    assert (seen[1]["search_budget"], seen[1]["n_rectangles"]) == (
        Settings().search_budget, Settings().n_rectangles)
