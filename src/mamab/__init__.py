"""mamab: cooperative multi-agent bandits under limited communication.

Names are imported on first use, so ``import mamab`` (and ``mamab --help``) stays fast: numpy,
networkx, numba, pyarrow and matplotlib load only where they are needed.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

#: public name -> module that defines it
_EXPORTS = {
    "ALGORITHMS": "mamab.agents",
    "Agent": "mamab.agents",
    "AlgorithmParams": "mamab.agents",
    "Message": "mamab.agents",
    "make_agents": "mamab.agents",
    "ReferenceEngineWarning": "mamab.algorithms.registry",
    "algorithm_metadata": "mamab.algorithms.registry",
    "algorithm_spec": "mamab.algorithms.registry",
    "register": "mamab.algorithms.registry",
    "register_algorithm": "mamab.algorithms.registry",
    "unregister_algorithm": "mamab.algorithms.registry",
    "AlgorithmSpec": "mamab.algorithms.spec",
    "FastEngine": "mamab.algorithms.spec",
    "WireFormat": "mamab.algorithms.spec",
    "MessageKind": "mamab.algorithms.spec",
    "Cost": "mamab.algorithms.spec",
    "Parameter": "mamab.algorithms.spec",
    "KERNEL_API": "mamab.algorithms.spec",
    "Config": "mamab.config",
    "ConfigError": "mamab.errors",
    "InvalidMessage": "mamab.errors",
    "InvalidObservation": "mamab.errors",
    "PluginError": "mamab.errors",
    "Result": "mamab.result",
    "simulate": "mamab.simulate",
    "plot": "mamab.plots",
    "sweep": "mamab.experiments",
}

__all__ = [
    "ALGORITHMS",
    "KERNEL_API",
    "Agent",
    "AlgorithmParams",
    "AlgorithmSpec",
    "Config",
    "ConfigError",
    "Cost",
    "FastEngine",
    "InvalidMessage",
    "InvalidObservation",
    "Message",
    "MessageKind",
    "Parameter",
    "PluginError",
    "ReferenceEngineWarning",
    "Result",
    "WireFormat",
    "__version__",
    "algorithm_metadata",
    "algorithm_spec",
    "make_agents",
    "plot",
    "register",
    "register_algorithm",
    "simulate",
    "sweep",
    "unregister_algorithm",
]

if TYPE_CHECKING:
    from mamab.agents import ALGORITHMS, Agent, AlgorithmParams, Message, make_agents
    from mamab.algorithms.registry import (
        ReferenceEngineWarning,
        algorithm_metadata,
        algorithm_spec,
        register,
        register_algorithm,
        unregister_algorithm,
    )
    from mamab.algorithms.spec import (
        KERNEL_API,
        AlgorithmSpec,
        Cost,
        FastEngine,
        MessageKind,
        Parameter,
        WireFormat,
    )
    from mamab.config import Config
    from mamab.errors import ConfigError, InvalidMessage, InvalidObservation, PluginError
    from mamab.experiments import sweep
    from mamab.plots import plot
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
