"""Epoch schedules of the LCC-UCB family: pure functions of (T, K', D).

Epoch j lasts K'(K'+1)·2^j steps (Alg. 1); LCC-UCB-GRAPH splits it into D sub-epochs of that
length each (Alg. 3). A *phase* is one UCB instance: an epoch for LCC-UCB, a sub-epoch for
LCC-UCB-GRAPH. The last phase is cut at the horizon.
"""

from __future__ import annotations

import math
from bisect import bisect_left

import numpy as np

from mamab.bits import REWARD_BITS as REWARD_BITS  # message sizes, re-exported (mamab.bits)
from mamab.bits import agent_bits as agent_bits
from mamab.bits import index_bits as index_bits


def block_size(n_arms: int, n_agents: int) -> int:
    """ceil(K/N): arms in each agent's initial block."""
    return -(-n_arms // n_agents)


def initial_block(agent: int, n_arms: int, n_agents: int) -> tuple[int, ...]:
    """S_n = {(n·ceil(K/N) + i) mod K : i < ceil(K/N)}, 0-indexed, in increasing arm order."""
    size = block_size(n_arms, n_agents)
    return tuple(sorted({(agent * size + i) % n_arms for i in range(size)}))


def k_prime(n_arms: int, n_agents: int, max_degree: int) -> int:
    """K' = ceil(K/N) + K_G (K_G = N-1 on the complete graph, Thm 1)."""
    return block_size(n_arms, n_agents) + max_degree


def base_length(kp: int) -> int:
    """Length of epoch 0: K'(K'+1)."""
    return kp * (kp + 1)


def phase_lengths(horizon: int, base: int, sub_epochs: int = 1) -> np.ndarray:
    """Lengths of the UCB phases until the horizon: ``sub_epochs`` phases of base·2^j in epoch j."""
    if horizon <= 0 or base <= 0 or sub_epochs <= 0:
        raise ValueError("horizon, base length and sub-epochs must be positive")
    lengths: list[int] = []
    total, epoch = 0, 0
    while total < horizon:
        for _ in range(sub_epochs):
            length = min(base << epoch, horizon - total)
            lengths.append(length)
            total += length
            if total == horizon:
                break
        epoch += 1
    return np.array(lengths, dtype=np.int64)


def n_epochs(horizon: int, base: int, sub_epochs: int = 1) -> int:
    """J: the number of (possibly cut) epochs the horizon spans."""
    return math.ceil(len(phase_lengths(horizon, base, sub_epochs)) / sub_epochs)


def is_listed(steps: tuple[int, ...], step: int) -> bool:
    """Whether ``step`` is one of the increasing ``steps`` (a phase end, say)."""
    i = bisect_left(steps, step)
    return i < len(steps) and steps[i] == step
