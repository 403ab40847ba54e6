"""GosInE against gosine-robust under malicious agents: the honest agents' final regret.

    python benchmarks/robust_gosine.py [--runs 20] [--horizon 100000] [--agents 10] [--arms 20]

Prints a markdown table (docs/algorithms/gosine-robust.md): for m = 0..5 malicious agents and
each attack, the median over runs of the honest agents' mean final regret, with its 95%
order-statistic band, for both algorithms (fast engine, complete graph, seed 1).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mamab import Config, simulate
from mamab.stats import median_band

ATTACKS = ("worst", "random", "best-second")


def honest_regret(algorithm: str, m: int, attack: str, args: argparse.Namespace) -> np.ndarray:
    """(runs,) the honest agents' mean final regret of one configuration."""
    config = Config(
        algorithm,
        args.agents,
        args.arms,
        args.horizon,
        runs=args.runs,
        seed=1,
        malicious=m,
        attack=attack,
    )
    return simulate(config, engine="fast", jobs=1).final_regret_mean()


def cell(values: np.ndarray) -> str:
    """'median [low, high]' of the runs."""
    mid, low, high = (float(x) for x in median_band(values))
    return f"{mid:.0f} [{low:.0f}, {high:.0f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--horizon", type=int, default=100_000)
    parser.add_argument("--agents", type=int, default=10)
    parser.add_argument("--arms", type=int, default=20)
    args = parser.parse_args()
    start = time.perf_counter()
    print("| m | attack | gosine | gosine-robust | robust / gosine |")
    print("|---|---|---|---|---|")
    for m in range(6):
        for attack in ATTACKS if m else ("none",):
            plain = honest_regret("gosine", m, attack if m else "worst", args)
            robust = honest_regret("gosine-robust", m, attack if m else "worst", args)
            ratio = np.median(robust) / np.median(plain)
            print(f"| {m} | {attack} | {cell(plain)} | {cell(robust)} | {ratio:.2f} |")
    print(f"\n{args.runs} runs per cell, {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
