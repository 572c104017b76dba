"""``certify``: every estimator on one model, and honest claims about what is proved.

Oracles: the exact chain (full transition matrix, exact influence and score tables) of small toy
models; closed forms for the Ising cycle (LPW 2nd ed. Theorem 15.1 and Section 15.2:
neighbour influence ``tanh(2 beta)/2`` at an even-degree site) and for the asymmetric Ising
rectangle (``|delta| = 4 |J_ij - J_ji| / tau``, docs/theory.md, `prop4`); the Ising margin
``2 (h + sum_k J s_k)`` of an all-up state; and the validity of every rigorous bound against the
exact mixing time. Hypothesis draws random score tables and temperatures with ``q**n <= 81``.
"""

from __future__ import annotations

import json
import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.certify import STAGES, Certificate, ClaimKey, certify
from glauber.errors import (
    BasinError,
    InvalidParameterError,
    InvalidProbabilityError,
    InvalidTemperatureError,
    SequenceLengthError,
    StateSpaceTooLargeError,
)
from glauber.estimators import recheck_witnesses
from glauber.exact.chain import ExactChain
from glauber.testing import models
from glauber.toy_models import AsymmetricIsingModel, IsingModel, PlantedBasinModel

SMALL = dict(n_rectangles=8, budget=10, n_pairs=1)


#: Random score tables (incompatible; bias on token 0 of either sign) with ``q**n <= 81``.
TABLES = models(max_states=81, families={"random-table": {"scale": (0.1, 3.0)}}, max_sites=4,
                max_q=3)


def exact_drift(chain: ExactChain, token: int) -> np.ndarray:
    """E[X_1 - X_0 | X_0 = x] for every state, from the full transition matrix."""
    level = (chain.states() == token).sum(axis=1).astype(float)
    return chain.transition_matrix() @ level - level


def exact_margins(chain: ExactChain, xs: np.ndarray) -> np.ndarray:
    """Delta_i(x) = s_i(x_i) - max_{a != x_i} s_i(a) from the exact score table [n, S, q]."""
    s = chain.scores()[:, chain.index_of(xs), :]  # [n, B, q]
    out = np.empty(xs.shape)
    for b, x in enumerate(xs):
        for i, a in enumerate(x):
            out[b, i] = s[i, b, a] - np.delete(s[i, b], a).max()
    return out


# ------------------------------------------------------------------------ exhaustive = exact
@settings(max_examples=15, deadline=None)
@given(model=TABLES, tau=st.floats(0.3, 5.0))
def test_exhaustive_certificate_is_the_exact_chain(model, tau):
    cert = certify(model, tau, seed=1, **SMALL)
    chain = ExactChain(model, tau)
    assert cert.settings.exhaustive and cert.influence.exhaustive
    assert not cert.influence.is_lower_bound
    np.testing.assert_allclose(cert.influence.C, chain.influence_matrix(), atol=1e-12)
    np.testing.assert_allclose(cert.influence.Delta, chain.oscillation_matrix(), atol=1e-9)
    xs = np.array(cert.states)
    np.testing.assert_allclose(cert.margins.state_min, exact_margins(chain, xs).min(axis=1),
                               atol=1e-9)
    drift = exact_drift(chain, cert.drift.token)
    np.testing.assert_allclose(cert.drift.per_state, drift[chain.index_of(xs)], atol=1e-12)
    level = (chain.states() == cert.drift.token).sum(axis=1)
    a, b = cert.drift_band.band
    band = (level > a) & (level < b)
    assert cert.drift_band.band_states_complete and cert.drift_band.n_in_band == band.sum()
    assert cert.drift_band.band_min_drift == pytest.approx(drift[band].min(), abs=1e-12)
    # A rigorous Theorem 5 certificate must bound the exact worst-start mixing time.
    claim = cert.claim(ClaimKey.THEOREM5_CORRECTED)
    if claim.hypothesis_held:
        assert claim.rigorous
        assert chain.mixing_time(cert.eps) <= cert.influence.contraction.best_bound
        assert chain.mixing_time(cert.eps) <= cert.influence.oscillation_contraction.best_bound
        # ... and the claim says so itself: the exact values are confronted with the bound.
        assert cert.exact is not None and cert.exact.tmix == chain.mixing_time(cert.eps)
        assert claim.exact == cert.exact.tmix and claim.holds is True


