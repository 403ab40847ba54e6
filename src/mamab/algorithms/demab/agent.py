"""DEMAB (Wang, Hu, Chen, Wang, ICLR 2020) as online agents plus a central server node.

Stage 1: each agent eliminates among its own arms for about T/(NK) steps, alone. Then phases of
doubling length: every agent pulls its remaining arms round-robin with fresh samples, and after
the phase the protocol runs these communication rounds through the server (node N):

1. agent → server: REPORT(arm, lcb), its arm of largest lower confidence bound (if it has arms);
2. server → every agent: BEST(arm*, LB*), the largest reported bound; agents drop every own arm
   whose upper bound is below LB*; an agent with no arm left plays arm* (``best_arm="shared"``)
   or, not sharing the knowledge of the best arm (``best_arm="own"``), the arm it last reported;
3. agent → server: COUNT(|S_n|);
4. if the split is unbalanced: server → agents with arms: SEND; 5. they answer ARMS(list);
6. server → every agent: ASSIGN(new list), the remaining arms dealt round-robin.

A message delayed in transit has missed its round and is dropped on arrival, by agents and server
alike (the server keeps its clock with ``tick()``). A second message of one kind from one sender
in one exchange, a list of arms with a repeated arm, and a list the server did not ask for are
refused.

Every choice where the original paper is not followed to the letter is listed in
docs/algorithms/demab.md.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from mamab.algorithms.base import Agent, Message
from mamab.algorithms.demab.schedule import (
    draw_permutation,
    initial_split,
    phase_ends,
    radius,
    redivide,
    stage_one_length,
    unbalanced,
)
from mamab.algorithms.params import AlgorithmParams
from mamab.bits import count_bits
from mamab.errors import InvalidMessage, InvalidObservation
from mamab.schedule import REWARD_BITS, index_bits, is_listed
from mamab.topology import Topology

#: Rounds of the exchange after a phase: report, best, count, send, arms, assign.
EXCHANGE_ROUNDS = 6
AGENT_KINDS = {"best": 3, "send": 1, "assign": 2}  # what the server sends: (tag, ...) lengths
SERVER_KINDS = {"report": 3, "count": 2, "arms": 2}  # what the agents send


class DemabAgent(Agent):
    """One DEMAB agent; its only neighbour is the server."""

    def __init__(
        self,
        agent_id: int,
        n_arms: int,
        horizon: int,
        server: int,
        arms: list[int],
        n_agents: int,
        alpha: float = 2.0,
        best_arm: str = "shared",
    ):
        super().__init__(agent_id, n_arms, horizon, (server,))
        self.server = server
        self.alpha = alpha  # c in the elimination radius sqrt(c·log T / n)
        self.shares_best = best_arm == "shared"
        self.active = sorted(arms)
        self.initial_arms = tuple(self.active)
        self.ends = tuple(phase_ends(horizon, n_agents, n_arms).tolist())
        self.stage_one = stage_one_length(horizon, n_agents, n_arms)
        self.pointer = 0
        self.counts = dict.fromkeys(self.active, 0)
        self.sums = dict.fromkeys(self.active, 0.0)
        self.announced: int | None = None
        self.reported = self.initial_arms[0]  # its own best arm, as it last reported it
        self.listening = False
        self._bits = index_bits(n_arms)

    def rounds_after(self, step: int) -> int:
        return EXCHANGE_ROUNDS if is_listed(self.ends, step) else 0

    def reset(self, done_steps: int) -> None:
        """Back with its initial arms, fresh samples and no announcement, at the global time."""
        self.active = list(self.initial_arms)
        self._rejoin(done_steps)
        self.announced = None
        self.reported = self.initial_arms[0]
        self.listening = False
        self._start_phase()

    def select_arm(self) -> int:
        if self.listening:
            self._start_phase()
        if not self.active:
            if not self.shares_best:
                return self._chose(self.reported)
            if self.announced is None:
                raise RuntimeError(f"agent {self.agent_id} has no arm and no announced best arm")
            return self._chose(self.announced)
        return self._chose(self.active[self.pointer])

    def observe(self, arm: int, reward: float) -> None:
        arm, reward = self._accept_observation(arm, reward)
        self.clock += 1
        if self.active:
            self.counts[arm] += 1
            self.sums[arm] += reward
            self.pointer += 1
            if self.pointer == len(self.active):
                self.pointer = 0
                if self.clock <= self.stage_one:
                    self._eliminate(max(self._lcb(a) for a in self.active))
        if is_listed(self.ends, self.clock):
            self.listening = True
            if self.active:
                best = max(self.active, key=lambda a: (self._lcb(a), -a))
                if math.isfinite(self._lcb(best)):  # nothing sampled since a restart: no report
                    self.reported = best
                    self._send(("report", best, self._lcb(best)), self._bits + REWARD_BITS)

    def receive(self, message: Message) -> None:
        self._check_envelope(message)
        payload = message.payload
        kind = self._payload_kind(payload, AGENT_KINDS)
        if kind == "best":
            content: Any = (self._check_arm(payload[1]), self._check_reward(payload[2]))
        elif kind == "assign":
            content = check_arms(self, payload[1])
        else:
            content = ()
        key = self._check_first_copy(message, kind)
        if self._is_late(message):
            self._heard.add(key)
            return  # its round is over
        if not self.listening:
            raise InvalidMessage(f"agent {self.agent_id}: message outside a communication window")
        self._heard.add(key)
        if kind == "best":
            self.announced, bound = content
            self._eliminate(bound)
            self._send(("count", len(self.active)), count_bits(self.n_arms))
        elif kind == "send":
            self._send(("arms", tuple(self.active)), max(1, len(self.active) * self._bits))
        else:
            self.active = sorted(content)

    # -- helpers --

    def _lcb(self, arm: int) -> float:
        """Lower confidence bound; -inf for an arm not sampled this phase (after a restart)."""
        n = self.counts[arm]
        return self.sums[arm] / n - radius(self.alpha, self.horizon, n) if n else -math.inf

    def _ucb(self, arm: int) -> float:
        """Upper confidence bound; +inf for an arm not sampled this phase: it cannot be dropped."""
        n = self.counts[arm]
        return self.sums[arm] / n + radius(self.alpha, self.horizon, n) if n else math.inf

    def _eliminate(self, bound: float) -> None:
        """Drop own arms whose upper confidence bound is below ``bound`` (the best one never is).

        Runs only at the end of a round-robin cycle or of a phase, so the cycle restarts at 0.
        """
        self.active = [a for a in self.active if not self._ucb(a) < bound]
        self.pointer = 0

    def _send(self, payload: tuple, bits: int) -> None:
        self._outbox.append(self._message(self.server, payload, bits))

    def _start_phase(self) -> None:
        self.listening = False
        self.pointer = 0
        self.counts = dict.fromkeys(self.active, 0)
        self.sums = dict.fromkeys(self.active, 0.0)


def check_arms(node: Agent, arms: Any) -> tuple[int, ...]:
    """A tuple of distinct arms in 0..K-1, else :class:`InvalidMessage`."""
    if not isinstance(arms, tuple):
        raise InvalidMessage(f"agent {node.agent_id}: arms {arms!r} are not a tuple")
    checked = tuple(node._check_arm(a) for a in arms)
    if len(set(checked)) < len(checked):
        raise InvalidMessage(f"agent {node.agent_id}: an arm twice in {checked}")
    return checked


class DemabServer(Agent):
    """The central node: picks the best report, announces it, re-divides unbalanced splits."""

    plays = False

    def __init__(self, server_id: int, n_arms: int, horizon: int, n_agents: int):
        super().__init__(server_id, n_arms, horizon, tuple(range(n_agents)))
        self.n_agents = n_agents
        self._reports: dict[int, tuple[int, float]] = {}
        self._counts: dict[int, int] = {}
        self._lists: dict[int, tuple[int, ...]] = {}
        self.announced: list[int] = []  # every arm the server ever named best
        self._waiting: list[int] = []
        self._bits = index_bits(n_arms)
        self.ends = tuple(phase_ends(horizon, n_agents, n_arms).tolist())

    def rounds_after(self, step: int) -> int:
        return EXCHANGE_ROUNDS if is_listed(self.ends, step) else 0

    def select_arm(self) -> int:
        raise RuntimeError("the DEMAB server plays no arm")

    def observe(self, arm: int, reward: float) -> None:
        raise InvalidObservation("the DEMAB server plays no arm")

    def receive(self, message: Message) -> None:
        self._check_envelope(message)
        payload = message.payload
        kind = self._payload_kind(payload, SERVER_KINDS)
        inbox: dict[int, Any]
        if kind == "report":
            inbox = self._reports
            content: Any = (self._check_arm(payload[1]), self._check_reward(payload[2]))
        elif kind == "count":
            inbox, content = self._counts, self._check_count(payload[1])
        else:
            inbox, content = self._lists, check_arms(self, payload[1])
        key = self._check_first_copy(message, kind)
        if self._is_late(message):
            self._heard.add(key)
            return  # it has missed its round
        if kind == "arms" and message.sender not in self._waiting:
            raise InvalidMessage(f"server: a list of arms from {message.sender}, not asked for")
        self._heard.add(key)
        inbox[int(message.sender)] = content

    def _check_count(self, count: Any) -> int:
        """A number of arms in 0..K."""
        if isinstance(count, bool) or not isinstance(count, numbers.Integral):
            raise InvalidMessage(f"server: count {count!r} is not an integer")
        if not 0 <= count <= self.n_arms:
            raise InvalidMessage(f"server: count {count} outside 0..{self.n_arms}")
        return int(count)

    def outgoing(self) -> list[Message]:
        """Act on what arrived in the last round; under message loss, act on what did arrive."""
        out: list[Message] = []
        if self._reports:
            arm, bound = max(self._reports.values(), key=lambda r: (r[1], -r[0]))
            self._reports = {}
            self.announced.append(arm)
            out = [
                self._message(n, ("best", arm, bound), self._bits + REWARD_BITS)
                for n in range(self.n_agents)
            ]
        elif self._counts:
            complete = len(self._counts) == self.n_agents  # re-divide only knowing every set's size
            sizes = [self._counts.get(n, 0) for n in range(self.n_agents)]
            self._counts, self._waiting = {}, []
            if complete and unbalanced(sizes):
                self._waiting = [n for n in range(self.n_agents) if sizes[n] > 0]
                out = [self._message(n, ("send",), 1) for n in self._waiting]
        elif self._lists:
            complete = len(self._lists) == len(self._waiting)  # a lost list would lose its arms
            arms = [a for n in sorted(self._lists) for a in self._lists[n]]
            self._lists, self._waiting = {}, []
            if complete:
                new = redivide(arms, self.n_agents)
                out = [
                    self._message(n, ("assign", tuple(new[n])), max(1, len(new[n]) * self._bits))
                    for n in range(self.n_agents)
                ]
        return out


def make_demab(
    topology: Topology, n_arms: int, horizon: int, params: AlgorithmParams, rng: np.random.Generator
) -> list[Agent]:
    n = topology.n_agents
    split = initial_split(draw_permutation(rng, n_arms), n)
    alpha = params.demab_radius
    players: list[Agent] = [
        DemabAgent(i, n_arms, horizon, n, split[i], n, alpha, params.demab_best_arm)
        for i in range(n)
    ]
    return [*players, DemabServer(n, n_arms, horizon, n)]
