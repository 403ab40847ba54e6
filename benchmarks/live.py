"""Live runs on loopback: the paper's argument measured on a real network stack.

    python benchmarks/live.py            # N = 8 and 32; a few minutes on 2 cores
    python benchmarks/live.py --quick    # N = 8 only, shorter horizons

For lcc-ucb, lcc-ucb-graph and full-communication in sync mode (one process per agent, CURVE
over 127.0.0.1), it reports wall time per step, sync waits, messages and counted bits per agent,
and bytes on the wire per agent (frames, and frames plus ZMTP/CURVE framing), and checks that
every run equals `mamab run` on the same seed. Prints Markdown for benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np

import mamab
from mamab import Config, simulate
from mamab.live.fleet import run_fleet

CASES = {  # algorithm -> (graph, horizon at N = 8, horizon at N = 32)
    "lcc-ucb": ("complete", 20_000, 20_000),
    "lcc-ucb-graph": ("ring", 20_000, 20_000),
    "full-communication": ("complete", 1_000, 200),
}


def measure(config: Config) -> dict:
    start = time.perf_counter()
    records = run_fleet(config, 0, sync=True, timeout=60.0)
    seconds = time.perf_counter() - start
    agents = records[: config.agents]
    sim = simulate(config)
    exact = [r["final_regret"] for r in agents] == sim.final_regret[0].tolist() and [
        r["bits_sent"] for r in agents
    ] == sim.counts["bits_sent"][0].tolist()

    def mean(key: str) -> float:
        return float(np.mean([r[key] for r in agents]))

    return {
        "seconds": seconds,
        "node_seconds": mean("seconds"),
        "ms_per_step": 1e3 * mean("seconds") / config.horizon,
        "waits": mean("waits"),
        "messages": mean("messages_sent"),
        "bits": mean("bits_sent"),
        "frame_bytes": mean("frame_bytes_sent"),
        "wire_bytes": mean("wire_bytes_sent"),
        "regret": mean("final_regret"),
        "exact": exact,
    }


def cpu() -> str:
    for line in (
        Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []
    ):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    sizes = (8,) if args.quick else (8, 32)
    print("# mamab live benchmark (sync, loopback, one process per agent)\n")
    print(
        f"mamab {mamab.__version__}, Python {platform.python_version()}, {cpu()}, "
        f"{os.cpu_count()} cores; K = 100, seed 0, run 0. node s: a node's own loop (mean over "
        "agents), without process start-up; ms/step = node s / T.\n"
    )
    print(
        "| algorithm | N | graph | T | wall s (with start-up) | node s | ms/step | sync waits/agent "
        "| messages/agent | counted bits/agent | frame bytes/agent | wire bytes/agent "
        "| regret/agent | = mamab run |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        for algorithm, (graph, t8, t32) in CASES.items():
            horizon = (t8 if n == 8 else t32) // (5 if args.quick else 1)
            config = Config(algorithm, n, 100, horizon, graph=graph)
            m = measure(config)
            print(
                f"| {algorithm} | {n} | {graph} | {horizon} | {m['seconds']:.1f} | "
                f"{m['node_seconds']:.2f} | {m['ms_per_step']:.3f} | {m['waits']:.0f} | {m['messages']:.0f} | "
                f"{m['bits']:.0f} | {m['frame_bytes']:.0f} | {m['wire_bytes']:.0f} | "
                f"{m['regret']:.1f} | {'yes' if m['exact'] else 'NO'} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