@settings(max_examples=15, deadline=None)
@given(model=TABLES, tau=st.floats(0.3, 5.0), seed=st.integers(0, 1000))
def test_sampled_influences_are_lower_bounds(model, tau, seed):
    cert = certify(model, tau, seed=seed, exhaustive=False, n_contexts=2, **SMALL)
    exact = ExactChain(model, tau)
    assert cert.influence.is_lower_bound and not cert.settings.exhaustive
    assert np.all(np.array(cert.influence.C) <= exact.influence_matrix() + 1e-12)
    assert np.all(np.array(cert.influence.Delta) <= exact.oscillation_matrix() + 1e-9)
    c = cert.influence.contraction
    claim = cert.claim(ClaimKey.THEOREM5_CORRECTED)
    # A sampled certificate never claims rigour for fast mixing; a rounding-safe lower bound
    # rho_lower >= 1 rigorously rules the certificate out (the exact radius is at least as large).
    assert claim.rigorous == cert.influence.no_certificate
    exact_radius = max(abs(np.linalg.eigvals(exact.influence_matrix())))
    assert exact_radius >= cert.influence.rho_lower
    assert cert.influence.rho_lower <= c.spectral_radius + 1e-12
    if claim.hypothesis_held and not claim.rigorous:
        assert claim.certifies.startswith("NOT certified")
    # The default influence stage searches: every entry is realised by a witness that
    # re-evaluates to it (the recheck a certificate's reader can run).
    assert cert.influence.searched and cert.settings.search_budget > 0
    report = recheck_witnesses(model, cert.influence.to_dict())
    assert report.ok
    assert not cert.claim(ClaimKey.COROLLARY7).rigorous


def test_ising_cycle_influence_closed_form_and_valid_certificate():
    # LPW 2nd ed. Section 15.2 (docs/theory.md, `cycle-relaxation` and `dobrushin`): on the cycle
    # every site has degree 2, so the influence of a neighbour is tanh(2 beta) / 2 and alpha =
    # tanh(2 beta).
    n, tau = 6, 2.0
    cert = certify(IsingModel(nx.cycle_graph(n)), tau, **SMALL)
    expected = np.zeros((n, n))
    for i in range(n):
        expected[i, (i + 1) % n] = expected[i, (i - 1) % n] = math.tanh(2 / tau) / 2
    np.testing.assert_allclose(cert.influence.C, expected, atol=1e-12)
    assert cert.influence.contraction.alpha_row == pytest.approx(math.tanh(2 / tau))
    claim = cert.claim(ClaimKey.THEOREM5_CORRECTED)
    assert claim.hypothesis_held and claim.rigorous
    assert claim.bound == cert.influence.contraction.best_bound
    assert ExactChain(IsingModel(nx.cycle_graph(n)), tau).mixing_time(0.25) <= claim.bound
    # Gibbs: no rectangle can show incompatibility.
    assert cert.incompatibility.n_above_atol == 0
    assert not cert.claim(ClaimKey.PROPOSITION4).hypothesis_held
    assert not cert.claim(ClaimKey.PROPOSITION4).rigorous


def test_sampled_ising_alpha_is_below_the_closed_form():
    n, tau = 8, 1.5
    cert = certify(IsingModel(nx.cycle_graph(n)), tau, exhaustive=False, **SMALL)
    assert cert.influence.contraction.alpha_row <= math.tanh(2 / tau) + 1e-12
    claim = cert.claim(ClaimKey.THEOREM5_CORRECTED)
    assert claim.hypothesis_held and not claim.rigorous
    assert "NOT certified" in claim.certifies and "lower-bound C" in claim.certifies
    assert "no bound" in claim.certifies


@pytest.mark.parametrize("tau", [0.5, 1.0, 3.0])
def test_rectangles_of_asymmetric_ising_match_the_closed_form(tau):
    # docs/theory.md, `prop4`: flipping both spins of sites i, j gives |delta| = 4 |J_ij - J_ji| /
    # tau.
    model = AsymmetricIsingModel.random(5, rng=3, asym=0.7)
    cert = certify(model, tau, n_rectangles=30, budget=5, n_pairs=1)
    rect = cert.incompatibility.rectangles
    for i, j, delta in zip(rect.site_i, rect.site_j, rect.delta):
        assert abs(delta) == pytest.approx(4 * abs(model.J[i, j] - model.J[j, i]) / tau)
    assert cert.incompatibility.n_above_atol == 30
    claim = cert.claim(ClaimKey.PROPOSITION4)
    assert claim.hypothesis_held and claim.rigorous
    assert claim.bound == pytest.approx(np.mean(np.abs(rect.delta)))


