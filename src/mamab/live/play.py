"""Drive one live node through a run against the environment the simulator would give it."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np

from mamab.algorithms.base import Agent
from mamab.algorithms.registry import make_agents, network
from mamab.attacks import Liars, liars_of
from mamab.config import Config
from mamab.instance import Instance, make_instance
from mamab.live.checkpoint import Checkpoints
from mamab.live.hold import Hold
from mamab.live.node import LiveNode
from mamab.problem import noise_chunks
from mamab.topology import Topology
from mamab.wire import WireSpec


def fleet(config: Config, run: int) -> tuple[Instance, list[Agent], Topology]:
    """Run ``run``'s instance, every node's agent (DEMAB's server last) and the links they use.

    Every process of a live run builds the same fleet from the run's seed streams and keeps its
    own node, so means, graph and the algorithm's draws agree with the simulator's.
    """
    instance = make_instance(config, run)
    agents = make_agents(
        config.algorithm,
        instance.topology,
        config.arms,
        config.horizon,
        config.params,
        instance.algorithm_rng(config.seed),
    )
    return instance, agents, network(config.algorithm, instance.topology)


def liars(config: Config, instance: Instance) -> tuple[np.ndarray, Liars | None]:
    """(the run's malicious mask, how its liars forge), as the simulator draws them."""
    return liars_of(config, instance.run, instance.problem.means)


def wire_spec(config: Config) -> WireSpec:
    return WireSpec(config.algorithm, config.arms, config.agents)


def play(
    node: LiveNode,
    config: Config,
    instance: Instance,
    hold: Hold | None = None,
    checkpoints: Checkpoints | None = None,
    regret: float = 0.0,
) -> float:
    """Play the horizon from the node's clock (0, or its checkpoint's step), or keep time for a
    node that does not play; its final regret (``regret``: what it had at its clock).

    Rewards come from column ``agent_id`` of the run's noise table, as in the simulator.
    ``hold``: pause after that step until released (mamab.live.hold; not in async serve).
    ``checkpoints``: write the node's state when due (mamab.live.checkpoint).
    """
    agent = node.agent

    def after_step() -> None:
        if checkpoints is not None and checkpoints.due(node):
            checkpoints.save(node, regret)
        if hold is not None and node.clock == hold.step:
            hold.wait()

    if not agent.plays:
        if node.sync:
            for _ in range(config.horizon - node.clock):
                node.tick()
                after_step()
        else:
            node.serve()
        return 0.0
    problem, me = instance.problem, agent.agent_id
    skip = node.clock  # steps played before the checkpoint: their noise is drawn and passed
    for noise in noise_chunks(
        instance.noise_rng(config.seed), config.reward, config.agents, config.horizon
    ):
        column = noise[min(skip, len(noise)) :, me]
        skip = max(0, skip - len(noise))
        for value in column:
            arm = node.select_arm()
            node.observe(arm, problem.reward_of(arm, float(value)))
            regret += problem.gaps[arm]
            after_step()
    return float(regret)


def node_record(
    node: LiveNode, regret: float, run: int, seconds: float, malicious: bool = False
) -> dict:
    """What ``mamab agent`` writes as result.json: regret, counters, wire bytes, refusals."""
    counts = asdict(node.counts)
    stats = node.transport.stats
    return {
        "agent": node.agent.agent_id,
        "run": run,
        "plays": node.agent.plays,
        "malicious": malicious,
        "final_regret": regret,
        **{k: v for k, v in counts.items() if k not in ("refused_messages", "silent")},
        "wire_bytes_sent": stats.wire_bytes_sent,
        "wire_bytes_received": stats.wire_bytes_received,
        "frame_bytes_sent": stats.bytes_sent,
        "frame_bytes_received": stats.bytes_received,
        "frames_sent": stats.frames_sent,
        "frames_received": stats.frames_received,
        "frames_dropped": stats.frames_dropped,
        "refused": {
            "connections": stats.refused_connections,
            "messages": node.counts.refused_messages,
        },
        "silent": {str(k): v for k, v in sorted(node.counts.silent.items())},
        "silences": node.silences(),
        "seconds": seconds,
    }


__all__ = ["fleet", "liars", "node_record", "play", "wire_spec"]
