"""Ising, Potts, asymmetric Ising and planted-basin toy models.

Oracles: scores computed by hand from the definitions (arithmetic in comments); the Gibbs
conditional pi(x^a) / sum_b pi(x^b) obtained by enumerating log_weight over V^n (Theorem 3:
compatible models have the Gibbs conditionals); the closed form of the rectangle statistic for
asymmetric couplings (docs/theory.md, `prop4`, derived below).
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import log_softmax

from glauber.errors import (
    GlauberInputError,
    InvalidGraphError,
    InvalidParameterError,
    SequenceLengthError,
    VocabularyError,
)
from glauber.testing import coupling_matrices, couplings, models, temperatures
from glauber.toy_models import AsymmetricIsingModel, IsingModel, PlantedBasinModel, PottsModel

from ..support import states

SETTINGS = settings(max_examples=40, deadline=None)


def gibbs_log_conditionals(log_w: np.ndarray, n: int, q: int, site: int) -> np.ndarray:
    """log pi(x^{site -> a}) - log sum_b pi(x^{site -> b}) for every state x (rows) and a."""
    all_x = states(n, q)
    stride = q ** (n - 1 - site)
    base_index = np.arange(q**n) - all_x[:, site] * stride
    neighbours = base_index[:, None] + np.arange(q)[None, :] * stride  # [N, q] indices of x^a
    return log_softmax(log_w[neighbours], axis=1)


def model_log_conditionals(model, states: np.ndarray, site: int, tau: float) -> np.ndarray:
    scores = model.scores(states, np.full(len(states), site))
    return log_softmax(scores / tau, axis=1)


def assert_conditionals_are_gibbs(model, tau: float) -> None:
    """Every site's conditional at ``tau`` equals the one of the Gibbs law ``exp(log_weight/tau)``."""
    all_x = states(model.n, model.q)
    log_w = model.log_weight(all_x) / tau
    for i in range(model.n):
        np.testing.assert_allclose(
            model_log_conditionals(model, all_x, i, tau),
            gibbs_log_conditionals(log_w, model.n, model.q, i), atol=1e-10,
        )


# ----------------------------------------------------------------------------- hand-computed


def test_ising_scores_and_log_weight_by_hand():
    # Nodes "a" < "b" < "c" are sites 0, 1, 2 whatever the insertion order.
    g = nx.Graph()
    g.add_nodes_from(["c", "a", "b"])
    g.add_edges_from([("a", "b"), ("b", "c"), ("c", "a")])
    coupling = {("a", "b"): 1.0, ("c", "b"): -2.0, ("a", "c"): 0.5}
    model = IsingModel(g, coupling=coupling, field={"a": 0.3, "b": -0.1})
    assert model.nodes == ("a", "b", "c")
    assert model.site_of == {"a": 0, "b": 1, "c": 2}
    x = np.array([[1, 0, 1]])  # spins (+1, -1, +1)
    # site 0: f = 0.3 + J_ab s_b + J_ac s_c = 0.3 - 1 + 0.5 = -0.2 -> scores (-f, f) = (0.2, -0.2)
    np.testing.assert_allclose(model.score_site(x, 0), [[0.2, -0.2]], atol=1e-15)
    # site 1: f = -0.1 + J_ab s_a + J_bc s_c = -0.1 + 1 - 2 = -1.1
    np.testing.assert_allclose(model.score_site(x, 1), [[1.1, -1.1]], atol=1e-15)
    # site 2: f = 0 + J_ac s_a + J_bc s_b = 0.5 + 2 = 2.5
    np.testing.assert_allclose(model.score_site(x, 2), [[-2.5, 2.5]], atol=1e-15)
    # log weight: J_ab s_a s_b + J_bc s_b s_c + J_ac s_a s_c + sum h s
    #           = -1 + 2 + 0.5 + (0.3 + 0.1) = 1.9 = -energy
    np.testing.assert_allclose(model.log_weight(x), [1.9], atol=1e-15)
    np.testing.assert_allclose(model.energy(x[0]), [-1.9], atol=1e-15)


def test_ising_coupling_from_edge_attribute_matches_dict():
    g = nx.cycle_graph(5)
    weights = {(u, v): 0.3 * (u + 1) - 0.4 * v for u, v in g.edges}
    nx.set_edge_attributes(g, weights, "J")
    by_attr = IsingModel(g, coupling="J", field=[0.1, 0.0, -0.2, 0.3, 0.0])
    by_dict = IsingModel(g, coupling={(v, u): w for (u, v), w in weights.items()},
                         field={0: 0.1, 2: -0.2, 3: 0.3})
    np.testing.assert_array_equal(by_attr.J, by_dict.J)
    np.testing.assert_array_equal(by_attr.h, by_dict.h)
    np.testing.assert_array_equal(by_attr.J, by_attr.J.T)


