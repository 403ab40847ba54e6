"""The first run compiles the numba kernels (about 20 s); say so, or compile ahead.

numba caches each compiled kernel on disk, in the directory of the running code's fingerprint
(:mod:`mamab.kernel_cache`: a changed source is a new directory, so a fresh compile). When an
entry kernel's cache index is missing there the next run compiles it: :func:`compile_notice`
then prints one line on stderr, once per process (see :func:`cold` for kernels compiled
several times from one source), and ``mamab warmup`` (:func:`warmup`) compiles every kernel
ahead, with progress.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TextIO

from mamab.errors import ConfigError

NOTICE = "mamab: compiling kernels (first run only; `mamab warmup` compiles them all ahead)…"
_said = False


def _entry_kernels(module) -> list:
    """The module's top-level kernels: the numba dispatchers that release the GIL."""
    return [
        obj
        for obj in vars(module).values()
        if hasattr(obj, "_cache") and getattr(obj, "targetoptions", {}).get("nogil")
    ]


def _cached(kernel) -> bool:
    """Whether numba's on-disk cache holds an index for ``kernel`` (its locator points into this
    code's fingerprint directory: the kernel modules decorate through ``kernel_cache.njit``)."""
    try:
        index = kernel._cache._cache_file._index_path
    except AttributeError:  # another numba's internals: assume warm rather than cry wolf
        return True
    return Path(index).is_file()


def cold(algorithms: list[str]) -> bool:
    """Whether running any of ``algorithms`` on the fast engine will compile a kernel first.

    Entry kernels compiled from one source (the UCB baselines' for each kind of fault) count as
    one, warm when any is cached: which of them a run takes depends on its graph and faults, and
    a notice on every run of a user who never needs the others would cry wolf (the first run
    that needs one compiles it without the notice)."""
    sources: dict[object, bool] = {}
    for module in kernel_modules(algorithms):
        for kernel in _entry_kernels(module):
            code = getattr(kernel, "py_func", kernel).__code__
            sources[code] = sources.get(code, False) or _cached(kernel)
    return not all(sources.values())


def kernel_modules(algorithms: list[str]) -> list:
    """The kernel modules the fast engines of ``algorithms`` run (their specs say), imported as
    :func:`mamab.engine.fast.import_kernels` imports them (a plugin's under its cache key)."""
    from mamab.algorithms.registry import lookup
    from mamab.engine.fast import import_kernels

    modules: dict[str, object] = {}
    for name in algorithms:
        try:
            spec = lookup(name)
        except ConfigError:  # a name that fails to load is reported by the run
            continue
        for module in import_kernels(spec):
            modules[module.__name__] = module
    return [modules[name] for name in sorted(modules)]


def compile_notice(algorithms: list[str], stream: TextIO | None = None) -> bool:
    """Print the compile notice (once per process) when a kernel cache is cold; True if printed."""
    global _said
    if _said or not algorithms or not cold(algorithms):
        return False
    _said = True
    print(NOTICE, file=stream or sys.stderr, flush=True)
    return True


def warmup_configs():
    """Tiny configurations that reach every entry kernel and signature: each algorithm, with and
    without faults (crashes, losses and delays are separate code paths)."""
    from mamab.algorithms.registry import builtin_names, supports_faults
    from mamab.config import Config

    for algorithm in builtin_names():
        yield Config(algorithm, agents=3, arms=6, horizon=64, graph="ring")
        if supports_faults(algorithm):
            yield Config(
                algorithm,
                agents=3,
                arms=6,
                horizon=64,
                graph="ring",
                loss=0.1,
                delay=0.1,
                crash_rate=0.01,
                recover_after=5,
            )
    # the UCB baselines' kernel for runs whose only fault is message loss
    yield Config("full-communication", agents=3, arms=6, horizon=64, graph="ring", loss=0.1)


def warmup_steps() -> Iterator[tuple[str, Callable[[], object]]]:
    """What ``mamab warmup`` runs, as (label, action): every configuration of
    :func:`warmup_configs` on the fast engine, then the graph diameter's kernels (a run on a large
    sparse graph computes its diameter exactly; a tiny ring never reaches that pass)."""
    from mamab.diameter import warm as warm_diameter
    from mamab.simulate import simulate

    for config in warmup_configs():
        yield config.algorithm, partial(simulate, config, engine="fast", jobs=1)
    yield "graph diameter", warm_diameter


def warmup(
    starting: Callable[[str], None] | None = None, done: Callable[[str], None] | None = None
) -> int:
    """Compile (or load from the cache) every kernel; returns the steps run.

    ``starting(label)`` and ``done(label)`` are called around each step (an algorithm's name, or
    "graph diameter").
    """
    count = 0
    for label, action in warmup_steps():
        if starting is not None:
            starting(label)
        action()
        if done is not None:
            done(label)
        count += 1
    return count
