"""``mamab agent``: one node of a live run in its own process, over the authenticated network."""

from __future__ import annotations

import time
from pathlib import Path

from mamab.config import Config
from mamab.errors import ConfigError
from mamab.live.agreement import run_record
from mamab.live.checkpoint import Checkpoints
from mamab.live.checkpoint import resume as resume_node
from mamab.live.hold import hold_from_env
from mamab.live.node import LiveNode
from mamab.live.play import fleet, liars, node_record, play, wire_spec
from mamab.live.roster import check_address, load_roster, load_secret
from mamab.live.transport import ZmqTransport


def run_agent(
    config: Config,
    run: int,
    roster_path: Path,
    node_id: int,
    secret_path: Path,
    *,
    sync: bool,
    timeout: float,
    checkpoint: Path | None = None,
    checkpoint_every: float = 2.0,
    resume: bool = False,
    bind: str | None = None,
) -> dict:
    """Play node ``node_id`` of run ``run`` with its peers of the roster; its result record.

    ``checkpoint``: where to keep the node's checkpoint (mamab.live.checkpoint); ``resume``:
    continue from it, as the node's next incarnation. ``bind``: the address to listen at
    (``tcp://host:port``; default: the node's roster address, which its peers dial).
    """
    if resume and checkpoint is None:
        raise ConfigError("--resume needs --checkpoint: the file to resume from")
    if bind is not None:
        check_address(bind, "--bind")
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
    transport = ZmqTransport(roster, node_id, secret, peers=links.neighbours[node_id], bind=bind)
    liar, forge = liars(config, instance)
    record = run_record(config, run, sync, instance.topology, roster)
    node = LiveNode(
        agents[node_id],
        transport,
        wire_spec(config),
        sync=sync,
        timeout=timeout,
        liars=forge,
        record=record,
        checkpointing=checkpoint is not None,
    )
    checkpoints = None if checkpoint is None else Checkpoints(checkpoint, checkpoint_every)
    try:
        regret = resume_node(node, checkpoint) if resume else 0.0
        if checkpoints is not None:  # step 0, or this incarnation: a later resume counts on
            checkpoints.save(node, regret)
        transport.wait_connected(timeout)  # start together: every neighbour is listening
        node.greet(timeout)  # a neighbour of another configuration is refused here
        start = time.monotonic()
        regret = play(node, config, instance, hold, checkpoints, regret)
    finally:
        node.close()
    is_liar = node_id < config.agents and bool(liar[node_id])
    result = node_record(node, regret, run, time.monotonic() - start, is_liar)
    result["incarnation"] = node.incarnation
    if checkpoints is not None:
        result["checkpoints"] = {
            "written": checkpoints.written,
            "seconds": round(checkpoints.seconds, 4),
        }
    return result
