"""Exact chains of every kernel (sweep, shuffled, epsilon mixtures, Metropolis-Hastings, annealing).

Oracles: the kernels rebuilt state by state from their definitions (docs/theory.md, "Other
kernels": a pass is the product of its site kernels, a shuffled pass the average over all
``n!`` orders enumerated with ``itertools.permutations``, a Metropolis-Hastings move
``r(a) min(1, pi(y) r(x_i) / (pi(x) r(a)))``), the closed-form target ``exp(-E/tau)/Z`` with
``E`` summed site by site from the model's own scores, the joint law of compatible models
(Theorem 3's ``pi`` is preserved by every site update, hence by every scan), and the generic
dense algorithms of :mod:`glauber.exact.mixing` and :mod:`glauber.exact.spectral` applied to
the reference matrix (they must agree with every shortcut the chain takes).

``GLAUBER_KERNEL_EXAMPLES`` sets the examples of the Metropolis-Hastings property (default 25;
the issue's 200+ run: ``GLAUBER_KERNEL_EXAMPLES=300``, reported in docs/theory.md).
"""

from __future__ import annotations

import itertools
import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glauber.core.enumeration import neighbour_indices
from glauber.core.kernel_spec import check_kernel, parse_schedule
from glauber.errors import (
    EstimateOnlyError,
    InvalidKernelError,
    InvalidParameterError,
    InvalidProbabilityError,
    InvalidTemperatureError,
    NonPositiveConditionalError,
)
from glauber.exact import mixing, spectral
from glauber.exact.chain import ExactChain
from glauber.exact.kernels import annealed_law
from glauber.exact.scan_chain import ScanChain
from glauber.exact.stepping import SiteRowsKernel
from glauber.testing import models, temperatures
from glauber.theory.kernels import is_aperiodic, is_irreducible
from glauber.toy_models import FunctionModel, IsingModel
from glauber.toy_models.random_joint import RandomJointModel

from ..support import states as all_states
from ..support import table_model

KERNEL_EXAMPLES = int(os.environ.get("GLAUBER_KERNEL_EXAMPLES", "25"))


# ------------------------------------------------------------------------- reference kernels
def _log_softmax(s: np.ndarray) -> np.ndarray:
    s = np.asarray(s, dtype=np.float64)
    return s - s.max() - np.log(np.exp(s - s.max()).sum())


def reference_energy(model, x: tuple, kind: str) -> float:
    """E(x) = -sum_k log p_1(x_k | x_{-k}) (pll) or -sum_k s_k(x_k; x_{-k}) (logits)."""
    total = 0.0
    for k in range(model.n):
        s = model.scores(np.array([x]), np.array([k]))[0]
        total += (_log_softmax(s) if kind == "pll" else np.asarray(s, dtype=np.float64))[x[k]]
    return -total


def reference_site_kernel(model, tau: float, i: int, kernel: str, eps: float) -> np.ndarray:
    """K_i state by state, straight from the definitions."""
    spec = check_kernel(kernel, eps)
    n, q = model.n, model.q
    space = [tuple(x) for x in all_states(n, q)]
    index = {x: k for k, x in enumerate(space)}
    if spec.metropolis:
        E = {x: reference_energy(model, x, spec.energy) for x in space}
    K = np.zeros((len(space), len(space)))
    for x in space:
        s = model.scores(np.array([x]), np.array([i]))[0] / tau
        p = np.exp(_log_softmax(s))
        r = (1 - eps) * p + eps / q
        for a in range(q):
            y = x[:i] + (a,) + x[i + 1:]
            if not spec.metropolis or a == x[i]:
                K[index[x], index[y]] += r[a]
                continue
            accept = min(1.0, math.exp((E[x] - E[y]) / tau) * r[x[i]] / r[a])
            K[index[x], index[y]] += r[a] * accept
            K[index[x], index[x]] += r[a] * (1.0 - accept)
    return K


def reference_kernel(model, tau: float, kernel: str, eps: float = 0.0) -> np.ndarray:
    spec = check_kernel(kernel, eps)
    sites = [reference_site_kernel(model, tau, i, kernel, eps) for i in range(model.n)]
    if spec.scan == "random":
        return sum(sites) / model.n
    if spec.scan == "sweep":
        return np.linalg.multi_dot(sites) if model.n > 1 else sites[0]
    orders = list(itertools.permutations(range(model.n)))
    total = np.zeros_like(sites[0])
    for order in orders:
        P = np.eye(len(total))
        for i in order:
            P = P @ sites[i]
        total += P
    return total / len(orders)


