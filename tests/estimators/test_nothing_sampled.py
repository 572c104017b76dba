"""A run that would not change the state says so instead of returning the seed silently.

Oracles: ``glauber_chains(n_steps=0)`` warns with :class:`NothingSampledWarning` (and returns
the initial states, step 0 only), a run of 1 step does not warn, an empty set of free sites is
a typed error, and ``glauber trajectory --steps 0`` exits with code 2 and one line on stderr,
before it creates its output folder.
"""

from __future__ import annotations

import contextlib
import io
import warnings

import numpy as np
import pytest

import glauber.cli
from glauber.errors import FrozenSitesError, NothingSampledWarning
from glauber.estimators import glauber_chains
from glauber.toy_models import FunctionModel


def uniform_model(n: int = 3, q: int = 2) -> FunctionModel:
    return FunctionModel(n, q, lambda x, i: np.zeros((len(x), q)))


@pytest.mark.parametrize("kernel", ["random", "sweep", "mh:pll"])
def test_zero_steps_warns_and_returns_the_initial_states(kernel):
    x0 = np.array([[0, 1, 0], [1, 1, 1]])
    with pytest.warns(NothingSampledWarning, match="n_steps=0"):
        res = glauber_chains(uniform_model(), 1.0, x0, n_steps=0, seed=0, kernel=kernel)
    assert np.array_equal(res.final_states, x0) and res.recorded_steps.tolist() == [0]
    assert issubclass(NothingSampledWarning, UserWarning)


def test_one_step_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", NothingSampledWarning)
        res = glauber_chains(uniform_model(), 1.0, np.zeros((2, 3), dtype=int), n_steps=1)
    assert res.n_steps == 1


def test_the_warning_points_at_the_caller():
    with pytest.warns(NothingSampledWarning) as record:
        glauber_chains(uniform_model(), 1.0, np.zeros((1, 3), dtype=int), n_steps=0)
    assert record[0].filename == __file__


@pytest.mark.parametrize("frozen", [[0, 1, 2], np.ones(3, dtype=bool)])
def test_an_empty_site_set_is_a_typed_error(frozen):
    with pytest.raises(FrozenSitesError, match="no site can be resampled"):
        glauber_chains(uniform_model(), 1.0, np.zeros((2, 3), dtype=int), n_steps=5,
                       frozen=frozen)


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = glauber.cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_trajectory_with_zero_steps_exits_2_with_one_line(tmp_path):
    out = tmp_path / "run"
    code, stdout, err = run("trajectory", "--model", "ising-cycle:n=4", "--steps", "0",
                            "--out", str(out), "--no-progress")
    assert code == 2, (stdout, err)
    assert err.count("\n") == 1 and "--steps 0 samples nothing" in err, err
    assert not out.exists()
