"""Start-up and first-run times (issue 13): `mamab --help`, an input error, a cold and a warm run.

Run: ``python benchmarks/startup.py`` (about 3 minutes). Each command runs in a fresh process
with the interpreter itself (not a shell shim); "cold" uses an empty numba cache directory
(``NUMBA_CACHE_DIR``), as a first run after installing does.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

RUN = ["run", "--algorithm", "lcc-ucb", "-T", "10000", "--runs", "5"]


def seconds(args: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], env=env, capture_output=True, check=False)
    return time.perf_counter() - start


def median_of(args: list[str], repeat: int = 7) -> float:
    return statistics.median(seconds(args) for _ in range(repeat))


def main() -> None:
    rows = [
        ("`python -c pass` (interpreter alone)", median_of(["-c", "pass"])),
        ("`mamab --help`", median_of(["-m", "mamab", "--help"])),
        ("`mamab run --help`", median_of(["-m", "mamab", "run", "--help"])),
        (
            "`mamab run --algorithm lcc-ucb --agents 0` (input error)",
            median_of(["-m", "mamab", "run", "--algorithm", "lcc-ucb", "--agents", "0"]),
        ),
    ]
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        rows.append(
            (f"`mamab {' '.join(RUN)}`, cold kernel cache", seconds(["-m", "mamab", *RUN], env))
        )
        rows.append((f"`mamab {' '.join(RUN)}`, warm", seconds(["-m", "mamab", *RUN], env)))
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        rows.append(
            (
                "`mamab warmup`, cold (every kernel of every algorithm)",
                seconds(["-m", "mamab", "warmup"], env),
            )
        )
        rows.append(("`mamab warmup`, warm", seconds(["-m", "mamab", "warmup"], env)))
    print("| command | wall time |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value:.2f} s |")
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
