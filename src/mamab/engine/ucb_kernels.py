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
def most_played(n, size, count):
    best = 0
    for s in range(1, size):
        if count[n, s] > count[n, best]:
            best = s
    return best


# --- Grouped bounds: the UCB baselines' exact lazy argmax (issue 23) ------------------------------
#
# Slots are cut into groups of 8 consecutive arms (16 for K > 128). For a block of samples (seen <= end) every
# slot keeps ``upper`` = mean + W·(1/sqrt n) with W = width(end)·WIDTH_SLACK, an upper bound of its
# index for the whole block (IEEE multiply and add are monotone), and every group the largest
# ``upper`` of its slots (``top``; a stale larger value is still a bound). A choice evaluates the
# group of largest ``top`` exactly, then only the groups whose ``top`` reaches that value: the
# others cannot hold the maximum nor tie it. A played arm's group is re-bounded exactly; a received
# sample only raises its group's bound. Padding slots (beyond the arms) have mean -inf, 1/sqrt n 0.

SMALL_GROUPS_UP_TO = 128  # groups of 8 arms up to this K, of 16 beyond (measured, issue 19)
#: blocks of max(BLOCK_STEPS steps, samples >> GROUP_BLOCK_SHIFT); index: K <= SMALL_GROUPS_UP_TO.
#: Longer blocks open (recompute every bound) less often but evaluate more groups per choice:
#: counted in benchmarks/README.md ("Grouped bounds, counted").
BLOCK_STEPS = (32, 16)
GROUP_BLOCK_SHIFT = 12


class GroupedUCB(NamedTuple):
    """UCB1 state of every agent of a run on all its arms, with grouped bounds for the argmax."""

    count: np.ndarray  # (agents, slots) samples of each arm (padding: 1, never untried)
    total: np.ndarray  # (agents, slots) their sum
    mean: np.ndarray  # (agents, slots) (padding: -inf)
    inv_sqrt: np.ndarray  # (agents, slots) 1 / sqrt(count) (padding: 0)
    upper: np.ndarray  # (agents, slots) index bound for the running block
    top: np.ndarray  # (agents, groups) largest upper of each group (or more)
    samples: np.ndarray  # (agents,) samples seen
    untried: np.ndarray  # (agents,) the lowest arm maybe never sampled
    block_end: np.ndarray  # (agents,) last sample count of the block (-1: none open)
    wide: np.ndarray  # (agents,) W, the width bound of the block
    least: np.ndarray  # (agents,) the shortest block, in samples: BLOCK_STEPS steps of the
    # samples an agent sees per step (1 + its degree if told; it only sizes the blocks)
    arms: int  # K (slots beyond it are padding)
    shift: int  # groups of 2**shift slots


def grouped_ucb(agents: int, arms: int, per_step: np.ndarray | None = None) -> GroupedUCB:
    """Fresh state: no samples, no block open; ``per_step``: samples seen per step (default 1)."""
    small = arms <= SMALL_GROUPS_UP_TO
    shift = 3 if small else 4
    steps = BLOCK_STEPS[small]
    per_step = np.ones(agents, dtype=np.int64) if per_step is None else per_step
    groups = -(-arms >> shift)
    slots = groups << shift
    count = np.zeros((agents, slots), dtype=np.int64)
    count[:, arms:] = 1
    mean = np.zeros((agents, slots))
    mean[:, arms:] = -np.inf
    upper = np.full((agents, slots), -np.inf)
    return GroupedUCB(
        count=count,
        total=np.zeros((agents, slots)),
        mean=mean,
        inv_sqrt=np.zeros((agents, slots)),
        upper=upper,
        top=np.full((agents, groups), -np.inf),
        samples=np.zeros(agents, dtype=np.int64),
        untried=np.zeros(agents, dtype=np.int64),
        block_end=np.full(agents, -1, dtype=np.int64),
        wide=np.zeros(agents),
        least=(steps * per_step).astype(np.int64),
        arms=arms,
        shift=shift,
    )


@njit(cache=True, inline="always")
def restart_grouped(ucb, n):
    """Agent n starts a fresh UCB (back from a crash): cold path."""
    for s in range(ucb.arms):
        ucb.count[n, s] = 0
        ucb.total[n, s] = 0.0
        ucb.mean[n, s] = 0.0
        ucb.inv_sqrt[n, s] = 0.0
    ucb.samples[n] = 0
    ucb.untried[n] = 0
    ucb.block_end[n] = -1


