"""numba kernel for DEMAB: round-robin elimination per agent, server rounds at phase ends.

Mirrors ``mamab.algorithms.demab.agent`` operation for operation (same floating-point expressions, same
tie rules, same message accounting); the equality test holds it to that.

The kernel takes few named arguments (kernel API, ``mamab.engine.kernel_api``): the noise block,
the run's arms (``Rewards``), recording (``Out``), faults (``Faults``) and held messages
(``Held``), and DEMAB's own tuples: every agent's arm set and samples (:class:`Arms`) and the
run's schedule and server state (:class:`Schedule`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

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
from mamab.faults import fate
from mamab.kernel_cache import njit


class Arms(NamedTuple):
    """Every agent's arm set (agents, slots; slots sorted by arm) and its samples of the phase."""

    active: np.ndarray  # (agents, width) the arms not yet eliminated
    size: np.ndarray  # (agents,) arms in ``active``
    count: np.ndarray  # (agents, width) samples of each slot's arm this phase
    total: np.ndarray  # ... their sum
    pointer: np.ndarray  # (agents,) the next slot of the round robin
    initial: np.ndarray  # (agents, width) what a recovering agent gets back
    initial_size: np.ndarray  # (agents,)


class Schedule(NamedTuple):
    """The run's constants (phases, radius, message sizes) and the server's state."""

    horizon: int  # T, in the radius sqrt(alpha·log T / n)
    alpha: float  # the radius's alpha (``demab_radius``)
    ends: np.ndarray  # the steps at which phases end (server rounds)
    stage_one: int  # stage 1's last step: local elimination after every cycle
    index_bits: int
    count_bits: int
    share_best: bool  # an agent with no arm left plays the announced arm, else its own best
    state: np.ndarray  # [last announced arm, next end index, then each agent's arm with none left]


@njit(cache=True)
def _bound(total, count, alpha, log_horizon, sign):
    """mean ± sqrt(alpha·log T / n), as the reference computes it; ±inf for an unsampled arm."""
    if count == 0:
        return sign * math.inf
    return total / count + sign * math.sqrt(alpha * log_horizon / count)


@njit(cache=True)
def _eliminate(n, bound, active, size, count, total, alpha, log_horizon):
    """Keep the slots whose upper bound is not below ``bound``; restart the cycle."""
    kept = 0
    for s in range(size[n]):
        if not _bound(total[n, s], count[n, s], alpha, log_horizon, 1.0) < bound:
            active[n, kept] = active[n, s]
            count[n, kept] = count[n, s]
            total[n, kept] = total[n, s]
            kept += 1
    size[n] = kept


@njit(cache=True)
def _best_lcb(n, active, size, count, total, alpha, log_horizon):
    """(slot, lcb) of the largest lower bound; the lowest arm on ties (slots are sorted)."""
    best, value = 0, -math.inf
    for s in range(size[n]):
        lcb = _bound(total[n, s], count[n, s], alpha, log_horizon, -1.0)
        if lcb > value:
            best, value = s, lcb
    return best, value


@njit(cache=True)
def _agent_sends(counters, n, server, bits, f, held):
    """Count one message of fate ``f`` from agent n to the server; True when it arrives now."""
    count_sent(counters, n, bits)
    counters[ROUNDS, n] += 1
    return route(counters, f, n, server, bits, -1, 0.0, held.late, held.late_reward, held.late_n)


@njit(cache=True)
def _server_says(counters, f, server, n, bits, held):
    """Settle a message of fate ``f`` from the server to agent n; True when it arrives now."""
    return route(counters, f, server, n, bits, -1, 0.0, held.late, held.late_reward, held.late_n)


