"""UCB-Network / Follow Your Leader (Kolla, Jagannathan, Gopalan, IEEE/ACM ToN 2018).

A dominating set D of the graph leads. Every leader runs UCB on all K arms with its own samples
and those of all its neighbours (leaders and followers alike); every other agent follows its
lowest-id neighbouring leader and plays, at step t >= 2, the arm that leader played at step t-1
(arm 0 at step 1, which a leader's UCB also plays first). After every step, in one round, each
agent sends its (arm, reward) to every neighbouring leader and each leader sends the arm it just
played to each of its followers.

D is the deterministic greedy dominating set (:func:`dominating_set`), computed once per run
from the graph, so every node of a live fleet computes the same roles.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mamab.algorithms.base import Agent, Message
from mamab.algorithms.params import AlgorithmParams
from mamab.algorithms.ucb_index import UCB
from mamab.errors import InvalidMessage
from mamab.schedule import REWARD_BITS, index_bits
from mamab.topology import Topology

SAMPLE, ARM = "sample", "arm"
_PAYLOADS = {SAMPLE: 3, ARM: 2}  # tag -> payload length: ("sample", arm, reward), ("arm", arm)


def dominating_set(neighbours: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """The greedy dominating set of the graph with these adjacency lists, sorted.

    Repeatedly adds the node whose closed neighbourhood holds the most uncovered nodes (ties to
    the lowest id) until every node is covered: the standard ln(Δ+1)-approximation. An isolated
    node leads itself; the complete graph gives {0}, a star its hub.
    """
    n = len(neighbours)
    gain = np.array([len(nb) + 1 for nb in neighbours], dtype=np.int64)  # uncovered in N[v]
    covered = np.zeros(n, dtype=bool)
    chosen, left = [], n
    while left:
        v = int(np.argmax(gain))  # the first maximum: the lowest id on ties
        chosen.append(v)
        for u in (v, *neighbours[v]):
            if not covered[u]:
                covered[u] = True
                left -= 1
                gain[u] -= 1
                for w in neighbours[u]:
                    gain[w] -= 1
    return tuple(sorted(chosen))


def leader_of(neighbours: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """Each node's leader: itself if it is in the dominating set, else its lowest-id leader
    neighbour."""
    leaders = frozenset(dominating_set(neighbours))
    return tuple(
        v if v in leaders else min(u for u in neighbours[v] if u in leaders)
        for v in range(len(neighbours))
    )


class UcbNetworkAgent(Agent):
    """One FYL agent: a leader (UCB on its own and its neighbours' samples) or a follower.

    ``leaders[v]`` is node v's leader for every node v (:func:`leader_of`); the agent reads its
    role, its leader, its followers and its leader neighbours from it.
    """

    def __init__(
        self,
        agent_id: int,
        n_arms: int,
        horizon: int,
        neighbours: tuple[int, ...],
        leaders: Sequence[int],
        alpha: float = 2.0,
    ):
        super().__init__(agent_id, n_arms, horizon, neighbours)
        self.leader = int(leaders[agent_id])
        self.is_leader = self.leader == agent_id
        if not (self.is_leader or self.leader in self._neighbour_set):
            raise ValueError(f"agent {agent_id}: its leader {self.leader} is not a neighbour")
        #: where this agent's samples go: its neighbours that lead, by increasing id
        self.leader_neighbours = tuple(v for v in self.neighbours if leaders[v] == v)
        #: whom this agent (a leader) tells its arm: its neighbours that follow it
        self.followers = tuple(
            v for v in self.neighbours if leaders[v] == agent_id and leaders[v] != v
        )
        self.ucb = UCB(range(n_arms), alpha) if self.is_leader else None
        self._next_arm = 0  # a follower's arm: its leader's last arm heard (arm 0 at first)
        self._arm_stamp = -1  # the stamp of the arm it holds
        self._sample_bits = index_bits(n_arms) + REWARD_BITS
        self._arm_bits = index_bits(n_arms)

    def select_arm(self) -> int:
        return self._chose(self.ucb.select() if self.ucb is not None else self._next_arm)

    def observe(self, arm: int, reward: float) -> None:
        arm, reward = self._accept_observation(arm, reward)
        if self.ucb is not None:
            self.ucb.update(arm, reward)
        self.clock += 1
        out = [
            self._message(v, (SAMPLE, arm, reward), self._sample_bits)
            for v in self.leader_neighbours
        ]
        out += [self._message(v, (ARM, arm), self._arm_bits) for v in self.followers]
        self._outbox = out

    def receive(self, message: Message) -> None:
        """A leader takes samples from any neighbour; a follower takes arms from its leader.

        A late sample is learned from when it arrives (a sample is a sample); a follower keeps
        the newest arm heard, so a late arm older than the one it holds is ignored.
        """
        self._check_envelope(message)
        kind = self._payload_kind(message.payload, _PAYLOADS)
        if kind == SAMPLE:
            if self.ucb is None:
                raise InvalidMessage(f"agent {self.agent_id} follows: it takes no samples")
            arm = self._check_arm(message.payload[1])
            reward = self._check_reward(message.payload[2])
            self._heard.add(self._check_first_copy(message, kind))
            self.ucb.update(arm, reward)
            return
        if message.sender != self.leader or self.is_leader:
            raise InvalidMessage(
                f"agent {self.agent_id}: an arm from {message.sender}, which it does not follow"
            )
        arm = self._check_arm(message.payload[1])
        self._heard.add(self._check_first_copy(message, kind))
        if message.stamp >= self._arm_stamp:
            self._next_arm, self._arm_stamp = arm, int(message.stamp)


def make_ucb_network(
    topology: Topology, n_arms: int, horizon: int, params: AlgorithmParams, rng: np.random.Generator
) -> list[Agent]:
    leaders = leader_of(topology.neighbours)
    alpha = params.alpha
    return [
        UcbNetworkAgent(i, n_arms, horizon, topology.neighbours[i], leaders, alpha)
        for i in range(topology.n_agents)
    ]
