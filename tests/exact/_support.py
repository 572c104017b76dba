"""Models and exact references shared by the toy-model tests."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from glauber.toy_models.base import FunctionModel


def ising_model(J: np.ndarray, h: np.ndarray) -> FunctionModel:
    """Ising via FunctionModel: s_i(a) = spin(a) (h_i + sum_k J_ik spin(x_k)), zero-diagonal J."""

    def scores(x: np.ndarray, i: int) -> np.ndarray:
        f = h[i] + (2.0 * x - 1.0) @ J[i]
        return np.stack([-f, f], axis=1)

    return FunctionModel(len(h), 2, scores, name="ising")


def exact_stationary(P: list[list[Fraction]]) -> list[Fraction]:
    """Solve pi P = pi, sum pi = 1 over the rationals (Gauss–Jordan, one row replaced by sums).

    Power iteration is not exact and the Markov chain tree theorem is overkill: the rational
    balance equations are solved directly.
    """
    S = len(P)
    A = [[P[c][r] - (1 if r == c else 0) for c in range(S)] + [Fraction(0)] for r in range(S)]
    A[-1] = [Fraction(1)] * (S + 1)
    for col in range(S):
        piv = next(r for r in range(col, S) if A[r][col] != 0)
        A[col], A[piv] = A[piv], A[col]
        A[col] = [v / A[col][col] for v in A[col]]
        for r in range(S):
            if r != col and A[r][col] != 0:
                f = A[r][col]
                A[r] = [a - f * b for a, b in zip(A[r], A[col])]
    return [A[r][S] for r in range(S)]
