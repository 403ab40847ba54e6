"""Honest final regret of lcc-ucb against lcc-ucb-robust under malicious agents (fast engine).

    python benchmarks/robust_lcc.py --agents 10 --arms 20 --horizon 100000 --runs 30

prints the Markdown table of docs/algorithms/lcc-ucb-robust.md: for m = 0..5 liars and the
attacks worst and best-second, the median and mean over runs of the honest agents' mean final
regret, in how many runs lcc-ucb-robust is lower (paired: same means, liars and noise), and in
how many runs a liar owns the block S_n that holds the best arm.
"""

from __future__ import annotations

import argparse

import numpy as np

from mamab import Config, Result, simulate
from mamab.schedule import initial_block


def liar_owns_best(result: Result) -> np.ndarray:
    """(runs,) True where a malicious agent's initial block holds the best arm."""
    n, k = result.config.agents, result.config.arms
    owns = []
    for means, liars in zip(result.means, result.malicious, strict=True):
        best = int(np.argmax(means))
        owns.append(any(best in initial_block(int(i), k, n) for i in np.flatnonzero(liars)))
    return np.array(owns, dtype=bool)


def row(args: argparse.Namespace, attack: str, m: int) -> str:
    """One table row: lcc-ucb and lcc-ucb-robust on the same runs."""
    finals, owns = {}, None
    for algorithm in ("lcc-ucb", "lcc-ucb-robust"):
        config = Config(
            algorithm,
            agents=args.agents,
            arms=args.arms,
            horizon=args.horizon,
            runs=args.runs,
            seed=args.seed,
            graph=args.graph,
            malicious=m,
            attack=attack,
            grid_points=2,
        )
        result = simulate(config, jobs=args.jobs)
        finals[algorithm] = result.final_regret_mean()
        owns = liar_owns_best(result)
    plain, robust = finals["lcc-ucb"], finals["lcc-ucb-robust"]
    clean = ~owns
    cells = [attack if m else "none", str(m)]
    cells += [f"{np.median(plain):.0f}", f"{np.median(robust):.0f}"]
    cells += [f"{plain.mean():.0f}", f"{robust.mean():.0f}"]
    if clean.any():
        cells += [f"{np.median(plain[clean]):.0f}", f"{np.median(robust[clean]):.0f}"]
    else:
        cells += ["–", "–"]
    cells += [f"{(robust < plain).sum()}/{args.runs}", f"{owns.sum()}/{args.runs}"]
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=10)
    parser.add_argument("--arms", type=int, default=20)
    parser.add_argument("--horizon", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--graph", default="complete")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    print(
        "| attack | m | median lcc-ucb | median robust | mean lcc-ucb | mean robust | "
        "median lcc-ucb, best arm honest | median robust, best arm honest | robust lower | "
        "a liar owns the best arm |"
    )
    print("|---" * 10 + "|")
    for attack in ("worst", "best-second"):
        for m in range(0 if attack == "worst" else 1, 6):
            print(row(args, attack, m), flush=True)


if __name__ == "__main__":
    main()
