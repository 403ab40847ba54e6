"""numba kernel for coop-UCB2: UCB on running-consensus estimates, 2K numbers per edge per step.

Mirrors ``mamab.algorithms.coop.agent`` operation for operation (same expressions, neighbours added in
increasing id); the equality test holds it to that. Estimates delayed by one exchange stand in
for a neighbour's missing current ones: ``late_edge[e]`` marks the edge e (in the receiver's
adjacency) whose message of the last step was held, ``prev_counts``/``prev_sums`` keep what
every agent sent then.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from mamab.engine.kernel_api import (
    BITS,
    BITS_LOST,
    BITS_RECV,
    LOST,
    RECV,
    ROUNDS,
    SENT,
    STEP,
    end_step,
    fate_to,
    played,
    reward_of,
)
from mamab.faults import DELAY, DELIVER, LOSE
from mamab.kernel_cache import njit


class Estimates(NamedTuple):
    """Every agent's consensus estimates (agents, arms) and the edges' held messages."""

    counts: np.ndarray  # the running consensus of counts
    sums: np.ndarray  # ... and of sums
    own_counts: np.ndarray  # this step's estimates plus the agent's own pull (what it sends)
    own_sums: np.ndarray
    prev_counts: np.ndarray  # what was sent the step before (a delayed message carries it)
    prev_sums: np.ndarray
    late_edge: np.ndarray  # (CSR edges,) the edge's last message is held


class Consensus(NamedTuple):
    """The run's constants: consensus weights, the graph, the index and the message size."""

    weight: np.ndarray  # (agents,) a neighbour's weight
    self_weight: np.ndarray  # (agents,)
    indptr: np.ndarray
    indices: np.ndarray
    n_agents: int  # N in the index
    alpha: float
    message_bits: int


@njit(cache=True, nogil=True)
def coop_chunk(noise, rewards, out, faults, est, plan):
    """Simulate ``noise.shape[0]`` steps of coop-UCB2 for every agent of one run."""
    counts, sums, own_counts, own_sums = est.counts, est.sums, est.own_counts, est.own_sums
    counters, late_edge, indptr, indices = out.counters, est.late_edge, plan.indptr, plan.indices
    weight, self_weight, message_bits = plan.weight, plan.self_weight, plan.message_bits
    crash, back, alpha, n_agents_total = faults.crash, faults.back, plan.alpha, plan.n_agents
    n_agents, n_arms = counts.shape
    alive = np.ones(n_agents, dtype=np.bool_)
    for row in range(noise.shape[0]):
        t = out.pos[STEP] + 1
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
            reward = reward_of(rewards, noise[row, n], arm)
            played(out, rewards, n, arm)
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
                    f = fate_to(alive, faults.loss, faults.delay, faults.key, t, 0, j, n)
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
                        counts[n, i] = counts[n, i] + weight[n] * est.prev_counts[j, i]
                        sums[n, i] = sums[n, i] + weight[n] * est.prev_sums[j, i]
        if faults.delay > 0.0:
            est.prev_counts[:, :] = own_counts
            est.prev_sums[:, :] = own_sums
        end_step(out)
