"""Checkers of our statements about the other kernels: the Metropolis-Hastings target, Theorem 3
for sweeps, epsilon mixtures, scan contraction (Dobrushin; Dyer, Goldberg and Jerrum) and
Theorem 8 for sweeps and Metropolis-Hastings, evaluated exactly on one toy instance
(docs/theory.md).
"""

from __future__ import annotations

import math

import numpy as np

from glauber.core.claims import Claim
from glauber.exact import influence as exact_influence
from glauber.exact.basins import NamedMask
from glauber.exact.chain import ExactChain
from glauber.theory import (
    contraction,
    escape,
    kernels,
    site_updates,
    systematic_scan,
)
from glauber.theory.kernels import reversibility_defect
from glauber.verification.instances import ChainInstance, Instance
from glauber.verification.statement_checks import (
    ATOL,
    EPS,
    identity,
    instance_cached,
    label_of,
    not_evaluated,
    tolerance,
    upper,
)
from glauber.verification.statements_stationarity import gibbs_law
from glauber.verification.statements_trapping import basin_checks

#: The kernel rows run on chains of at most this many states.
KERNEL_MAX_STATES = 256
#: The shuffled scan's matrix sums over ``n!`` orders: formed for at most this many sites here.
SHUFFLED_MAX_SITES = 6
#: The ``epsilon`` of the mixture rows.
KERNEL_EPSILON = 0.1
#: Tolerance of ``|mu_MH - exp(-E/tau)/Z|`` (largest entry; GTH is accurate far below it).
TARGET_TOL = 1e-12


def _kernel_chain(inst: ChainInstance, kernel: str, epsilon: float = 0.0) -> ExactChain:
    """The instance's chain under another kernel, sharing its score table (cached)."""

    def build() -> ExactChain:
        chain = ExactChain(inst.model, inst.tau, kernel=kernel, epsilon=epsilon)
        chain._cache["scores"] = inst.chain.scores()
        return chain

    return instance_cached(inst, f"kernel:{kernel}:{epsilon}", build)


def _kernel_instance(inst: Instance) -> bool:
    return isinstance(inst, ChainInstance) and inst.chain.num_states <= KERNEL_MAX_STATES


def _scans(inst: ChainInstance) -> tuple[str, ...]:
    return ("sweep", "shuffled") if inst.chain.n <= SHUFFLED_MAX_SITES else ("sweep",)


def check_mh_target(inst: Instance) -> list[Claim]:
    """The Metropolis-Hastings chains' law is ``exp(-E/tau)/Z`` (PLL and logits energies; random
    scan, reversible; sweep), incompatible models included."""
    if not _kernel_instance(inst):
        return []
    errors, defects = {}, {}
    for energy in ("pll", "logits"):
        for scan in ("", ":sweep"):
            chain = _kernel_chain(inst, f"mh:{energy}{scan}")
            errors[f"mh:{energy}{scan}"] = float(np.abs(chain.stationary() - chain.target()).max())
        random_scan = _kernel_chain(inst, f"mh:{energy}")
        defects[energy] = float(reversibility_defect(random_scan.transition_matrix(),
                                                     random_scan.target()))
    error = max(errors.values())
    reversible = max(defects.values()) <= 1e-9
    glauber_tv = {e: 0.5 * float(np.abs(inst.chain.stationary()
                                        - _kernel_chain(inst, f"mh:{e}").target()).sum())
                  for e in ("pll", "logits")}
    return [identity(label_of(inst), True, error if reversible else math.inf, tol=TARGET_TOL,
                     largest_error=errors, reversibility_defect=defects,
                     tv_glauber_law_vs_target=glauber_tv)]


def check_scan_joint(inst: Instance) -> list[Claim]:
    """Every Gibbs site update preserves a compatible joint, so do the sweep and the shuffled
    scan: their law is the joint."""
    if not _kernel_instance(inst):
        return []
    gibbs = gibbs_law(inst)
    if gibbs is None:
        return [not_evaluated(label_of(inst))]
    tv = {scan: 0.5 * float(np.abs(_kernel_chain(inst, scan).stationary() - gibbs).sum())
          for scan in _scans(inst)}
    residual = {scan: float(np.abs(_kernel_chain(inst, scan).step_law(gibbs) - gibbs).sum())
                for scan in _scans(inst)}
    return [identity(label_of(inst), True, max(*tv.values(), *residual.values()), tol=1e-9,
                     tv_exact_mu_vs_gibbs=tv, stationary_residual_l1=residual)]


