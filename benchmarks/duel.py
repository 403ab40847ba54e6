"""Two checkouts on one configuration, run by turns in two long-lived processes.

    python benchmarks/duel.py CHECKOUT_A CHECKOUT_B PAIRS ALGORITHM AGENTS ARMS HORIZON
        [--graph erdos-renyi] [--edge-prob P] [--loss Q]

Each checkout gets one worker process (``PYTHONPATH`` = its ``src``), warmed by a short run; then
the workers run the configuration (seed 1, one run, one thread) by turns, A B, B A, A B, ...,
each timing its own CPU. Prints both minima, their ratio B/A and the median ratio of the pairs
(below 1: B is faster). A finer reading than ``compare.py`` for one configuration on a noisy
machine: the runs are short, many and interleaved, in processes that stay warm.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from one_config import add_config_arguments, config_fields
from refusal import refuse

from mamab.config import Config
from mamab.errors import ConfigError

WORKER = """
import json, sys, time
try:
    from mamab.config import Config
    from mamab.errors import ConfigError
    from mamab.simulate import simulate
    spec = json.loads(sys.argv[1])
    config = lambda horizon: Config(**{**spec, "horizon": horizon})
    simulate(config(200), jobs=1)
except Exception as err:  # one line for the parent to print
    print("error", type(err).__name__, str(err).splitlines()[0] if str(err) else "", flush=True)
    raise SystemExit(2)
print("ready", flush=True)
for _ in sys.stdin:
    start = time.process_time()
    simulate(config(spec["horizon"]), jobs=1)
    print(time.process_time() - start, flush=True)
"""


class Worker:
    """One checkout's long-lived process: warmed, then one timed run per request."""

    def __init__(self, checkout: Path, spec: dict) -> None:
        self.checkout = checkout
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER, json.dumps(spec)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=dict(os.environ, PYTHONPATH=str(checkout.resolve() / "src")),
        )

    def answer(self) -> str:
        line = self.process.stdout.readline().strip()
        if not line or line.startswith("error"):
            reason = line.removeprefix("error").strip() or "it stopped"
            raise refuse(f"the worker of {self.checkout}: {reason}")
        return line

    def run(self) -> float:
        try:
            self.process.stdin.write("run\n")
            self.process.stdin.flush()
        except OSError:
            raise refuse(f"the worker of {self.checkout} stopped") from None
        return float(self.answer())

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout_a", type=Path)
    parser.add_argument("checkout_b", type=Path)
    parser.add_argument("pairs", type=int)
    add_config_arguments(parser)
    args = parser.parse_args()
    for checkout in (args.checkout_a, args.checkout_b):
        if not (checkout / "src" / "mamab" / "__init__.py").is_file():
            raise refuse(f"{checkout} has no src/mamab/__init__.py")
    if args.pairs < 1:
        raise refuse(f"PAIRS must be at least 1, not {args.pairs}")
    spec = config_fields(args)
    try:  # refused here in one line rather than by both workers
        Config(**spec)
    except ConfigError as err:
        raise refuse(str(err)) from None
    workers = [Worker(checkout, spec) for checkout in (args.checkout_a, args.checkout_b)]
    times: list[list[float]] = [[], []]
    try:
        for worker in workers:  # both warm before the first timed run
            worker.answer()
        for pair in range(args.pairs):
            for side in (0, 1) if pair % 2 == 0 else (1, 0):
                times[side].append(workers[side].run())
    finally:
        for worker in workers:
            worker.stop()
    ratios = [b / a for a, b in zip(*times, strict=True)]
    print(
        f"{args.algorithm} {args.graph} ({args.agents},{args.arms}) T={args.horizon}"
        f"{f', p={args.edge_prob:g}' if args.edge_prob is not None else ''}"
        f"{f', loss={args.loss:g}' if args.loss else ''}, "
        f"{args.pairs} pairs: A min {min(times[0]):.3f} s, B min {min(times[1]):.3f} s; "
        f"B/A of the minima {min(times[1]) / min(times[0]):.3f}, "
        f"median of the pairs {statistics.median(ratios):.3f}"
    )


if __name__ == "__main__":
    main()
