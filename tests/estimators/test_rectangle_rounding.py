"""The rectangle test's per-rectangle rounding bound (Proposition 4 under floating point).

Oracles: the exact ``delta`` of the scores as returned, in rational arithmetic (every float is a
dyadic rational, so ``sum +-(s_new - s_old) / tau`` is exact in :class:`fractions.Fraction`);
the closed form ``|delta| = 4 |J_ij - J_ji| / tau`` of the asymmetric Ising model (docs/theory.md,
Proposition 4); compatibility by construction (Gibbs models, a table joint, a causal LM).
"""

from __future__ import annotations

from fractions import Fraction

import networkx as nx
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.errors import InvalidParameterError, NonFiniteScoresError
from glauber.estimators import rectangle_test
from glauber.theory.floating import RoundingFormats
from glauber.theory.rectangle import (
    asymmetric_ising_rectangle_delta,
    rectangle_rounding_bound,
)
from glauber.toy_models import AsymmetricIsingModel, IsingModel, RandomJointModel

TORCH_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


class TableModel:
    """Scores read from a random table indexed by (state, site), returned in a chosen dtype.

    The scores are arbitrary (incompatible in general): the test compares the computed delta
    with the exact delta of these very scores, so only the library's own arithmetic is judged.
    """

    def __init__(self, n: int, q: int, table: np.ndarray, dtype: str) -> None:
        self.n, self.q, self.vocab = n, q, tuple(range(q))
        self.name = f"table-{dtype}"
        self.weights = q ** np.arange(n - 1, -1, -1)
        self.dtype_name = dtype
        self.table = table  # [q**n, n, q] float64
        if dtype in TORCH_DTYPES:
            self.torch_table = torch.as_tensor(table).to(TORCH_DTYPES[dtype])

    def rows(self, states: np.ndarray, sites: np.ndarray) -> np.ndarray:
        masked = np.array(states, dtype=np.int64)
        masked[np.arange(len(sites)), sites] = 0  # a conditional must not see its own site
        return masked @ self.weights

    def scores(self, states, sites):
        states = np.asarray(states.cpu() if torch.is_tensor(states) else states)
        sites = np.asarray(sites.cpu() if torch.is_tensor(sites) else sites)
        idx = self.rows(states, sites)
        if self.dtype_name == "float64":
            return self.table[idx, sites]
        return self.torch_table[torch.as_tensor(idx), torch.as_tensor(sites)]

    def exact_row(self, state: np.ndarray, site: int) -> list[Fraction]:
        row = self.scores(state[None, :], np.array([site]))[0]
        values = row.double().numpy() if torch.is_tensor(row) else row
        return [Fraction(float(v)) for v in values]


def exact_delta(model: TableModel, x: np.ndarray, i, j, a, ap, b, bp, tau: float) -> Fraction:
    """``delta*`` of the returned scores: ``sum_e +-(s_e(new) - s_e(old)) / tau`` exactly."""
    y, w = x.copy(), x.copy()
    y[i], w[j] = ap, bp
    edge = lambda state, site, old, new: (  # noqa: E731
        model.exact_row(state, site)[new] - model.exact_row(state, site)[old]
    )
    total = edge(x, i, a, ap) + edge(y, j, b, bp) - edge(x, j, b, bp) - edge(w, i, a, ap)
    return total / Fraction(tau)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    dtype=st.sampled_from(["float64", "float32", "bfloat16", "float16"]),
    log_scale=st.floats(-3.0, 12.0),
    log_offset=st.floats(-3.0, 12.0),
    log_tau=st.floats(-8.0, 8.0),
    mode=st.sampled_from(["topk", "uniform"]),
)
def test_bound_dominates_the_exact_error_of_delta(seed, dtype, log_scale, log_offset, log_tau,
                                                  mode):
    n, q = 3, 4
    rng = np.random.default_rng(seed)
    table = rng.standard_normal((q**n, n, q)) * 10.0**log_scale + 10.0**log_offset
    if dtype == "float16":
        table = np.clip(table, -6e4, 6e4)
    tau = 10.0**log_tau
    model = TableModel(n, q, table, dtype)
    xs = rng.integers(q, size=(5, n))
    try:
        res = rectangle_test(model, xs, tau, n_rectangles=12, replacements=mode, k=2, seed=seed,
                             score_error_ulps=0.0)
    except NonFiniteScoresError:
        # scores / tau overflowed the format: the typed error is the correct answer; check it
        # really overflows (largest |score| / tau beyond the format's largest finite number).
        biggest = np.abs(table).max() / tau
        finite_max = torch.finfo(TORCH_DTYPES[dtype]).max if dtype in TORCH_DTYPES else 1.8e308
        assert biggest > finite_max / 2
        return
    rect = res.rectangles
    for r in range(len(rect.delta)):
        x = xs[rect.state_index[r]]
        exact = exact_delta(model, x, rect.site_i[r], rect.site_j[r], rect.a[r],
                            rect.a_prime[r], rect.b[r], rect.b_prime[r], tau)
        error = abs(Fraction(float(rect.delta[r])) - exact)
        assert error <= Fraction(float(rect.error_bound[r])), (r, float(error), rect.error_bound[r])


