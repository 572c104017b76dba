"""Adversarial battery (issue 11): every public theory, toy and estimator function at the extremes.

Hypothesis draws temperatures from 1e-8 to 1e8, scores up to 1e12, near-critical influence
matrices, huge step counts, numpy integers and malformed arguments, and float32/bfloat16 torch
models. Each test asserts two things:

* no untyped exception: anything raised is a :class:`glauber.errors.GlauberError`;
* no rigorous claim is contradicted by an exact or extended-precision check: mpmath at 50+
  digits (closed forms, a GTH solve of the chain rebuilt from the scores in mpmath), exact
  rational arithmetic, or compatibility by construction (no rectangle of a joint law is
  flagged).

Every test runs with ``RuntimeWarning`` as an error (``pytestmark``): an overflow, underflow or
NaN warning printed at a user's input means lost precision or an unhandled case, so the library
must handle each one (log space, a typed error) instead of printing it.

The last test drives the main job, ``certify()``, end to end on random toys at the same extremes
and on chains tuned to a spectral radius of ``C`` within ``1e-9`` of 1, and confronts every claim
it marks rigorous with the chain rebuilt in mpmath.

Budget: ``GLAUBER_ADVERSARIAL_EXAMPLES`` examples in all (default 800, derandomized: the same
examples every run, well under a minute on one core), shared between the tests by weight; the
upper bounds on influence (random tiny transformers and random toys, against exact
enumeration) take a twentieth of it each in the large profile (500 models each at 10000) and a
handful in CI. The large profile, e.g. ``GLAUBER_ADVERSARIAL_EXAMPLES=10000``, draws fresh
random examples; with
``-s`` the module prints how many examples ran and how many reached each exact check
(``GLAUBER_ADVERSARIAL_REPORT=path`` appends that line to a file).
"""

from __future__ import annotations

import math
import os
import time
from collections import Counter
from fractions import Fraction

import mpmath
import networkx as nx
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glauber import theory
from glauber.core.enumeration import table_queries
from glauber.errors import GlauberError
from glauber.estimators import (
    coupling_time,
    drift,
    glauber_chains,
    influence,
    influence_upper_bound,
    margins,
    rectangle_test,
    search_influence,
)
from glauber.estimators.escape import escape_probability
from glauber.exact import ExactChain, mixing
from glauber.testing import masked_lms, models
from glauber.theory.escape import (
    log_bottleneck_tmix_lower_bound,
    log_theorem8_escape_bound,
    log_theorem8_tmix_lower_bound,
)
from glauber.theory.floating import softmax_tv_rounding
from glauber.theory.verified_power import columns_at_most_one
from glauber.toy_models import AsymmetricIsingModel, FunctionModel, IsingModel, RandomJointModel

from .support import power_sum_mp

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

LARGE = "GLAUBER_ADVERSARIAL_EXAMPLES" in os.environ
TOTAL = int(os.environ.get("GLAUBER_ADVERSARIAL_EXAMPLES", "800"))
WEIGHTS = {
    "scalar": 40, "contraction": 12, "chain": 20, "estimators": 12, "torch": 6, "rectangle": 10,
    "certify": 12,
}
#: Examples of the (slowest) certify test in the default, CI-sized run.
CERTIFY_CI_EXAMPLES = 24
COUNTS: Counter = Counter()
U = 2.0**-53
MP = mpmath.mp.clone()
MP.dps = 60


def budget(name: str, ci: int | None = None):
    """Hypothesis settings of one test: its share of ``TOTAL`` by weight (the certify test:
    ``CERTIFY_CI_EXAMPLES`` in CI), or, for a test with its own ``ci`` count, ``ci`` examples in
    CI and a twentieth of ``TOTAL`` in the large profile."""
    share = max(3, round(TOTAL * WEIGHTS[name] / sum(WEIGHTS.values())))
    if ci is not None:
        share = TOTAL // 20 if LARGE else ci
    elif name == "certify" and not LARGE:
        share = CERTIFY_CI_EXAMPLES
    return settings(
        max_examples=share, deadline=None, database=None, derandomize=not LARGE,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                               HealthCheck.data_too_large],
    )


@pytest.fixture(scope="module", autouse=True)
def _report():
    start = time.perf_counter()
    yield
    total = sum(v for k, v in COUNTS.items() if ":" not in k)
    line = (f"adversarial battery: {total} examples in {time.perf_counter() - start:.1f} s "
            f"({dict(COUNTS)})")
    print("\n" + line)
    path = os.environ.get("GLAUBER_ADVERSARIAL_REPORT")
    if path:
        with open(path, "a") as fh:
            fh.write(line + "\n")


def typed(call, *args, **kwargs):
    """Run ``call``; return ``(value, None)`` or ``(None, error)`` for a GlauberError only."""
    try:
        return call(*args, **kwargs), None
    except GlauberError as exc:
        return None, exc


# ------------------------------------------------------------------------------ strategies
taus = st.floats(-8.0, 8.0).map(lambda e: 10.0**e)
magnitudes = st.floats(-3.0, 12.0).map(lambda e: 10.0**e)
huge_ints = st.one_of(st.integers(0, 10**6), st.integers(0, 10**400),
                      st.integers(0, 2**40).map(np.int64))
