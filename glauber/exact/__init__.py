"""Exact Glauber chains over ``V^n`` and everything computed from them.

:class:`ExactChain` (``chain``) is a thin caching class over free functions: the stationary law
(``stationary``: GTH, log-space GTH, sparse solves), worst-start mixing (``mixing``: repeated
squaring and bisection; ``stepping``: sparse point-mass stepping; ``factored``: the
``n q^(n-1)``-class factor of a window), the spectrum (``spectral``), basins, bottlenecks and
hitting times (``basins``), the exact influence and oscillation matrices (``influence``), margins
(``margins``), every rectangle (``rectangles``) and the one-step same-site coupling
(``coupling``). :class:`TabulatedModel` answers from a score table (``score_table``: one per
model, context and sites, on disk); :class:`CountChain` is the exact lumped chain of a token count
(``count_chain``). Above 4096 states the sparse path takes over (``sparse``: the CSR kernel and
its symmetrisation, the joint stationary law; ``krylov``: Lanczos and Arnoldi gaps with their
labels, :class:`SpectralEstimate`; ``brackets``: rigorous ``t_mix`` brackets,
:class:`MixingBracket`), and ``symmetry`` lumps a chain on the orbits of its automorphisms
(:class:`OrbitChain`). Above ``2**20`` states, up to ``20^5`` (5 amino acids), the paper's
kernel is matrix-free from its compact table (``window``, :class:`WindowChain`). The
algorithms take any transition matrix; the models live in
:mod:`glauber.toy_models`, real models in :mod:`glauber.mlm_backend`.
"""

from glauber.exact.brackets import MixingBracket
from glauber.exact.chain import ExactChain
from glauber.exact.count_chain import CountChain
from glauber.exact.krylov import SpectralEstimate
from glauber.exact.mixing import distance_curve, mixing_time
from glauber.exact.scan_chain import ScanChain
from glauber.exact.score_table import TabulatedModel, score_table, table_queries
from glauber.exact.stationary import gth_stationary, stationary_distribution
from glauber.exact.symmetry import OrbitChain
from glauber.exact.window_chain import WindowChain

__all__ = [
    "ScanChain",
    "CountChain",
    "ExactChain",
    "MixingBracket",
    "OrbitChain",
    "SpectralEstimate",
    "TabulatedModel",
    "WindowChain",
    "distance_curve",
    "gth_stationary",
    "mixing_time",
    "score_table",
    "stationary_distribution",
    "table_queries",
]
