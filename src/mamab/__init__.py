"""mamab: cooperative multi-agent bandits under limited communication."""

from mamab.agents import ALGORITHMS, Agent, AlgorithmParams, Message, make_agents
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
    "Result",
    "__version__",
    "make_agents",
    "simulate",
]
