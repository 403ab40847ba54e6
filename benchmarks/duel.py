"""Two checkouts on one configuration, run by turns in two long-lived processes.

    python benchmarks/duel.py CHECKOUT_A CHECKOUT_B PAIRS ALGORITHM AGENTS ARMS HORIZON
        [--graph erdos-renyi]

Each checkout gets one worker process (``PYTHONPATH`` = its ``src``), warmed by a short run; then
the workers run the configuration (seed 1, one run, one thread) by turns, A B, B A, A B, ...,
each timing its own CPU. Prints both minima, their ratio B/A and the median ratio of the pairs
(below 1: B is faster). Finer than ``compare.py`` for one configuration on a noisy machine: the
runs are short, many and interleaved, in processes that stay warm.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from mamab.config import Config
from mamab.errors import ConfigError

WORKER = """
import json, sys, time
from mamab.config import Config
from mamab.simulate import simulate
spec = json.loads(sys.argv[1])
config = lambda horizon: Config(**{**spec, "horizon": horizon})
simulate(config(200), jobs=1)
for _ in sys.stdin:
    start = time.process_time()
    simulate(config(spec["horizon"]), jobs=1)
    print(time.process_time() - start, flush=True)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout_a", type=Path)
    parser.add_argument("checkout_b", type=Path)
    parser.add_argument("pairs", type=int)
    parser.add_argument("algorithm")
    parser.add_argument("agents", type=int)
    parser.add_argument("arms", type=int)
    parser.add_argument("horizon", type=int)
    parser.add_argument("--graph", default="erdos-renyi")
    args = parser.parse_args()
    for checkout in (args.checkout_a, args.checkout_b):
        if not (checkout / "src" / "mamab").is_dir():
            print(f"duel.py: {checkout} has no src/mamab", file=sys.stderr)
            raise SystemExit(2)
    if args.pairs < 1:
        print(f"duel.py: PAIRS must be at least 1, not {args.pairs}", file=sys.stderr)
        raise SystemExit(2)
    spec = {
        "algorithm": args.algorithm,
        "agents": args.agents,
        "arms": args.arms,
        "horizon": args.horizon,
        "graph": args.graph,
        "seed": 1,
    }
    try:  # refused here in one line rather than by both workers with a traceback
        Config(**spec)
    except ConfigError as err:
        print(f"duel.py: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, json.dumps(spec)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=dict(os.environ, PYTHONPATH=str(checkout.resolve() / "src")),
        )
        for checkout in (args.checkout_a, args.checkout_b)
    ]
    times: list[list[float]] = [[], []]
    try:
        for pair in range(args.pairs):
            for side in (0, 1) if pair % 2 == 0 else (1, 0):
                workers[side].stdin.write("run\n")
                workers[side].stdin.flush()
                line = workers[side].stdout.readline()
                if not line:
                    checkout = (args.checkout_a, args.checkout_b)[side]
                    print(f"duel.py: the worker of {checkout} stopped", file=sys.stderr)
                    raise SystemExit(2)
                times[side].append(float(line))
    finally:
        for worker in workers:
            worker.stdin.close()
            worker.wait()
    ratios = [b / a for a, b in zip(*times, strict=True)]
    print(
        f"{args.algorithm} {args.graph} ({args.agents},{args.arms}) T={args.horizon}, "
        f"{args.pairs} pairs: A min {min(times[0]):.3f} s, B min {min(times[1]):.3f} s; "
        f"B/A of the minima {min(times[1]) / min(times[0]):.3f}, "
        f"median of the pairs {statistics.median(ratios):.3f}"
    )


if __name__ == "__main__":
    main()
