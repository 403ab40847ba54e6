"""The reference engine: drives the online agents step by step, as a host system would."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from mamab.algorithms.base import Agent, Message
from mamab.algorithms.registry import make_agents, network
from mamab.attacks import liars_of
from mamab.config import Config
from mamab.errors import ConfigError
from mamab.faults import DELAY, LOSE, crash_steps, fault_seed, message_fate, recovery_steps
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
    delay: float = 0.0,
    held: list[Message] | None = None,
    liars: Callable[[Message], Message] | None = None,
) -> list[Message]:
    """Run communication rounds until a round where nobody sends; deliver along edges only.

    ``held`` (messages delayed by the previous exchange) are delivered first, in the order they
    were sent. Then message (step, round, sender, receiver) is lost or delayed when its fault
    hashes say so: the sender paid for it (sent counters; lost counters for a lost one); a
    delayed one is returned, to be delivered at the next exchange. Nodes marked dead in
    ``alive`` send nothing, and what is sent to them is lost. ``liars`` rewrites what the
    malicious agents send (:class:`mamab.attacks.Liars`).
    """
    for message in held or ():
        _deliver(agents, counts, message, alive)
    later: list[Message] = []
    round_ = 0
    while True:
        batch = [
            m if liars is None else liars(m)
            for i, agent in enumerate(agents)
            if alive is None or alive[i]
            for m in agent.outgoing()
        ]
        if not batch:
            return later
        for message in batch:
            if not topology.are_neighbours(message.sender, message.receiver):
                raise RuntimeError(
                    f"agent {message.sender} messaged non-neighbour {message.receiver}"
                )
            counts["messages_sent"][message.sender] += 1
            counts["bits_sent"][message.sender] += message.bits
            fate = message_fate(loss, delay, fault_key, step, round_, message.sender,
                                message.receiver)  # fmt: skip
            if fate == DELAY:
                later.append(message)
            elif fate == LOSE:
                _count_lost(counts, message)
            else:
                _deliver(agents, counts, message, alive)
        for sender in {message.sender for message in batch}:
            counts["rounds"][sender] += 1
        round_ += 1


def _deliver(agents: list[Agent], counts: dict[str, np.ndarray], message: Message,
             alive: np.ndarray | None) -> None:  # fmt: skip
    """Hand ``message`` to its receiver, or count it lost if the receiver is dead."""
    if alive is not None and not alive[message.receiver]:
        _count_lost(counts, message)
        return
    counts["messages_received"][message.receiver] += 1
    counts["bits_received"][message.receiver] += message.bits
    agents[message.receiver].receive(message)


def _restart(algorithm: str, agent: Agent, done_steps: int) -> None:
    """``agent.reset()``; an agent that cannot recover (a plugin without reset) is one line."""
    try:
        agent.reset(done_steps)
    except NotImplementedError as err:
        raise ConfigError(f"{algorithm}: {err}; run it with recover_after = 0") from None


def _count_lost(counts: dict[str, np.ndarray], message: Message) -> None:
    counts["messages_lost"][message.sender] += 1
    counts["bits_lost"][message.sender] += message.bits


def run_reference(
    config: Config, instance: Instance, grid: np.ndarray, trace: bool = False
) -> RunResult:
    """Simulate one run with the online agents."""
    problem, topology = instance.problem, instance.topology
    n, horizon = config.agents, config.horizon
    agents = make_agents(config.algorithm, topology, config.arms, horizon, config.params,
                         instance.algorithm_rng(config.seed))  # fmt: skip
    players = [agent for agent in agents if agent.plays]
    idlers = [agent for agent in agents if not agent.plays]
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
    malicious, liars = liars_of(config, instance.run, problem.means)
    alive = np.ones(len(agents), dtype=bool)  # a server, if any, never crashes
    held: list[Message] = []  # delayed by the last exchange; still in flight when the run ends
    for noise in noise_chunks(
        instance.noise_rng(config.seed), config.reward, n, horizon, progress=instance.progress
    ):
        for row in noise:
            step = t + 1  # 1-indexed step about to be played
            alive[:n] = (step < crash) | (step >= back)
            for i in np.flatnonzero(back == step):
                _restart(config.algorithm, players[i], t)  # back from a crash, fresh state
            for agent in players:
                if not alive[agent.agent_id]:
                    continue
                arm = agent.select_arm()
                agent.observe(arm, problem.reward_of(arm, float(row[agent.agent_id])))
                regret[agent.agent_id] += gaps[arm]
                if arms_played is not None:
                    arms_played[t, agent.agent_id] = arm
            for agent in idlers:
                agent.tick()
            t += 1
            held = exchange(agents, links, counts, t, config.loss, key, alive, config.delay, held,
                            liars)  # fmt: skip
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
        malicious=malicious,
    )
