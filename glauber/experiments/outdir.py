"""An experiment's ``--out`` folder: checked before the work, locked while written, with a manifest.

:func:`check_out_folder` refuses, before a model is loaded, an ``--out`` that names a file or a
folder that cannot be created or written. :class:`OutputFolder` then, around the run:

* takes an exclusive lock on ``out/.glauber.lock`` (``fcntl.flock``: released by the kernel when
  the process ends, even on ``kill -9``), so a second run into the same folder fails at once
  with :class:`~glauber.errors.OutputLockedError` instead of interleaving its rows; the lock file
  is removed when the run ends (a finished folder holds none);
* refuses a folder that holds files this experiment would overwrite but no trace of a glauber
  run (no ``manifest.json`` and no results log or checkpoint): foreign files are never replaced;
* writes ``manifest.json`` (experiment, configuration, command, glauber version, status
  ``running``/``finished`` and the output files), atomically, before anything else and again
  when the run finishes. The manifest holds no time stamps, so a resumed run leaves the same
  bytes as an uninterrupted one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import TracebackType
from typing import Any, Sequence

from glauber.core.arrays import jsonable
from glauber.core.io import atomic_write_text
from glauber.errors import OutputLockedError, OutputPathError, ResumeMismatchError
from glauber.experiments.checkpoint import dumps

#: Name of the manifest of an output folder.
MANIFEST = "manifest.json"
#: Name of the lock file of an output folder.
LOCK = ".glauber.lock"


def check_out_folder(out: str | os.PathLike[str]) -> Path:
    """Check that ``out`` is (or can be created as) a writable folder; return it as a Path.

    Raises
    ------
    OutputPathError
        If ``out`` is a file (or another non-folder), or it or its nearest existing parent
        folder is not writable.
    """
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise OutputPathError(f"--out {out} is a file, not a folder; name a folder (new or "
                              "from an earlier run of the same command)")
    here = path
    while not here.exists():
        if here.parent == here:
            break
        here = here.parent
    if not here.is_dir():
        raise OutputPathError(f"--out {out}: {here} is not a folder, so the folder cannot be "
                              "created; choose another --out")
    if not os.access(here, os.W_OK | os.X_OK) or not os.stat(here).st_mode & 0o222:
        what = "the folder" if here == path else f"its parent folder {here}"
        raise OutputPathError(f"--out {out}: {what} is not writable; choose a writable --out "
                              "or change its permissions")
    return path


class OutputFolder:
    """The ``--out`` folder of one run, as a context manager (see the module docstring).

    Parameters
    ----------
    out : path
        The folder (created with its parents if missing).
    experiment : str
        The experiment's name (``"trajectory"``); a folder of another experiment is refused.
    config : dict
        The run's configuration (recorded in the manifest).
    outputs : sequence of str
        The files the run writes (the manifest lists them; a folder holding any of them and no
        trace of a glauber run is refused).
    state : str
        The file that makes a run resumable (the results log, ``checkpoint.json``).
    command : str, optional
        The command line, for provenance.

    Raises
    ------
    OutputPathError
        See :func:`check_out_folder`; also a folder holding files it would overwrite that no
        glauber run wrote.
    OutputLockedError
        If another process holds the folder's lock.
    ResumeMismatchError
        If the folder holds a run of another experiment.
    """

    def __init__(
        self,
        out: str | os.PathLike[str],
        experiment: str,
        config: dict,
        outputs: Sequence[str],
        state: str,
        command: str | None = None,
    ) -> None:
        self.path = check_out_folder(out)
        self.experiment = experiment
        self.config = jsonable(config)
        self.outputs = list(outputs)
        self.state = state
        self.command = command
        self._lock: Any = None
        #: The manifest found when the run started (None: a new folder).
        self.previous_manifest: dict | None = None

    def __enter__(self) -> "OutputFolder":
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputPathError(f"--out {self.path}: cannot create the folder: "
                                  f"{exc.strerror or exc}") from exc
        fresh = not (self.path / LOCK).exists()
        self._acquire()
        try:
            self._check_owner()
            self.write_manifest("running")
        except BaseException:
            if fresh:  # leave a refused folder as it was
                (self.path / LOCK).unlink(missing_ok=True)
            self._release()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if kind is None:
                self.write_manifest("finished")
        finally:
            if self._lock is not None:  # removed while held: no folder keeps a stale lock file
                (self.path / LOCK).unlink(missing_ok=True)
            self._release()

    def read_manifest(self) -> dict | None:
        """The folder's manifest, or None when there is none (or it is not readable JSON)."""
        try:
            value = json.loads((self.path / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    def write_manifest(self, status: str) -> None:
        """Write ``manifest.json`` with ``status`` (``"running"`` or ``"finished"``)."""
        from glauber import __version__

        atomic_write_text(self.path / MANIFEST, dumps({
            "experiment": self.experiment, "status": status, "config": self.config,
            "command": self.command, "glauber": __version__,
            "files": [name for name in [self.state, *self.outputs]
                      if (self.path / name).exists()],
        }) + "\n")

    def _check_owner(self) -> None:
        manifest = self.previous_manifest = self.read_manifest()
        if manifest is not None and manifest.get("experiment") not in (None, self.experiment):
            raise ResumeMismatchError(
                f"{self.path} holds a {manifest.get('experiment')} run, not a {self.experiment} "
                "run; choose another --out folder"
            )
        if manifest is not None or (self.path / self.state).exists():
            return
        foreign = [name for name in self.outputs if (self.path / name).exists()]
        if foreign:
            raise OutputPathError(
                f"--out {self.path} already holds {', '.join(foreign)} that no glauber run "
                f"wrote (no {MANIFEST}); choose an empty or new --out folder, or move them away"
            )

    def _acquire(self) -> None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover (Windows: no advisory locks, run unlocked)
            return
        path = self.path / LOCK
        while True:
            try:
                fh = open(path, "a+", encoding="ascii")
            except OSError as exc:
                raise OutputPathError(f"--out {self.path}: cannot create its lock file: "
                                      f"{exc.strerror or exc}") from exc
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                fh.seek(0)
                holder = fh.read().strip()
                fh.close()
                raise OutputLockedError(
                    f"another glauber run{f' (pid {holder})' if holder else ''} is writing into "
                    f"{self.path}; wait for it to finish or choose another --out folder"
                ) from None
            if _same_file(fh, path):
                break
            fh.close()  # locked a file that a finishing run removed meanwhile: lock the new one
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        self._lock = fh

    def _release(self) -> None:
        if self._lock is not None:
            self._lock.close()  # closing the descriptor releases the flock
            self._lock = None


def _same_file(fh: Any, path: Path) -> bool:
    """``fh`` is still the file at ``path`` (not one unlinked since it was opened)."""
    try:
        return os.path.samestat(os.fstat(fh.fileno()), os.stat(path))
    except OSError:
        return False


__all__ = ["LOCK", "MANIFEST", "OutputFolder", "check_out_folder"]