def test_potts_scores_and_log_weight_by_hand():
    model = PottsModel(nx.cycle_graph(4), q=3, coupling=2.0, field=[0.1, 0.2, 0.3])
    x = np.array([[0, 1, 0, 2]])
    # site 1: neighbours 0 and 2 hold colours 0, 0 -> colour 0 gets 2 + 2, plus the field
    np.testing.assert_allclose(model.score_site(x, 1), [[4.1, 0.2, 0.3]], atol=1e-15)
    # site 0: neighbours 1 and 3 hold colours 1 and 2 -> +2 each
    np.testing.assert_allclose(model.score_site(x, 0), [[0.1, 2.2, 2.3]], atol=1e-15)
    # no edge is monochromatic; field 0.1 + 0.2 + 0.1 + 0.3 = 0.7
    np.testing.assert_allclose(model.log_weight(x), [0.7], atol=1e-15)


def test_potts_with_two_colours_is_ising_with_half_coupling():
    # J 1{x_u = x_v} = (J/2) s_u s_v + J/2 and h(x) = h(0) + (h(1) - h(0)) (1 + s)/2: the
    # conditionals agree with Ising(J/2, (h(1) - h(0))/2) (shifts cancel in the softmax).
    g = nx.path_graph(4)
    field = np.array([[0.0, 1.0], [0.5, 0.1], [0.2, 0.2], [-1.0, 0.3]])
    potts = PottsModel(g, q=2, coupling=1.4, field=field)
    ising = IsingModel(g, coupling=0.7, field=(field[:, 1] - field[:, 0]) / 2)
    x = states(4, 2)
    for i in range(4):
        np.testing.assert_allclose(
            model_log_conditionals(potts, x, i, 1.0), model_log_conditionals(ising, x, i, 1.0),
            atol=1e-13,
        )


def test_planted_scores_count_and_basin_by_hand():
    model = PlantedBasinModel(5, 3, token=2, strength=4.0, base=[0.5, -0.5, 0.0])
    x = np.array([[2, 2, 0, 2, 1], [2, 2, 2, 2, 2]])
    # row 0, site 0: other sites holding 2 are 1 and 3 -> 4 * 2/4 = 2
    np.testing.assert_allclose(model.score_site(x, 0)[0], [0.5, -0.5, 2.0])
    # row 1, site 4: all four others hold 2 -> 4 * 4/4 = 4
    np.testing.assert_allclose(model.score_site(x, 4)[1], [0.5, -0.5, 4.0])
    np.testing.assert_array_equal(model.count(x), [3, 5])
    np.testing.assert_array_equal(model.basin_mask(x, 4), [False, True])
    np.testing.assert_array_equal(model.basin_mask(x, 0), [True, True])
    # log weight: (4/4) C(3, 2) + base = 3 + (0 + 0 + 0.5 + 0 - 0.5) = 3
    np.testing.assert_allclose(model.log_weight(x[0]), [3.0])


# ----------------------------------------------------------------- Gibbs compatibility (Thm 3)


TEMPERATURES = temperatures(0.2, 5.0)


@SETTINGS
@given(model=models(families="ising", min_sites=1, max_sites=7), tau=TEMPERATURES)
def test_ising_conditionals_are_gibbs(model, tau):
    # Random graphs (random edges, paths, cycles, stars, complete, grids), couplings and fields
    # of both signs, one per edge and per site or shared.
    assert_conditionals_are_gibbs(model, tau)


@SETTINGS
@given(model=models(families="potts", min_sites=1, max_sites=5, max_q=3), tau=TEMPERATURES)
def test_potts_conditionals_are_gibbs(model, tau):
    assert_conditionals_are_gibbs(model, tau)


@SETTINGS
@given(model=models(families="planted", max_sites=5, max_q=3), tau=TEMPERATURES)
def test_planted_conditionals_are_gibbs(model, tau):
    assert_conditionals_are_gibbs(model, tau)


def test_symmetric_asymmetric_ising_is_the_graph_ising_model():
    rng = np.random.default_rng(3)
    j = rng.normal(size=(5, 5))
    j = (j + j.T) / 2
    np.fill_diagonal(j, 0.0)
    h = rng.normal(size=5)
    asym = AsymmetricIsingModel(j, field=h)
    graph = nx.complete_graph(5)
    ising = IsingModel(graph, coupling={(u, v): j[u, v] for u, v in graph.edges}, field=h)
    assert asym.is_compatible()
    x = states(5, 2)
    for i in range(5):
        np.testing.assert_allclose(asym.score_site(x, i), ising.score_site(x, i), atol=1e-13)


