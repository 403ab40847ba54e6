"""UCB1 over a set of arms (paper Alg. 2), the building block of every agent.

Index of arm i: mean_i + sqrt(alpha·log t)·(1/sqrt(n_i)), where t = 1 + samples seen so far
(so t is the step number for a single agent). Every arm is played once, in increasing arm order,
before the index is used; ties go to the lowest arm index.
"""

from __future__ import annotations

import math
from collections.abc import Iterable


class UCB:
    """Sample statistics and the UCB1 choice over a fixed set of arms."""

    def __init__(self, arms: Iterable[int], alpha: float = 2.0):
        self.arms = tuple(sorted(set(arms)))
        if not self.arms:
            raise ValueError("UCB needs at least one arm")
        self.alpha = alpha
        self.samples = 0
        self.counts = dict.fromkeys(self.arms, 0)
        self.sums = dict.fromkeys(self.arms, 0.0)
        self.means = dict.fromkeys(self.arms, 0.0)
        self.inv_sqrt = dict.fromkeys(self.arms, 0.0)

    def add(self, arm: int) -> None:
        """Play ``arm`` too from now on (a late recommendation); it starts with no samples."""
        if arm in self.counts:
            return
        self.arms = tuple(sorted((*self.arms, arm)))
        self.counts[arm] = 0
        self.sums[arm] = 0.0
        self.means[arm] = 0.0
        self.inv_sqrt[arm] = 0.0

    def select(self, among: tuple[int, ...] | None = None) -> int:
        """The arm to play, from all arms or from ``among`` (sorted, a subset of them)."""
        arms = self.arms if among is None else among
        for arm in arms:
            if self.counts[arm] == 0:
                return arm
        width = math.sqrt(self.alpha * math.log(self.samples + 1))
        best, best_index = arms[0], -math.inf
        for arm in arms:
            index = self.means[arm] + width * self.inv_sqrt[arm]
            if index > best_index:
                best, best_index = arm, index
        return best

    def update(self, arm: int, reward: float) -> None:
        count = self.counts[arm] + 1
        self.counts[arm] = count
        self.sums[arm] += reward
        self.means[arm] = self.sums[arm] / count
        self.inv_sqrt[arm] = 1.0 / math.sqrt(count)
        self.samples += 1

    def most_played(self) -> int:
        """The arm with most samples; the lowest index on ties."""
        best = self.arms[0]
        for arm in self.arms:
            if self.counts[arm] > self.counts[best]:
                best = arm
        return best
