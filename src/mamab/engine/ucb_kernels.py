"""UCB1 helpers for the kernels: the LCC family's lazy candidates (below) and the UCB baselines'
grouped bounds (further down, "Grouped bounds").

An agent's arms live in slots sorted by arm index, so 'lowest slot' means 'lowest arm' and the
tie rules of the reference hold. Floating-point operations are the reference's, in the same
order, so both engines agree bit for bit.

Choosing is exact but lazy. For a block of steps the width w = sqrt(alpha·log t) is bounded by
its value at the block's end, so an arm whose index at that bound is below the current maximum
can be skipped until the block ends: its index mean + w·(1/sqrt n) cannot exceed the bound,
because IEEE multiplication and addition are monotone (a skipped arm that gets a sample, from a
neighbour say, raises the bound to its new value). Each step the maximum
over the candidates is certified against the largest bound of the skipped arms (in the kernel's
hot loop); when the certificate fails, a full scan decides and the candidates are rebuilt here.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from mamab.engine.aligned import aligned_full, aligned_zeros
from mamab.engine.lanes import (
    REACH,
    SPAN,
    lowest_bit,
    mean_and_inv_sqrt,
    reaching,
    row_max,
    span_best,
    span_max,
    span_max_with,
    two_means_and_inv_sqrts,
)
from mamab.kernel_cache import njit

WIDTH_SLACK = 1.0 + 1e-12  # covers any non-monotone rounding of log near the block's end
BLOCK_SHIFT = 9


@njit(cache=True, inline="always")
def ucb_width(alpha, samples):
    """sqrt(alpha·log t), t = samples seen + 1."""
    return math.sqrt(alpha * math.log(samples + 1))


@njit(cache=True, inline="always")
def argmax_index(n, size, mean, inv_sqrt, width):
    """First slot of largest mean + width·inv_sqrt, scanned in four interleaved lanes.

    Lane j sees slots j, j+4, ...; each lane keeps its first maximum and the lanes are merged
    with ties to the lower slot, so the result is exactly the first maximum of a plain scan.
    """
    b0 = b1 = b2 = b3 = -math.inf
    i0 = i1 = i2 = i3 = 0
    s = 0
    while s + 4 <= size:
        v0 = mean[n, s] + width * inv_sqrt[n, s]
        v1 = mean[n, s + 1] + width * inv_sqrt[n, s + 1]
        v2 = mean[n, s + 2] + width * inv_sqrt[n, s + 2]
        v3 = mean[n, s + 3] + width * inv_sqrt[n, s + 3]
        if v0 > b0:
            b0, i0 = v0, s
        if v1 > b1:
            b1, i1 = v1, s + 1
        if v2 > b2:
            b2, i2 = v2, s + 2
        if v3 > b3:
            b3, i3 = v3, s + 3
        s += 4
    while s < size:
        v0 = mean[n, s] + width * inv_sqrt[n, s]
        if v0 > b0:
            b0, i0 = v0, s
        s += 1
    return merge_lanes(b0, i0, b1, i1, b2, i2, b3, i3)


@njit(cache=True, inline="always")
def merge_lanes(b0, i0, b1, i1, b2, i2, b3, i3):
    """The first maximum of a scan in four interleaved lanes, from each lane's first maximum
    (value b, index i): the largest value, ties to the lower index."""
    best, value = i0, b0
    if b1 > value or (b1 == value and i1 < best):
        best, value = i1, b1
    if b2 > value or (b2 == value and i2 < best):
        best, value = i2, b2
    if b3 > value or (b3 == value and i3 < best):
        best = i3
    return best


@njit(cache=True, inline="always")
def rebuild_candidates(n, size, mean, inv_sqrt, cand, in_cand, width, alpha, samples):
    """Full scan, then a new block.

    Returns (best slot, number of candidates, bound of the skipped slots, last sample count of
    the block, width bound of the block).
    """
    best = argmax_index(n, size, mean, inv_sqrt, width)
    top = mean[n, best] + width * inv_sqrt[n, best]
    end = samples + max(8, samples >> BLOCK_SHIFT)
    wide = ucb_width(alpha, end) * WIDTH_SLACK
    count = 0
    outside = -math.inf
    for s in range(size):
        upper = mean[n, s] + wide * inv_sqrt[n, s]
        if upper >= top:
            cand[n, count] = s
            count += 1
            in_cand[n, s] = True
        else:
            in_cand[n, s] = False
            outside = max(outside, upper)
    return best, count, outside, end, wide


@njit(cache=True, inline="always")
def certified_candidate(cand, n_cand, bound, mean, inv_sqrt, n, width):
    """First candidate of largest index if it beats ``bound`` (the skipped slots' largest
    bound): the reference's choice; else -1 (a full scan must decide)."""
    best, value = cand[n, 0], -math.inf
    for c in range(n_cand[n]):
        s = cand[n, c]
        index = mean[n, s] + width * inv_sqrt[n, s]
        if index > value:
            best, value = s, index
    return best if value > bound[n] else -1


