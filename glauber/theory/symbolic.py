"""Symbolic derivations (sympy) behind Lemma 6, Proposition 4 and Theorem 3.

Each function derives and RETURNS a sympy expression; the tests compare it with the closed form.

* Lemma 6's constant 1/4: for two-point laws with log-odds ``w`` and ``w + theta`` (Hilbert
  distance ``theta``) the TV distance is ``sigmoid(w + theta) - sigmoid(w)``; as ``theta -> 0``
  the ratio TV/theta tends to ``sigmoid'(w)``, whose supremum over ``w`` is 1/4 (at ``w = 0``).
* The sharper Lemma 6: for fixed ``theta`` the TV is largest at the symmetric law
  ``w = -theta/2``, where it equals ``tanh(theta / 4)`` exactly.
* Proposition 4 for the asymmetric Ising model: ``delta = 4 A B (J_ji - J_ij) / tau``.
* Theorem 3: Gibbs conditionals of ``pi ∝ exp(-E/tau)`` make the Glauber kernel reversible.
"""

from __future__ import annotations

import sympy as sp

from glauber.core.validation import check_positive_int, check_vocab_size
from glauber.errors import StateSpaceTooLargeError


def sigmoid(x: sp.Expr) -> sp.Expr:
    """The logistic function ``1 / (1 + exp(-x))`` (a two-point softmax), symbolically."""
    return 1 / (1 + sp.exp(-x))


def two_point_tv(w: sp.Expr, theta: sp.Expr) -> sp.Expr:
    """TV distance between two-point laws with log-odds ``w + theta`` and ``w`` (``theta >= 0``).

    Their Hilbert projective distance is ``theta``.
    """
    return sigmoid(w + theta) - sigmoid(w)


def lemma6_slope() -> tuple[sp.Expr, sp.Symbol]:
    """``lim_{theta -> 0} two_point_tv(w, theta) / theta`` as an expression in ``w``.

    Returns
    -------
    (sympy.Expr, sympy.Symbol)
        The limit (it equals ``sigmoid'(w)``) and the symbol ``w``.
    """
    w, theta = sp.symbols("w theta", real=True)
    return sp.limit(two_point_tv(w, theta) / theta, theta, 0), w


def lemma6_constant() -> sp.Expr:
    """Lemma 6's constant, derived: ``sup_w lim_{theta -> 0} TV / theta`` over two-point laws.

    The supremum of the slope from :func:`lemma6_slope` is the largest of its values at its
    critical points and its limits as ``w -> +-inf``. The result is ``1/4``: Lemma 6's
    ``c_ij <= Delta_ij / (4 tau)`` has the best constant for small oscillations.

    Returns
    -------
    sympy.Expr
        ``Rational(1, 4)``.
    """
    slope, w = lemma6_slope()
    candidates = [slope.subs(w, c) for c in sp.solve(sp.diff(slope, w), w)]
    candidates += [sp.limit(slope, w, sp.oo), sp.limit(slope, w, -sp.oo)]
    return sp.simplify(sp.Max(*candidates))


def two_point_tv_critical_points() -> tuple[list[sp.Expr], sp.Symbol]:
    """Critical points in ``w`` of ``two_point_tv(w, theta)`` for fixed ``theta``, solved.

    Returns
    -------
    (list of sympy.Expr, sympy.Symbol)
        The critical points (``[-theta/2]``: the symmetric law, a maximum since the TV tends to
        0 as ``w -> +-inf``) and the symbol ``theta``.
    """
    w, theta = sp.symbols("w theta", real=True)
    return sp.solve(sp.diff(two_point_tv(w, theta), w), w), theta


def symmetric_two_point_tv() -> tuple[sp.Expr, sp.Symbol]:
    """TV of the symmetric two-point pair at Hilbert distance ``theta``, simplified.

    Returns
    -------
    (sympy.Expr, sympy.Symbol)
        ``two_point_tv(-theta/2, theta)`` simplified (sympy gives ``tanh(theta/4)``), and
        ``theta``.
    """
    theta = sp.symbols("theta", nonnegative=True)
    return sp.simplify(two_point_tv(-theta / 2, theta)), theta


def _ising_log_conditional(spin: sp.Expr, field: sp.Expr, tau: sp.Expr) -> sp.Expr:
    """``log p(spin | context)`` for ``p(s) ∝ exp(s * field / tau)``, ``s in {-1, +1}``."""
    normaliser = sp.exp(field / tau) + sp.exp(-field / tau)
    return spin * field / tau - sp.log(normaliser)


def asymmetric_ising_rectangle_delta_symbolic() -> tuple[sp.Expr, dict[str, sp.Symbol]]:
    """Proposition 4's ``delta`` for the asymmetric Ising model, from symbolic conditionals.

    Site ``i``'s field is ``g_i + J_ij x_j`` and site ``j``'s is ``g_j + J_ji x_i`` (``g`` collects
    the external field and all other spins). The rectangle flips ``A = x_i`` and ``B = x_j``.

    Returns
    -------
    (sympy.Expr, dict)
        ``delta`` expanded (it is ``4 A B (J_ji - J_ij) / tau``), and the symbols by name:
        ``A, B, J_ij, J_ji, g_i, g_j, tau``.
    """
    A, B, J_ij, J_ji, g_i, g_j = sp.symbols("A B J_ij J_ji g_i g_j", real=True)
    tau = sp.symbols("tau", positive=True)

    def edge_i(b: sp.Expr) -> sp.Expr:  # flip i from A to -A with x_j = b
        f = g_i + J_ij * b
        return _ising_log_conditional(-A, f, tau) - _ising_log_conditional(A, f, tau)

    def edge_j(a: sp.Expr) -> sp.Expr:  # flip j from B to -B with x_i = a
        f = g_j + J_ji * a
        return _ising_log_conditional(-B, f, tau) - _ising_log_conditional(B, f, tau)

    s_xy, s_yz = edge_i(B), edge_j(-A)
    s_xw, s_wz = edge_j(A), edge_i(-B)
    delta = sp.expand((s_xy + s_yz) - (s_xw + s_wz))
    names = {"A": A, "B": B, "J_ij": J_ij, "J_ji": J_ji, "g_i": g_i, "g_j": g_j, "tau": tau}
    return delta, names


