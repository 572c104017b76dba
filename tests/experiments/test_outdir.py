"""Output folders (lock, manifest, foreign files), results-log take-over, grids, size checks."""

from __future__ import annotations

import json

import pytest

from glauber.core.memory import check_fits, human_bytes
from glauber.errors import (
    InvalidParameterError,
    OutputLockedError,
    OutputPathError,
    ResourceLimitError,
    ResumeMismatchError,
    SequenceLengthError,
)
from glauber.experiments.checkpoint import ResultsLog, differing_fields
from glauber.experiments.common import check_length, parse_floats, parse_ints, parse_names
from glauber.experiments.outdir import LOCK, MANIFEST, OutputFolder, check_out_folder


def _folder(path, experiment="demo", config=None):
    return OutputFolder(path, experiment, config or {"a": 1}, ["out.csv"], "log.jsonl", "cmd")


def test_manifest_records_the_run_and_its_status(tmp_path):
    with _folder(tmp_path / "run") as folder:
        assert json.loads((tmp_path / "run" / MANIFEST).read_text())["status"] == "running"
        (folder.path / "out.csv").write_text("x\n")
    manifest = json.loads((tmp_path / "run" / MANIFEST).read_text())
    assert manifest == {**manifest, "experiment": "demo", "status": "finished",
                        "config": {"a": 1}, "command": "cmd", "files": ["out.csv"]}


def test_a_failed_run_stays_running_in_the_manifest(tmp_path):
    with pytest.raises(RuntimeError), _folder(tmp_path):
        raise RuntimeError("boom")
    assert json.loads((tmp_path / MANIFEST).read_text())["status"] == "running"


def test_no_lock_file_is_left_behind(tmp_path):
    with _folder(tmp_path / "run"):
        assert (tmp_path / "run" / LOCK).exists()  # held while the run writes
    assert LOCK not in {p.name for p in (tmp_path / "run").iterdir()}
    with pytest.raises(RuntimeError), _folder(tmp_path / "run"):
        raise RuntimeError("boom")
    assert LOCK not in {p.name for p in (tmp_path / "run").iterdir()}


def test_a_lock_file_removed_while_being_locked_is_not_trusted(tmp_path):
    """Between opening the lock file and locking it, a finishing run may remove it; the lock
    then holds nothing, and the next run must lock the file that is there."""
    from glauber.experiments.outdir import _same_file

    path = tmp_path / LOCK
    with open(path, "a+") as fh:
        assert _same_file(fh, path)
        path.unlink()
        assert not _same_file(fh, path)
        path.write_text("")
        assert not _same_file(fh, path)


def test_second_writer_is_locked_out_until_the_first_ends(tmp_path):
    with _folder(tmp_path):
        with pytest.raises(OutputLockedError, match="another glauber run"), _folder(tmp_path):
            pass
    with _folder(tmp_path):  # released: the next run goes ahead
        pass


def test_foreign_files_are_refused_and_left_alone(tmp_path):
    (tmp_path / "out.csv").write_text("theirs\n")
    with pytest.raises(OutputPathError, match="out.csv"), _folder(tmp_path):
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]
    assert LOCK not in {p.name for p in tmp_path.iterdir()}


def test_a_folder_of_another_experiment_is_refused(tmp_path):
    with _folder(tmp_path, "alpha-curve"):
        pass
    with pytest.raises(ResumeMismatchError, match="alpha-curve"), _folder(tmp_path, "compare"):
        pass


def test_out_must_be_a_folder(tmp_path):
    (tmp_path / "f").write_text("")
    with pytest.raises(OutputPathError, match="not a folder"):
        check_out_folder(tmp_path / "f")
    with pytest.raises(OutputPathError):
        check_out_folder(tmp_path / "f" / "below")
    assert check_out_folder(tmp_path / "new" / "deeper") == tmp_path / "new" / "deeper"


def test_a_log_without_results_is_taken_over(tmp_path):
    ResultsLog(tmp_path / "r.jsonl", {"eps": 2.0})  # an invalid run: header only
    log = ResultsLog(tmp_path / "r.jsonl", {"eps": 0.25})
    log.append("a", {"v": 1})
    header = json.loads((tmp_path / "r.jsonl").read_text().splitlines()[0])["header"]
    assert header["config"] == {"eps": 0.25}
    with pytest.raises(ResumeMismatchError, match=r"differs in: eps\)"):
        ResultsLog(tmp_path / "r.jsonl", {"eps": 0.5})


def test_differing_fields_compare_values_as_json():
    assert differing_fields({"a": 1, "b": [1.0]}, {"a": 1, "b": [1.0], "c": None}) == []
    assert differing_fields({"a": 1, "b": 2}, {"a": 1, "b": 3, "d": 0}) == ["b", "d"]
    assert differing_fields(None, {"a": 1}) == ["a"]


def test_grids_refuse_repeated_values():
    with pytest.raises(InvalidParameterError, match="lists 1 twice"):
        parse_floats("1,0.5,1.0", "taus")
    with pytest.raises(InvalidParameterError, match="lists 8 twice"):
        parse_ints("8,16,8", "lengths")
    with pytest.raises(InvalidParameterError, match="twice"):
        parse_names("ising-cycle:n=4,J=1,ising-cycle:n=4,J=1", "models")
    assert parse_names("ising-cycle:n=4,J=1,antiberty", "models") == [
        "ising-cycle:n=4,J=1", "antiberty"]


def test_length_must_agree_with_an_explicit_toy_n():
    assert check_length("ising-cycle", 12) == 12  # no n in the spec: --length sets it
    assert check_length("ising-cycle:n=6", 6) == 6
    assert check_length("antiberty", 30) == 30
    with pytest.raises(SequenceLengthError, match="sets n = 6"):
        check_length("ising-cycle:n=6,J=1.0", 8)


def test_check_fits_refuses_what_cannot_fit():
    check_fits(1, "one byte", "nothing to change")
    with pytest.raises(ResourceLimitError, match="fewer"):
        check_fits(2.0 ** 80, "a yobibyte", "use fewer sites")
    assert human_bytes(1536) == "1.5 KiB" and human_bytes(12) == "12 B"