def test_trap_margin_and_escape_against_closed_form_and_exact_chain():
    # Ising path of 4 sites with field h = 3: at the all-up state the margin of site i is
    # s_i(+1) - s_i(-1) = 2 (h + deg(i)), smallest at the two ends: 2 (3 + 1) = 8.
    model = IsingModel(nx.path_graph(4), coupling=1.0, field=3.0)
    tau = 1.5
    states = np.array([[1, 1, 1, 1], [0, 1, 0, 1]])
    cert = certify(model, tau, states, **SMALL)
    m = cert.margins
    assert m.best_trap == 0
    assert m.state_min[0] == pytest.approx(8.0)
    assert m.trap_escape_bound[0] == pytest.approx(2 * math.exp(-8 / tau))  # |V| e^{-D*/tau}
    assert m.trap_tmix_lower_bound[0] == pytest.approx(math.exp(8 / tau) / 8)
    chain = ExactChain(model, tau)
    for s, x in enumerate(states):  # the exact one-step escape of every state, not only traps
        mask = np.zeros(chain.num_states, dtype=bool)
        mask[chain.index_of(x)] = True
        assert m.escape[s] == pytest.approx(chain.escape_probabilities(mask)[0], rel=1e-12)
    assert m.escape[0] <= m.trap_sharper_escape_bound[0] <= m.trap_escape_bound[0]
    assert m.perfect.tolist() == [True, False] and m.n_perfect == 1
    claim = cert.claim(ClaimKey.THEOREM8_TRAP)
    assert claim.hypothesis_held and claim.rigorous


def test_exhaustive_basin_matches_exact_margins_and_escape():
    model = PlantedBasinModel(5, 3, token=0, strength=6.0)
    tau = 0.7

    def basin(x):
        return (x == 0).sum(axis=1) >= 4

    states = np.array([[0, 0, 0, 0, 0], [0, 0, 0, 0, 1], [1, 2, 0, 1, 2]])
    cert = certify(model, tau, states, basin=basin, **SMALL)
    chain = ExactChain(model, tau)
    mask = basin(chain.states())
    exact = chain.margins(mask)
    b = cert.basin.basin
    assert b.complete and b.basin_size == mask.sum()
    assert b.holds == exact.holds
    assert b.delta_star == pytest.approx(exact.delta_star)
    largest = cert.basin.basin_escape.max()
    assert largest == pytest.approx(chain.escape_probabilities(mask).max(), rel=1e-12)
    if b.holds:
        assert largest <= b.sharper_escape_bound <= b.escape_bound
    assert cert.claim(ClaimKey.THEOREM8_BASIN).rigorous == exact.holds


def test_sampled_basin_is_not_rigorous_and_needs_basin_states():
    model = PlantedBasinModel(5, 3, token=0, strength=6.0)
    states = np.array([[0, 0, 0, 0, 0], [1, 2, 0, 1, 2]])
    cert = certify(model, 0.7, states, basin=lambda x: (x == 0).sum(axis=1) >= 4,
                   exhaustive=False, **SMALL)
    assert cert.basin.basin.basin_size == 1 and not cert.basin.basin.complete
    assert not cert.claim(ClaimKey.THEOREM8_BASIN).rigorous
    with pytest.raises(BasinError):
        certify(model, 0.7, states[1:], basin=lambda x: (x == 0).sum(axis=1) >= 4,
                exhaustive=False, **SMALL)


def test_band_drift_certificate_on_a_planted_basin():
    # Strong self-reinforcement: the count of token 0 drifts up at counts 3 and 4 of 5.
    model = PlantedBasinModel(5, 2, token=0, strength=8.0)
    tau = 0.5
    states = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 1]])
    cert = certify(model, tau, states, horizon=2, **SMALL)
    d = cert.drift_band
    assert (d.token, d.band) == (0, (2.0, 5.0))
    chain = ExactChain(model, tau)
    drift = exact_drift(chain, 0)
    level = (chain.states() == 0).sum(axis=1)
    eps = drift[(level > 2) & (level < 5)].min()
    assert eps > 0 and d.band_min_drift == pytest.approx(eps, abs=1e-12)
    # docs/theory.md, `drift-band`: P(escape) <= T exp(-2 eps (b - a - 1)) with c = 1.
    assert d.certificate.bound == pytest.approx(min(1.0, 2 * math.exp(-2 * eps * (5 - 2 - 1))))
    assert d.rigorous == (not d.vacuous) and d.band_states_complete
    assert cert.claim(ClaimKey.DRIFT_BAND).rigorous == d.rigorous
    assert not cert.claim(ClaimKey.DRIFT_PRINTED).rigorous


