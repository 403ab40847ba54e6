"""Atomic writes of result files: a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mamab.errors import ConfigError
from mamab.result import Result


def prepare_out_dir(path: str | Path) -> Path:
    """Check ``path`` can hold results (create it if missing); never touches existing files."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"output path {out} is a file, not a directory")
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


def atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it into place.

    The file gets the mode a plain ``open`` would give (0o666 minus the umask), not mkstemp's
    0600. Any OSError (read-only directory, full disk, ...) becomes a one-line ConfigError; the
    old file, if any, is left untouched and the temporary file removed.
    """
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as err:
        raise ConfigError(f"cannot write {path}: {err.strerror or err}") from None
    os.close(fd)
    try:
        os.chmod(tmp, 0o666 & ~current_umask())
        write(Path(tmp))
        os.replace(tmp, path)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise ConfigError(f"cannot write {path}: {err.strerror or err}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path, data: dict) -> None:
    text = json.dumps(data, indent=2, sort_keys=False) + "\n"
    atomic_write(path, lambda tmp: tmp.write_text(text))


def regret_table(result: Result) -> pa.Table:
    """Long table: one row per (run, agent, t) with the cumulative regret."""
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
        }
    )


def write_parquet(path: Path, table: pa.Table) -> None:
    atomic_write(path, lambda tmp: pq.write_table(table, tmp))
