"""The code fingerprint: a sha256 over the source of every module that can change a task's numbers.

It covers the agents, engine kernels, problem, topology, schedules, faults, seeding, simulate,
result, the task writer itself, ...: every ``.py`` file of the package except those that only
present or move results (the CLI, plots, reports, tables, executors, storage) or that a
simulation never imports (the live network: ``live/``, ``wire.py``). A new module counts by
default. It is computed once per process (a few hundred kB read once). Task files record it
(:mod:`mamab.experiments.provenance`) and the compiled kernels are cached under it
(:mod:`mamab.kernel_cache`); this module sits at the bottom of the package (standard library
only) so that both can use it.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

#: The package directory whose sources are fingerprinted.
PACKAGE = Path(__file__).parent
#: Modules that never change a task's numbers (paths relative to the package directory).
PRESENTATION = frozenset(
    {
        "__main__.py",
        "cli.py",
        "cli_params.py",
        "figure_text.py",
        "options.py",
        "plots.py",
        "storage.py",
        "suggest.py",
        "testing.py",
        "theory.py",
        "tomlfile.py",
        "versions.py",
        "wire.py",
    }
)
#: Packages a simulation never imports: the live network (nodes, transport, wire).
NOT_SIMULATED = ("live/",)
#: In experiments/ only the task writer (what a task file holds) counts.
EXPERIMENTS_COUNTED = frozenset({"experiments/tasks.py"})


def counted_sources(root: Path | None = None) -> list[Path]:
    """The source files the code fingerprint covers, in a fixed order."""
    root = root or PACKAGE
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


def fingerprint_of(root: Path) -> str:
    """sha256 (16 hex digits) over the names and bytes of the counted source files under ``root``."""
    digest = hashlib.sha256()
    for path in counted_sources(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


@functools.cache
def code_fingerprint() -> str:
    """The fingerprint of the mamab package this process runs (computed once per process)."""
    return fingerprint_of(PACKAGE)