# -------------------------------------------------------------------------- serialisation
def _certificates() -> list[Certificate]:
    planted = PlantedBasinModel(4, 2, token=0, strength=6.0)
    return [
        certify(IsingModel(nx.cycle_graph(5)), 3.0, **SMALL),
        certify(IsingModel(nx.cycle_graph(5)), 0.2, **SMALL),  # infinite bounds
        certify(AsymmetricIsingModel.random(5, rng=0), 1.0, exhaustive=False, **SMALL),
        certify(planted, 0.5, np.array([[0, 0, 0, 0], [0, 0, 1, 1]]),
                basin=lambda x: (x == 0).sum(axis=1) >= 3, n_rectangles=1, budget=3),
    ]


def test_json_round_trip_is_exact_and_strict():
    for cert in _certificates():
        text = cert.to_json()

        def reject(token):
            raise AssertionError(f"non-strict JSON token {token}")

        json.loads(text, parse_constant=reject)
        assert Certificate.from_json(text) == cert
        assert Certificate.from_dict(json.loads(json.dumps(cert.to_dict()))) == cert
    cold = _certificates()[1]  # Lemma 6 at tau = 0.2 gives no certificate: bound inf
    assert math.isinf(cold.influence.oscillation_contraction.best_bound)
    assert cold.to_dict()["influence"]["oscillation_contraction"]["best_bound"] == "inf"


def test_malformed_json_is_rejected():
    cert = _certificates()[0]
    data = cert.to_dict()
    with pytest.raises(InvalidParameterError):
        Certificate.from_json("{not json")
    del data["influence"]["C"]
    with pytest.raises(InvalidParameterError, match="C"):
        Certificate.from_dict(data)
    data = cert.to_dict()
    data["tau"] = "hot"
    with pytest.raises(InvalidParameterError, match="tau"):
        Certificate.from_dict(data)


def test_same_seed_same_certificate_apart_from_timings():
    model = AsymmetricIsingModel.random(6, rng=2)
    a, b, c = (certify(model, 1.0, seed=s, exhaustive=False, **SMALL) for s in (4, 4, 5))

    def strip(x):  # wall-clock seconds (the timings, the bracket's costs) are not results
        d = x.to_dict() | {"timings": None}
        d["bracket"] = d["bracket"] | {"upper_seconds": None, "lower_seconds": None}
        return d

    assert strip(a) == strip(b)
    assert strip(a) != strip(c)


# ------------------------------------------------------------------- progress and defaults
def test_progress_callback_and_bar():
    model = IsingModel(nx.cycle_graph(4))
    calls = []
    cert = certify(model, 1.0, progress=lambda *a: calls.append(a), **SMALL)
    stages = [s for s, _, _ in calls]
    assert [s for s in dict.fromkeys(stages) if s in STAGES] == list(STAGES)
    done = [d for _, d, _ in calls]
    assert done == sorted(done) and done[-1] == calls[-1][2]  # ends at the planned total

    class Bar:
        def __init__(self):
            self.total, self.n, self.descriptions = None, 0, []

        def update(self, k):
            self.n += k

        def refresh(self):
            pass

        def set_description_str(self, text):
            self.descriptions.append(text)

    bar = Bar()
    cert = certify(model, 1.0, progress=bar, **SMALL)
    assert bar.descriptions == list(STAGES)
    assert bar.n == bar.total >= cert.timings.rows > 0


def test_default_states_method_and_random_states():
    model = IsingModel(nx.cycle_graph(8))
    drawn = [certify(model, 1.0, seed=s, **SMALL).states for s in (0, 0, 1)]
    assert len(drawn[0]) == 4 and drawn[0] == drawn[1] != drawn[2]  # random, from the seed
    model.default_states = lambda: np.array([[1] * 8, [0] * 8, [1] * 8, [1, 0] * 4])
    # Repeated states are examined once, in order of first appearance.
    assert certify(model, 1.0, **SMALL).states == ((1,) * 8, (0,) * 8, (1, 0) * 4)


