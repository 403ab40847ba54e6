"""Medians with distribution-free confidence bands, and the paper's theoretical bounds."""

from __future__ import annotations

import math

import numpy as np


def median_ci_ranks(n: int, level: float = 0.95) -> tuple[int, int]:
    """1-indexed ranks (l, u) of order statistics bracketing the median with coverage >= level.

    The interval [x_(l), x_(n+1-l)] covers the median with probability 1 - 2·P(Bin(n, 1/2) < l);
    l is the largest rank keeping that >= level (for n = 30: ranks 10 and 21). When n is too small
    for the level (n <= 5 at 95%) the whole range (1, n) is returned.
    """
    if n < 1:
        raise ValueError("need at least one sample")
    if not 0 < level < 1:
        raise ValueError("level must lie in (0, 1)")
    tail, lower = 0.0, 0
    for k in range(n):
        tail += math.comb(n, k) / 2.0**n  # P(Bin <= k)
        if 2 * tail > 1 - level:
            break
        lower = k + 1
    lower = max(lower, 1)
    return lower, n + 1 - lower


def median_band(
    samples: np.ndarray, level: float = 0.95, axis: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(median, lower, upper) along ``axis`` with the order-statistic interval of the median.

    NaN samples (a run where every agent crashed has no survivors' mean) are left out of a 1-D
    sample; all-NaN gives NaN.
    """
    x = np.asarray(samples, dtype=np.float64)
    if x.ndim == 1:
        x = x[~np.isnan(x)]
        if x.size == 0:
            return np.float64(np.nan), np.float64(np.nan), np.float64(np.nan)
    x = np.sort(x, axis=axis)
    lo, hi = median_ci_ranks(x.shape[axis], level)
    return np.median(x, axis=axis), np.take(x, lo - 1, axis=axis), np.take(x, hi - 1, axis=axis)


def percentile_band(
    samples: np.ndarray, level: float = 0.95, axis: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(median, lower, upper) with the central ``level`` percentile range of the samples."""
    x = np.asarray(samples, dtype=np.float64)
    q = 100 * (1 - level) / 2
    return (
        np.median(x, axis=axis),
        np.percentile(x, q, axis=axis),
        np.percentile(x, 100 - q, axis=axis),
    )


def masked_mean(values: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Mean over axis 1 of (runs, agents, ...) ``values`` where ``keep`` (runs, agents) is True.

    NaN where a run keeps nothing. Used to average only the agents that never crashed.
    """
    mask = keep.reshape(keep.shape + (1,) * (values.ndim - 2))
    totals = np.where(mask, values, 0.0).sum(axis=1)
    counts = mask.sum(axis=1)
    return np.divide(totals, counts, out=np.full(totals.shape, np.nan), where=counts > 0)
