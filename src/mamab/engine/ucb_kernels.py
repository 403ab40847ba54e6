"""UCB1 helpers for the kernels: the cold paths of choosing (full scans, candidate rebuilds).

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
