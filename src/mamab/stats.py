"""Medians with distribution-free confidence bands, and the paper's theoretical bounds."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def median_ci_ranks(n: int, level: float = 0.95) -> tuple[int, int]:
    """1-indexed ranks (l, u) of order statistics bracketing the median with coverage >= level.

    The interval [x_(l), x_(n+1-l)] covers the median with probability 1 - 2·P(Bin(n, 1/2) < l);
    l is the largest rank keeping that >= level (for n = 30: ranks 10 and 21). When n is too small
    for the level (n <= 5 at 95%) the whole range (1, n) is returned: it covers less than
    ``level`` (:func:`band_coverage` says how much), and must be labelled so.
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


def band_coverage(n: int, lower: int, upper: int) -> float:
    """Exact probability that [x_(lower), x_(upper)] of n samples covers the median.

    For a continuous distribution, x_(r) <= median < x_(s) exactly when r to s - 1 of the n
    samples fall below the median: sum_{i=r}^{s-1} C(n, i) 2^-n (binomial with p = 1/2). So the
    whole range of n = 1..5 samples covers with probability 0, 1/2, 3/4, 7/8, 15/16, whatever
    level was asked for.
    """
    if not 1 <= lower <= upper <= n:
        raise ValueError(f"ranks must satisfy 1 <= lower <= upper <= n (got {lower}, {upper}, {n})")
    return math.fsum(math.comb(n, i) for i in range(lower, upper)) / 2.0**n


def percent_text(coverage: float) -> str:
    """'87.5%', '95.7%', '50%': a coverage to one decimal, without a trailing '.0'."""
    return format(100 * coverage, ".1f").removesuffix(".0") + "%"


def coverage_text(coverage: float, runs: int) -> str:
    """'87.5% (n=4)': the coverage a band achieves, and the runs it is computed from."""
    return f"{percent_text(coverage)} (n={runs})"


@dataclass(frozen=True)
class MedianBand:
    """The median of a sample, its order-statistic band, the band's exact coverage and ``runs``,
    the number of samples used (samples that are NaN are left out)."""

    median: float
    low: float
    high: float
    runs: int
    coverage: float

    @property
    def label(self) -> str:
        """'87.5% (n=4)'; 'n=0' when no sample was usable."""
        return coverage_text(self.coverage, self.runs) if self.runs else "n=0"


def median_summary(samples: np.ndarray, level: float = 0.95) -> MedianBand:
    """:func:`median_band` of a 1-D sample, with how many samples it used and the exact coverage
    of its band. NaN samples (runs without a surviving honest agent) are left out; none left:
    NaN median and band, runs 0, coverage 0."""
    x = np.asarray(samples, dtype=np.float64).reshape(-1)
    x = np.sort(x[~np.isnan(x)])
    if x.size == 0:
        return MedianBand(math.nan, math.nan, math.nan, 0, 0.0)
    lo, hi = median_ci_ranks(x.size, level)
    return MedianBand(
        float(np.median(x)),
        float(x[lo - 1]),
        float(x[hi - 1]),
        int(x.size),
        band_coverage(x.size, lo, hi),
    )


def per_agent_median(values: np.ndarray) -> float:
    """Median over runs of the per-run mean over agents of (runs, agents) ``values``.

    The one definition of 'median bits (messages) per agent' everywhere: a run's total divided
    by its N agents, then the median over runs (runs are independent; agents within a run are
    not), as regret's per-run mean over agents. An unknown value (NaN: a live node that stopped
    answering) is left out of its run's mean; a run with none known, out of the median.
    """
    means = per_run_means(values)
    means = means[~np.isnan(means)]
    return float(np.median(means)) if means.size else math.nan


def per_run_means(values: np.ndarray) -> np.ndarray:
    """(runs,) mean over agents of (runs, agents) ``values``, unknown (NaN) values left out; NaN
    for a run with none known. :func:`per_agent_median` is their median; :func:`median_summary`
    of them adds its band."""
    x = np.asarray(values, dtype=np.float64)
    known = ~np.isnan(x)
    counts = known.sum(axis=1)
    totals = np.where(known, x, 0.0).sum(axis=1)
    return np.divide(totals, counts, out=np.full(totals.shape, np.nan), where=counts > 0)


def run_statistics(
    runs: list[int], final_means: np.ndarray, bits_sent: np.ndarray, messages_sent: np.ndarray
) -> dict:
    """What ``mamab run`` and ``mamab live`` print and write as ``summary.json``'s
    ``statistics``, from each run's mean final regret over its honest surviving agents
    ((runs,), NaN for a run without one) and per-agent counters ((runs, agents)).

    Final regret: median over the runs that have a value, ``final_regret_runs`` of them (the
    others are ``runs_left_out``), with the order-statistic band and its exact coverage. Bits
    and messages per agent: :func:`per_agent_median`. JSON-ready: null where there is no value.
    """
    means = np.asarray(final_means, dtype=np.float64)
    band = median_summary(means)

    def value(x: float) -> float | None:
        return x if math.isfinite(x) else None

    return {
        "final_regret_median": value(band.median),
        "final_regret_band": [value(band.low), value(band.high)],
        "final_regret_band_coverage": band.coverage if band.runs else None,
        "final_regret_runs": band.runs,
        "runs_left_out": [r for r, m in zip(runs, means.tolist(), strict=True) if math.isnan(m)],
        "bits_sent_per_agent_median": value(per_agent_median(bits_sent)),
        "messages_sent_per_agent_median": value(per_agent_median(messages_sent)),
        "runs": len(runs),
    }


def median_band(
    samples: np.ndarray, level: float = 0.95, axis: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(median, lower, upper) along ``axis`` with the order-statistic interval of the median.

    NaN samples (a run where every agent crashed has no survivors' mean) are left out of a 1-D
    sample; all-NaN gives NaN. Along ``axis = 0`` of a 2-D array (runs × t: curves), a run that
    is NaN throughout is left out likewise. :func:`median_summary` also says how many samples
    were used and what the band covers.
    """
    x = np.asarray(samples, dtype=np.float64)
    if x.ndim == 1:
        x = x[~np.isnan(x)]
        if x.size == 0:
            return np.float64(np.nan), np.float64(np.nan), np.float64(np.nan)
    elif x.ndim == 2 and axis == 0:
        kept = x[~np.isnan(x).all(axis=1)]
        if kept.shape[0] == 0:
            empty = np.full(x.shape[1], np.nan)
            return empty, empty.copy(), empty.copy()
        x = kept
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
