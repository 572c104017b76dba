"""StaticShapeRunner and HFMaskedLM(cuda_graphs=True).

On the CPU the runner runs eagerly through its static buffers ("eager-static"), so everything
but the CUDA capture itself is exercised here. Oracles: the plain forward pass of the same model
with the same sub-batch budget (bitwise: same operations on the same shapes), a hand-computed
function for the runner alone, and the Glauber trajectory of the plain model for the same seed.
The CUDA test at the end runs only where CUDA is available.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from glauber.errors import InvalidParameterError
from glauber.estimators import glauber_chains
from glauber.mlm_backend import HFMaskedLM
from glauber.mlm_backend.static_shapes import StaticShapeRunner

N = 10
ROWS = 7  # rows per forward: max_batch_tokens = ROWS * (N + 2)

pytestmark = pytest.mark.usefixtures("single_thread")


def _pair(tiny_models, arch="bert", device="cpu", **kw) -> tuple[HFMaskedLM, HFMaskedLM]:
    model, tok = tiny_models[arch]
    common = dict(n=N, split_chars=True, max_batch_tokens=ROWS * (N + 2), device=device, **kw)
    return HFMaskedLM(model, tok, **common), HFMaskedLM(model, tok, cuda_graphs=True, **common)


def _batch(q: int, count: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, q, (count, N), generator=g), torch.randint(0, N, (count,), generator=g)


def _affine(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return 2.0 * a.double() + b[:, None]


# ------------------------------------------------------------------------- the runner ----


def test_runner_returns_fn_through_one_static_output_per_shape():
    runner = StaticShapeRunner(_affine, torch.device("cpu"))
    assert runner.mode == "eager-static" and len(runner) == 0
    a1, b1 = torch.arange(6).reshape(3, 2), torch.tensor([1.0, 2.0, 3.0])
    first = runner(a1, b1)
    expected_1 = torch.tensor([[1.0, 3.0], [6.0, 8.0], [11.0, 13.0]])  # 2 a + b, by hand
    assert torch.equal(first, expected_1)
    kept = first.clone()
    a2, b2 = a1 + 10, b1 * 0
    second = runner(a2, b2)
    # The static output is overwritten by the next call of the same shape: callers must copy.
    assert second is first
    assert torch.equal(second, 2.0 * a2.double()) and not torch.equal(second, kept)
    a1.add_(100)  # the caller's tensors are copied in, never kept
    assert torch.equal(runner(a2, b2), 2.0 * a2.double())
    assert (len(runner), runner.captures) == (1, 1)


def test_runner_cache_grows_per_new_shape_and_evicts_least_recently_used():
    runner = StaticShapeRunner(_affine, torch.device("cpu"), max_shapes=2)

    def call(rows: int) -> None:
        a, b = torch.ones(rows, 3, dtype=torch.long), torch.arange(rows, dtype=torch.float64)
        assert torch.equal(runner(a, b), 2.0 + b[:, None].expand(rows, 3))

    call(2), call(2)
    assert (len(runner), runner.captures) == (1, 1)  # a repeat adds nothing
    call(3)
    assert (len(runner), runner.captures) == (2, 2)
    call(2)  # now 3 is the least recently used
    call(4)
    assert [key[0][0] for key in runner.shapes] == [(2, 3), (4, 3)]
    call(3)  # evicted, rebuilt, still right
    assert (len(runner), runner.captures) == (2, 4)
    runner.clear()
    assert len(runner) == 0
    with pytest.raises(InvalidParameterError, match="max_shapes"):
        StaticShapeRunner(_affine, torch.device("cpu"), max_shapes=0)


def test_runner_mode_follows_the_device():
    assert StaticShapeRunner(_affine, torch.device("cuda")).mode == "captured"  # nothing allocated
    assert StaticShapeRunner(_affine, torch.device("meta")).mode == "eager-static"


# ---------------------------------------------------------------- HFMaskedLM on the CPU ----


@pytest.mark.parametrize("arch", ["bert", "roberta", "distilbert", "modernbert"])
def test_static_scores_equal_the_plain_path_bitwise(tiny_models, arch):
    plain, static = _pair(tiny_models, arch)
    assert static.graph_mode == "eager-static" and plain.graph_mode is None
    for seed, batch in enumerate((1, 5, ROWS, 2 * ROWS + 2)):  # the last: 7 + 7 + remainder 2
        states, sites = _batch(plain.q, batch, seed)
        assert torch.equal(static.scores(states, sites), plain.scores(states, sites))
    assert sorted(key[0][0] for key in static.static_runner.shapes) == [
        (1, N + 2), (2, N + 2), (5, N + 2), (ROWS, N + 2)
    ]


def test_full_head_and_autocast_run_through_the_static_runner(tiny_models):
    for kw in ({"head": "full"}, {"autocast": "bfloat16"}):
        plain, static = _pair(tiny_models, "roberta", **kw)
        states, sites = _batch(plain.q, 2 * ROWS + 3, seed=4)
        assert torch.equal(static.scores(states, sites), plain.scores(states, sites))
        assert len(static.static_runner) == 2


def test_repeated_calls_return_fresh_correct_scores(tiny_models):
    plain, static = _pair(tiny_models)
    (x1, s1), (x2, s2) = _batch(plain.q, ROWS + 3, 1), _batch(plain.q, ROWS + 3, 2)
    first = static.scores(x1, s1)
    second = static.scores(x2, s2)
    assert torch.equal(first, plain.scores(x1, s1))  # not overwritten by the second call
    assert torch.equal(second, plain.scores(x2, s2))
    assert not torch.equal(first, second)
    assert first.data_ptr() != second.data_ptr()


def test_shape_cache_grows_by_one_per_new_shape(tiny_models):
    _, static = _pair(tiny_models)
    runner = static.static_runner
    static.scores(*_batch(static.q, ROWS, 0))
    static.scores(*_batch(static.q, ROWS, 1))
    assert (len(runner), runner.captures) == (1, 1)
    static.scores(*_batch(static.q, 2 * ROWS + 1, 2))  # adds the 1-row remainder
    assert (len(runner), runner.captures) == (2, 2)
    short = static.with_length(4)  # a copy shares the runner; a new width is a new shape
    assert short.static_runner is runner
    short.scores(torch.zeros(3, 4, dtype=torch.long), 1)
    assert len(runner) == 3 and ((3, 6), torch.int64) in [key[0] for key in runner.shapes]
    assert "graph_mode='eager-static'" in repr(static)


def test_cuda_graphs_and_compile_are_mutually_exclusive(tiny_models):
    model, tok = tiny_models["bert"]
    with pytest.raises(InvalidParameterError, match="mutually exclusive"):
        HFMaskedLM(model, tok, cuda_graphs=True, compile="eager")


def test_glauber_chains_trajectory_is_unchanged(tiny_models):
    plain, static = _pair(tiny_models)
    init = np.random.default_rng(0).integers(0, plain.q, size=(2 * ROWS + 1, N))
    kw = dict(n_steps=6, seed=11, record_every=1)
    a = glauber_chains(plain, 0.8, init, **kw)
    b = glauber_chains(static, 0.8, init, **kw)
    np.testing.assert_array_equal(a.trajectory, b.trajectory)
    assert (a.final_states != init).any()  # the chains moved: the comparison is not vacuous


# ------------------------------------------------------------------------------ CUDA ----


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_captured_graphs_on_cuda(tiny_models):
    import copy

    model, tok = tiny_models["bert"]
    model = copy.deepcopy(model)  # moved to CUDA in place
    for kw in ({}, {"autocast": "float16"}, {"head": "full"}):
        plain, graphed = _pair({"bert": (model, tok)}, device="cuda", **kw)
        assert graphed.graph_mode == "captured"
        results = []
        for seed, batch in enumerate((5, 2 * ROWS + 2, 2 * ROWS + 2, 5)):
            states, sites = _batch(plain.q, batch, seed)
            got = graphed.scores(states, sites)
            results.append(got)
            # Captured, the attention mask is built explicitly (transformers skips it eagerly
            # when all ones), so the SDPA kernel may differ: close, not bitwise.
            tol = 1e-4 if not kw.get("autocast") else 5e-2
            torch.testing.assert_close(got, plain.scores(states, sites), atol=tol, rtol=0)
        assert not torch.equal(results[1], results[2])  # no stale static output
        assert len(graphed.static_runner) == 3 and graphed.static_runner.captures == 3
