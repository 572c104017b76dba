"""The ``glauber`` command as a careful user meets it: one-line errors, safe outputs, resumes.

Every case runs the real command in its own process and checks what a user sees: the exit code
(0 success, 1 runtime failure, 2 bad input, 130 Ctrl-C: ``glauber.cli``), exactly one line on
stderr (progress bars aside), no traceback, and the target of a refused write untouched (a FIFO
still a FIFO, a symlink still a link, a read-only file unchanged, nothing half-written).

Most cases fork a warm runner (one interpreter that has imported glauber; each case is a fresh
child process with its own stdout/stderr files and exit code), so the battery stays fast on one
core; the entry point itself (``python -m glauber.cli``), Ctrl-C and the lock between two live
runs use plain subprocesses. Models are tiny toys (``ising-cycle:n=6``: 64 states).
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from glauber import __version__

#: A server that forks one child per request: the child redirects fd 1 and 2 to files, runs
#: ``glauber.cli.main`` as the console script would (an uncaught exception prints its traceback
#: and exits 1), and the server answers with the child's exit status.
RUNNER = r"""
import json, os, sys, traceback
import glauber.cli, glauber.certify, glauber.verification
import glauber.experiments.alpha_curve, glauber.experiments.compare
import glauber.experiments.phase_diagram, glauber.experiments.trajectory
from glauber.experiments.common import pyplot
pyplot()
print("ready", flush=True)
for line in sys.stdin:
    req = json.loads(line)
    sys.stdout.flush(); sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.chdir(req["cwd"])
        for fd, name in ((1, req["out"]), (2, req["err"])):
            target = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(target, fd)
            os.close(target)
        try:
            code = glauber.cli.main(req["argv"])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if isinstance(exc.code, str):
                print(exc.code, file=sys.stderr)
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush(); sys.stderr.flush()
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"code": os.waitstatus_to_exitcode(status)}), flush=True)
"""

TOY = "ising-cycle:n=6"
FAST = ["--rectangles", "5", "--budget", "5", "--pairs", "1", "--contexts", "1"]
SMALL_RUN = ["--model", TOY, "--steps", "200", "--chains", "2", "--checkpoint-every", "100",
             "--window", "50", "--no-progress"]


class Result:
    """Exit code, stdout and the stderr lines a user reads (progress-bar redraws removed)."""

    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err
        # a tqdm bar redraws with carriage returns; what is left after the last one is text
        self.lines = [ln.rsplit("\r", 1)[-1].strip() for ln in err.split("\n")]
        self.lines = [ln for ln in self.lines if ln]

    def one_line_error(self, code: int, *needles: str) -> str:
        """Assert the exit code, a single ``glauber <cmd>: error:`` line holding ``needles``."""
        assert "Traceback" not in self.err, self.err
        assert self.code == code, (self.code, self.err)
        assert len(self.lines) == 1, self.lines
        line = self.lines[0]
        assert line.startswith("glauber ") and ": error: " in line, line
        for needle in needles:
            assert needle in line, (needle, line)
        return line


@pytest.fixture(scope="module")
def runner():
    proc = subprocess.Popen([sys.executable, "-c", RUNNER], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=_env())
    assert proc.stdout.readline().strip() == "ready"
    yield proc
    proc.stdin.close()
    proc.wait(timeout=30)


@pytest.fixture
def glauber(runner, tmp_path):
    """``glauber(*argv)`` runs the command in a fresh child process with ``tmp_path`` as cwd."""
    count = iter(range(1000))

    def run(*argv: str) -> Result:
        k = next(count)
        out, err = tmp_path / f".out{k}", tmp_path / f".err{k}"
        runner.stdin.write(json.dumps({"argv": list(argv), "cwd": str(tmp_path),
                                       "out": str(out), "err": str(err)}) + "\n")
        runner.stdin.flush()
        code = json.loads(runner.stdout.readline())["code"]
        # bytes, not read_text(): universal newlines would turn a bar's "\r" into a line break
        result = Result(code, out.read_bytes().decode(), err.read_bytes().decode())
        out.unlink()
        err.unlink()
        return result

    return run


def _env() -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env.pop("GLAUBER_DEBUG", None)
    return env


def _cli(*argv: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glauber.cli", *argv], capture_output=True,
                          text=True, env=_env(), timeout=120, **kw)


# ------------------------------------------------------------------ the entry point itself


def test_entry_point_one_line_error(tmp_path):
    bad = _cli("certify", "--model", TOY, "--json", str(tmp_path / "missing" / "x.json"))
    Result(bad.returncode, bad.stdout, bad.stderr).one_line_error(2, "does not exist")


def test_version(glauber):
    version = glauber("--version")
    assert version.code == 0 and version.out.strip() == f"glauber {__version__}"


def test_debug_shows_the_traceback(glauber):
    r = glauber("--debug", "verify", "--seed", "-1")
    assert r.code == 2 and "Traceback" in r.err and "--seed" in r.err


# ------------------------------------------------------------------------- unsafe targets


def test_fifo_is_refused_and_stays_a_fifo(glauber, tmp_path):
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    glauber("certify", "--model", TOY, "--json", str(fifo), *FAST).one_line_error(2, "FIFO")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_device_is_refused(glauber):
    before = os.stat("/dev/null")
    glauber("certify", "--model", TOY, "--json", "/dev/null", *FAST).one_line_error(2, "device")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert os.stat("/dev/null").st_ino == before.st_ino


def test_directory_is_refused(glauber, tmp_path):
    (tmp_path / "d").mkdir()
    glauber("certify", "--model", TOY, "--json", "d", *FAST).one_line_error(2, "directory")
    assert (tmp_path / "d").is_dir() and not any((tmp_path / "d").iterdir())


def test_read_only_file_is_refused_unchanged(glauber, tmp_path):
    target = tmp_path / "ro.json"
    target.write_text("keep me\n")
    target.chmod(0o444)
    glauber("certify", "--model", TOY, "--json", "ro.json", *FAST).one_line_error(2, "read-only")
    assert target.read_text() == "keep me\n" and stat.S_IMODE(target.stat().st_mode) == 0o444


def test_read_only_folder_fails_before_the_battery(glauber, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        r = glauber("verify", "--quick", "--json", "ro/v.json")
        r.one_line_error(2, "not writable")
        assert "==" not in r.out  # refused before the table was computed
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o755)


def test_symlink_is_written_through_and_stays_a_link(glauber, tmp_path):
    (tmp_path / "real.json").write_text("old\n")
    (tmp_path / "real.json").chmod(0o640)
    (tmp_path / "link.json").symlink_to("real.json")
    r = glauber("certify", "--model", TOY, "--json", "link.json", *FAST)
    assert r.code == 0 and "Traceback" not in r.err, r.err
    assert (tmp_path / "link.json").is_symlink()
    assert json.loads((tmp_path / "real.json").read_text())["model"].startswith("ising-cycle")
    assert stat.S_IMODE((tmp_path / "real.json").stat().st_mode) == 0o640
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # no leftovers


def test_new_file_keeps_the_umask_mode(glauber, tmp_path):
    r = glauber("certify", "--model", TOY, "--json", "new.json", *FAST)
    assert r.code == 0
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o666 & ~mask


@pytest.mark.parametrize("command", [
    ["alpha-curve", "--model", TOY, "--taus", "1"],
    ["compare", "--models", TOY, "--taus", "1"],
    ["phase-diagram", "--model", TOY, "--taus", "1", "--lengths", "6"],
    ["trajectory", "--model", TOY, "--steps", "10"],
])
def test_out_naming_a_file_or_a_read_only_folder(glauber, tmp_path, command):
    (tmp_path / "file").write_text("x")
    glauber(*command, "--out", "file", "--no-progress").one_line_error(2, "not a folder")
    assert (tmp_path / "file").read_text() == "x"
    (tmp_path / "ro").mkdir()
    (tmp_path / "ro").chmod(0o555)
    try:
        glauber(*command, "--out", "ro/run", "--no-progress").one_line_error(2, "not writable")
    finally:
        (tmp_path / "ro").chmod(0o755)
    assert not (tmp_path / "ro" / "run").exists()


def test_foreign_folder_is_not_overwritten(glauber, tmp_path):
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "trajectory.csv").write_text("mine\n")
    glauber("trajectory", *SMALL_RUN, "--out", "foreign").one_line_error(2, "trajectory.csv")
    assert (tmp_path / "foreign" / "trajectory.csv").read_text() == "mine\n"
    assert [p.name for p in (tmp_path / "foreign").iterdir()] == ["trajectory.csv"]


# ----------------------------------------------------------------------- ordinary mistakes


@pytest.mark.parametrize("argv, needle", [
    (["verify", "--seed", "-1"], "--seed"),
    (["certify", "--model", "curie-weiss:n=1000000"], "fewer sites"),
    (["trajectory", "--model", TOY, "--chains", "100000000", "--out", "t"], "--chains"),
    (["certify", "--model", TOY, "--dtype", "bfloat16"], "--dtype"),
    (["alpha-curve", "--model", TOY, "--taus", "1,1", "--out", "a"], "twice"),
    (["alpha-curve", "--model", TOY, "--taus", "1", "--length", "8", "--out", "a"], "n = 6"),
])
def test_mistakes_are_one_line(glauber, tmp_path, argv, needle):
    glauber(*argv).one_line_error(2, needle)
    assert not (tmp_path / "t").exists() and not (tmp_path / "a").exists()


def test_binary_states_file_is_one_line(glauber, tmp_path):
    (tmp_path / "states.bin").write_bytes(bytes(range(256)) * 4)
    glauber("certify", "--model", TOY, "--states", "states.bin").one_line_error(2, "UTF-8")


def test_help_texts(glauber):
    verify = glauber("verify", "--help")
    assert verify.code == 0 and "THEORY" + ".md" not in verify.out  # no file outside the repo
    assert all(name in verify.out for name in ("thm5-corrected", "prop4", "thm8-escape"))
    compare = glauber("compare", "--help")
    assert compare.code == 0 and "Markdown" in compare.out


def test_ctrl_c_prints_one_line_and_exits_130(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "glauber.cli", "trajectory", "--model", TOY, "--steps",
         "10000000", "--chains", "1", "--checkpoint-every", "100", "--out", "run",
         "--no-progress"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
        # A shell that starts jobs in the background (as CI runners may) hands them SIGINT
        # ignored, and Python then never raises KeyboardInterrupt: give the child the default.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    _wait_for(tmp_path / "run" / "checkpoint.json", proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert [ln for ln in err.splitlines() if ln.strip()] == ["glauber trajectory: interrupted"]


# ----------------------------------------------------------------------- --out and resume


def test_second_run_into_a_locked_folder_fails_at_once(glauber, tmp_path):
    first = subprocess.Popen(
        [sys.executable, "-m", "glauber.cli", "trajectory", "--model", TOY, "--steps",
         "10000000", "--chains", "1", "--checkpoint-every", "100", "--out", "run",
         "--no-progress"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env())
    try:
        _wait_for(tmp_path / "run" / "checkpoint.json", first)
        glauber("trajectory", "--model", TOY, "--steps", "10000000", "--chains", "1",
                "--checkpoint-every", "100", "--out", "run", "--no-progress").one_line_error(
            1, "another glauber run", f"pid {first.pid}")
    finally:
        first.kill()
        first.wait()


def test_invalid_run_does_not_block_the_valid_rerun(glauber, tmp_path):
    base = ["alpha-curve", "--model", TOY, "--taus", "1", "--out", "x", "--no-progress"]
    glauber(*base, "--eps", "2").one_line_error(2, "--eps")
    assert not (tmp_path / "x").exists()
    r = glauber(*base, "--eps", "0.25")
    assert r.code == 0, r.err
    manifest = json.loads((tmp_path / "x" / "manifest.json").read_text())
    assert manifest["status"] == "finished" and manifest["config"]["eps"] == 0.25
    assert "alpha_curve.csv" in manifest["files"]


def test_estimated_alpha_curve_does_not_claim_a_certificate(glauber):
    r = glauber("alpha-curve", "--model", "curie-weiss:n=14", "--taus", "1,64", "--contexts",
                "2", "--out", "x", "--no-progress")  # 2^14 > 8192 states: sampled influences
    assert r.code == 0, r.err
    assert "certificate holds" not in r.out and "no certificate is proved" in r.out


def test_trajectory_resume_edge_cases(glauber, tmp_path):
    assert glauber("trajectory", *SMALL_RUN, "--out", "t").code == 0
    run = tmp_path / "t"
    summary = run / "trajectory_summary.json"
    stamp = summary.stat().st_mtime_ns
    again = glauber("trajectory", *SMALL_RUN, "--out", "t")
    assert again.code == 0 and summary.stat().st_mtime_ns == stamp  # finished: nothing redone

    glauber("trajectory", *SMALL_RUN[:3], "400", *SMALL_RUN[4:], "--out", "t").one_line_error(
        2, "differs in: steps")

    csv = (run / "trajectory.csv").read_bytes()
    (run / "trajectory.csv").write_bytes(csv[:40])
    (run / "manifest.json").unlink()  # as after a crash: the checkpoint decides
    glauber("trajectory", *SMALL_RUN, "--out", "t").one_line_error(2, "trajectory.csv", "shorter")
    assert (run / "trajectory.csv").read_bytes() == csv[:40]  # not padded with NUL bytes

    (run / "checkpoint.json").write_text('{"step": 1')
    glauber("trajectory", *SMALL_RUN, "--out", "t").one_line_error(2, "checkpoint.json")


def test_phase_diagram_rows_carry_the_length_they_ran(glauber, tmp_path):
    r = glauber("phase-diagram", "--model", TOY, "--taus", "1", "--lengths", "5",
                "--pairs", "2", "--budget", "20", "--no-exact", "--out", "p", "--no-progress")
    assert r.code == 0, r.err
    row = json.loads((tmp_path / "p" / "phase_diagram.json").read_text())["rows"][0]
    assert row["n"] == 5 and "n=5" in row["model"]


def test_compare_perfect_traps_column_is_a_count(glauber, tmp_path):
    r = glauber("compare", "--models", TOY, "--taus", "1", "--rectangles", "5", "--pairs", "1",
                "--budget", "5", "--contexts", "2", "--out", "c", "--no-progress")
    assert r.code == 0, r.err
    row = next(ln for ln in r.out.splitlines() if ln.startswith("| ising-cycle")
               and "/" in ln.split("|")[5])
    perfect, states = row.split("|")[5].split("/")
    assert 0 <= int(perfect) <= int(states)


def test_certificate_opens_with_the_verdict_and_legend(glauber):
    r = glauber("certify", "--model", TOY, "--tau", "0.25", *FAST)
    assert r.code == 0, r.err
    head = r.out.split("== model ==")[0]
    assert "== verdict ==" in head and "proved:" in head and "legend" in head
    assert "[held; RIGOROUS]" in head  # each label explained once, before the claims


def _wait_for(path: Path, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, "the run ended early"
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)
