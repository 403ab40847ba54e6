"""mamab benchmarks: throughput, engine ratio, random-number floor, peer library, scaling, memory.

    python benchmarks/run.py                      # everything (about 10 minutes on 2 cores)
    python benchmarks/run.py --quick              # smaller horizons, a minute or two
    python benchmarks/run.py --sections 'evaluation'   # only mamab reproduce (--quick and full)
    python benchmarks/run.py --smpy-python /tmp/smpy/bin/python   # add the SMPyBandits row
    python benchmarks/run.py --rows --filter lcc-ucb   # timed rows as JSON lines (compare.py)

Every figure of one invocation is measured in the same process run, so ratios are comparable
even on a noisy machine. Prints Markdown to paste into benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import platform
import re
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import mamab
from mamab import Config, simulate
from mamab.resources import CHUNK  # in every revision: compare.py times old checkouts too


def timed(
    config: Config,
    engine: str = "fast",
    jobs: int | None = 1,
    repeat: int = 1,
    clock=time.perf_counter,
) -> float:
    """Best seconds of ``repeat`` simulations on ``clock`` (wall by default; compilation
    excluded by a warm-up)."""
    simulate(
        Config(config.algorithm, agents=2, arms=4, horizon=20, graph="complete"), engine=engine
    )
    best = float("inf")
    for _ in range(repeat):
        start = clock()
        simulate(config, engine=engine, jobs=jobs)
        best = min(best, clock() - start)
    return best


def agent_steps(config: Config) -> int:
    return config.agents * config.horizon * config.runs


FLOOR_WARM_UP = 0.05  # seconds of untimed drawing before a floor is timed


def floor_seconds(
    n_agents: int, horizon: int, runs: int = 1, repeat: int = 3, warm_up: float = FLOOR_WARM_UP
) -> float:
    """Best time to draw the same noise table with numpy, in the engine's chunks: the floor
    (``warm_up``: :func:`warmed_best`)."""
    from mamab.problem import noise_chunks
    from mamab.seeding import rng

    def draw() -> float:
        start = time.perf_counter()
        for run in range(runs):
            for _ in noise_chunks(rng(0, run, "noise"), "bernoulli", n_agents, horizon):
                pass
        return time.perf_counter() - start

    return warmed_best(draw, repeat, warm_up)


def warmed_best(draw: Callable[[], float], repeat: int, warm_up: float) -> float:
    """The best of ``repeat`` timings by ``draw`` after untimed ones: one, then more until
    ``warm_up`` seconds have passed (the pages, the clock's ramp: one untimed draw of a few
    milliseconds was not enough, the first row's floor read 2.3 times the others')."""
    warmed = draw()
    while warmed < warm_up:
        warmed += draw()
    return min((draw() for _ in range(repeat)), default=math.inf)


def block_floor_seconds(
    n_agents: int, horizon: int, runs: int = 1, repeat: int = 3, warm_up: float = FLOOR_WARM_UP
) -> float:
    """Best CPU seconds for numpy to fill a preallocated (4096, agents) block with uniforms
    (``rng.random(out=block)``), for the same number of uniforms as the runs: issue 23's floor,
    the cost of drawing the noise alone (about 3× below :func:`floor_seconds`, which allocates
    each block)."""
    block = np.empty((CHUNK, n_agents))
    generator = np.random.default_rng(0)

    def draw() -> float:
        start = time.process_time()
        for _ in range(runs):
            left = horizon
            while left > 0:
                part = block[: min(CHUNK, left)]
                generator.random(out=part)
                left -= part.shape[0]
        return time.process_time() - start

    return warmed_best(draw, repeat, warm_up)


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


PAPER = [
    ("complete", 10, 100, 100_000, ["lcc-ucb", "full-communication", "no-communication", "demab"]),
    ("complete", 20, 100, 100_000, ["lcc-ucb", "full-communication", "no-communication", "demab"]),
    ("complete", 10, 200, 100_000, ["lcc-ucb", "full-communication", "no-communication", "demab"]),
    (
        "erdos-renyi",
        100,
        250,
        50_000,
        ["lcc-ucb-graph", "lcc-ucb-relay", "full-communication", "no-communication", "demab"],
    ),
    (
        "erdos-renyi",
        150,
        250,
        50_000,
        ["lcc-ucb-graph", "lcc-ucb-relay", "full-communication", "no-communication", "demab"],
    ),
    (
        "erdos-renyi",
        100,
        500,
        50_000,
        ["lcc-ucb-graph", "lcc-ucb-relay", "full-communication", "no-communication", "demab"],
    ),
]


def paper_throughput(scale: float) -> str:
    """Throughput on the paper's configurations against two floors, measured in this process:
    numpy drawing the noise table in allocated chunks (wall time, the engine's own way), and
    numpy filling a preallocated block with as many uniforms (CPU time, issue 23's floor)."""
    rows = []
    for graph, n, k, horizon, algorithms in PAPER:
        t = int(horizon * scale)
        floor = floor_seconds(n, t, runs=2)
        block_floor = block_floor_seconds(n, t, runs=2)
        for algorithm in algorithms:
            config = Config(algorithm, agents=n, arms=k, horizon=t, runs=2, graph=graph, seed=1)
            one = timed(config, jobs=1, repeat=2)
            both = timed(config, jobs=2, repeat=2)
            cpu = timed(config, jobs=1, repeat=2, clock=time.process_time)
            steps = agent_steps(config)
            rows.append(
                [
                    f"{graph} ({n},{k}) T={t}",
                    algorithm,
                    f"{steps / one / 1e6:.1f}",
                    f"{steps / both / 1e6:.1f}",
                    f"{one / floor:.1f}×",
                    f"{cpu / steps * 1e9:.1f}",
                    f"{block_floor / steps * 1e9:.2f}",
                    f"{cpu / block_floor:.1f}×",
                ]
            )
    return table(
        [
            "configuration",
            "algorithm",
            "M agent-steps/s, 1 thread",
            "2 threads",
            "1-thread time / allocating RNG floor",
            "CPU ns per agent-step, 1 thread",
            "preallocated-block floor, ns per agent-step",
            "CPU time / preallocated-block floor",
        ],
        rows,
    )


def host() -> str:
    """The processor these numbers were measured on: its model name, the CPU LLVM compiles the
    kernels for, whether they use 512-bit vectors and the cores this process may use (the
    project's machine changes host between sessions, and its speed with it)."""
    import os

    import llvmlite.binding as llvm
    from numba.core import config as numba_config

    from mamab.engine.lanes import wide_vectors

    model = platform.processor() or "unknown model"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.partition(":")[2].strip()
                break
    target = numba_config.CPU_NAME or llvm.get_host_cpu_name()
    vectors = "AVX-512" if wide_vectors() else "no AVX-512"
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model} (LLVM: {target}; {vectors}; {cores} cores), {platform.machine()}"


def evaluation_configs(preset: str) -> list[Config]:
    """The preset's configurations, each once (experiments share task files)."""
    from mamab.experiments.spec import load_preset

    configs = {json.dumps(c.to_dict(), sort_keys=True): c for _, c in load_preset(preset).configs}
    return list(configs.values())


def evaluation_floor(configs: list[Config]) -> float:
    """CPU seconds numpy needs to fill the configurations' noise blocks (4096 steps of N agents,
    preallocated): per-uniform cost measured at each N (a wide block costs more per number)."""
    per_uniform = {
        n: block_floor_seconds(n, 20_000, repeat=5) / (n * 20_000)
        for n in sorted({c.agents for c in configs})
    }
    return sum(agent_steps(c) * per_uniform[c.agents] for c in configs)


#: Runs a command (its output to the file named first) and prints [exit code, CPU seconds, peak
#: KiB] of it and its workers. A small process of its own: Linux starts an exec'd child's peak
#: memory at its parent's, so a command spawned straight from this (large) process would report
#: this one's peak.
LAUNCHER = """
import json, os, subprocess, sys
with open(sys.argv[1], "w") as output:
    child = subprocess.Popen(sys.argv[2:], stdout=output)
_, status, usage = os.wait4(child.pid, 0)
print(json.dumps([os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime,
                  usage.ru_maxrss]))
"""


def whole_evaluation(quick_only: bool) -> str:
    """``mamab reproduce --quick`` (and the full evaluation unless ``quick_only``) in a fresh
    process with a warm kernel cache: wall, CPU of the process and its workers, peak memory of
    the largest process, load average; against the random-number floor of its noise
    (:func:`evaluation_floor`), on one core (CPU) and two (wall)."""
    import os
    import tempfile

    # the cache is warm only if made so: a code change starts a new one (mamab.kernel_cache),
    # and the rows above compile only the kernels they run (untimed)
    warm = subprocess.run([sys.executable, "-m", "mamab", "warmup"], capture_output=True, text=True)
    if warm.returncode != 0:
        tail = (warm.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"run.py: `mamab warmup` failed: {tail}")
    rows = []
    for preset, flags in [("paper-quick", ["--quick"])] + ([] if quick_only else [("paper", [])]):
        configs = evaluation_configs(preset)
        steps = sum(agent_steps(c) for c in configs)
        floor_cpu = evaluation_floor(configs)
        with tempfile.TemporaryDirectory() as scratch, tempfile.TemporaryFile("w+") as errors:
            load = os.getloadavg()[0]
            start = time.perf_counter()
            out, printed = Path(scratch) / "reproduction", Path(scratch) / "stdout.txt"
            command = [sys.executable, "-m", "mamab", "reproduce", *flags, "--out", str(out)]
            launched = subprocess.run(
                [sys.executable, "-c", LAUNCHER, str(printed), *command],
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
            )
            wall = time.perf_counter() - start
            report = launched.stdout.strip().splitlines()
            code, cpu, peak_kib = json.loads(report[-1]) if report else (launched.returncode, 0, 0)
            if code != 0:
                errors.seek(0)
                tail = (errors.read().strip().splitlines() or ["no output"])[-1]
                raise SystemExit(f"run.py: `mamab reproduce {' '.join(flags)}` failed: {tail}")
            # its last line: "report: OUT/report.md (W s, of which tasks S s)"
            last = (printed.read_text().strip().splitlines() or [""])[-1]
            tasks = re.search(r"tasks (\d+) s", last)
        rows.append(
            [
                f"`mamab reproduce {' '.join(flags)}`".replace(" `", "`"),
                f"{steps:.3g}",
                f"{wall:.1f} s",
                f"{tasks[1]} s" if tasks else "?",
                f"{cpu:.1f} s",
                f"{peak_kib / 1024:.0f} MiB",
                f"{load:.1f} / {os.getloadavg()[0]:.1f}",
                f"{floor_cpu:.1f} s / {floor_cpu / 2:.1f} s",
                f"{cpu / floor_cpu:.0f}× / {wall / (floor_cpu / 2):.0f}×",
            ]
        )
    return (
        table(
            [
                "command",
                "agent-steps",
                "wall",
                "of which tasks",
                "CPU (all processes)",
                "peak memory (largest process)",
                "load average before / after",
                "floor CPU / wall on 2 cores",
                "CPU / floor, wall / floor",
            ],
            rows,
        )
        + "\n\nFloor: numpy filling each configuration's preallocated noise blocks (4096 steps "
        "of its N agents), measured in this process. Wall includes start-up, figures and the "
        "report; 'of which tasks' is the simulations' part (what the command prints)."
    )


def engine_ratio(scale: float) -> str:
    rows = []
    for algorithm in mamab.ALGORITHMS:
        graph = "erdos-renyi" if algorithm in ("lcc-ucb-graph", "lcc-ucb-relay") else "complete"
        fast = Config(
            algorithm, agents=10, arms=100, horizon=int(100_000 * scale), graph=graph, seed=2
        )
        ref = Config(
            algorithm, agents=10, arms=100, horizon=int(10_000 * scale), graph=graph, seed=2
        )
        fast_rate = agent_steps(fast) / timed(fast, jobs=1, repeat=2)
        ref_rate = agent_steps(ref) / timed(ref, engine="reference")
        rows.append(
            [
                algorithm,
                graph,
                f"{ref_rate / 1e3:.0f}k",
                f"{fast_rate / 1e6:.1f}M",
                f"{fast_rate / ref_rate:.0f}×",
            ]
        )
    return table(
        [
            "algorithm",
            "graph (N,K)=(10,100)",
            "reference agent-steps/s",
            "fast, 1 thread",
            "fast / reference",
        ],
        rows,
    )


def peer(smpy_python: str | None, scale: float) -> str:
    horizon = int(100_000 * scale)
    config = Config("no-communication", agents=1, arms=100, horizon=horizon, seed=3)
    ours = timed(config, jobs=1, repeat=3)
    row = ["mamab fast engine (no-communication, N=1)", f"{ours * 1e3:.1f} ms", "1×"]
    rows = [row]
    if smpy_python:
        out = subprocess.run(
            [
                smpy_python,
                __file__.replace("run.py", "smpybandits_ucb.py"),
                "100",
                str(horizon),
                "3",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        theirs = json.loads(out.stdout.strip().splitlines()[-1])["seconds"]
        rows.append(
            [
                "SMPyBandits 0.9.7 `Policies.UCB`",
                f"{theirs * 1e3:.1f} ms",
                f"{theirs / ours:.0f}× slower",
            ]
        )
    ref = Config("no-communication", agents=1, arms=100, horizon=horizon // 10, seed=3)
    ref_s = timed(ref, engine="reference") * 10
    rows.append(
        [
            "mamab reference agent (extrapolated from T/10)",
            f"{ref_s * 1e3:.1f} ms",
            f"{ref_s / ours:.0f}× slower",
        ]
    )
    return f"Single-agent UCB, K = 100 Bernoulli arms, T = {horizon}:\n\n" + table(
        ["implementation", "time", "relative"], rows
    )


def scaling(scale: float, big: bool) -> str:
    rows = []
    cases = [
        (10, 100, 100_000),
        (100, 100, 100_000),
        (1000, 1000, 10_000),
        (10, 1000, 100_000),
        (10, 10_000, 100_000),
        (10, 100, 1_000_000),
    ]
    if big:
        cases.append((1000, 10_000, 1_000_000))
    for n, k, horizon in cases:
        t = (
            horizon
            if (n, k, horizon) == (1000, 10_000, 1_000_000)
            else max(1000, int(horizon * scale))
        )
        config = Config("lcc-ucb", agents=n, arms=k, horizon=t, seed=4, grid_points=50)
        big_run = n * t >= 10**8
        seconds = timed(config, jobs=1, repeat=1 if big_run else 2)
        floor = floor_seconds(n, t, repeat=1 if big_run else 3)
        rows.append(
            [
                f"{n}",
                f"{k}",
                f"{t:.0e}",
                f"{seconds:.2f} s",
                f"{agent_steps(config) / seconds / 1e6:.1f}",
                f"{seconds / floor:.1f}×",
            ]
        )
    return table(
        ["N", "K", "T", "lcc-ucb time (1 run, 1 thread)", "M agent-steps/s", "time / RNG floor"],
        rows,
    )


def peak_memory(scale: float) -> str:
    """Largest paper configuration, 30 runs, in a fresh process so the peak is its own."""
    code = (
        "import resource, mamab\n"
        "for alg in ('lcc-ucb-graph', 'lcc-ucb-relay', 'full-communication', 'no-communication'):\n"
        f"    mamab.simulate(mamab.Config(alg, agents=150, arms=250, horizon={int(50_000 * scale)}, runs=30,"
        " graph='erdos-renyi', seed=5))\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - start
    peak_mib = int(out.stdout.split()[-1]) / 1024
    return (
        f"Erdős–Rényi (150,250), T = {int(50_000 * scale)}, 30 runs of each of 4 algorithms, "
        f"2 threads: peak resident memory **{peak_mib:.0f} MiB**, {seconds:.0f} s wall."
    )


def dask_speedup(scale: float) -> str:
    """A sweep on a local Dask cluster of 2 single-threaded workers against the local runner."""
    import tempfile

    from distributed import Client, LocalCluster

    from mamab.experiments.dask_executor import DaskExecutor
    from mamab.experiments.runner import run_sweep
    from mamab.experiments.spec import parse_spec

    spec = parse_spec(
        {
            "name": "bench",
            "seed": 0,
            "runs": 8,
            "runs_per_task": 2,
            "grid_points": 50,
            "experiments": [
                {
                    "name": "e",
                    "algorithms": ["lcc-ucb", "no-communication", "gosine"],
                    "agents": 10,
                    "arms": 100,
                    "horizon": int(100_000 * scale),
                }
            ],
        }
    )
    steps = sum(c.agents * c.horizon * c.runs for _, c in spec.configs)
    for _, config in spec.configs:  # load compiled kernels here, as the workers do below
        simulate(Config(config.algorithm, agents=2, arms=4, horizon=20))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, kwargs in (
            ("local runner, 1 job", {"jobs": 1}),
            ("local runner, 2 jobs", {"jobs": 2}),
        ):
            start = time.perf_counter()
            run_sweep(spec, Path(tmp) / label.replace(" ", "-"), progress=False, **kwargs)
            rows.append((label, time.perf_counter() - start))
        with (
            LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
            ) as cluster,
            Client(cluster) as client,
        ):
            client.run(
                lambda: simulate(Config("lcc-ucb", agents=2, arms=4, horizon=20))
            )  # warm the workers
            start = time.perf_counter()
            run_sweep(
                spec, Path(tmp) / "dask", executor=DaskExecutor(client=client), progress=False
            )
            rows.append(("Dask, 2 local workers", time.perf_counter() - start))
    base = rows[0][1]
    return table(
        ["runner", "wall time", "M agent-steps/s", "speed-up vs 1 job"],
        [
            [label, f"{sec:.1f} s", f"{steps / sec / 1e6:.1f}", f"{base / sec:.2f}×"]
            for label, sec in rows
        ],
    )


FAULTS = {"loss": 0.1, "delay": 0.1, "crash_rate": 1e-5, "recover_after": 1000}
LIARS = {"malicious": 2, "attack": "random"}
FLOOR_ROW = "rng floor: numpy noise for 10 agents"  # a control: no mamab code but the noise
#: issue 23's floor: numpy filling a preallocated block with as many uniforms (no allocation)
BLOCK_FLOOR_ROW = "rng floor, preallocated block: 10 agents"


def timing_rows(scale: float) -> dict[str, Config | None]:
    """The rows ``--rows`` times, by label: numpy's noise draw (``None``), the paper's
    configurations (2 runs), then every built-in at (N, K) = (10, 100) on one run, again with
    faults where it takes them, and with liars where it models them."""
    from mamab.agents.registry import can_lie, supports_faults

    rows: dict[str, Config | None] = {
        f"{FLOOR_ROW} T={int(100_000 * scale)}": None,
        f"{BLOCK_FLOOR_ROW} T={int(100_000 * scale)}": None,
    }

    def add(config: Config, suffix: str = "") -> None:
        c = config
        label = f"{c.algorithm} {c.graph} ({c.agents},{c.arms}) T={c.horizon} runs={c.runs}"
        rows[label + suffix] = c

    for graph, n, k, horizon, algorithms in PAPER:
        for algorithm in algorithms:
            add(
                Config(
                    algorithm,
                    agents=n,
                    arms=k,
                    horizon=int(horizon * scale),
                    runs=2,
                    graph=graph,
                    seed=1,
                )
            )
    for algorithm in mamab.ALGORITHMS:
        graph = "erdos-renyi" if algorithm in ("lcc-ucb-graph", "lcc-ucb-relay") else "complete"
        config = Config(
            algorithm, agents=10, arms=100, horizon=int(100_000 * scale), graph=graph, seed=2
        )
        add(config)
        if supports_faults(algorithm):
            add(dataclasses.replace(config, **FAULTS), " faults")
        if can_lie(algorithm):
            add(dataclasses.replace(config, **LIARS), " liars")
    return rows


def warm(config: Config) -> None:
    """Compile (or load from numba's cache) exactly the kernels ``config`` runs, on a short run."""
    simulate(dataclasses.replace(config, horizon=min(config.horizon, 200), runs=1), jobs=1)


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def best_per_call(call, repeat: int, min_time: float, clock=time.process_time) -> tuple[float, int]:
    """(fastest single call over ``repeat`` measurements, calls per measurement): a measurement
    repeats ``call`` until it lasts ``min_time`` (as timeit's autorange) and each call is timed
    alone, so a millisecond row gets many chances to run uninterrupted on a busy machine.
    ``clock`` is the process's CPU time by default: other processes' load barely moves it."""
    start = clock()
    call()
    first = clock() - start
    calls = max(1, math.ceil(min_time / max(first, 1e-9)))
    best = first
    for _ in range(repeat - (calls == 1)):
        for _ in range(calls):
            start = clock()
            call()
            best = min(best, clock() - start)
    return best, calls


def rows_main(args: argparse.Namespace, scale: float) -> None:
    """One JSON line per timed row: best seconds per simulation of ``--repeat`` measurements on
    one thread (``--warm``: only compile). The first line says which mamab was imported, so a
    caller can check it."""
    print(json.dumps({"mamab": mamab.__file__, "version": mamab.__version__}), flush=True)
    pattern = re.compile(args.filter or "")
    chosen = {label: c for label, c in timing_rows(scale).items() if pattern.search(label)}
    if not chosen:
        sys.exit(f"no benchmark row matches --filter {args.filter!r}")
    for label, config in chosen.items():
        if config is None:  # the floor
            if not args.warm:
                horizon = int(100_000 * scale)
                floor = block_floor_seconds if label.startswith(BLOCK_FLOOR_ROW) else floor_seconds
                # one untimed draw and one timed per call, as in every revision (compare.py
                # runs old ones too); best_per_call's repeated calls do the warming up
                seconds, calls = best_per_call(
                    lambda t=horizon, f=floor: f(10, t, repeat=1, warm_up=0.0),
                    args.repeat,
                    args.min_time,
                    CLOCKS[args.clock],
                )
                print(json.dumps({"row": label, "seconds": seconds, "calls": calls}), flush=True)
            continue
        warm(config)
        if args.warm:
            continue
        seconds, calls = best_per_call(
            lambda c=config: simulate(c, jobs=1), args.repeat, args.min_time, CLOCKS[args.clock]
        )
        print(
            json.dumps(
                {
                    "row": label,
                    "seconds": seconds,
                    "calls": calls,
                    "agent_steps": agent_steps(config),
                }
            ),
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="horizons / 10, no N=1000 K=1e4 T=1e6 run"
    )
    parser.add_argument("--smpy-python", help="python of an environment with SMPyBandits installed")
    parser.add_argument(
        "--rows",
        action="store_true",
        help="only time the comparison rows, one JSON line each (benchmarks/compare.py)",
    )
    parser.add_argument("--filter", help="with --rows: only rows whose label matches this regex")
    parser.add_argument("--repeat", type=int, default=3, help="with --rows: best of this many")
    parser.add_argument(
        "--min-time",
        type=float,
        default=0.2,
        help="with --rows: repeat a row within one measurement until this many seconds",
    )
    parser.add_argument(
        "--clock",
        choices=tuple(CLOCKS),
        default="cpu",
        help="with --rows: the process's CPU time (default) or wall time",
    )
    parser.add_argument("--warm", action="store_true", help="with --rows: only compile the kernels")
    parser.add_argument(
        "--list", action="store_true", help="print the --rows labels (--filter applies) and exit"
    )
    parser.add_argument(
        "--sections",
        help="only the sections whose titles match this regex (e.g. 'Paper|evaluation')",
    )
    args = parser.parse_args()
    scale = 0.1 if args.quick else 1.0
    if args.list:
        print("\n".join(r for r in timing_rows(scale) if re.search(args.filter or "", r)))
        return
    if args.rows or args.warm:
        rows_main(args, scale)
        return
    print(f"# mamab {mamab.__version__} benchmarks\n")
    print(
        f"Machine: {host()}, {platform.python_implementation()} "
        f"{platform.python_version()}, numpy {np.__version__}; command: `{' '.join(sys.argv)}`\n"
    )
    for title, section in [
        ("Paper configurations (2 runs)", lambda: paper_throughput(scale)),
        ("Whole evaluation, warm kernel cache", lambda: whole_evaluation(args.quick)),
        ("Fast engine against the reference agents", lambda: engine_ratio(scale)),
        ("Peer library", lambda: peer(args.smpy_python, scale)),
        ("Scaling of lcc-ucb with N, K and T", lambda: scaling(scale, big=not args.quick)),
        ("Peak memory", lambda: peak_memory(scale)),
        ("Dask: 2 local workers against the local runner", lambda: dask_speedup(scale)),
    ]:
        if args.sections and not re.search(args.sections, title):
            continue
        start = time.perf_counter()
        body = section()
        print(f"## {title}\n\n{body}\n\n_({time.perf_counter() - start:.0f} s)_\n", flush=True)
    print(
        f"Peak memory of this benchmark process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB"
    )


if __name__ == "__main__":
    main()