junk = st.sampled_from(["1.0", "abc", None, float("nan"), float("inf"), -1.0, 1 + 2j, True,
                        [1.0, 2.0], np.float32(0.5)])


def maybe_junk(strategy):
    return st.one_of(strategy, strategy, strategy, strategy, junk)


# ----------------------------------------------------------------------- scalar theory
def _mpf(x):
    return MP.mpf(Fraction(float(x)).numerator) / Fraction(float(x)).denominator


def _check_escape(args, value):
    q, d, tau = args
    exact = q * MP.exp(-_mpf(d) / _mpf(tau))
    assert value > 0 and value >= exact * (1 - 1e-12)
    assert log_theorem8_escape_bound(q, d, tau) == pytest.approx(float(MP.log(exact)),
                                                                 rel=1e-12, abs=1e-12)


def _check_sharper(args, value):
    n, k, q, d, tau = args
    exact = MP.mpf(k) / n * (q - 1) * MP.exp(-_mpf(d) / _mpf(tau))
    assert value >= exact * (1 - 1e-12) and (value > 0 or k == 0)


def _check_tmix_lower(args, value):
    q, d, tau = args
    exact = MP.exp(_mpf(d) / _mpf(tau)) / (4 * q)
    assert math.isfinite(value) and value <= exact * (1 + 1e-12)
    assert log_theorem8_tmix_lower_bound(q, d, tau) == pytest.approx(float(MP.log(exact)),
                                                                     rel=1e-12, abs=1e-12)


def _check_bottleneck_distance(args, value):
    t, pi_a, phi_a = args
    exact = 1 - _mpf(pi_a) - t * _mpf(phi_a)
    assert value <= exact + MP.mpf(1e-12) * (1 + abs(exact))


def _check_bottleneck_tmix(args, value):
    pi_a, phi_a, eps = args
    gap = 1 - _mpf(pi_a) - _mpf(eps)
    if gap <= 0:
        assert value == 0.0
    elif phi_a == 0:
        assert value == math.inf
    else:
        exact = gap / _mpf(phi_a)
        assert math.isfinite(value) and value <= exact * (1 + 1e-12)
        assert log_bottleneck_tmix_lower_bound(pi_a, math.log(phi_a), eps) <= float(
            MP.log(exact)) + 1e-9


def _check_decay(n, c, t, value):
    exact = n * (1 - c / n) ** t
    if exact > MP.mpf(1e-300):
        assert value == pytest.approx(float(exact), rel=1e-9)
    else:
        assert 0.0 <= value < 1e-290


def _check_dobrushin(args, value):
    n, degree, beta, t = args
    c = 1 - degree * MP.tanh(_mpf(beta))
    if c <= 0:
        assert value == math.inf
    elif math.isfinite(value):
        _check_decay(n, c, t, value)


def _check_curie_weiss(args, value):
    n, alpha, t = args
    if alpha >= 1:
        assert value == math.inf
    else:
        _check_decay(n, 1 - _mpf(alpha), t, value)


def _check_path_coupling(args, value):
    t, rate, diameter = args
    exact = _mpf(diameter) * MP.exp(-_mpf(rate) * t)
    if exact > MP.mpf(1e-300):
        assert value == pytest.approx(float(exact), rel=1e-9)
    else:
        assert 0.0 <= value < 1e-290


def _check_cycle(args, value):
    n, beta = args
    assert value == pytest.approx(float(n * (1 + MP.exp(4 * _mpf(beta))) / 2), rel=1e-12)


def _check_neighbour(args, value):
    beta, degree = args
    b = abs(_mpf(beta))
    exact = MP.tanh(b) if degree % 2 else MP.tanh(2 * b) / 2
    assert value == pytest.approx(float(exact), rel=1e-14, abs=1e-300)


def _check_t5(args, value):
    n, a, eps = args
    if a >= 1:
        assert value == math.inf
    else:
        exact = MP.ceil(n / (1 - _mpf(a)) * (MP.log(n) + MP.log(1 / _mpf(eps))))
        assert value >= exact


def _check_band(args, value):
    eps, a, b, T = args
    exact = min(MP.mpf(1), T * MP.exp(-(2 * _mpf(eps)) * (_mpf(b) - _mpf(a) - 1)))
    assert value.bound >= exact * (1 - 1e-12)


def _check_path_tmix(args, value):
    rate, diameter, eps = args
    exact = max(0, MP.ceil(MP.log(_mpf(diameter) / _mpf(eps)) / _mpf(rate)))
    assert value >= exact


