"""Where the full evaluation's CPU time goes: each configuration of a preset, one run, by kind.

    python benchmarks/evaluation_shares.py [PRESET]     # default: paper (about 4 minutes)

Runs one run of each configuration of ``mamab reproduce``'s preset (seed 0, one process, after a
short untimed run that compiles its kernels), multiplies its CPU time by the configuration's run
count, and prints the total per algorithm, the sparse panels (Erdős–Rényi, N ≥ 100) apart from
the rest: which kernels an evaluation's time rests on.
"""

from __future__ import annotations

import collections
import dataclasses
import sys
import time

from run import evaluation_configs

from mamab import simulate


def main() -> None:
    preset = sys.argv[1] if len(sys.argv) > 1 else "paper"
    seconds: collections.Counter[str] = collections.Counter()
    configs = evaluation_configs(preset)
    for config in configs:
        one = dataclasses.replace(config, runs=1)
        simulate(dataclasses.replace(one, horizon=200), jobs=1)
        start = time.process_time()
        simulate(one, jobs=1)
        sparse = config.graph == "erdos-renyi" and config.agents >= 100
        kind = f"{config.algorithm} {'sparse' if sparse else 'other'}"
        seconds[kind] += (time.process_time() - start) * config.runs
    total = sum(seconds.values())
    print(f"{preset}: {total:.1f} s of CPU over {len(configs)} configurations")
    for kind, cpu in seconds.most_common():
        print(f"{cpu:7.1f} s {100 * cpu / total:5.1f}%  {kind}")


if __name__ == "__main__":
    main()
