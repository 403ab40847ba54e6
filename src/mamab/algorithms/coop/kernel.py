"""numba kernel for coop-UCB2: UCB on running-consensus estimates, 2K numbers per edge per step.

Mirrors ``mamab.algorithms.coop.agent`` operation for operation (same expressions, neighbours added in
increasing id); the equality test holds it to that. Estimates delayed by one exchange stand in
for a neighbour's missing current ones: ``late_edge[e]`` marks the edge e (in the receiver's
adjacency) whose message of the last step was held, ``sent_counts[1]``/``sent_sums[1]`` keep
what every agent sent then.
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
    pulled,
    record,
    reward_from,
    step_ended,
)
from mamab.engine.lanes import LANES, REACH, lane_argmax, lowest_bit, reaching, row_max
from mamab.engine.vector_rows import add_scaled_row, add_two_scaled_rows, scaled_row
from mamab.faults import DELAY, DELIVER, LOSE, fate
from mamab.kernel_cache import njit


class Estimates(NamedTuple):
    """Every agent's consensus estimates (agents, arms) and the edges' held messages."""

    counts: np.ndarray  # the running consensus of counts
    sums: np.ndarray  # ... and of sums
    sent_counts: np.ndarray  # (2, agents, arms): [0] this step's estimates plus the agent's own
    # pull (what it sends), [1] what it sent the step before (a delayed message carries it)
    sent_sums: np.ndarray  # (2, agents, arms)
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


@njit(cache=True, inline="always")
def _first_max(values, zero, best):
    """Index of the first largest of ``values`` (a multiple of LANES long, padded with -inf):
    each lane's first maximum in vector lanes (:func:`~mamab.engine.lanes.lane_argmax`, value j
    of slot s at s·LANES + j, ``zero`` the zero 1/sqrt n beside it), then the first of the
    largest. A NaN never wins, as in a plain scan with ``>``; 0.93 times coop-UCB2's time at
    (10,100) against four interleaved scalar chains."""
    lane_argmax(values, zero, values.size // LANES, 0.0, best)
    first, high = 0, -math.inf
    for j in range(LANES):
        a = best[j] * LANES + j
        if values[a] > high or (values[a] == high and a < first):
            first, high = a, values[a]
    return first


#: bound of :func:`_interval`'s error relative to |mean| + bonus: about 10·2^-24 by its
#: operations' rounding (an adversarial search over its range found at most 6.7·2^-24); this
#: is 3 times that bound
MARGIN = 2.0**-19
#: counts and sums (their magnitude) within which float32 keeps that bound, with alpha within
#: ALPHAS and fewer than 2^24 agents (:func:`_interval`)
TINY, HUGE = 1e-9, 1e9
ALPHAS = (1e-6, 1e6)
#: arms from which coop-UCB2 chooses through :func:`_interval` (on the Intel host, coop-UCB2
#: (10,20) 1.04 times the time with it, (10,40) 0.84-0.88, (10,64) 0.81, (10,100) 0.85)
INTERVALS_FROM = 32


@njit(cache=True, inline="always")
def _index(total, count, alpha, extra, n_agents, log_t):
    """coop-UCB2's index of one arm, the reference's expression operation for operation."""
    return total / count + math.sqrt(alpha * (count + extra) / (n_agents * count) * log_t / count)


@njit(cache=True, inline="always")
def _interval(total, count, f32):
    """An interval around :func:`_index` (float64), from float32 arithmetic: one division and
    one square root, where the exact expression takes three float64 divisions and a root.

    ``f32`` = (alpha, sqrt(log t), log t, 1/N), each as float32. Each operation's relative
    rounding is at most 2^-24; the bonus's radicand collects about 14 of them (the operands'
    conversions, 1/count twice, five products), its root halves that and adds one, the mean
    about 4, their sum one more: within 10·2^-24·(|mean| + bonus) of the exact index, to first
    order, for counts in TINY..HUGE, sums within ±HUGE, alpha within ALPHAS, fewer than 2^24
    agents and t ≥ 2 (at t = 1 every arm is untried, so no index is needed). There nothing
    overflows and the bonus stays a normal float32 (at least about 6e-12); a tiny sum's mean may
    be subnormal or zero, but its absolute error (at most about 1e-36) is far below the margin
    the bonus gives. The interval is MARGIN·(|mean| + bonus) each side (``tests/test_coop.py``
    checks that it holds the exact index)."""
    alpha, extra, log_t, inv_n = f32
    c32 = np.float32(count)
    r = np.float32(1.0) / c32
    mean = np.float32(total) * r
    bonus = np.sqrt(alpha * (c32 + extra) * r * inv_n * log_t * r)
    approx, slack = mean + bonus, np.float32(MARGIN) * (abs(mean) + bonus)
    return np.float64(approx - slack), np.float64(approx + slack)


@njit(cache=True, error_model="numpy")
def _consensus(
    counts, sums, sent_counts, sent_sums, self_weight, weight, indptr, source, stale, heard
):
    """Every live agent n's estimates: its own share, then each of the ``heard[n]`` estimates it
    heard added in order, as one by one (``heard[n]`` -1: n is dead, its estimates stay).

    The h-th sender n heard, ``source[indptr[n] + h]`` (n's edges hold its list), sent this
    step's estimates (``sent_*[0]``) or, ``stale[indptr[n] + h]``, the last step's
    (``sent_*[1]``): picked by index, not by array. One call per step: numba counts a
    reference to every array passed to a function, inlined or not, with an atomic operation
    (that per agent cost coop-UCB2 two fifths of its time). Two senders per pass over the arms
    (each arm's additions in the same order): half the loads and stores of the running estimates.
    The arrays are flat views (the estimates' (agents, arms), the messages' (2, agents, arms)),
    passed over in vectors of LANES arms by :mod:`mamab.engine.vector_rows`, whose loops need no
    check that the arrays do not overlap (0.95 times coop-UCB2's time at (10,100); with the copy
    of what each agent sends too, 0.89).
    """
    n_agents = heard.size
    n_arms = counts.size // n_agents
    plane = n_agents * n_arms  # entries of one of sent_*'s two planes
    for n in range(n_agents):
        if heard[n] < 0:
            continue
        own, w, edge, end = self_weight[n], weight[n], indptr[n], indptr[n] + heard[n]
        row = n * n_arms
        for i in range(0, n_arms, LANES):
            scaled_row(counts, row + i, sent_counts, row + i, own, n_arms - i)
            scaled_row(sums, row + i, sent_sums, row + i, own, n_arms - i)
        h = edge
        while h + 1 < end:
            a = np.int64(stale[h]) * plane + source[h] * n_arms
            b = np.int64(stale[h + 1]) * plane + source[h + 1] * n_arms
            for i in range(0, n_arms, LANES):
                left = n_arms - i
                add_two_scaled_rows(counts, row + i, sent_counts, a + i, b + i, w, left)
                add_two_scaled_rows(sums, row + i, sent_sums, a + i, b + i, w, left)
            h += 2
        if h < end:
            a = np.int64(stale[h]) * plane + source[h] * n_arms
            for i in range(0, n_arms, LANES):
                add_scaled_row(counts, row + i, sent_counts, a + i, w, n_arms - i)
                add_scaled_row(sums, row + i, sent_sums, a + i, w, n_arms - i)


@njit(cache=True, nogil=True, error_model="numpy")
def coop_chunk(noise, rewards, out, faults, est, plan):
    """Simulate ``noise.shape[0]`` steps of coop-UCB2 for every agent of one run."""
    counts, sums, sent_counts, sent_sums = est.counts, est.sums, est.sent_counts, est.sent_sums
    counters, late_edge, indptr, indices = out.counters, est.late_edge, plan.indptr, plan.indices
    means, bernoulli, sigma, gaps = rewards.means, rewards.bernoulli, rewards.sigma, rewards.gaps
    regret, trace, trace_out, pos, grid = out.regret, out.trace, out.trace_out, out.pos, out.grid
    weight, self_weight, message_bits = plan.weight, plan.self_weight, plan.message_bits
    crash, back, alpha, n_total = faults.crash, faults.back, plan.alpha, plan.n_agents
    loss, delay, key = faults.loss, faults.delay, faults.key
    n_agents, n_arms = counts.shape
    # flat views, for the row intrinsics (mamab.engine.vector_rows)
    counts_flat, sums_flat = counts.reshape(counts.size), sums.reshape(sums.size)
    sent_counts_flat = sent_counts.reshape(sent_counts.size)
    sent_sums_flat = sent_sums.reshape(sent_sums.size)
    alive = np.ones(n_agents, dtype=np.bool_)
    slots = -(-n_arms // LANES)  # the indices as a tile's lanes (arm a: slot a // LANES)
    index = np.full(slots * LANES, -math.inf)
    zero = np.zeros(slots * LANES)
    best = np.zeros(LANES, dtype=np.int64)
    a32, inv_n32 = np.float32(alpha), np.float32(1.0) / np.float32(n_total)
    exact_only = not (  # _interval's range, and enough arms for it to pay
        ALPHAS[0] <= alpha <= ALPHAS[1] and n_total < 2**24 and n_arms >= INTERVALS_FROM
    )
    low = np.empty((-(-n_arms // REACH), REACH))  # each arm's float32 index less its margin,
    high = np.empty_like(low)  # ... and plus it, in rows of REACH arms
    source = np.empty(indices.size, dtype=np.int64)  # each receiver's senders heard, in order,
    stale = np.empty(indices.size, dtype=np.bool_)  # on its edges; each with its last step's
    heard = np.zeros(n_agents, dtype=np.int64)  # estimates; how many (-1: a dead receiver)
    for row in range(noise.shape[0]):
        t = pos[STEP] + 1
        log_t = math.log(t)
        extra = math.sqrt(log_t)
        f32 = (a32, np.float32(extra), np.float32(log_t), inv_n32)  # _interval's constants
        for n in range(n_agents):
            alive[n] = t < crash[n] or t >= back[n]
            if t == back[n]:  # back from a crash: estimates start from zero
                counts[n, :] = 0.0
                sums[n, :] = 0.0
        for n in range(n_agents):
            if not alive[n]:
                continue  # crashed: plays and sends nothing
            untried = 0
            beyond = exact_only
            if exact_only:  # every index exactly, in vector lanes (an untried arm's is NaN)
                for i in range(n_arms):
                    c = counts[n, i]
                    untried += c == 0.0
                    index[i] = _index(sums[n, i], c, alpha, extra, n_total, log_t)
            else:  # each arm's index first as an interval from float32 (_interval): one
                # division and a root per arm, not three divisions and a root; then the exact
                # index of the arms that can hold the largest, in order (the first of largest)
                for part in range(high.shape[0]):  # rows of REACH arms, each in vector lanes
                    start = part * REACH
                    for g in range(min(REACH, n_arms - start)):
                        c, total = counts[n, start + g], sums[n, start + g]
                        untried += c == 0.0
                        beyond += not (TINY < c < HUGE and -HUGE < total < HUGE)
                        low[part, g], high[part, g] = _interval(total, c, f32)
                        beyond += not low[part, g] <= high[part, g]  # NaN
            if untried:  # untried arms first, lowest first
                arm = 0
                while counts[n, arm] != 0.0:
                    arm += 1
            elif beyond:
                if not exact_only:  # a count or sum beyond _interval's range
                    for i in range(n_arms):
                        index[i] = _index(sums[n, i], counts[n, i], alpha, extra, n_total, log_t)
                arm = _first_max(index, zero, best)
            else:  # exactly, the arms whose interval reaches the largest lower end, in order
                level = -math.inf
                for part in range(low.shape[0]):
                    level = max(level, row_max(low, part, min(REACH, n_arms - part * REACH)))
                arm, top = 0, -math.inf
                for part in range(high.shape[0]):
                    mask = reaching(high, part, min(REACH, n_arms - part * REACH), level)
                    while mask:
                        i = part * REACH + lowest_bit(mask)
                        mask &= mask - np.uint64(1)
                        value = _index(sums[n, i], counts[n, i], alpha, extra, n_total, log_t)
                        if value > top:
                            arm, top = i, value
            reward = reward_from(means, bernoulli, sigma, noise[row, n], arm)
            pulled(regret, gaps, trace, trace_out, pos[STEP], n, arm)
            at = n * n_arms  # what n sends: its estimates (1·x is x, bit for bit)
            for i in range(0, n_arms, LANES):
                scaled_row(sent_counts_flat, at + i, counts_flat, at + i, 1.0, n_arms - i)
                scaled_row(sent_sums_flat, at + i, sums_flat, at + i, 1.0, n_arms - i)
            sent_counts[0, n, arm] += 1.0
            sent_sums[0, n, arm] += reward
        for n in range(n_agents):  # what each receiver hears: neighbours by increasing id
            dead = not alive[n]
            if not dead:
                degree = indptr[n + 1] - indptr[n]
                if degree > 0:
                    counters[SENT, n] += degree
                    counters[BITS, n] += degree * message_bits
                    counters[ROUNDS, n] += 1
            got = 0  # estimates n adds, in order: j's of this step, or of the last (late)
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
                    f = fate(loss, delay, key, t, 0, j, n)
                    if f == DELIVER and dead:
                        f = LOSE
                    if f == DELAY:
                        late_edge[e] = True
                    elif f == DELIVER:
                        counters[RECV, n] += 1
                        counters[BITS_RECV, n] += message_bits
                    else:  # j's estimates never reach n
                        counters[LOST, j] += 1
                        counters[BITS_LOST, j] += message_bits
                if not dead and (f == DELIVER or was_late):
                    source[indptr[n] + got] = j
                    # not delivered now: the newest n has from j is the last step's
                    stale[indptr[n] + got] = f != DELIVER
                    got += 1
            heard[n] = -1 if dead else got
        _consensus(
            counts_flat,
            sums_flat,
            sent_counts_flat,
            sent_sums_flat,
            self_weight,
            weight,
            indptr,
            source,
            stale,
            heard,
        )
        if delay > 0.0:
            sent_counts[1] = sent_counts[0]
            sent_sums[1] = sent_sums[0]
        if step_ended(pos, grid):
            record(out)