pos = st.floats(1e-12, 1e12)
prob = st.floats(0.0, 1.0)
eps01 = st.floats(1e-300, 0.999)
SCALARS = [
    ("theorem8_escape_bound", theory.theorem8_escape_bound,
     st.tuples(st.integers(2, 10**6), magnitudes, taus), _check_escape),
    ("sharper_escape_bound", theory.sharper_escape_bound,
     st.integers(1, 50).flatmap(lambda n: st.tuples(
         st.just(n), st.integers(0, n), st.integers(2, 100), magnitudes, taus)), _check_sharper),
    ("theorem8_tmix_lower_bound", theory.theorem8_tmix_lower_bound,
     st.tuples(st.integers(2, 10**6), magnitudes, taus), _check_tmix_lower),
    ("bottleneck_distance_lower_bound", theory.bottleneck_distance_lower_bound,
     st.tuples(huge_ints, st.floats(1e-300, 0.999), prob), _check_bottleneck_distance),
    ("bottleneck_tmix_lower_bound", theory.bottleneck_tmix_lower_bound,
     st.tuples(st.floats(1e-300, 0.999), st.one_of(prob, st.floats(0, 1e-300)), eps01),
     _check_bottleneck_tmix),
    ("dobrushin_ising_bound", theory.dobrushin_ising_bound,
     st.tuples(st.integers(1, 10**4), st.integers(0, 8), st.floats(0, 50), huge_ints),
     _check_dobrushin),
    ("curie_weiss_fast_bound", theory.curie_weiss_fast_bound,
     st.tuples(st.integers(1, 10**4), st.floats(0, 2), huge_ints), _check_curie_weiss),
    ("path_coupling_distance_bound", theory.path_coupling_distance_bound,
     st.tuples(huge_ints, pos, pos), _check_path_coupling),
    ("ising_cycle_relaxation_time", theory.ising_cycle_relaxation_time,
     st.tuples(st.integers(3, 10**6), st.floats(0, 170)), _check_cycle),
    ("ising_neighbour_influence", theory.ising_neighbour_influence,
     st.tuples(st.floats(-1e3, 1e3), st.integers(1, 10**12)), _check_neighbour),
    ("theorem5_tmix_bound", lambda n, a, eps: theory.theorem5_tmix_bound(n, a, eps, True),
     st.tuples(st.integers(1, 10**9), st.floats(0, 1, exclude_max=True), eps01), _check_t5),
    ("band_drift_escape_bound", lambda eps, a, b, T: theory.band_drift_escape_bound(
        eps, a, b, T), st.tuples(st.floats(1e-9, 1.0), st.floats(-1e6, 0), st.floats(1, 1e6),
                                 huge_ints), _check_band),
    ("path_coupling_tmix_bound", theory.path_coupling_tmix_bound,
     st.tuples(pos, pos, eps01), _check_path_tmix),
    ("lemma6_bound", theory.lemma6_bound, st.tuples(magnitudes, taus), None),
    ("tanh_bound", theory.tanh_bound, st.tuples(magnitudes, taus), None),
    ("hilbert_distance", theory.hilbert_distance,
     st.tuples(st.lists(magnitudes, min_size=2, max_size=2),
               st.lists(magnitudes, min_size=2, max_size=3)), None),
    ("tv_distance", theory.tv_distance,
     st.tuples(st.lists(prob, min_size=1, max_size=3), st.lists(prob, min_size=1, max_size=3)),
     None),
    ("rate_from_contraction_factor", theory.rate_from_contraction_factor,
     st.tuples(st.floats(-1, 2)), None),
    ("delta_at_tau", theory.delta_at_tau, st.tuples(magnitudes, taus), None),
]


@budget("scalar")
@given(data=st.data(), which=st.integers(0, len(SCALARS) - 1), corrupt=st.integers(0, 9))
def test_scalar_theory_functions(data, which, corrupt):
    COUNTS["scalar"] += 1
    name, fn, args_strategy, check = SCALARS[which]
    args = list(data.draw(args_strategy, label=name))
    injected = corrupt < len(args)  # in about a third of the examples one argument is junk
    if injected:
        args[corrupt] = data.draw(junk, label="junk")
    value, error = typed(fn, *args)
    if not injected and error is None and check is not None:
        check(tuple(args), value)
        COUNTS["scalar: checked against mpmath"] += 1


# ------------------------------------------------------------------ Theorem 5 certificates
@budget("contraction")
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 5), log_gap=st.floats(-13.0, -0.01),
       above=st.booleans(), eps=st.sampled_from([0.25, 0.01, 0.499, 1e-6]),
       density=st.floats(0.2, 1.0))
