"""Atomic files and resumable per-cell result logs.

Every file is written with :func:`glauber.core.io.atomic_write_text` (a temporary sibling moved
into place): a reader (or a resumed run) sees the old file or the new one, never a partial row. A
:class:`ResultsLog` is a JSON-lines file whose first line is a header
recording the configuration (command line, model, grids, seed) and its hash; resuming with a
different configuration raises :class:`~glauber.errors.ResumeMismatchError`.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterator

from glauber.core.arrays import jsonable
from glauber.core.io import atomic_write_text
from glauber.errors import ResumeMismatchError

#: Version of the log format; part of every header.
LOG_FORMAT = 1


def dumps(value: Any) -> str:
    """Canonical JSON of ``value`` (sorted keys, no spaces, strict: ``inf`` as ``"inf"``)."""
    return json.dumps(jsonable(value), sort_keys=True, separators=(",", ":"), allow_nan=False)


def differing_fields(old: Any, new: Any) -> list[str]:
    """The keys whose values differ between two configurations (compared as canonical JSON)."""
    old = old if isinstance(old, dict) else {}
    new = jsonable(new) if isinstance(new, dict) else {}
    return sorted(k for k in set(old) | set(new) if dumps(old.get(k)) != dumps(new.get(k)))


def config_hash(config: dict) -> str:
    """SHA-256 (hex, 16 characters) of the canonical JSON of ``config``."""
    return hashlib.sha256(dumps(config).encode("utf-8")).hexdigest()[:16]


class ResultsLog:
    """A resumable JSON-lines log of per-cell results.

    Line 1 is ``{"header": {"format", "config", "config_hash", "command"}}``; every further line
    is ``{"cell": key, "result": {...}}``. Each :meth:`append` rewrites the file atomically, so
    the log never holds a partial row, and a re-opened log knows which cells are done.

    Parameters
    ----------
    path : path
        The ``.jsonl`` file (created with its folder if missing).
    config : dict
        Everything that determines the results (model, grids, budgets, seed). Execution details
        (executor, progress bars, output folder) must not be in it.
    command : str, optional
        The command line, recorded in the header for provenance (not hashed).

    Raises
    ------
    ResumeMismatchError
        If ``path`` exists and holds results of a different configuration, or is not a log.
        A log with no results yet is taken over by the new configuration (an invalid or
        interrupted first run never blocks the valid rerun).
    """

    def __init__(
        self, path: str | os.PathLike[str], config: dict, command: str | None = None
    ) -> None:
        self.path = Path(path)
        self.config = jsonable(config)
        self.hash = config_hash(self.config)
        self._rows: dict[str, dict] = {}
        header = {"format": LOG_FORMAT, "config": self.config, "config_hash": self.hash,
                  "command": command}
        if self.path.exists():
            self._header_line, self._rows = self._read_existing()
        else:
            self._header_line = dumps({"header": header})
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(self.path, self._header_line + "\n")

    def _read_existing(self) -> tuple[str, dict[str, dict]]:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
            header = json.loads(lines[0])["header"]
            rows = {}
            for line in lines[1:]:
                rec = json.loads(line)
                rows[rec["cell"]] = rec["result"]
        except (IndexError, KeyError, TypeError, UnicodeDecodeError,
                json.JSONDecodeError) as exc:
            raise ResumeMismatchError(
                f"{self.path} is not a glauber results log ({type(exc).__name__}); delete it or "
                "choose another --out folder"
            ) from exc
        if header.get("config_hash") != self.hash:
            if not rows:  # nothing was computed for the old configuration: start afresh
                line = dumps({"header": {**header, "config": self.config,
                                         "config_hash": self.hash}})
                atomic_write_text(self.path, line + "\n")
                return line, {}
            changed = differing_fields(header.get("config"), self.config)
            raise ResumeMismatchError(
                f"{self.path} was written by a different configuration (differs in: "
                f"{', '.join(changed) or 'format'}); rerun with the original arguments to "
                "resume, or use a new --out folder"
            )
        return lines[0], rows

    @property
    def done(self) -> dict[str, dict]:
        """Finished cells: ``key -> result`` (a copy, in the order they were written)."""
        return dict(self._rows)

    def __contains__(self, key: str) -> bool:
        return key in self._rows

    def __iter__(self) -> Iterator[tuple[str, dict]]:
        return iter(list(self._rows.items()))

    def append(self, key: str, result: dict) -> None:
        """Record the result of cell ``key`` (atomically rewrites the whole log)."""
        self._rows[key] = jsonable(result)
        body = [self._header_line] + [dumps({"cell": k, "result": v}) for k, v in self._rows.items()]
        atomic_write_text(self.path, "\n".join(body) + "\n")


__all__ = ["ResultsLog", "config_hash", "differing_fields", "dumps"]
