"""Online agents, one per algorithm, behind one small protocol (:class:`Agent`).

Algorithms are looked up in the registry (:mod:`mamab.agents.registry`): the built-ins
and any plugin registered with :func:`register_algorithm` or installed as an entry point.
"""

from __future__ import annotations

from mamab.agents.base import Agent, Message
from mamab.agents.baselines import FullCommunicationAgent, NoCommunicationAgent
from mamab.agents.builtins import BUILTINS, lcc_shape
from mamab.agents.coop import CoopUcbAgent
from mamab.agents.dducb import DducbAgent
from mamab.agents.gosine import GosineAgent, GosineRobustAgent
from mamab.agents.lcc import LccUcbAgent, LccUcbRobustAgent, RelayAgent
from mamab.agents.params import DEMAB_BEST_ARM, RELAY_K_PRIME, AlgorithmParams
from mamab.agents.registry import (
    AlgorithmInfo,
    ReferenceEngineWarning,
    algorithm_metadata,
    alpha_of,
    check_algorithm,
    demab_radius_of,
    lookup,
    make_agents,
    network,
    register_algorithm,
    unregister_algorithm,
)
from mamab.agents.ucb import UCB
from mamab.agents.ucb_network import UcbNetworkAgent

__all__ = [
    "ALGORITHMS",
    "ALPHA_DEFAULTS",
    "DEMAB_BEST_ARM",
    "RELAY_K_PRIME",
    "UCB",
    "Agent",
    "AlgorithmInfo",
    "AlgorithmParams",
    "CoopUcbAgent",
    "DducbAgent",
    "FullCommunicationAgent",
    "GosineAgent",
    "GosineRobustAgent",
    "LccUcbAgent",
    "LccUcbRobustAgent",
    "Message",
    "NoCommunicationAgent",
    "ReferenceEngineWarning",
    "RelayAgent",
    "UcbNetworkAgent",
    "algorithm_metadata",
    "alpha_of",
    "check_algorithm",
    "demab_radius_of",
    "lcc_shape",
    "lookup",
    "make_agents",
    "network",
    "register_algorithm",
    "unregister_algorithm",
]

#: The built-in algorithms (``mamab.agents.registry.names()`` lists plugins too).
ALGORITHMS = tuple(BUILTINS)
# Built-ins with each property, for old callers; ask the registry (``lookup(name)``) for plugins.
SPLITS_ARMS = frozenset(n for n, (_, m) in BUILTINS.items() if m.get("splits_arms"))
CENTRAL_SERVER = frozenset(n for n, (_, m) in BUILTINS.items() if m.get("central_server"))
NEEDS_CONNECTED = frozenset(n for n, (_, m) in BUILTINS.items() if m.get("needs_connected"))
#: Each built-in's exploration constant when none is given: the UCB index's alpha in
#: mean + sqrt(alpha·log t / n) (the paper's Alg. 2: 2; GosInE's paper: 4; coop-UCB2's 2γ with
#: γ = 1), and for DEMAB the constant c of its elimination radius sqrt(c·log T / n).
ALPHA_DEFAULTS = {n: float(m["default_alpha"]) for n, (_, m) in BUILTINS.items()}
