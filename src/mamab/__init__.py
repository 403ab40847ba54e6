"""mamab: cooperative multi-agent bandits under limited communication.

Names are imported on first use, so ``import mamab`` (and ``mamab --help``) stays fast: numpy,
networkx, numba, pyarrow and matplotlib load only where they are needed.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name -> module that defines it
_EXPORTS = {
    "ALGORITHMS": "mamab.agents",
    "Agent": "mamab.agents",
    "AlgorithmParams": "mamab.agents",
    "Message": "mamab.agents",
    "make_agents": "mamab.agents",
    "ReferenceEngineWarning": "mamab.agents",
    "algorithm_metadata": "mamab.agents",
    "register_algorithm": "mamab.agents",
    "unregister_algorithm": "mamab.agents",
    "Config": "mamab.config",
    "ConfigError": "mamab.errors",
    "InvalidMessage": "mamab.errors",
    "InvalidObservation": "mamab.errors",
    "PluginError": "mamab.errors",
    "Result": "mamab.result",
    "simulate": "mamab.simulate",
    "sweep": "mamab.experiments",
}

__all__ = [
    "ALGORITHMS",
    "Agent",
    "AlgorithmParams",
    "Config",
    "ConfigError",
    "InvalidMessage",
    "InvalidObservation",
    "Message",
    "PluginError",
    "ReferenceEngineWarning",
    "Result",
    "__version__",
    "algorithm_metadata",
    "make_agents",
    "register_algorithm",
    "simulate",
    "sweep",
    "unregister_algorithm",
]

if TYPE_CHECKING:
    from mamab.agents import (
        ALGORITHMS,
        Agent,
        AlgorithmParams,
        Message,
        ReferenceEngineWarning,
        algorithm_metadata,
        make_agents,
        register_algorithm,
        unregister_algorithm,
    )
    from mamab.config import Config
    from mamab.errors import ConfigError, InvalidMessage, InvalidObservation, PluginError
    from mamab.experiments import sweep
    from mamab.result import Result
    from mamab.simulate import simulate


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mamab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once: later look-ups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


class _Package(types.ModuleType):
    """Keeps ``mamab.simulate`` the function when the submodule of that name is imported.

    Importing ``mamab.simulate`` binds the module as an attribute of the package; an eager
    ``from mamab.simulate import simulate`` used to rebind it, a lazy export must refuse it.
    """

    def __setattr__(self, name: str, value: object) -> None:
        if isinstance(value, types.ModuleType) and _EXPORTS.get(name) == f"{__name__}.{name}":
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
