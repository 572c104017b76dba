"""Exact values at the edge of what can be computed: a capped t_mix with a rigorous lower bound,
and a stationary law that underflows float64, reported rather than raised.

Oracles: the exact worst-start t_mix of small chains (ExactChain, dense squaring) against the
spectral lower bound d(t) >= |lambda|^t / 2 (LPW 2nd ed., Theorem 12.5, any eigenvalue
lambda != 1, reversible or not), and the step limit itself (a start still farther than eps at
the limit proves t_mix > limit).
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from glauber.certify import Certificate, certify, format_certificate
from glauber.certify import exact as exact_module
from glauber.certify.exact import spectral_tmix_lower_bound
from glauber.errors import ConvergenceError, PrecisionError
from glauber.exact.chain import ExactChain
from glauber.testing import models, temperatures
from glauber.toy_models.specs import parse_toy_spec


@settings(max_examples=40, deadline=None)
@given(models(max_states=64, min_sites=2), temperatures(min_tau=0.2, max_tau=10))
def test_spectral_lower_bound_never_exceeds_the_exact_tmix(model, tau):
    chain = ExactChain(model, tau)
    try:
        gap = chain.absolute_spectral_gap()
        exact = {eps: chain.mixing_time(eps) for eps in (0.05, 0.25, 0.45)}
    except (PrecisionError, ConvergenceError):  # no resolvable gap, or numerically reducible
        assume(False)
    for eps, tmix in exact.items():
        assert spectral_tmix_lower_bound(gap, eps) <= tmix


def test_spectral_lower_bound_is_tight_on_a_two_state_chain():
    # P = [[1-a, a], [b, 1-b]]: d(t) = max(a, b)/(a+b) |1-a-b|^t, eigenvalue 1-a-b. With a = b,
    # d(t) = |1 - 2a|^t / 2 exactly, the bound's own form.
    a = 0.01
    lam = 1 - 2 * a
    P = np.array([[1 - a, a], [a, 1 - a]])
    exact = next(t for t in range(10_000) if lam**t / 2 <= 0.25)
    bound = spectral_tmix_lower_bound(2 * a, 0.25)
    assert bound in (exact - 1, exact)
    assert spectral_tmix_lower_bound(None, 0.25) == 0 == spectral_tmix_lower_bound(1.0, 0.25)
    del P


@settings(max_examples=200, deadline=None)
@given(log_gap=st.floats(-323.3, -0.01), eps=st.floats(1e-6, 0.499),
       rel_error=st.sampled_from([0.0, 1e-9, 1e-6, 1e-3]))
def test_spectral_lower_bound_holds_for_every_gap_within_its_error(log_gap, eps, rel_error):
    # Oracle: T(g) = log(1/(2 eps)) / -log(1 - g) in mpmath at 60 digits (LPW 2nd ed., Theorem
    # 12.5); the bound must not exceed ceil(T) at the largest gap the solver's error and the
    # float64 rounding of its answer allow, down to subnormal gaps (which overflowed
    # math.ceil before), and must not be vacuous.
    gap = 10.0**log_gap
    if gap == 0.0:
        gap = 5e-324
    error = rel_error * gap
    bound = spectral_tmix_lower_bound(gap, eps, error)
    mp = mpmath.mp.clone()
    mp.dps = 60
    worst = mp.mpf(gap) * (1 + mp.mpf(2) ** -53) + mp.mpf(error) + mp.mpf(2) ** -1075

    def ceil_t(g):
        return int(mp.ceil(mp.log(1 / (2 * mp.mpf(eps))) / -mp.log1p(-g)))

    assert isinstance(bound, int) and 0 <= bound <= ceil_t(worst)
    assert 100 * bound >= 99 * ceil_t(worst) - 100  # integers: 10**308 overflows a float


@pytest.mark.parametrize("tau", [0.0055, 0.0056])
def test_certify_with_a_subnormal_gap_gives_an_exact_lower_bound(tau):
    # The Ising 4-cycle here has an absolute gap of ~1e-316 (subnormal): math.ceil(inf) raised
    # an untyped OverflowError inside certify. Now t_mix >= an exact (huge) integer.
    cert = certify(parse_toy_spec("ising-cycle:n=4"), tau, n_pairs=0, n_rectangles=4)
    e = cert.exact
    assert e.absolute_gap is not None and e.absolute_gap < 2.3e-308
    assert e.tmix_lower > 10**300 and isinstance(e.tmix_lower, int)
    assert Certificate.from_json(cert.to_json()) == cert
    assert "not computed" in format_certificate(cert)


def test_a_metastable_window_is_capped_and_bounded_not_stepped_for_hours(monkeypatch):
    # Ising cycle of 13 spins at tau = 0.5: 8192 states (stepped, above the dense limit),
    # relaxation time ~2e4 steps, and a stationary law with masses below 1e-200.
    monkeypatch.setattr(exact_module, "EXACT_TMIX_MAX_STEPS", 5)
    cert = certify(parse_toy_spec("ising-cycle:n=13"), 0.5, n_pairs=0, n_rectangles=4)
    e = cert.exact
    assert e.tmix is None
    assert e.tmix_lower == max(6, spectral_tmix_lower_bound(e.absolute_gap, 0.25)) > 1000
    # The law comes from the model's log-joint (exact to relative precision, checked by
    # detailed balance: glauber.exact.sparse), so reversibility is decided although masses are
    # below 1e-200; a float64 solve could not decide it (it was None before the sparse path).
    assert e.reversible is True and not any("float64 law" in note for note in e.notes)
    # Transfer matrix of the Ising cycle (Baxter, Exactly Solved Models, Section 2.2): with
    # beta = J / tau = 2, Z = (2 cosh beta)^n + (2 sinh beta)^n and the all-equal state has
    # mass e^(n beta) / Z (the float64 law is normwise accurate, so its mode is too).
    beta, n = 2.0, 13
    mode = np.exp(n * beta) / ((2 * np.cosh(beta)) ** n + (2 * np.sinh(beta)) ** n)
    assert e.max_stationary_mass == pytest.approx(mode, rel=1e-9)
    assert f"> {e.tmix_lower - 1}" in format_certificate(cert)
    assert Certificate.from_json(cert.to_json()) == cert


def test_a_factored_chain_whose_law_underflows_keeps_its_gap_and_exact_tmix():
    # Independent sites (every conditional the field -3a over 17 tokens, any context) on 17^3 =
    # 4913 states: above the dense limit, factored, with masses down to e^(-3*16*3/0.1) ~ 1e-625
    # (the law underflows float64 and the table model has no log-joint). The gap comes from the
    # dense factor (1/n = 1/3 for independent sites, each redrawn from its own law: LPW 12.4);
    # asking the gap's error of the Lanczos estimate needed the stationary law and raised
    # UnderflowError out of exact_values.
    from glauber.exact.score_table import TabulatedModel, score_table

    source = parse_toy_spec("random-table:n=3,q=17,seed=0,scale=1.0")
    table = score_table(source)
    model = TabulatedModel(source, np.broadcast_to(-3.0 * np.arange(17), table.shape).copy())
    chain = ExactChain(model, 0.1)
    assert chain.algebra == "sparse" and chain.factored
    values = exact_module.exact_values(chain, 0.25)
    assert values.absolute_gap == pytest.approx(1 / 3, rel=1e-9)
    assert values.tmix == ExactChain(model, 0.1).mixing_time(0.25)
    assert values.tmix_lower == values.tmix
    assert any("underflow" in note for note in values.notes)
