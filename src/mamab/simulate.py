"""simulate(config) -> Result: one entry point for every engine."""

from __future__ import annotations

from collections.abc import Callable

from mamab import resources
from mamab.algorithms.registry import announce_reference, engine_for
from mamab.config import ENGINES, Config
from mamab.errors import ConfigError
from mamab.instance import make_instance
from mamab.result import Result
from mamab.suggest import unknown
from mamab.timegrid import time_grid


def simulate(
    config: Config,
    engine: str = "fast",
    trace: bool = False,
    jobs: int | None = None,
    progress: Callable[[int], None] | None = None,
    allow_long: bool = False,
) -> Result:
    """Simulate every run of ``config``.

    ``engine`` is "fast" (numba kernels, runs spread over ``jobs`` threads, default all cores) or
    "reference" (the online agents); both give identical results. An algorithm without a fast
    kernel (a plugin) runs on the reference engine either way; the first time in a process,
    a :class:`~mamab.ReferenceEngineWarning` says so. ``result.engine`` names the engine used.
    ``trace`` also keeps each agent's arm at every step. Before any work, memory and time are
    estimated and work that cannot fit this machine is refused (:func:`mamab.resources.check`).
    Work estimated at more than 24 hours is refused unless ``allow_long=True`` (``--yes``).
    ``progress`` is called with the agent-steps done, block by block (a progress bar's ``update``).
    """
    if engine not in ENGINES:
        raise ConfigError(unknown("engine", engine, ENGINES))
    if engine_for(config.algorithm, engine) != engine:
        announce_reference(config.algorithm)
        engine = "reference"
    resources.check(resources.estimate(config, engine, jobs, trace), allow_long=allow_long)
    grid = time_grid(config.horizon, config.grid_points, config.grid_style)
    instances = [make_instance(config, run, progress) for run in config.run_ids]
    if engine == "reference":
        from mamab.engine.reference import run_reference

        parts = [run_reference(config, inst, grid, trace) for inst in instances]
    else:
        from mamab.engine.fast import run_fast

        parts = run_fast(config, instances, grid, trace, jobs)
    return Result.stack(config, grid, parts, engine)
