"""The paper's statements as checkable functions (numpy/scipy/sympy only).

Each module holds one result of docs/theory.md: :mod:`~glauber.theory.kernels` (Proposition 1,
Corollary 2, Theorem 3), :mod:`~glauber.theory.rectangle` (Proposition 4),
:mod:`~glauber.theory.contraction` (Theorem 5, corrected), :mod:`~glauber.theory.influence_bounds`
(Lemma 6 and its sharper tanh form, Corollary 7; rigorous upper bounds on influence),
:mod:`~glauber.theory.layernorm_head` (a LayerNorm head's context-free score enclosure),
:mod:`~glauber.theory.escape` (Theorem 8 and the
bottleneck bound), :mod:`~glauber.theory.drift` (Section 5.4, corrected),
:mod:`~glauber.theory.path_coupling`, the Ising oracles in
:mod:`~glauber.theory.ising_closed_forms`, distances in :mod:`~glauber.theory.distances` and
sympy derivations in :mod:`~glauber.theory.symbolic` (import it explicitly; it is not loaded here).
"""

from glauber.theory.contraction import (
    CERTIFICATE_NAMES,
    ContractionCertificate,
    MatrixPowerResult,
    adjacent_pair_hamming_bound,
    alpha_col,
    alpha_row,
    alpha_spectral,
    certify_contraction,
    contraction_matrix,
    coupling_distance_bound,
    matrix_power_certificate,
    matrix_power_search,
    spectral_radius,
    theorem5_contraction_factor,
    theorem5_tmix_bound,
)
from glauber.theory.distances import hilbert_distance, tv_distance
from glauber.theory.drift import (
    BandDriftBound,
    band_drift_escape_bound,
    boundary_drift_as_printed,
)
from glauber.theory.escape import (
    BasinMargins,
    basin_margins,
    bottleneck_distance_lower_bound,
    bottleneck_tmix_lower_bound,
    log_bottleneck_tmix_lower_bound,
    log_theorem8_escape_bound,
    log_theorem8_tmix_lower_bound,
    sharper_escape_bound,
    theorem8_escape_bound,
    theorem8_tmix_lower_bound,
)
from glauber.theory.floating import RoundingFormats
from glauber.theory.influence_bounds import (
    OscillationBound,
    corollary7_alpha_bound,
    corollary7_holds,
    influence_matrix_bound,
    lemma6_bound,
    pairwise_oscillation,
    tanh_bound,
)
from glauber.theory.ising_closed_forms import (
    curie_weiss_fast_bound,
    curie_weiss_tmix_bound,
    dobrushin_ising_bound,
    dobrushin_ising_tmix_bound,
    ising_cycle_relaxation_time,
    ising_neighbour_influence,
)
from glauber.theory.kernels import (
    REVERSIBILITY_RTOL,
    is_aperiodic,
    is_irreducible,
    is_markov_kernel,
    is_reversible,
    is_stationary,
    reversibility_defect,
)
from glauber.theory.path_coupling import (
    path_coupling_distance_bound,
    path_coupling_tmix_bound,
    rate_from_contraction_factor,
)
from glauber.theory.rectangle import (
    asymmetric_ising_rectangle_delta,
    delta_at_tau,
    log_ratio_rounding_bound,
    rectangle_delta,
    rectangle_delta_from_edges,
    rectangle_rounding_bound,
)

__all__ = [
    "BandDriftBound",
    "BasinMargins",
    "CERTIFICATE_NAMES",
    "ContractionCertificate",
    "MatrixPowerResult",
    "OscillationBound",
    "RoundingFormats",
    "adjacent_pair_hamming_bound",
    "alpha_col",
    "alpha_row",
    "alpha_spectral",
    "asymmetric_ising_rectangle_delta",
    "REVERSIBILITY_RTOL",
    "band_drift_escape_bound",
    "basin_margins",
    "bottleneck_distance_lower_bound",
    "bottleneck_tmix_lower_bound",
    "boundary_drift_as_printed",
    "certify_contraction",
    "contraction_matrix",
    "corollary7_alpha_bound",
    "corollary7_holds",
    "coupling_distance_bound",
    "curie_weiss_fast_bound",
    "curie_weiss_tmix_bound",
    "delta_at_tau",
    "dobrushin_ising_bound",
    "dobrushin_ising_tmix_bound",
    "hilbert_distance",
    "influence_matrix_bound",
    "is_aperiodic",
    "is_irreducible",
    "is_markov_kernel",
    "is_reversible",
    "is_stationary",
    "ising_cycle_relaxation_time",
    "ising_neighbour_influence",
    "lemma6_bound",
    "log_bottleneck_tmix_lower_bound",
    "log_ratio_rounding_bound",
    "log_theorem8_escape_bound",
    "log_theorem8_tmix_lower_bound",
    "matrix_power_certificate",
    "matrix_power_search",
    "pairwise_oscillation",
    "path_coupling_distance_bound",
    "path_coupling_tmix_bound",
    "rate_from_contraction_factor",
    "rectangle_delta",
    "rectangle_delta_from_edges",
    "rectangle_rounding_bound",
    "reversibility_defect",
    "sharper_escape_bound",
    "spectral_radius",
    "tanh_bound",
    "theorem5_contraction_factor",
    "theorem5_tmix_bound",
    "theorem8_escape_bound",
    "theorem8_tmix_lower_bound",
    "tv_distance",
]
