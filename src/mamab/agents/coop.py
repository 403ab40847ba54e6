"""coop-UCB2 (Landgren, Srivastava, Leonard, 2016): UCB on running-consensus estimates.

Agent k keeps, for every arm i, consensus estimates n̂_i (pulls per agent) and ŝ_i (reward sum per
agent). Each step it adds its own pull, sends (n̂ + ξ, ŝ + r·ξ) — 2K numbers — to every
neighbour, and averages with the weights P = I − (κ/d_max)·L (L the graph Laplacian):
P_kj = κ/d_max for a neighbour j, P_kk = 1 − d_k·κ/d_max, so each row sums to one.
Index: ŝ_i/n̂_i + sqrt(alpha·(n̂_i + f(t))/(N·n̂_i) · log t / n̂_i), f(t) = sqrt(log t).
"""

from __future__ import annotations

import math

import numpy as np

from mamab.agents.base import Agent, Message
from mamab.errors import InvalidMessage
from mamab.schedule import REWARD_BITS


def consensus_weights(degree: int, max_degree: int, kappa: float) -> tuple[float, float]:
    """(weight of a neighbour, weight of oneself) in row k of P."""
    if max_degree == 0:
        return 0.0, 1.0
    w = kappa / max_degree
    return w, 1.0 - degree * w


class CoopUcbAgent(Agent):
    def __init__(self, agent_id: int, n_arms: int, horizon: int, neighbours: tuple[int, ...],
                 n_agents: int, max_degree: int, alpha: float = 2.0, kappa: float = 1.0):  # fmt: skip
        super().__init__(agent_id, n_arms, horizon, neighbours)
        self.n_agents = n_agents
        self.alpha = alpha
        self.weight, self.self_weight = consensus_weights(len(neighbours), max_degree, kappa)
        self.counts = np.zeros(n_arms)  # n̂
        self.sums = np.zeros(n_arms)  # ŝ
        self.t = 0
        self._next_counts: np.ndarray | None = None
        self._next_sums: np.ndarray | None = None
        self._heard: set[int] = set()

    def reset(self, done_steps: int) -> None:
        self.counts, self.sums = np.zeros(self.n_arms), np.zeros(self.n_arms)
        self.t = done_steps
        self._next_counts = self._next_sums = None
        self._heard = set()
        self._outbox = []

    def select_arm(self) -> int:
        if self._next_counts is not None:
            self.counts, self.sums = self._next_counts, self._next_sums
            self._next_counts = self._next_sums = None
        self.t += 1
        for arm in range(self.n_arms):
            if self.counts[arm] == 0.0:
                return arm
        log_t = math.log(self.t)
        extra = math.sqrt(log_t)
        best, best_index = 0, -math.inf
        for arm in range(self.n_arms):
            n = float(self.counts[arm])
            index = float(self.sums[arm]) / n + math.sqrt(
                self.alpha * (n + extra) / (self.n_agents * n) * log_t / n
            )
            if index > best_index:
                best, best_index = arm, index
        return best

    def observe(self, arm: int, reward: float) -> None:
        own_counts, own_sums = self.counts.copy(), self.sums.copy()
        own_counts[arm] += 1.0
        own_sums[arm] += reward
        self._next_counts = self.self_weight * own_counts
        self._next_sums = self.self_weight * own_sums
        self._heard = set()
        bits = 2 * self.n_arms * REWARD_BITS
        self._outbox = [
            Message(self.agent_id, v, (own_counts, own_sums), bits) for v in self.neighbours
        ]

    def receive(self, message: Message) -> None:
        self._check_envelope(message)
        payload = message.payload
        if not (isinstance(payload, tuple) and len(payload) == 2):
            raise InvalidMessage(f"agent {self.agent_id}: coop-UCB2 payload must be (counts, sums)")
        counts, sums = payload
        for values in (counts, sums):
            if not (isinstance(values, np.ndarray) and values.shape == (self.n_arms,) and values.dtype == np.float64
                    and np.all(np.isfinite(values))):  # fmt: skip
                raise InvalidMessage(
                    f"agent {self.agent_id}: coop-UCB2 estimates must be {self.n_arms} finite floats"
                )
        if np.any(counts < 0):
            raise InvalidMessage(f"agent {self.agent_id}: negative pull estimates")
        if self._next_counts is None or message.sender in self._heard:
            raise InvalidMessage(
                f"agent {self.agent_id}: unexpected estimates from {message.sender}"
            )
        self._heard.add(message.sender)
        self._next_counts = self._next_counts + self.weight * counts
        self._next_sums = self._next_sums + self.weight * sums
