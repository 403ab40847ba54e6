"""The UCB baselines on the paper's six configurations (issue 23): CPU ns per agent-step, one
run, T = 5·10^4, against numpy filling a preallocated block with as many uniforms (the floor),
measured in this process.

    PYTHONPATH=src python benchmarks/ucb_baselines.py [no-communication,full-communication]
"""

from __future__ import annotations

import sys
import time

import numpy as np

import mamab
from mamab import Config, simulate

CONFIGS = [
    ("complete", 10, 100),
    ("complete", 20, 100),
    ("complete", 10, 200),
    ("erdos-renyi", 100, 250),
    ("erdos-renyi", 150, 250),
    ("erdos-renyi", 100, 500),
]
T = 50_000


def floor_ns(n: int, repeat: int = 3) -> float:
    """Best CPU ns per agent-step of ``rng.random(out=block)`` over T steps of n agents."""
    rng = np.random.default_rng(0)
    block = np.empty((4096, n))
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        left = T
        while left > 0:
            part = block[: min(4096, left)]
            rng.random(out=part)
            left -= part.shape[0]
        best = min(best, time.process_time() - start)
    return best / (n * T) * 1e9


def main() -> None:
    algorithms = (
        sys.argv[1].split(",")
        if len(sys.argv) > 1
        else [
            "no-communication",
            "full-communication",
        ]
    )
    print("#", mamab.__file__)
    for algorithm in algorithms:  # compile (or load) the kernels first
        simulate(Config(algorithm, agents=3, arms=40, horizon=300), jobs=1)
    for graph, n, k in CONFIGS:
        floor = floor_ns(n)
        for algorithm in algorithms:
            config = Config(algorithm, agents=n, arms=k, horizon=T, graph=graph, seed=1)
            best = float("inf")
            for _ in range(2):
                start = time.process_time()
                simulate(config, jobs=1)
                best = min(best, time.process_time() - start)
            ns = best / (n * T) * 1e9
            print(
                f"{algorithm:20s} {graph:12s} ({n},{k})  {ns:7.1f} ns/agent-step  "
                f"floor {floor:.2f} ns  {ns / floor:6.1f}x",
                flush=True,
            )


if __name__ == "__main__":
    main()
