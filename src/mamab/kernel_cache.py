"""Where numba caches mamab's compiled kernels: one directory per code fingerprint.

numba's on-disk cache (``cache=True``) checks only the source file of the cached function, not
the modules it calls: edit a constant of :mod:`mamab.faults` that a kernel of
:mod:`mamab.algorithms.lcc.kernel` inlines and numba would go on loading the old kernel. So every
mamab kernel is cached in a directory named by the code fingerprint
(:func:`mamab.fingerprint.code_fingerprint`, the one task files record): changed sources, a new
directory, a fresh compile. Kernels are decorated with this module's :func:`njit`, which points
numba's cache there while numba's own ``njit`` picks a cache location (it does so when the
decorator is applied, at import), and only then: other numba users are not affected.

The directory is ``$NUMBA_CACHE_DIR/mamab/<fingerprint>`` when the user sets ``NUMBA_CACHE_DIR``,
else ``$XDG_CACHE_HOME/mamab/kernels/<fingerprint>`` (``~/.cache/mamab/kernels/<fingerprint>``),
never beside the sources, so a read-only installation caches too. When that directory cannot be
written, a temporary one serves this process (kernels then compile in every process). A new
fingerprint's directory prunes its siblings: the :data:`KEEP` most recently used stay, and so
does any used within :data:`IDLE` seconds. Deleting the whole cache directory is always safe.

A plugin's kernel (issue 19) can be cached under mamab's fingerprint with its own package's folded
in: :func:`key` takes extra fingerprints, and :func:`caching_under` decorates under them.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from mamab.fingerprint import code_fingerprint

#: Fingerprint directories kept however old (the most recently used ones).
KEEP = 8
#: A directory used within this many seconds is never pruned (a process may be using it).
IDLE = 24 * 3600
#: The file whose modification time says when a directory was last used.
STAMP = ".last-used"
_KEY = re.compile(r"[0-9a-f]{16}")
_lock = threading.RLock()
_active: Path | None = None  # this code's directory, once chosen
_scope: Path | None = None  # inside caching_under: the directory kernels are cached in


def key(*extra: str) -> str:
    """The cache key: mamab's code fingerprint, with ``extra`` fingerprints (a plugin's) folded in."""
    fingerprint = code_fingerprint()
    if not extra:
        return fingerprint
    digest = hashlib.sha256(fingerprint.encode())
    for part in extra:
        digest.update(b"\0" + part.encode())
    return digest.hexdigest()[:16]


def root() -> Path:
    """The directory holding one subdirectory per key (see the module docstring)."""
    user = os.environ.get("NUMBA_CACHE_DIR")
    if user:
        return Path(user).expanduser() / "mamab"
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "mamab" / "kernels"


def directory(*extra: str) -> Path:
    """The cache directory of this code (and of ``extra`` fingerprints)."""
    return root() / key(*extra)


def configure() -> Path:
    """This code's cache directory, created, checked writable and stamped once per process."""
    global _active
    with _lock:
        if _active is None:
            _active = _usable(directory)
        return _active


def njit(*args: Any, **options: Any) -> Any:
    """numba's ``njit``, caching under this code's directory (use it for every mamab kernel).

    numba picks a cached function's directory from its global ``CACHE_DIR`` when the decorator
    is applied; it is set for that moment only, so the numba functions of other libraries and
    of the user keep numba's own cache locations.
    """
    from numba import njit as numba_njit

    if args and callable(args[0]):  # njit(function, ...)
        with _numba_cache_dir():
            return numba_njit(*args, **options)
    decorate = numba_njit(*args, **options)

    def apply(function: Callable[..., Any]) -> Any:
        with _numba_cache_dir():
            return decorate(function)

    return apply


def njit_as(name: str, function: Callable[..., Any], **options: Any) -> Any:
    """``function`` jitted and cached (:func:`njit`) under ``name``: a factory that compiles one
    source several times, each with its own closure constants, gives each kernel a cache file of
    its own (numba names the file after the function's qualified name), so a missing one shows."""
    function.__name__ = function.__qualname__ = name
    return njit(cache=True, **options)(function)


@contextlib.contextmanager
def caching_under(*extra: str) -> Iterator[Path]:
    """Kernels decorated inside (a plugin's kernel module imported) cache under ``key(*extra)``."""
    global _scope
    with _lock:
        saved, _scope = _scope, _usable(lambda: directory(*extra))
        try:
            yield _scope
        finally:
            _scope = saved


@contextlib.contextmanager
def _numba_cache_dir() -> Iterator[None]:
    """numba's ``CACHE_DIR`` set to the directory in force (a plugin's scope, else this code's)."""
    from numba.core import config

    with _lock:
        saved = config.CACHE_DIR
        config.CACHE_DIR = str(_scope or configure())
        try:
            yield
        finally:
            config.CACHE_DIR = saved


def prune(base: Path, keep: int = KEEP, idle: float = IDLE) -> list[Path]:
    """Remove the fingerprint directories in ``base`` beyond the ``keep`` most recently used that
    have been idle for ``idle`` seconds; returns those removed."""
    try:
        found = [p for p in base.iterdir() if _KEY.fullmatch(p.name) and p.is_dir()]
    except OSError:
        return []
    found.sort(key=_last_used, reverse=True)
    now = time.time()
    removed = []
    for path in found[keep:]:
        if now - _last_used(path) > idle:
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _last_used(path: Path) -> float:
    for candidate in (path / STAMP, path):
        try:
            return candidate.stat().st_mtime
        except OSError:
            continue
    return 0.0


def _usable(where: Callable[[], Path]) -> Path:
    """``where()`` created, checked writable and stamped as used; else a temporary directory."""
    try:
        path = where()
        fresh = not path.is_dir()
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()  # writable, as numba will check
        (path / STAMP).touch()
    except (OSError, RuntimeError):  # RuntimeError: no home directory to find ~/.cache in
        path = Path(tempfile.mkdtemp(prefix="mamab-kernels-"))
        atexit.register(shutil.rmtree, path, ignore_errors=True)
        return path
    if fresh:
        prune(path.parent)
    return path