def test_compatible_ising_is_not_flagged_at_tiny_tau():
    # Issue reproducer: the cycle Ising model with a field is Gibbs (compatible, Theorem 3); at
    # tau = 1e-7 its delta is 7.5e-9 of pure rounding, above the old absolute 1e-9.
    model = IsingModel(nx.cycle_graph(4), 1.0, 0.37)
    xs = np.random.default_rng(0).integers(2, size=(20, 4))
    for tau in (1e-7, 1e-4, 1.0, 1e4):
        res = rectangle_test(model, xs, tau, n_rectangles=300, seed=1)
        assert res.compatible_within_bound and res.n_above_bound == 0
        assert res.precision == "float64"


def test_compatible_joint_with_huge_energies_is_not_flagged():
    # A joint law given by a table of energies of size 1e7: every conditional is read from the
    # same joint, so it is compatible; delta is rounding of scores of size 1e7.
    n, q = 4, 3
    rng = np.random.default_rng(0)
    joint = RandomJointModel(n, q, rng, scale=1e7)
    res = rectangle_test(joint, rng.integers(q, size=(30, n)), 1.0, 300, seed=0)
    assert res.max_abs_delta > 0  # rounding is really there
    assert res.n_above_bound == 0


@pytest.mark.parametrize("tau", [1.0, 1e-3, 1e-8])
def test_asymmetric_ising_is_flagged_with_the_closed_form_delta(tau):
    rng = np.random.default_rng(3)
    J = rng.standard_normal((5, 5))
    np.fill_diagonal(J, 0.0)
    model = AsymmetricIsingModel(J)
    res = rectangle_test(model, rng.integers(2, size=(30, 5)), tau, 200, replacements="uniform",
                         seed=0)
    rect = res.rectangles
    # Every rectangle's |delta| is 4 |J_ij - J_ji| / tau (q = 2: the replacements flip both spins)
    expected = np.abs([
        asymmetric_ising_rectangle_delta(J, int(i), int(j), tau)
        for i, j in zip(rect.site_i, rect.site_j)
    ])
    np.testing.assert_allclose(np.abs(rect.delta), expected, rtol=1e-6)
    assert (rect.above_bound == (expected > rect.error_bound)).all()
    assert res.n_above_bound == len(rect.delta)  # |J_ij - J_ji| is of order 1 everywhere


def test_bound_arguments_are_checked():
    ones = np.ones((4, 2))
    with pytest.raises(InvalidParameterError):
        rectangle_rounding_bound(ones, ones, np.ones((4, 3)), 1.0)
    with pytest.raises(InvalidParameterError):
        rectangle_rounding_bound(ones, ones, ones, 1.0, RoundingFormats(score_error_ulps=-1.0))
    with pytest.raises(InvalidParameterError):
        rectangle_rounding_bound(ones, ones, ones, 1.0, RoundingFormats(score_dtype="int8"))


def test_rounding_formats_are_checked_and_canonical():
    f = RoundingFormats(torch.float32, np.float64, "torch.bfloat16", 8)
    assert (f.score_dtype, f.work_dtype, f.model_dtype) == ("float32", "float64", "bfloat16")
    assert (f.u_s, f.u_w, f.u_m) == (2.0**-24, 2.0**-53, 2.0**-8)
    assert RoundingFormats("float32").u_m == 2.0**-24  # the model's precision: the scores'
    assert RoundingFormats("bfloat16", model_dtype="float64").u_m == 2.0**-8  # the coarser
    with pytest.raises(InvalidParameterError, match="unknown floating-point format"):
        RoundingFormats(model_dtype="int8")
    with pytest.raises(InvalidParameterError, match="score_error_ulps"):
        RoundingFormats(score_error_ulps=float("nan"))


def test_bound_grows_with_the_unit_roundoff_and_one_over_tau():
    lp = -np.abs(np.random.default_rng(0).standard_normal((4, 3)))
    scale = np.full((4, 3), 5.0)
    b64 = rectangle_rounding_bound(lp, lp - 1, scale, 1.0, RoundingFormats(score_error_ulps=8))
    b32 = rectangle_rounding_bound(lp, lp - 1, scale, 1.0,
                                   RoundingFormats("float32", "float32", score_error_ulps=8))
    b16 = rectangle_rounding_bound(lp, lp - 1, scale, 1.0,
                                   RoundingFormats("float32", "float32", "bfloat16", 8))
    assert (b64 < b32).all() and (b32 < b16).all()
    # u_bf16 / u_f32 = 2**16: the model term dominates and scales with it
    assert (b16 / b32 > 2**15).all()
    # At tau, log-probabilities are those at 1 divided by tau: the whole bound scales by 1/tau
    small = rectangle_rounding_bound(lp / 1e-6, (lp - 1) / 1e-6, scale, 1e-6,
                                     RoundingFormats(score_error_ulps=8))
    np.testing.assert_allclose(small, b64 / 1e-6, rtol=1e-12)


@pytest.mark.mlm
def test_autoregressive_control_is_never_flagged_down_to_tau_1e_6():
    autoregressive = pytest.importorskip("glauber.mlm_backend.autoregressive")
    control = autoregressive.tiny_gpt2_control(20, 8, 0)
    xs = np.random.default_rng(0).integers(20, size=(50, 8))
    for tau in (1.0, 0.003, 1e-6):  # 0.003: 7 of 300 were flagged with the old 1e-4
        res = rectangle_test(control, xs, tau, 300, seed=2)
        assert res.precision == "float32"
        assert res.n_above_bound == 0, (tau, res.max_abs_delta, res.max_error_bound)
