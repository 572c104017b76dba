"""Safe output files: every file ``glauber`` writes goes through :func:`atomic_write_bytes`.

A file is written to a temporary sibling in the same folder, flushed and fsynced, then moved
into place with :func:`os.replace` (atomic on POSIX and Windows) and the folder is fsynced: a
reader, or a resumed run, sees the old file or the new one, never a partial one. On top of that:

* only regular files are written: a target that is a directory, a FIFO, a socket or a device is
  refused with :class:`~glauber.errors.OutputPathError` before anything is written;
* a symbolic link is written *through*: its target file is replaced and the link stays a link;
* an existing file that is read-only (no write bit) is refused, not silently replaced;
* a new file gets the mode ``0o666`` less the process umask (as ``open(path, "w")`` would); a
  replaced file keeps its own mode.

:func:`check_output_path` runs the same checks without writing, so a long run can refuse a bad
target before it starts.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from glauber.errors import OutputPathError


def check_output_path(path: str | os.PathLike[str]) -> Path:
    """Check that a regular file can be written at ``path``; return the real path to write.

    Symbolic links are followed (the file they point to is the one written).

    Raises
    ------
    OutputPathError
        If the path names a directory, FIFO, socket or device, an existing read-only file, or
        lies in a folder that does not exist or is not writable.
    """
    given = Path(path)
    target = Path(os.path.realpath(given))
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise OutputPathError(f"cannot write {given}: {exc.strerror}") from exc
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise OutputPathError(f"{given} is a directory; name a file inside it instead")
        if not stat.S_ISREG(st.st_mode):
            raise OutputPathError(
                f"{given} is not a regular file (a FIFO, socket or device); write the output to "
                "a regular file and copy it from there"
            )
        if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
            raise OutputPathError(
                f"{given} is read-only; make it writable (chmod u+w) or choose another file"
            )
    folder = target.parent
    if not folder.is_dir():
        raise OutputPathError(f"cannot write {given}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK) or not _writable_bits(folder):
        raise OutputPathError(f"cannot write {given}: the folder {folder} is not writable")
    return target


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to the regular file ``path`` atomically (see the module docstring).

    Raises
    ------
    OutputPathError
        If the target is refused (see :func:`check_output_path`) or the write fails (disk full,
        permission denied); the old file, if any, is then left as it was.
    """
    target = check_output_path(path)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        tmp = None
        _fsync_folder(target.parent)
    except OSError as exc:
        raise OutputPathError(f"cannot write {path}: {exc.strerror or exc}") from exc
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically (see :func:`atomic_write_bytes`)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def write_json_atomic(path: str | os.PathLike[str], value: Any, indent: int | None = 2) -> None:
    """Write the JSON-ready ``value`` as strict JSON atomically.

    Convert arrays and infinities first with :func:`~glauber.core.arrays.jsonable`; strict JSON
    has no NaN or infinity, so a stray one is an error rather than a silent ``null``.

    Raises
    ------
    OutputPathError
        See :func:`atomic_write_bytes`.
    ValueError
        If ``value`` holds NaN or an infinity (nothing is written then).
    """
    atomic_write_text(path, json.dumps(value, indent=indent, allow_nan=False) + "\n")


def cache_root() -> Path:
    """The folder of ``glauber``'s caches: ``$GLAUBER_CACHE``, else ``~/.cache/glauber``.

    Caches hold what can be recomputed (unpacked model checkpoints, score tables of exact
    window chains); deleting the folder is always safe.
    """
    root = os.environ.get("GLAUBER_CACHE") or Path.home() / ".cache" / "glauber"
    return Path(root).expanduser()


def _writable_bits(path: Path) -> bool:
    """Some write bit is set (``os.access`` says yes to root even in a read-only folder)."""
    try:
        return bool(os.stat(path).st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    except OSError:
        return False


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # some platforms cannot open folders; the rename is still atomic
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


__all__ = [
    "atomic_write_bytes",
    "atomic_write_text",
    "cache_root",
    "check_output_path",
    "write_json_atomic",
]
