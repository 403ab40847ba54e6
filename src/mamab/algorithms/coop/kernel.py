"""numba kernel for coop-UCB2: UCB on running-consensus estimates, 2K numbers per edge per step.

Mirrors ``mamab.algorithms.coop.agent`` operation for operation (same expressions, neighbours added in
increasing id); the equality test holds it to that. Estimates delayed by one exchange stand in
for a neighbour's missing current ones: ``late_edge[e]`` marks the edge e (in the receiver's
adjacency) whose message of the last step was held, ``prev_counts``/``prev_sums`` keep what
every agent sent then.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from mamab.engine.kernel_api import (
    BITS,
    BITS_LOST,
    BITS_RECV,
    GRID,
    LOST,
    RECV,
    ROUNDS,
    SENT,
    STEP,
    fate_to,
)
from mamab.faults import DELAY, DELIVER, LOSE


@njit(cache=True, nogil=True)
def coop_chunk(noise, pos, grid, recorded, recorded_bits, regret, counters, counts, sums, own_counts,
               own_sums, weight, self_weight, indptr, indices, n_agents_total, means, gaps, bernoulli,
               sigma, alpha, message_bits, trace, trace_out, loss, delay, fault_key, crash, back,
               late_edge, prev_counts, prev_sums):  # fmt: skip
    """Simulate ``noise.shape[0]`` steps of coop-UCB2 for every agent of one run."""
    n_agents, n_arms = counts.shape
    alive = np.ones(n_agents, dtype=np.bool_)
    for row in range(noise.shape[0]):
        t = pos[STEP] + 1
        log_t = math.log(t)
        extra = math.sqrt(log_t)
        for n in range(n_agents):
            alive[n] = t < crash[n] or t >= back[n]
            if t == back[n]:  # back from a crash: estimates start from zero
                counts[n, :] = 0.0
                sums[n, :] = 0.0
        for n in range(n_agents):
            if not alive[n]:
                continue  # crashed: plays and sends nothing
            arm = -1
            for i in range(n_arms):
                if counts[n, i] == 0.0:
                    arm = i
                    break
            if arm < 0:
                value = -math.inf
                for i in range(n_arms):
                    c = counts[n, i]
                    index = sums[n, i] / c + math.sqrt(
                        alpha * (c + extra) / (n_agents_total * c) * log_t / c
                    )
                    if index > value:
                        arm, value = i, index
            if bernoulli:
                reward = np.float64(noise[row, n] < means[arm])
            else:
                reward = means[arm] + sigma * noise[row, n]
            regret[n] += gaps[arm]
            if trace:
                trace_out[pos[STEP], n] = arm
            own_counts[n, :] = counts[n, :]
            own_sums[n, :] = sums[n, :]
            own_counts[n, arm] += 1.0
            own_sums[n, arm] += reward
        for n in range(n_agents):  # consensus: own share first, then neighbours by increasing id
            dead = not alive[n]
            if not dead:
                for i in range(n_arms):
                    counts[n, i] = self_weight[n] * own_counts[n, i]
                    sums[n, i] = self_weight[n] * own_sums[n, i]
                degree = indptr[n + 1] - indptr[n]
                if degree > 0:
                    counters[SENT, n] += degree
                    counters[BITS, n] += degree * message_bits
                    counters[ROUNDS, n] += 1
            for e in range(indptr[n], indptr[n + 1]):
                j = indices[e]
                was_late, late_edge[e] = late_edge[e], False
                if was_late and dead:  # j's estimates of the last step meet a dead agent
                    counters[LOST, j] += 1
                    counters[BITS_LOST, j] += message_bits
                elif was_late:  # ... or arrive now
                    counters[RECV, n] += 1
                    counters[BITS_RECV, n] += message_bits
                f = LOSE  # a dead neighbour sent nothing
                if alive[j]:
                    f = fate_to(alive, loss, delay, fault_key, t, 0, j, n)
                    if f == DELAY:
                        late_edge[e] = True
                    elif f == DELIVER:
                        counters[RECV, n] += 1
                        counters[BITS_RECV, n] += message_bits
                    else:  # j's estimates never reach n
                        counters[LOST, j] += 1
                        counters[BITS_LOST, j] += message_bits
                if dead:
                    continue
                if f == DELIVER:
                    for i in range(n_arms):
                        counts[n, i] = counts[n, i] + weight[n] * own_counts[j, i]
                        sums[n, i] = sums[n, i] + weight[n] * own_sums[j, i]
                elif was_late:  # the newest estimates n has from j
                    for i in range(n_arms):
                        counts[n, i] = counts[n, i] + weight[n] * prev_counts[j, i]
                        sums[n, i] = sums[n, i] + weight[n] * prev_sums[j, i]
        if delay > 0.0:
            prev_counts[:, :] = own_counts
            prev_sums[:, :] = own_sums
        pos[STEP] += 1
        if pos[GRID] < grid.size and pos[STEP] == grid[pos[GRID]]:
            recorded[:, pos[GRID]] = regret
            recorded_bits[:, pos[GRID]] = counters[BITS]
            pos[GRID] += 1
