"""The fast engine: each algorithm's spec brings a driver that feeds the run's noise blocks to
its numba kernels (:mod:`mamab.engine.recording` holds what every driver shares)."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from mamab.algorithms.registry import lookup, plugin_fingerprint, resolved_params
from mamab.algorithms.spec import AlgorithmSpec
from mamab.config import Config
from mamab.engine.recording import CHUNK, FastRun, Recording
from mamab.errors import ConfigError
from mamab.instance import Instance
from mamab.problem import block_steps
from mamab.result import RunResult

__all__ = ["CHUNK", "FastRun", "Recording", "import_kernels", "load_driver", "run_fast", "run_one"]


def run_fast(
    config: Config,
    instances: list[Instance],
    grid: np.ndarray,
    trace: bool = False,
    jobs: int | None = None,
) -> list[RunResult]:
    """Simulate each instance; runs go to ``jobs`` threads (the kernels release the GIL)."""
    workers = max(1, min(jobs or os.cpu_count() or 1, len(instances)))
    if workers == 1:
        return [run_one(config, inst, grid, trace) for inst in instances]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda inst: run_one(config, inst, grid, trace), instances))


def run_one(config: Config, instance: Instance, grid: np.ndarray, trace: bool = False) -> RunResult:
    """One run of ``config`` on ``instance`` with its spec's driver and kernels."""
    spec = lookup(config.algorithm)
    if spec.fast is None:  # simulate() falls back before getting here
        raise ConfigError(f"{config.algorithm} has no fast kernel; use the reference engine")
    driver = load_driver(spec)
    run = FastRun(
        config,
        instance,
        grid,
        trace,
        resolved_params(spec, config.params),
        spec.fast.settings,
        block_steps(config.agents, spec.fast.cache_blocks),
    )
    return driver(run)


def import_kernels(spec: AlgorithmSpec) -> list:
    """Import the spec's kernel modules (once per process): a plugin's under the kernel cache's
    key for its fingerprint (mamab's code and the plugin's own package), so a kernel decorated
    with :func:`mamab.kernel_cache.njit` is compiled again when either changes."""
    if spec.fast is None:
        return []
    if spec.source == "built-in":
        return [importlib.import_module(m) for m in spec.fast.kernels]
    from mamab import kernel_cache

    fingerprint = plugin_fingerprint(spec.name)
    with kernel_cache.caching_under(fingerprint["code"] if fingerprint else spec.name):
        return [importlib.import_module(m) for m in spec.fast.kernels]


def load_driver(spec: AlgorithmSpec) -> Callable:
    """The spec's fast driver, its kernels imported first (:func:`import_kernels`)."""
    import_kernels(spec)
    return spec.fast.load()  # type: ignore[union-attr]