def reference_target(model, tau: float, kind: str) -> np.ndarray:
    E = np.array([reference_energy(model, tuple(x), kind) for x in all_states(model.n, model.q)])
    w = -E / tau
    return np.exp(w - np.logaddexp.reduce(w))


KERNELS = ["random", "sweep", "shuffled", "mh:pll", "mh:logits", "mh:pll:sweep",
           "mh:logits:shuffled"]


# ------------------------------------------------------------------------------ the matrices
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("eps", [0.0, 0.3])
@pytest.mark.parametrize("shape", [(3, 2), (2, 3)])
def test_transition_matrix_is_the_definition(kernel: str, eps: float, shape) -> None:
    n, q = shape
    model = table_model(n, q, seed=11, scale=1.5)
    chain = ExactChain(model, 0.8, kernel=kernel, epsilon=eps)
    P = chain.transition_matrix().toarray()
    np.testing.assert_allclose(P, reference_kernel(model, 0.8, kernel, eps), rtol=0, atol=1e-13)
    assert isinstance(chain, ScanChain) == (check_kernel(kernel).scan != "random")


def test_epsilon_one_is_the_uniform_redraw() -> None:
    """epsilon = 1: every site update is uniform, whatever the model: a sweep is i.i.d. uniform."""
    chain = ExactChain(table_model(3, 2, seed=3, scale=4.0), 0.3, kernel="sweep", epsilon=1.0)
    np.testing.assert_allclose(chain.transition_matrix().toarray(), np.full((8, 8), 1 / 8),
                               atol=1e-15)
    assert chain.mixing_time() == 1


