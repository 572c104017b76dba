"""The family table: registered once by the package, read by the modules below it."""

from __future__ import annotations

import pytest

from glauber.errors import InvalidParameterError, UnknownModelError
from glauber.toy_models import FAMILIES, ModelSpec, toy_presets
from glauber.toy_models import family as family_module
from glauber.toy_models.family import FamilyTable, registered_families
from glauber.toy_models.ising import ISING


def test_the_package_registers_its_table_and_specs_are_built_from_it() -> None:
    assert registered_families() is FAMILIES
    assert toy_presets() == FAMILIES.presets
    # the order is the seeding order of `glauber verify --examples` (FamilyTable's docstring)
    assert list(FAMILIES) == ["ising", "curie-weiss", "potts", "planted", "random-joint",
                              "asym-ising", "random-table", "restricted", "clock"]


def test_a_spec_needs_a_registered_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(family_module, "_REGISTERED", [])
    with pytest.raises(RuntimeError, match="import glauber.toy_models"):
        ModelSpec("ising", n=2, q=2, edges=((0, 1),), couplings=(1.0,), field=(0.0, 0.0))


def test_a_spec_reads_the_registered_table_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(family_module, "_REGISTERED", [FamilyTable(ISING)])
    with pytest.raises(UnknownModelError, match="choose from ising$"):
        ModelSpec("potts", n=2, q=3)


def test_two_families_of_one_name_are_refused() -> None:
    with pytest.raises(InvalidParameterError, match="two toy families are named 'ising'"):
        FamilyTable(ISING, ISING)
