"""The reference engine: drives the online agents step by step, as a host system would.

It checks what every agent does: each arm it returns must be an integer in 0..K-1 (numpy's
too) and each message must travel along an edge. Such a fault of a plugin, or any exception or
exit from its code, stops the run with a one-line :class:`~mamab.errors.PluginError` naming the
plugin, the step and, where known, the agent and method (the original exception is its
``__cause__``, shown by ``mamab --debug``); a built-in's is a bug of mamab and keeps its
traceback.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from types import TracebackType

import numpy as np

from mamab.algorithms import registry
from mamab.algorithms.base import Agent, Message
from mamab.algorithms.registry import AlgorithmInfo, lookup, make_agents, network
from mamab.attacks import liars_of
from mamab.config import Config
from mamab.errors import ConfigError, PluginError
from mamab.faults import DELAY, LOSE, crash_steps, fault_seed, message_fate, recovery_steps
from mamab.instance import Instance
from mamab.problem import noise_chunks
from mamab.result import COUNTERS, RunResult
from mamab.topology import Topology


class Breach(RuntimeError):
    """An agent broke the protocol in a way the engine sees (an arm out of range, a message to a
    non-neighbour); the message says how. From a plugin it becomes a :class:`PluginError`."""


def checked_arm(arm: object, n_arms: int, agent_id: int) -> int:
    """``arm`` as a Python int if it is an integer (not a bool) in 0..K-1, else a Breach.

    The slow path of the engine's per-step check, for anything but an in-range Python int:
    numpy integers are taken; -1 (which numpy indexing would wrap to arm K-1), K, floats, NaN,
    None and booleans are refused.
    """
    if isinstance(arm, numbers.Integral) and not isinstance(arm, bool) and 0 <= arm < n_arms:
        return int(arm)
    raise Breach(f"agent {agent_id} returned arm {arm!r}; arms are 0..{n_arms - 1}")


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
                raise Breach(f"agent {message.sender} messaged non-neighbour {message.receiver}")
            counts["messages_sent"][message.sender] += 1
            counts["bits_sent"][message.sender] += message.bits
            fate = message_fate(
                loss, delay, fault_key, step, round_, message.sender, message.receiver
            )
            if fate == DELAY:
                later.append(message)
            elif fate == LOSE:
                _count_lost(counts, message)
            else:
                _deliver(agents, counts, message, alive)
        for sender in {message.sender for message in batch}:
            counts["rounds"][sender] += 1
        round_ += 1


def _deliver(
    agents: list[Agent], counts: dict[str, np.ndarray], message: Message, alive: np.ndarray | None
) -> None:
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
    """Simulate one run with the online agents.

    A plugin's failure is a one-line :class:`PluginError` (a :class:`ConfigError` it raises
    stays one, named after the plugin); a built-in's is a bug of mamab and keeps its traceback.
    """
    info = lookup(config.algorithm)
    steps = [0]  # 0 while make() runs; then the step being played, or the exchange after it
    try:
        return _run(config, instance, grid, trace, steps)
    except KeyboardInterrupt:
        raise
    except BaseException as err:
        if info.source == "built-in" or isinstance(err, PluginError):
            raise
        if isinstance(err, ConfigError):
            if str(err).startswith(info.name):
                raise
            raise ConfigError(f"{info.name}: {err}") from err
        raise plugin_failure(info, steps[0], err) from err


def plugin_failure(info: AlgorithmInfo, step: int, err: BaseException) -> PluginError:
    """One line: which plugin failed, when, in which method of which agent, and how."""
    when = "in make()" if step == 0 else f"at step {step}"
    culprit = _culprit(err.__traceback__) if step else None  # in make() it is make
    if culprit is not None:
        when += f" in {culprit}"
    if isinstance(err, Breach):
        how = str(err)
    elif isinstance(err, SystemExit):
        how = f"it called sys.exit({err.code!r})"
    else:
        how = f"{type(err).__name__}: {err}".rstrip(": ")
    return PluginError(
        " ".join(f"plugin algorithm {info.name!r} ({info.source}) failed {when}: {how}".split())
    )


_ENGINE_FILES = (__file__, registry.__file__)  # frames of mamab's own code that calls a plugin


def _culprit(tb: TracebackType | None) -> str | None:
    """The plugin function the engine called when ``tb`` was raised ('Greedy.observe (agent 2)'):
    the frame after the last frame of the engine or the registry; None if the engine raised."""
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    ours = [i for i, f in enumerate(frames) if f.f_code.co_filename in _ENGINE_FILES]
    if not ours or ours[-1] + 1 >= len(frames):
        return None
    frame = frames[ours[-1] + 1]
    agent = frame.f_locals.get("self")
    who = f" (agent {agent.agent_id})" if isinstance(agent, Agent) else ""
    return f"{frame.f_code.co_qualname}{who}"


def _run(
    config: Config, instance: Instance, grid: np.ndarray, trace: bool, steps: list[int]
) -> RunResult:
    """:func:`run_reference`'s loop; ``steps[0]`` follows the step, for a failure's message."""
    problem, topology = instance.problem, instance.topology
    n, horizon, k = config.agents, config.horizon, config.arms
    agents = make_agents(
        config.algorithm, topology, k, horizon, config.params, instance.algorithm_rng(config.seed)
    )
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
    liar, liars = liars_of(config, instance.run, problem.means)
    alive = np.ones(len(agents), dtype=bool)  # a server, if any, never crashes
    held: list[Message] = []  # delayed by the last exchange; still in flight when the run ends
    for noise in noise_chunks(
        instance.noise_rng(config.seed), config.reward, n, horizon, progress=instance.progress
    ):
        for row in noise:
            step = steps[0] = t + 1  # 1-indexed step about to be played
            alive[:n] = (step < crash) | (step >= back)
            for i in np.flatnonzero(back == step):
                _restart(config.algorithm, players[i], t)  # back from a crash, fresh state
            for agent in players:
                if not alive[agent.agent_id]:
                    continue
                arm = agent.select_arm()
                if type(arm) is not int or not 0 <= arm < k:  # fast path: an int in range
                    arm = checked_arm(arm, k, agent.agent_id)
                agent.observe(arm, problem.reward_of(arm, float(row[agent.agent_id])))
                regret[agent.agent_id] += gaps[arm]
                if arms_played is not None:
                    arms_played[t, agent.agent_id] = arm
            for agent in idlers:
                agent.tick()
            t += 1
            held = exchange(
                agents, links, counts, t, config.loss, key, alive, config.delay, held, liars
            )
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
        malicious=liar,
    )