# ------------------------------------------------------------------ what the theory asserts
@settings(max_examples=KERNEL_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(model=models(max_states=64, max_q=4), tau=temperatures(0.2, 5.0),
       kernel=st.sampled_from(["mh:pll", "mh:logits", "mh:pll:sweep", "mh:logits:shuffled"]),
       eps=st.sampled_from([0.0, 0.0, 0.25]))
def test_metropolis_stationary_law_is_the_target(model, tau, kernel, eps) -> None:
    """The MH chain's stationary law (GTH on its matrix) is exp(-E/tau)/Z to 1e-12, on
    incompatible models too; the random scan is reversible with respect to it."""
    chain = ExactChain(model, tau, kernel=kernel, epsilon=eps)
    target = reference_target(model, tau, chain.kernel.energy)
    assert np.abs(chain.stationary() - target).max() <= 1e-12
    np.testing.assert_allclose(chain.target(), target, rtol=1e-12, atol=1e-300)
    if chain.kernel.scan == "random":
        assert chain.is_reversible()


def test_metropolis_corrects_what_glauber_does_not() -> None:
    """On an incompatible model the plain chain's law is not the PLL target; MH's is."""
    model = table_model(3, 2, seed=5, scale=2.0)
    plain, mh = ExactChain(model, 1.0), ExactChain(model, 1.0, kernel="mh:pll")
    target = reference_target(model, 1.0, "pll")
    assert 0.5 * np.abs(plain.stationary() - target).sum() > 0.05
    assert np.abs(mh.stationary() - target).max() <= 1e-12


@pytest.mark.parametrize("kernel", ["sweep", "shuffled"])
@pytest.mark.parametrize("eps", [0.0, 0.2])
def test_scan_stationary_law_is_the_joint_of_a_compatible_model(kernel: str, eps: float) -> None:
    """Every Gibbs site update preserves a compatible joint (and the uniform redraw preserves it
    only when eps = 0): the sweep's and shuffled scan's law is exp(E/tau)/Z."""
    model = RandomJointModel(3, 3, rng=7, scale=1.5)
    tau = 0.7
    chain = ExactChain(model, tau, kernel=kernel, epsilon=eps)
    w = model.log_weight(all_states(3, 3)) / tau
    joint = np.exp(w - np.logaddexp.reduce(w))
    error = np.abs(chain.stationary() - joint).max()
    if eps == 0.0:
        assert error <= 1e-12
    else:
        assert error > 1e-4  # the uniform moves are not corrected: another law


def test_sweep_of_ising_has_the_gibbs_law() -> None:
    import networkx as nx

    model = IsingModel(nx.cycle_graph(5), coupling=0.8, field=0.3)
    chain = ExactChain(model, 1.0, kernel="sweep")
    s = 2.0 * all_states(5, 2) - 1.0
    w = 0.8 * (s * np.roll(s, 1, axis=1)).sum(1) + 0.3 * s.sum(1)
    joint = np.exp(w - np.logaddexp.reduce(w))
    assert np.abs(chain.stationary() - joint).max() <= 1e-12


def test_epsilon_chain_is_irreducible_where_the_plain_chain_is_not() -> None:
    """A copy model whose off-copy conditionals underflow float64 (score gap 800): the plain
    chain is reducible (its matrix from the underflowed conditionals has several closed
    classes) and ExactChain refuses it; any epsilon > 0 gives an irreducible, aperiodic chain
    with a unique law."""
    copy = FunctionModel(3, 2, lambda x, i: 800.0 * (x[:, [(i + 1) % 3]] == np.arange(2)))
    plain = ExactChain(copy, 1.0)
    with pytest.raises(NonPositiveConditionalError):
        plain.conditionals()
    p = np.exp(plain.log_conditionals())  # the underflowed conditionals
    rows = np.broadcast_to(np.arange(8)[None, :, None], p.shape)
    P = np.zeros((8, 8))
    np.add.at(P, (rows, neighbour_indices(3, 2)), p / 3)
    assert not is_irreducible(P)
    for kernel in ("random", "sweep", "shuffled"):
        chain = ExactChain(copy, 1.0, kernel=kernel, epsilon=0.05)
        Q = chain.transition_matrix()
        assert is_irreducible(Q) and is_aperiodic(Q)
        pi = chain.stationary()
        assert pi.min() > 0 and abs(pi.sum() - 1) < 1e-12


def test_annealed_law_is_the_product_of_the_kernels() -> None:
    """start P_{tau_1} ... P_{tau_t}, each P built afresh from the definition."""
    model = table_model(3, 2, seed=9, scale=1.0)
    schedule = parse_schedule("geometric:2:0.5:4")
    start = np.zeros(8)
    start[3] = 1.0
    for kernel in ("random", "sweep", "mh:pll"):
        chain = ExactChain(model, 1.0, kernel=kernel, epsilon=0.1)
        expected = start.copy()
        for tau in schedule.temperatures(1, 6):
            expected = expected @ reference_kernel(model, float(tau), kernel, 0.1)
        np.testing.assert_allclose(annealed_law(chain, schedule, start, 6), expected,
                                   rtol=0, atol=1e-14)
    # resuming at step 4 of the schedule continues the same temperatures
    chain = ExactChain(model, 1.0, kernel="sweep")
    first = annealed_law(chain, schedule, start, 3)
    np.testing.assert_allclose(annealed_law(chain, schedule, first, 3, first_step=4),
                               annealed_law(chain, schedule, start, 6), atol=1e-15)


# ------------------------------------------------- every shortcut agrees with the definition
@pytest.mark.parametrize("kernel,eps", [("sweep", 0.0), ("sweep", 0.2), ("shuffled", 0.0)])
def test_scan_factor_agrees_with_the_dense_algorithms(kernel: str, eps: float) -> None:
    """n = 2 < q = 5: the scan factors (q^(n-1) or n q^(n-1) classes); stationary law, d(t),
    t_mix and the absolute gap equal the generic algorithms on the reference matrix."""
    model = table_model(2, 5, seed=4, scale=2.5)
    tau = 0.4
    chain = ExactChain(model, tau, kernel=kernel, epsilon=eps)
    assert chain.factored
    P = reference_kernel(model, tau, kernel, eps)
    pi = mixing_pi(P)
    np.testing.assert_allclose(chain.stationary(), pi, rtol=1e-10, atol=1e-15)
    assert chain.mixing_time() == mixing.mixing_time(P, pi, method="squaring")
    ts = [0, 1, 2, 5, 9]
    np.testing.assert_allclose(chain.distance_curve(ts),
                               mixing.distance_curve(P, pi, ts, method="squaring"), atol=1e-12)
    np.testing.assert_allclose(chain.absolute_spectral_gap(),
                               spectral.absolute_spectral_gap(P, pi, reversible=False), rtol=1e-8)
    assert chain.mixing_time(method="stepping") == chain.mixing_time()


def mixing_pi(P: np.ndarray) -> np.ndarray:
    """Stationary law of a small dense P from its left eigenvector (an independent solver)."""
    w, v = np.linalg.eig(P.T)
    pi = np.real(v[:, np.argmin(np.abs(w - 1))])
    return pi / pi.sum()


@pytest.mark.parametrize("kernel", ["mh:pll", "mh:logits"])
def test_metropolis_never_takes_the_glauber_factor(kernel: str) -> None:
    """n = 2, q = 4 is factorable for the random scan (2n <= q), but a Metropolis row depends on
    x_i: t_mix must be the dense matrix's, by every method."""
    model = table_model(2, 4, seed=2, scale=2.0)
    chain = ExactChain(model, 0.5, kernel=kernel)
    P = reference_kernel(model, 0.5, kernel)
    pi = mixing_pi(P)
    exact = mixing.mixing_time(P, pi, method="squaring")
    assert chain.mixing_time() == exact
    assert chain.mixing_time(method="stepping") == exact
    with pytest.raises(InvalidKernelError):
        chain.one_step_hamming(0, 1)


def test_epsilon_random_scan_keeps_the_glauber_factor() -> None:
    """An epsilon mixture still ignores the site's own token: the factored t_mix is exact."""
    model = table_model(2, 4, seed=8, scale=3.0)
    chain = ExactChain(model, 0.3, kernel="random", epsilon=0.1)
    P = reference_kernel(model, 0.3, "random", 0.1)
    pi = mixing_pi(P)
    assert chain.factored
    assert chain.mixing_time(method="factored") == mixing.mixing_time(P, pi, method="squaring")


def test_site_rows_kernel_steps_like_the_sparse_matrix() -> None:
    chain = ExactChain(table_model(3, 4, seed=1, scale=2.0), 0.6, kernel="mh:logits",
                       epsilon=0.1)
    K = SiteRowsKernel(chain.site_rows())
    D = np.random.default_rng(0).random((64, 5))
    np.testing.assert_allclose(K.T @ D, chain.transition_matrix().T @ D, rtol=1e-13, atol=1e-15)


def test_scan_basin_quantities_from_the_pass() -> None:
    """Escape probabilities and conductance of one pass, against the reference matrix."""
    model = table_model(3, 2, seed=6, scale=2.0)
    mask = np.zeros(8, dtype=bool)
    mask[[0, 1, 3]] = True
    for kernel in ("sweep", "mh:pll:shuffled"):
        chain = ExactChain(model, 0.9, kernel=kernel)
        P = reference_kernel(model, 0.9, kernel)
        escape = P[mask][:, ~mask].sum(axis=1)
        np.testing.assert_allclose(chain.escape_probabilities(mask), escape, rtol=1e-12)
        pi = chain.stationary()
        phi = (pi[mask] * escape).sum() / pi[mask].sum()
        np.testing.assert_allclose(chain.conductance(mask), phi, rtol=1e-12)
        with pytest.raises(InvalidKernelError):
            chain.one_step_hamming(0, 1)


def test_at_keeps_the_kernel() -> None:
    chain = ExactChain(table_model(2, 3, seed=0), 1.0, kernel="mh:pll", epsilon=0.2)
    other = chain.at(2.0)
    assert other.kernel == chain.kernel and other.tau == 2.0
    sweep = ExactChain(table_model(2, 3, seed=0), 1.0, kernel="sweep").at(0.5)
    assert isinstance(sweep, ScanChain) and sweep.kernel.scan == "sweep"
    assert "sweep" in repr(sweep)


@pytest.mark.parametrize("kwargs,error", [
    ({"kernel": "gibbs"}, InvalidKernelError),
    ({"kernel": "mh:energy"}, InvalidKernelError),
    ({"kernel": "sweep", "epsilon": 1.5}, InvalidProbabilityError),
    ({"kernel": "random", "epsilon": -0.1}, InvalidProbabilityError),
    ({"kernel": "random", "epsilon": float("nan")}, InvalidProbabilityError),
])
def test_bad_kernels_are_typed_errors(kwargs, error) -> None:
    with pytest.raises(error):
        ExactChain(table_model(2, 2, seed=0), 1.0, **kwargs)


def test_bad_schedules_are_typed_errors() -> None:
    chain = ExactChain(table_model(2, 2, seed=0), 1.0)
    for bad in ("geometric:1:0:5", "2,-1", "linear:1:inf:3"):
        with pytest.raises(InvalidTemperatureError):
            annealed_law(chain, bad, np.full(4, 0.25), 2)
    with pytest.raises(InvalidKernelError):
        annealed_law(chain, "cosine:1:2:3", np.full(4, 0.25), 2)


def test_sweep_time_reversal_is_the_reverse_sweep() -> None:
    """For a compatible pi each K_i is self-adjoint in L^2(pi), so the time reversal
    D^-1 P^T D of the sweep 0..n-1 is the sweep n-1..0; the sweep itself is not reversible."""
    from glauber.exact.kernels import sweep_matrix

    model = RandomJointModel(3, 2, rng=3, scale=1.0)
    chain = ExactChain(model, 0.8, kernel="sweep")
    pi = chain.stationary()
    P = chain.transition_matrix().toarray()
    reverse = sweep_matrix(chain.site_rows(), order=[2, 1, 0]).toarray()
    np.testing.assert_allclose((P.T * pi[None, :]) / pi[:, None], reverse, atol=1e-13)
    assert not chain.is_reversible()


# --------------------------------------------------------------- the sparse path (> 4096 states)
def test_metropolis_chain_on_the_sparse_path_keeps_its_target_and_its_gap() -> None:
    # 17^3 = 4913 states: over the dense limit, so the law is a sparse solve and the gap a
    # Lanczos run on sqrt(P(x, y) P(y, x)) built from P (the fibre formula of the paper's kernel
    # does not hold for Metropolis-Hastings rows, which depend on x_i)
    from glauber.models import resolve_model

    model = resolve_model("random-table:n=3,q=17,seed=1,scale=1.0")
    chain = ExactChain(model, 1.0, kernel="mh:pll")
    assert chain.algebra == "sparse" and chain.is_reversible()
    assert 0.5 * np.abs(chain.stationary() - chain.target()).sum() < 1e-10
    gap = chain.spectral_gap()
    assert 0 < chain.absolute_spectral_gap() <= gap < 1
    # the same construction on a dense-size chain agrees with the dense eigenvalues
    small = ExactChain(resolve_model("random-table:n=3,q=9,seed=2,scale=1.0"), 1.0,
                       kernel="mh:logits")
    assert small.algebra == "dense"
    assert small.spectral_estimate("lanczos").gap == pytest.approx(small.spectral_gap(), rel=1e-8)


def test_non_reversible_kernel_on_the_sparse_path_has_no_lanczos_gap() -> None:
    from glauber.models import resolve_model

    chain = ExactChain(resolve_model("random-table:n=3,q=17,seed=1,scale=1.0"), 1.0,
                       kernel="random", epsilon=0.1)
    assert not chain.is_reversible() and not chain.is_monotone()
    with pytest.raises(EstimateOnlyError):
        chain.spectral_gap()


def test_metropolis_law_on_the_sparse_path_is_its_target_at_low_temperature() -> None:
    # At tau = 0.25 a sparse solve of this chain's law is only normwise accurate: its
    # detailed-balance defect was 4e-3, so the chain was declared not reversible and its gap
    # refused. A random scan of Metropolis-Hastings updates is reversible with respect to its
    # target by construction (docs/theory.md, row mh-target): the law is read from the closed
    # form, checked move by move, to relative precision on every entry.
    from glauber.models import resolve_model

    model = resolve_model("random-table:n=3,q=17,seed=1,scale=1.0")
    chain = ExactChain(model, 0.25, kernel="mh:pll")
    target = reference_target(model, 0.25, "pll")
    assert chain.stationary_solution().method == "joint" and chain.is_reversible()
    np.testing.assert_allclose(chain.stationary(), target, rtol=1e-9, atol=0)
    # the solve from P alone stays available, as the independent check of the closed form
    solved = chain.solved_stationary()
    assert solved.method != "joint" and 0.5 * np.abs(solved.pi - target).sum() < 1e-6
    assert 1e-9 < chain.spectral_gap() < 1e-6  # a slow chain: its Lanczos gap, not a refusal
    # an epsilon-mixed proposal keeps the target (the MH correction), a sweep has no closed form
    mixed = ExactChain(model, 0.25, kernel="mh:pll", epsilon=0.3)
    assert mixed.stationary_solution().method == "joint"
    assert ExactChain(model, 1.0, kernel="mh:pll:sweep").stationary_solution().method != "joint"


@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(model=models(max_states=64, max_q=4), tau=temperatures(0.2, 5.0),
       kernel=st.sampled_from(["mh:pll", "mh:logits"]))
def test_gershgorin_bounds_the_smallest_eigenvalue(model, tau, kernel) -> None:
    """``1 + lambda_min >= 2 min_x P(x, x)`` (Gershgorin on P, similar to its symmetrisation):
    the bound that spares the ARPACK run for the absolute gap of a Metropolis-Hastings chain."""
    chain = ExactChain(model, tau, kernel=kernel)
    lam = np.linalg.eigvalsh(chain._symmetrisation().toarray()).min()
    assert 1.0 + lam >= 2.0 * chain.transition_matrix().diagonal().min() - 1e-12


def test_absolute_gap_of_a_degenerate_metropolis_chain() -> None:
    # The Potts 3-cycle over 20 colours under mh:pll at tau = 2: lambda_min = 0 many times over
    # (the colours' symmetry), where ARPACK with a 20-vector basis did not converge in 80,000
    # restarts. Checked against the dense eigenvalues of the same chain over 9 colours, and
    # LOBPCG (another method) at 20.
    import scipy.sparse.linalg as spla

    from glauber.exact import krylov
    from glauber.models import resolve_model

    small = ExactChain(resolve_model("potts-cycle:n=3,q=9,J=1.0"), 2.0, kernel="mh:pll")
    A = small._symmetrisation()
    assert krylov.smallest_eigenvalue(A) == pytest.approx(
        np.linalg.eigvalsh(A.toarray()).min(), abs=1e-12)
    chain = ExactChain(resolve_model("potts-cycle:n=3,q=20,J=1.0"), 2.0, kernel="mh:pll")
    A = chain._symmetrisation()
    lam = krylov.smallest_eigenvalue(A)
    other = spla.lobpcg(A, np.random.default_rng(0).standard_normal((A.shape[0], 4)),
                        largest=False, tol=1e-9, maxiter=500)[0].min()
    assert lam == pytest.approx(other, abs=1e-8)
    assert chain.absolute_spectral_gap() == pytest.approx(
        min(chain.spectral_gap(), 1.0 + lam), rel=1e-12)


def test_every_other_scan_has_its_registered_chain_class():
    # ExactChain finds ScanChain through the registry the subclass fills (no import upward);
    # importing only the chain module still registers it (the package __init__ runs first)
    import subprocess
    import sys

    code = ("from glauber.exact.chain import ExactChain\n"
            "from glauber.toy_models.base import FunctionModel\n"
            "import numpy as np\n"
            "m = FunctionModel(2, 2, lambda x, i: np.zeros((len(x), 2)))\n"
            "print(sorted(ExactChain._SCAN_CLASSES),"
            " type(ExactChain(m, 1.0, kernel='sweep')).__name__,"
            " type(ExactChain(m, 1.0)).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["['shuffled',", "'sweep']", "ScanChain", "ExactChain"]


@pytest.mark.parametrize("kernel", ["sweep", "shuffled"])
def test_scan_chain_brackets_its_exact_mixing_time(kernel: str) -> None:
    """A scan chain answers the gap methods every other chain does, so its bracket (spectral where
    the pass is reversible: a shuffled pass of a symmetric Ising cycle is) holds the exact t_mix
    computed by squaring the pass's own matrix (LPW 2nd ed., Theorems 12.4 and 12.5)."""
    import networkx as nx

    chain = ExactChain(IsingModel(nx.cycle_graph(3)), 1.0, kernel=kernel)
    dense_gap = spectral.absolute_spectral_gap(chain.dense_transition_matrix(), None,
                                               reversible=False)
    assert chain.spectral_gap("dense") == pytest.approx(dense_gap, rel=1e-9)
    assert chain.absolute_spectral_gap("auto") == pytest.approx(dense_gap, rel=1e-9)
    exact = mixing.mixing_time(chain.dense_transition_matrix(), chain.stationary(), 0.25)
    bracket = chain.mixing_bracket(0.25)
    assert bracket.lower <= exact
    assert bracket.upper is None or exact <= bracket.upper
    if chain.is_reversible():
        assert bracket.upper is not None
    with pytest.raises(InvalidParameterError):
        chain.absolute_spectral_gap("qr")
