"""numba kernel for UCB-Network / Follow Your Leader: leaders run UCB, followers copy them.

Mirrors ``mamab.algorithms.ucb_network.agent`` operation for operation: a leader's UCB picks its untried
arms first in index order, then the first maximum of mean + sqrt(alpha·log(t))·(1/sqrt n) with
t = 1 + the samples it has seen; it learns its own sample, then its neighbours' by increasing
sender id (the reference host's delivery order). A follower plays its leader's arm of the step
before (arm 0 at step 1). The equality test holds both engines to that.

No faults (the configuration refuses them for ucb-network), so every message of a step arrives
and the counters grow by the same amounts every step: ``per_step`` holds them, one row per
counter (sent, bits, received, bits received, rounds), computed once by the driver.

The kernel takes few named arguments (kernel API 1, ``mamab.engine.kernel_api``): the noise
block, the run's arms (``Rewards``) and recording (``Out``), the leaders' UCB state
(:class:`Leaders`: arrays of shape (leaders, arms); ``rank[n]`` is agent n's row, or -1 for a
follower) and the fixed roles (:class:`Roles`: ``sample_ptr``/``sample_to`` list, per sender,
the neighbouring leaders its sample goes to, by increasing id).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from mamab.engine.kernel_api import STEP, pulled, record, reward_from, step_ended
from mamab.engine.ucb_kernels import argmax_index, ucb_update
from mamab.kernel_cache import njit


class Leaders(NamedTuple):
    """The leaders' UCB state, one row per leader, plus each agent's next arm (a follower's)."""

    count: np.ndarray  # (leaders, arms) samples of each arm
    total: np.ndarray  # (leaders, arms) their sum
    mean: np.ndarray  # (leaders, arms)
    inv_sqrt: np.ndarray  # (leaders, arms) 1 / sqrt(count)
    samples: np.ndarray  # (leaders,) samples seen
    untried: np.ndarray  # (leaders,) the lowest arm maybe never sampled
    next_arm: np.ndarray  # (agents,) what a follower plays next: its leader's last arm


class Roles(NamedTuple):
    """Who leads whom and where samples go: fixed for the run."""

    rank: np.ndarray  # (agents,) a leader's row, -1 for a follower
    leader: np.ndarray  # (agents,) each agent's leader (itself for a leader)
    sample_ptr: np.ndarray  # (agents + 1,) CSR pointers into sample_to, per sender
    sample_to: np.ndarray  # the neighbouring leaders each sender's sample reaches
    per_step: np.ndarray  # (5, agents) counters added every step (no faults)


@njit(cache=True)
def _choose_all(count, mean, inv_sqrt, untried, samples, rank, alpha, chosen):
    """Every leader's UCB choice for the step (``chosen[n]`` for leader n): its first untried
    arm, else the first index maximum. Once per step, not per leader: numba counts a reference
    for every array passed to a helper that loops (benchmarks/README.md, tenth round)."""
    n_arms = count.shape[1]
    for n in range(rank.shape[0]):
        row = rank[n]
        if row < 0:
            continue
        arm = untried[row]
        while arm < n_arms and count[row, arm] > 0:
            arm += 1
        untried[row] = arm
        if arm == n_arms:
            width = math.sqrt(alpha * math.log(samples[row] + 1))
            arm = argmax_index(row, n_arms, mean, inv_sqrt, width)
        chosen[n] = arm


@njit(cache=True, nogil=True)
def ucb_network_chunk(noise, rewards, out, state, roles, alpha):
    """Simulate ``noise.shape[0]`` steps of FYL for every agent of one run."""
    rank, leader, per_step = roles.rank, roles.leader, roles.per_step
    sample_ptr, sample_to = roles.sample_ptr, roles.sample_to
    count, total, mean, inv_sqrt = state.count, state.total, state.mean, state.inv_sqrt
    samples, untried, next_arm = state.samples, state.untried, state.next_arm
    means, bernoulli, sigma, gaps = rewards.means, rewards.bernoulli, rewards.sigma, rewards.gaps
    regret, trace, trace_out = out.regret, out.trace, out.trace_out
    pos, grid, counters = out.pos, out.grid, out.counters
    n_agents = rank.shape[0]
    chosen = np.empty(n_agents, dtype=np.int64)
    got = np.empty(n_agents)
    for step_row in range(noise.shape[0]):
        _choose_all(count, mean, inv_sqrt, untried, samples, rank, alpha, chosen)
        for n in range(n_agents):
            row = rank[n]
            a = chosen[n] if row >= 0 else next_arm[n]
            reward = reward_from(means, bernoulli, sigma, noise[step_row, n], a)
            pulled(regret, gaps, trace, trace_out, pos[STEP], n, a)
            chosen[n] = a
            got[n] = reward
            if row >= 0:  # a leader learns its own sample (UCB.update, expression for expression)
                ucb_update(count, total, mean, inv_sqrt, row, a, reward)
                samples[row] += 1
        for sender in range(n_agents):  # samples reach leaders by increasing sender id
            for e in range(sample_ptr[sender], sample_ptr[sender + 1]):
                row = rank[sample_to[e]]
                ucb_update(count, total, mean, inv_sqrt, row, chosen[sender], got[sender])
                samples[row] += 1
        for n in range(n_agents):
            if rank[n] < 0:
                next_arm[n] = chosen[leader[n]]
        for c in range(per_step.shape[0]):
            for n in range(n_agents):
                counters[c, n] += per_step[c, n]
        if step_ended(pos, grid):
            record(out)