# ----------------------------------------------------- asymmetric couplings: not compatible


@SETTINGS
@given(n=st.integers(2, 5), data=st.data())
def test_asymmetric_rectangle_delta_closed_form(n, data):
    # Flip s_i then s_j (x -> y -> z) versus s_j then s_i (x -> w -> z). With scores (-f, f) the
    # edge log-ratio of flipping s_i is -2 s_i f_i(x); flipping s_i changes f_j by -2 J_ji s_i.
    # delta = [-2 s_i f_i - 2 s_j (f_j - 2 J_ji s_i)] - [-2 s_j f_j - 2 s_i (f_i - 2 J_ij s_j)]
    #       = 4 s_i s_j (J_ji - J_ij),   so |delta| = 4 |J_ij - J_ji| (docs/theory.md, `prop4`).
    j = data.draw(coupling_matrices(n))
    h = np.array(data.draw(st.lists(couplings(), min_size=n, max_size=n)))
    model = AsymmetricIsingModel(j, field=h)
    x = states(n, 2)[data.draw(st.integers(0, 2**n - 1))]
    i, k = data.draw(st.sampled_from([(a, b) for a in range(n) for b in range(n) if a != b]))

    def flip(state, site):
        out = state.copy()
        out[site] = 1 - out[site]
        return out

    def edge(state, site):
        lp = model_log_conditionals(model, state[None, :], site, 1.0)[0]
        return lp[1 - state[site]] - lp[state[site]]

    y, w = flip(x, i), flip(x, k)
    delta = (edge(x, i) + edge(y, k)) - (edge(x, k) + edge(w, i))
    s = 2 * x - 1
    assert delta == pytest.approx(4 * s[i] * s[k] * (j[k, i] - j[i, k]), abs=1e-9)
    assert model.is_compatible() == bool(np.array_equal(j, j.T))


def test_asymmetric_conditionals_are_not_gibbs():
    # J_01 = 1 but J_10 = 0: site 0 follows site 1, site 1 ignores site 0. The rectangle flipping
    # both spins has delta = +-4, so no joint law (in particular not the Gibbs law of the
    # symmetrised couplings) has these conditionals.
    j = np.array([[0.0, 1.0], [0.0, 0.0]])
    model = AsymmetricIsingModel(j)
    assert not model.is_compatible()
    sym = IsingModel(nx.path_graph(2), coupling=0.5)
    x = states(2, 2)
    log_w = sym.log_weight(x)
    gibbs = gibbs_log_conditionals(log_w, 2, 2, 1)
    # site 1 ignores site 0 (uniform conditional), the Gibbs conditional does not
    np.testing.assert_allclose(model_log_conditionals(model, x, 1, 1.0), np.log(0.5), atol=1e-15)
    assert np.abs(gibbs - np.log(0.5)).max() > 0.4


def test_asymmetric_random_construction():
    sym = AsymmetricIsingModel.random(6, rng=1, asym=0.0)
    assert sym.is_compatible()
    full = AsymmetricIsingModel.random(6, rng=1, scale=2.0, asym=1.0)
    assert not full.is_compatible()
    # S + A = G: asym = 1 gives J = scale * G with the diagonal zeroed
    g = np.random.default_rng(1).standard_normal((6, 6))
    np.fill_diagonal(g, 0.0)
    np.testing.assert_allclose(full.J, 2.0 * g, atol=1e-15)
    np.testing.assert_allclose(sym.J, (g + g.T) / 2, atol=1e-15)
    np.testing.assert_array_equal(AsymmetricIsingModel.random(6, rng=1).J,
                                  AsymmetricIsingModel.random(6, rng=1).J)


# ------------------------------------------------------------------------------ masking


#: The families whose score_site reads no token of the resampled site (random tables and random
#: joints index their tables by the masked state: they rely on ``ToyModel.scores`` masking it).
UNMASKED = ("ising", "curie-weiss", "potts", "planted", "asym-ising")


@SETTINGS
@given(model=models(max_states=4**6, families=UNMASKED, max_sites=6, max_q=4), data=st.data())
def test_score_site_ignores_the_token_it_resamples(model, data):
    states = np.array(data.draw(st.lists(
        st.lists(st.integers(0, model.q - 1), min_size=model.n, max_size=model.n),
        min_size=1, max_size=4)))
    site = data.draw(st.integers(0, model.n - 1))
    reference = model.score_site(np.where(np.arange(model.n) == site, 0, states), site)
    for a in range(model.q):
        changed = states.copy()
        changed[:, site] = a
        np.testing.assert_array_equal(model.score_site(changed, site), reference)