def test_contraction_certificates_are_never_contradicted(seed, n, log_gap, above, eps, density):
    COUNTS["contraction"] += 1
    rng = np.random.default_rng(seed)
    C = rng.random((n, n)) * (rng.random((n, n)) < density)
    np.fill_diagonal(C, 0.0)
    rho = max(abs(np.linalg.eigvals(C))) if n > 1 else 0.0
    if rho > 0:  # spectral radius within 10^log_gap of 1, below or above
        C *= (1 + (1 if above else -1) * 10.0**log_gap) / rho
    cert, error = typed(theory.certify_contraction, C, eps)
    assert error is None, error
    exact_row = max(sum(Fraction(float(v)) for v in C[i]) for i in range(n))
    exact_col = max(sum(Fraction(float(v)) for v in C[:, j]) for j in range(n))
    assert cert.contraction_as_printed_holds == (exact_row < 1)
    assert cert.contraction_corrected_holds == (exact_col < 1)
    sigma = max(MP.svd_r(MP.matrix(C.tolist()), compute_uv=False)) if C.any() else MP.mpf(0)
    alphas = {"row": MP.mpf(exact_row.numerator) / exact_row.denominator,
              "col": MP.mpf(exact_col.numerator) / exact_col.denominator, "spectral": sigma}
    for name in cert.rigorous:
        bound = getattr(cert, f"tmix_{name}")
        if math.isinf(bound):
            continue
        if name == "matrix_power":
            assert power_sum_mp(C, int(bound)) <= eps  # the certificate's defining inequality
            if cert.matrix_power_minimal:
                assert power_sum_mp(C, int(bound) - 1) > eps
                assert columns_at_most_one(C)
        else:  # n / (1 - a) (log n + log 1/eps) with the exact a, never above the bound
            a = alphas[name]
            assert a < 1 and bound >= MP.ceil(n / (1 - a) * (MP.log(n) + MP.log(1 / MP.mpf(eps))))
    if cert.best != "none":
        assert cert.best in cert.rigorous


# ------------------------------------------------------------------------------ toy models
def _table_model(kind: str, n: int, q: int, scale: float, rng: np.random.Generator):
    """A toy model of ``kind``: 'joint' (compatible by construction), 'ising' (Gibbs),
    'asym' (asymmetric Ising), 'free' (independent scores per conditional)."""
    if kind == "ising":
        J = rng.standard_normal((n, n)) * scale
        J = (J + J.T) / 2
        np.fill_diagonal(J, 0.0)
        graph = nx.complete_graph(n)
        for u, v in graph.edges:
            graph.edges[u, v]["J"] = float(J[u, v])
        return IsingModel(graph, coupling="J", field=rng.standard_normal(n) * scale), True
    if kind == "asym":
        J = rng.standard_normal((n, n)) * scale
        np.fill_diagonal(J, 0.0)
        return AsymmetricIsingModel(J, field=0.0), False
    if kind == "joint":
        return RandomJointModel(n, q, rng, scale=scale, name="joint"), True
    weights = q ** np.arange(n - 1, -1, -1)
    table = rng.standard_normal((q**n, n, q)) * scale

    def free(x, i):
        return table[x @ weights, i]  # x[:, i] is masked to 0 by the toy base class

    return FunctionModel(n, q, free, name="free"), False


