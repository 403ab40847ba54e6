"""Online agents, one per algorithm, behind one small protocol (:class:`Agent`).

The public face of :mod:`mamab.algorithms`: each algorithm's agents live in its family's folder
(``mamab/algorithms/<family>/agent.py``), its spec beside them. Algorithms are looked up in the
registry (:mod:`mamab.algorithms.registry`): the built-ins and any plugin registered with
:func:`mamab.register`, :func:`register_algorithm` or installed as an entry point.
"""

from __future__ import annotations

import sys

from mamab.algorithms import registry
from mamab.algorithms.base import Agent, Message
from mamab.algorithms.coop.agent import CoopUcbAgent
from mamab.algorithms.dducb.agent import DducbAgent
from mamab.algorithms.demab.spec import demab_radius_of
from mamab.algorithms.gosine.agent import GosineAgent, GosineRobustAgent
from mamab.algorithms.lcc.agent import LccUcbAgent, LccUcbRobustAgent, RelayAgent
from mamab.algorithms.params import DEMAB_BEST_ARM, RELAY_K_PRIME, AlgorithmParams
from mamab.algorithms.registry import (
    AlgorithmInfo,
    AlgorithmSpec,
    ReferenceEngineWarning,
    algorithm_metadata,
    algorithm_spec,
    alpha_of,
    check_algorithm,
    lookup,
    make_agents,
    network,
    register,
    register_algorithm,
    unregister_algorithm,
)
from mamab.algorithms.ucb.agent import FullCommunicationAgent, NoCommunicationAgent
from mamab.algorithms.ucb_index import UCB
from mamab.algorithms.ucb_network.agent import UcbNetworkAgent
from mamab.topology import Topology

# ``mamab.agents.registry`` was the registry's module before the algorithms got their folders.
sys.modules[f"{__name__}.registry"] = registry

__all__ = [
    "ALGORITHMS",
    "ALPHA_DEFAULTS",
    "DEMAB_BEST_ARM",
    "RELAY_K_PRIME",
    "UCB",
    "Agent",
    "AlgorithmInfo",
    "AlgorithmParams",
    "AlgorithmSpec",
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
    "algorithm_spec",
    "alpha_of",
    "check_algorithm",
    "demab_radius_of",
    "lcc_shape",
    "lookup",
    "make_agents",
    "network",
    "register",
    "register_algorithm",
    "unregister_algorithm",
]


def lcc_shape(
    algorithm: str, topology: Topology, n_arms: int, params: AlgorithmParams
) -> tuple[int, int]:
    """(K', phases per epoch) of an LCC-family algorithm on ``topology``, paper defaults unless set
    (:func:`mamab.algorithms.lcc.agent.lcc_shape`; the variant comes from the spec)."""
    from mamab.algorithms.lcc.agent import lcc_shape as shape

    registry.check_topology(algorithm, topology)
    settings = lookup(algorithm).fast.settings  # type: ignore[union-attr]
    return shape(settings["mode"], settings.get("sub_epochs", False), topology, n_arms, params)


#: The built-in algorithms (``mamab.algorithms.registry.names()`` lists plugins too).
ALGORITHMS = tuple(registry.builtin_names())
# Built-ins with each property, for old callers; ask the registry (``lookup(name)``) for plugins.
SPLITS_ARMS = frozenset(n for n in ALGORITHMS if lookup(n).splits_arms)
CENTRAL_SERVER = frozenset(n for n in ALGORITHMS if lookup(n).central_server)
NEEDS_CONNECTED = frozenset(n for n in ALGORITHMS if lookup(n).needs_connected)
#: Each built-in's exploration constant when none is given: the UCB index's alpha in
#: mean + sqrt(alpha·log t / n) (the paper's Alg. 2: 2; GosInE's paper: 4; coop-UCB2's 2γ with
#: γ = 1), and for DEMAB the constant c of its elimination radius sqrt(c·log T / n).
ALPHA_DEFAULTS = {n: float(lookup(n).default_alpha) for n in ALGORITHMS}  # type: ignore[arg-type]
