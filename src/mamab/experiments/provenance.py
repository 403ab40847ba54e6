"""What produced a task file: the package version, the numerical libraries and a code fingerprint.

The fingerprint is a sha256 over the source of every module that can change a task's numbers
(agents, engine kernels, problem, topology, schedules, faults, seeding, simulate, result, the task
writer itself, ...): every ``.py`` file of the package except those that only present or move
results (the CLI, plots, reports, tables, executors, storage) or that a simulation never
imports (the live network: ``live/``, ``wire.py``). A new module counts by default.
It is computed once per process (a few hundred kB read once).
"""

from __future__ import annotations

import functools
import hashlib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import mamab

#: Modules that never change a task's numbers (paths relative to the package directory).
PRESENTATION = frozenset(
    {"__main__.py", "cli.py", "options.py", "plots.py", "storage.py", "testing.py", "theory.py",
     "tomlfile.py", "versions.py", "wire.py"}
)  # fmt: skip
#: Packages a simulation never imports: the live network (nodes, transport, wire).
NOT_SIMULATED = ("live/",)
#: In experiments/ only the task writer (what a task file holds) counts.
EXPERIMENTS_COUNTED = frozenset({"experiments/tasks.py"})


def counted_sources(root: Path | None = None) -> list[Path]:
    """The source files the code fingerprint covers, in a fixed order."""
    root = root or Path(mamab.__file__).parent
    files = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if (
            rel in PRESENTATION
            or rel.startswith(NOT_SIMULATED)
            or (rel.startswith("experiments/") and rel not in EXPERIMENTS_COUNTED)
        ):
            continue
        files.append(path)
    return files


@functools.cache
def code_fingerprint() -> str:
    """sha256 (16 hex digits) over the names and bytes of the counted source files."""
    root = Path(mamab.__file__).parent
    digest = hashlib.sha256()
    for path in counted_sources(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


@functools.cache
def _versions() -> dict[str, str]:
    found = {}
    for name in ("mamab", "numpy", "numba"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found


def current_provenance() -> dict[str, str]:
    """What this process writes into a task file (and expects of the task files it reuses)."""
    return {**_versions(), "code": code_fingerprint()}


def describe(provenance: object) -> str:
    """A short human description of a task file's provenance, for one-line messages."""
    if not isinstance(provenance, dict):
        return "no recorded provenance (written before mamab recorded it)"
    return f"mamab {provenance.get('mamab')!s}, code {provenance.get('code')!s}"
