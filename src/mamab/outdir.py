"""One writer per output directory, and only directories mamab may write in.

Every command that writes results into a directory (``mamab run --out``, ``sweep``,
``reproduce``, ``plot``, ``frontier`` and :func:`mamab.sweep`) holds the directory's lock
(``.mamab.lock``, an ``flock`` on that file) while it writes. A second writer is refused at once
in one line naming the directory and the process holding it; it does not wait, because the
holder may be running another specification (which would be refused anyway) or hours of work.
The kernel drops an ``flock`` when its process dies, even by SIGKILL, so a lock file left
behind by a killed process never blocks; its recorded owner is only information.

The lock file stays in place (deleting it on release would let two writers lock two different
files of one name) and marks the directory as mamab's: a non-empty directory holding neither it
nor mamab's ``metadata.json`` holds someone else's files, and is refused rather than overwritten.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Literal

from mamab.errors import ConfigError
from mamab.storage import check_out_dir, prepare_out_dir

LOCK_NAME = ".mamab.lock"
METADATA = "metadata.json"
Kind = Literal["sweep", "run"]

#: Locks this process holds: resolved directory -> [file descriptor, owning thread, depth].
_held: dict[Path, list[int]] = {}
_guard = threading.Lock()


def _close_in_child() -> None:
    """A forked worker does not keep its parent's locks: closing (never unlocking) its copies
    leaves the parent's lock in place and lets the lock die with the parent alone."""
    for fd, *_ in _held.values():
        with suppress(OSError):
            os.close(fd)
    _held.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_close_in_child)


def metadata_kind(directory: Path) -> Kind | None:
    """'sweep' or 'run' when ``directory/metadata.json`` was written by mamab, else None."""
    try:
        data = json.loads((directory / METADATA).read_text())
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("versions"), dict):
        return None
    if "mamab" not in data["versions"]:
        return None
    return "sweep" if "spec" in data else "run" if "config" in data else None


def check_ours(directory: Path, kind: Kind) -> None:
    """Refuse to write ``kind`` results into a directory holding files mamab did not write, or
    the other kind's results (a run's metadata.json would replace a sweep's, and back).

    Ours: missing or empty, holding mamab's lock file or metadata.json, or only ``tasks/`` (a
    sweep of an older mamab interrupted before its tables).
    """
    try:
        entries = {p.name for p in directory.iterdir()}
    except FileNotFoundError:
        return
    except NotADirectoryError:
        return  # check_out_dir names the file in the way
    except OSError as err:
        raise ConfigError(
            f"cannot read output directory {directory}: {err.strerror or err}"
        ) from None
    found = metadata_kind(directory)
    if found is not None and found != kind:
        held = "a sweep's tables" if found == "sweep" else "the results of `mamab run`"
        raise ConfigError(f"{directory} holds {held}; write the {kind} into another directory")
    if not entries or found is not None or LOCK_NAME in entries or entries <= {"tasks"}:
        return
    shown = ", ".join(sorted(entries)[:3]) + (", ..." if len(entries) > 3 else "")
    raise ConfigError(
        f"{directory} is not empty ({shown}) and was not written by mamab (no mamab "
        f"{METADATA}); mamab would overwrite files in it: use a new or empty directory"
    )


@contextmanager
def claimed(out: str | Path, kind: Kind = "sweep", create: bool = True) -> Iterator[Path]:
    """Hold the lock of output directory ``out`` (created if missing) for the ``with`` block.

    Checked first, creating nothing: that results can be written there and that the directory
    is mamab's (:func:`check_ours`). ``create=False`` (redrawing the figures of an existing
    results directory): lock it only when it holds mamab's results; otherwise the reader says
    what is wrong. Re-entrant in one thread (``reproduce`` holds it around ``run_sweep``).
    """
    directory = Path(out)
    if not create and (not directory.is_dir() or metadata_kind(directory) is None):
        yield directory
        return
    if create:
        check_out_dir(directory)
        check_ours(directory, kind)
        prepare_out_dir(directory)
    key = directory.resolve()
    with _guard:
        mine = _held.get(key)
        if mine is not None and mine[1] == threading.get_ident():
            mine[2] += 1
        else:
            mine = None
    if mine is not None:
        try:
            yield directory
        finally:
            with _guard:
                mine[2] -= 1
        return
    fd = _acquire(directory)
    with _guard:
        _held[key] = [fd, threading.get_ident(), 1]
    try:
        yield directory
    finally:
        with _guard:
            _held.pop(key, None)
        _release(fd)


def _acquire(directory: Path) -> int:
    """Open and flock ``directory/.mamab.lock`` without waiting; record who holds it."""
    import fcntl

    path = directory / LOCK_NAME
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o666)  # the umask applies
    except OSError as err:
        raise ConfigError(
            f"cannot lock {directory}: cannot open {path}: {err.strerror or err}"
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        os.close(fd)
        if err.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise ConfigError(f"cannot lock {directory}: {err.strerror or err}") from None
        raise ConfigError(
            f"{directory} is in use by another mamab process{_holder(path)}; wait for it to "
            "finish (rerunning then reuses its finished tasks) or use another output directory"
        ) from None
    owner = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(owner) + "\n").encode(), 0)
    except OSError:
        pass  # who holds the lock is information; the lock itself is held
    return fd


def _release(fd: int) -> None:
    import fcntl

    try:
        os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
    except OSError:
        pass
    finally:
        os.close(fd)


def _holder(path: Path) -> str:
    """' (pid 123 on host h since ...)' from the lock file, or '' when it says nothing."""
    try:
        owner = json.loads(path.read_text())
        return f" (pid {int(owner['pid'])} on host {owner['host']}, since {owner['since']})"
    except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError):
        return ""
