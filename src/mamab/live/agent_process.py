"""``mamab agent``: one node of a live run in its own process, over the authenticated network."""

from __future__ import annotations

import time
from pathlib import Path

from mamab.config import Config
from mamab.errors import ConfigError
from mamab.live.hold import hold_from_env
from mamab.live.node import LiveNode
from mamab.live.play import fleet, liars, node_record, play, wire_spec
from mamab.live.roster import load_roster, load_secret
from mamab.live.transport import ZmqTransport


def run_agent(config: Config, run: int, roster_path: Path, node_id: int, secret_path: Path, *,
              sync: bool, timeout: float) -> dict:  # fmt: skip
    """Play node ``node_id`` of run ``run`` with its peers of the roster; its result record."""
    hold = hold_from_env(node_id)
    roster = load_roster(roster_path)
    secret = load_secret(secret_path)
    instance, agents, links = fleet(config, run)
    if len(roster.nodes) != len(agents):
        raise ConfigError(
            f"roster {roster_path} lists {len(roster.nodes)} nodes; {config.algorithm} with "
            f"N={config.agents} needs {len(agents)}"
        )
    if not 0 <= node_id < len(agents):
        raise ConfigError(f"--id {node_id} is not a node of the roster (0..{len(agents) - 1})")
    transport = ZmqTransport(roster, node_id, secret, peers=links.neighbours[node_id])
    malicious, forge = liars(config, instance)
    node = LiveNode(agents[node_id], transport, wire_spec(config), sync=sync, timeout=timeout,
                    liars=forge)  # fmt: skip
    transport.wait_connected(timeout)  # start together: every neighbour is listening
    start = time.monotonic()
    try:
        regret = play(node, config, instance, hold)
    finally:
        node.close()
    lies = node_id < config.agents and bool(malicious[node_id])
    return node_record(node, regret, run, time.monotonic() - start, lies)
