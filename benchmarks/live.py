"""Live runs on loopback: the paper's argument measured on a real network stack.

    python benchmarks/live.py                # N = 8, 16 and 32; several minutes on 2 cores
    python benchmarks/live.py --sizes 8 16   # only these N
    python benchmarks/live.py --quick        # N = 8 only, shorter horizons

For lcc-ucb, lcc-ucb-graph and full-communication in sync mode (one process per agent, CURVE
over 127.0.0.1), it reports wall time per step, sync waits, messages and counted bits per agent,
and bytes on the wire per agent (frames, and frames plus ZMTP/CURVE framing), the peak threads,
open files and resident memory of each agent process (sampled from /proc every 0.2 s), and
checks that every run equals `mamab run` on the same seed. Prints Markdown for
benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import threading
import time
from pathlib import Path

import numpy as np

import mamab
from mamab import Config, simulate
from mamab.live.fleet import run_fleet

CASES = {  # algorithm -> (graph, horizon at N = 8, 16, 32)
    "lcc-ucb": ("complete", (20_000, 20_000, 20_000)),
    "lcc-ucb-graph": ("ring", (20_000, 20_000, 20_000)),
    "full-communication": ("complete", (1_000, 400, 200)),
}
SIZES = (8, 16, 32)


class Peaks:
    """Peak threads, open files and resident memory of this process's children, sampled from
    /proc every ``every`` seconds while running (a child's figures: its maximum over samples)."""

    def __init__(self, every: float = 0.2) -> None:
        self.every = every
        self.peak: dict[int, list[int]] = {}  # pid -> [threads, open files, RSS bytes]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> Peaks:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        me = str(os.getpid())
        while not self._stop.wait(self.every):
            for entry in Path("/proc").iterdir():
                if not entry.name.isdigit():
                    continue
                try:
                    status = dict(
                        line.split(":", 1) for line in (entry / "status").read_text().splitlines()
                    )
                    if status["PPid"].strip() != me or "VmRSS" not in status:
                        continue
                    now = [
                        int(status["Threads"]),
                        len(os.listdir(entry / "fd")),
                        int(status["VmRSS"].split()[0]) * 1024,
                    ]
                except (OSError, ValueError, KeyError):
                    continue
                old = self.peak.setdefault(int(entry.name), now)
                self.peak[int(entry.name)] = [max(a, b) for a, b in zip(old, now, strict=True)]

    def summary(self) -> dict:
        rows = list(self.peak.values()) or [[0, 0, 0]]
        return {
            "threads": max(r[0] for r in rows),
            "files": max(r[1] for r in rows),
            "rss_mb": float(np.mean([r[2] for r in rows])) / 2**20,
            "rss_sum_mb": sum(r[2] for r in rows) / 2**20,
        }


def measure(config: Config) -> dict:
    start = time.perf_counter()
    with Peaks() as peaks:
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
        **peaks.summary(),
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
    parser.add_argument("--sizes", type=int, nargs="+", choices=SIZES, default=list(SIZES))
    args = parser.parse_args()
    sizes = (8,) if args.quick else args.sizes
    print("# mamab live benchmark (sync, loopback, one process per agent)\n")
    print(
        f"mamab {mamab.__version__}, Python {platform.python_version()}, {cpu()}, "
        f"{os.cpu_count()} cores; K = 100, seed 0, run 0. node s: a node's own loop (mean over "
        "agents), without process start-up; ms/step = node s / T; threads, files: the most any "
        "agent process had; RSS: peak resident memory per agent (mean) and summed.\n"
    )
    print(
        "| algorithm | N | graph | T | wall s (with start-up) | node s | ms/step | sync waits/agent "
        "| messages/agent | counted bits/agent | frame bytes/agent | wire bytes/agent "
        "| regret/agent | = mamab run | threads | open files | RSS MB/agent | RSS MB summed |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        for algorithm, (graph, horizons) in CASES.items():
            horizon = horizons[SIZES.index(n)] // (5 if args.quick else 1)
            config = Config(algorithm, n, 100, horizon, graph=graph)
            m = measure(config)
            print(
                f"| {algorithm} | {n} | {graph} | {horizon} | {m['seconds']:.1f} | "
                f"{m['node_seconds']:.2f} | {m['ms_per_step']:.3f} | {m['waits']:.0f} | {m['messages']:.0f} | "
                f"{m['bits']:.0f} | {m['frame_bytes']:.0f} | {m['wire_bytes']:.0f} | "
                f"{m['regret']:.1f} | {'yes' if m['exact'] else 'NO'} | {m['threads']} | "
                f"{m['files']} | {m['rss_mb']:.0f} | {m['rss_sum_mb']:.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
