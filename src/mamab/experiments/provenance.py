"""What produced a task file: the package version, the numerical libraries and a code fingerprint.

The code fingerprint (:func:`mamab.fingerprint.code_fingerprint`, re-exported here) is a sha256
over the source of every module that can change a task's numbers; the compiled kernels are
cached under it too (:mod:`mamab.kernel_cache`).
"""

from __future__ import annotations

import functools
from importlib.metadata import PackageNotFoundError, version

from mamab.fingerprint import code_fingerprint, counted_sources  # noqa: F401 (re-exported)


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