# ------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("tau", [0.0, -1.0, float("nan"), float("inf")])
def test_bad_temperature(tau):
    with pytest.raises(InvalidTemperatureError, match="tau"):
        certify(IsingModel(nx.cycle_graph(4)), tau)


@pytest.mark.parametrize("kw", [{"budget": 0}, {"n_rectangles": 0}, {"n_contexts": -1},
                                {"seed": -1}, {"batch_size": 0}, {"horizon": 0}])
def test_bad_counts(kw):
    with pytest.raises(InvalidParameterError, match=next(iter(kw))):
        certify(IsingModel(nx.cycle_graph(4)), 1.0, **kw)


def test_other_bad_input():
    model = IsingModel(nx.cycle_graph(4))
    with pytest.raises(InvalidProbabilityError):
        certify(model, 1.0, eps=1.5)
    with pytest.raises(SequenceLengthError):
        certify(model, 1.0, np.zeros((2, 5), dtype=int))
    with pytest.raises(InvalidParameterError, match="n >= 2"):
        certify(IsingModel(nx.path_graph(1)), 1.0)
    with pytest.raises(StateSpaceTooLargeError):
        certify(IsingModel(nx.cycle_graph(14)), 1.0, exhaustive=True)


# -------------------------------------------------------------------------------- AntiBERTy
@pytest.mark.mlm
def test_antiberty_small_budget_shows_incompatibility():
    pytest.importorskip("antiberty")
    import torch

    from glauber.mlm_backend import load_antiberty

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = load_antiberty(n=12)
        cert = certify(model, 1.0, None, n_rectangles=24, n_contexts=1,
                       budget=5, n_pairs=1)
    finally:
        torch.set_num_threads(threads)
    r = cert.incompatibility
    assert r.mean_abs_delta > 0.1 and r.n_above_atol >= 20 and r.p_value_abs < 1e-3
    assert cert.claim(ClaimKey.PROPOSITION4).hypothesis_held and cert.claim(ClaimKey.PROPOSITION4).rigorous
    assert cert.influence.is_lower_bound and not cert.settings.exhaustive
    assert cert.claim(ClaimKey.THEOREM5_CORRECTED).rigorous == (
        cert.influence.contraction.spectral_radius >= 1.0)
    assert cert.model == "antiberty" and cert.q == 20 and cert.labels[0] == "A"
    assert Certificate.from_json(cert.to_json()) == cert


def test_margins_and_drift_share_their_rows():
    """Margins and drift read every site's conditional at the same states: through one memo,
    drift asks the model nothing, margins asks each distinct query once (two states that differ
    at one site share that site's query), and both equal their estimators on the model."""
    from glauber.certify.runs import drift_band
    from glauber.estimators import drift, margins

    model = AsymmetricIsingModel.random(6, rng=1)
    states = np.array([[0, 1, 0, 1, 1, 0], [0, 1, 0, 1, 1, 1], [1, 1, 0, 0, 1, 0]])
    asked: list[tuple[str, bytes]] = []
    stage = ["setup"]
    plain = model.scores

    def scores(xs, sites):
        xs, sites = np.array(xs), np.broadcast_to(sites, (len(xs),))
        for x, i in zip(xs, sites):
            key = x.copy()
            key[i] = 0  # the token at the queried site is ignored: not part of the query
            asked.append((stage[0], bytes([i, *key])))
        return plain(xs, sites)

    model.scores = scores
    cert = certify(model, 0.8, states, exhaustive=False, exact=False,
                   progress=lambda name, done, total: stage.__setitem__(0, name), **SMALL)
    by_stage = {name: [k for s, k in asked if s == name] for name in ("margins", "drift")}
    assert by_stage["drift"] == []
    assert sorted(by_stage["margins"]) == sorted(set(by_stage["margins"]))
    assert len(by_stage["margins"]) == 3 * 6 - 1  # states 0 and 1 share site 5's query
    model.scores = plain
    assert cert.margins.to_dict() == margins(model, states, tau=0.8).to_dict()
    token, a, b = drift_band(states, model.q)
    assert cert.drift.to_dict() == drift(model, states, token, 0.8, band=(a, b),
                                         T=cert.settings.horizon).to_dict()
