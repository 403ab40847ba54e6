"""The reference engine: drives the online agents step by step, as a host system would."""

from __future__ import annotations

import numpy as np

from mamab.agents import Agent, make_agents, network
from mamab.config import Config
from mamab.faults import crash_steps, fault_seed, is_lost, recovery_steps
from mamab.instance import Instance
from mamab.problem import noise_chunks
from mamab.result import COUNTERS, RunResult
from mamab.topology import Topology


def exchange(
    agents: list[Agent],
    topology: Topology,
    counts: dict[str, np.ndarray],
    step: int = 0,
    loss: float = 0.0,
    fault_key: int = 0,
    alive: np.ndarray | None = None,
) -> None:
    """Run communication rounds until a round where nobody sends; deliver along edges only.

    With ``loss`` > 0, message (step, round, sender, receiver) is dropped when its fault hash
    says so: the sender paid for it (sent and lost counters), the receiver never sees it.
    Nodes marked dead in ``alive`` send nothing, and what is sent to them is lost.
    """
    round_ = 0
    while True:
        batch = [
            m
            for i, agent in enumerate(agents)
            if alive is None or alive[i]
            for m in agent.outgoing()
        ]
        if not batch:
            return
        for message in batch:
            if not topology.are_neighbours(message.sender, message.receiver):
                raise RuntimeError(
                    f"agent {message.sender} messaged non-neighbour {message.receiver}"
                )
            counts["messages_sent"][message.sender] += 1
            counts["bits_sent"][message.sender] += message.bits
            dead = alive is not None and not alive[message.receiver]
            if dead or is_lost(loss, fault_key, step, round_, message.sender, message.receiver):
                counts["messages_lost"][message.sender] += 1
                counts["bits_lost"][message.sender] += message.bits
                continue
            counts["messages_received"][message.receiver] += 1
            counts["bits_received"][message.receiver] += message.bits
            agents[message.receiver].receive(message)
        for sender in {message.sender for message in batch}:
            counts["rounds"][sender] += 1
        round_ += 1


def run_reference(
    config: Config, instance: Instance, grid: np.ndarray, trace: bool = False
) -> RunResult:
    """Simulate one run with the online agents."""
    problem, topology = instance.problem, instance.topology
    n, horizon = config.agents, config.horizon
    agents = make_agents(config.algorithm, topology, config.arms, horizon, config.params,
                         instance.algorithm_rng(config.seed))  # fmt: skip
    players = [agent for agent in agents if agent.plays]
    links = network(config.algorithm, topology)
    gaps = problem.gaps
    counts = {name: np.zeros(len(agents), dtype=np.int64) for name in COUNTERS}
    regret = np.zeros(n)
    recorded = np.zeros((n, grid.size))
    recorded_bits = np.zeros((n, grid.size), dtype=np.int64)
    arms_played = np.zeros((horizon, n), dtype=np.int64) if trace else None
    next_point, t = 0, 0
    key = fault_seed(config.seed, instance.run)
    crash = crash_steps(config.seed, instance.run, n, horizon, config.crash_rate, config.crash_at)
    back = recovery_steps(crash, horizon, config.recover_after)
    alive = np.ones(len(agents), dtype=bool)  # a server, if any, never crashes
    for noise in noise_chunks(instance.noise_rng(config.seed), config.reward, n, horizon):
        for row in noise:
            step = t + 1  # 1-indexed step about to be played
            alive[:n] = (step < crash) | (step >= back)
            for i in np.flatnonzero(back == step):
                players[i].reset(t)  # back from a crash with fresh state
            for agent in players:
                if not alive[agent.agent_id]:
                    continue
                arm = agent.select_arm()
                agent.observe(arm, problem.reward_of(arm, float(row[agent.agent_id])))
                regret[agent.agent_id] += gaps[arm]
                if arms_played is not None:
                    arms_played[t, agent.agent_id] = arm
            t += 1
            exchange(agents, links, counts, t, config.loss, key, alive)
            if t == grid[next_point]:
                recorded[:, next_point] = regret
                recorded_bits[:, next_point] = counts["bits_sent"][:n]
                next_point += 1
    return RunResult(
        run=instance.run,
        regret=recorded,
        bits=recorded_bits,
        counts={
            name: values[:n] for name, values in counts.items()
        },  # a server's are not an agent's
        means=problem.means,
        diameter=topology.diameter if topology.is_connected else -1,
        max_degree=topology.max_degree,
        arms=arms_played,
        crash=crash,
    )
