"""numba kernel for GosInE and gosine-robust: UCB over sticky + non-sticky arms, pull-gossip at
t = ceil(j^3), and blocking of bad recommenders (gosine-robust).

Mirrors ``mamab.algorithms.gosine.agent`` operation for operation; the equality test holds it to that.
"""

from __future__ import annotations

import math

import numpy as np

from mamab.engine.attack_kernel import forged
from mamab.engine.kernel_api import BITS, GRID, ROUNDS, SENT, STEP, drop_late, fate_to, route
from mamab.kernel_cache import njit


@njit(cache=True)
def _sorted_set(n, sticky, non_sticky, n_non_sticky, active, size):
    """active[n] = sorted(sticky ∪ non-sticky)."""
    m = 0
    for arm in sticky[n]:
        active[n, m] = arm
        m += 1
    for j in range(n_non_sticky[n]):
        active[n, m] = non_sticky[n, j]
        m += 1
    active[n, :m] = np.sort(active[n, :m])
    size[n] = m


@njit(cache=True)
def _most_played(p, active, size, played):
    """Agent p's most-played arm of the phase; the lowest index on ties."""
    best = active[p, 0]
    for s in range(1, size[p]):
        if played[p, active[p, s]] > played[p, best]:
            best = active[p, s]
    return best


@njit(cache=True)
def _judge(n, phase, reply, robust, block_ends, blocked_until, rec_edge, rec_arm):
    """gosine-robust: block the last recommender if its arm is not n's most-played arm."""
    e = rec_edge[n]
    rec_edge[n] = -1
    if robust and e >= 0 and reply[n] != rec_arm[n]:
        blocked_until[e] = max(blocked_until[e], block_ends[phase])


@njit(cache=True)
def _partner_edge(n, phase, draws, indptr, blocked_until):
    """The CSR edge of the neighbour n asks: drawn by the phase's uniform among the neighbours
    not blocked at the end of phase ``phase + 1`` (all of them for GosInE); -1 when none."""
    free = 0
    for e in range(indptr[n], indptr[n + 1]):
        free += phase + 1 >= blocked_until[e]
    if free == 0:
        return -1
    pick = min(int(draws[phase, n] * free), free - 1)
    for e in range(indptr[n], indptr[n + 1]):
        if phase + 1 >= blocked_until[e]:
            if pick == 0:
                return e
            pick -= 1
    return -1


@njit(cache=True)
def _insert(n, arm, active, size, played, non_sticky, n_non_sticky):
    """GosInE's insert: a new arm replaces the less-played non-sticky arm (higher index on ties)."""
    for s in range(size[n]):
        if active[n, s] == arm:
            return
    if n_non_sticky[n] == 0:
        return
    out = 0
    for j in range(1, n_non_sticky[n]):
        a, b = non_sticky[n, j], non_sticky[n, out]
        if played[n, a] < played[n, b] or (played[n, a] == played[n, b] and a > b):
            out = j
    non_sticky[n, out] = arm


@njit(cache=True)
def _gossip(
    phase,
    draws,
    indptr,
    indices,
    active,
    size,
    played,
    sticky,
    non_sticky,
    n_non_sticky,
    index_bits,
    counters,
    asked,
    requests,
    reply,
    loss,
    delay,
    fault_key,
    step,
    alive,
    late,
    late_reward,
    late_n,
    liar,
    attack,
    attack_arm,
    attack_pool,
    attack_key,
    robust,
    block_ends,
    blocked_until,
    rec_edge,
    rec_arm,
):
    """Round 0: each agent asks a neighbour; round 1: replies (a liar's forged); then insert.

    gosine-robust first judges the last recommendation and asks only unblocked neighbours
    (``asked`` then holds the CSR edge). A delayed request gets no reply and a delayed reply
    inserts nothing: held, they arrive at the next exchange and are dropped there, as the
    reference agents do."""
    n_agents = active.shape[0]
    requests[:] = 0
    for p in range(n_agents):  # the phase's most-played arm, lowest index on ties
        reply[p] = _most_played(p, active, size, played)
    for n in range(n_agents):
        asked[n] = -1
        if not alive[n]:
            continue
        _judge(n, phase, reply, robust, block_ends, blocked_until, rec_edge, rec_arm)
        e = _partner_edge(n, phase, draws, indptr, blocked_until)
        if e < 0:
            continue
        p = indices[e]
        counters[SENT, n] += 1
        counters[BITS, n] += 1
        counters[ROUNDS, n] += 1
        f = fate_to(alive, loss, delay, fault_key, step, 0, n, p)
        if not route(counters, f, n, p, 1, -1, 0.0, late, late_reward, late_n):
            continue
        asked[n] = e
        requests[p] += 1
    for p in range(n_agents):
        if requests[p] > 0:
            counters[ROUNDS, p] += 1
    for n in range(n_agents):
        e = asked[n]
        if e < 0:
            continue
        p = indices[e]
        counters[SENT, p] += 1
        counters[BITS, p] += index_bits
        f = fate_to(alive, loss, delay, fault_key, step, 1, p, n)
        if not route(counters, f, p, n, index_bits, -1, 0.0, late, late_reward, late_n):
            continue
        arm = reply[p]
        if liar[p]:
            arm = forged(attack, attack_arm, attack_pool, attack_key, step, p, n, arm)
        rec_edge[n] = e
        rec_arm[n] = arm
        _insert(n, arm, active, size, played, non_sticky, n_non_sticky)
    for n in range(n_agents):
        _sorted_set(n, sticky, non_sticky, n_non_sticky, active, size)


