"""UCB-Network's (FYL) driver: the reference's roles (greedy dominating set)."""

from __future__ import annotations

import numpy as np

from mamab.algorithms.ucb_network.agent import leader_of
from mamab.algorithms.ucb_network.kernel import Leaders, Roles, ucb_network_chunk
from mamab.engine.recording import FastRun
from mamab.result import RunResult
from mamab.schedule import REWARD_BITS, index_bits


def run(run: FastRun) -> RunResult:
    """One UCB-Network (FYL) run with the reference's roles (greedy dominating set)."""
    config, instance, grid, trace = run.config, run.instance, run.grid, run.trace
    n, k = config.agents, config.arms
    rec = run.record()
    neighbours = instance.topology.neighbours
    leader = np.array(leader_of(neighbours), dtype=np.int64)
    is_leader = leader == np.arange(n)
    rank = np.where(is_leader, np.cumsum(is_leader) - 1, -1).astype(np.int64)
    sample_to = [[v for v in neighbours[u] if is_leader[v]] for u in range(n)]
    sample_ptr = np.zeros(n + 1, dtype=np.int64)
    sample_ptr[1:] = np.cumsum([len(to) for to in sample_to])
    rows = int(is_leader.sum())
    state = Leaders(
        count=np.zeros((rows, k), dtype=np.int64),
        total=np.zeros((rows, k)),
        mean=np.zeros((rows, k)),
        inv_sqrt=np.zeros((rows, k)),
        samples=np.zeros(rows, dtype=np.int64),
        untried=np.zeros(rows, dtype=np.int64),
        next_arm=np.zeros(n, dtype=np.int64),
    )
    flat_to = np.array([v for to in sample_to for v in to], dtype=np.int64)
    roles = Roles(rank, leader, sample_ptr, flat_to, fyl_counts_per_step(leader, sample_to, k))
    out, rewards = rec.out(grid, trace), run.rewards()
    run.feed(ucb_network_chunk, rewards, out, state, roles, run.params.alpha)
    return rec.result(instance, trace)


def fyl_counts_per_step(leader: np.ndarray, sample_to: list[list[int]], n_arms: int) -> np.ndarray:
    """What each FYL agent sends, receives and the rounds it talks in, every step (no faults).

    Rows: messages sent, bits sent, messages received, bits received, rounds (``COUNTERS``'s
    first five). A sample costs ceil(log2 K) + 64 bits, a leader's arm ceil(log2 K).
    """
    n = leader.size
    sample_bits, arm_bits = index_bits(n_arms) + REWARD_BITS, index_bits(n_arms)
    followers = np.bincount(leader[leader != np.arange(n)], minlength=n)
    samples_out = np.array([len(to) for to in sample_to], dtype=np.int64)
    samples_in = np.bincount([v for to in sample_to for v in to], minlength=n).astype(np.int64)
    arms_in = (leader != np.arange(n)).astype(np.int64)
    sent = samples_out + followers
    return np.array(
        [
            sent,
            samples_out * sample_bits + followers * arm_bits,
            samples_in + arms_in,
            samples_in * sample_bits + arms_in * arm_bits,
            (sent > 0).astype(np.int64),
        ],
        dtype=np.int64,
    )