@njit(cache=True, inline="always")
def ucb_update(count, total, mean, inv_sqrt, n, s, reward):
    """Agent (or row) n learns one sample of slot s: UCB.update, expression for expression, on
    arrays (every kernel's hot loop; the caller counts the sample)."""
    c = count[n, s] + 1
    count[n, s] = c
    total[n, s] += reward
    mean[n, s] = total[n, s] / c
    inv_sqrt[n, s] = 1.0 / math.sqrt(c)


@njit(cache=True, inline="always")
def most_played(n, size, count):
    best = 0
    for s in range(1, size):
        if count[n, s] > count[n, best]:
            best = s
    return best


# --- Grouped bounds: the UCB baselines' exact lazy argmax (issue 23) ------------------------------
#
# Slots are cut into groups of GROUP consecutive arms. For a block of samples (seen <= end) a slot's
# bound mean + W·(1/sqrt n), W = width(end)·WIDTH_SLACK, bounds its index for the whole block
# (IEEE multiply and add are monotone), and every group keeps the largest bound of its slots
# (``top``; a stale larger value is still a bound). A choice evaluates the group of largest ``top``
# exactly, then only the groups whose ``top`` reaches that value: the others cannot hold the
# maximum nor tie it. A played arm's group is re-bounded exactly (its slots' bounds recomputed from
# their means, in cache from the choice: storing every slot's bound cost more); a received sample
# only raises its group's bound. Padding slots (beyond the arms) have mean -inf, 1/sqrt n 0.

GROUP_SHIFT = 4
GROUP = 1 << GROUP_SHIFT  # slots of a group
assert GROUP == SPAN  # a group is scanned as one vector (mamab.engine.lanes)
VECTOR_GROUPS = 16  # from this many, first_group finds its group in vector registers
GROUP_BLOCK_SHIFT = 12  # blocks of max(8 steps, samples >> 12): measured best at K = 250


class GroupedUCB(NamedTuple):
    """UCB1 state of every agent of a run on all its arms, with grouped bounds for the argmax
    (the UCB baselines' agents that talk)."""

    tally: np.ndarray  # (agents, slots, 2) each arm's sum of samples and their count, side by
    # side: a sample heard touches one cache line, not two (the count a float64, exact below
    # 2^53, whose quotients are the integer count's; padding: count 1, never untried)
    mean: np.ndarray  # (agents, slots) (padding: -inf)
    inv_sqrt: np.ndarray  # (agents, slots) 1 / sqrt(count) (padding: 0)
    top: np.ndarray  # (agents, groups) largest bound of each group's slots (or more)
    samples: np.ndarray  # (agents,) samples seen
    untried: np.ndarray  # (agents,) the lowest arm maybe never sampled
    block_end: np.ndarray  # (agents,) last sample count of the block (-1: none open)
    wide: np.ndarray  # (agents,) W, the width bound of the block
    pace: np.ndarray  # (agents,) samples an agent sees per step, typically (1 + its degree if
    # told, less the share lost; a step that also delivers delayed samples sees more: pace only
    # sizes the blocks)
    arms: int  # K (slots beyond it are padding)


