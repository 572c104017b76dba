"""The offline model registry: names, loaders, and errors that list what exists."""

from __future__ import annotations

import subprocess
import sys

import pytest

from glauber.errors import InvalidParameterError, UnknownModelError
from glauber.mlm_backend import (
    MODEL_REGISTRY,
    CausalLMControl,
    HFMaskedLM,
    available_models,
    load_model,
    register_model,
)
from glauber.mlm_backend.registry import BUILTIN_MODELS

pytestmark = pytest.mark.usefixtures("single_thread")


def test_builtin_models_load_by_name():
    assert {"antiberty", "tiny-gpt2-control"} <= set(available_models())
    mlm = load_model("antiberty", n=10)
    assert isinstance(mlm, HFMaskedLM) and mlm.name == "antiberty" and (mlm.n, mlm.q) == (10, 20)
    control = load_model("tiny-gpt2-control", vocab_size=3, n=4)
    assert isinstance(control, CausalLMControl) and (control.n, control.q) == (4, 3)


def test_unknown_names_list_the_offline_models_and_never_download():
    with pytest.raises(UnknownModelError, match="Did you mean 'antiberty'") as err:
        load_model("antibery")
    assert "tiny-gpt2-control" in str(err.value) and "hf:" in str(err.value)
    # A hub-style name without the hf: prefix is refused at once (no network access).
    with pytest.raises(UnknownModelError, match="antiberty"):
        load_model("bert-base-uncased")


def test_register_model_validates_names():
    def loader(**kw):
        return ("loaded", kw)

    register_model("test-dummy", loader)
    try:
        assert load_model("test-dummy", n=3) == ("loaded", {"n": 3})
        assert "test-dummy" in available_models()
        with pytest.raises(InvalidParameterError, match="already registered"):
            register_model("test-dummy", loader)
        register_model("test-dummy", lambda **kw: "replaced", replace=True)
        assert load_model("test-dummy") == "replaced"
    finally:
        MODEL_REGISTRY.pop("test-dummy", None)
    for bad in ("", "Upper", "has space", "hf:name"):
        with pytest.raises(InvalidParameterError):
            register_model(bad, loader)


def test_builtin_loaders_import_their_module_only_when_called():
    """Listing the catalogue imports no loader module (one registration mechanism, no cycle)."""
    code = (
        "import sys\n"
        "from glauber.mlm_backend.registry import BUILTIN_MODELS, available_models\n"
        "names = available_models()\n"
        "assert set(BUILTIN_MODELS) <= set(names), names\n"
        "assert 'glauber.mlm_backend.sapiens' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert {"sapiens-vh", "sapiens-vl"} <= set(BUILTIN_MODELS)
