"""Provenance written beside results: config, seeds and the versions that produced them."""

from __future__ import annotations

import platform
from importlib.metadata import PackageNotFoundError, version

from mamab.result import Result

PACKAGES = ("mamab", "numpy", "numba", "networkx", "pyarrow")


def package_versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    return found


def provenance(result: Result) -> dict:
    """Metadata of a result: what ran, on which seeds, with which software."""
    return {
        "config": result.config.to_dict(),
        "in_force": result.in_force(),  # alpha, K', sub-epochs, diameter, degree actually used
        "engine": result.engine,
        "grid": result.grid.tolist(),
        "seeds": result.seeds(),
        "versions": package_versions(),
    }
