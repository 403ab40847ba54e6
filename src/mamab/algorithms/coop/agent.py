"""coop-UCB2 (Landgren, Srivastava, Leonard, 2016): UCB on running-consensus estimates.

Agent k keeps, for every arm i, consensus estimates n̂_i (pulls per agent) and ŝ_i (reward sum per
agent). Each step it adds its own pull, sends (n̂ + ξ, ŝ + r·ξ) — 2K numbers — to every
neighbour, and averages with the weights P = I − (κ/d_max)·L (L the graph Laplacian):
P_kj = κ/d_max for a neighbour j, P_kk = 1 − d_k·κ/d_max, so each row sums to one. A
neighbour's estimates delayed in transit stand in for its missing current ones (the newest
estimates heard from each neighbour are used); a neighbour heard from not at all is left out.
Index: ŝ_i/n̂_i + sqrt(alpha·(n̂_i + f(t))/(N·n̂_i) · log t / n̂_i), f(t) = sqrt(log t).
"""

from __future__ import annotations

import math

import numpy as np

from mamab.algorithms.base import Agent, Message
from mamab.algorithms.params import AlgorithmParams
from mamab.errors import InvalidMessage
from mamab.schedule import REWARD_BITS
from mamab.topology import Topology


def consensus_weights(degree: int, max_degree: int, kappa: float) -> tuple[float, float]:
    """(weight of a neighbour, weight of oneself) in row k of P."""
    if max_degree == 0:
        return 0.0, 1.0
    w = kappa / max_degree
    return w, 1.0 - degree * w


class CoopUcbAgent(Agent):
    def __init__(
        self,
        agent_id: int,
        n_arms: int,
        horizon: int,
        neighbours: tuple[int, ...],
        n_agents: int,
        max_degree: int,
        alpha: float = 2.0,
        kappa: float = 1.0,
    ):
        super().__init__(agent_id, n_arms, horizon, neighbours)
        self.n_agents = n_agents
        self.alpha = alpha
        self.weight, self.self_weight = consensus_weights(len(neighbours), max_degree, kappa)
        self.counts = np.zeros(n_arms)  # n̂
        self.sums = np.zeros(n_arms)  # ŝ
        self._own: tuple[np.ndarray, np.ndarray] | None = None  # after this step's own pull
        self._inbox: dict[int, tuple[int, np.ndarray, np.ndarray]] = {}  # sender: newest estimates

    def reset(self, done_steps: int) -> None:
        self.counts, self.sums = np.zeros(self.n_arms), np.zeros(self.n_arms)
        self._rejoin(done_steps)
        self._own = None
        self._inbox = {}

    def select_arm(self) -> int:
        if self._own is not None:
            self._consensus()
        for arm in range(self.n_arms):
            if self.counts[arm] == 0.0:
                return self._chose(arm)
        log_t = math.log(self.clock + 1)
        extra = math.sqrt(log_t)
        best, best_index = 0, -math.inf
        for arm in range(self.n_arms):
            n = float(self.counts[arm])
            index = float(self.sums[arm]) / n + math.sqrt(
                self.alpha * (n + extra) / (self.n_agents * n) * log_t / n
            )
            if index > best_index:
                best, best_index = arm, index
        return self._chose(best)

    def observe(self, arm: int, reward: float) -> None:
        arm, reward = self._accept_observation(arm, reward)
        own_counts, own_sums = self.counts.copy(), self.sums.copy()
        own_counts[arm] += 1.0
        own_sums[arm] += reward
        self.clock += 1
        self._own = (own_counts, own_sums)
        bits = 2 * self.n_arms * REWARD_BITS
        self._outbox = [self._message(v, (own_counts, own_sums), bits) for v in self.neighbours]

    def receive(self, message: Message) -> None:
        self._check_envelope(message)
        payload = message.payload
        if not (isinstance(payload, tuple) and len(payload) == 2):
            raise InvalidMessage(f"agent {self.agent_id}: coop-UCB2 payload must be (counts, sums)")
        counts, sums = payload
        for values in (counts, sums):
            if not (
                isinstance(values, np.ndarray)
                and values.shape == (self.n_arms,)
                and values.dtype == np.float64
                and np.all(np.isfinite(values))
            ):
                raise InvalidMessage(
                    f"agent {self.agent_id}: coop-UCB2 estimates must be {self.n_arms} finite floats"
                )
        if np.any(counts < 0):
            raise InvalidMessage(f"agent {self.agent_id}: negative pull estimates")
        key = self._check_first_copy(message)
        held = self._inbox.get(message.sender)
        if self._own is None or (held is not None and held[0] == message.stamp):
            raise InvalidMessage(
                f"agent {self.agent_id}: unexpected estimates from {message.sender}"
            )
        self._heard.add(key)
        if held is None or held[0] < message.stamp:
            self._inbox[message.sender] = (message.stamp, counts, sums)

    def _consensus(self) -> None:
        """Own share first, then each neighbour's newest estimates by increasing id."""
        own_counts, own_sums = self._own
        counts, sums = self.self_weight * own_counts, self.self_weight * own_sums
        for sender in sorted(self._inbox):
            _, their_counts, their_sums = self._inbox[sender]
            counts = counts + self.weight * their_counts
            sums = sums + self.weight * their_sums
        self.counts, self.sums = counts, sums
        self._own, self._inbox = None, {}


def make_coop(
    topology: Topology, n_arms: int, horizon: int, params: AlgorithmParams, rng: np.random.Generator
) -> list[Agent]:
    n = topology.n_agents
    alpha = params.alpha
    return [
        CoopUcbAgent(
            i,
            n_arms,
            horizon,
            topology.neighbours[i],
            n,
            topology.max_degree,
            alpha,
            params.consensus_kappa,
        )
        for i in range(n)
    ]
