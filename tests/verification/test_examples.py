"""``glauber verify --examples N``: random models from glauber.testing, per family, and --jobs."""

from __future__ import annotations

import collections
import json
import subprocess
import sys

import pytest

from glauber.cli import main
from glauber.testing import FAMILIES
from glauber.verification import STATEMENTS_BY_NAME, run_statements
from glauber.verification.random_battery import GROUPS, build_random_battery


def test_every_family_gets_n_models_at_two_temperatures_with_their_specs():
    battery = build_random_battery(3, seed=0)
    per_group = collections.Counter(i.family for i in battery)
    assert set(per_group) == set(GROUPS) and set(FAMILIES) <= set(GROUPS)
    assert all(count == 2 * 3 for count in per_group.values())
    for instance in battery:
        spec = instance.model.spec
        assert repr(spec) in instance.name and spec.num_states <= 128
        base = spec.params["base"].family if spec.family == "restricted" else spec.family
        known = spec.compatible and base != "asym-ising"  # symmetric J: no log_weight
        assert (instance.log_weight is not None) == known
        assert sum(b.count is not None for b in instance.basins) == 2
    cycles = [i for i in battery if i.family == "ising-cycle"]
    assert all(i.ising.cycle and i.ising.zero_field and i.ising.uniform_coupling for i in cycles)


def test_same_seed_same_battery():
    a = [i.name for i in build_random_battery(2, seed=5)]
    assert a == [i.name for i in build_random_battery(2, seed=5)]
    assert a != [i.name for i in build_random_battery(2, seed=6)]


def test_jobs_give_the_same_checks():
    battery = build_random_battery(1, seed=1)
    statements = [STATEMENTS_BY_NAME[n] for n in ("prop1", "thm5-printed", "thm8-escape")]
    one = run_statements(statements, battery, progress=False)
    two = run_statements(statements, build_random_battery(1, seed=1), progress=False, jobs=2)
    assert [o.checks for o in one] == [o.checks for o in two]
    assert all(o.ok for o in one if o.statement.status != "refuted")


def test_command_with_examples_passes_and_reports_the_random_instances(tmp_path):
    path = tmp_path / "verify.json"
    argv = ["verify", "--quick", "--statement", "lemma6", "--json", str(path)]
    assert main(argv) == 0
    quick = json.loads(path.read_text())
    assert main([*argv, "--examples", "1"]) == 0
    report = json.loads(path.read_text())
    assert report["examples"] == 1 and "examples" not in quick
    added = report["rows"][0]["instances_checked"] - quick["rows"][0]["instances_checked"]
    assert added == 2 * len(GROUPS)


@pytest.mark.parametrize("argv", [["--examples", "0"], ["--jobs", "0"]])
def test_bad_counts_are_rejected(argv, capsys):
    assert main(["verify", "--quick", *argv]) == 2
    assert "must be >= 1" in capsys.readouterr().err


def test_examples_without_hypothesis_name_the_test_extra():
    code = ("import sys; sys.modules['hypothesis'] = None\n"
            "from glauber.cli import main\n"
            "sys.exit(main(['verify', '--quick', '--examples', '1']))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 2 and "glauber[test]" in run.stderr
