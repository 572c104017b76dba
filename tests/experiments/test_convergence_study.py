"""R-hat against exact t_mix (glauber.experiments.convergence_study).

Oracles: the binomial closed form of the TV floor, an exact chain computed independently of the
study (t_mix, the stationary law), the empirical law recomputed from a rerun of the seeded chains,
and the section rendered from hand-made rows.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from glauber.core.enumeration import state_index
from glauber.estimators import glauber_chains
from glauber.exact.chain import ExactChain
from glauber.experiments.convergence_study import (
    convergence_markdown,
    iid_tv_floor,
    lag_case,
    study_case,
    study_starts,
)
from glauber.toy_models import parse_toy_spec

pytest.importorskip("arviz_stats.base")  # the 'diagnostics' extra


def test_tv_floor_of_a_fair_coin_is_the_binomial_mean_deviation():
    # N fair coin flips: TV(empirical, uniform) = |K/N - 1/2| with K ~ Bin(N, 1/2).
    n = 40
    exact = sum(math.comb(n, k) * 0.5**n * abs(k / n - 0.5) for k in range(n + 1))
    assert iid_tv_floor(np.array([0.5, 0.5]), n, reps=20000) == pytest.approx(exact, rel=0.03)
    assert iid_tv_floor(np.array([1.0, 0.0]), n) == 0.0


def test_a_study_row_against_an_independent_exact_chain():
    spec, tau = "curie-weiss:n=4,alpha=1.5", 1.0
    row = study_case(spec, tau, "dispersed", steps=6000)
    chain = ExactChain(parse_toy_spec(spec), tau)
    assert row["tmix"] == chain.mixing_time(0.25) and row["states"] == 16
    assert row["declared_step"] is not None, row["verdict"]
    assert row["early"] == (row["declared_step"] < row["tmix"])
    # rerun the same seeded chains: the pooled law of the draws up to the declared step
    model = parse_toy_spec(spec)
    x0 = study_starts(chain, model, "dispersed", 8, 0, chain.stationary())
    run = glauber_chains(model, tau, x0, 6000, seed=np.random.default_rng([0, 5]),
                         record_every=row["record_every"])
    keep = run.recorded_steps <= row["declared_step"]
    idx = state_index(run.trajectory[keep].reshape(-1, 4), 2)
    emp = np.bincount(idx, minlength=16) / idx.size
    assert row["tv_at_declared"] == pytest.approx(0.5 * np.abs(emp - chain.stationary()).sum(),
                                                  abs=1e-12)
    assert row["draws_at_declared"] == idx.size
    assert row["false"] == (row["tv_at_declared"] - row["tv_floor"] > 0.25)


def test_one_basin_starts_are_the_stationary_mode():
    chain = ExactChain(parse_toy_spec("curie-weiss:n=6,alpha=1.5"), 0.5)
    pi = chain.stationary()
    x0 = study_starts(chain, chain.model, "one-basin", 5, 0, pi)
    assert (x0 == chain.states()[np.argmax(pi)]).all()
    with pytest.raises(ValueError, match="start"):
        study_starts(chain, chain.model, "nowhere", 5, 0, pi)


def test_the_section_counts_early_and_false_declarations(tmp_path):
    base = {"states": 256, "chains": 8, "steps": 1000, "record_every": 1, "rhat_final": 1.0,
            "tv_floor": 0.05, "verdict": ""}
    rows = [
        {**base, "model": "a", "tau": 1.0, "start": "one-basin", "tmix": 500,
         "declared_step": 100, "tv_at_declared": 0.6, "early": True, "false": True},
        {**base, "model": "b", "tau": 1.0, "start": "one-basin", "tmix": 50,
         "declared_step": 400, "tv_at_declared": 0.06, "early": False, "false": False},
        {**base, "model": "c", "tau": 1.0, "start": "dispersed", "tmix": 50,
         "declared_step": None, "tv_at_declared": None, "tv_floor": None, "early": False,
         "false": False},
    ]
    (tmp_path / "rows.json").write_text(json.dumps({"chains": 8, "max_draws": 1000,
                                                    "per_doubling": 4, "rows": rows}))
    text = convergence_markdown(tmp_path)
    assert text.count("\n| ") == 3 + 1  # header and three rows
    assert "**one-basin** starts: convergence declared in 2 of 2 chains; before the exact " \
           "t_mix in 1 (a at tau = 1); falsely" in text
    assert "declared step is 8 to 8 times t_mix" in text
    assert "**dispersed** starts: convergence declared in 0 of 1" in text


def test_a_lag_row_against_an_independent_exact_tv_and_its_columns(tmp_path):
    spec = "ising-cycle:n=5"
    row = lag_case(spec, 2.0, "dispersed", pairs=40, lag=10)
    chain = ExactChain(parse_toy_spec(spec), 2.0)
    x0 = study_starts(chain, chain.model, "dispersed", 8, 0, chain.stationary())
    mu = np.bincount(state_index(x0, 2), minlength=32) / 8.0
    P = chain.transition_matrix().toarray()
    exact = 0.5 * np.abs(mu @ np.linalg.matrix_power(P, row["lag_step"]) - chain.stationary()).sum()
    assert row["lag_exact_tv"] == pytest.approx(exact, abs=1e-12)
    assert row["lag_upper"] <= 0.25 and row["lag_held"] is bool(exact <= row["lag_upper"])
    refused = lag_case(spec, 0.2, "dispersed", pairs=20, max_steps=2)
    assert refused["lag_step"] is None and "did not meet" in refused["lag_refused"]
    base = {"states": 32, "chains": 8, "steps": 1000, "record_every": 1, "rhat_final": 1.0,
            "tv_floor": None, "verdict": "", "tmix": 10, "declared_step": None,
            "tv_at_declared": None, "early": False, "false": False}
    rows = [{**base, "model": spec, "tau": t, "start": "dispersed"} for t in (2.0, 0.2)]
    (tmp_path / "rows.json").write_text(json.dumps({"chains": 8, "max_draws": 1000,
                                                    "per_doubling": 4, "rows": rows}))
    failed = {**row, "lag_held": False}
    (tmp_path / "lag.json").write_text(json.dumps({"lag": 10, "pairs": 40, "max_steps": 2,
                                                   "rows": [failed, refused]}))
    text = convergence_markdown(tmp_path)
    assert f"| {row['lag_step']:,} | **" in text and "| refused | — |" in text
    assert "ran on 1 of 2 chains (1 refused) and held against the exact TV on 0; it failed " \
           "on ising-cycle:n=5 at tau = 2" in text