# The hot helpers take arrays, not the tuple: a kernel takes the tuple's arrays out once (numba
# counts a reference each time an array is taken out of a tuple in a loop).


@njit(cache=True, inline="always")
def block_width(alpha, seen, least):
    """(last sample count, W) of a block opened at ``seen`` samples, ``least`` samples long or
    more."""
    end = seen + max(least, seen >> GROUP_BLOCK_SHIFT)
    return end, ucb_width(alpha, end) * WIDTH_SLACK


@njit(cache=True, inline="always")
def open_block(mean, inv_sqrt, upper, top, n, wide, shift):
    """Every slot's and every group's bound for a block of width bound ``wide``."""
    for s in range(mean.shape[1]):
        upper[n, s] = mean[n, s] + wide * inv_sqrt[n, s]
    for g in range(top.shape[1]):
        top[n, g] = _largest(upper, n, g << shift, (g + 1) << shift)


@njit(cache=True, inline="always", fastmath={"nnan"})
def _largest(values, n, lo, hi):
    """Largest of values[n, lo:hi]; no NaN there, so LLVM may vectorise the reduction (the flag
    allows nothing else: no contraction, no reassociation of the sums)."""
    high = -math.inf
    for s in range(lo, hi):
        high = max(high, values[n, s])
    return high


@njit(cache=True, inline="always")
def _group_best(mean, inv_sqrt, n, g, width, shift):
    """First slot of group g with the largest index, and that index."""
    best, value = g << shift, -math.inf
    for s in range(g << shift, (g + 1) << shift):
        index = mean[n, s] + width * inv_sqrt[n, s]
        if index > value:
            best, value = s, index
    return best, value


@njit(cache=True, inline="always")
def choose_grouped(top, mean, inv_sqrt, n, width, shift):
    """The first slot of largest mean + width·inv_sqrt (the reference's choice), block open.

    The group of largest bound is evaluated first; then only a group whose bound exceeds the
    value found (or reaches it, before the best slot) can hold the maximum."""
    groups = top.shape[1]
    h0 = h1 = h2 = h3 = -math.inf  # four lanes: four short chains of max, not one long one
    g = 0
    while g + 4 <= groups:
        h0 = max(h0, top[n, g])
        h1 = max(h1, top[n, g + 1])
        h2 = max(h2, top[n, g + 2])
        h3 = max(h3, top[n, g + 3])
        g += 4
    while g < groups:
        h0 = max(h0, top[n, g])
        g += 1
    high = max(max(h0, h1), max(h2, h3))
    first = 0
    while top[n, first] != high:
        first += 1
    best, value = _group_best(mean, inv_sqrt, n, first, width, shift)
    for g in range(groups):
        bound = top[n, g]
        if bound >= value and g != first and (bound > value or g << shift < best):
            s, index = _group_best(mean, inv_sqrt, n, g, width, shift)
            if index > value or (index == value and s < best):
                best, value = s, index
    return best


@njit(cache=True)
def learn_grouped(ucb, n, s, reward):
    """Agent n learns one sample of slot s (UCB.update, expression for expression) off the hot
    path (a delayed sample); the caller counts the sample."""
    ucb.count[n, s] += 1
    ucb.total[n, s] += reward
    settle_grouped(
        ucb.count,
        ucb.total,
        ucb.mean,
        ucb.inv_sqrt,
        ucb.upper,
        ucb.top,
        n,
        s,
        ucb.wide[n],
        ucb.shift,
    )


@njit(cache=True, inline="always")
def settle_grouped(count, total, mean, inv_sqrt, upper, top, n, s, wide, shift):
    """Slot s's mean, 1/sqrt n and bound from its count and sum (after one sample or several of
    one exchange: the same numbers as one-by-one updates, whose intermediate means nobody reads);
    its group's bound is raised if need be."""
    c = count[n, s]
    m = total[n, s] / c
    r = 1.0 / math.sqrt(c)
    mean[n, s] = m
    inv_sqrt[n, s] = r
    u = m + wide * r
    upper[n, s] = u
    g = s >> shift
    if u > top[n, g]:
        top[n, g] = u


@njit(cache=True, inline="always")
def rebound_group(upper, top, n, s, shift):
    """The group of slot s gets its exact bound again (its largest slot was just played)."""
    g = s >> shift
    high = -math.inf
    for t in range(g << shift, (g + 1) << shift):
        high = max(high, upper[n, t])
    top[n, g] = high