def grouped_ucb(agents: int, arms: int, pace: np.ndarray | None = None) -> GroupedUCB:
    """Fresh state: no samples, no block open; ``pace``: samples per step (default 1)."""
    groups = -(-arms // GROUP)
    slots = groups * GROUP
    tally = aligned_zeros((agents, slots, 2))
    tally[:, arms:, 1] = 1.0
    mean = aligned_zeros((agents, slots))  # on cache lines: a group's 16 slots, two loads
    mean[:, arms:] = -np.inf
    return GroupedUCB(
        tally=tally,
        mean=mean,
        inv_sqrt=aligned_zeros((agents, slots)),
        top=aligned_full((agents, groups), -np.inf),
        samples=np.zeros(agents, dtype=np.int64),
        untried=np.zeros(agents, dtype=np.int64),
        block_end=np.full(agents, -1, dtype=np.int64),
        wide=np.zeros(agents),
        pace=np.ones(agents, dtype=np.int64) if pace is None else pace.astype(np.int64),
        arms=arms,
    )


@njit(cache=True, inline="always")
def restart_grouped(ucb, n):
    """Agent n starts a fresh UCB (back from a crash): cold path."""
    for s in range(ucb.arms):
        ucb.tally[n, s, 0] = 0.0
        ucb.tally[n, s, 1] = 0.0
        ucb.mean[n, s] = 0.0
        ucb.inv_sqrt[n, s] = 0.0
    ucb.samples[n] = 0
    ucb.untried[n] = 0
    ucb.block_end[n] = -1


# The hot helpers take arrays, not the tuple: a kernel takes the tuple's arrays out once (numba
# counts a reference each time an array is taken out of a tuple in a loop).


@njit(cache=True, inline="always")
def block_width(alpha, seen, pace):
    """(last sample count, W) of a block opened at ``seen`` samples, ``pace`` samples a step."""
    end = seen + max(8 * pace, seen >> GROUP_BLOCK_SHIFT)
    return end, ucb_width(alpha, end) * WIDTH_SLACK


@njit(cache=True, inline="always")
def open_block(mean, inv_sqrt, top, n, wide):
    """Every group's bound for a block of width bound ``wide``."""
    for g in range(top.shape[1]):
        top[n, g] = group_bound(mean, inv_sqrt, n, g, wide)


@njit(cache=True, inline="always")
def group_bound(mean, inv_sqrt, n, g, wide):
    """The largest bound mean + wide·(1/sqrt n) of group g's slots (in one vector:
    :func:`~mamab.engine.lanes.span_max`)."""
    return span_max(mean, inv_sqrt, n, g * GROUP, wide)


@njit(cache=True, inline="always")
def group_best(mean, inv_sqrt, n, g, width):
    """First slot of group g with the largest index, and that index (found in one vector:
    :func:`~mamab.engine.lanes.span_best`; the index is the scalar expression's)."""
    offset, index = span_best(mean, inv_sqrt, n, g * GROUP, width)
    return g * GROUP + offset, index


@njit(cache=True, inline="always")
def choose_grouped(top, mean, inv_sqrt, n, width):
    """The first slot of largest mean + width·inv_sqrt (the reference's choice), block open:
    the best slot of :func:`first_group`, then :func:`choose_after`. (The kernel of agents that
    talk runs the three parts in three passes over its agents.)"""
    first = first_group(top, n)
    best, value = group_best(mean, inv_sqrt, n, first, width)
    return choose_after(top, mean, inv_sqrt, n, width, first, best, value)


@njit(cache=True, inline="always")
def first_group(top, n):
    """The group a choice evaluates first: the first of largest bound (any group may come
    first; this one brings in the fewest others). From VECTOR_GROUPS groups on it is found in
    vector registers (:func:`row_max`, :func:`reaching`), not by a chain of compares each
    waiting on the last: 0.95-1.00 times the time at (150,250) (16 groups), 0.92-0.94 at
    (100,500) (32); with 7 or 13 the chain, whose branches the processor predicts, is faster
    (G(20, 0.3), K = 100: 1.01-1.02 with the vector form; in lockstep, where each choice waits
    on the last, 1.06-1.09)."""
    groups = top.shape[1]
    if VECTOR_GROUPS <= groups <= REACH:
        return np.int64(lowest_bit(reaching(top, n, groups, row_max(top, n, groups))))
    return _first_top(top, n, groups)


@njit(cache=True, inline="always")
def choose_after(top, mean, inv_sqrt, n, width, first, best, value):
    """The choice of :func:`choose_grouped` once group ``first`` gave its best slot ``best`` and
    that slot's index ``value``: only a group whose bound exceeds the value found (or reaches
    it, before the best slot) can hold the maximum (1.22 groups per choice at (150,250)),
    found as a bit mask of vector compares (:func:`reaching`)."""
    groups = top.shape[1]
    if groups <= REACH:
        left = reaching(top, n, groups, value) & ~(np.uint64(1) << np.uint64(first))
        while left:
            g = np.int64(lowest_bit(left))
            left &= left - np.uint64(1)
            bound = top[n, g]
            if bound >= value and (bound > value or g * GROUP < best):
                s, index = group_best(mean, inv_sqrt, n, g, width)
                if index > value or (index == value and s < best):
                    best, value = s, index
        return best
    for g in range(groups):
        bound = top[n, g]
        if bound >= value and g != first and (bound > value or g * GROUP < best):
            s, index = group_best(mean, inv_sqrt, n, g, width)
            if index > value or (index == value and s < best):
                best, value = s, index
    return best


@njit(cache=True, inline="always")
def _first_top(top, n, groups):
    """The first group of largest bound, by a scan."""
    high, first = top[n, 0], 0
    for g in range(1, groups):
        if top[n, g] > high:
            high, first = top[n, g], g
    return first


@njit(cache=True, inline="always")
def learn_grouped(tally, mean, inv_sqrt, top, n, s, reward, wide):
    """Agent n learns one sample of slot s (UCB.update's numbers); the slot's bound follows,
    its group's bound is raised if need be. The caller counts the sample."""
    tally[n, s, 0] += reward
    tally[n, s, 1] += 1.0
    settle_grouped(tally, mean, inv_sqrt, top, n, s, wide)


@njit(cache=True, inline="always")
def settle_grouped(tally, mean, inv_sqrt, top, n, s, wide):
    """Slot s's mean, 1/sqrt n and bound from its sum and count (``tally``, a count of at least
    1): after each sample, learned or heard; its group's bound is raised if need be."""
    m, r = mean_and_inv_sqrt(tally[n, s, 0], tally[n, s, 1])
    mean[n, s] = m
    inv_sqrt[n, s] = r
    u = m + wide * r
    g = s >> GROUP_SHIFT  # s // GROUP, unsigned if s is
    top[n, g] = max(top[n, g], u)


@njit(cache=True, inline="always")
def hear_two(tally, mean, inv_sqrt, top, n, chosen, got, one, two, wide):
    """Agent n hears the samples of senders ``one`` then ``two`` (slot ``chosen[sender]``,
    reward ``got[sender]``), then settles both slots at once, as :func:`settle_grouped` each:
    one square root and one division for both
    (:func:`~mamab.engine.lanes.two_means_and_inv_sqrts`). Two samples of one slot settle it
    twice to the same numbers, and its group's bound is raised by the slot's bound after both
    (still a bound). The caller counts the samples."""
    s, t = chosen[one], chosen[two]
    tally[n, s, 0] += got[one]
    tally[n, s, 1] += 1.0
    tally[n, t, 0] += got[two]
    tally[n, t, 1] += 1.0
    m, r, m2, r2 = two_means_and_inv_sqrts(
        tally[n, s, 0], tally[n, s, 1], tally[n, t, 0], tally[n, t, 1]
    )
    mean[n, s] = m
    inv_sqrt[n, s] = r
    mean[n, t] = m2
    inv_sqrt[n, t] = r2
    g = s >> GROUP_SHIFT
    top[n, g] = max(top[n, g], m + wide * r)
    h = t >> GROUP_SHIFT
    top[n, h] = max(top[n, h], m2 + wide * r2)


@njit(cache=True, inline="always")
def add_sample(tally, n, s, reward):
    """Agent n adds one sample of slot s to its sum and count; returns the slot's new mean and
    1/sqrt n (UCB.update's numbers), for :func:`store_played` to store (the kernel runs the two
    in separate passes over its agents). The caller counts the sample."""
    tally[n, s, 0] += reward
    tally[n, s, 1] += 1.0
    return mean_and_inv_sqrt(tally[n, s, 0], tally[n, s, 1])


@njit(cache=True, inline="always")
def store_played(mean, inv_sqrt, top, n, s, m, r, wide):
    """Slot s of agent n, just played, gets mean ``m`` and 1/sqrt n ``r`` (:func:`add_sample`'s),
    and its group the exact bound: computed first, from the group's vectors with (m, r) put in
    (:func:`~mamab.engine.lanes.span_max_with`), then the numbers stored (a vector load waits
    for single-entry stores to the same lines to reach the cache)."""
    g = s >> GROUP_SHIFT  # s // GROUP, unsigned if s is
    top[n, g] = span_max_with(mean, inv_sqrt, n, g * GROUP, wide, s & (GROUP - 1), m, r)
    mean[n, s] = m
    inv_sqrt[n, s] = r


@njit(cache=True, inline="always")
def rebound_group(mean, inv_sqrt, top, n, s, wide):
    """The group of slot s gets its exact bound again (its largest slot was just played): the
    plain form of :func:`store_played`'s re-bound, which the kernels call (the tests hold one to
    the other)."""
    g = s >> GROUP_SHIFT  # s // GROUP, unsigned if s is
    top[n, g] = group_bound(mean, inv_sqrt, n, g, wide)
