"""Toy models from text specifications (the CLI's --model strings)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glauber.errors import (
    InvalidGraphError,
    InvalidParameterError,
    UnknownModelError,
    VocabularyError,
)
from glauber.toy_models import (
    AsymmetricIsingModel,
    CurieWeissModel,
    IsingModel,
    PlantedBasinModel,
    PottsModel,
    RandomJointModel,
    RandomTableModel,
    parse_toy_spec,
    toy_presets,
)
from glauber.toy_models.specs import describe_toy_families

BRIEF_EXAMPLES = [  # (spec, class, n, q)
    ("ising-cycle:n=8,J=1.0,h=0", IsingModel, 8, 2),
    ("ising-grid:rows=3,cols=3", IsingModel, 9, 2),
    ("ising-star:n=6", IsingModel, 6, 2),
    ("ising-complete:n=6", IsingModel, 6, 2),
    ("potts-cycle:n=6,q=3", PottsModel, 6, 3),
    ("asym-ising:n=6,seed=0,asym=0.5", AsymmetricIsingModel, 6, 2),
    ("curie-weiss:n=8,alpha=1.5", CurieWeissModel, 8, 2),
    ("planted:n=8,q=3,strength=4", PlantedBasinModel, 8, 3),
    ("random-table:n=3,q=20,seed=0,scale=1.0", RandomTableModel, 3, 20),
    ("random-joint:n=4,q=3,seed=2", RandomJointModel, 4, 3),
]


@pytest.mark.parametrize("spec, cls, n, q", BRIEF_EXAMPLES)
def test_examples_build_and_round_trip(spec, cls, n, q):
    model = parse_toy_spec(spec)
    assert type(model) is cls and (model.n, model.q) == (n, q)
    assert model.name.startswith(spec.split(":")[0] + ":")
    again = parse_toy_spec(model.name)
    assert again.name == model.name
    states = np.random.default_rng(0).integers(0, q, size=(5, n))
    sites = np.arange(5) % n
    np.testing.assert_array_equal(again.scores(states, sites), model.scores(states, sites))


def test_graph_families_have_the_named_graphs():
    cycle = parse_toy_spec("ising-cycle:n=8,J=0.5,h=0.25")
    np.testing.assert_array_equal(cycle.J != 0, nx.to_numpy_array(nx.cycle_graph(8)) != 0)
    assert set(np.unique(cycle.J)) == {0.0, 0.5} and np.all(cycle.h == 0.25)
    assert len(parse_toy_spec("ising-grid:rows=3,cols=3").edges) == 12  # 2 * 3 * 2
    assert len(parse_toy_spec("ising-complete:n=6").edges) == 15  # C(6, 2)
    assert len(parse_toy_spec("ising-path:n=5").edges) == 4
    star = parse_toy_spec("ising-star:n=6,h=0.1,hub_h=2.0")
    assert len(star.edges) == 5 and (star.J[0] != 0).sum() == 5  # hub is site 0
    np.testing.assert_allclose(star.h, [2.1, 0.1, 0.1, 0.1, 0.1, 0.1])
    potts = parse_toy_spec("potts-cycle:n=5,q=4,J=-1")
    assert potts.q == 4 and set(np.unique(potts.J)) == {-1.0, 0.0}


def test_parameters_reach_the_models():
    cw = parse_toy_spec("curie-weiss:n=8,alpha=1.5,h=-0.5")
    assert (cw.alpha, cw.field) == (1.5, -0.5)
    asym = parse_toy_spec("asym-ising:n=6,seed=3,asym=0.5,scale=2")
    np.testing.assert_array_equal(
        asym.J, AsymmetricIsingModel.random(6, rng=3, scale=2.0, asym=0.5).J)
    assert not asym.is_compatible()
    assert parse_toy_spec("asym-ising:n=6,asym=0").is_compatible()
    plain = parse_toy_spec("planted:n=8,q=3,strength=4")
    assert plain.strength == 4.0 and np.all(plain.base == 0.0) and plain.token == 0
    seeded = parse_toy_spec("planted:n=8,q=3,token=2,seed=5")
    np.testing.assert_array_equal(
        seeded.base, PlantedBasinModel.with_random_base(8, 3, rng=5).base)
    assert seeded.token == 2
    assert parse_toy_spec("planted:seed=none").name == parse_toy_spec("planted").name


def test_canonical_name_spells_out_every_key():
    assert parse_toy_spec("curie-weiss:n=8,alpha=1.5").name == "curie-weiss:n=8,alpha=1.5,h=0.0"
    assert parse_toy_spec(" ising-cycle : J=2 , n=4 ").name == "ising-cycle:n=4,J=2.0,h=0.0"
    assert parse_toy_spec("planted").name == (
        "planted:n=8,q=3,token=0,strength=4.0,seed=none,scale=1.0")


@pytest.mark.parametrize("family", sorted(toy_presets()))
def test_every_family_builds_with_its_defaults(family):
    builder, defaults, help_text = toy_presets()[family]
    assert callable(builder) and help_text
    model = parse_toy_spec(family)
    keys = [item.split("=")[0] for item in model.name.split(":")[1].split(",")]
    assert model.name.startswith(family + ":") and keys == list(defaults)
    assert family in describe_toy_families()


def test_unknown_family_lists_the_choices():
    with pytest.raises(UnknownModelError) as info:
        parse_toy_spec("ising-torus:n=4")
    for family in toy_presets():
        assert family in str(info.value)
    with pytest.raises(UnknownModelError):
        parse_toy_spec(42)


def test_unknown_key_lists_the_keys():
    with pytest.raises(UnknownModelError) as info:
        parse_toy_spec("potts-cycle:n=6,colours=3")
    assert "n, q, J" in str(info.value)
    with pytest.raises(UnknownModelError, match="key=value"):
        parse_toy_spec("potts-cycle:n")


@pytest.mark.parametrize("spec, error", [
    ("ising-cycle:n=8.5", InvalidParameterError),       # n is an integer
    ("ising-cycle:J=strong", InvalidParameterError),    # J is a number
    ("ising-cycle:n=4,n=5", InvalidParameterError),     # repeated key
    ("ising-cycle:J=nan", InvalidParameterError),       # non-finite coupling
    ("ising-cycle:n=2", InvalidParameterError),         # a cycle needs 3 sites
    ("ising-grid:rows=0", InvalidParameterError),
    ("potts-cycle:q=1", VocabularyError),             # q < 2
    ("curie-weiss:alpha=inf", InvalidParameterError),
    ("asym-ising:asym=2", InvalidParameterError),
    ("planted:n=1", InvalidParameterError),
    ("planted:token=3", VocabularyError),            # token outside 0..q-1
])
def test_bad_values_raise_typed_errors(spec, error):
    with pytest.raises(error):
        parse_toy_spec(spec)


def test_errors_are_value_errors():
    assert issubclass(UnknownModelError, ValueError)
    assert issubclass(InvalidGraphError, ValueError)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(3, 7), j=st.floats(-3, 3, allow_nan=False), h=st.floats(-3, 3))
def test_round_trip_keeps_float_values_exactly(n, j, h):
    model = parse_toy_spec(f"ising-cycle:n={n},J={j!r},h={h!r}")
    assert parse_toy_spec(model.name).name == model.name
    assert model.h[0] == h and model.J[0, 1] == j
