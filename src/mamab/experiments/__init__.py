"""Experiments as data: sweep specifications, paper presets, the resumable runner and reports."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from mamab.experiments.spec import (
    PRESETS,
    Experiment,
    SweepSpec,
    load_preset,
    load_spec,
    parse_spec,
)

if TYPE_CHECKING:
    from mamab.experiments.executors import Executor
    from mamab.experiments.runner import SweepOutcome

__all__ = ["Experiment", "SweepSpec", "load_preset", "load_spec", "sweep"]


def sweep(
    spec: SweepSpec | dict[str, Any] | str | Path,
    out: str | Path | None = None,
    jobs: int | None = None,
    progress: bool | None = None,
    executor: Executor | None = None,
    allow_long: bool = False,
) -> SweepOutcome:
    """Run a sweep from Python, exactly as ``mamab sweep --no-figures`` does, and return its
    outcome (``mamab.plots.draw_all(outcome.results, out)`` then draws what ``mamab sweep`` draws).

    ``spec`` is a sweep TOML file, a preset name ('paper', 'paper-quick'), the TOML document
    as a dict (which may hold networkx graphs under ``graph``) or a :class:`SweepSpec`.
    Results go to ``out`` (default ``<name>-results``): task files, ``curves.parquet``,
    ``finals.parquet``, ``summary.csv``, ``metadata.json``; rerunning resumes. ``jobs`` worker
    processes (default: all cores); ``progress`` shows a bar on a terminal and a plain line
    every 30 s elsewhere (default; False: nothing). A sweep estimated at more than 24 hours is
    refused unless ``allow_long=True`` (``mamab sweep --yes``). The outcome holds ``summary`` (the rows of summary.csv), ``results`` (per
    configuration arrays) and ``directory``; ``outcome.curves()`` / ``outcome.finals()`` read
    the long tables as pandas DataFrames.
    """
    from mamab.experiments.runner import run_sweep

    if isinstance(spec, dict):
        spec = parse_spec(spec, "sweep")
    elif isinstance(spec, str | Path):
        spec = (
            load_preset(spec)
            if str(spec) in PRESETS and not Path(spec).exists()
            else load_spec(spec)
        )
    elif not isinstance(spec, SweepSpec):
        raise TypeError(f"spec must be a SweepSpec, a dict or a path, not {type(spec).__name__}")
    return run_sweep(
        spec,
        out or Path(f"{spec.name}-results"),
        executor=executor,
        jobs=jobs,
        progress=progress,
        allow_long=allow_long,
    )
