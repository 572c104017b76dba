"""Slow brute-force references for the estimator tests (no glauber.estimators code).

Everything here enumerates the state space ``{0..q-1}^n`` (mixed radix, site 0 most significant)
with plain loops and uses only ``model.scores`` and numpy. Keep ``q**n`` small (<= ~500).
"""

from __future__ import annotations

import numpy as np

from glauber.toy_models import FunctionModel

from ..support import states


def index(x: np.ndarray, q: int) -> int:
    """Mixed-radix index of one state."""
    out = 0
    for v in x:
        out = out * q + int(v)
    return out


def conditional(model, x: np.ndarray, i: int, tau: float) -> np.ndarray:
    """``p_tau(. | x_{-i})`` by a direct softmax of the model's scores."""
    s = np.asarray(model.scores(np.asarray(x)[None, :], np.array([i])), dtype=np.float64)[0] / tau
    w = np.exp(s - s.max())
    return w / w.sum()


def raw_scores(model, x: np.ndarray, i: int) -> np.ndarray:
    return np.asarray(model.scores(np.asarray(x)[None, :], np.array([i])), dtype=np.float64)[0]


def transition_matrix(model, tau: float) -> np.ndarray:
    """Dense Glauber kernel ``P(x, y) = (1/n) sum_i 1{x_{-i} = y_{-i}} p(y_i | x_{-i})``."""
    n, q = model.n, model.q
    xs = states(n, q)
    P = np.zeros((len(xs), len(xs)))
    for s, x in enumerate(xs):
        for i in range(n):
            p = conditional(model, x, i, tau)
            for a in range(q):
                y = x.copy()
                y[i] = a
                P[s, index(y, q)] += p[a] / n
    return P


def stationary(P: np.ndarray) -> np.ndarray:
    """Solve ``pi P = pi``, ``sum pi = 1`` by least squares on the stacked system."""
    m = P.shape[0]
    A = np.vstack([P.T - np.eye(m), np.ones((1, m))])
    rhs = np.zeros(m + 1)
    rhs[-1] = 1.0
    pi = np.linalg.lstsq(A, rhs, rcond=None)[0]
    return pi


def exact_influence(model, tau: float) -> tuple[np.ndarray, np.ndarray]:
    """Definition 2's ``C`` and Lemma 6's ``Delta``, looping over every pair differing at ``j``."""
    n, q = model.n, model.q
    xs = states(n, q)
    probs = np.array([[conditional(model, x, i, tau) for i in range(n)] for x in xs])
    scores = np.array([[raw_scores(model, x, i) for i in range(n)] for x in xs])
    C = np.zeros((n, n))
    D = np.zeros((n, n))
    for s, x in enumerate(xs):
        for j in range(n):
            for b in range(q):
                if b == x[j]:
                    continue
                y = x.copy()
                y[j] = b
                t = index(y, q)
                for i in range(n):
                    if i == j:
                        continue
                    tv = 0.5 * np.abs(probs[s, i] - probs[t, i]).sum()
                    d = scores[s, i] - scores[t, i]
                    C[i, j] = max(C[i, j], tv)
                    D[i, j] = max(D[i, j], d.max() - d.min())
    return C, D


def one_step_hamming(model, tau: float, x: np.ndarray, y: np.ndarray) -> float:
    """Exact ``E[d_H(X_1, Y_1)]`` under the same-site maximal coupling.

    Site ``i`` is chosen with probability 1/n; after it, sites other than ``i`` keep their
    disagreement and site ``i`` disagrees with probability ``TV(p_i(x), p_i(y))`` (a maximal
    coupling attains the TV distance: Levin–Peres–Wilmer 2nd ed., Proposition 4.7).
    """
    n = model.n
    dh = int((x != y).sum())
    total = 0.0
    for i in range(n):
        tv = 0.5 * np.abs(conditional(model, x, i, tau) - conditional(model, y, i, tau)).sum()
        total += dh - int(x[i] != y[i]) + tv
    return total / n