def _mp_conditionals(model, n, q, tau):
    """Every state (mixed radix) and ``p[i][x][a]`` in mpmath, from the float64 scores."""
    states = np.array([[(x // q ** (n - 1 - k)) % q for k in range(n)] for x in range(q**n)])
    inv_tau = 1 / _mpf(tau)
    p = []
    for i in range(n):
        scores = model.scores(states, np.full(q**n, i))
        rows = []
        for x in range(q**n):
            s = [_mpf(v) * inv_tau for v in scores[x]]
            top = max(s)
            w = [MP.exp(v - top) for v in s]
            z = MP.fsum(w)
            rows.append([v / z for v in w])
        p.append(rows)
    return states, p


def _mp_chain(model, n, q, tau):
    """Kernel ``P`` (mpmath) of the chain rebuilt from the float64 scores."""
    states, p = _mp_conditionals(model, n, q, tau)
    weights = q ** np.arange(n - 1, -1, -1)
    S = q**n
    P = [[MP.mpf(0)] * S for _ in range(S)]
    for i in range(n):
        for x in range(S):
            for a in range(q):
                y = states[x].copy()
                y[i] = a
                P[x][int(y @ weights)] += p[i][x][a] / n
    return states, P


def _mp_log_gth(P):
    """``log pi`` by GTH in mpmath (subtraction-free, so exact to the working precision)."""
    S = len(P)
    A = [row[:] for row in P]
    for k in range(S - 1, 0, -1):
        s = MP.fsum(A[k][:k])
        for i in range(k):
            A[i][k] /= s
        for i in range(k):
            for j in range(k):
                A[i][j] += A[i][k] * A[k][j]
    x = [MP.mpf(1)] + [MP.mpf(0)] * (S - 1)
    for k in range(1, S):
        x[k] = MP.fsum(x[j] * A[j][k] for j in range(k))
    total = MP.fsum(x)
    return [MP.log(v / total) for v in x]


@budget("chain")
@given(seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(["joint", "ising", "asym", "free"]),
       n=st.integers(2, 3), q=st.integers(2, 3), scale=magnitudes, tau=taus)
def test_exact_chain_at_the_extremes(seed, kind, n, q, scale, tau):
    COUNTS["chain"] += 1
    if kind in ("ising", "asym"):
        q = 2
    rng = np.random.default_rng(seed)
    model, compatible = _table_model(kind, n, q, scale, rng)
    chain = ExactChain(model, tau)
    P, error = typed(chain.transition_matrix)
    if error is not None:
        return  # e.g. a conditional underflows to 0: NonPositiveConditionalError
    # Float64 is exact up to the rounding of scores / tau: log-probabilities carry an absolute
    # error of about u max|s| / tau, which bounds every comparison below.
    slack = 64 * (q**n) * n * U * (1 + 4 * scale / tau)
    log_pi, error = typed(chain.log_stationary)
    if error is not None:
        return
    assert np.isfinite(log_pi).all()
    states, P_mp = _mp_chain(model, n, q, tau)
    if slack < 1e-3:
        COUNTS["chain: checked against mpmath GTH"] += 1
        exact = np.array([float(v) for v in _mp_log_gth(P_mp)])
        np.testing.assert_allclose(log_pi, exact, rtol=1e-9, atol=slack * 10)
        mask = rng.random(q**n) < 0.5
        if mask.any() and not mask.all():
            phi, error = typed(chain.log_conductance, mask)
            assert error is None, error
            log_w = [MP.mpf(v) for v in exact]
            flow = MP.fsum(MP.exp(log_w[x]) * P_mp[x][y] for x in np.flatnonzero(mask)
                           for y in np.flatnonzero(~mask))
            mass = MP.fsum(MP.exp(log_w[x]) for x in np.flatnonzero(mask))
            assert phi == pytest.approx(float(MP.log(flow / mass)), abs=slack * 100 + 1e-9)
        if compatible and slack < 1e-10:
            assert chain.is_reversible()  # Theorem 3
    calls = [chain.influence_matrix, chain.oscillation_matrix, chain.bottleneck,
             lambda: chain.mixing_time(0.25), chain.one_step_hamming_all_pairs_adjacent]
    if q**n <= 8:  # an unresolved gap costs mpmath eigensolves: keep them to tiny chains
        calls += [chain.spectral_gap, chain.relaxation_time]
    for call in calls:
        typed(call)
    C, err_c = typed(chain.influence_matrix)
    D, err_d = typed(chain.oscillation_matrix)
    if err_c is None and err_d is None:  # the sharper Lemma 6, c_ij <= tanh(Delta_ij / 4 tau)
        assert (C <= theory.tanh_bound(D, tau) + 1e-12 + slack).all()
    # Theorem 8 on one-state basins: the margins' escape bound holds for every perfect trap
    marg, error = typed(margins, model, states, tau)
    if error is None:
        for k in np.flatnonzero(marg.perfect):
            COUNTS["chain: trap escape bounds checked"] += 1
            escape_exact = 1 - P_mp[k][k]
            bound = marg.trap_escape_bound[k]
            assert bound > 0 and MP.mpf(bound) >= escape_exact * (1 - 1e-9), (k, bound)
            assert math.isfinite(marg.trap_tmix_lower_bound[k])


# ------------------------------------------------------------------------------ estimators
@budget("estimators")
@given(seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(["joint", "ising", "asym", "free"]),
       scale=magnitudes, tau=taus, exhaustive=st.booleans())
def test_estimators_at_the_extremes(seed, kind, scale, tau, exhaustive):
    COUNTS["estimators"] += 1
    rng = np.random.default_rng(seed)
    n, q = 3, 2
    model, _ = _table_model(kind, n, q, scale, rng)
    xs = rng.integers(q, size=(4, n))
    inf, error = typed(influence, model, tau, xs, exhaustive=exhaustive, seed=seed)
    chain = ExactChain(model, tau)
    exact_c, err_c = typed(chain.influence_matrix)
    if error is None and err_c is None:
        slack = 1e-12 + 64 * U * (1 + scale / tau)
        assert (inf.C <= exact_c + slack).all()  # sampled influences are lower bounds
        cert = inf.contraction
        COUNTS["estimators: influence checked"] += 1
        if exhaustive and cert.best != "none" and slack < 1e-9:
            t_mix, err = typed(chain.mixing_time, cert.eps)
            if err is None:
                COUNTS["estimators: t_mix vs certificate"] += 1
                assert t_mix <= cert.best_bound  # corrected Theorem 5 is an upper bound
    esc, error = typed(escape_probability, model, xs[:1], lambda s: (s == xs[0]).all(axis=1),
                       tau)
    if error is None:
        assert esc.log_per_state[0] > -math.inf  # positive conditionals: never "escape <= 0"
        exact, err = typed(chain.escape_probabilities, (chain.states() == xs[0]).all(axis=1))
        if err is None and exact[0] > 1e-300:
            assert math.exp(esc.log_per_state[0]) == pytest.approx(exact[0], rel=1e-6)
    for call in (
        lambda: drift(model, xs, 1, tau),
        lambda: glauber_chains(model, tau, xs, n_steps=3, seed=seed),
        lambda: coupling_time(model, tau, xs[:2], xs[2:], budget=3, seed=seed),
        lambda: margins(model, xs, tau),
    ):
        typed(call)


@budget("rectangle")
@given(seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(["joint", "ising", "asym"]),
       n=st.integers(2, 4), scale=magnitudes, tau=taus,
       mode=st.sampled_from(["topk", "uniform"]))
def test_rectangle_test_never_flags_a_compatible_model(seed, kind, n, scale, tau, mode):
    COUNTS["rectangle"] += 1
    rng = np.random.default_rng(seed)
    q = 2 if kind != "joint" else 3
    model, compatible = _table_model(kind, n, q, scale, rng)
    res, error = typed(rectangle_test, model, rng.integers(q, size=(6, n)), tau, 40,
                       replacements=mode, k=2, seed=seed)
    if error is not None:
        return
    COUNTS["rectangle: checked"] += 1
    if compatible:
        assert res.n_above_bound == 0, (res.max_abs_delta, res.max_error_bound)
    else:  # a flagged rectangle has delta != 0 in exact arithmetic: 4 |J_ij - J_ji| / tau
        for i, j, flagged in zip(res.rectangles.site_i, res.rectangles.site_j,
                                 res.rectangles.above_bound):
            if flagged:
                assert model.J[i, j] != model.J[j, i]


class TorchJoint:
    """A joint law ``exp(-E)`` whose conditionals are returned as torch scores in ``dtype``."""

    def __init__(self, n, q, scale, dtype, rng):
        self.n, self.q, self.vocab = n, q, tuple(range(q))
        self.name = f"torch-joint-{dtype}"
        self.energy = rng.standard_normal(q**n) * scale
        self.weights = q ** np.arange(n - 1, -1, -1)
        self.dtype = getattr(torch, dtype)

    def scores(self, states, sites):
        x = (states.cpu().numpy() if torch.is_tensor(states) else np.array(states)).astype(np.int64)
        i = (sites.cpu().numpy() if torch.is_tensor(sites) else np.asarray(sites)).astype(np.int64)
        out = np.empty((len(x), self.q))
        for a in range(self.q):
            y = x.copy()
            y[np.arange(len(x)), i] = a
            out[:, a] = -self.energy[y @ self.weights]
        return torch.as_tensor(out).to(self.dtype)


@budget("torch")
@given(seed=st.integers(0, 2**32 - 1), dtype=st.sampled_from(["float32", "bfloat16"]),
       scale=st.floats(-3.0, 6.0).map(lambda e: 10.0**e), tau=taus)
def test_low_precision_torch_models(seed, dtype, scale, tau):
    COUNTS["torch"] += 1
    rng = np.random.default_rng(seed)
    model = TorchJoint(3, 3, scale, dtype, rng)
    xs = rng.integers(3, size=(5, 3))
    res, error = typed(rectangle_test, model, xs, tau, 30, k=2, seed=seed)
    if error is None:
        COUNTS["torch: rectangles checked"] += 1
        assert res.precision == dtype
        assert res.n_above_bound == 0, (res.max_abs_delta, res.max_error_bound)
    for call in (
        lambda: influence(model, tau, xs, seed=seed),
        lambda: margins(model, xs, tau),
        lambda: glauber_chains(model, tau, xs, n_steps=3, seed=seed),
        lambda: coupling_time(model, tau, xs[:2], xs[2:4], budget=3, seed=seed),
    ):
        typed(call)



# ------------------------------------------------------------------- upper bounds on influence
def _tie(chain: ExactChain, t: int, eps: float) -> bool:
    """Whether ``d(t) = eps`` to float64's resolution of a TV distance
    (``RESOLUTION_ULPS * S * 2^-52``): the exact ``t_mix`` is exact up to rounding at such a
    tie (:func:`glauber.exact.mixing.mixing_time`), so it may then read ``t + 1``."""
    floor = mixing.RESOLUTION_ULPS * chain.num_states * 2.0**-52
    return abs(chain.distance(t) - eps) <= floor


def test_a_tie_at_the_bound_is_rounding_not_a_false_certificate():
    """Found by the large battery (2026-12-05): a Potts path with couplings 1e-213, two sites in
    a context, at tau = 0.01. Its float scores ignore the other site, so C = 0 and the tabulated
    bound certifies t_mix <= 3 (n (1 - 1/n)^t = 2/8 <= 1/4); the float chain reads t_mix = 4,
    its d(3) being 1/4 + 1 ulp. In exact arithmetic the two sites are independent, and after 3
    steps both were resampled except with probability 1/8 each (only one site drawn three
    times): d(3) < 1/4 < d(2), so t_mix = 3 and the certificate holds. ``_tie`` tells the two
    apart."""
    from glauber.toy_models.family import ModelSpec

    field = (-0.28763307636990687, 0.2309276382962957, -2.0849056406455044e-182,
             -0.029427119600086815, 2.220446049250313e-16, -0.28763307636990687,
             0.4864932351842106)
    base = ModelSpec("potts", n=4, q=7, edges=((0, 1), (1, 2), (2, 3)), couplings=(1e-213,) * 3,
                     field=(field,) * 4)
    model = ModelSpec("restricted", n=2, q=7, base=base, context=(2, 0, 0, 2),
                      sites=(3, 0)).build()
    tau, q = 0.01, 7
    chain = ExactChain(model, tau)
    ub = influence_upper_bound(chain.tabulated(), tau, tabulate=True)
    assert ub.certified and ub.tmix_bound == 3 and chain.mixing_time(0.25) == 4
    scores = chain.scores()  # [n, S, q]
    assert (scores == scores[:, :1, :]).all()  # each site's scores ignore the state
    w = [[MP.exp(MP.mpf(float(v)) / tau) for v in scores[i, 0]] for i in range(2)]
    p = [[v / MP.fsum(row) for v in row] for row in w]

    def d(t: int):  # worst start of the product chain, exactly
        only = MP.mpf(2) ** -t  # P(one given site drawn at every step)
        return max(MP.fsum(abs(only * (p[0][y0] * (y1 == x1) + (y0 == x0) * p[1][y1])
                               - 2 * only * p[0][y0] * p[1][y1]) for y0 in range(q)
                           for y1 in range(q)) / 2
                   for x0 in range(q) for x1 in range(q))

    assert d(3) < MP.mpf(1) / 4 < d(2)
    assert _tie(chain, 3, 0.25)


def _upper_exact_searched(model, tau, name):
    """upper >= exact >= searched, entrywise: the upper bounds of the bracket (closed forms,
    tabulation, the LayerNorm head's weights) against exact enumeration (ExactChain), and a
    search's realised values below the exact ones."""
    chain = ExactChain(model, tau)
    C, error = typed(chain.influence_matrix)
    if error is not None:  # e.g. a conditional underflows at this tau: no exact oracle
        return
    D = chain.oscillation_matrix()
    tol = softmax_tv_rounding(float(np.abs(chain.scores()).max()), tau, model.q)
    checked = 0
    # the tabulated bound is exact for the chain of ITS table: a masked LM's float32 scores
    # move with the batch (~1e-6), so it is checked on the table the exact chain uses; the
    # closed forms and the head's weight bound hold for every batch, on the model itself
    for tabulate, subject in ((True, chain.tabulated()), (False, model)):
        ub, error = typed(influence_upper_bound, subject, tau, tabulate=tabulate)
        if error is None:
            assert ub.is_upper_bound
            assert (ub.C >= C - tol).all(), (model.spec, tau, tabulate)
            assert (ub.Delta >= D).all(), (model.spec, tabulate)
            checked += 1
            if ub.certified and tabulate:
                t_mix, err = typed(chain.mixing_time, 0.25)
                if err is None:
                    assert t_mix <= ub.tmix_bound or _tie(chain, int(ub.tmix_bound), 0.25)
                    COUNTS[f"{name}: t_mix vs proved bound"] += 1
    assert checked, model.spec  # the tabulation always applies to these small models
    budget = min(40, table_queries(model.n, model.q))  # at most a tabulation's queries
    found, error = typed(search_influence, model, tau, budget=budget, seed=0)
    if error is None:
        assert (found.C <= C + found.tolerance).all(), model.spec
    COUNTS[f"{name}: upper >= exact >= searched"] += 1


@budget("estimators", ci=3)
@given(model=masked_lms(), tau=st.floats(-2.0, 2.0).map(lambda e: 10.0**e))
def test_upper_bounds_on_random_transformers(model, tau):
    COUNTS["transformers"] += 1
    _upper_exact_searched(model, tau, "transformers")


@budget("estimators", ci=10)
@given(model=models(max_states=128), tau=taus)
def test_upper_bounds_on_random_toys(model, tau):
    COUNTS["toys"] += 1
    _upper_exact_searched(model, tau, "toys")


# ------------------------------------------------------------------------- certify, end to end
def _copy_cycle(n: int, J: float):
    """Site ``i`` scores ``J`` for the token of site ``i - 1`` (``q = 2``): ``C`` is the cycle
    with ``c = tanh(J / (2 tau))``, so ``rho(C) = c`` tends to 1 as ``tau -> 0``."""

    def score(x, i):
        out = np.zeros((len(x), 2))
        out[np.arange(len(x)), x[:, (i - 1) % n]] = J
        return out

    return FunctionModel(n, 2, score, name="copy-cycle")


def _rho(model, tau):
    C, error = typed(lambda: ExactChain(model, tau).influence_matrix())
    return None if error is not None else float(max(abs(np.linalg.eigvals(C))))


def _near_critical_tau(model, scale, target):
    """A ``tau`` where the exact chain's ``rho(C)`` crosses ``target`` (bisection in log tau,
    rho being continuous, large at small tau and 0 at large tau); None if it does not cross."""
    lo, hi = math.log(scale) - math.log(100.0), math.log(scale) + 12  # no underflow at lo
    r_lo, r_hi = _rho(model, math.exp(lo)), _rho(model, math.exp(hi))
    if r_lo is None or r_hi is None or not r_lo > target > r_hi:
        return None
    for _ in range(80):
        mid = (lo + hi) / 2
        r = _rho(model, math.exp(mid))
        if r is None:
            return None
        lo, hi = (mid, hi) if r > target else (lo, mid)
    return math.exp(hi)


def _mp_influence(p, states, n, q):
    """Definition 2's ``C`` of the mpmath conditionals: the largest TV over pairs that differ
    at one site."""
    weights = q ** np.arange(n - 1, -1, -1)
    C = [[MP.mpf(0)] * n for _ in range(n)]
    for x, state in enumerate(states):
        for j in range(n):
            for b in range(state[j] + 1, q):
                y = state.copy()
                y[j] = b
                k = int(y @ weights)
                for i in range(n):
                    if i != j:
                        tv = MP.fsum(abs(u - v) for u, v in zip(p[i][x], p[i][k])) / 2
                        C[i][j] = max(C[i][j], tv)
    return C


def _mp_power_sum(C, t):
    """``1^T M^t 1`` with ``M = (1 - 1/n) I + C / n`` in mpmath (corrected Theorem 5)."""
    n = len(C)
    M = MP.matrix(n, n)
    for i in range(n):
        for j in range(n):
            M[i, j] = (1 - MP.mpf(1) / n) if i == j else C[i][j] / n
    P = M**int(t)
    return MP.fsum(P[i, j] for i in range(n) for j in range(n))


def _check_claims(cert, model, tau, compatible):
    """Every claim certify() marks rigorous, against the chain rebuilt in mpmath."""
    n, q = cert.n, cert.q
    rigorous = {c.key: c for c in cert.claims if c.rigorous}
    if compatible:
        assert "prop4" not in rigorous  # no rectangle of a joint law refutes compatibility
    if not ({"thm5-corrected", "thm5-oscillation", "cor7", "thm8-trap", "drift-band"}
            & rigorous.keys()):
        return
    states, p = _mp_conditionals(model, n, q, tau)
    C = _mp_influence(p, states, n, q)
    COUNTS["certify: claims checked against mpmath"] += 1
    for key in ("thm5-corrected", "thm5-oscillation"):
        claim = rigorous.get(key)
        if claim is None:
            continue
        if claim.hypothesis_held:  # t_mix(eps) <= t: the certificate's inequality for exact C
            assert _mp_power_sum(C, claim.bound) <= cert.eps, (key, claim.bound)
        else:  # no certificate: rho(exact C) >= rho_lower >= 1
            assert max(abs(v) for v in MP.eig(MP.matrix(C))[0]) >= 1
    claim = rigorous.get("cor7")
    if claim is not None and claim.hypothesis_held:
        assert MP.mpf(claim.bound) >= max(MP.fsum(row) for row in C)
    claim = rigorous.get("thm8-trap")
    if claim is not None:
        k = claim.details["state"]
        x = int(np.array(cert.states[k]) @ (q ** np.arange(n - 1, -1, -1)))
        escape = MP.fsum(p[i][x][a] for i in range(n) for a in range(q)  # no cancellation
                         if a != states[x][i]) / n
        assert MP.mpf(float(cert.margins.trap_escape_bound[k])) >= escape
        if claim.details["tmix_applies"]:  # t_mix(1/4) >= 1/(4 Phi) if pi(S) <= 1/2 (LPW 7.4)
            assert MP.mpf(float(cert.margins.trap_tmix_lower_bound[k])) <= 1 / (4 * escape)
    claim = rigorous.get("drift-band")
    if claim is not None:  # the band's smallest drift, used by the bound, is the exact one's floor
        r = cert.drift_band
        token, (a, b) = r.token, r.band
        drifts = [MP.fsum(p[i][x][token] - (states[x][i] == token) for i in range(n)) / n
                  for x in range(q**n) if a < (states[x] == token).sum() < b]
        assert MP.mpf(r.band_min_drift) <= min(drifts)


@budget("certify")
@given(seed=st.integers(0, 2**32 - 1),
       kind=st.sampled_from(["joint", "ising", "asym", "free", "copy"]),
       n=st.integers(2, 3), q=st.integers(2, 3),
       scale=st.floats(-20.0, 12.0).map(lambda e: 10.0**e), tau=taus,
       near=st.sampled_from([None, None, -1, 1]), log_gap=st.floats(-12.0, -9.0))
def test_certify_at_the_extremes(seed, kind, n, q, scale, tau, near, log_gap):
    COUNTS["certify"] += 1
    from glauber.certify import certify

    rng = np.random.default_rng(seed)
    if kind in ("ising", "asym", "copy"):
        q = 2
    if kind == "copy":
        model, compatible = _copy_cycle(n, scale), n == 2
    else:
        model, compatible = _table_model(kind, n, q, scale, rng)
    if near is not None:  # rho(C) within 10^log_gap <= 1e-9 of 1, below or above
        found = _near_critical_tau(model, scale, 1 + near * 10.0**log_gap)
        if found is None and near < 0:
            model, compatible = _copy_cycle(n, scale), n == 2
            found = _near_critical_tau(model, scale, 1 - 10.0**log_gap)
        if found is not None:
            tau = found
            COUNTS["certify: within 1e-9 of rho = 1"] += 1
    cert, error = typed(certify, model, tau, seed=seed, n_rectangles=6, n_pairs=1, budget=5,
                        horizon=100)
    if error is not None:
        return
    _check_claims(cert, model, tau, compatible)
