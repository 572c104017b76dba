"""Smoke runs of each benchmark's core function at toy sizes (no timing assertions).

Each run must return its documented keys with positive times and rates; the exact-chain run
must also agree with itself (stepping and squaring find the same ``t_mix``), and the summary
table must have one line per row.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # `benchmarks` lives next to `glauber`, outside the package

from benchmarks import exact_chain, report, run_all  # noqa: E402
from glauber.mlm_backend.sequences import TRASTUZUMAB_VH  # noqa: E402

ROW_KEYS = {"benchmark", "measured", "baseline", "unit", "ratio", "target", "met", "note"}


def _check_rows(rows: list[dict]) -> None:
    assert rows
    for r in rows:
        assert set(r) == ROW_KEYS
    table = report.markdown_table(rows)
    assert len(table.strip().splitlines()) == len(rows) + 2
    json.dumps(report.jsonable(rows))  # JSON-safe


def test_stepping_baseline_matches_closed_form():
    # Two-state chain P = [[1-a, a], [b, 1-b]]: d(t) = max(a, b)/(a+b) * |1-a-b|^t
    # (Levin–Peres–Wilmer 2nd ed., Section 1.1: P^t(0, 0) - pi(0) = (1-a-b)^t a/(a+b)).
    a, b = 0.1, 0.3
    P = np.array([[1 - a, a], [b, 1 - b]])
    pi = np.array([b, a]) / (a + b)
    eps = 0.01
    expected = next(t for t in range(1, 1000) if max(a, b) / (a + b) * (1 - a - b) ** t <= eps)
    t, steps, seconds = exact_chain.stepping_mixing_time(P, pi, eps)
    assert t == expected == steps and seconds > 0


def test_stepping_baseline_stops_at_the_cap():
    P = np.array([[1 - 1e-9, 1e-9], [1e-9, 1 - 1e-9]])  # t_mix ~ 1e8
    t, steps, seconds = exact_chain.stepping_mixing_time(P, np.array([0.5, 0.5]), 0.25, 0.0)
    assert t is None and steps == 1024 and seconds >= 0


def test_exact_chain_benchmark_smoke():
    res = exact_chain.run(
        mixing=dict(cycle_sites=3, slow_beta=1.5, fast_beta=0.5, lumped_n=5, lumped_alpha=1.5),
        stationary=dict(rows=2, cols=2, betas=(0.5, 3.0), gth_betas=(3.0,)),
        largest=dict(sizes=(3, 4), budget_seconds=30.0),
        lumped_large=dict(n=20),
        methods=dict(cases=((3, 0.5),)),
    )
    assert {"mixing", "stationary", "largest", "lumped_large", "methods", "rows"} <= set(res)
    assert len(res["mixing"]) == 3
    for m in res["mixing"]:
        assert m["agree"] is True and m["t_mix_squaring"] == m["t_mix_stepping"] >= 1
        assert m["seconds_squaring"] > 0 and m["seconds_stepping"] > 0
        # a ratio against the baseline of the same run, not a number from elsewhere
        assert m["speedup"] == pytest.approx(m["seconds_stepping"] / m["seconds_squaring"])
    assert [(s["beta"], s["method"]) for s in res["stationary"]] == [
        (0.5, "sparse"), (0.5, "iterative"), (3.0, "sparse"), (3.0, "iterative"), (3.0, "gth")
    ]
    for s in res["stationary"]:
        assert s["seconds"] > 0 and s["states"] == 16
        assert 0 <= s["residual_l1"] < 1e-9
        if s["method"] == "gth":  # entrywise relative accuracy (O'Cinneide 1993)
            assert s["max_relative_error"] < 1e-12
    assert [r["states"] for r in res["largest"]["runs"]] == [8, 16]
    assert res["largest"]["largest_states_within_budget"] == 16
    assert res["lumped_large"]["t_mix"] >= 1 and res["lumped_large"]["seconds"] > 0
    _check_rows(res["rows"])


def test_largest_chain_records_a_refused_size():
    # 2**17 states exceed ExactChain's default max_states (2**16): refused at construction.
    res = exact_chain.largest_chain_benchmark(sizes=(3, 17), budget_seconds=30.0)
    assert "error" in res["runs"][-1] and res["largest_states_within_budget"] == 8


def test_torch_backend_part_agrees_with_numpy():
    res = exact_chain.torch_mixing_benchmark(sizes=(3, 4, 5), beta=1.0, device="cpu",
                                             numpy_baseline_sites=4, max_squaring_sites=4)
    assert [r["states"] for r in res] == [8, 16, 32]
    for r in res:
        chain = exact_chain.ising_chain(nx.cycle_graph(r["sites"]), 1.0)
        t_mix = chain.mixing_time(0.25, method="squaring")
        assert r["t_mix_stepping_torch"] == t_mix and r["seconds_stepping_torch"] > 0
        assert r["stationary_max_relative_error"] < 1e-12
    assert [r.get("t_mix_squaring_torch") for r in res] == [
        res[0]["t_mix_stepping_torch"], res[1]["t_mix_stepping_torch"], None
    ]  # no squaring above max_squaring_sites
    assert res[1]["t_mix_squaring_numpy"] == res[1]["t_mix_stepping_numpy"]
    assert "seconds_squaring_numpy" not in res[0]
    _check_rows(exact_chain.summary_rows({"torch_mixing": res}))


def test_method_part_agrees_across_methods():
    res = exact_chain.method_benchmark(cases=((4, 0.5), (3, 2.0)))
    for r in res:
        chain = exact_chain.ising_chain(nx.cycle_graph(r["sites"]), r["beta"])
        assert r["agree"] and r["t_mix_auto"] == chain.mixing_time(0.25, method="squaring")
        assert r["seconds_stepping"] > 0 and r["speedup"] > 0
    _check_rows(exact_chain.summary_rows({"methods": res}))


@pytest.fixture(scope="module")
def tiny_bert():
    from benchmarks.random_models import random_bert

    return random_bert(n=5), random_bert(n=5, head="full")


@pytest.mark.mlm
def test_sampler_benchmark_smoke(tiny_bert):
    from benchmarks import sampler

    masked, full = tiny_bert
    res = sampler.run(mlm=masked, mlm_full=full, batch_sizes=(2, 3), steps=(1, 2),
                      baseline_chains=2, baseline_steps=1, head_batch=3,
                      large_vocab=dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                       intermediate_size=32, vocab_size=300))
    assert res["baseline"]["chain_steps_per_s"] > 0
    assert [b["batch"] for b in res["batched"]] == [2, 3]
    for b in res["batched"]:
        for key in ("seconds", "cpu_seconds", "chain_steps_per_s", "model_flops_per_s",
                    "speedup", "matmul_fraction", "matmul_fraction_cpu"):
            assert b[key] > 0
        # every rate is work over the measured time, every ratio against the same run's baseline
        assert b["chain_steps_per_s"] == pytest.approx(b["batch"] * b["steps"] / b["seconds"])
        assert b["speedup"] == pytest.approx(
            b["chain_steps_per_s"] / res["baseline"]["chain_steps_per_s"])
        assert b["matmul_fraction"] == pytest.approx(
            b["model_flops_per_s"] / b["matmul_flops_per_s"])
    assert res["flops_per_query"] > 0
    assert all(b["matmul_flops_per_s"] > 0 for b in res["batched"])
    assert res["flops_per_query_full_logits"] > res["flops_per_query"]
    for head in (res["head"], res["head_large_vocab"]):
        assert head["seconds_masked"] > 0 and head["seconds_full"] > 0
        assert head["max_abs_difference"] < 1e-4  # both heads give the same scores
    assert res["head_large_vocab"]["flops_full"] > res["head_large_vocab"]["flops_masked"]
    _check_rows(res["rows"])


@pytest.mark.mlm
def test_estimators_benchmark_smoke(tiny_bert):
    from benchmarks import estimators

    res = estimators.run(mlm=tiny_bert[0], n_rectangles=2, influence_contexts=1,
                         coupling_pairs=2, coupling_steps=2)
    assert res["rectangle"]["queries"] == 8
    assert res["influence"]["queries"] == 5 + 5 * 4  # S n + S n R (n - 1), S = R = 1
    for name in ("rectangle", "influence"):
        for key in ("seconds", "queries_per_s", "model_flops_per_s", "matmul_fraction"):
            assert res[name][key] > 0
    c = res["coupling"]
    assert c["pair_steps_per_s_stacked"] > 0 and c["pair_steps_per_s_two_calls"] > 0
    _check_rows(res["rows"])


def test_flop_count_matches_hand_count():
    # BERT-base (h=768, I=3072, 12 layers, V=30522) on L=22 tokens, counted by hand:
    # per layer 8*22*768^2 + 4*22^2*768 + 4*22*768*3072 = 103809024 + 1486848 + 207618048.
    from types import SimpleNamespace

    from benchmarks.flops import masked_lm_flops

    cfg = SimpleNamespace(hidden_size=768, intermediate_size=3072, num_hidden_layers=12,
                          vocab_size=30522)
    per_layer = 103809024 + 1486848 + 207618048
    head = 2 * 768 * 768 + 2 * 768 * 30522
    assert masked_lm_flops(cfg, 22) == 12 * per_layer + head
    assert masked_lm_flops(cfg, 22, full_logits=True) == 12 * per_layer + 22 * head


def test_run_all_writes_both_files_atomically(tmp_path, monkeypatch):
    toy = {"rows": [report.row("toy", 1.0, "s", 2.0, 2.0, ">= 1x", True)]}

    def failing() -> dict:
        raise RuntimeError("boom")

    monkeypatch.setattr(run_all, "BENCHMARKS", {"toy": (lambda: toy, "toy"),
                                                 "bad": (failing, "bad")})
    with pytest.raises(SystemExit):
        run_all.main(["nope", "--out", str(tmp_path)])
    assert run_all.main(["--out", str(tmp_path)]) == 1  # default: every benchmark
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["benchmarks"]["bad"]["error"] == "RuntimeError: boom"
    assert data["rows"][0]["ratio"] == 2.0
    md = (tmp_path / "results.md").read_text()
    assert "| toy | 1 s | 2 s | 2x | >= 1x | yes |" in md
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json", "results.md"]
    # --update reruns the named benchmarks into the files and keeps the others
    toy["rows"] = [report.row("toy", 1.0, "s", 3.0, 3.0, ">= 1x", True)]
    assert run_all.main(["toy", "--out", str(tmp_path), "--update"]) == 1  # `bad` kept, failed
    data = json.loads((tmp_path / "results.json").read_text())
    assert list(data["benchmarks"]) == ["toy", "bad"] and data["rows"][0]["ratio"] == 3.0
    assert data["benchmarks"]["bad"]["error"] == "RuntimeError: boom"
    assert data["machine"]["updates"][0]["benchmarks"] == ["toy"]
    md = (tmp_path / "results.md").read_text()
    assert "| toy | 1 s | 3 s | 3x | >= 1x | yes |" in md and "Rerun later (`--update`): toy" in md


@pytest.mark.mlm
def test_memory_benchmark_smoke():
    """Both child processes report a peak RSS above what loading the model took."""
    from benchmarks import memory

    res = memory.run(batch=8, n=8, steps=1)
    for key in ("sub_batched", "unbatched"):
        assert res[key]["peak_bytes"] >= res[key]["loaded_bytes"] > 0
    _check_rows(res["rows"])
    assert res["rows"][0]["met"] is True  # 8 chains of 8 sites are far below 4 GiB


@pytest.mark.mlm
def test_exact_window_benchmark_smoke():
    """A 2-site window of a tiny random BERT on a full shipped chain: rates are work over time,
    ratios are against the same run's baselines, and the sweep's values are the exact chain's."""
    from benchmarks import exact_window
    from benchmarks.random_models import random_bert
    from glauber.core import restrict
    from glauber.exact import ExactChain

    mlm = random_bert()
    res = exact_window.run(mlm=mlm, sites=(99, 100), taus=(0.5, 2.0), batch_size=8,
                           naive_sample=8)
    b, s, nv = res["build"], res["sampler"], res["naive"]
    assert res["states"] == 400 and res["length"] == 120 and b["forwards"] == 40
    assert b["forwards_per_s"] == pytest.approx(40 / b["seconds"])
    assert s["forwards_per_s"] == pytest.approx(
        (s["before"]["forwards_per_s"] + s["after"]["forwards_per_s"]) / 2)
    assert res["rate_ratio"] == pytest.approx(b["forwards_per_s"] / s["forwards_per_s"])
    assert nv["forwards_total"] == 800 and nv["forwards_timed"] == 8
    assert nv["seconds_extrapolated"] == pytest.approx(800 / nv["forwards_per_s"])
    assert res["naive_speedup"] == pytest.approx(nv["seconds_extrapolated"] / b["seconds"])
    assert res["sweep_overhead"] == pytest.approx(res["sweep"]["seconds"] / b["seconds"])
    context = mlm.encode(TRASTUZUMAB_VH).numpy()
    for r in res["sweep"]["per_tau"]:
        chain = ExactChain(restrict(mlm, context, [99, 100]), r["tau"], cache=False)
        assert r["t_mix"] == chain.mixing_time(0.25)
        assert r["absolute_gap"] == pytest.approx(chain.absolute_spectral_gap(), abs=1e-9)
    _check_rows(res["rows"])


def test_mh_pll_benchmark_smoke():
    """The MH / PLL benchmark at toy sizes: both rows, rates positive, acceptance a rate."""
    from benchmarks import mh_pll

    out = mh_pll.run(n=10, chains=2, plain_steps=2, mh_steps=1, pll_sequences=2)
    _check_rows(out["rows"])
    assert all(r["measured"] > 0 and r["baseline"] > 0 for r in out["rows"])
    assert 0.0 <= out["acceptance"]["overall"] <= 1.0
def test_the_committed_results_hold_every_benchmark():
    # benchmarks/results.{json,md} are regenerated by `make bench`: every benchmark of run_all
    # has its rows there (the exact-window and influence-search ones were missing), none failed.
    results = json.loads((ROOT / "benchmarks" / "results.json").read_text())
    summary = (ROOT / "benchmarks" / "results.md").read_text()
    for name in run_all.BENCHMARKS:
        out = results["benchmarks"].get(name)
        assert out is not None and out["rows"] and "error" not in out, name
        assert f"- `{name}`: " in summary, name
        for row in out["rows"]:
            assert row in results["rows"] and row["benchmark"] in summary
    assert results["machine"]["load_average_1_5_15"] and results["machine"]["load_average_at_end"]
