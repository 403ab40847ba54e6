"""Noise blocks of several sizes for one configuration, by turns in one process.

    python benchmarks/block_sizes.py ALGORITHM AGENTS ARMS HORIZON [--graph G] [--edge-prob P]
        [--loss Q] [--values 16777216,65536,131072] [--rounds 8]

Times one run (seed 1, one thread, CPU) with ``mamab.problem.CACHE_VALUES`` set to each of
``--values`` in turn (order reversed every other round), after a warming run, and prints each
size's steps per block, best and median time, and best against the first size's. The knob is the
cache a noise block should fit: only algorithms whose spec asks for cache-sized blocks
(``FastEngine.cache_blocks``: no-communication) read it; another shows its own blocks' steps
and the same times. The machine's second-level cache decides the best size; the results do not
depend on it.
"""

from __future__ import annotations

import argparse
import statistics
import time

from one_config import add_config_arguments, config_fields
from refusal import refuse

import mamab.problem as problem
from mamab import resources
from mamab.algorithms.registry import lookup
from mamab.config import Config
from mamab.errors import ConfigError
from mamab.simulate import simulate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_config_arguments(parser)
    parser.add_argument("--values", default="16777216,65536,131072")
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    try:
        sizes = [int(v) for v in args.values.split(",")]
    except ValueError:
        raise refuse(f"--values: comma-separated integers, not {args.values!r}") from None
    if not sizes or min(sizes) < 1 or args.rounds < 1:
        raise refuse("--values: positive numbers; --rounds: at least 1")
    try:
        config = Config(**config_fields(args))
        resources.check(resources.estimate(config, jobs=1))
        simulate(Config(**{**config_fields(args), "horizon": 200}), jobs=1)
    except ConfigError as err:
        raise refuse(str(err)) from None
    seconds: dict[int, list[float]] = {size: [] for size in sizes}
    for round_ in range(args.rounds):
        for size in sizes if round_ % 2 == 0 else sizes[::-1]:
            problem.CACHE_VALUES = size
            start = time.process_time()
            simulate(config, jobs=1)
            seconds[size].append(time.process_time() - start)
    first = min(seconds[sizes[0]])
    spec = lookup(config.algorithm)
    cache = spec.fast is not None and spec.fast.cache_blocks
    for size in sizes:
        problem.CACHE_VALUES = size
        steps = min(problem.block_steps(config.agents, cache), config.horizon)
        print(
            f"{config.algorithm} ({config.agents},{config.arms}) T={config.horizon}: "
            f"CACHE_VALUES={size} ({steps} steps a block): "
            f"best {min(seconds[size]):.4f} s, median {statistics.median(seconds[size]):.4f} s, "
            f"best / first size's {min(seconds[size]) / first:.3f}"
        )


if __name__ == "__main__":
    main()
