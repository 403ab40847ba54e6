"""Atomic writes of result files: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mamab.errors import ConfigError

if TYPE_CHECKING:  # numpy and pyarrow load with the first table: the writers stay light
    import pyarrow as pa

    from mamab.result import Result


def check_out_dir(path: str | Path) -> Path:
    """Check, before any work, that results can be written to ``path``; create and change nothing.

    Refused with one line: a file (or a dangling symlink, or a symlink loop) in the way, a
    directory (or, if it does not exist yet, the nearest existing parent) that is not writable.
    """
    out = Path(path)
    try:
        existing = out
        while True:
            try:
                existing.stat()
                break
            except FileNotFoundError:
                if existing.is_symlink():
                    raise ConfigError(f"output path {existing} is a dangling symlink") from None
                if existing.parent == existing:
                    raise
                existing = existing.parent
        if not existing.is_dir():
            raise ConfigError(f"output path {existing} is a file, not a directory")
        _probe(existing)
    except OSError as err:
        raise ConfigError(f"cannot write results to {out}: {err.strerror or err}") from None
    return out


def _probe(directory: Path) -> None:
    """Create and remove a temporary file: the one reliable writability test (read-only mounts,
    ACLs, root); leaves nothing behind."""
    fd, name = tempfile.mkstemp(dir=directory, prefix=".mamab-probe-")
    os.close(fd)
    os.unlink(name)


def prepare_out_dir(path: str | Path) -> Path:
    """Check ``path`` can hold results and create it if missing; never touches existing files."""
    out = check_out_dir(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ConfigError(f"cannot create output directory {out}: {err.strerror}") from None
    return out


def current_umask() -> int:
    """The process's umask, read without changing it where the kernel tells (Linux ≥ 4.7)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere: set and restore (not thread-safe, hence the /proc path)
    os.umask(mask)
    return mask


def _staged(path: Path) -> Path:
    """An empty temporary file beside ``path`` with the mode a plain ``open`` would give
    (0o666 minus the umask), not mkstemp's 0600: every file mamab writes honours the umask."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~current_umask())
    except OSError:
        os.close(fd)
        Path(tmp).unlink(missing_ok=True)
        raise
    os.close(fd)
    return Path(tmp)


def atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it into place.

    The file honours the umask (:func:`_staged`). Any OSError (read-only directory, full
    disk, ...) becomes a one-line ConfigError; the old file, if any, is left untouched and the
    temporary file removed.
    """
    write_files({path: write}, where=path)


def strict_json(data: object) -> str:
    """RFC 8259 JSON: a non-finite float (NaN, ±inf, which JSON cannot hold) becomes null."""
    return json.dumps(_finite(data), indent=2, sort_keys=False, allow_nan=False) + "\n"


def _finite(value: object) -> object:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def write_json(path: Path, data: dict) -> None:
    text = strict_json(data)
    atomic_write(path, lambda tmp: tmp.write_text(text))


def write_files(writers: dict[Path, Callable[[Path], None]], where: Path | None = None) -> None:
    """Write several files all or nothing: each to a temporary file beside it, then all renamed.

    Every file honours the umask (:func:`_staged`). If any write fails (a full disk: ENOSPC)
    the temporaries are removed and every file that existed before is left as it was; the
    OSError is raised as a one-line ConfigError naming ``where`` (default: the directory).
    """
    staged: list[tuple[Path, Path]] = []
    try:
        for path, write in writers.items():
            staged.append((_staged(path), path))
            write(staged[-1][0])
        for tmp, path in staged:
            os.replace(tmp, path)
    except OSError as err:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        if where is None:
            where = next(iter(writers)).parent if writers else Path("?")
            raise ConfigError(f"cannot write results to {where}: {err.strerror or err}") from None
        raise ConfigError(f"cannot write {where}: {err.strerror or err}") from None
    except BaseException:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        raise


def regret_table(result: Result) -> pa.Table:
    """Long table: one row per (run, agent, t) with the cumulative regret (``liar``: the agent
    was malicious; means over agents leave liars out)."""
    import numpy as np
    import pyarrow as pa

    runs, agents, points = result.regret.shape
    return pa.table(
        {
            "algorithm": pa.array(
                [result.config.algorithm] * (runs * agents * points)
            ).dictionary_encode(),
            "run": np.repeat(np.asarray(result.runs, dtype=np.int64), agents * points),
            "agent": np.tile(np.repeat(np.arange(agents, dtype=np.int64), points), runs),
            "t": np.tile(result.grid, runs * agents),
            "regret": result.regret.reshape(-1),
            "liar": np.repeat(~result.honest, points, axis=1).reshape(-1),
        }
    )


def write_parquet(path: Path, table: pa.Table) -> None:
    import pyarrow.parquet as pq

    atomic_write(path, lambda tmp: pq.write_table(table, tmp))