def escape_probabilities(P: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """``P(x, B^c)`` for every state, from the transition matrix."""
    return P[:, ~inside].sum(axis=1)


def count_drift(P: np.ndarray, xs: np.ndarray, token: int) -> np.ndarray:
    """``E[X_1 - X_0 | X_0 = x]`` of the count of ``token``, from the transition matrix."""
    counts = (xs == token).sum(axis=1)
    return P @ counts - counts


def asym_ising(J: np.ndarray, h: np.ndarray | None = None) -> FunctionModel:
    """Ising-type scores ``s_i(spin) = spin * (h_i + sum_k J[i, k] spin_k)``; tokens 0/1 = -1/+1."""
    J = np.asarray(J, dtype=np.float64)
    n = J.shape[0]
    h = np.zeros(n) if h is None else np.asarray(h, dtype=np.float64)

    def score(x: np.ndarray, i: int) -> np.ndarray:
        spins = 2.0 * x - 1.0
        f = h[i] + spins @ J[i] - spins[:, i] * J[i, i]
        return np.stack([-f, f], axis=1)

    return FunctionModel(n, 2, score, name="ref-asym-ising")


class TorchModel:
    """Wrap a numpy toy so that ``scores`` returns torch float64 tensors (CPU).

    Records the type of every ``states`` argument, so tests can check that a sampler keeps its
    states in torch between steps.
    """

    def __init__(self, toy) -> None:
        import torch

        self._torch = torch
        self.toy = toy
        self.n, self.q, self.vocab = toy.n, toy.q, toy.vocab
        self.calls: list[tuple[str, int]] = []

    def scores(self, states, sites):
        torch = self._torch
        kind = "torch" if isinstance(states, torch.Tensor) else "numpy"
        self.calls.append((kind, int(states.shape[0])))
        x = states.cpu().numpy() if isinstance(states, torch.Tensor) else np.asarray(states)
        s = sites.cpu().numpy() if isinstance(sites, torch.Tensor) else np.asarray(sites)
        return torch.as_tensor(self.toy.scores(x, s), dtype=torch.float64)


class CountingModel:
    """Wrap a model and count ``scores`` calls and rows."""

    def __init__(self, model) -> None:
        self.model = model
        self.n, self.q, self.vocab = model.n, model.q, model.vocab
        self.calls: list[int] = []

    def scores(self, states, sites):
        self.calls.append(int(states.shape[0]))
        return self.model.scores(states, sites)


def coupled_kernel(model, tau: float) -> np.ndarray:
    """Exact kernel of the same-site maximal coupling on pairs ``(x, y)`` (index ``x * m + y``).

    At a site ``i``: ``P(a = b = c) = min(p_c, q_c)`` and, for ``a != b``,
    ``P(a, b) = (p_a - m_a)(q_b - m_b) / TV`` (independent residual draws; Levin–Peres–Wilmer
    2nd ed., Proposition 4.7).
    """
    n, q = model.n, model.q
    xs = states(n, q)
    m = len(xs)
    K = np.zeros((m * m, m * m))
    for sx, x in enumerate(xs):
        for sy, y in enumerate(xs):
            for i in range(n):
                p, r = conditional(model, x, i, tau), conditional(model, y, i, tau)
                low = np.minimum(p, r)
                tv = 1.0 - low.sum()
                joint = np.diag(low)
                if tv > 1e-15:
                    joint = joint + np.outer(p - low, r - low) / tv
                for a in range(q):
                    for b in range(q):
                        if joint[a, b] == 0.0:
                            continue
                        x2, y2 = x.copy(), y.copy()
                        x2[i], y2[i] = a, b
                        K[sx * m + sy, index(x2, q) * m + index(y2, q)] += joint[a, b] / n
    return K


class NaNAfter:
    """A torch model on ``{0, 1}^3`` with uniform scores that turn NaN after ``k`` calls."""

    def __init__(self, k: int) -> None:
        self.n, self.q, self.vocab, self.k, self.calls = 3, 2, (0, 1), k, 0

    def scores(self, states, sites):
        import torch

        self.calls += 1
        out = torch.zeros((states.shape[0], 2), dtype=torch.float64)
        return out if self.calls <= self.k else out + float("nan")
