"""GosInE's schedule and initial sets as pure functions, shared by both engines."""

from __future__ import annotations

import math

import numpy as np

from mamab.schedule import initial_block


def phase_ends(horizon: int, exponent: float = 3.0) -> np.ndarray:
    """Steps ceil(j^exponent), j = 1, 2, ..., at most T: the ends of the gossip phases."""
    ends: list[int] = []
    j = 1
    while (end := math.ceil(j**exponent)) <= horizon:
        if not ends or end > ends[-1]:
            ends.append(end)
        j += 1
    return np.array(ends, dtype=np.int64)


def block_ends(phases: int, exponent: float) -> np.ndarray:
    """ceil(j^exponent) for the phases j = 1..phases, capped at phases + 1 (= never unblocked).

    Entry j - 1 is the phase until which gosine-robust blocks a neighbour judged at the end of
    phase j; the cap keeps it an integer whatever the exponent and changes no decision.
    """
    cap = phases + 1
    out = np.full(phases, cap, dtype=np.int64)
    for j in range(1, phases + 1):
        if exponent * math.log(j) >= math.log(cap):
            break  # j^exponent >= cap from here on
        out[j - 1] = min(cap, math.ceil(j**exponent))
    return out


def initial_sets(agent: int, n_arms: int, n_agents: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(sticky, non-sticky): S_n, and the (up to) two arms that follow the block, mod K."""
    sticky = initial_block(agent, n_arms, n_agents)
    start = agent * len(sticky) + len(sticky)
    extra: list[int] = []
    for i in range(n_arms):
        arm = (start + i) % n_arms
        if len(extra) == 2:
            break
        if arm not in sticky and arm not in extra:
            extra.append(arm)
    return sticky, tuple(sorted(extra))


def draw_partners(rng: np.random.Generator, phases: int, n_agents: int) -> np.ndarray:
    """Uniform draws (phases, agents); agent n asks neighbour floor(u · degree) in a phase."""
    return rng.random((phases, n_agents))


def partner(u: float, degree: int) -> int:
    """Index of the neighbour drawn by ``u`` (u < 1, so always in 0..degree-1)."""
    return min(int(u * degree), degree - 1)