# ------------------------------------------------------------------------------- errors


def test_empty_graph_and_self_loops_are_rejected():
    with pytest.raises(InvalidGraphError, match="no nodes"):
        IsingModel(nx.Graph())
    looped = nx.path_graph(3)
    looped.add_edge(1, 1)
    with pytest.raises(InvalidGraphError, match="remove"):
        IsingModel(looped)
    with pytest.raises(InvalidGraphError, match="self-loops"):
        PottsModel(looped, q=3)
    with pytest.raises(InvalidGraphError, match="directed"):
        IsingModel(nx.DiGraph([(0, 1)]))
    with pytest.raises(InvalidGraphError, match="parallel"):
        IsingModel(nx.MultiGraph([(0, 1), (0, 1)]))
    with pytest.raises(InvalidGraphError, match="sorted"):
        IsingModel(nx.Graph([(0, "a")]))
    with pytest.raises(InvalidGraphError):
        IsingModel([(0, 1)])


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "J", {(0, 1): 1.0}, {(0, 2): 1.0},
                                 {(0, 1): 1.0, (1, 0): 2.0, (1, 2): 0.0}, True])
def test_bad_couplings_are_rejected(bad):
    # nan/inf; attribute "J" absent; dict missing edge (1, 2); key (0, 2) is not an edge;
    # two values for one edge; a bool is not a coupling
    with pytest.raises(InvalidParameterError):
        IsingModel(nx.path_graph(3), coupling=bad)


@pytest.mark.parametrize("bad", [float("nan"), [0.0, 1.0], {7: 1.0}, [0.0, np.inf, 0.0]])
def test_bad_fields_are_rejected(bad):
    with pytest.raises(InvalidParameterError):
        IsingModel(nx.path_graph(3), field=bad)


def test_bad_potts_parameters_are_rejected():
    for q in (1, 0, 2.5, True):
        with pytest.raises(VocabularyError, match="q >= 2"):
            PottsModel(nx.path_graph(3), q=q)
    with pytest.raises(InvalidParameterError):
        PottsModel(nx.path_graph(3), q=3, coupling=float("nan"))
    with pytest.raises(InvalidParameterError):
        PottsModel(nx.path_graph(3), q=3, field=np.zeros((3, 2)))
    with pytest.raises(InvalidParameterError):
        PottsModel(nx.path_graph(3), q=3, field={0: [0.0, np.nan, 0.0]})


def test_bad_asymmetric_couplings_are_rejected():
    with pytest.raises(InvalidParameterError, match="zero diagonal"):
        AsymmetricIsingModel([[0.5, 1.0], [1.0, 0.0]])
    with pytest.raises(InvalidParameterError, match="square"):
        AsymmetricIsingModel(np.zeros((2, 3)))
    with pytest.raises(InvalidParameterError, match="finite"):
        AsymmetricIsingModel([[0.0, np.nan], [1.0, 0.0]])
    with pytest.raises(InvalidParameterError):
        AsymmetricIsingModel(np.zeros((3, 3)), field=[1.0, 2.0])
    with pytest.raises(InvalidParameterError, match="asym"):
        AsymmetricIsingModel.random(4, rng=0, asym=1.5)
    with pytest.raises(InvalidParameterError):
        AsymmetricIsingModel.random(0)


def test_bad_planted_parameters_are_rejected():
    with pytest.raises(InvalidParameterError, match="n >= 2"):
        PlantedBasinModel(1, 3)
    with pytest.raises(VocabularyError):
        PlantedBasinModel(4, 1)
    with pytest.raises(VocabularyError, match="token"):
        PlantedBasinModel(4, 3, token=3)
    with pytest.raises(InvalidParameterError):
        PlantedBasinModel(4, 3, strength=float("nan"))
    with pytest.raises(InvalidParameterError):
        PlantedBasinModel(4, 3, base=[0.0, 1.0])
    model = PlantedBasinModel(4, 3)
    with pytest.raises(InvalidParameterError, match="threshold"):
        model.basin_mask(np.zeros((1, 4), dtype=int), 5)


def test_states_are_checked_and_errors_are_value_errors():
    model = IsingModel(nx.path_graph(3))
    with pytest.raises(SequenceLengthError):
        model.log_weight(np.zeros((2, 4), dtype=int))
    with pytest.raises(VocabularyError):
        model.log_weight(np.array([[0, 2, 1]]))
    with pytest.raises(VocabularyError):
        PottsModel(nx.path_graph(3), q=3).log_weight(np.array([[0.5, 1.0, 0.0]]))
    assert issubclass(InvalidGraphError, ValueError)
    assert issubclass(InvalidGraphError, GlauberInputError)
