"""numba kernel for GosInE and gosine-robust: UCB over sticky + non-sticky arms, pull-gossip at
t = ceil(j^3), and blocking of bad recommenders (gosine-robust).

Mirrors ``mamab.algorithms.gosine.agent`` operation for operation; the equality test holds it to that.

The kernel takes few named arguments (kernel API, ``mamab.engine.kernel_api``): the noise block,
the run's arms (``Rewards``), recording (``Out``), faults (``Faults``), held messages (``Held``)
and liars (``Attack``), and the algorithm's own tuples: every agent's statistics and arm sets
(:class:`Sets`) and the run's gossip schedule, graph and blocks (:class:`Gossip`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from mamab.engine.attack_kernel import forged_by
from mamab.engine.kernel_api import (
    ROUNDS,
    STEP,
    count_sent,
    drop_late,
    fate_to,
    pulled,
    record,
    reward_from,
    route,
    step_ended,
)
from mamab.kernel_cache import njit


class Sets(NamedTuple):
    """Every agent's UCB statistics (agents, arms) and its sticky and non-sticky arm sets."""

    count: np.ndarray  # (agents, arms) samples of each arm
    total: np.ndarray  # ... their sum
    mean: np.ndarray
    inv_sqrt: np.ndarray  # 1 / sqrt(count)
    pulls: np.ndarray  # (agents, arms) pulls of the running phase
    active: np.ndarray  # (agents, width) sorted(sticky ∪ non-sticky)
    size: np.ndarray  # (agents,) arms in ``active``
    untried: np.ndarray  # (agents,) the arms of ``active`` before this position have been tried
    sticky: np.ndarray  # (agents, sticky arms)
    non_sticky: np.ndarray  # (agents, 2)
    n_non_sticky: np.ndarray  # (agents,)
    initial_non_sticky: np.ndarray  # (agents, 2) what a recovering agent gets back


class Gossip(NamedTuple):
    """The run's gossip: its phases and partner draws, the graph, the index, gosine-robust's
    blocks, and the state that runs from phase to phase."""

    alpha: float
    index_bits: int  # a reply's size
    ends: np.ndarray  # the step at which each phase ends (a gossip)
    draws: np.ndarray  # (phases, agents) uniforms choosing each agent's partner
    indptr: np.ndarray  # the graph, CSR
    indices: np.ndarray
    robust: bool  # gosine-robust: block bad recommenders
    block_ends: np.ndarray  # (phases,) the phase a block made in each phase lasts until
    state: np.ndarray  # [next phase index]
    blocked_until: np.ndarray  # (CSR edges,) the phase each neighbour's block ends
    rec_edge: np.ndarray  # (agents,) the last recommendation to judge: its edge (-1: none)
    rec_arm: np.ndarray  # (agents,) ... and its arm


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
def _gossip(phase, step, sets, plan, counters, faults, held, attack, alive):
    """Round 0: each agent asks a neighbour; round 1: replies (a liar's forged); then insert.

    gosine-robust first judges the last recommendation and asks only unblocked neighbours
    (``asked`` then holds the CSR edge). A delayed request gets no reply and a delayed reply
    inserts nothing: held, they arrive at the next exchange and are dropped there, as the
    reference agents do."""
    active, size, pulls, indices = sets.active, sets.size, sets.pulls, plan.indices
    late, late_reward, late_n = held.late, held.late_reward, held.late_n
    n_agents = active.shape[0]
    asked = np.full(n_agents, -1, dtype=np.int64)
    requests = np.zeros(n_agents, dtype=np.int64)
    reply = np.zeros(n_agents, dtype=np.int64)
    for p in range(n_agents):  # the phase's most-played arm, lowest index on ties
        reply[p] = _most_played(p, active, size, pulls)
    for n in range(n_agents):
        if not alive[n]:
            continue
        _judge(
            n,
            phase,
            reply,
            plan.robust,
            plan.block_ends,
            plan.blocked_until,
            plan.rec_edge,
            plan.rec_arm,
        )
        e = _partner_edge(n, phase, plan.draws, plan.indptr, plan.blocked_until)
        if e < 0:
            continue
        p = indices[e]
        count_sent(counters, n, 1)
        counters[ROUNDS, n] += 1
        f = fate_to(alive, faults.loss, faults.delay, faults.key, step, 0, n, p)
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
        count_sent(counters, p, plan.index_bits)
        f = fate_to(alive, faults.loss, faults.delay, faults.key, step, 1, p, n)
        if not route(counters, f, p, n, plan.index_bits, -1, 0.0, late, late_reward, late_n):
            continue
        arm = forged_by(attack, step, p, n, reply[p])
        plan.rec_edge[n] = e
        plan.rec_arm[n] = arm
        _insert(n, arm, active, size, pulls, sets.non_sticky, sets.n_non_sticky)
    for n in range(n_agents):
        _sorted_set(n, sets.sticky, sets.non_sticky, sets.n_non_sticky, active, size)


@njit(cache=True, nogil=True)
def gosine_chunk(noise, rewards, out, faults, held, attack, sets, plan):
    """Simulate ``noise.shape[0]`` steps of GosInE (gosine-robust when ``plan.robust``)."""
    # the hot loop's arrays, bound once (a tuple's field re-read in the loop can cost)
    count, total, mean, inv_sqrt = sets.count, sets.total, sets.mean, sets.inv_sqrt
    pulls, active, size, untried = sets.pulls, sets.active, sets.size, sets.untried
    pos, crash, back, alpha = out.pos, faults.crash, faults.back, plan.alpha
    indptr, state, ends, late_n = plan.indptr, plan.state, plan.ends, held.late_n
    means, gaps, bernoulli, sigma = rewards.means, rewards.gaps, rewards.bernoulli, rewards.sigma
    regret, trace, trace_out, grid = out.regret, out.trace, out.trace_out, out.grid
    n_agents = active.shape[0]
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
                pulls[n, :] = 0
                sets.non_sticky[n, :] = sets.initial_non_sticky[n, :]
                plan.blocked_until[indptr[n] : indptr[n + 1]] = 0
                plan.rec_edge[n] = -1
                _sorted_set(n, sets.sticky, sets.non_sticky, sets.n_non_sticky, active, size)
                untried[n] = 0
        for n in range(n_agents):
            if not alive[n]:
                continue  # crashed: plays nothing
            s, m = untried[n], size[n]  # untried arms first, in increasing order
            while s < m and count[n, active[n, s]] > 0:
                s += 1
            untried[n] = s
            if s == m:  # the first largest index (finite: every arm of the set was tried)
                s, value = 0, -math.inf
                for q in range(m):
                    a = active[n, q]
                    index = mean[n, a] + width * inv_sqrt[n, a]
                    if index > value:
                        s, value = q, index
            arm = active[n, s]
            reward = reward_from(means, bernoulli, sigma, noise[row, n], arm)
            c = count[n, arm] + 1
            count[n, arm] = c
            total[n, arm] += reward
            mean[n, arm] = total[n, arm] / c
            inv_sqrt[n, arm] = 1.0 / math.sqrt(c)
            pulls[n, arm] += 1
            pulled(regret, gaps, trace, trace_out, step - 1, n, arm)
        if late_n[0] > 0:
            drop_late(held.late, late_n, out.counters, alive)
        if state[0] < ends.size and step == ends[state[0]]:
            _gossip(state[0], step, sets, plan, out.counters, faults, held, attack, alive)
            state[0] += 1
            untried[:] = 0  # the sets changed: new arms may be untried
            pulls[:, :] = 0
        if step_ended(pos, grid):
            record(out)
