"""Live agents: each node its own process (or thread), talking over an authenticated transport."""

from mamab.live.memory import MemoryNetwork, MemoryTransport
from mamab.live.node import BYE_ROUND, LiveNode, NodeCounts
from mamab.live.roster import Roster, SecretKey, load_roster, load_secret, write_fleet, write_keys
from mamab.live.transport import Transport, TransportStats, ZmqTransport, free_ports

__all__ = [
    "BYE_ROUND",
    "LiveNode",
    "MemoryNetwork",
    "MemoryTransport",
    "NodeCounts",
    "Roster",
    "SecretKey",
    "Transport",
    "TransportStats",
    "ZmqTransport",
    "free_ports",
    "load_roster",
    "load_secret",
    "write_fleet",
    "write_keys",
]