@njit(cache=True)
def _server_rounds(arms, plan, counters, faults, held, alive, step):
    """Reports, announcement, elimination, counts and (if unbalanced) re-division.

    Round r of this exchange sends message (step, r, sender, receiver); the server is node N.
    Under message loss every step acts only on what arrived, as the reference server does; a
    delayed message has missed its round: it is held, to arrive and be dropped next exchange.
    """
    active, size, count, total = arms.active, arms.size, arms.count, arms.total
    alpha, log_horizon, state, share_best = (
        plan.alpha,
        math.log(plan.horizon),
        plan.state,
        plan.share_best,
    )
    index_bits, pair_bits = plan.index_bits, plan.index_bits + 64
    loss, delay, fault_key = faults.loss, faults.delay, faults.key
    n_agents = active.shape[0]
    server = n_agents
    best_arm, best_bound = -1, -math.inf
    for n in range(n_agents):  # round 0: reports
        if size[n] == 0 or not alive[n]:
            continue
        slot, lcb = _best_lcb(n, active, size, count, total, alpha, log_horizon)
        arm = active[n, slot]
        if lcb == -math.inf:
            continue  # nothing sampled since a restart: no report
        if not share_best:
            state[2 + n] = arm  # its own best arm, which it plays once it has no arm left
        f = fate(loss, delay, fault_key, step, 0, n, server)
        if not _agent_sends(counters, n, server, pair_bits, f, held):
            continue
        if lcb > best_bound or (lcb == best_bound and arm < best_arm):
            best_arm, best_bound = arm, lcb
    if best_arm < 0:
        return  # no report arrived: the server has nothing to announce
    state[0] = best_arm
    counted = 0
    smallest, largest = active.shape[1] + 1, -1
    for n in range(n_agents):  # round 1: announcement; round 2: counts
        f = fate_to(alive, loss, delay, fault_key, step, 1, server, n)
        if not _server_says(counters, f, server, n, pair_bits, held):
            continue
        if share_best:
            state[2 + n] = best_arm
        _eliminate(n, best_bound, active, size, count, total, alpha, log_horizon)
        f = fate(loss, delay, fault_key, step, 2, n, server)
        if not _agent_sends(counters, n, server, plan.count_bits, f, held):
            continue
        counted += 1
        smallest = min(smallest, size[n])
        largest = max(largest, size[n])
    if counted < n_agents or not largest > 2 * max(1, smallest):
        return  # re-divide only knowing every set's size
    remaining = np.zeros(active.shape[1] * n_agents, dtype=np.int64)
    total_arms = 0
    complete = True
    for n in range(n_agents):  # round 3: the server asks agents with arms; round 4: their lists
        if size[n] == 0:
            continue
        f = fate_to(alive, loss, delay, fault_key, step, 3, server, n)
        if not _server_says(counters, f, server, n, 1, held):
            complete = False
            continue
        f = fate(loss, delay, fault_key, step, 4, n, server)
        if not _agent_sends(counters, n, server, max(1, size[n] * index_bits), f, held):
            complete = False
            continue
        for s in range(size[n]):
            remaining[total_arms] = active[n, s]
            total_arms += 1
    if not complete:
        return  # a missing list would lose its arms: keep the current split
    ordered = np.sort(remaining[:total_arms])
    fresh = np.zeros_like(active)
    fresh_size = np.zeros(n_agents, dtype=np.int64)
    for j in range(total_arms):  # round 5: new sets, dealt round-robin in increasing arm order
        n = j % n_agents
        fresh[n, fresh_size[n]] = ordered[j]
        fresh_size[n] += 1
    for n in range(n_agents):
        f = fate_to(alive, loss, delay, fault_key, step, 5, server, n)
        if not _server_says(counters, f, server, n, max(1, fresh_size[n] * index_bits), held):
            continue  # this agent keeps its old set
        active[n, :] = fresh[n, :]
        size[n] = fresh_size[n]


@njit(cache=True, nogil=True)
def demab_chunk(noise, rewards, out, faults, held, arms, plan):
    """Simulate ``noise.shape[0]`` steps of DEMAB (``plan.state``: see :class:`Schedule`)."""
    # the hot loop's arrays, bound once (a tuple's field re-read in the loop can cost)
    active, size, count, total, pointer = (
        arms.active,
        arms.size,
        arms.count,
        arms.total,
        arms.pointer,
    )
    pos, crash, back, late_n = out.pos, faults.crash, faults.back, held.late_n
    state, ends, share_best, stage_one = plan.state, plan.ends, plan.share_best, plan.stage_one
    alpha, log_horizon = plan.alpha, math.log(plan.horizon)
    means, gaps, bernoulli, sigma = rewards.means, rewards.gaps, rewards.bernoulli, rewards.sigma
    regret, trace, trace_out, grid = out.regret, out.trace, out.trace_out, out.grid
    n_agents = active.shape[0]
    alive = np.ones(n_agents, dtype=np.bool_)
    for row in range(noise.shape[0]):
        t = pos[STEP] + 1
        for n in range(n_agents):
            alive[n] = t < crash[n] or t >= back[n]
            if t == back[n]:  # back from a crash: its initial arms, fresh samples, no announcement
                size[n] = arms.initial_size[n]
                active[n, :] = arms.initial[n, :]
                count[n, :] = 0
                total[n, :] = 0.0
                pointer[n] = 0
                state[2 + n] = -1 if share_best else arms.initial[n, 0]
        for n in range(n_agents):
            if not alive[n]:
                continue  # crashed: plays nothing
            arm = active[n, pointer[n]] if size[n] > 0 else state[2 + n]
            reward = reward_from(means, bernoulli, sigma, noise[row, n], arm)
            pulled(regret, gaps, trace, trace_out, t - 1, n, arm)
            if size[n] == 0:
                continue
            slot = pointer[n]
            count[n, slot] += 1
            total[n, slot] += reward
            pointer[n] += 1
            if pointer[n] == size[n]:
                pointer[n] = 0
                if t <= stage_one:  # stage 1: eliminate locally after every full cycle
                    _, top = _best_lcb(n, active, size, count, total, alpha, log_horizon)
                    _eliminate(n, top, active, size, count, total, alpha, log_horizon)
        if late_n[0] > 0:
            drop_late(held.late, late_n, out.counters, alive)
        if state[1] < ends.size and t == ends[state[1]]:
            _server_rounds(arms, plan, out.counters, faults, held, alive, t)
            state[1] += 1
            count[:, :] = 0  # the next phase starts with fresh samples
            total[:, :] = 0.0
            pointer[:] = 0
        if step_ended(pos, grid):
            record(out)