@njit(cache=True, nogil=True)
def gosine_chunk(
    noise,
    pos,
    grid,
    recorded,
    recorded_bits,
    regret,
    counters,
    count,
    total,
    mean,
    inv_sqrt,
    played,
    active,
    size,
    sticky,
    non_sticky,
    n_non_sticky,
    state,
    ends,
    draws,
    indptr,
    indices,
    means,
    gaps,
    bernoulli,
    sigma,
    alpha,
    index_bits,
    trace,
    trace_out,
    loss,
    delay,
    fault_key,
    crash,
    back,
    initial_non_sticky,
    late,
    late_reward,
    late_n,
    liar,
    attack,
    attack_arm,
    attack_pool,
    attack_key,
    robust,
    block_ends,
    blocked_until,
    rec_edge,
    rec_arm,
):
    """Simulate ``noise.shape[0]`` steps of GosInE (gosine-robust when ``robust``).

    ``state`` = [next phase index]; ``blocked_until`` (CSR edges) the phase each neighbour's block
    ends; ``rec_edge``/``rec_arm`` (agents) the last recommendation to judge (edge -1: none)."""
    n_agents = active.shape[0]
    asked = np.zeros(n_agents, dtype=np.int64)
    requests = np.zeros(n_agents, dtype=np.int64)
    reply = np.zeros(n_agents, dtype=np.int64)
    alive = np.ones(n_agents, dtype=np.bool_)
    for row in range(noise.shape[0]):
        width = math.sqrt(alpha * math.log(pos[STEP] + 1))  # the global t: never reset
        step = pos[STEP] + 1
        for n in range(n_agents):
            alive[n] = step < crash[n] or step >= back[n]
            if step == back[n]:  # back from a crash: fresh statistics, initial sets
                count[n, :] = 0
                total[n, :] = 0.0
                mean[n, :] = 0.0
                inv_sqrt[n, :] = 0.0
                played[n, :] = 0
                non_sticky[n, :] = initial_non_sticky[n, :]
                blocked_until[indptr[n] : indptr[n + 1]] = 0
                rec_edge[n] = -1
                _sorted_set(n, sticky, non_sticky, n_non_sticky, active, size)
        for n in range(n_agents):
            if not alive[n]:
                continue  # crashed: plays nothing
            arm = -1
            for s in range(size[n]):  # untried arms first, in increasing order
                if count[n, active[n, s]] == 0:
                    arm = active[n, s]
                    break
            if arm < 0:
                value = -math.inf
                for s in range(size[n]):
                    a = active[n, s]
                    index = mean[n, a] + width * inv_sqrt[n, a]
                    if index > value:
                        arm, value = a, index
            if bernoulli:
                reward = np.float64(noise[row, n] < means[arm])
            else:
                reward = means[arm] + sigma * noise[row, n]
            c = count[n, arm] + 1
            count[n, arm] = c
            total[n, arm] += reward
            mean[n, arm] = total[n, arm] / c
            inv_sqrt[n, arm] = 1.0 / math.sqrt(c)
            played[n, arm] += 1
            regret[n] += gaps[arm]
            if trace:
                trace_out[pos[STEP], n] = arm
        pos[STEP] += 1
        if late_n[0] > 0:
            drop_late(late, late_n, counters, alive)
        if state[0] < ends.size and pos[STEP] == ends[state[0]]:
            _gossip(
                state[0],
                draws,
                indptr,
                indices,
                active,
                size,
                played,
                sticky,
                non_sticky,
                n_non_sticky,
                index_bits,
                counters,
                asked,
                requests,
                reply,
                loss,
                delay,
                fault_key,
                pos[STEP],
                alive,
                late,
                late_reward,
                late_n,
                liar,
                attack,
                attack_arm,
                attack_pool,
                attack_key,
                robust,
                block_ends,
                blocked_until,
                rec_edge,
                rec_arm,
            )
            state[0] += 1
            played[:, :] = 0
        if pos[GRID] < grid.size and pos[STEP] == grid[pos[GRID]]:
            recorded[:, pos[GRID]] = regret
            recorded_bits[:, pos[GRID]] = counters[BITS]
            pos[GRID] += 1
