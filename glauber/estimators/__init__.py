"""Estimators that run unchanged on any ConditionalModel: numpy toy models and torch MLMs.

Every conditional goes through :func:`glauber.core.log_conditionals` (the one place ``tau``
enters); every estimator batches its (state, site) queries into as few :meth:`scores` calls as
``batch_size`` allows, takes a seed (same seed, same result) and returns a frozen dataclass with
``to_dict()``.

- :func:`rectangle_test`, :func:`arnold_press_statistic`: incompatibility (Proposition 4);
- :func:`influence`: influence and oscillation matrices (Definition 2, Lemma 6) with the
  corrected Theorem 5 certificates; :func:`search_influence` searches for their suprema, every
  entry realised by a :class:`Witness` (:func:`recheck_witnesses` re-evaluates them), and
  :func:`rho_lower_bound` / :func:`tau_no_cert` say where no certificate can exist;
  :func:`influence_upper_bound` bounds them from above over every context (closed forms,
  tabulation, or the weights of a LayerNorm head), with the certificates it proves;
- :func:`margins`, :func:`escape_probability`: margins, traps, Assumption 1 / Theorem 8;
- :func:`drift`: Section 5.4, as printed and corrected;
- :func:`glauber_chains`, :func:`coupling_time`, :func:`maximal_coupling_step`: the sampler and
  the coupling of Section 6.1, under any kernel of :mod:`glauber.core.kernel_spec` (sweeps,
  shuffled scans, epsilon mixtures, Metropolis-Hastings, annealing);
- :func:`pseudo_log_likelihood`: ``sum_k log p_tau(x_k | x_{-k})``, batched and sub-batched;
- :func:`convergence_diagnostics`: rank-normalised split R-hat, bulk and tail ESS of several
  chains (through ArviZ, the ``diagnostics`` extra);
- :func:`restrict` (from :mod:`glauber.core.restrict`): the chain on chosen sites of a
  full-length state, a model every estimator runs on.

``certify`` (the main job, built on all of these) lives one layer up, in :mod:`glauber.certify`
(also exported as ``glauber.certify``'s function from the top-level package).
"""

from glauber.core.restrict import RestrictedModel, restrict
from glauber.estimators.coupling import CouplingResult, coupling_time
from glauber.estimators.diagnostics import DiagnosticsResult, convergence_diagnostics
from glauber.estimators.drift import DriftResult, drift
from glauber.estimators.escape import Basin, EscapeResult, escape_probability
from glauber.estimators.influence import InfluenceResult, influence
from glauber.estimators.influence_bracket import (
    InfluenceBracket,
    WitnessCurve,
    influence_bracket,
)
from glauber.estimators.influence_search import (
    InfluenceSearchResult,
    search_influence,
    search_influence_sweep,
)
from glauber.estimators.influence_threshold import rho_lower_bound, tau_no_cert
from glauber.estimators.influence_upper import (
    InfluenceUpperBound,
    UpperBoundSource,
    influence_upper_bound,
)
from glauber.estimators.kernel_steps import AcceptanceResult
from glauber.estimators.lag_coupling import LagCouplingBound, lag_coupling_bound
from glauber.estimators.margins import MarginsResult, margins
from glauber.estimators.maximal_coupling import maximal_coupling_step
from glauber.estimators.pll import pseudo_log_likelihood
from glauber.estimators.rectangle import (
    ArnoldPressResult,
    Rectangles,
    RectangleTestResult,
    arnold_press_statistic,
    rectangle_test,
)
from glauber.estimators.sampler import ChainsResult, glauber_chains
from glauber.estimators.witnesses import RecheckReport, Witness, recheck_witnesses

__all__ = [
    "AcceptanceResult",
    "ArnoldPressResult",
    "Basin",
    "ChainsResult",
    "CouplingResult",
    "LagCouplingBound",
    "DiagnosticsResult",
    "DriftResult",
    "EscapeResult",
    "InfluenceBracket",
    "InfluenceResult",
    "InfluenceSearchResult",
    "InfluenceUpperBound",
    "UpperBoundSource",
    "MarginsResult",
    "RecheckReport",
    "RectangleTestResult",
    "Rectangles",
    "arnold_press_statistic",
    "convergence_diagnostics",
    "coupling_time",
    "lag_coupling_bound",
    "drift",
    "escape_probability",
    "glauber_chains",
    "influence",
    "influence_bracket",
    "influence_upper_bound",
    "margins",
    "maximal_coupling_step",
    "pseudo_log_likelihood",
    "recheck_witnesses",
    "rectangle_test",
    "restrict",
    "rho_lower_bound",
    "search_influence",
    "search_influence_sweep",
    "tau_no_cert",
    "Witness",
    "WitnessCurve",
    "RestrictedModel",
]