def check_eps_irreducible(inst: Instance) -> list[Claim]:
    """An epsilon mixture (random scan and sweep) is irreducible and aperiodic, and its influences
    are ``(1 - epsilon) C`` exactly."""
    if not _kernel_instance(inst):
        return []
    eps = KERNEL_EPSILON
    flags = {}
    for scan in ("random", "sweep"):
        P = _kernel_chain(inst, scan, eps).transition_matrix()
        flags[scan] = bool(kernels.is_irreducible(P) and kernels.is_aperiodic(P))
    C = inst.chain.influence_matrix()
    mixed = exact_influence.influence_matrix(_kernel_chain(inst, "random", eps).site_rows())
    error = float(np.abs(mixed - site_updates.mixture_influence(C, eps)).max())
    return [identity(label_of(inst), True, error if all(flags.values()) else math.inf,
                     irreducible_and_aperiodic=flags, epsilon=eps)]


def _scan_tmix(inst: ChainInstance, scan: str) -> int:
    return instance_cached(inst, f"tmix:{scan}",
                           lambda: int(_kernel_chain(inst, scan).mixing_time(EPS)))


def check_scan_dobrushin(inst: Instance) -> list[Claim]:
    """Scan contraction: ``d(t) <= 1^T E^t 1`` (``E`` the pass's influence matrix), ``t_mix``
    within its certificate, and ``d(t) <= n alpha_row^t`` when ``alpha_row < 1``."""
    if not _kernel_instance(inst):
        return []
    n = inst.chain.n
    C = inst.chain.influence_matrix()
    a = contraction.alpha_row(C)
    out = []
    for scan in _scans(inst):
        E = (systematic_scan.scan_influence_matrix(C) if scan == "sweep"
             else systematic_scan.shuffled_influence_matrix(C))
        certificate = systematic_scan.scan_certificate(E, EPS)
        t_mix = _scan_tmix(inst, scan)
        times = sorted({1, max(1, t_mix - 1), t_mix, 2 * t_mix})
        curve = dict(zip(times, _kernel_chain(inst, scan).distance_curve(times)))
        ok = all(d <= systematic_scan.scan_distance_bound(E, t) + ATOL for t, d in curve.items())
        dobrushin = None
        if a < 1.0:
            dobrushin = systematic_scan.dobrushin_scan_tmix_bound(a, n, EPS)
            ok = ok and t_mix <= dobrushin and all(
                d <= systematic_scan.dobrushin_scan_distance_bound(a, n, t) + ATOL
                for t, d in curve.items())
        label = f"{label_of(inst)} [{scan}]"
        if certificate is None:
            out.append(not_evaluated(label, alpha_row=a, tmix=t_mix))
            continue
        out.append(upper(label, True, certificate, t_mix, ok=ok, alpha_row=a,
                         dobrushin_bound=dobrushin))
    return out


def check_kernel_thm8(inst: Instance) -> list[Claim]:
    """Theorem 8 for other kernels: per pass ``P(x, B^c) <= k (|V|-1) e^{-Delta*/tau}`` (sweep);
    Metropolis-Hastings (random scan, PLL energy): the sharper escape bound, the conductance bound
    and, when ``mu_MH(B) <= 1/2``, the ``t_mix`` lower bound."""
    if not _kernel_instance(inst):
        return []
    q, n, tau = inst.chain.q, inst.chain.n, inst.tau
    sweep, mh = _kernel_chain(inst, "sweep"), _kernel_chain(inst, "mh:pll")

    def one(basin: NamedMask, delta_star: float, k: int, label: str) -> Claim:
        exact = float(sweep.escape_probabilities(basin.mask).max())
        bound = systematic_scan.scan_escape_bound(k, q, delta_star, tau)
        mh_escape = float(mh.escape_probabilities(basin.mask).max())
        mh_sharper = escape.sharper_escape_bound(n, k, q, delta_star, tau)
        mh_phi = float(mh.conductance(basin.mask))
        phi_bound = escape.theorem8_escape_bound(q, delta_star, tau)
        ok = mh_escape <= mh_sharper + tolerance(mh_sharper, mh_escape) \
            and mh_phi <= phi_bound + tolerance(phi_bound, mh_phi)
        mass = float(mh.stationary()[basin.mask].sum())
        details = {"delta_star": delta_star, "k": k, "mh_escape": mh_escape,
                   "mh_sharper_bound": mh_sharper, "mh_conductance": mh_phi, "mu_mh_B": mass}
        if mass <= 0.5 * (1.0 + 1e-12):
            t_bound = escape.theorem8_tmix_lower_bound(q, delta_star, tau)
            t_mh = instance_cached(inst, "tmix:mh:pll", lambda: int(mh.mixing_time(EPS)))
            ok = ok and t_mh >= t_bound - tolerance(t_bound, t_mh)
            details.update(mh_tmix=t_mh, mh_tmix_lower_bound=t_bound)
        return upper(label, True, bound, exact, ok=ok, **details)

    return basin_checks(inst, one)
