"""DEMAB's schedule and rules as pure functions, shared by both engines."""

from __future__ import annotations

import math

import numpy as np

from mamab.schedule import block_size


def stage_one_length(horizon: int, n_agents: int, n_arms: int) -> int:
    """About T/(NK) steps, and at least one pull of every arm of the largest initial block."""
    return max(-(-horizon // (n_agents * n_arms)), block_size(n_arms, n_agents))


def phase_ends(horizon: int, n_agents: int, n_arms: int) -> np.ndarray:
    """Steps after which agents report: the end of stage 1 (D1), then of phases of D1·2^l steps.

    Only ends before the horizon: a report at T could not change any reward.
    """
    d1 = stage_one_length(horizon, n_agents, n_arms)
    ends, t, length = [], d1, d1
    while t < horizon:
        ends.append(t)
        length *= 2
        t += length
    return np.array(ends, dtype=np.int64)


def draw_permutation(rng: np.random.Generator, n_arms: int) -> np.ndarray:
    """The public random allocation of arms (from the run's 'algorithm' stream)."""
    return rng.permutation(n_arms)


def initial_split(permutation: np.ndarray, n_agents: int) -> list[list[int]]:
    """Arms dealt in the order of a random permutation, arm j of it to agent j mod N (sorted)."""
    return [sorted(int(a) for a in permutation[n::n_agents]) for n in range(n_agents)]


def radius(constant: float, horizon: int, count: int) -> float:
    """Confidence radius sqrt(c·log T / n) (c: ``demab_radius``, default 2)."""
    return math.sqrt(constant * math.log(horizon) / count)


def unbalanced(sizes: list[int]) -> bool:
    """The server re-divides when the largest arm set is more than twice the smallest (or 1)."""
    return max(sizes) > 2 * max(1, min(sizes))


def redivide(arms: list[int], n_agents: int) -> list[list[int]]:
    """Remaining arms in increasing order, dealt round-robin from agent 0."""
    ordered = sorted(arms)
    return [ordered[n::n_agents] for n in range(n_agents)]
