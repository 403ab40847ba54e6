"""A tile's lane scan alone: the plain scan against the scan by blocks, by turns in one process.

    python benchmarks/lane_scan.py [--arms 32,48,64,100,200,250,500] [--rounds 15]
        [--steps 20000]

For each number of arms, one tile of eight agents (means and 1/sqrt n of Bernoulli counts drawn
at seed 0, on cache lines as the engine keeps them) chooses ``--steps`` times with a growing
width, up and down by turns as agents alone do: once by ``lane_argmax`` / ``lane_argmax_down``,
once by ``lane_argmax_blocks`` / ``lane_argmax_blocks_down`` (the forms numba compiles for this
processor: ``NUMBA_CPU_FEATURES`` chooses another). Prints each scan's best time in ns per
agent-step over ``--rounds`` alternating rounds, their ratio, and whether both chose the same
slots. It isolates the scan: a kernel's step adds learning and recording.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from refusal import refuse

from mamab.engine.aligned import aligned_zeros
from mamab.engine.lanes import (
    LANES,
    lane_argmax,
    lane_argmax_blocks,
    lane_argmax_blocks_down,
    lane_argmax_down,
)
from mamab.kernel_cache import njit


def _stepper(up, down):
    """A jitted loop of ``widths.size`` choices of one tile by ``up`` and ``down`` by turns,
    every lane's slot noted at every step."""

    @njit(cache=False)
    def steps(mean, inv_sqrt, arms, widths, chosen):
        best = np.zeros(LANES, dtype=np.int64)
        for t in range(widths.size):
            if t & 1:
                down(mean, inv_sqrt, arms, widths[t], best)
            else:
                up(mean, inv_sqrt, arms, widths[t], best)
            chosen[t] = best

    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arms", default="32,48,64,100,200,250,500")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=20_000)
    args = parser.parse_args()
    try:
        arm_counts = [int(v) for v in args.arms.split(",")]
    except ValueError:
        raise refuse(f"--arms: comma-separated integers, not {args.arms!r}") from None
    if not arm_counts or min(arm_counts) < 1 or args.rounds < 1 or args.steps < 1:
        raise refuse("--arms: positive numbers; --rounds, --steps: at least 1")
    rng = np.random.default_rng(0)
    widths = np.sqrt(2 * np.log(np.arange(args.steps) + 1000.0))
    scans = {
        "plain": _stepper(lane_argmax, lane_argmax_down),
        "blocks": _stepper(lane_argmax_blocks, lane_argmax_blocks_down),
    }
    print(f"{'arms':>5} {'plain ns':>9} {'blocks ns':>10} {'ratio':>6}  same slots")
    for arms in arm_counts:
        counts = rng.integers(1, 200, size=arms * LANES)
        mean, inv_sqrt = aligned_zeros(arms * LANES), aligned_zeros(arms * LANES)
        mean[:] = rng.binomial(counts, 0.5) / counts  # exact ties, as Bernoulli rewards make
        inv_sqrt[:] = 1.0 / np.sqrt(counts)
        chosen = {name: np.zeros((args.steps, LANES), dtype=np.int64) for name in scans}
        best = {name: float("inf") for name in scans}
        for name, scan in scans.items():
            scan(mean, inv_sqrt, arms, widths[:2], chosen[name][:2])  # compiled once
        for round_ in range(args.rounds):
            for name in list(scans) if round_ % 2 == 0 else list(scans)[::-1]:
                start = time.perf_counter()
                scans[name](mean, inv_sqrt, arms, widths, chosen[name])
                best[name] = min(best[name], time.perf_counter() - start)
        plain, blocks = (best[name] / args.steps / LANES * 1e9 for name in scans)
        same = np.array_equal(chosen["plain"], chosen["blocks"])
        print(f"{arms:>5} {plain:>9.2f} {blocks:>10.2f} {blocks / plain:>6.3f}  {same}")


if __name__ == "__main__":
    main()
