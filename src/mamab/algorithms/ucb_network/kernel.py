"""numba kernel for UCB-Network / Follow Your Leader: leaders run UCB, followers copy them.

Mirrors ``mamab.algorithms.ucb_network.agent`` operation for operation: a leader's UCB picks its untried
arms first in index order, then the first maximum of mean + sqrt(alpha·log(t))·(1/sqrt n) with
t = 1 + the samples it has seen; it learns its own sample, then its neighbours' by increasing
sender id (the reference host's delivery order). A follower plays its leader's arm of the step
before (arm 0 at step 1). The equality test holds both engines to that.

No faults (the configuration refuses them for ucb-network), so every message of a step arrives
and the counters grow by the same amounts every step: ``per_step`` holds them, one row per
counter (sent, bits, received, bits received, rounds), computed once by the driver.

Leaders' statistics live in arrays of shape (leaders, arms); ``rank[n]`` is agent n's row, or
-1 for a follower. ``sample_ptr``/``sample_to`` list, per sender, the neighbouring leaders its
sample goes to (increasing id).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from mamab.engine.kernel_api import BITS, GRID, STEP
from mamab.engine.ucb_kernels import argmax_index


@njit(cache=True, inline="always")
def _learn(row, arm, reward, count, total, mean, inv_sqrt, samples):
    """Leader ``row`` learns one sample of ``arm`` (UCB.update, expression for expression)."""
    c = count[row, arm] + 1
    count[row, arm] = c
    total[row, arm] += reward
    mean[row, arm] = total[row, arm] / c
    inv_sqrt[row, arm] = 1.0 / math.sqrt(c)
    samples[row] += 1


@njit(cache=True, inline="always")
def _choose(row, count, mean, inv_sqrt, samples, untried, alpha):
    """Leader ``row``'s UCB choice: the first untried arm, else the first index maximum."""
    n_arms = count.shape[1]
    arm = untried[row]
    while arm < n_arms and count[row, arm] > 0:
        arm += 1
    untried[row] = arm
    if arm < n_arms:
        return arm
    width = math.sqrt(alpha * math.log(samples[row] + 1))
    return argmax_index(row, n_arms, mean, inv_sqrt, width)


@njit(cache=True, nogil=True)
def ucb_network_chunk(noise, pos, grid, recorded, recorded_bits, regret, counters, count, total,
                      mean, inv_sqrt, samples, untried, next_arm, rank, leader, sample_ptr,
                      sample_to, per_step, means, gaps, bernoulli, sigma, alpha, trace,
                      trace_out):  # fmt: skip
    """Simulate ``noise.shape[0]`` steps of FYL for every agent of one run."""
    n_agents = rank.shape[0]
    played = np.empty(n_agents, dtype=np.int64)
    rewards = np.empty(n_agents)
    for step_row in range(noise.shape[0]):
        for n in range(n_agents):
            row = rank[n]
            if row >= 0:
                a = _choose(row, count, mean, inv_sqrt, samples, untried, alpha)
            else:
                a = next_arm[n]
            if bernoulli:
                reward = np.float64(noise[step_row, n] < means[a])
            else:
                reward = means[a] + sigma * noise[step_row, n]
            regret[n] += gaps[a]
            if trace:
                trace_out[pos[STEP], n] = a
            played[n] = a
            rewards[n] = reward
            if row >= 0:
                _learn(row, a, reward, count, total, mean, inv_sqrt, samples)
        for sender in range(n_agents):  # samples reach leaders by increasing sender id
            for e in range(sample_ptr[sender], sample_ptr[sender + 1]):
                _learn(rank[sample_to[e]], played[sender], rewards[sender], count, total, mean,
                       inv_sqrt, samples)  # fmt: skip
        for n in range(n_agents):
            if rank[n] < 0:
                next_arm[n] = played[leader[n]]
        for c in range(per_step.shape[0]):
            for n in range(n_agents):
                counters[c, n] += per_step[c, n]
        pos[STEP] += 1
        if pos[GRID] < grid.size and pos[STEP] == grid[pos[GRID]]:
            recorded[:, pos[GRID]] = regret
            recorded_bits[:, pos[GRID]] = counters[BITS]
            pos[GRID] += 1
