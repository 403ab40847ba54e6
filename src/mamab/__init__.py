"""mamab: cooperative multi-agent bandits under limited communication."""

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
from mamab.errors import ConfigError, InvalidMessage, InvalidObservation
from mamab.result import Result
from mamab.simulate import simulate

__version__ = "0.1.0"

__all__ = [
    "ALGORITHMS",
    "Agent",
    "AlgorithmParams",
    "Config",
    "ConfigError",
    "InvalidMessage",
    "InvalidObservation",
    "Message",
    "ReferenceEngineWarning",
    "Result",
    "__version__",
    "algorithm_metadata",
    "make_agents",
    "register_algorithm",
    "simulate",
    "unregister_algorithm",
]
