"""``--ray``: accepted before or after the sub-command, and Ray's cluster errors said in one line.

A fake ``ray`` module stands in for Ray here, so these tests need no cluster and can force
Ray's failures: one that runs tasks in this process (the oracle: the same table as without
``--ray``), and one whose ``init`` fails as Ray does with ``--ray auto`` and no cluster (its
message advises an ``--address`` flag that glauber does not have). The real local cluster is
tested in tests/certify/test_ray_table.py and tests/experiments/test_phase_diagram.py.
"""

from __future__ import annotations

import json
import sys
import types

import pytest

from glauber.cli import main

#: What Ray 2.x says when ``ray.init(address="auto")`` finds no cluster.
RAY_NO_CLUSTER = (
    "Could not find any running Ray instance. Please specify the one to connect to by setting "
    "`--address` flag or `RAY_ADDRESS` environment variable."
)
COMPARE = ["--models", "ising-cycle:n=4", "--taus", "1", "--rectangles", "5", "--pairs", "1",
           "--budget", "5", "--contexts", "1", "--no-progress"]


def _fake_ray(fail: BaseException | None = None) -> types.ModuleType:
    ray = types.ModuleType("ray")
    ray.calls = []  # type: ignore[attr-defined]

    def init(address=None, **kw):
        ray.calls.append(address)  # type: ignore[attr-defined]
        if fail is not None:
            raise fail

    def remote(**kw):
        def wrap(fn):
            return types.SimpleNamespace(remote=lambda cell: (fn, cell))
        return wrap

    ray.init, ray.remote = init, remote  # type: ignore[attr-defined]
    ray.is_initialized = lambda: False  # type: ignore[attr-defined]
    ray.get = lambda future: future[0](future[1])  # type: ignore[attr-defined]
    return ray


@pytest.mark.parametrize("position", ["before", "after"])
def test_ray_is_accepted_before_and_after_the_sub_command(monkeypatch, tmp_path, capsys,
                                                          position):
    ray = _fake_ray()
    monkeypatch.setitem(sys.modules, "ray", ray)
    out = tmp_path / position
    argv = (["--ray", "auto", "compare", *COMPARE, "--out", str(out)] if position == "before"
            else ["compare", *COMPARE, "--out", str(out), "--ray", "auto"])
    assert main(argv) == 0
    assert ray.calls == ["auto"]
    with_ray = json.loads((out / "compare.json").read_text())
    monkeypatch.delitem(sys.modules, "ray")
    assert main(["compare", *COMPARE, "--out", str(tmp_path / "local")]) == 0
    local = json.loads((tmp_path / "local" / "compare.json").read_text())
    assert with_ray["models"] == local["models"]  # the same cells, run through the fake Ray
    capsys.readouterr()


@pytest.mark.parametrize("argv", [["--ray", "auto", "compare"], ["compare", "--ray", "auto"]])
def test_no_cluster_is_one_line_in_glauber_terms(monkeypatch, tmp_path, capsys, argv):
    monkeypatch.setitem(sys.modules, "ray", _fake_ray(ConnectionError(RAY_NO_CLUSTER)))
    assert main([*argv, *COMPARE, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert err.startswith("glauber compare: error: --ray auto: Ray could not reach a cluster "
                          "(Could not find any running Ray instance)")
    assert "--address" not in err and "RAY_ADDRESS" not in err  # not glauber's options
    assert "ray start --head" in err


def test_ray_on_a_command_that_runs_in_process_names_the_commands_that_take_it(capsys):
    for argv in (["--ray", "verify"], ["verify", "--ray", "auto"]):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        # certify takes it for its exact chain's score table (the shards as Ray tasks)
        assert "--ray applies to alpha-curve, certify, compare, phase-diagram" in err
        assert "invalid choice" not in err