def _digits(index: int, n: int, q: int) -> tuple[int, ...]:
    """Mixed-radix digits of a state index, site 0 most significant."""
    out = []
    for _ in range(n):
        index, r = divmod(index, q)
        out.append(r)
    return tuple(reversed(out))


def _index(digits: tuple[int, ...], q: int) -> int:
    value = 0
    for d in digits:
        value = value * q + d
    return value


def gibbs_glauber_kernel_symbolic(
    n: int = 2, q: int = 2, max_states: int = 27
) -> tuple[sp.Matrix, sp.Matrix, tuple[sp.Symbol, ...], sp.Symbol]:
    """Glauber kernel of a fully general Gibbs law ``pi(x) ∝ exp(-E_x / tau)``, symbolically.

    One free symbol ``E_k`` per state (indexed in mixed radix, site 0 most significant), so the
    law is arbitrary; the conditionals are its own: ``p(a | x_{-i}) ∝ exp(-E_{x(i->a)} / tau)``.

    Parameters
    ----------
    n : int, optional
        Number of sites, >= 1.
    q : int, optional
        Vocabulary size, >= 2.
    max_states : int, optional
        Refuse ``q**n`` above this (symbolic algebra grows fast).

    Returns
    -------
    (sympy.Matrix, sympy.Matrix, tuple of sympy.Symbol, sympy.Symbol)
        The kernel ``P`` (``q**n`` square), the column vector ``pi``, the energies and ``tau``.

    Raises
    ------
    InvalidParameterError
        If ``n`` is not a positive integer.
    VocabularyError
        If ``q < 2``.
    StateSpaceTooLargeError
        If ``q**n > max_states``.
    """
    n = check_positive_int(n, "n")
    q = check_vocab_size(q)
    size = q**n
    if size > max_states:
        raise StateSpaceTooLargeError(
            f"q**n = {size} states exceeds max_states = {max_states}; use a smaller system"
        )
    energies = sp.symbols(f"E_0:{size}", real=True)
    tau = sp.symbols("tau", positive=True)
    weight = [sp.exp(-e / tau) for e in energies]
    Z = sp.Add(*weight)
    pi = sp.Matrix([wt / Z for wt in weight])
    P = sp.zeros(size, size)
    for x in range(size):
        digits = _digits(x, n, q)
        for i in range(n):
            neighbours = [_index(digits[:i] + (a,) + digits[i + 1 :], q) for a in range(q)]
            local = sp.Add(*(weight[y] for y in neighbours))
            for y in neighbours:
                P[x, y] += weight[y] / (n * local)
    return P, pi, energies, tau


def _cancel_in_weights(
    expr: sp.Matrix, energies: tuple[sp.Symbol, ...], tau: sp.Symbol
) -> sp.Matrix:
    """Write ``exp(-E_k / tau)`` as positive symbols ``w_k`` and cancel (fast rational algebra)."""
    weights = sp.symbols(f"w_0:{len(energies)}", positive=True)
    replace = {sp.exp(-e / tau): w for e, w in zip(energies, weights)}
    return expr.subs(replace).applyfunc(sp.cancel)


def detailed_balance_residual(n: int = 2, q: int = 2) -> sp.Matrix:
    """Theorem 3, derived: ``pi(x) P(x, y) - pi(y) P(y, x)`` for a general Gibbs law, cancelled.

    Uses :func:`gibbs_glauber_kernel_symbolic`; every entry cancels to 0 identically in the
    energies and ``tau`` (reversibility of compatible conditionals).

    Parameters
    ----------
    n, q : int, optional
        Number of sites and vocabulary size (``q**n <= 27``; ``<= 9`` keeps it under a second).

    Returns
    -------
    sympy.Matrix
        The residual matrix (all zeros).
    """
    P, pi, energies, tau = gibbs_glauber_kernel_symbolic(n, q)
    flows = sp.diag(*pi) * P
    return _cancel_in_weights(flows - flows.T, energies, tau)


def stationarity_residual(n: int = 2, q: int = 2) -> sp.Matrix:
    """Theorem 3, derived: ``pi^T P - pi^T`` for a general Gibbs law and its kernel (all zeros).

    Parameters
    ----------
    n, q : int, optional
        Number of sites and vocabulary size (``q**n <= 27``; ``<= 9`` keeps it under a few
        seconds).

    Returns
    -------
    sympy.Matrix
        A ``1 x q**n`` row of zeros.
    """
    P, pi, energies, tau = gibbs_glauber_kernel_symbolic(n, q)
    return _cancel_in_weights(pi.T * P - pi.T, energies, tau)


__all__ = [
    "asymmetric_ising_rectangle_delta_symbolic",
    "detailed_balance_residual",
    "gibbs_glauber_kernel_symbolic",
    "lemma6_constant",
    "lemma6_slope",
    "sigmoid",
    "stationarity_residual",
    "symmetric_two_point_tv",
    "two_point_tv",
    "two_point_tv_critical_points",
]
